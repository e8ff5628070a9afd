package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/provider/tapeserve"
	"github.com/summit-dev/summit/session"
)

// defaultTapesAddr is where summit tapes serve listens unless told otherwise: loopback only,
// since whoever reaches the port can use it.
const defaultTapesAddr = "127.0.0.1:8788"

func newTapes(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "tapes",
		Short: "Write, check and serve script tapes: scripted models for offline, repeatable sessions",
		// The guide is the package doc of agents/provider (go doc ./agents/provider prints the
		// same text): one source for both.
		Long: "summit tapes check checks tape files; summit tapes serve plays them to other agents.\n\n" +
			provider.TapeGuide(),
		Example: "  summit tapes check agents/provider/tapes/default.yaml\n" +
			"  summit tapes check agents/provider/tapes session/live/testdata/tapes\n" +
			"  summit run --script testdata/scripts/explore.summit --tapes agents/provider/tapes --no-record",
		// Without a Run, cobra would print the help and exit 0 for "summit tapes chek".
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("tapes: unknown command %q%s; the commands are check and serve", args[0], didYouMean(args[0], subcommandNames(cmd)))
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			return usageErr("tapes needs a command: check or serve (summit tapes --help has the grammar)")
		},
		// As the root does; set here too so the command behaves the same on its own (tests).
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	c.AddCommand(newTapesServe(stdout, stderr), newTapesCheck(stdout, stderr))
	return c
}

