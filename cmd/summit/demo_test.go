package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// TestDemoRecordDir: the demo keeps its recording under $XDG_DATA_HOME/summit/demo, else
// ~/.local/share/summit/demo (a relative XDG_DATA_HOME is ignored), created 0700.
func TestDemoRecordDir(t *testing.T) {
	data, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	for _, c := range []struct{ xdg, want string }{
		{data, filepath.Join(data, "summit", "demo")},
		{"", filepath.Join(home, ".local", "share", "summit", "demo")},
		{"relative/dir", filepath.Join(home, ".local", "share", "summit", "demo")},
	} {
		t.Setenv("XDG_DATA_HOME", c.xdg)
		dir, err := demoRecordDir()
		if err != nil || dir != c.want {
			t.Errorf("XDG_DATA_HOME=%q: %q %v, want %q", c.xdg, dir, err, c.want)
			continue
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", dir, st.Mode(), err)
		}
	}
}

// TestDemoRecordingOutlivesWorkspace: the demo session records into the data dir, not into
// the temporary workspace, so removing the workspace keeps the recording; the workbench
// then prints its path and the exact replay command.
func TestDemoRecordingOutlivesWorkspace(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	f, err := demoSession(1)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(f.workspace)
	for name, body := range demoFiles {
		if b, err := os.ReadFile(filepath.Join(f.workspace, name)); err != nil || string(b) != body {
			t.Errorf("sample file %s: %v", name, err)
		}
	}
	f.interactive = true // as workbench sets it
	w, err := f.wire("", io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.x.Close("quit"); err != nil {
		t.Fatal(err)
	}
	if dir := filepath.Dir(w.recording); dir != filepath.Join(data, "summit", "demo") {
		t.Errorf("recording in %s", dir)
	}
	os.RemoveAll(f.workspace)
	if code, out, errOut := summit(t, "replay", w.recording, "--print"); code != 0 || !strings.Contains(out, "provider script") {
		t.Errorf("replay after the workspace is gone: %d %s %s", code, out, errOut)
	}
	want := fmt.Sprintf("summit: recorded %s\nreplay it with: summit replay %s\n", w.recording, w.recording)
	if got := recordedNoteAs("summit", w.recording); got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := recordedNoteAs("summit", "/home/a b/it's.jsonl"); !strings.HasSuffix(got, `summit replay '/home/a b/it'\''s.jsonl'`+"\n") {
		t.Errorf("quoted note %q", got)
	}
	// On the tapes, the demo's welcome says so already; a plain workbench gets the hint.
	if got := w.startHint(demoWelcome); got != demoWelcome {
		t.Errorf("demo hint %q", got)
	}
	if got := w.startHint("Type /help"); got != noModelHint {
		t.Errorf("plain hint on tapes %q", got)
	}
	w.ownTapes = true
	if got := w.startHint("Type /help"); got != ownTapeHint || !strings.HasPrefix(got, "your tapes, no model") {
		t.Errorf("own tapes hint %q: it must name the tapes as the user's", got)
	}
	w.provider = "anthropic"
	if got := w.startHint("Type /help"); got != "Type /help" {
		t.Errorf("model hint %q", got)
	}
}

// TestDemoTextsFit80: every step's text and every first notice fits one 80-column line.
func TestDemoTextsFit80(t *testing.T) {
	texts := []string{demoWelcome, noModelHint, ownTapeHint}
	if len(demoSteps) != 5 {
		t.Errorf("%d steps, want 5", len(demoSteps))
	}
	for i, s := range demoSteps {
		if !strings.HasPrefix(s.say, fmt.Sprintf("%d/5 · ", i+1)) {
			t.Errorf("step %d: %q", i+1, s.say)
		}
		texts = append(texts, s.say)
	}
	for _, s := range texts {
		if n, w := utf8.RuneCountInString(s), ansi.StringWidth(s); n > 80 || w > 80 || strings.ContainsAny(s, "\n\t") {
			t.Errorf("%d runes, %d cells: %q", n, w, s)
		}
	}
	for _, s := range []string{demoWelcome, noModelHint, ownTapeHint} {
		if !strings.Contains(s, "no model") || !strings.Contains(s, "--provider") {
			t.Errorf("hint does not say how to connect a model: %q", s)
		}
	}
}

// demoScript is the tour's lines as a headless script: a /wait and /resolve where the person
// picks a side (sa-3 unless side says otherwise), and reply typed to the builder that takes
// control.
func demoScript(reply string, side ...string) string {
	pick := "sa-3"
	if len(side) > 0 {
		pick = side[0]
	}
	var b strings.Builder
	for _, s := range demoSteps {
		for _, l := range s.lines {
			b.WriteString(l + "\n")
			switch {
			case strings.HasPrefix(l, "/converge"):
				b.WriteString("/wait cv-1\n/resolve cf-1 --choose " + pick + "\n")
			case strings.HasPrefix(l, "/delegate \"run the tests\""):
				b.WriteString("/wait sa-4\n")
			case strings.HasPrefix(l, "/handoff"):
				b.WriteString(reply + "\n/wait sa-5\n")
			}
		}
	}
	return b.String()
}

// TestDemoTapesHeadless runs the tour's commands headless on the embedded tapes over the
// demo's sample files: the patches fit, and the tapes react to the choices (the shell
// allowed or denied, the answer to the builder). The demo is honest: with go on PATH its
// /apply runs the sample's real tests on the merged fix first (VerifyRan passed), its tester
// runs go test through the confined shell and reports what the exit code says, and whichever
// side is taken the workspace ends with tests that pass (checked here by running them).
func TestDemoTapesHeadless(t *testing.T) {
	t.Parallel()
	_, goErr := exec.LookPath("go")
	hasGo := goErr == nil
	passed := "go test ./... passes."
	if !hasGo {
		passed = "could not verify: go is not on PATH"
	}
	for _, c := range []struct {
		approve, reply, side string
		tester, readme       string
		fix                  string
	}{
		{"shell", "The Usage section please", "sa-3", passed, "## Usage\n\nshop.Total(lines)", "cents := int64(l.Price*float64(l.Qty)*100 + 0.5)"},
		{"shell", "usage", "sa-2", passed, "## Usage\n\nshop.Total(lines)", "t += l.Price * float64(l.Qty)\n"},
		{"none", "testing", "sa-3", "could not run the tests: the shell was denied", "## Testing\n\nRun go test", "cents := int64(l.Price*float64(l.Qty)*100 + 0.5)"},
		{"none", `a "changelog", maybe`, "sa-3", "could not run the tests: the shell was denied", "## Notes\n\na \"changelog\", maybe\n", "cents :="},
	} {
		// The cases run at once: each mostly waits on its subagents' processes (go test).
		t.Run(c.approve+" "+c.reply, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			for name, body := range demoFiles {
				os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644)
			}
			sf := filepath.Join(t.TempDir(), "demo.summit")
			os.WriteFile(sf, []byte(demoScript(c.reply, c.side)), 0o644)
			rec := filepath.Join(t.TempDir(), "demo.jsonl")
			code, out, errOut := summit(t, "run", "--script", sf, "--workspace", ws, "--provider", "script",
				"--approve", c.approve, "--record", rec)
			// A tester that could not run the tests (the shell denied, or no go) did not succeed:
			// its stop is a failure, so the run exits 1 (issue 28: it was ✓ success).
			wantCode, wantOutcome := 0, session.OutcomeSuccess
			if c.approve == "none" || !hasGo {
				wantCode, wantOutcome = 1, session.OutcomeFailure
			}
			if code != wantCode {
				t.Errorf("%s/%q: exit %d, want %d\n%s", c.approve, c.reply, code, wantCode, errOut)
			}
			evs, _, err := record.ReadAll(rec, record.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if stop, ok := e.Data.(session.SubagentStop); ok && e.SubagentID == "sa-4" && stop.Outcome != wantOutcome {
					t.Errorf("%s: the tester stopped with %s, want %s", c.approve, stop.Outcome, wantOutcome)
				}
			}
			if wantOutcome == session.OutcomeFailure && !regexp.MustCompile(`✗ sa-4 tester`).MatchString(out) {
				t.Errorf("%s: the tree does not mark the tester failed:\n%s", c.approve, out)
			}
			if !strings.Contains(out, c.tester) {
				t.Errorf("%s: the tester's capsule is not %q:\n%s", c.approve, c.tester, out)
			}
			cart, _ := os.ReadFile(filepath.Join(ws, "cart.go"))
			if !strings.Contains(string(cart), c.fix) {
				t.Errorf("%s: the merged fix was not applied:\n%s", c.side, cart)
			}
			readme, _ := os.ReadFile(filepath.Join(ws, "README.md"))
			if !strings.Contains(string(readme), c.readme) || !strings.HasPrefix(string(readme), "# shop\n\n## ") {
				t.Errorf("%q: README.md:\n%s", c.reply, readme)
			}
			if !strings.Contains(errOut, "waited ") {
				t.Errorf("/wait said nothing:\n%s", errOut)
			}
			if !hasGo {
				return
			}
			// summit's measurement of the fix before it landed, and ours after.
			if !strings.Contains(out, "measured: ✓ `go test ./...` exit 0") {
				t.Errorf("%s: no passing VerifyRan for cv-1 in --print:\n%s", c.side, out)
			}
			test := exec.Command("go", "test", "./...")
			test.Dir = ws
			if b, err := test.CombinedOutput(); err != nil {
				t.Errorf("%s: the demo ends with failing tests: %v\n%s\ncart.go:\n%s", c.side, err, b, cart)
			}
		})
	}
}

