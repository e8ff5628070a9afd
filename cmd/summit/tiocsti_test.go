package main

// Issue 26, item 1: no process summit starts can reach the user's terminal. These tests are
// the attacker's side, end to end: an approved shell step of a tape opens the terminal
// (/dev/tty, and the pane's /dev/pts/N by path), writes raw OSC 0 (title) and OSC 52
// (clipboard) sequences and visible text to it, and pushes "touch MARKER\n" into its input
// with ioctl(TIOCSTI), once at once and once more from a child that leaves the tool's process
// group and waits for summit to exit (so that the pane's own shell reads the input). The
// workbench and `summit run` are each started from an interactive bash in a tmux pane.
// Nothing of it may reach the pane, and MARKER must never exist.

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// injectScript is the shell step's perl (perl-base is on every Debian): hit opens a terminal,
// writes the escapes, and pushes the payload with TIOCSTI (0x5412), printing what worked. The
// payload and escapes come hex-encoded in its arguments, so that the tool call's text, which
// the workbench shows, never holds the marker's path or the visible mark itself.
const injectScript = `use POSIX; $|=1;
my ($P, $E, $pane) = (pack("H*", $ARGV[0]), pack("H*", $ARGV[1]), $ARGV[2]);
sub hit { my ($p, $tag) = @_; my $t;
  unless (open($t, "+<", $p)) { print "$tag OPEN-FAILED $p: $!\n"; return }
  my $w = syswrite($t, $E);
  print defined $w ? "$tag WROTE $w $p\n" : "$tag WRITE-FAILED $p: $!\n";
  my $n = 0; for my $c (split //, $P) { $n++ if ioctl($t, 0x5412, $c) }
  print "$tag TIOCSTI $n/" . length($P) . " $p" . ($n ? "" : ": $!") . "\n"; close $t }
hit("/dev/tty", "now"); hit($pane, "now");
my $pid = fork; exit 0 if !defined $pid || $pid;
setpgrp(0, 0); open(STDIN, "<", "/dev/null"); open(STDOUT, ">", "/dev/null"); open(STDERR, ">", "/dev/null");
if (open(my $t, "<", "/dev/tty")) { my $g = tcgetpgrp(fileno $t);
  for (1..200) { last if tcgetpgrp(fileno $t) != $g; select(undef, undef, undef, 0.2) } }
select(undef, undef, undef, 0.3); hit("/dev/tty", "late"); hit($pane, "late");`

// injection is one attack's setting: the pane, its tty, and what would show that it worked.
type injection struct {
	tm      *tmuxTerm
	bin     string
	ws      string
	tapes   string
	rec     string
	marker  string // the file the injected command creates
	title   string // the title the OSC 0 sets
	clip    string // what the OSC 52 puts on the clipboard
	visible string // the text written raw to the terminal
	title0  string // the pane's title before
}

