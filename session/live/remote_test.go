package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

// An agent.yaml that declares an endpoint the config's remotes do not name is never reached:
// the delegation fails saying what to add, and nothing is sent anywhere.
func TestRemoteEndpointNeedsConfig(t *testing.T) {
	h := newHarness(t)
	if err := os.MkdirAll(filepath.Join(h.ws, ".summit", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(h.ws, ".summit", "agents"), "far.yaml", `apiVersion: summit.io/v1
kind: Agent
metadata: {name: far, description: "served elsewhere"}
endpoint: "http://203.0.113.9:8787"
spec: {role: researcher}
`)
	noUserConfig(t)
	o := (&acpCase{harness: h}).live(nil, "/delegate look far away --agent-type far", "/wait sa-1")
	errs := o.find(session.TypeSubagentError, "sa-1")
	if len(errs) != 1 || !strings.Contains(errs[0].Data.(session.SubagentError).Error, "add `remotes: {far: {url: \"http://203.0.113.9:8787\"}}`") {
		t.Fatalf("errors: %+v", errs[0].Data)
	}
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeFailure {
		t.Errorf("stop: %+v", st)
	}
	if sa := o.state.Subagent("sa-1"); sa.Isolation != nil {
		t.Error("a remote agent got a worktree")
	}
}

// --inputs is for remote agents, and must be a JSON object.
func TestDelegateInputsChecked(t *testing.T) {
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("script_end")
	for line, want := range map[string]string{
		`/delegate fix it --agent-type builder --inputs '{"depth": 3}'`: "--inputs is for a remote agent",
	} {
		r, err := x.Submit(context.Background(), line)
		if err != nil || !r.Rejected || !strings.Contains(r.Error, want) {
			t.Errorf("%s: %+v %v", line, r, err)
		}
	}
	for _, bad := range []string{`[1]`, `{"a":1} {"b":2}`, `nope`, `null`} {
		if _, err := parseInputs(bad); err == nil {
			t.Errorf("parseInputs(%q) accepted", bad)
		}
	}
}
