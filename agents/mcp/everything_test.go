package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
)

// EverythingServer is where the npm package @modelcontextprotocol/server-everything is
// installed for the end-to-end tests (see .ci/run):
//
//	npm install --prefix agents/mcp/testdata/npm --no-save --no-audit --no-fund @modelcontextprotocol/server-everything@2026.8.31
//
// SUMMIT_MCP_EVERYTHING may name its dist/index.js elsewhere.
const EverythingServer = "testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// everything returns the path of the server's entry point, or skips the test when node or
// the package is missing, unless SUMMIT_E2E=1 (then it fails).
func everything(t *testing.T, rel string) string {
	t.Helper()
	path := os.Getenv("SUMMIT_MCP_EVERYTHING")
	if path == "" {
		path = rel
	}
	abs, _ := filepath.Abs(path)
	_, nodeErr := exec.LookPath("node")
	_, pkgErr := os.Stat(abs)
	if nodeErr != nil || pkgErr != nil {
		msg := "the MCP end-to-end test needs node and @modelcontextprotocol/server-everything at " + abs
		if os.Getenv("SUMMIT_E2E") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return abs
}

// The real reference server: its tools list, echo answers, an image is summarised.
func TestEverythingServer(t *testing.T) {
	index := everything(t, EverythingServer)
	m := newManager(t, map[string]provider.MCPServer{"everything": {Command: "node", Args: []string{index, "stdio"}}}, Options{})
	ctx := context.Background()
	tools, err := m.Tools(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Qualified)
	}
	if !slices.Contains(names, "mcp__everything__echo") || !slices.Contains(names, "mcp__everything__get-sum") {
		t.Fatalf("tools %v", names)
	}
	r, err := m.Call(ctx, "everything", "echo", `{"message":"hello from summit"}`)
	if err != nil || r.Output != "Echo: hello from summit" || r.IsError {
		t.Errorf("echo: %+v %v", r, err)
	}
	r, err = m.Call(ctx, "everything", "get-sum", `{"a": 2, "b": 40}`)
	if err != nil || !strings.Contains(r.Output, "42") {
		t.Errorf("get-sum: %+v %v", r, err)
	}
	r, err = m.Call(ctx, "everything", "get-tiny-image", `{}`)
	if err != nil || !strings.Contains(r.Output, "[image: image/png, ") {
		t.Errorf("get-tiny-image: %+v %v", r, err)
	}
	if r, err := m.Call(ctx, "everything", "echo", `{}`); err == nil && !r.IsError {
		t.Errorf("echo without its argument: %+v", r)
	}
}
