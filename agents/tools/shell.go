package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Grace periods of run_shell_command. Variables, so tests can shorten them.
var (
	killGrace = 2 * time.Second        // SIGTERM to SIGKILL
	drainWait = 500 * time.Millisecond // output still open after the group is gone
)

// shellEnv is Environ reduced to the allow-list (AllowEnv) and the user's PassEnv.
func (s *Sandbox) shellEnv() []string { return AllowEnv(s.o.Environ, s.o.PassEnv) }

// unconfinedRefusal is the message of a shell refused because its confinement cannot be had.
const unconfinedRefusal = "run_shell_command: refused: this subagent's shell must be confined to its worktree, " +
	"and this system has no Landlock (Linux 5.13 or later with landlock in the lsm= boot list), so its commands " +
	"could write anywhere you can, read .summit/ and reach the network. To run it unconfined anyway, start the " +
	"session with --allow-unconfined-shell"

// shellTool runs bash -c in the root. Invariants: the command runs in a session and process
// group of its own, with no controlling terminal, stdin from /dev/null and its output on a
// pipe, jailed (ConfineWrites) or terminal-guarded (see confinement); when the call returns
// that group has been sent SIGKILL, whether the command finished, timed out or was
// cancelled, so no child it started outlives the call (a jailed command runs in a PID
// namespace of its own, which ends with it: even a child that left the group with setsid
// goes; an unjailed one that did is beyond reach, and its output is no longer read). Output is read
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
	if s.o.ConfineWrites && !ConfinementAvailable() && !s.o.AllowUnconfined {
		return errResult("%s", unconfinedRefusal)
	}
	var cmd *exec.Cmd
	if s.o.ConfineWrites {
		// Its own temp dir (TMPDIR): the shared one may hold the workspace itself.
		tmp, err := os.MkdirTemp("", "summit-shell-")
		if err != nil {
			return errResult("run_shell_command: %v", err)
		}
		defer os.RemoveAll(tmp)
		cmd, err = confinedCommand(s.jailSpec([]string{tmp}, s.o.Network), s.privateEnv(setEnv(s.shellEnv(), "TMPDIR="+tmp)), "bash", "-c", command)
		if err != nil {
			return errResult("run_shell_command: %v", err)
		}
	} else if cmd, err = GuardedCommand(s.shellEnv(), "bash", "-c", command); err != nil {
		return errResult("run_shell_command: %v", err)
	}
	cmd.Dir = s.root
	// stdin stays nil: /dev/null. confinedCommand set Setsid: a session of its own, so no
	// controlling terminal (/dev/tty fails with ENXIO), and a process group named by its pid.
	cmd.Stdout, cmd.Stderr = pw, pw
	err = cmd.Start()
	pw.Close() // only the command holds the write end now
	if err != nil {
		return errResult("run_shell_command: %v", err)
	}
	pgid := cmd.Process.Pid // Setsid: the group is named after its leader's pid

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
