package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

func handoffEvents(o outcome, id string) (init []session.HandoffInitiated, done []session.HandoffComplete, res []session.HandoffResolved) {
	for _, e := range o.events {
		if e.SubagentID != id {
			continue
		}
		switch d := e.Data.(type) {
		case session.HandoffInitiated:
			init = append(init, d)
		case session.HandoffComplete:
			done = append(done, d)
		case session.HandoffResolved:
			res = append(res, d)
		}
	}
	return
}

func TestHandoffMonitor(t *testing.T) {
	h := newHarness(t)
	o := h.run("/delegate find markers --agent-type analyzer\n/handoff sa-1\n")
	if o.exit != ExitOK {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	init, done, res := handoffEvents(o, "sa-1")
	if len(init) != 1 || init[0].HandoffMode != session.HandoffMonitor || init[0].ParentSessionID != "s-test" || init[0].TimeoutS != 600 || init[0].OnFailure != "escalate" {
		t.Errorf("initiated %+v", init)
	}
	if len(done) != 1 || done[0].Outcome != session.OutcomeSuccess || len(res) != 1 || res[0].Action != "none" || res[0].Artifacts == nil {
		t.Errorf("complete %+v resolved %+v", done, res)
	}
	mirrored := 0
	for _, it := range o.state.Log {
		if it.Kind == "mirror" && it.SubagentID == "sa-1" {
			mirrored++
		}
	}
	if mirrored < 3 {
		t.Errorf("%d items mirrored into the parent log", mirrored)
	}
}

func TestHandoffTransferControl(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.run("/delegate an interactive session --agent-type builder\n/handoff sa-1 --transfer-control\nlook at main.go\n/wait sa-1\nback to the parent\n")
	if o.exit != ExitOK {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	notes := o.find(session.TypeUserNote, "")
	if len(notes) != 2 || notes[0].SubagentID != "sa-1" || notes[0].Data.(session.UserNote).Text != "look at main.go" || notes[1].SubagentID != "" {
		t.Fatalf("notes %+v", notes)
	}
	if o.stop(t, "sa-1").Capsule.Summary != "answered the user" {
		t.Errorf("capsule %+v", o.stop(t, "sa-1").Capsule)
	}
	init, done, _ := handoffEvents(o, "sa-1")
	if len(init) != 1 || init[0].HandoffMode != session.HandoffTransferControl || len(done) != 1 {
		t.Errorf("handoff %+v %+v", init, done)
	}
	if o.state.Control != "" {
		t.Errorf("control stays with %s", o.state.Control)
	}
	if items := o.state.Subagent("sa-1").Transcript; items.Len() == 0 {
		t.Errorf("empty transcript")
	}
}

func TestHandoffOnFailure(t *testing.T) {
	t.Parallel()
	t.Run("retry", func(t *testing.T) {
		h := newHarness(t)
		o := h.run("/delegate this is broken --agent-type builder\n/handoff sa-1 --on-failure retry\n")
		_, done, res := handoffEvents(o, "sa-1")
		if len(done) != 1 || done[0].Outcome != session.OutcomeFailure || len(res) != 1 || res[0].Action != "retry" || res[0].RetrySubagentID != "sa-2" {
			t.Fatalf("sa-1 handoff %+v %+v", done, res)
		}
		sp := o.find(session.TypeSubagentSpawned, "sa-2")
		if len(sp) != 1 || sp[0].Data.(session.SubagentSpawned).TaskDescription != "this is broken" {
			t.Fatalf("retry spawn %+v", sp)
		}
		init, _, res2 := handoffEvents(o, "sa-2")
		if len(init) != 1 || init[0].OnFailure != "abort" || len(res2) != 1 || res2[0].Action != "abort" {
			t.Errorf("retry handoff %+v %+v", init, res2)
		}
		if o.exit != ExitFailed {
			t.Errorf("exit %d", o.exit)
		}
	})
	t.Run("abort on handoff timeout", func(t *testing.T) {
		h := newHarness(t)
		o := h.run("/delegate a slow job --agent-type analyzer\n/handoff sa-1 --timeout 3 --on-failure abort\n")
		_, done, res := handoffEvents(o, "sa-1")
		if len(done) != 1 || done[0].Outcome != session.OutcomeTimeout || len(res) != 1 || res[0].Action != "abort" {
			t.Fatalf("handoff %+v %+v", done, res)
		}
		st := o.stop(t, "sa-1")
		if st.Outcome != session.OutcomeCancelled || st.DurationMS != 3000 {
			t.Errorf("stop %+v", st)
		}
	})
	t.Run("escalate", func(t *testing.T) {
		h := newHarness(t)
		o := h.run("/delegate a slow job --agent-type analyzer --timeout 20\n/handoff sa-1 --timeout 3\n")
		_, done, res := handoffEvents(o, "sa-1")
		if len(done) != 1 || len(res) != 1 || res[0].Action != "escalate" {
			t.Fatalf("handoff %+v %+v", done, res)
		}
		// Escalation leaves the subagent alone: it runs on to its own timeout.
		if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeTimeout || st.DurationMS != 20000 {
			t.Errorf("stop %+v", st)
		}
	})
	t.Run("rejections", func(t *testing.T) {
		h := newHarness(t)
		o := h.run("/delegate find markers --agent-type analyzer\n/wait sa-1\n/handoff sa-1\n/handoff sa-7\n/delegate x --agent-type buidler\n")
		rej := o.find(session.TypeCommandRejected, "")
		want := []string{"already stopped", "unknown subagent sa-7", `unknown agent type "buidler" (did you mean builder?)`}
		if len(rej) != len(want) {
			t.Fatalf("rejections %+v", rej)
		}
		for i, w := range want {
			d := rej[i].Data.(session.CommandRejected)
			// Refusals of well-formed lines: no usage line (it is for syntax errors).
			if !strings.Contains(d.Error, w) || d.Usage != "" || strings.Contains(d.Error, "usage:") {
				t.Errorf("rejection %d: %+v, want %q", i, d, w)
			}
		}
	})
}

func TestParallelCap(t *testing.T) {
	h := newHarness(t)
	h.cap = 2
	o := h.run("/delegate find markers --agent-type analyzer\n/delegate a --agent-type retriever\n/delegate b --agent-type retriever\n")
	if o.exit != ExitOK {
		t.Fatalf("exit %d", o.exit)
	}
	sp := o.find(session.TypeSubagentSpawned, "sa-3")[0]
	if !sp.Data.(session.SubagentSpawned).Queued {
		t.Fatalf("sa-3 not queued")
	}
	active := o.find(session.TypeSubagentActive, "sa-3")[0]
	firstStop := uint64(0)
	for _, e := range o.events {
		if e.Type == session.TypeSubagentStop {
			firstStop = e.Seq
			break
		}
	}
	if active.Seq < firstStop {
		t.Errorf("sa-3 active at seq %d before the first stop at %d", active.Seq, firstStop)
	}
}

// TestInteractiveApproval: under the real clock a request waits for /approve; a
// subagent-scoped grant answers the next call without asking.
func TestInteractiveApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.approve = ""
	x := h.start(RealClock{})
	ctx := context.Background()
	if r, err := x.Submit(ctx, "/delegate run the shell --agent-type builder"); err != nil || r.Rejected {
		t.Fatal(r, err)
	}
	waitFor(t, x, func(s *session.State) bool { return s.Subagent("sa-1").PendingRequest == "pr-1" })
	if r, _ := x.Submit(ctx, "/approve pr-9"); !r.Rejected || !strings.Contains(r.Error, "pr-9") {
		t.Errorf("approve unknown: %+v", r)
	}
	if r, err := x.Submit(ctx, "/approve pr-1 --scope subagent"); err != nil || r.Rejected {
		t.Fatal(r, err)
	}
	if r, _ := x.Submit(ctx, "/wait sa-1"); r.Rejected {
		t.Fatal(r)
	}
	if r, _ := x.Submit(ctx, "/approve pr-1"); !r.Rejected || !strings.Contains(r.Error, "already decided") {
		t.Errorf("second approve: %+v", r)
	}
	if err := x.Close("quit"); err != nil {
		t.Fatal(err)
	}
	o := h.read(0, x, "")
	if n := len(o.find(session.TypePermissionRequested, "")); n != 1 {
		t.Errorf("%d requests, want 1 (the grant covers the second call)", n)
	}
	if o.stop(t, "sa-1").Outcome != session.OutcomeSuccess {
		t.Errorf("outcome %s", o.stop(t, "sa-1").Outcome)
	}
}

// TestCancelKillsShell: /cancel during a shell command kills its process group at once.
func TestCancelKillsShell(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.approve = ApproveAll
	x := h.start(RealClock{})
	ctx := context.Background()
	if _, err := x.Submit(ctx, "/delegate hang around --agent-type builder"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, x, func(s *session.State) bool { return s.Subagent("sa-1").CurrentTool == "run_shell_command" })
	time.Sleep(100 * time.Millisecond) // let bash start its children
	start := time.Now()
	if r, _ := x.Submit(ctx, "/cancel sa-1"); r.Rejected {
		t.Fatal(r)
	}
	if _, err := x.Submit(ctx, "/wait sa-1"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
	x.Close("quit")
	o := h.read(0, x, "")
	if o.stop(t, "sa-1").Outcome != session.OutcomeCancelled {
		t.Errorf("outcome %s", o.stop(t, "sa-1").Outcome)
	}
}

func waitFor(t *testing.T, x *Orchestrator, cond func(*session.State) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok := false
		x.View(func(s *session.State) { ok = cond(s) })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached:\n%s", render.Render(x.Snapshot()))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
