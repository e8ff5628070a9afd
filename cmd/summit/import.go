package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/imports"
)

func newImport(stdout, stderr io.Writer) *cobra.Command {
	var (
		out, format     string
		asJSON, lenient bool
	)
	c := &cobra.Command{
		Use:   "import PATH...",
		Short: "Write summit recordings from Claude Code, Codex and Gemini CLI sessions",
		Long: `Import reads sessions other tools recorded and writes each as a summit recording that
replay, inspect and the workbench read like a native one: the tool's main agent is sa-1, and
each of its subagents a subagent under the agent that started it, at any depth.

PATH is a session file or a folder, searched for session files:
  Claude Code  ~/.claude/projects/<project>/<session>.jsonl, with <session>/subagents/agent-*.jsonl
               (and the agent-*.jsonl and sidechain lines of older versions)
  Codex        ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl, with the rollouts of spawned agents
  Gemini CLI   ~/.gemini/tmp/<hash>/chats/session-*.jsonl or .json, subagent chats, checkpoint-*.json
  Headless     saved output of codex exec --json, claude -p --output-format stream-json
               (--verbose or not) and gemini -p --output-format stream-json

A file named twice (a folder and a file in it, a glob naming a session and its subagent files)
is imported once; a subagent file named alone is imported as its own session and says its
parent is missing. A --format the file does not match is an error naming what it looks like.

Each recording is <session id>.jsonl in the output folder (-o); its id comes from the source's,
so importing a session again rewrites the same file. One line is printed per recording, one
error per file that cannot be read (file:line); the others are written all the same, and the
exit code is 1 if any failed.`,
		Example: `  summit import ~/.claude/projects/-home-me-shop
  summit import ~/.codex/sessions/2026/01/15/rollout-2026-01-15T10-00-00-0199a1b2.jsonl -o /tmp/rec
  summit import --format gemini ~/.gemini/tmp/5d1c3e/chats --json
  summit import session/imports/testdata/claude/v2.1/-home-dev-shop -o /tmp/shop.jsonl && summit replay --print /tmp/shop.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("import needs a PATH (a session file or a folder)\nusage: %s", cmd.UseLine())
			}
			f, err := imports.ParseFormat(format)
			if err != nil {
				return usageErr("%v", err)
			}
			units, errs := imports.Plan(args, f)
			if filepath.Ext(out) == ".jsonl" && len(units) > 1 {
				return usageErr("-o %s names one file, but %d sessions were found; give a folder", out, len(units))
			}
			if len(units) == 0 && len(errs) == 0 {
				return badFile(fmt.Errorf("no session files found in %s", strings.Join(args, ", ")))
			}
			defer imports.TuneGC()()
			var results []imports.Result
			written := map[string]imports.Result{}
			for _, u := range units {
				res, err := imports.Import(u, out, imports.Options{Lenient: lenient, Written: written})
				if err != nil {
					errs = append(errs, err)
					continue
				}
				results = append(results, res)
				for _, w := range res.Warnings {
					fmt.Fprintf(stderr, "summit: warning: %s\n", session.Sanitize(w))
				}
				if !asJSON {
					fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", session.Sanitize(res.Path), res.Format,
						session.Plural(res.Subagents, "subagent"), session.Plural(res.Events, "event"))
				}
			}
			for _, err := range errs {
				fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(err.Error()))
			}
			if asJSON {
				if results == nil {
					results = []imports.Result{}
				}
				if err := writeJSON(stdout, results); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				return &exitError{exitBad, silent}
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", ".summit/sessions", "the folder for the recordings, or the file (ending .jsonl) when one session is imported")
	c.Flags().StringVar(&format, "format", "auto", "the source format: auto (by content), claude, codex or gemini")
	c.Flags().BoolVar(&asJSON, "json", false, "print what was written as JSON")
	c.Flags().BoolVar(&lenient, "lenient", false, "skip malformed lines (kept as notes) instead of failing their file")
	return c
}
