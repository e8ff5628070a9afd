package render

import (
	"reflect"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

func TestMetrics(t *testing.T) {
	m := ComputeMetrics(sessiontest.Fold(t, sessiontest.FullSession()))
	checks := []struct {
		name      string
		got, want any
	}{
		{"spawns", m.Spawns, 4},
		{"stopped", m.Stopped, 4},
		{"succeeded", m.Succeeded, 2},
		{"success rate", m.SuccessRate, 0.5},
		{"timeouts", m.Timeouts, 1},
		{"retries", m.Retries, 1},
		{"cancellations", m.Cancellations, 1},
		{"permission requests", m.PermissionRequests, 2},
		{"granted", m.PermissionsGranted, 1},
		{"denied", m.PermissionsDenied, 1},
		{"conflict rate", m.ConflictRate, 1.0},
		{"conflicts unresolved", m.ConflictsUnresolved, 0},
		{"handoffs", m.Handoffs, 2},
		{"commands", m.Commands, 1},
		{"rejected", m.CommandsRejected, 1},
		{"events", m.Events, len(sessiontest.FullSession())},
		{"TranscriptEvent count", m.EventsByType["TranscriptEvent"], 11},
		{"builder avg", m.ByAgentType[1], AgentTypeMetrics{AgentType: "builder", Spawned: 2, Stopped: 2, Succeeded: 1, SuccessRate: 0.5, AvgCompletionMS: 151000}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	var b strings.Builder
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"success rate                 50.0% (2 of 4 stopped)", "convergence conflict rate    100.0% (1 of 1 convergences)", "builder"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text metrics lack %q:\n%s", want, b.String())
		}
	}
}

// TestMetricsOfCountingFold: the metrics of a counting state (State.SetCountOnly, as inspect
// folds) are those of the full fold, on the fixture session and random ones full of handoffs,
// notes, denials, permissions and errors.
func TestMetricsOfCountingFold(t *testing.T) {
	sessions := [][]session.Event{sessiontest.FullSession()}
	for seed := range uint64(10) {
		sessions = append(sessions, genSession(200+seed, 2000))
	}
	for i, evs := range sessions {
		st := &session.State{}
		st.SetCountOnly()
		for _, e := range evs {
			if err := session.Apply(st, e); err != nil {
				t.Fatalf("session %d: %v", i, err)
			}
		}
		if got, want := ComputeMetrics(st), ComputeMetrics(fold(t, evs)); !reflect.DeepEqual(got, want) {
			t.Errorf("session %d: metrics of the counting fold\n%+v\nwant\n%+v", i, got, want)
		}
	}
}
