package render

import (
	"strings"
	"testing"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// inspect keeps an agent's claimed verification and summit's measurement apart: a tester
// that claims its tests passed, measured failing by summit, shows both, each labelled.
func TestMetricsClaimsAndMeasurements(t *testing.T) {
	evs := sessiontest.FullSession()
	s := sessiontest.Fold(t, evs)
	m := ComputeMetrics(s)
	if m.VerifyRuns != 2 || m.VerifyFailed != 1 {
		t.Errorf("verify runs %d failed %d", m.VerifyRuns, m.VerifyFailed)
	}
	// A claim on top: sa-2's capsule says failed; summit measured it passing. Both show, labelled.
	s.Subagent("sa-2").Capsule = &protocols.Capsule{Summary: "done", Verification: &protocols.Verification{Status: "failed"}}
	m = ComputeMetrics(s)
	var text strings.Builder
	m.WriteText(&text)
	out := text.String()
	for _, want := range []string{"sa-2     claims: failed", "measured: ✓ `go vet ./...` exit 0 in 0.9s",
		"cv-1     claims: nothing", "measured: ✗ `go test ./...` exit 1 in 3.1s (forced)"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	for _, v := range m.Verifications {
		if v.ID == "sa-2" && (v.Claimed != "failed" || v.Measured == nil || v.Measured.Outcome != session.VerifyPassed) {
			t.Errorf("sa-2: %+v", v)
		}
	}
}
