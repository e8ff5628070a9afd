//go:build linux

package acp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// An ACP agent process, confined or not, has no controlling terminal and cannot open /dev/tty,
// gets a variable the user names (PassEnv) and not one off the allow-list, although summit
// has a terminal: the test
// runs the agent from a helper process whose controlling terminal is a pty it opened (on the
// old code, Setpgid only, the agent inherited it).
func TestAgentHasNoTerminal(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_ACP_HELPER") != "" {
		return
	}
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no /dev/ptmx")
	}
	defer m.Close()
	n, _ := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go io.Copy(io.Discard, m)
	for _, confine := range []string{"", "1"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAgentTerminalHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "SUMMIT_TEST_ACP_HELPER=1", "SUMMIT_TEST_ACP_CONFINE="+confine)
		cmd.Stdin = s
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(string(out), "helper tty_nr=") || strings.Contains(string(out), "helper tty_nr=0\n") {
			t.Fatalf("the helper has no controlling terminal: the test proves nothing\n%s", out)
		}
		if !strings.Contains(string(out), "agent tty_nr 0\n") || !strings.Contains(string(out), "agent devtty error") ||
			!strings.Contains(string(out), `agent env passed="yes" pat=""`) {
			t.Errorf("confine %q: the agent reached the terminal, or its environment is wrong:\n%s", confine, out)
		}
	}
}

// TestAgentTerminalHelper is TestAgentHasNoTerminal's helper (it does nothing on its own).
func TestAgentTerminalHelper(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_ACP_HELPER") == "" {
		return
	}
	b, _ := os.ReadFile("/proc/self/stat")
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	fmt.Printf("helper tty_nr=%s\n", f[4])
	c := newProbeCase(t)
	got, _ := c.run(t, os.Getenv("SUMMIT_TEST_ACP_CONFINE") != "")
	for _, k := range []string{"tty_nr", "devtty", "env"} {
		fmt.Printf("agent %s %s\n", k, got[k])
	}
}