// TestDemoPace (issue 28): step 1 says "tab to the tree, ↑↓ to watch one", so its subagents
// must stream long enough to be watched. Played as written the demo tapes end in under 5 s;
// summit demo plays them demoSlowdown times slower, and then each of the explorer and the two
// builders streams for at least 10 s. Measured on the session's own clock (simulated here, so
// the test takes no such time): the real runtime, tapes and pacing.
func TestDemoPace(t *testing.T) {
	t.Parallel() // records nothing (noRecord): TestMain's data dir is enough
	for _, c := range []struct {
		pace          float64
		atLeast, upTo time.Duration
	}{
		{0, 0, 5 * time.Second}, // as written: over before anyone could tab to the tree
		{demoSlowdown, 10 * time.Second, 20 * time.Second},
	} {
		f, err := demoSession(1)
		if err != nil {
			t.Fatal(err)
		}
		f.demoPace, f.noRecord, f.approve = c.pace, true, "none"
		w, err := f.wire("", io.Discard, nil) // not interactive: on a simulated clock
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(demoSteps[0].lines, "/wait sa-1 sa-2 sa-3") {
			if _, err := w.x.Submit(context.Background(), l); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
		}
		w.x.View(func(st *session.State) {
			for _, id := range []string{"sa-1", "sa-2", "sa-3"} {
				sa := st.Subagent(id)
				if sa == nil || !sa.Stopped || sa.Outcome != session.OutcomeSuccess {
					t.Errorf("pace %v: %s did not succeed: %+v", c.pace, id, sa)
					continue
				}
				d := sa.EndedAt.Sub(sa.SpawnedAt)
				t.Logf("pace %v: %s %s streamed for %v", c.pace, id, sa.AgentType, d)
				if d < c.atLeast || d > c.upTo {
					t.Errorf("pace %v: %s %s streamed for %v, want %v to %v", c.pace, id, sa.AgentType, d, c.atLeast, c.upTo)
				}
			}
		})
		w.x.Close("quit")
		os.RemoveAll(f.workspace)
	}
}

