//go:build !linux

package tools

import (
	"os/exec"
	"syscall"
)

// confinement is empty where Landlock does not exist: nothing confines a command but its
// session of its own (see the Linux version).
type confinement struct{}

func (s *Sandbox) jailSpec([]string, bool) confinement { return confinement{} }

// confinedCommand runs name in a session of its own, unconfined.
func confinedCommand(_ confinement, env []string, name string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, nil
}

// GuardedCommand is name args in a session of its own, with no controlling terminal (see the
// Linux version for the rest of its guard).
func GuardedCommand(env []string, name string, args ...string) (*exec.Cmd, error) {
	return confinedCommand(confinement{}, env, name, args...)
}

// LandlockABI is 0: this system has no Landlock.
func LandlockABI() int { return 0 }

// ConfinementAvailable reports whether this system can confine a shell's writes.
func ConfinementAvailable() bool { return false }

// ConfinedCommand is name args run as the sandbox's shell is: unconfined where Landlock does
// not exist (see the Linux version for what it confines there).
func (s *Sandbox) ConfinedCommand(rw, env []string, name string, args ...string) (*exec.Cmd, error) {
	return confinedCommand(confinement{}, env, name, args...)
}

// ConfinedCommandNet is ConfinedCommand (the network is not confined here).
func (s *Sandbox) ConfinedCommandNet(rw, env []string, network bool, name string, args ...string) (*exec.Cmd, error) {
	return confinedCommand(confinement{}, env, name, args...)
}

// ConfinesWrites reports whether the sandbox confines what its shell and ConfinedCommand run
// (Options.ConfineWrites); whether the kernel can is ConfinementAvailable.
func (s *Sandbox) ConfinesWrites() bool { return s.o.ConfineWrites }

// ConfinementReport is what ProbeConfinement found (see the Linux version).
type ConfinementReport struct {
	LandlockABI                            int
	Namespaces, PIDNamespace, PrivateDev   bool
	Network                                string
	TIOCSTIBlocked, PtyBlocked, TTYBlocked bool
	Output                                 string
}

// ProbeConfinement has nothing to probe where there is no confinement.
func ProbeConfinement(bool) (ConfinementReport, error) {
	return ConfinementReport{Network: "none"}, nil
}

// HardenProcess does nothing here.
func HardenProcess() error { return nil }

// Dumpable is true: nothing here turns it off.
func Dumpable() bool { return true }