func newTapesCheck(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE|DIR...",
		Short: "Check tape files: every mistake at file:line, with the nearest key for a misspelt one",
		Long: `Check reads each tape file, or each directory as --tapes reads it (every *.yaml and *.yml
under it), parses every tape as summit would, and lists every mistake as file:line: what, with
the nearest known key for a misspelt one. Nothing runs. It also warns of a tape that can never
be chosen because an earlier one in the same file or directory matches every agent and task it
does (first match wins).

Each path without a mistake gets a summary line on stdout; mistakes and warnings go to stderr.
Exit codes: 0 no mistakes (warnings allowed); 1 a mistake in any path; 2 usage. summit tapes
--help has the grammar.`,
		Example: "  summit tapes check agents/provider/tapes/default.yaml\n" +
			"  summit tapes check agents/provider/tapes agents/provider/tapeserve/testdata/tapes.yaml",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("tapes check needs a tape file or a directory of them\nusage: %s", cmd.UseLine())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			mistakes, bad := 0, 0
			for _, a := range args {
				tapes, files, err := provider.CheckTapes(a)
				if err != nil {
					bad++
					var te provider.TapeErrors
					if !errors.As(err, &te) {
						te = provider.TapeErrors{err}
					}
					for _, e := range te {
						fmt.Fprintln(stderr, session.Sanitize(e.Error()))
					}
					mistakes += len(te)
					continue
				}
				for _, w := range provider.Unreachable(tapes) {
					fmt.Fprintf(stderr, "%s (warning)\n", session.Sanitize(w))
				}
				fmt.Fprintf(stdout, "%s: %s in %s, no mistakes\n", session.Sanitize(a), checkCount(len(tapes), "tape"), checkCount(files, "file"))
			}
			switch {
			case mistakes > 0 && len(args) == 1:
				return &exitError{exitBad, fmt.Errorf("tapes check: %s", checkCount(mistakes, "mistake"))}
			case mistakes > 0:
				return &exitError{exitBad, fmt.Errorf("tapes check: %s, in %d of the %d paths", checkCount(mistakes, "mistake"), bad, len(args))}
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
}

// checkCount is "1 tape", "2 tapes".
func checkCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func newTapesServe(stdout, stderr io.Writer) *cobra.Command {
	var addr, dir string
	var noSleep, quiet bool
	var maxSleep time.Duration
	c := &cobra.Command{
		Use:   "serve --tapes DIR",
		Short: "Serve script tapes as a local model endpoint for other agents",
		Long: `Serve plays script tapes as a model endpoint in the real wire formats, streaming, with tool
calls: Anthropic Messages (POST /v1/messages), OpenAI Chat Completions (/v1/chat/completions)
and Responses (/v1/responses), Gemini (/v1beta/models/{model}:generateContent and
:streamGenerateContent). An agent pointed at it through its base-URL setting (Claude Code, Gemini
CLI, Codex, anything built on the official SDKs) then runs offline and the same way every time.

A request's model name picks the tape (match.agent), and the task regexp reads the user text
before the first assistant turn; the number of assistant turns already in the conversation is
the turn, and the tool results after each one choose the tape's branches. A request no tape
matches is answered 400, naming every tape. Sleeps and rates run on the wall clock, each wait
capped by --max-sleep; --no-sleep sends every turn at once. Any API key is accepted and none is
read or printed. go doc ./agents/provider/tapeserve has the details.`,
		Example: `  summit tapes serve --tapes agents/provider/tapeserve/testdata/tapes.yaml
  summit tapes serve --tapes agents/provider/tapes --addr 127.0.0.1:9000 --no-sleep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usageErr("tapes serve needs --tapes DIR (a directory of *.yaml tape files, or one file)")
			}
			if maxSleep < 0 {
				return usageErr("--max-sleep %s is negative", maxSleep)
			}
			tapes, err := provider.LoadTapes(dir)
			if err != nil {
				return badFile(err)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return &exitError{exitBad, fmt.Errorf("tapes serve: %w", err)}
			}
			errOut := &syncWriter{w: stderr}
			opts := tapeserve.Options{MaxSleep: maxSleep, NoSleep: noSleep || maxSleep == 0}
			if !quiet {
				// Model names come from the requests: printed sanitised.
				opts.Log = func(line string) { fmt.Fprintf(errOut, "summit: %s\n", session.Sanitize(line)) }
			}
			srv := &http.Server{Handler: tapeserve.New(tapes, opts), ReadHeaderTimeout: 30 * time.Second,
				ErrorLog: log.New(sanitizing{errOut}, "summit: tapes serve: ", 0)}
			parent := cmd.Context()
			if parent == nil {
				parent = context.Background()
			}
			ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
			defer stop()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			if err := printServing(stdout, errOut, ln.Addr().String(), tapes); err != nil {
				srv.Close()
				return err
			}
			select {
			case err := <-served:
				return &exitError{exitBad, fmt.Errorf("tapes serve: %w", err)}
			case <-ctx.Done():
			}
			// Streams in flight get a moment to end; a client that holds one open longer is cut.
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				srv.Close()
			}
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return &exitError{exitBad, fmt.Errorf("tapes serve: %w", err)}
			}
			fmt.Fprintln(errOut, "summit: tapes serve stopped")
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&addr, "addr", defaultTapesAddr, "address to listen on (host:port); keep it on loopback: anyone who reaches it can use it")
	f.StringVar(&dir, "tapes", "", "a directory of *.yaml tape files, or one tape file (required)")
	f.BoolVar(&noSleep, "no-sleep", false, "ignore sleep steps and rates: send every turn at once")
	f.DurationVar(&maxSleep, "max-sleep", tapeserve.DefaultMaxSleep, "cap on each wait a tape asks for (a sleep step, the pause before a word at a rate); 0 is --no-sleep")
	f.BoolVar(&quiet, "quiet", false, "do not log each request (API, model, tape, turn) to stderr")
	return c
}

// printServing says where the tapes are served and how to point each agent at them. Each
// agent gets its variables on its own command line rather than as exports: OPENAI_BASE_URL in
// Gemini CLI's environment switches it to an OpenAI-compatible backend.
func printServing(stdout, stderr io.Writer, addr string, tapes []*provider.Tape) error {
	base := "http://" + addr
	var b strings.Builder
	fmt.Fprintf(&b, "summit: serving %s on %s (Anthropic /v1/messages, OpenAI /v1/chat/completions and /v1/responses, Gemini /v1beta/models/…)\n", session.Plural(len(tapes), "tape"), base)
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			fmt.Fprintf(stderr, "summit: warning: %s is not a loopback address: anyone who can reach it can use these tapes\n", session.Sanitize(addr))
		}
	}
	b.WriteString("\nPoint an agent at it (any key works; none is read):\n")
	fmt.Fprintf(&b, "  Claude Code   ANTHROPIC_BASE_URL=%s ANTHROPIC_AUTH_TOKEN=tapes claude\n", base)
	fmt.Fprintf(&b, "  Gemini CLI    GOOGLE_GEMINI_BASE_URL=%s GEMINI_API_KEY=tapes gemini\n", base)
	fmt.Fprintf(&b, "  OpenAI SDKs   OPENAI_BASE_URL=%s/v1 OPENAI_API_KEY=tapes\n", base)
	b.WriteString("  Codex         in ~/.codex/config.toml:\n")
	b.WriteString("                  model_provider = \"tapes\"\n")
	b.WriteString("                  [model_providers.tapes]\n")
	b.WriteString("                  name = \"summit tapes\"\n")
	fmt.Fprintf(&b, "                  base_url = \"%s/v1\"\n", base)
	b.WriteString("                  wire_api = \"responses\"\n")
	b.WriteString("\nThe model name picks a tape (match.agent), the task regexp reads the user text before the\n")
	b.WriteString("first reply. Give side requests (Claude Code's ANTHROPIC_DEFAULT_HAIKU_MODEL, Gemini CLI's\n")
	b.WriteString("checks) a model name and a tape of their own. Tapes, first match wins:\n")
	for _, t := range tapes {
		agent, task := "any model", "any task"
		if t.Agent != "" {
			agent = "model " + t.Agent
		}
		if t.Task != nil {
			task = "task /" + t.Task.String() + "/"
		}
		fmt.Fprintf(&b, "  %s: %s, %s (%s)\n", t.Name, agent, task, t.Source)
	}
	b.WriteString("Ctrl-C stops.\n")
	_, err := io.WriteString(stdout, session.Sanitize(b.String()))
	return err
}

// sanitizing writes what the HTTP server logs (it may quote a request) sanitised.
type sanitizing struct{ w io.Writer }

func (s sanitizing) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, session.Sanitize(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
