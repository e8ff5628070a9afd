package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tmuxTerm is a tmux session on a private server, driving the real binary in a real terminal.
type tmuxTerm struct {
	t    *testing.T
	sock string
	name string
	pgid int // the pane's process group (its command leads it)
}

func newTerm(t *testing.T, w, h int, command string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("SUMMIT_E2E") != "" {
			t.Fatal("tmux is required: SUMMIT_E2E is set (.ci/run installs tmux)")
		}
		t.Skip("tmux is not installed; .ci/run installs it and sets SUMMIT_E2E=1")
	}
	tm := &tmuxTerm{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock"), name: "e2e"}
	tm.tmux("new-session", "-d", "-s", tm.name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), command)
	// The pane's command leads its own process group (tmux starts it in a session of its own).
	pgid, _ := strconv.Atoi(strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{pane_pid}")))
	tm.pgid = pgid
	t.Cleanup(func() {
		exec.Command("tmux", "-S", tm.sock, "kill-server").Run()
		// The hangup reaches summit, which still closes its files (the workspace's .summit);
		// wait for the pane's processes to end, so the test's temporary directories are
		// removed after their last write, not beside it (CI saw "directory not empty").
		for deadline := time.Now().Add(10 * time.Second); pgid > 0 && time.Now().Before(deadline) && groupRunning(pgid); {
			time.Sleep(20 * time.Millisecond)
		}
	})
	return tm
}

// groupRunning reports whether a process of group pgid has not exited yet. A process that has
// exited (its files closed) but is not yet reaped is a zombie, which kill(-pgid, 0) still
// finds: with tmux's server gone, the pane's processes are reaped by pid 1, and in a container
// whose init reaps only now and then (this machine's: 1-2 s after the exit) waiting for the
// group to vanish waited for init, not for summit.
func groupRunning(pgid int) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	if procs == nil { // no /proc: the portable check, which counts zombies
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, p := range procs {
		b, err := os.ReadFile(p)
		i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
		if err != nil || i < 0 {
			continue
		}
		// After the name: state, ppid, pgrp.
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[0] != "X" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tm *tmuxTerm) screen() string { return tm.tmux("capture-pane", "-p", "-t", tm.name) }

func (tm *tmuxTerm) keys(keys ...string) {
	tm.tmux(append([]string{"send-keys", "-t", tm.name}, keys...)...)
}

// waitFor polls the screen until it matches, or fails showing the last screen.
func (tm *tmuxTerm) waitFor(what string, d time.Duration) string {
	tm.t.Helper()
	re := regexp.MustCompile(what)
	deadline := time.Now().Add(d)
	var s string
	for time.Now().Before(deadline) {
		s = tm.screen()
		if re.MatchString(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("the screen never showed %q; last screen:\n%s", what, s)
	return ""
}

// buildBinary builds the summit binary once per test process (a build is a minute of a
// shared machine); it lives in TestMain's cache dir, removed when the tests end.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin, err := builtBinary()
	if err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}

// testCache is TestMain's cache dir (a test's t.Setenv may point XDG_CACHE_HOME elsewhere
// for a while: the binary must outlive that test).
var testCache string

// Linked as a release is (.ci/release-build), with a version of its own: TestReleaseVersionLdflag.
var builtBinary = goBuildOnce("summit", ".", "-ldflags=-X "+versionSymbol+"="+testVersion)

// goBuildOnce is a function that builds pkg (go build flags… -o name pkg) the first time it
// is called, in TestMain's cache dir, and returns the binary's path (or the build's error)
// then and after.
func goBuildOnce(name, pkg string, flags ...string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp(testCache, name+"-")
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, name)
		args := append(append([]string{"build"}, flags...), "-o", bin, pkg)
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v\n%s", err, out)
		}
		return bin, nil
	})
}

// fakeAgent builds the fake ACP agent (agents/acp/testdata/fakeagent) once per test process,
// beside the binary.
func fakeAgent(t *testing.T) string {
	t.Helper()
	bin, err := builtFakeAgent()
	if err != nil {
		t.Fatalf("building the fake agent: %v", err)
	}
	return bin
}

