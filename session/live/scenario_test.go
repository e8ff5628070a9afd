package live

import (
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// TestDelegateAllTypes: four types in parallel; every lifecycle event carries its fields, the
// recording is gap-free, replays to the same rendering, and a second run gives the same events
// apart from ts.
func TestDelegateAllTypes(t *testing.T) {
	h := newHarness(t)
	script := `# four types at once
/delegate "change the greeting" --agent-type builder
/delegate "list the tests" --agent-type tester
/delegate find markers --agent-type analyzer --timeout 60
/delegate gather docs --agent-type retriever
a note for the log
/wait sa-1 sa-2 sa-3 sa-4
`
	o := h.run(script)
	if o.exit != ExitOK {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	checkSeq(t, o.events)
	for i, typ := range []string{"builder", "tester", "analyzer", "retriever"} {
		id := "sa-" + string(rune('1'+i))
		sp := o.find(session.TypeSubagentSpawned, id)[0].Data.(session.SubagentSpawned)
		if sp.AgentType != typ || sp.ParentSessionID != "s-test" || sp.ParentSessionRef != "s-test" ||
			sp.TaskDescription == "" || sp.TimeoutS == 0 || sp.PermissionMode == "" || len(sp.Tools) == 0 || !sp.InheritContext {
			t.Errorf("%s spawned %+v", id, sp)
		}
		start := o.transcript(id, session.TranscriptStart)
		if len(start) != 1 || start[0].Text != sp.TaskDescription {
			t.Errorf("%s subagent_start %+v", id, start)
		}
		if a := o.find(session.TypeSubagentActive, id); len(a) != 1 || a[0].Data.(session.SubagentActive).InitialState == "" {
			t.Errorf("%s active %+v", id, a)
		}
		st := o.stop(t, id)
		if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary == "" || st.DurationMS < 0 || st.ArtifactPaths == nil {
			t.Errorf("%s stop %+v", id, st)
		}
	}
	// The lifecycle order of one subagent: spawned, start, active, …, stop.
	var order []string
	for _, e := range o.events {
		if e.SubagentID == "sa-1" {
			k := string(e.Type)
			if d, ok := e.Data.(session.TranscriptEvent); ok {
				k = d.EventType
			}
			if len(order) == 0 || order[len(order)-1] != k {
				order = append(order, k)
			}
		}
	}
	// Each model call ends with its ModelTurn, after its text and before the tool calls it asked for.
	want := []string{"SubagentSpawned", "SubagentIsolated", "subagent_start", "SubagentActive", "token", "ModelTurn", "tool_call", "tool_result",
		"tool_call", "tool_result", "token", "ModelTurn", "SubagentChanges", "SubagentStop"}
	if !slices.Equal(order, want) {
		t.Errorf("sa-1 order\n got %v\nwant %v", order, want)
	}
	// The builder really edited the file and reported it.
	if st := o.stop(t, "sa-1"); !slices.Equal(st.ArtifactPaths, []string{"main.go"}) || st.ToolInvocationCount != 2 {
		t.Errorf("builder stop %+v", st)
	}
	// The tester runs in plan mode: its write_file is refused, shown and noted.
	denied := o.transcript("sa-2", session.TranscriptPolicyDenied)
	if len(denied) != 1 || denied[0].Tool != "write_file" {
		t.Errorf("tester denials %+v", denied)
	}
	if notes := o.stop(t, "sa-2").Capsule.PolicyNotes; len(notes) != 1 || !strings.Contains(notes[0], "write_file") {
		t.Errorf("tester policy notes %v", notes)
	}
	// Tokens were coalesced: fewer token events than words streamed.
	if n := len(o.transcript("sa-1", session.TranscriptToken)); n == 0 || n > 8 {
		t.Errorf("builder has %d token events", n)
	}
	// The live final state renders exactly as its replay.
	if live, replay := render.Render(o.x.Snapshot()), render.Render(o.state); live != replay {
		t.Errorf("live and replay renderings differ:\n%s\n---\n%s", live, replay)
	}

	// Same script again, fresh workspace: the same events apart from ts.
	h2 := newHarness(t)
	o2 := h2.run(script)
	if len(o2.events) != len(o.events) {
		t.Fatalf("second run: %d events, first %d", len(o2.events), len(o.events))
	}
	for i := range o.events {
		a, b := o.events[i], o2.events[i]
		a.TS = b.TS
		if started, ok := a.Data.(session.SessionStarted); ok {
			started.Workspace = b.Data.(session.SessionStarted).Workspace
			a.Data = started
		}
		if iso, ok := a.Data.(session.SubagentIsolated); ok {
			iso.Worktree = b.Data.(session.SubagentIsolated).Worktree // under each run's own cache dir
			a.Data = iso
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("event %d differs:\n%+v\n%+v", i+1, a, b)
		}
	}
}

// TestTimeoutAndCancel: a --timeout stops a slow run with what it had; /cancel stops another;
// no goroutine survives.
func TestTimeoutAndCancel(t *testing.T) {
	base := runtime.NumGoroutine()
	h := newHarness(t)
	o := h.run(`/delegate a slow job --agent-type analyzer --timeout 5
/delegate another slow job --agent-type retriever
/cancel sa-2
/cancel sa-9
`)
	if o.exit != ExitFailed {
		t.Errorf("exit %d", o.exit)
	}
	checkSeq(t, o.events)
	if to := o.find(session.TypeSubagentTimeout, "sa-1"); len(to) != 1 || to[0].Data.(session.SubagentTimeout).TimeoutS != 5 {
		t.Errorf("timeout events %+v", to)
	}
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeTimeout || st.Capsule == nil || !strings.Contains(st.Capsule.Summary, "This will take") || st.DurationMS != 5000 {
		t.Errorf("timeout stop %+v", st)
	}
	if c := o.find(session.TypeSubagentCancelled, "sa-2"); len(c) != 1 || c[0].Data.(session.SubagentCancelled).Reason == "" {
		t.Errorf("cancel events %+v", c)
	}
	if o.stop(t, "sa-2").Outcome != session.OutcomeCancelled {
		t.Errorf("sa-2 not cancelled")
	}
	rej := o.find(session.TypeCommandRejected, "")
	if len(rej) != 1 || !strings.Contains(rej[0].Data.(session.CommandRejected).Error, "unknown subagent sa-9") {
		t.Errorf("rejections %+v", rej)
	}
	noLeaks(t, base)
}

// TestRetries: a transient failure is retried and recorded; one that persists fails after two
// retries.
func TestRetries(t *testing.T) {
	h := newHarness(t)
	o := h.run("/delegate a flaky fetch --agent-type retriever\n/delegate the service is down --agent-type retriever\n")
	if o.exit != ExitFailed {
		t.Errorf("exit %d", o.exit)
	}
	errs := o.find(session.TypeSubagentError, "sa-1")
	if len(errs) != 1 || !errs[0].Data.(session.SubagentError).Retrying() || !errs[0].Data.(session.SubagentError).Retryable {
		t.Errorf("sa-1 errors %+v", errs)
	}
	if o.stop(t, "sa-1").Outcome != session.OutcomeSuccess {
		t.Errorf("sa-1 did not recover")
	}
	errs = o.find(session.TypeSubagentError, "sa-2")
	if len(errs) != 3 {
		t.Fatalf("sa-2 has %d errors, want 3 attempts", len(errs))
	}
	for i, e := range errs {
		d := e.Data.(session.SubagentError)
		if d.Attempt != i+1 || d.Retrying() != (i < 2) {
			t.Errorf("attempt %d: %+v", i+1, d)
		}
	}
	if o.stop(t, "sa-2").Outcome != session.OutcomeFailure {
		t.Errorf("sa-2 outcome")
	}
	if o.state.Counters.Retries != 3 {
		t.Errorf("retries counted %d", o.state.Counters.Retries)
	}
}

// TestEscapesAndConfinement: terminal sequences from a model are recorded as they came and
// printed escaped; reads outside the workspace fail as tool errors.
func TestEscapesAndConfinement(t *testing.T) {
	h := newHarness(t)
	o := h.run("/delegate escape test --agent-type analyzer\n")
	results := o.transcript("sa-1", session.TranscriptToolResult)
	if len(results) != 2 {
		t.Fatalf("results %+v", results)
	}
	for _, r := range results {
		if !r.IsError || strings.Contains(r.Result, "secret outside") || strings.Contains(r.Result, "root:") {
			t.Errorf("escape not refused: %+v", r)
		}
	}
	out := render.Render(o.state)
	if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
		t.Errorf("rendering carries raw control characters")
	}
	if !strings.Contains(out, `\x1b[2J`) {
		t.Errorf("rendering does not show the escape: %s", out)
	}
}

// TestPermissions: shell calls ask; headless --approve decides and records each decision.
func TestPermissions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		approve string
		granted bool
	}{{ApproveNone, false}, {ApproveShell, true}, {ApproveAll, true}} {
		h := newHarness(t)
		h.approve = c.approve
		o := h.run("/delegate run the shell --agent-type builder\n")
		reqs := o.find(session.TypePermissionRequested, "sa-1")
		if len(reqs) != 2 {
			t.Fatalf("%s: %d requests", c.approve, len(reqs))
		}
		d := reqs[0].Data.(session.PermissionRequested)
		if d.Tool != "run_shell_command" || d.Args["command"] != "echo from-shell" || d.RequestID != "pr-1" {
			t.Errorf("%s: request %+v", c.approve, d)
		}
		granted, denied := o.find(session.TypePermissionGranted, ""), o.find(session.TypePermissionDenied, "")
		results := o.transcript("sa-1", session.TranscriptToolResult)
		if c.granted {
			if len(granted) != 2 || len(denied) != 0 || !strings.Contains(results[0].Result, "from-shell") {
				t.Errorf("%s: granted %d denied %d results %+v", c.approve, len(granted), len(denied), results)
			}
		} else {
			if len(denied) != 2 || len(granted) != 0 || !results[0].IsError {
				t.Errorf("%s: granted %d denied %d", c.approve, len(granted), len(denied))
			}
			if notes := o.stop(t, "sa-1").Capsule.PolicyNotes; len(notes) != 2 {
				t.Errorf("%s: policy notes %v", c.approve, notes)
			}
		}
	}
}
