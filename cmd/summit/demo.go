package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents/provider"
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
	// go 1.21: any go from 1.21 on runs the sample's tests without fetching a toolchain.
	"go.mod": "module example.com/shop\n\ngo 1.21\n",
}

// demoApply is the tour's /apply: with go on PATH it runs the sample's own tests on the merged
// fix in a scratch worktree first (--verify), so a fix whose tests fail is refused, with the
// failing test shown; without go it lands the fix unchecked (the tester then says it could
// not verify).
func demoApply() (line, say string) {
	if _, err := exec.LookPath("go"); err == nil {
		return `/apply cv-1 --verify "go test ./..."`, "3/5 · /apply tests the fix first. The tester asks: 1 allow, 3 deny, then enter."
	}
	return "/apply cv-1", "3/5 · /apply lands the fix. A tester asks for the shell: 1 allow, 3 deny, enter."
}

// The third step's /apply depends on go being on PATH (demoApply).
func init() { demoSteps[2].lines[0], demoSteps[2].say = demoApply() }

// demoSteps is the guided tour: what to say, what to type, and when to go on. A step's lines
// are submitted 300 ms apart, with read before the last one (time to read the step's text
// before what it announces covers it); the next step starts once until holds and then rest
// has passed, so the user sees how the step ended. read and rest are at --pace 1.
type demoStep struct {
	say   string
	lines []string
	until func(*session.State) bool
	read  time.Duration
	rest  time.Duration
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

// The demo's texts each fit one 80-column line (demo_test.go checks). They name the keys of
// the workbench: ctrl+o opens prompts and the approvals inbox, ↑↓ or a number selects a
// choice and enter confirms it, tab moves focus between input, tree and transcript.
var demoSteps = []demoStep{
	{say: "1/5 · An explorer and two builders start. tab to the tree, ↑↓ to watch one.",
		lines: []string{`/delegate "map the sample project" --agent-type explore`, `/delegate "fix rounding in cart.go, variant A" --agent-type builder`, `/delegate "fix rounding in cart.go, variant B" --agent-type builder`},
		until: stopped("sa-1", "sa-2", "sa-3"), rest: 2 * time.Second},
	{say: "2/5 · The two fixes clash on one line: pick a side (1 or 2, then enter).",
		lines: []string{"/converge sa-2 sa-3 --strategy merge"},
		until: func(st *session.State) bool {
			cv := st.Convergence("cv-1")
			return cv != nil && cv.Status == session.ConvergenceDone
		}, rest: 1500 * time.Millisecond},
	{say: "3/5 · /apply lands the fix. A tester asks for the shell: 1 allow, 3 deny, enter.",
		lines: []string{"/apply cv-1", `/delegate "run the tests" --agent-type tester`},
		until: stopped("sa-4"), rest: 3 * time.Second},
	{say: "4/5 · A builder takes control and asks you: type usage or testing, enter.",
		// Once sa-5 has control its question takes the notice line: this text is read first.
		lines: []string{`/delegate "pair on the README" --agent-type builder`, "/handoff sa-5 --transfer-control"},
		until: stopped("sa-5"), read: 3 * time.Second, rest: time.Second},
	{say: "5/5 · sa-5 wrote in its own worktree; /apply sa-5 landed it (/undo reverts).",
		lines: []string{"/apply sa-5"}},
}

// demoSlowdown is how much slower than written summit demo plays the demo-* tapes at --pace 1:
// their words stream at about 3 a second, a reading pace, and step 1's explorer and builders
// stream for 10 to 13 s, long enough to tab to the tree and watch one (as written they end in
// under 5 s, before anyone could). Headless runs and tests play the tapes as written.
const demoSlowdown = 3.0

// paceTapes slows the tapes named demo-* by factor: their streaming rates are divided by it
// and their sleeps, in every branch, multiplied. The other tapes answer the user's own
// delegations in the demo and keep their pace.
func paceTapes(tapes []*provider.Tape, factor float64) {
	for _, t := range tapes {
		if !strings.HasPrefix(t.Name, "demo-") || factor <= 0 {
			continue
		}
		t.Rate /= factor
		paceSteps(t.Steps, factor)
	}
}

func paceSteps(steps []provider.Step, factor float64) {
	for i := range steps {
		s := &steps[i]
		s.Sleep = time.Duration(float64(s.Sleep) * factor)
		paceSteps(s.OnDenied, factor)
		paceSteps(s.OnError, factor)
		for _, b := range s.OnExit {
			paceSteps(b, factor)
		}
		for _, a := range s.Answers {
			paceSteps(a.Steps, factor)
		}
		paceSteps(s.Otherwise, factor)
	}
}

// The first notice of a workbench whose subagents run on script tapes says so, and how to
// connect a real model (one 80-column line each).
const (
	tapesNote   = "tapes, no model"
	demoWelcome = "Welcome to summit · demo " + tapesNote + ": summit --provider P uses a real one"
	noModelHint = "demo " + tapesNote + ": set a provider in .summit/config.yaml or pass --provider"
	ownTapeHint = "your " + tapesNote + ": set a provider in .summit/config.yaml or --provider"
)

// startHint is the workbench's first notice: hint, unless the subagents run on script tapes
// and hint does not say so already (summit demo's welcome does).
func (w *wired) startHint(hint string) string {
	switch {
	case w.provider != "script" || strings.Contains(hint, tapesNote):
		return hint
	case w.ownTapes:
		return ownTapeHint
	}
	return noModelHint
}

// demoRecordDir is where summit demo keeps its recordings, so they outlive the temporary
// workspace: $XDG_DATA_HOME/summit/demo, else ~/.local/share/summit/demo (created 0700).
func demoRecordDir() (string, error) {
	base := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(base) { // the XDG spec: a relative path is ignored
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no data directory for the demo's recording: %w", err)
		}
		base = filepath.Join(home, ".local", "share")
	}
	dir := filepath.Join(base, "summit", "demo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the demo's recording directory: %w", err)
	}
	return dir, nil
}

