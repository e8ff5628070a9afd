package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/hooks"
)

// hookRunner is the session's hooks (nil when none is configured). cfg is the gated config's
// (workspaceGate): the workspace's hooks are in it only when the workspace is trusted, so
// every hook it holds runs. passEnv are the user config's env_passthrough names.
func (f *sessionFlags) hookRunner(cfg provider.Hooks) *hooks.Runner {
	if cfg.Empty() {
		return nil
	}
	return hooks.New(hooks.Options{Hooks: cfg, WorkspaceTrusted: true, PassEnv: f.passEnv})
}

// hookWarnings writes the config's hook warnings (entries that load with no effect), one a
// line, to w.
func hookWarnings(w io.Writer, cfg provider.Hooks) {
	for _, s := range cfg.Warnings {
		fmt.Fprintf(w, "summit: %s (warning)\n", session.Sanitize(s))
	}
}

func newHooks(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "hooks",
		Short: "Check hook configuration (summit hooks check FILE)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(&cobra.Command{
		Use:   "check FILE...",
		Short: "Check the hooks of a config.yaml or a Claude Code settings.json: file:line errors, nothing runs",
		Long: `Check reads the hooks: section of each FILE as a session would (a summit config.yaml, or a
Claude Code settings.json as a whole: its other keys are not summit's and are not checked),
and says what is wrong at file:line, with the nearest event name for a misspelt one. Nothing
runs. Entries of Claude Code events summit has no counterpart for (PreCompact, SessionStart,
PermissionRequest...) and prompt or http hooks load with a warning: they have no effect.

Each file without a mistake gets a summary line on stdout; mistakes and warnings go to
stderr. Exit codes: 0 no mistakes (warnings allowed); 1 a mistake in any file; 2 usage.`,
		Example: "  summit hooks check testdata/hooks/claude-settings.json\n  summit hooks check ~/.claude/settings.json",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("hooks check needs a config.yaml or a settings.json\nusage: %s", cmd.UseLine())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, a := range args {
				h, err := provider.CheckHooksFile(a)
				if err != nil {
					bad++
					fmt.Fprintln(stderr, session.Sanitize(err.Error()))
					continue
				}
				for _, w := range h.Warnings {
					fmt.Fprintf(stderr, "%s (warning)\n", session.Sanitize(w))
				}
				n, events := 0, []string{}
				for ev, l := range h.Events {
					n += len(l)
					events = append(events, ev)
				}
				slices.Sort(events)
				what := ""
				if n > 0 {
					what = " (" + strings.Join(events, ", ") + ")"
				}
				fmt.Fprintf(stdout, "%s: %s%s, no mistakes\n", session.Sanitize(a), checkCount(n, "hook"), what)
			}
			if bad > 0 {
				return &exitError{exitBad, fmt.Errorf("hooks check: %d of the %s have a mistake", bad, checkCount(len(args), "file"))}
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	})
	return c
}
