package live

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// /trust answers the workbench's trust item: it calls TrustWorkspace (the user's store) and
// records WorkspaceTrusted, once; a headless run (no TrustWorkspace), a trusted workspace and
// a failed recording refuse it, and nothing is recorded for them.
func TestTrustCommand(t *testing.T) {
	items := []string{"mcp_servers.fs: runs ./fs.sh"}
	start := func(status string, record func() error) *Orchestrator {
		h := newHarness(t)
		h.tweak = func(o *Options) {
			o.WorkspaceTrust, o.TrustItems, o.UntrustedIgnored, o.TrustWorkspace = status, items, []string{"mcp_servers.fs"}, record
		}
		return h.start(NewSimClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
	}
	submit := func(x *Orchestrator) Reply {
		r, err := x.Submit(context.Background(), "/trust")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	recorded := 0
	x := start("untrusted", func() error { recorded++; return nil })
	if st := x.Snapshot(); !st.TrustPending() {
		t.Fatal("the trust item is not pending")
	}
	if r, _ := x.Submit(context.Background(), "/status"); !strings.Contains(r.Output, "⚠ workspace not trusted, ignored: mcp_servers.fs (trust it in the inbox, or summit trust)") {
		t.Errorf("/status does not name what is ignored:\n%s", r.Output)
	}
	if r := submit(x); r.Rejected || !strings.Contains(r.Output, "restart summit") || recorded != 1 {
		t.Fatalf("/trust: %+v (recorded %d)", r, recorded)
	}
	st := x.Snapshot()
	if st.TrustPending() || st.Trusted == nil || st.Trusted.Applied {
		t.Errorf("after /trust: %+v", st.Trusted)
	}
	if r := submit(x); !r.Rejected || !strings.Contains(r.Error, "trusted earlier in this session") || recorded != 1 {
		t.Errorf("a second /trust: %+v", r)
	}
	x.Close("quit")

	for _, c := range []struct {
		status string
		record func() error
		want   string
	}{
		{"untrusted", nil, "pass --trust-workspace"},
		{"trusted", func() error { return nil }, "nothing to trust: the workspace is trusted"},
		{"untrusted", func() error { return errors.New("the files changed") }, "the files changed"},
	} {
		x := start(c.status, c.record)
		if r := submit(x); !r.Rejected || !strings.Contains(r.Error, c.want) {
			t.Errorf("%s: %+v", c.want, r)
		}
		for _, e := range x.Snapshot().Log {
			if strings.Contains(e.Text, "workspace trusted") {
				t.Errorf("%s: recorded %q", c.want, e.Text)
			}
		}
		x.Close("quit")
	}
	_ = session.TrustItem
}

// A workspace agent file that takes a built-in's name never does so silently: /agents says
// which file runs and what it shadows, and SubagentSpawned records it.
func TestAgentsSaysWhatShadows(t *testing.T) {
	h := newHarness(t)
	if err := os.MkdirAll(filepath.Join(h.ws, ".summit", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(h.ws, ".summit", "agents"), "general.md", "---\nname: general\ndescription: the repository's own general\n---\nBe general.\n")
	x := h.start(NewSimClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
	defer x.Close("quit")
	r, err := x.Submit(context.Background(), "/agents")
	if err != nil || !strings.Contains(r.Output, "↳ runs workspace .summit/agents/general.md, shadows built-in") {
		t.Errorf("/agents:\n%s %v", r.Output, err)
	}
	def, _ := x.o.Catalogue.Get("general")
	if sh := x.shadowing(def); sh != "workspace .summit/agents/general.md, shadows built-in" {
		t.Errorf("agent_shadows %q", sh)
	}
}