var builtFakeAgent = goBuildOnce("fakeagent", "github.com/summit-dev/summit/agents/acp/testdata/fakeagent")

// peakRSS is the peak RSS of a child that has ended, in bytes.
func peakRSS(t *testing.T, ps *os.ProcessState) int64 {
	t.Helper()
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage for the child")
	}
	return ru.Maxrss * 1024 // Linux reports kilobytes
}

// body is the screen without its header and its last three lines (notice, input or
// timeline, footer): the tree and the transcript.
func body(screen string) string {
	ls := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(ls) < 5 {
		return ""
	}
	ls = ls[1 : len(ls)-3]
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(ls, "\n")
}

// TestTerminalDemo runs 'summit demo' in tmux at 80×24 as a person would: the guided tour
// delegates to three subagents, converges with a conflict (a side picked with 2 then enter),
// asks for a shell command (allowed with 1 then enter), hands control to a subagent (answered
// by typing), and quits. Every step's text is readable in full. The recording, kept in the
// data dir at the printed path, then replays in the terminal to the same final screen.
func TestTerminalDemo(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	errFile := filepath.Join(dir, "stderr")
	data := filepath.Join(dir, "data")
	tm := newTerm(t, 80, 24, "XDG_DATA_HOME="+data+" "+bin+" demo --keep --pace 0.3 2>"+errFile+"; sleep 60")

	t0 := time.Now()
	step := func(i int) string {
		s := tm.waitFor(regexp.QuoteMeta(demoSteps[i].say), 40*time.Second)
		t.Logf("step %d at %v", i+1, time.Since(t0).Round(100*time.Millisecond))
		return s
	}
	step(0)
	s := tm.waitFor(`conflict cf-1 · hunk cart\.go:13`, 40*time.Second)
	step(1)
	tm.waitFor(`↑↓ or 1-\d select`, 5*time.Second) // the grace period is over
	if !strings.Contains(s, "take sa-3") {
		t.Errorf("review prompt:\n%s", s)
	}
	tm.keys("2")
	tm.waitFor(`enter confirms ⚠ take sa-3 here`, 5*time.Second) // the region only: sa-2's return line still lands
	tm.keys("Enter")
	s = tm.waitFor(`permission pr-1 · sa-4 tester`, 30*time.Second)
	step(2)
	tm.waitFor(`↑↓ or 1-\d select`, 5*time.Second)
	if !strings.Contains(s, "$ command -v go") {
		t.Errorf("permission prompt:\n%s", s)
	}
	tm.keys("1", "Enter")
	// Step 4's text stands until sa-5 takes control; then its question covers it.
	tm.waitFor(regexp.QuoteMeta(demoSteps[3].say)+`|sa-5 has control`, 40*time.Second)
	tm.waitFor(`sa-5 has control`, 30*time.Second)
	tm.waitFor(`Usage or a Testing section to README\.md\?`, 30*time.Second)
	tm.keys("usage", "Enter")
	final := step(4)
	if strings.Contains(final, "running") && !strings.Contains(final, "0 running") {
		t.Errorf("still running at the end:\n%s", final)
	}
	final = tm.screen()
	tm.keys("C-c")

	var rec, ws string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(errFile)
		m := regexp.MustCompile(`replay it with: \S*summit replay (\S+\.jsonl)`).FindSubmatch(b)
		k := regexp.MustCompile(`kept at (\S+)`).FindSubmatch(b)
		if m != nil && k != nil {
			rec, ws = string(m[1]), string(k[1])
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rec == "" {
		b, _ := os.ReadFile(errFile)
		t.Fatalf("no recording reported; stderr:\n%s", b)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	if !strings.HasPrefix(rec, filepath.Join(data, "summit", "demo")) {
		t.Errorf("the recording %s is not in the data dir %s", rec, data)
	}
	cart, _ := os.ReadFile(filepath.Join(ws, "cart.go"))
	if !strings.Contains(string(cart), "cents := int64(l.Price*float64(l.Qty)*100 + 0.5)") {
		t.Errorf("the merged fix was not applied:\n%s", cart)
	}
	if _, err := exec.LookPath("go"); err == nil { // the demo ends with tests that pass
		test := exec.Command("go", "test", "./...")
		test.Dir = ws
		if b, err := test.CombinedOutput(); err != nil {
			t.Errorf("the demo's workspace fails its tests: %v\n%s", err, b)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(ws, "README.md"))
	if !strings.Contains(string(readme), "## Usage") {
		t.Errorf("README.md:\n%s", readme)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"replay", rec, "--print"}, &out, &errb); code != 0 {
		t.Fatalf("replay --print: %d %s", code, errb.String())
	}
	for _, w := range []string{"resolved by manual: sa-3", "pr-1 sa-4 run_shell_command", "→ granted (once)", "user: usage"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("replay --print lacks %q", w)
		}
	}

	// The replay, from the printed path, stopped just before the session's end, shows the
	// live session's last screen.
	rp := newTerm(t, 80, 24, bin+" replay "+rec+"; sleep 60")
	rp.waitFor(`paused`, 10*time.Second)
	rp.keys("$", ",")
	// The live workbench selected sa-5 when it took control; select it in the replay too.
	rp.keys("Down", "Down", "Down", "Down", "Down")
	var got string
	pos := regexp.MustCompile(`paused .* (\d+)/(\d+) · seq`)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = rp.screen()
		if m := pos.FindStringSubmatch(got); m != nil {
			at, _ := strconv.Atoi(m[1])
			n, _ := strconv.Atoi(m[2])
			if at == n-1 && n > 1 && strings.Contains(got, "sa-5 builder · done") {
				break
			}
		}
	}
	if panes(body(got)) != panes(body(final)) {
		t.Errorf("the replay's screen differs from the live one\nlive:\n%s\nreplay:\n%s", body(final), body(got))
	}
}

