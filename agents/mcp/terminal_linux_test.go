//go:build linux

package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/summit-dev/summit/agents/provider"
)

// A stdio MCP server has no controlling terminal and the allow-list environment, although
// summit has a terminal: the test starts the server from a helper process whose controlling
// terminal is a pty it opened (on the old code, Setpgid only, the server inherited it, and
// every variable of summit's environment).
func TestServerHasNoTerminal(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_MCP_HELPER") != "" {
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
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerTerminalHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "SUMMIT_TEST_MCP_HELPER=1", "GITHUB_PAT=ghp-mcp-secret", "MY_PASSED=yes")
	cmd.Stdin = s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "helper tty_nr=") || strings.Contains(string(out), "helper tty_nr=0\n") {
		t.Fatalf("the helper has no controlling terminal: the test proves nothing\n%s", out)
	}
	if !strings.Contains(string(out), "server tty_nr=0\n") {
		t.Errorf("the server has the terminal:\n%s", out)
	}
	if strings.Contains(string(out), "ghp-mcp-secret") || !strings.Contains(string(out), "MY_PASSED=yes") || !strings.Contains(string(out), "PATH=") {
		t.Errorf("the server's environment is not the allow-list with the names passed:\n%s", out)
	}
}

// TestServerTerminalHelper is TestServerHasNoTerminal's helper (it does nothing on its own).
func TestServerTerminalHelper(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_MCP_HELPER") == "" {
		return
	}
	fmt.Printf("helper tty_nr=%d\n", ttyNr(t, os.Getpid()))
	pidfile := filepath.Join(t.TempDir(), "pids")
	m := NewManager(map[string]provider.MCPServer{"t": testServer(map[string]string{"MCP_TEST_PIDFILE": pidfile})},
		Options{Dir: t.TempDir(), PassEnv: []string{"MY_PASSED"}})
	defer m.Close()
	if _, err := m.Call(context.Background(), "t", "echo", `{"text":"x"}`); err != nil {
		t.Fatal(err)
	}
	ps := pids(t, pidfile)
	if len(ps) != 1 {
		t.Fatalf("pids %v", ps)
	}
	fmt.Printf("server tty_nr=%d\n", ttyNr(t, ps[0]))
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", ps[0]))
	fmt.Println(strings.ReplaceAll(string(env), "\x00", "\n"))
}

func ttyNr(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, _ := strconv.Atoi(f[4])
	return n
}
