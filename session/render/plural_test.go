package render

import (
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

// Counts in the metrics and the tree agree with their number ("1 request", "1 retry").
func TestCountsArePlural(t *testing.T) {
	var b strings.Builder
	if err := (Metrics{PermissionRequests: 1, PermissionsGranted: 1}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "1 request, 1 granted") || strings.Contains(out, "1 requests") {
		t.Errorf("metrics:\n%s", out)
	}
	st := &session.State{}
	sa := &session.Subagent{ID: "sa-1", AgentType: "builder", Status: "running", Retries: 1}
	st.Subagents = append(st.Subagents, sa)
	if out := Render(st); !strings.Contains(out, "· 1 retry") || strings.Contains(out, "1 retries") {
		t.Errorf("tree:\n%s", out)
	}
}
