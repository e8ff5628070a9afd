package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid runs. A zombie counts as gone: in a container nobody may reap it.
func alive(pid int) bool {
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
	}
	return syscall.Kill(pid, 0) == nil
}

// waitGone fails the test unless pid is gone within a second.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d survived the call", pid)
			return
		}
	}
}

// readPid reads a pid the command wrote to a file in the workspace.
func readPid(t *testing.T, s *Sandbox, name string) int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(s.Root(), name))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %s: %q", name, b)
	}
	return pid
}

// settleGoroutines fails the test unless the goroutine count drops back to base.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > base; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines leaked: %d > %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
	}
}

func shellSandbox(t *testing.T, o Options) *Sandbox {
	if o.Environ == nil {
		o.Environ = []string{"PATH=" + os.Getenv("PATH"), "FOO_API_KEY=xyz-secret", "GITHUB_TOKEN=tok-secret",
			"DB_PASSWORD=pw-secret", "PLAIN=visible", "HOME=/home/tester"}
	}
	s, _ := fixture(t, o)
	return s
}

func TestShell(t *testing.T) {
	s := shellSandbox(t, Options{})
	base := runtime.NumGoroutine()
	for _, c := range []struct {
		name, command string
		wantErr       bool
		want          string // whole output
	}{
		{"stdout", "echo hello", false, "hello\n"},
		{"stderr merged", "echo out; echo err >&2", false, "out\nerr\n"},
		{"cwd is the root", "pwd", false, s.Root() + "\n"},
		{"no output", "true", false, ""},
		{"exit code", "echo partial; exit 3", true, "partial\n\n[exit code 3]"},
		{"signal", "kill -KILL $$", true, "\n[killed by signal killed]"},
		{"stdin is empty", `read -r x; echo "read:$?:$x"`, false, "read:1:\n"},
		{"bash syntax", "if then", true, "bash: -c: line 1: syntax error near unexpected token `then'\nbash: -c: line 1: `if then'\n\n[exit code 2]"},
		{"invalid UTF-8 made valid", `printf 'a\xffb'`, false, "a\uFFFDb"},
	} {
		r := call(s, "run_shell_command", jsonArgs("command", c.command, "description", c.name))
		if r.Output != c.want || r.IsError != c.wantErr {
			t.Errorf("%s: got %q (error %v), want %q", c.name, r.Output, r.IsError, c.want)
		}
	}
	check(t, "empty command", call(s, "run_shell_command", `{"command": "  "}`), true, "run_shell_command: command is empty")
	check(t, "zero timeout", call(s, "run_shell_command", `{"command": "true", "timeout_s": 0}`), true, "timeout_s must be 1 or more, got 0")
	settleGoroutines(t, base)
}

// The shell gets an allow-list environment: a variable not on it is absent whatever its name
// (GITHUB_PAT, DATABASE_URL and PLAIN look no more secret than PATH), unless the user names it.
func TestShellEnvironment(t *testing.T) {
	environ := []string{"PATH=" + os.Getenv("PATH"), "FOO_API_KEY=xyz-secret", "GITHUB_TOKEN=tok-secret",
		"DB_PASSWORD=pw-secret", "PLAIN=visible", "HOME=/home/tester", "GITHUB_PAT=pat-secret",
		"DATABASE_URL=postgres://u:dburl-secret@h/db", "LC_ALL=C.UTF-8", "LANG=C.UTF-8"}
	s := shellSandbox(t, Options{Environ: environ})
	r := call(s, "run_shell_command", `{"command": "env"}`)
	check(t, "env", r, false, "HOME=/home/tester", "PATH=", "LC_ALL=C.UTF-8", "LANG=C.UTF-8")
	for _, secret := range []string{"FOO_API_KEY", "xyz-secret", "GITHUB_TOKEN", "tok-secret", "DB_PASSWORD", "pw-secret",
		"GITHUB_PAT", "pat-secret", "dburl-secret", "PLAIN"} {
		if strings.Contains(r.Output, secret) {
			t.Errorf("env shows %s:\n%s", secret, r.Output)
		}
	}
	// Names the user lists pass, a secret-looking one included.
	s = shellSandbox(t, Options{Environ: environ, PassEnv: []string{"PLAIN", "GITHUB_PAT"}})
	r = call(s, "run_shell_command", `{"command": "env"}`)
	check(t, "passed", r, false, "PLAIN=visible", "GITHUB_PAT=pat-secret")
	if strings.Contains(r.Output, "tok-secret") {
		t.Errorf("env shows an unlisted variable:\n%s", r.Output)
	}
	// Without HOME in Environ, the process's HOME is added.
	s = shellSandbox(t, Options{Environ: []string{"PATH=" + os.Getenv("PATH")}})
	check(t, "HOME kept", call(s, "run_shell_command", `{"command": "echo $HOME"}`), false, os.Getenv("HOME")+"\n")
}

