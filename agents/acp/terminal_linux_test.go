//go:build linux

package acp

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session/ttytest"
)

// An ACP agent process, confined or not, has no controlling terminal and cannot open /dev/tty,
// gets a variable the user names (PassEnv) and not one off the allow-list, although summit
// has a terminal: the test runs the agent from a helper process whose controlling terminal is
// a pty it opened (on the old code, Setpgid only, the agent inherited it).
func TestAgentHasNoTerminal(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_ACP_HELPER") != "" {
		return
	}
	for _, confine := range []string{"", "1"} {
		out := ttytest.Run(t, "TestAgentTerminalHelper", "SUMMIT_TEST_ACP_HELPER=1", "SUMMIT_TEST_ACP_CONFINE="+confine)
		if !strings.Contains(out, "agent tty_nr 0\n") || !strings.Contains(out, "agent devtty error") ||
			!strings.Contains(out, `agent env passed="yes" pat=""`) {
			t.Errorf("confine %q: the agent reached the terminal, or its environment is wrong:\n%s", confine, out)
		}
	}
}

// TestAgentTerminalHelper is TestAgentHasNoTerminal's helper (it does nothing on its own).
func TestAgentTerminalHelper(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_ACP_HELPER") == "" {
		return
	}
	ttytest.Self(t)
	c := newProbeCase(t)
	got, _ := c.run(t, os.Getenv("SUMMIT_TEST_ACP_CONFINE") != "")
	for _, k := range []string{"tty_nr", "devtty", "env"} {
		fmt.Printf("agent %s %s\n", k, got[k])
	}
}
