//go:build !linux

package tools

import "os/exec"

// confinedCommand runs name unconfined where Landlock does not exist.
func confinedCommand(_, _ []string, env []string, name string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	return cmd, nil
}

// ConfinementAvailable reports whether this system can confine a shell's writes.
func ConfinementAvailable() bool { return false }