func TestShellTimeoutKillsTheGroup(t *testing.T) {
	s := shellSandbox(t, Options{ShellTimeout: 5 * time.Second})
	base := runtime.NumGoroutine()
	start := time.Now()
	// timeout_s lowers the configured 5 s; the background child is in the same group.
	r := call(s, "run_shell_command", `{"command": "sleep 30 & echo $! > child.pid; echo started; sleep 30; wait", "timeout_s": 1}`)
	if took := time.Since(start); took > 3*time.Second || took < time.Second {
		t.Errorf("timeout took %v", took)
	}
	check(t, "timeout", r, true, "started\n\n[timed out after 1s; the command and its process group were killed]")
	waitGone(t, readPid(t, s, "child.pid"))

	// timeout_s cannot raise the configured timeout.
	s.o.ShellTimeout = time.Second
	start = time.Now()
	check(t, "no raise", call(s, "run_shell_command", `{"command": "sleep 30", "timeout_s": 100}`), true, "timed out after 1s")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("timeout_s raised the timeout: %v", took)
	}
	settleGoroutines(t, base)
}

func TestShellSigtermIgnored(t *testing.T) {
	defer func(g time.Duration) { killGrace = g }(killGrace)
	killGrace = 200 * time.Millisecond
	s := shellSandbox(t, Options{})
	start := time.Now()
	// Both bash and its child ignore SIGTERM: SIGKILL after the grace period gets them.
	r := call(s, "run_shell_command", `{"command": "trap '' TERM; sleep 30 & echo $! > child.pid; sleep 30", "timeout_s": 1}`)
	check(t, "sigterm ignored", r, true, "timed out after 1s")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v", took)
	}
	waitGone(t, readPid(t, s, "child.pid"))
}

func TestShellBackgroundChildIsKilledAtExit(t *testing.T) {
	s := shellSandbox(t, Options{})
	base := runtime.NumGoroutine()
	start := time.Now()
	// The child keeps the output pipe open; the call still returns as soon as bash exits.
	r := call(s, "run_shell_command", `{"command": "sleep 30 & echo $! > bg.pid; echo done"}`)
	check(t, "background", r, false, "done\n")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("waited for the background child: %v", took)
	}
	waitGone(t, readPid(t, s, "bg.pid"))
	settleGoroutines(t, base)
}

func TestShellEscapedChildDoesNotHangTheCall(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("no setsid")
	}
	s := shellSandbox(t, Options{})
	base := runtime.NumGoroutine()
	start := time.Now()
	// setsid leaves the process group, so the final SIGKILL misses it and it holds the pipe:
	// the call stops reading after drainWait rather than waiting for it.
	// bash waits until the child has its own session (it writes its pid from there), so the
	// final SIGKILL cannot catch it still in the group.
	r := call(s, "run_shell_command", `{"command": "setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & `+
		`while [ ! -s esc.pid ]; do sleep 0.01; done; echo hi"}`)
	pid := readPid(t, s, "esc.pid")
	defer syscall.Kill(pid, syscall.SIGKILL) // started by this test: clean it up
	check(t, "escaped", r, false, "hi\n")
	if took := time.Since(start); took < drainWait || took > 2*time.Second {
		t.Errorf("took %v", took)
	}
	if !alive(pid) {
		t.Errorf("the escaped child is gone: the test did not exercise the drain")
	}
	settleGoroutines(t, base)
}

