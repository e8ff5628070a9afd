//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

func setGroup(*exec.Cmd) {}

// signalGroup kills the process only: there are no process groups to signal here.
func signalGroup(pid int, kill bool) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
