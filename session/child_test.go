package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
	"github.com/summit-dev/summit/session/render"
)

// A child (an external agent's own subagent) names a running parent; only a child may end
// disconnected; the tree lists children depth first under their parents.
func TestChildSubagents(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	seq := uint64(0)
	ev := func(sub string, d session.Data) session.Event {
		seq++
		e := session.New(sub, d)
		e.Seq, e.TS, e.SessionID = seq, t0.Add(time.Duration(seq)*time.Second), "s-c"
		return e
	}
	spawn := func(id, parent string) session.Event {
		return ev(id, session.SubagentSpawned{AgentType: "a", AgentName: id, TaskDescription: "t", TimeoutS: 60, ParentSubagentID: parent})
	}
	s := sessiontest.Fold(t, []session.Event{
		ev("", session.SessionStarted{Schema: 1, Workspace: "/w"}),
		spawn("sa-1", ""), ev("sa-1", session.SubagentActive{InitialState: "running"}),
		spawn("sa-2", ""),
		spawn("sa-3", "sa-1"), spawn("sa-4", "sa-3"), spawn("sa-5", "sa-1"),
		ev("sa-4", session.SubagentStop{Outcome: session.OutcomeDisconnected, ArtifactPaths: []string{}}),
	})
	var order []string
	for _, n := range s.Tree() {
		order = append(order, strings.Repeat(".", n.Depth)+n.ID)
	}
	if got := strings.Join(order, " "); got != "sa-1 .sa-3 ..sa-4 .sa-5 sa-2" {
		t.Errorf("tree order %s", got)
	}
	if sa := s.Subagent("sa-4"); sa.Status != session.StatusDisconnected || !sa.Terminal() || render.StatusGlyph(sa) != "◌" {
		t.Errorf("sa-4: %s", sa.Status)
	}
	for name, e := range map[string]session.Event{
		"unknown parent":         spawn("sa-6", "sa-9"),
		"stopped parent":         spawn("sa-6", "sa-4"),
		"disconnected non-child": ev("sa-1", session.SubagentStop{Outcome: session.OutcomeDisconnected, ArtifactPaths: []string{}}),
	} {
		c := s.Clone()
		e.Seq = seq + 1
		if err := session.Apply(c, e); err == nil {
			t.Errorf("%s: applied", name)
		}
	}
}
