package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/summit-dev/summit/session/record"
)

// Grace periods of run_shell_command. Variables, so tests can shorten them.
var (
	killGrace = 2 * time.Second        // SIGTERM to SIGKILL
	drainWait = 500 * time.Millisecond // output still open after the group is gone
)

// shellEnv is Environ scrubbed (ScrubEnv).
func (s *Sandbox) shellEnv() []string { return ScrubEnv(s.o.Environ) }

// ScrubEnv is environ without the variables whose names look secret (record.IsSecretEnvName),
// and with HOME (tools such as git and go need it). The shell tool and the user's hooks
// (session/hooks) run with it.
func ScrubEnv(environ []string) []string {
	env := make([]string, 0, len(environ)+1)
	home := false
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "HOME" {
			home = true
		} else if record.IsSecretEnvName(name) {
			continue
		}
		env = append(env, kv)
	}
	if h := os.Getenv("HOME"); !home && h != "" {
		env = append(env, "HOME="+h)
	}
	return env
}

// writable lists where a confined shell may write: the root, /dev, and the build caches tools
// fill as they run (go, npm, cargo); the caller adds a temp dir of its own. Not the shared temp
// dir nor the user's cache dir as a whole: workspaces and summit's worktrees live there.
func (s *Sandbox) writable() []string {
	rw := []string{s.root, "/dev"}
	home, _ := os.UserHomeDir()
	cache, _ := os.UserCacheDir()
	for _, d := range []string{os.Getenv("GOCACHE"), os.Getenv("GOMODCACHE")} {
		if d != "" {
			rw = append(rw, d)
		}
	}
	if cache != "" {
		rw = append(rw, filepath.Join(cache, "go-build"))
	}
	if home != "" {
		rw = append(rw, filepath.Join(home, "go", "pkg", "mod"), filepath.Join(home, ".npm"), filepath.Join(home, ".cargo", "registry"))
	}
	return rw
}

// shellTool runs bash -c in the root. Invariants: the command runs in its own process group,
// and when the call returns that group has been sent SIGKILL, whether the command finished,
// timed out or was cancelled, so no child it started outlives the call (a process that leaves
// the group with setsid is beyond reach; its output is no longer read). Output is read
// through a pipe into a capBuf, so memory stays bounded, and every goroutine started here has
// ended when the call returns.
func shellTool(ctx context.Context, s *Sandbox, a args) Result {
	command := a.str("command")
	if strings.TrimSpace(command) == "" {
		return errResult("run_shell_command: command is empty")
	}
	timeout := s.o.ShellTimeout
	if n, ok := a.int("timeout_s"); ok {
		if n < 1 {
			return errResult("run_shell_command: timeout_s must be 1 or more, got %d", n)
		}
		timeout = min(timeout, time.Duration(n)*time.Second)
	}
	// Our own pipe, not exec's copying goroutines: cmd.Wait then returns when bash exits,
	// even if a background child still holds the pipe, and the read end can be closed to
	// stop reading.
	pr, pw, err := os.Pipe()
	if err != nil {
		return errResult("run_shell_command: %v", err)
	}
	defer pr.Close()
	cmd := exec.Command("bash", "-c", command)
	cmd.Env = s.shellEnv()
	if s.o.ConfineWrites {
		// Its own temp dir (TMPDIR): the shared one may hold the workspace itself.
		tmp, err := os.MkdirTemp("", "summit-shell-")
		if err != nil {
			return errResult("run_shell_command: %v", err)
		}
		defer os.RemoveAll(tmp)
		if cmd, err = confinedCommand(append(s.writable(), tmp), s.o.Hidden, append(s.shellEnv(), "TMPDIR="+tmp), "bash", "-c", command); err != nil {
			return errResult("run_shell_command: %v", err)
		}
	}
	cmd.Dir = s.root
	cmd.Stdout, cmd.Stderr = pw, pw // stdin stays nil: /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pw.Close() // only the command holds the write end now
	if err != nil {
		return errResult("run_shell_command: %v", err)
	}
	pgid := cmd.Process.Pid // Setpgid: the group is named after bash's pid

	out := &capBuf{max: s.o.MaxResult + utf8.UTFMax}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(out, pr) // ends at EOF (every writer gone) or when pr is closed
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var stopped string
	exited := false
	select {
	case err = <-waited:
		exited = true
	case <-ctx.Done():
		stopped = "cancelled"
	case <-timer.C:
		stopped = fmt.Sprintf("timed out after %s", timeout)
	}
	if stopped != "" {
		// bash is not reaped yet, so its pid, the group's id, cannot have been reused.
		syscall.Kill(-pgid, syscall.SIGTERM)
		// The group has the grace period to finish, children included (one may be cleaning
		// up): it is done when bash has exited and the output pipe is closed, i.e. every
		// process writing to it has exited. Zombies hold no pipe, so they do not count.
		grace := time.NewTimer(killGrace)
		for waitc, copyc := waited, copied; waitc != nil || copyc != nil; {
			select {
			case err = <-waitc:
				exited, waitc = true, nil
			case <-copyc:
				copyc = nil
			case <-grace.C:
				waitc, copyc = nil, nil
			}
		}
		grace.Stop()
	}
	// Whatever is left of the group goes now: after a stop, what outlived the grace period;
	// after a normal exit, what bash left running in the background. (Were the group empty
	// and bash reaped, its id could in theory name a new group by now; pids are not reused
	// that fast.)
	syscall.Kill(-pgid, syscall.SIGKILL)
	if !exited {
		err = <-waited
	}
	drain := time.NewTimer(drainWait)
	select {
	case <-copied:
	case <-drain.C:
		pr.Close() // unblocks io.Copy: the pipe is pollable
		<-copied
	}
	drain.Stop()

	text := clip(string(out.buf), out.n, s.o.MaxResult)
	var ee *exec.ExitError
	switch {
	case stopped != "":
		return Result{Output: text + "\n[" + stopped + "; the command and its process group were killed]", IsError: true}
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return Result{Output: text + fmt.Sprintf("\n[killed by signal %s]", ws.Signal()), IsError: true}
		}
		return Result{Output: text + fmt.Sprintf("\n[exit code %d]", ee.ExitCode()), IsError: true}
	case err != nil:
		return Result{Output: text + "\n[" + err.Error() + "]", IsError: true}
	}
	return Result{Output: text}
}
