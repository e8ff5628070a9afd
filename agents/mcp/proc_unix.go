//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setGroup starts the command as the leader of a new process group, unless its builder
// (tools.GuardedCommand) already gave it a session of its own, which is one.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
	}
}

// signalGroup sends SIGTERM, or SIGKILL when kill, to the process group led by pid.
func signalGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pid, sig)
}
