package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/live"
	"github.com/summit-dev/summit/ui"
)

// The demo's sample workspace. The embedded demo tapes (agents/provider/tapes/default.yaml)
// carry patches that fit cart.go exactly: change the two together.
var demoFiles = map[string]string{
	"cart.go": `package shop

// Line is one line of a cart.
type Line struct {
	Price float64
	Qty   int
}

// Total sums the cart. TODO: it rounds every line, which loses cents.
func Total(lines []Line) float64 {
	t := 0.0
	for _, l := range lines {
		t += round(l.Price * float64(l.Qty))
	}
	return t
}

func round(x float64) float64 { return float64(int(x*100+0.5)) / 100 }
`,
	"cart_test.go": `package shop

import "testing"

func TestTotal(t *testing.T) {
	if got := Total([]Line{{Price: 0.333, Qty: 3}}); got != 1.0 {
		t.Errorf("Total = %v", got)
	}
}
`,
	"README.md": "# shop\n\nA tiny cart package for the summit demo.\n",
	"go.mod":    "module example.com/shop\n\ngo 1.26\n",
}

// demoSteps is the guided tour: what to say, what to type, and when to go on.
type demoStep struct {
	say   string
	lines []string
	until func(*session.State) bool
}

func stopped(ids ...string) func(*session.State) bool {
	return func(st *session.State) bool {
		for _, id := range ids {
			if sa := st.Subagent(id); sa == nil || !sa.Stopped {
				return false
			}
		}
		return true
	}
}

var demoSteps = []demoStep{
	{say: "1/5 · An explorer maps the sample project while two builders fix the same bug in parallel. Select one in the tree (tab, ↑↓) to watch it stream.",
		lines: []string{`/delegate "map the sample project" --agent-type explore`, `/delegate "fix rounding in cart.go, variant A" --agent-type builder`, `/delegate "fix rounding in cart.go, variant B" --agent-type builder`},
		until: stopped("sa-1", "sa-2", "sa-3")},
	{say: "2/5 · /converge merges both fixes. They change the same line differently: a review opens. Choose a side with 1 or 2 (m adds a note).",
		lines: []string{"/converge sa-2 sa-3 --strategy merge"},
		until: func(st *session.State) bool {
			cv := st.Convergence("cv-1")
			return cv != nil && cv.Status == session.ConvergenceDone
		}},
	{say: "3/5 · /apply writes the merged fix. Then a tester runs a shell command: approve it (a once, s for the subagent, d deny).",
		lines: []string{"/apply cv-1", `/delegate "run the tests" --agent-type tester`},
		until: stopped("sa-4")},
	{say: "4/5 · A handoff: control passes to a builder that asks you a question. Type your answer and press enter.",
		lines: []string{`/delegate "pair on the README" --agent-type builder`, "/handoff sa-5 --transfer-control"},
		until: stopped("sa-5")},
	{say: "5/5 · That is the tour. Browse the tree, type /help, or ctrl+c to quit; the session is recorded for 'summit replay'."},
}

func newDemo(stderr io.Writer) *cobra.Command {
	var keep bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "A guided tour of the workbench on a sample project and the embedded tapes (no API key)",
		Long: `Demo creates a temporary sample workspace and runs the workbench on the embedded script
tapes, guiding you through delegation, parallel builders, a merge with a conflict to review,
a shell command that asks for permission, and a transfer-control handoff. No API key or
network is needed. The workspace is removed afterwards unless --keep is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := needTerminal(); err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "summit-demo-")
			if err != nil {
				return badFile(err)
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			for name, body := range demoFiles {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					return badFile(err)
				}
			}
			f := &sessionFlags{workspace: dir, mode: "acceptEdits", provider: "script", parallel: 8}
			err = workbench(f, stderr, "Welcome to summit. The tour starts in a moment…", runGuide)
			if keep {
				fmt.Fprintf(stderr, "summit: the demo workspace is kept at %s\n", dir)
			}
			return err
		},
	}
	c.Flags().BoolVar(&keep, "keep", false, "keep the sample workspace (and its recording) after the demo")
	return c
}

// runGuide types the tour's commands and waits for each step to finish. It only submits
// lines, as a person would, so the recording shows the same commands.
func runGuide(x *live.Orchestrator, p *tea.Program) {
	time.Sleep(1500 * time.Millisecond)
	for _, s := range demoSteps {
		p.Send(ui.NoticeMsg(s.say))
		for _, l := range s.lines {
			if _, err := x.Submit(context.Background(), l); err != nil {
				return // the session ended
			}
			time.Sleep(300 * time.Millisecond)
		}
		for s.until != nil {
			done := false
			x.View(func(st *session.State) { done = s.until(st) })
			if done {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(800 * time.Millisecond)
	}
}
