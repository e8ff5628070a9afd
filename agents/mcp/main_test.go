package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
)

// serverBin is the test MCP server (testdata/server), built once for the package's tests.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "summit-mcp-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "server")
	if runtime.GOOS == "windows" {
		serverBin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", serverBin, "./testdata/server").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test MCP server: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testServer is the config of the test server with env.
func testServer(env map[string]string) provider.MCPServer {
	return provider.MCPServer{Command: serverBin, Env: env}
}
