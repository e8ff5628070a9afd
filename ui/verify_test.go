package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// A tester's capsule claims its tests passed; summit measured otherwise. The tree row shows
// summit's measurement (✗), and the review lists the claim as a claim and the measurement as a
// measurement, never one for the other. A /diff panel colours its + and - lines.
func TestClaimAndMeasurementApart(t *testing.T) {
	b := &fakeBackend{replies: map[string]Reply{"/diff sa-1": {Output: "main.go modified +1 −1\n--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-old line\n+new line\n"}}}
	m, _ := newModel(t, 160, 48, b)
	at, seq := t0, uint64(0)
	ev := func(sub string, d session.Data) session.Event {
		seq++
		at = at.Add(time.Second)
		e := session.New(sub, d)
		e.Seq, e.TS, e.SessionID = seq, at, "s-ui"
		return e
	}
	claim := &protocols.Capsule{Summary: "tests pass", Verification: &protocols.Verification{Status: "passed"}}
	m.Update(EventsMsg{
		ev("", session.SessionStarted{Schema: 1, Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script"}),
		ev("sa-1", session.SubagentSpawned{AgentType: "builder", AgentName: "builder", TaskDescription: "a", TimeoutS: 60}),
		ev("sa-1", session.SubagentActive{InitialState: "running"}),
		ev("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}, Capsule: claim}),
		ev("sa-2", session.SubagentSpawned{AgentType: "builder", AgentName: "builder", TaskDescription: "b", TimeoutS: 60}),
		ev("sa-2", session.SubagentActive{InitialState: "running"}),
		ev("sa-2", session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}}),
		ev("sa-1", session.VerifyRan{Target: "sa-1", Command: "go test ./...", Source: "flag", ExitCode: 1, Outcome: session.VerifyFailed,
			DurationMS: 3100, Output: "--- FAIL: TestTotal"}),
		ev("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1", "sa-2"}, Strategy: "merge", ConflictResolution: "manual", OutputFormat: "delta_batch"}),
		ev("", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk", File: "main.go",
			Sides: []session.ConflictSide{{SubagentID: "sa-1", Value: "+a"}, {SubagentID: "sa-2", Value: "+b"}}, Choices: []string{"sa-1", "sa-2"}}),
	})
	view := ansi.Strip(m.View().Content)
	if !strings.Contains(view, "verify ✗") {
		t.Errorf("the tree row lacks summit's measurement:\n%s", view)
	}
	body := ansi.Strip(strings.Join(m.reviewBody(m.st.Conflict("cf-1"), 150, false), "\n"))
	for _, want := range []string{"sa-1 claims: passed (the agent's own check)", "sa-1 measured: ✗ `go test ./...` exit 1 in 3.1s"} {
		if !strings.Contains(body, want) {
			t.Errorf("the review lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "measured: ✓") || strings.Contains(body, "claims: failed") {
		t.Errorf("claim and measurement confused:\n%s", body)
	}
	// sa-1's transcript ends with summit's measurement, then its capsule with the claim.
	m.sel = "sa-1"
	tv := ansi.Strip(m.View().Content)
	for _, want := range []string{"measured: ✗ `go test ./...` exit 1 in 3.1s", "verification claims: passed (the agent's own check)"} {
		if !strings.Contains(tv, want) {
			t.Errorf("sa-1's transcript lacks %q:\n%s", want, tv)
		}
	}
	typeText(m, "/diff sa-1")
	press(m, "enter")
	raw := m.Render()
	if m.sty.add.Render("x") == "x" {
		t.Fatal("the add style has no colour: the check below would prove nothing")
	}
	if !strings.Contains(raw, m.sty.add.Render("+new line")) || !strings.Contains(raw, m.sty.del.Render("-old line")) {
		t.Errorf("the /diff panel is not coloured:\n%q", raw)
	}
}