func TestShellCancel(t *testing.T) {
	s := shellSandbox(t, Options{})
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancelled once the child is there (its pid written), not after a fixed time: on a loaded
	// machine the jailed shell took over 200 ms to start, and the cancel came before the child.
	cancelled := make(chan time.Time, 1)
	go func() {
		pidFile := filepath.Join(s.Root(), "child.pid")
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, _ := os.ReadFile(pidFile); len(b) > 0 && b[len(b)-1] == '\n' {
				break
			}
		}
		cancelled <- time.Now()
		cancel()
	}()
	// The child traps SIGTERM to clean up: it gets SIGTERM with the group, and the time to
	// finish, not just until bash is gone.
	// The child writes its own pid once its trap is set, so the cancel cannot come before it.
	r := s.Call(ctx, "run_shell_command", `{"command": "sh -c 'trap \"sleep 0.2; echo bye > term.txt; exit\" TERM; `+
		`echo $$ > child.pid; while :; do sleep 0.05; done' & sleep 30"}`)
	if took := time.Since(<-cancelled); took > 2*time.Second {
		t.Errorf("cancel took %v", took)
	}
	check(t, "cancel", r, true, "[cancelled; the command and its process group were killed]")
	waitGone(t, readPid(t, s, "child.pid"))
	if b, _ := os.ReadFile(filepath.Join(s.Root(), "term.txt")); string(b) != "bye\n" {
		t.Errorf("the child did not get SIGTERM and time to clean up: term.txt %q", b)
	}
	check(t, "already cancelled", s.Call(ctx, "run_shell_command", `{"command": "touch ran"}`), true, "run_shell_command: not run: context canceled")
	if _, err := os.Stat(filepath.Join(s.Root(), "ran")); err == nil {
		t.Errorf("a command ran after cancellation")
	}
	settleGoroutines(t, base)
}

func TestTruncation(t *testing.T) {
	s := shellSandbox(t, Options{MaxResult: 1001, MaxRead: 16 << 20})
	const size = 10 << 20
	big := strings.Repeat("é", size/2) // 10 MiB of two-byte runes: 1001 falls inside one
	write(t, filepath.Join(s.Root(), "big.txt"), big)
	marker := fmt.Sprintf("\n[... truncated: %d bytes total, showing the first 1000]", size)
	r := call(s, "read_file", `{"path": "big.txt"}`)
	if r.IsError || r.Output != big[:1000]+marker {
		t.Errorf("read: %d bytes, ends %q", len(r.Output), r.Output[max(0, len(r.Output)-80):])
	}
	r = call(s, "read_file", `{"path": "big.txt", "offset": 0, "limit": 1}`)
	if r.IsError || r.Output != "[big.txt: lines 1-1 of 1]\n"+big[:1000]+marker {
		t.Errorf("range read: %d bytes, ends %q", len(r.Output), r.Output[max(0, len(r.Output)-80):])
	}
	r = call(s, "run_shell_command", fmt.Sprintf(`{"command": "head -c %d /dev/zero | tr '\\0' x; exit 1"}`, size))
	want := strings.Repeat("x", 1001) + fmt.Sprintf("\n[... truncated: %d bytes total, showing the first 1001]\n[exit code 1]", size)
	if !r.IsError || r.Output != want {
		t.Errorf("shell: %d bytes, ends %q", len(r.Output), r.Output[max(0, len(r.Output)-80):])
	}
	// A multi-byte rune cut by the shell's buffer is dropped, not split.
	r = call(s, "run_shell_command", fmt.Sprintf(`{"command": "for i in $(seq 600); do printf 'é'; done"}`))
	if r.Output != strings.Repeat("é", 500)+"\n[... truncated: 1200 bytes total, showing the first 1000]" {
		t.Errorf("shell runes: %q", r.Output[max(0, len(r.Output)-80):])
	}
}
