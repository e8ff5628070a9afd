package live

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// /agents lists the external ACP agents too (acp_agents, and built-ins on PATH), so a person
// sees every --agent-type they can delegate to.
func TestAgentsListsACPAgents(t *testing.T) {
	h := newHarness(t)
	os.MkdirAll(filepath.Join(h.ws, ".summit"), 0o700)
	write(t, filepath.Join(h.ws, ".summit"), "config.yaml", "acp_agents:\n  ext-agent: {command: /bin/true, args: [--acp]}\n")
	x := h.start(NewSimClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
	defer x.Close("quit")
	r, err := x.Submit(context.Background(), "/agents")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ext-agent\tacp\tsession's\texternal agent over ACP: /bin/true --acp`).MatchString(r.Output) ||
		!regexp.MustCompile(`(?m)^builder\t`).MatchString(r.Output) {
		t.Errorf("/agents:\n%s", r.Output)
	}
}
