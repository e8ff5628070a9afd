//go:build linux

package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session/ttytest"
)

// A stdio MCP server has no controlling terminal and the allow-list environment, although
// summit has a terminal: the test starts the server from a helper process whose controlling
// terminal is a pty it opened (on the old code, Setpgid only, the server inherited it, and
// every variable of summit's environment).
func TestServerHasNoTerminal(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_MCP_HELPER") != "" {
		return
	}
	out := ttytest.Run(t, "TestServerTerminalHelper", "SUMMIT_TEST_MCP_HELPER=1", "GITHUB_PAT=ghp-mcp-secret", "MY_PASSED=yes")
	if !strings.Contains(out, "server tty_nr=0\n") {
		t.Errorf("the server has the terminal:\n%s", out)
	}
	if strings.Contains(out, "ghp-mcp-secret") || !strings.Contains(out, "MY_PASSED=yes") || !strings.Contains(out, "PATH=") {
		t.Errorf("the server's environment is not the allow-list with the names passed:\n%s", out)
	}
}

// TestServerTerminalHelper is TestServerHasNoTerminal's helper (it does nothing on its own).
func TestServerTerminalHelper(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_MCP_HELPER") == "" {
		return
	}
	ttytest.Self(t)
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
	fmt.Printf("server tty_nr=%d\n", ttytest.TTYNr(t, ps[0]))
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", ps[0]))
	fmt.Println(strings.ReplaceAll(string(env), "\x00", "\n"))
}
