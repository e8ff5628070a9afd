//go:build linux

package mcp

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
)

// A server run for one subagent (a grant with a tool that may write) starts in that
// subagent's jail (Manager.Confine with its Sandbox.ConfinedCommandNet): it writes in the
// worktree and nowhere else (not the main workspace, not elsewhere in the temp dir), cannot
// read the workspace's .summit/, and reaches no 127.0.0.1 listener of the host unless its
// config says network: true (or its subagent's jail has the network), and cannot signal summit. On the old code the server got the terminal guard only: every
// one of these succeeded.
func TestWritingServerIsJailed(t *testing.T) {
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: nothing confines writes")
	}
	ws, wt, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".summit"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(ws, ".summit", "secret")
	if err := os.WriteFile(secret, []byte("summit's own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "plain.txt"), []byte("plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	sb, err := tools.New(wt, tools.Options{ConfineWrites: true, Hidden: []string{filepath.Join(ws, ".summit")}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ctx := context.Background()
	// startIn starts the server for the subagent whose jail is sb's, with network: network.
	startIn := func(sb *tools.Sandbox, network bool) *Toolset {
		t.Helper()
		c := testServer(map[string]string{"MCP_TEST_PROBE": "1"})
		c.Network = network
		m := newManager(t, map[string]provider.MCPServer{"t": c}, Options{Dir: ws})
		m.Confine(wt, sb.ConfinedCommandNet)
		d := def([]string{"mcp__t__*"}, nil)
		p, err := Resolve(m, d, agents.Request{SessionTools: sessionTools})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := m.ToolsetIn(ctx, d, &p, wt)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	ts := startIn(sb, false)
	if r := ts.Call(ctx, "mcp__t__write", `{"path": "in.txt", "text": "inside\n"}`); r.IsError {
		t.Errorf("a write in the worktree failed: %s", r.Output)
	}
	if b, err := os.ReadFile(filepath.Join(wt, "in.txt")); err != nil || string(b) != "inside\n" {
		t.Errorf("the worktree's in.txt: %q %v", b, err)
	}
	for _, out := range []string{filepath.Join(ws, "escape.txt"), filepath.Join(elsewhere, "escape.txt")} {
		r := ts.Call(ctx, "mcp__t__write", `{"path": "`+out+`", "text": "escaped\n"}`)
		if !r.IsError {
			t.Errorf("the jailed server wrote %s: %s", out, r.Output)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s exists: the server wrote outside its worktree", out)
		}
	}
	if r := ts.Call(ctx, "mcp__t__read", `{"path": "`+filepath.Join(ws, "plain.txt")+`"}`); r.IsError || r.Output != "read: plain\n" {
		t.Errorf("reading the workspace (allowed): %+v", r)
	}
	if r := ts.Call(ctx, "mcp__t__read", `{"path": "`+secret+`"}`); !r.IsError || strings.Contains(r.Output, "summit's own") {
		t.Errorf("the jailed server read .summit/: %+v", r)
	}
	if r := ts.Call(ctx, "mcp__t__signal", fmt.Sprintf(`{"pid": %d}`, os.Getpid())); !r.IsError {
		t.Errorf("the jailed server could signal summit (pid %d): %s", os.Getpid(), r.Output)
	}
	addr := l.Addr().String()
	if r := ts.Call(ctx, "mcp__t__dial", `{"address": "`+addr+`"}`); !r.IsError {
		t.Errorf("the jailed server without network: true reached the host's %s: %s", addr, r.Output)
	}
	// network: true in its config gives it the network (and nothing else).
	ts = startIn(sb, true)
	if r := ts.Call(ctx, "mcp__t__dial", `{"address": "`+addr+`"}`); r.IsError || r.Output != "connected to "+addr {
		t.Errorf("with network: true: %+v", r)
	}
	if r := ts.Call(ctx, "mcp__t__read", `{"path": "`+secret+`"}`); !r.IsError {
		t.Errorf("with network: true the server read .summit/: %+v", r)
	}
	// A subagent whose jail has the network (it may web_fetch) gives it to its servers too.
	sbNet, err := tools.New(wt, tools.Options{ConfineWrites: true, Network: true, Hidden: []string{filepath.Join(ws, ".summit")}})
	if err != nil {
		t.Fatal(err)
	}
	defer sbNet.Close()
	ts = startIn(sbNet, false)
	if r := ts.Call(ctx, "mcp__t__dial", `{"address": "`+addr+`"}`); r.IsError {
		t.Errorf("in a jail with the network: %+v", r)
	}
}
