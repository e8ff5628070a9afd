package live

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestScriptWaitsForComputingConvergence: in a script, /resolve and /apply right after
// /converge wait for the convergence to reach its review (bounded by its members' timeout),
// as a person watching it would, and run as typed: nothing is rejected and the merge lands.
func TestScriptWaitsForComputingConvergence(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.run(`/delegate variant a --agent-type builder
/delegate variant b --agent-type builder
/converge sa-1 sa-2 --strategy merge
/resolve cf-1 --choose sa-2
/apply cv-1
`)
	if o.exit != ExitOK || len(o.rejections()) != 0 {
		t.Fatalf("exit %d, rejections %+v\n%s", o.exit, o.rejections(), o.progress)
	}
	if !strings.Contains(o.progress, "waiting for cv-1, still computing (at most 300s)") {
		t.Errorf("the wait is not reported:\n%s", o.progress)
	}
	if cv := o.state.Convergence("cv-1"); cv == nil || !cv.Applied {
		t.Errorf("cv-1 %+v", cv)
	}
}

// TestTypedCommandsWhileComputing: typed one after the other (the workbench's path, Submit),
// the same commands do not wait; they are rejected with what the convergence still waits for
// and how to wait for it.
func TestTypedCommandsWhileComputing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(NewSimClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
	ctx := context.Background()
	var replies []Reply
	for _, l := range []string{"/delegate variant a --agent-type builder", "/delegate variant b --agent-type builder",
		"/converge sa-1 sa-2 --strategy merge", "/resolve cf-1 --choose sa-2", "/apply cv-1"} {
		r, err := x.Submit(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, r)
	}
	var progress bytes.Buffer
	if _, err := RunScript(ctx, x, strings.NewReader(""), &progress); err != nil { // waits, closes, ends the clock
		t.Fatal(err)
	}
	if r := replies[3]; !r.Rejected || !strings.Contains(r.Error, "unknown conflict cf-1: no conflict is waiting for review yet: cv-1 still computing; /wait cv-1") {
		t.Errorf("/resolve while cv-1 computes: %+v", r)
	}
	if r := replies[4]; !r.Rejected || !strings.Contains(r.Error, "cv-1 is still waiting for its members (sa-1, sa-2 run); /wait cv-1") {
		t.Errorf("/apply while cv-1 computes: %+v", r)
	}
}
