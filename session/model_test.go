package session_test

import (
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// The fold keeps where a subagent's model requests go: the route, then each switch to a
// fallback; the log says both.
func TestModelRoutedAndSwitched(t *testing.T) {
	st := &session.State{}
	for _, e := range sessiontest.FullSession() {
		if err := session.Apply(st, e); err != nil {
			t.Fatal(err)
		}
	}
	sa := st.Subagent("sa-1")
	if sa.Route == nil || sa.Route.Requested != "gemini-3-pro-preview" || len(sa.Switches) != 1 || sa.ModelInUse() != "claude/claude-haiku-4-5" {
		t.Fatalf("route %+v, switches %+v, in use %q", sa.Route, sa.Switches, sa.ModelInUse())
	}
	if st.Subagent("sa-2").ModelInUse() != "" {
		t.Error("a subagent on the tapes has a model")
	}
	var log []string
	for _, it := range st.Log {
		if it.Kind == "model" {
			log = append(log, it.Text)
		}
	}
	if len(log) != 2 || !strings.HasPrefix(log[0], "sa-1 runs on claude/claude-sonnet-4-5: gemini-3-pro-preview is a gemini model") ||
		!strings.HasPrefix(log[1], "sa-1 switched to claude/claude-haiku-4-5: claude: HTTP 404") {
		t.Errorf("log: %q", log)
	}
	c := st.Clone()
	c.Subagent("sa-1").Switches[0].ToModel = "x"
	if sa.Switches[0].ToModel != "claude-haiku-4-5" {
		t.Error("Clone shares the switches")
	}
}
