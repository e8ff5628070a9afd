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

// A move on overload is a second ModelRouted with From: the fold counts it as a switch, so the
// model in use is the new one and the first route (its requested model, fallbacks, why)
// stays; an older recording's ModelSwitched for the same move reads the same way.
func TestModelRoutedMidRun(t *testing.T) {
	const why = "overloaded (HTTP 503) after 3 attempts: gemini: HTTP 503: UNAVAILABLE: The model is overloaded. Please try again later."
	for _, move := range []session.Data{
		session.ModelRouted{Provider: "gemini", Model: "gemini-2.5-pro", Why: why, From: "gemini/gemini-3-pro-preview"},
		session.ModelSwitched{FromProvider: "gemini", FromModel: "gemini-3-pro-preview", ToProvider: "gemini", ToModel: "gemini-2.5-pro", Reason: why},
	} {
		b := sessiontest.NewBuilder()
		b.Add("", session.SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/w", PermissionMode: "plan", Provider: "gemini"})
		b.Add("sa-1", session.SubagentSpawned{AgentType: "analyzer", AgentName: "analyzer", ParentSessionID: "s-test", ParentSessionRef: "s-test",
			PermissionMode: "plan", TaskDescription: "t", TimeoutS: 300})
		b.Add("sa-1", session.SubagentActive{InitialState: "running"})
		b.Add("sa-1", session.ModelRouted{Provider: "gemini", Model: "gemini-3-pro-preview", Why: "config route", Fallbacks: []string{"gemini/gemini-2.5-pro"}})
		b.Add("sa-1", move)
		st := &session.State{}
		for _, e := range b.Evs {
			if err := session.Apply(st, e); err != nil {
				t.Fatalf("%T: %v", move, err)
			}
		}
		sa := st.Subagent("sa-1")
		if sa.ModelInUse() != "gemini/gemini-2.5-pro" || sa.Route == nil || sa.Route.Model != "gemini-3-pro-preview" || sa.Route.Why != "config route" ||
			len(sa.Switches) != 1 || sa.Switches[0].FromModel != "gemini-3-pro-preview" || sa.Switches[0].Reason != why {
			t.Errorf("%T: in use %q, route %+v, switches %+v", move, sa.ModelInUse(), sa.Route, sa.Switches)
		}
		if got := st.Log[len(st.Log)-1].Text; got != "sa-1 switched to gemini/gemini-2.5-pro: "+why {
			t.Errorf("%T: log %q", move, got)
		}
	}
}
