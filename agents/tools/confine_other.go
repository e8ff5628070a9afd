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

// ConfinedCommand is name args run as the sandbox's shell is: unconfined where Landlock does
// not exist (see the Linux version for what it confines there).
func (s *Sandbox) ConfinedCommand(rw, env []string, name string, args ...string) (*exec.Cmd, error) {
	return confinedCommand(append(s.writable(), rw...), s.o.Hidden, env, name, args...)
}

// ConfinesWrites reports whether the sandbox confines what its shell and ConfinedCommand run
// (Options.ConfineWrites); whether the kernel can is ConfinementAvailable.
func (s *Sandbox) ConfinesWrites() bool { return s.o.ConfineWrites }