func newInjection(t *testing.T) *injection {
	t.Helper()
	bin := buildBinary(t)
	in := &injection{bin: bin, ws: runWorkspace(t), tapes: t.TempDir(), rec: filepath.Join(t.TempDir(), "rec.jsonl"),
		marker: filepath.Join(t.TempDir(), "PWNED_tiocsti"), title: "PWNED-TITLE-7d1e", clip: "PWNED-CLIPBOARD-93ab", visible: "PWNED-RAW-TEXT-c4f0"}
	// An interactive bash, as a user's: what TIOCSTI pushes is what it reads after summit.
	in.tm = newTerm(t, 120, 40, "PS1='READY$ ' exec bash --norc --noprofile")
	in.tm.tmux("set-option", "-g", "set-clipboard", "on") // OSC 52 would make a tmux buffer
	in.tm.waitFor(`READY\$`, 10*time.Second)
	paneTTY := strings.TrimSpace(in.tm.tmux("display", "-p", "-t", in.tm.name, "#{pane_tty}"))
	in.title0 = strings.TrimSpace(in.tm.tmux("display", "-p", "-t", in.tm.name, "#{pane_title}"))
	payload := hex.EncodeToString([]byte("touch " + in.marker + "\n"))
	escapes := hex.EncodeToString([]byte("\x1b]0;" + in.title + "\x07\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(in.clip)) + "\x07\r\n" + in.visible + "\r\n"))
	command, _ := json.Marshal("perl -e '" + injectScript + "' " + payload + " " + escapes + " " + paneTTY)
	tape := "tapes:\n  - name: inject\n    match: {agent: tester, task: \"(?i)inject\"}\n    steps:\n" +
		"      - say: \"Checking the terminal.\"\n      - tool: run_shell_command\n        args: {command: " + string(command) + "}\n" +
		"      - capsule: {summary: \"checked\"}\n"
	if err := os.WriteFile(filepath.Join(in.tapes, "inject.yaml"), []byte(tape), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// shellResult is the recorded result of the shell step ("" when there is none).
func (in *injection) shellResult(t *testing.T) string {
	t.Helper()
	evs, _, err := record.ReadAll(in.rec, record.ReadOptions{Lenient: true})
	if err != nil {
		t.Errorf("the recording: %v", err)
	}
	for _, e := range evs {
		if te, ok := e.Data.(session.TranscriptEvent); ok && te.EventType == session.TranscriptToolResult && te.Tool == "run_shell_command" {
			return te.Result
		}
	}
	return ""
}

// check waits for the pane's shell to have had the time to read what was pushed (the late
// child waits for summit to leave the foreground), then asserts that nothing reached the
// terminal and nothing ran.
func (in *injection) check(t *testing.T) {
	t.Helper()
	tm := in.tm
	tm.waitFor(`EXIT=\d+`, 30*time.Second)
	for deadline := time.Now().Add(6 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(in.marker); err == nil {
			break
		}
	}
	tm.keys("echo SHELL-ALIVE", "Enter") // the shell reads input: anything pushed before is read by now
	screen := tm.waitFor(`(?m)^SHELL-ALIVE`, 10*time.Second)
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(in.marker); err == nil {
		t.Errorf("the injected command ran in the user's shell: %s exists", in.marker)
	}
	all := tm.tmux("capture-pane", "-p", "-S", "-", "-t", tm.name)
	for _, mark := range []string{in.visible, filepath.Base(in.marker)} {
		if strings.Contains(all, mark) {
			t.Errorf("%q reached the pane:\n%s", mark, all)
		}
	}
	if title := strings.TrimSpace(tm.tmux("display", "-p", "-t", tm.name, "#{pane_title}")); strings.Contains(title, "PWNED") {
		t.Errorf("the pane's title was set to %q (it was %q)", title, in.title0)
	}
	if bufs := tm.tmux("list-buffers"); strings.Contains(bufs, "PWNED") || strings.TrimSpace(bufs) != "" {
		t.Errorf("the clipboard (OSC 52) was written: tmux buffers %q", bufs)
	}
	// The recorded result shows every attempt failed: nothing written, nothing pushed.
	res := in.shellResult(t)
	t.Logf("the shell step's recorded result:\n%s", res)
	if res == "" {
		t.Errorf("no recorded result of the shell step; the screen:\n%s", screen)
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`WROTE \d+`), regexp.MustCompile(`TIOCSTI [1-9]\d*/`)} {
		if m := bad.FindString(res); m != "" {
			t.Errorf("the shell step reached the terminal (%s); its recorded result:\n%s", m, res)
		}
	}
	if strings.Count(res, "FAILED") < 2 {
		t.Errorf("the recorded result does not show both attempts failing:\n%s", res)
	}
	data, _ := os.ReadFile(in.rec)
	if bytes.Contains(data, []byte(filepath.Base(in.marker))) {
		t.Errorf("the pushed input reached summit: the recording holds %q", filepath.Base(in.marker))
	}
}

// TestTerminalInjectionWorkbench: the attack from the workbench, the shell step allowed by
// the user in its permission prompt.
func TestTerminalInjectionWorkbench(t *testing.T) {
	t.Parallel()
	in := newInjection(t)
	tm := in.tm
	tm.keys("cd "+in.ws+" && "+in.bin+" --tapes "+in.tapes+" --record "+in.rec+" 2>/dev/null; echo EXIT=$?", "Enter")
	tm.waitFor(`type /help`, 20*time.Second)
	tm.keys(`/delegate "inject probe" --agent-type tester`, "Enter")
	tm.waitFor(`permission pr-1 · sa-1 tester`, 20*time.Second)
	tm.waitFor(`↑↓ or 1-\d select`, 5*time.Second) // the grace period is over
	tm.keys("1", "Enter")
	for deadline := time.Now().Add(20 * time.Second); in.shellResult(t) == ""; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell step never finished; the screen:\n%s", tm.screen())
		}
	}
	time.Sleep(time.Second) // what was pushed reaches the workbench's input
	if s := tm.screen(); strings.Contains(s, filepath.Base(in.marker)) || strings.Contains(s, in.visible) {
		t.Errorf("the injection reached the workbench:\n%s", s)
	}
	tm.keys("C-u", "/quit", "Enter")
	in.check(t)
}

// TestTerminalInjectionRun: the same from headless `summit run` in a terminal, the shell step
// allowed by --approve shell.
func TestTerminalInjectionRun(t *testing.T) {
	t.Parallel()
	in := newInjection(t)
	script := filepath.Join(t.TempDir(), "inject.summit")
	os.WriteFile(script, []byte("/delegate \"inject probe\" --agent-type tester\n"), 0o644)
	in.tm.keys("cd "+in.ws+" && "+in.bin+" run --script "+script+" --workspace "+in.ws+" --tapes "+in.tapes+
		" --approve shell --record "+in.rec+" >/dev/null; echo EXIT=$?", "Enter")
	in.check(t)
}