// demoSession writes the sample workspace into a new temporary directory and returns the
// session flags of the demo: the script tapes played at pace (demoSlowdown at 1), and the
// recording in demoRecordDir.
func demoSession(pace float64) (*sessionFlags, error) {
	recDir, err := demoRecordDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "summit-demo-")
	if err != nil {
		return nil, err
	}
	for name, body := range demoFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return &sessionFlags{workspace: dir, mode: "acceptEdits", provider: "script", parallel: 8, recordDir: recDir,
		demoPace: demoSlowdown * pace}, nil
}

func newDemo(stderr io.Writer) *cobra.Command {
	var keep bool
	pace := 1.0
	c := &cobra.Command{
		Use:   "demo",
		Short: "A guided tour of the workbench on a sample project and the embedded tapes (no API key)",
		Long: `Demo creates a temporary sample workspace and runs the workbench on the embedded script
tapes, guiding you through delegation, parallel builders, a merge with a conflict to review,
a shell command that asks for permission, and a transfer-control handoff. No API key or
network is needed. The tapes react to your choices: deny the shell and the tester says it
could not run the tests, and fails; your answer to the builder decides what it writes. The
subagents stream at a reading pace (--pace 0.5 is twice as fast), and each step that asks
for a choice or an answer waits for it.

The recording is kept in $XDG_DATA_HOME/summit/demo (else ~/.local/share/summit/demo); its
path and the replay command are printed at the end. The workspace is removed afterwards
unless --keep is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !(pace >= 0.05 && pace <= 20) { // also refuses NaN
				return usageErr("--pace %v: a factor from 0.05 to 20 (1 is a reading pace, 0.5 twice as fast)", pace)
			}
			if err := needTerminal(); err != nil {
				return err
			}
			f, err := demoSession(pace)
			if err != nil {
				return badFile(err)
			}
			if !keep {
				defer os.RemoveAll(f.workspace)
				// First (defers run last-in first-out): the snapshots go beside the recording,
				// the workspace's private git dir goes (gc.go).
				defer demoCleanup(f, stderr)
			}
			g := &demoGuide{pace: pace, sleep: time.Sleep}
			err = workbench(f, stderr, demoWelcome, g.run)
			if keep {
				fmt.Fprintf(stderr, "summit: the demo workspace is kept at %s\n", session.Sanitize(f.workspace))
			}
			return err
		},
	}
	c.Flags().BoolVar(&keep, "keep", false, "keep the sample workspace after the demo (the recording is always kept)")
	c.Flags().Float64Var(&pace, "pace", 1, "how slowly the subagents stream and the tour moves on: 1 is a reading pace, 0.5 twice as fast")
	return c
}

// demoGuide types the tour's commands and waits for each step to finish. It only submits
// lines, as a person would, so the recording shows the same commands. Its waits scale with
// pace; sleep is time.Sleep (tests pass a clock of their own).
type demoGuide struct {
	pace  float64
	sleep func(time.Duration)
}

func (g *demoGuide) wait(d time.Duration) { g.sleep(time.Duration(float64(d) * g.pace)) }

func (g *demoGuide) run(x *live.Orchestrator, p *tea.Program) {
	g.tour(func(l string) error { _, err := x.Submit(context.Background(), l); return err },
		x.View, func(s string) { p.Send(ui.NoticeMsg(s)) })
}

// tour plays demoSteps: each step's text, then its lines, then it holds until the step's
// condition is true in the session's state and rest has passed. It ends when a line is refused
// because the session ended.
func (g *demoGuide) tour(submit func(string) error, view func(func(*session.State)), notice func(string)) {
	g.wait(1500 * time.Millisecond)
	for _, s := range demoSteps {
		notice(s.say)
		for i, l := range s.lines {
			if i > 0 && i == len(s.lines)-1 && s.read > 0 {
				g.wait(s.read)
			}
			if err := submit(l); err != nil {
				return // the session ended
			}
			g.sleep(300 * time.Millisecond)
		}
		for s.until != nil {
			done := false
			view(func(st *session.State) { done = s.until(st) })
			if done {
				break
			}
			g.sleep(200 * time.Millisecond)
		}
		g.wait(s.rest)
	}
}
