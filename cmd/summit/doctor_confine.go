package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// doctorConfinement reports how this system confines what summit starts, probed for real: a
// jailed process (as a subagent's shell) and a guarded one (as a hook) each try TIOCSTI on a
// pseudo-terminal summit opens, open it by path and open /dev/tty. It returns the problems:
// no Landlock (subagents' shells are refused), TIOCSTI or the terminal reachable.
func doctorConfinement(w io.Writer) int {
	fmt.Fprintln(w, "confinement:")
	if runtime.GOOS != "linux" {
		fmt.Fprintf(w, "  ✗ %s has no Landlock: subagents' shells are refused unless the session runs with --allow-unconfined-shell\n", runtime.GOOS)
		return 1
	}
	problems := 0
	if abi := tools.LandlockABI(); abi > 0 {
		fmt.Fprintf(w, "  ✓ Landlock ABI %d\n", abi)
	} else {
		problems++
		fmt.Fprintln(w, "  ✗ no Landlock (Linux 5.13+, landlock in the lsm= boot list): subagents' shells are refused unless the session runs with --allow-unconfined-shell")
	}
	jail, err := tools.ProbeConfinement(true)
	if err != nil {
		problems++
		fmt.Fprintf(w, "  ✗ a confined process could not be started: %s\n", session.Sanitize(err.Error()))
		return problems
	}
	guard, err := tools.ProbeConfinement(false)
	if err != nil {
		problems++
		fmt.Fprintf(w, "  ✗ a guarded process could not be started: %s\n", session.Sanitize(err.Error()))
		return problems
	}
	ns := "none (the kernel refused them): Landlock alone"
	if jail.Namespaces {
		ns = "mount, PID, IPC and network"
		if !jail.PIDNamespace || !jail.PrivateDev {
			ns += fmt.Sprintf(" (own /proc %t, own /dev %t)", jail.PIDNamespace, jail.PrivateDev)
		}
	}
	fmt.Fprintf(w, "  · namespaces of a subagent's shell: %s\n", ns)
	switch jail.Network {
	case "namespace":
		fmt.Fprintln(w, "  ✓ network confinement: namespace (no network, not even the host's loopback, unless the agent may fetch)")
	case "landlock-tcp":
		fmt.Fprintln(w, "  ✓ network confinement: landlock tcp (TCP connect and bind refused; UDP is not covered)")
	default:
		problems++
		fmt.Fprintf(w, "  ✗ network confinement: none (%s)\n", session.Sanitize(jail.Network))
	}
	for _, p := range []struct {
		what string
		r    tools.ConfinementReport
	}{{"subagent's shell", jail}, {"hook or MCP server", guard}} {
		if p.r.TIOCSTIBlocked && p.r.TTYBlocked && p.r.PtyBlocked {
			fmt.Fprintf(w, "  ✓ TIOCSTI blocked, no terminal reachable (%s)\n", p.what)
			continue
		}
		problems++
		fmt.Fprintf(w, "  ✗ %s: TIOCSTI blocked %t, /dev/tty blocked %t, a pty by path blocked %t\n", p.what, p.r.TIOCSTIBlocked, p.r.TTYBlocked, p.r.PtyBlocked)
	}
	if tools.Dumpable() {
		problems++
		fmt.Fprintln(w, "  ✗ summit is dumpable: PR_SET_DUMPABLE could not be turned off")
	} else {
		fmt.Fprintln(w, "  ✓ PR_SET_DUMPABLE 0: summit's memory and environment are closed to other processes")
	}
	return problems
}