// doneState is a session in which every condition of the tour holds: sa-1 to sa-5 stopped
// and cv-1 complete.
func doneState(t *testing.T) *session.State {
	t.Helper()
	st := &session.State{}
	seq := uint64(0)
	apply := func(sub string, d session.Data) {
		seq++
		if err := session.Apply(st, session.Event{V: 1, Seq: seq, TS: time.Unix(int64(seq), 0).UTC(), SessionID: "s-t", Type: d.Type(), SubagentID: sub, Data: d}); err != nil {
			t.Fatal(err)
		}
	}
	apply("", session.SessionStarted{Schema: 1, Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script", AllowedTools: []string{}})
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("sa-%d", i)
		apply(id, session.SubagentSpawned{AgentType: "builder", ParentSessionID: "s-t", ParentSessionRef: "s-t", PermissionMode: "acceptEdits", Tools: []string{}, TaskDescription: "t", TimeoutS: 300})
		apply(id, session.SubagentActive{InitialState: "running"})
		apply(id, session.SubagentStop{Outcome: session.OutcomeSuccess})
	}
	apply("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-2", "sa-3"}, Strategy: "merge"})
	apply("", session.ConvergenceComplete{ConvergenceID: "cv-1", Outcome: "success"})
	return st
}

// TestDemoGuideHolds (issue 28): the guide does not go on before a step's condition holds
// (here: nothing stops until 20 s), then lets the user see how the step ended (its rest) and
// goes on at once after that; step 4's text can be read before the builder takes control and
// its question covers it. Waits scale with --pace. The guide runs on a clock of the test's.
func TestDemoGuideHolds(t *testing.T) {
	const ready = 20 * time.Second
	for _, pace := range []float64{1, 0.5} {
		var now time.Duration
		type act struct {
			what string
			at   time.Duration
		}
		var acts []act
		g := &demoGuide{pace: pace, sleep: func(d time.Duration) { now += d }}
		empty, done := &session.State{}, doneState(t)
		g.tour(func(l string) error { acts = append(acts, act{l, now}); return nil },
			func(f func(*session.State)) {
				if now >= ready {
					f(done)
				} else {
					f(empty)
				}
			},
			func(s string) { acts = append(acts, act{"notice " + s, now}) })
		at := func(what string) time.Duration {
			for _, a := range acts {
				if a.what == what {
					return a.at
				}
			}
			t.Fatalf("pace %v: never %q: %v", pace, what, acts)
			return 0
		}
		var want []string
		for _, s := range demoSteps {
			want = append(want, "notice "+s.say)
			want = append(want, s.lines...)
		}
		var got []string
		for _, a := range acts {
			got = append(got, a.what)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("pace %v: the guide did\n%s\nwant\n%s", pace, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * pace) }
		step2 := at("notice " + demoSteps[1].say)
		if min := ready + scale(demoSteps[0].rest); step2 < min || step2 > min+time.Second {
			t.Errorf("pace %v: step 2 at %v, want from %v (its condition at %v, then the rest)", pace, step2, min, ready)
		}
		if at(demoSteps[1].lines[0]) < step2 {
			t.Errorf("pace %v: step 2's line before its text", pace)
		}
		if d := at(demoSteps[3].lines[1]) - at(demoSteps[3].lines[0]); d < scale(demoSteps[3].read) {
			t.Errorf("pace %v: the handoff came %v after step 4's delegation, want at least %v to read", pace, d, scale(demoSteps[3].read))
		}
	}
}
