package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
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
	f, err := demoSession()
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
	if got := recordedNote(w.recording); got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := recordedNote("/home/a b/it's.jsonl"); !strings.HasSuffix(got, `summit replay '/home/a b/it'\''s.jsonl'`+"\n") {
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
	if got := w.startHint("Type /help"); got != ownTapeHint {
		t.Errorf("own tapes hint %q", got)
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
			if code != 0 {
				t.Errorf("%s/%q: exit %d\n%s", c.approve, c.reply, code, errOut)
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