// panes is the body without the pane borders: the live screen has the input focused, the
// replay the tree, so only their border shapes differ.
func panes(s string) string {
	return strings.NewReplacer("┏", "╭", "┓", "╮", "┗", "╰", "┛", "╯", "━", "─", "┃", "│").Replace(s)
}

// TestTerminalStrayKeys is the finding of the prompt issue, driven in a real terminal: a
// tester asks to run "echo pwned > pwned.txt"; a second after the prompt opens the user types
// /status and enter. Later /frobnicate is typed into an open review. Nothing is decided: the
// file is never written, the recording has no grant and no resolution, and the keys went
// where they were typed (the /status panel, the rejected /frobnicate).
func TestTerminalStrayKeys(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n"), 0o644)
	tapes := t.TempDir()
	live, _ := filepath.Abs("../../session/live/testdata/tapes/converge.yaml")
	b, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tapes, "converge.yaml"), b, 0o644)
	os.WriteFile(filepath.Join(tapes, "pwn.yaml"), []byte(`tapes:
  - name: pwn
    match: {agent: tester, task: "(?i)run tests"}
    steps:
      - say: "Running the tests."
      - tool: run_shell_command
        args: {command: "echo pwned > pwned.txt"}
        on_denied:
          - capsule: {summary: "could not run the tests"}
      - capsule: {summary: "ran the tests"}
`), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	tm := newTerm(t, 100, 30, "cd "+ws+" && "+bin+" --tapes "+tapes+" --record "+rec+"; sleep 60")
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys(`/delegate "run tests" --agent-type tester`, "Enter")
	tm.waitFor(`permission pr-1 · sa-1 tester`, 20*time.Second)
	time.Sleep(time.Second)
	tm.keys("/status", "Enter")
	s := tm.waitFor(`/status · (↑↓ scroll · )?esc closes`, 10*time.Second)
	if !strings.Contains(s, "waiting for approval pr-1") {
		t.Errorf("the /status panel:\n%s", s)
	}
	tm.keys("Escape")
	tm.waitFor(`⚠ pr-1 sa-1 tester .* ctrl\+o answers`, 5*time.Second)
	// A review open on screen, and /frobnicate typed into it.
	tm.keys("/delegate variant a --agent-type builder", "Enter")
	tm.keys("/delegate variant b --agent-type builder", "Enter")
	tm.keys("/converge sa-2 sa-3 --strategy merge", "Enter")
	tm.waitFor(`cv-1 merge \(sa-2, sa-3\)`, 20*time.Second)
	tm.keys("C-o")
	tm.waitFor(`inbox · 2 waiting`, 20*time.Second)
	tm.keys("Tab")
	tm.waitFor(`conflict cf-1 · hunk main\.go:4`, 5*time.Second)
	time.Sleep(time.Second)
	tm.keys("/frobnicate", "Enter")
	tm.waitFor(`✗ .*frobnicate`, 10*time.Second)
	tm.keys("C-u", "n", "b", "2", "Enter")
	tm.waitFor(`✗|nb2`, 5*time.Second)
	// Help groups the keys by pane; / from the tree goes to the input.
	tm.keys("C-u", "?")
	tm.waitFor(`help · keys by pane`, 5*time.Second)
	tm.keys("Escape", "Tab")
	tm.waitFor(`┏━ tree`, 5*time.Second)
	tm.keys("/sta")
	tm.waitFor(`› /sta`, 5*time.Second)
	// ctrl+c with a subagent running (sa-1 waits for its answer) asks first.
	tm.keys("C-u", "C-c")
	tm.waitFor(`1 subagent running: ctrl\+c again quits`, 5*time.Second)
	tm.keys("C-c")
	data := waitEnded(t, rec)
	if !bytes.Contains(data, []byte(`"type":"SessionEnded"`)) {
		t.Fatalf("the recording did not close:\n%s", data)
	}
	for _, bad := range []string{`"type":"PermissionGranted"`, `"type":"ConflictResolved"`} {
		if bytes.Contains(data, []byte(bad)) {
			t.Errorf("stray keys took a decision: the recording has %s", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned.txt")); err == nil {
		t.Error("pwned.txt exists: the shell command ran")
	}
	for _, want := range []string{`"line":"/status"`, `"line":"/frobnicate"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the typed line %s was lost", want)
		}
	}
}

// TestTerminalNoColorAndTiny: NO_COLOR leaves no colour in the screen (bold and reverse
// still mark things), colours are used otherwise, and a terminal below 60×15 is told so.
func TestTerminalNoColorAndTiny(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	colour := regexp.MustCompile("\x1b\\[[0-9;]*(3[0-7]|38;|4[0-7]|48;)[0-9;]*m")
	for _, c := range []struct {
		env  string
		want bool
	}{{"NO_COLOR=1 ", false}, {"", true}} {
		tm := newTerm(t, 100, 20, "cd "+ws+" && "+c.env+bin+" --no-record; sleep 30")
		tm.waitFor(`type /help`, 10*time.Second)
		s := tm.tmux("capture-pane", "-p", "-e", "-t", tm.name)
		if got := colour.MatchString(s); got != c.want {
			t.Errorf("%q: colour on screen = %v, want %v", c.env, got, c.want)
		}
		tm.keys("C-c")
	}
	tm := newTerm(t, 50, 10, "cd "+ws+" && "+bin+" --no-record; sleep 30")
	tm.waitFor(`summit needs at least 60×15`, 10*time.Second)
	tm.tmux("resize-window", "-t", tm.name, "-x", "100", "-y", "20")
	tm.waitFor(`type /help`, 10*time.Second)
}

// TestTerminalTyped types commands into the live workbench on test tapes: delegate two
// builders, converge them, resolve the conflict in the review prompt, apply, cancel a
// subagent that waits for the user, and quit with /quit.
func TestTerminalTyped(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n"), 0o644)
	tapes, _ := filepath.Abs("../../session/live/testdata/tapes")
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	tm := newTerm(t, 120, 36, "cd "+ws+" && "+bin+" --tapes "+tapes+" --record "+rec+"; sleep 60")
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys("/delegate variant a --agent-type builder", "Enter")
	tm.waitFor(`sa-1 builder`, 10*time.Second)
	tm.keys("/delegate variant b --agent-type builder", "Enter")
	tm.keys("/conv", "Tab")
	tm.waitFor(`› /converge`, 5*time.Second)
	tm.keys("sa-1 sa-2 --strategy merge", "Enter")
	tm.waitFor(`conflict cf-1 · hunk main\.go:4`, 20*time.Second)
	screen := tm.waitFor(`↑↓ or 1-\d select`, 5*time.Second) // the keys line: the grace period is over
	// note… is the last choice; its number depends on which choices the review offers (no
	// "both": the changes overlap; whole-file choices when they differ from the region's).
	noteKey := regexp.MustCompile(`(\d) note…`).FindStringSubmatch(screen)
	if noteKey == nil {
		t.Fatalf("the review offers no note…:\n%s", screen)
	}
	tm.keys(noteKey[1], "Enter")
	tm.waitFor(`note: █`, 5*time.Second)
	tm.keys("user greeting", "Enter", "2", "Enter")
	tm.waitFor(`cv-1 merge \(sa-1, sa-2\)\s+complete`, 10*time.Second)
	tm.keys("/apply cv-1", "Enter")
	tm.waitFor(`cv-1 applied: 1 file`, 10*time.Second)
	// A bad command stays in the input with its error.
	tm.keys("/cancel sa-9", "Enter")
	s := tm.waitFor(`✗ .*unknown subagent sa-9`, 10*time.Second)
	if !strings.Contains(s, "› /cancel sa-9") {
		t.Errorf("the rejected line left the input:\n%s", s)
	}
	tm.keys("C-u", "/quit", "Enter")
	waitEnded(t, rec)
	var out, errb bytes.Buffer
	if code := run([]string{"replay", rec, "--print"}, &out, &errb); code != 0 {
		t.Fatalf("replay --print: %d %s", code, errb.String())
	}
	for _, w := range []string{`/resolve cf-1 --choose sa-2 --note "user greeting"`, "applied to main.go", "ended (quit)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the recording lacks %q:\n%s", w, out.String())
		}
	}
	got, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	if !strings.Contains(string(got), `println("hello, " + user())`) {
		t.Errorf("main.go:\n%s", got)
	}
}

// TestTerminalEditChoice: the review's edit choice opens $EDITOR on the conflicted lines with
// conflict markers (here a script that writes the reviewer's text), the saved text is recorded
// as the resolution, and /apply lands it.
func TestTerminalEditChoice(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n"), 0o644)
	tapes, _ := filepath.Abs("../../session/live/testdata/tapes")
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen.txt")
	ed := filepath.Join(dir, "ed.sh")
	os.WriteFile(ed, []byte("#!/bin/sh\ncp \"$1\" "+seen+"\nprintf '\\tprintln(\"hello from both\")\\n' > \"$1\"\n"), 0o755)
	rec := filepath.Join(dir, "rec.jsonl")
	tm := newTerm(t, 120, 40, "cd "+ws+" && EDITOR="+ed+" "+bin+" --tapes "+tapes+" --record "+rec+"; sleep 60")
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys("/delegate iso replace --agent-type builder", "Enter")
	tm.keys("/delegate iso write --agent-type builder", "Enter")
	tm.keys("/converge sa-1 sa-2 --strategy merge", "Enter")
	tm.waitFor(`conflict cf-1 · hunk main\.go`, 20*time.Second)
	tm.waitFor(`↑↓ or 1-\d select`, 10*time.Second)
	tm.keys("4")
	tm.waitFor(`enter confirms edit in \$EDITOR`, 5*time.Second)
	tm.keys("Enter")
	tm.waitFor(`cv-1 merge \(sa-1, sa-2\)\s+complete`, 20*time.Second)
	if b, _ := os.ReadFile(seen); !strings.Contains(string(b), "<<<<<<< sa-1") || !strings.Contains(string(b), "hello from B") {
		t.Errorf("the editor was given:\n%s", b)
	}
	tm.keys("/apply cv-1", "Enter")
	tm.waitFor(`applied`, 10*time.Second)
	if got, _ := os.ReadFile(filepath.Join(ws, "main.go")); string(got) != "package main\n\nfunc main() {\n\tprintln(\"hello from both\")\n}\n" {
		t.Errorf("main.go:\n%s", got)
	}
	tm.keys("/quit", "Enter")
	data := waitEnded(t, rec)
	if !bytes.Contains(data, []byte(`"choice":"edit"`)) || !bytes.Contains(data, []byte(`hello from both`)) {
		t.Errorf("the recording lacks the edit:\n%s", data)
	}
}

// TestTerminalClosed: closing the terminal (tmux kill-session sends SIGHUP) while a subagent
// runs closes the session cleanly: the recording ends with SessionEnded (reason signal) and
// the running subagent's stop.
func TestTerminalClosed(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := t.TempDir()
	tapes, _ := filepath.Abs("../../session/live/testdata/tapes")
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	tm := newTerm(t, 100, 30, "cd "+ws+" && exec "+bin+" --tapes "+tapes+" --record "+rec)
	tm.waitFor(`type /help`, 10*time.Second)
	tm.keys("/delegate slow work --agent-type builder", "Enter")
	tm.waitFor(`sa-1 builder`, 10*time.Second)
	tm.tmux("kill-session", "-t", tm.name)
	// summit (the pane's command, exec'd) exits once the session is closed: nothing waits
	// for a timer. What it does after the hangup is stop the running subagent (its changes
	// recorded, a few git commands) and remove its worktree: well under a second on an idle
	// machine; 15 s is for a loaded one.
	for deadline := time.Now().Add(15 * time.Second); groupRunning(tm.pgid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("summit still runs 15 s after the terminal closed")
		}
	}
	data, _ := os.ReadFile(rec) // complete once summit has exited: no waiting
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if !bytes.Contains(data, []byte(`"reason":"signal"`)) || !bytes.Contains(data, []byte(`"type":"SubagentStop"`)) ||
		!bytes.Contains(lines[len(lines)-1], []byte(`"type":"SessionEnded"`)) {
		t.Fatalf("the recording after the terminal closed:\n%s", data)
	}
}

// waitEnded waits up to 10 s for a recording to hold its SessionEnded and returns its bytes
// (what it had by then, when it never does: the caller's assertions say what is missing).
func waitEnded(t *testing.T, rec string) []byte {
	t.Helper()
	var data []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if data, _ = os.ReadFile(rec); bytes.Contains(data, []byte(`"type":"SessionEnded"`)) {
			break
		}
	}
	return data
}

// TestGroupRunningIgnoresZombies: the tmux cleanup waits for the pane's processes to exit, not
// to be reaped. A process that has exited but whose parent has not waited for it yet is still
// found by kill(-pgid, 0), the check the cleanup used before (it then waited for this
// machine's init, 1-2 s after summit had exited); groupRunning does not count it, and counts
// a process that runs.
func TestGroupRunningIgnoresZombies(t *testing.T) {
	t.Parallel()
	run := exec.Command("sleep", "30")
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Wait()
	defer run.Process.Kill()
	if !groupRunning(run.Process.Pid) {
		t.Error("a running process's group is not running")
	}
	zombie := exec.Command("true")
	zombie.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	pid := zombie.Process.Pid
	// Not waited for: it ends as a zombie, its parent being this test.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(b, ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never exited: %s", pid, b)
		}
	}
	if syscall.Kill(-pid, 0) != nil {
		t.Fatal("kill(-pgid, 0) no longer finds the zombie: the case this test is about cannot be made here")
	}
	if groupRunning(pid) {
		t.Error("groupRunning counts a process that has exited (a zombie)")
	}
}
