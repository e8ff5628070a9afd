package live

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/runners"
)

// A session killed while its runner's subagent waited for a decision is resumed in-process on
// the embedded NATS server with a real runners.Runner whose job asks for the shell: the
// resumed session matches its recorded, undecided request with the runner's (at the cursor),
// decides it (--approve shell), the decision goes back on the control subject and the runner
// acts on it; what the recording already held is not folded again, what follows is folded
// once, and the subagent ends as the runner says.
func TestResumeReattachesAndAnswersThePendingRequest(t *testing.T) {
	got, evs, before, out := reattachFake(t, 0, ApproveShell)
	count := map[string]int{}
	requests, grants := 0, 0
	var outcome string
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.TranscriptEvent:
			count[d.Text]++
		case session.PermissionRequested:
			requests++
		case session.PermissionGranted:
			if e.Seq > before && d.RequestID == "pr-1" && d.By == "--approve shell" {
				grants++
			}
		case session.SubagentStop:
			outcome = d.Outcome
		}
	}
	if len(got) != 1 || got[0].Request != "pr-9" || !got[0].Grant {
		t.Errorf("the runner received %+v, want one grant of pr-9", got)
	}
	if count["one"] != 1 || count["granted"] != 1 || requests != 1 || grants != 1 || outcome != session.OutcomeSuccess {
		t.Errorf("after the resume: %d×one, %d×granted, %d requests, %d grants of pr-1 by the resumed session, outcome %q\n%s",
			count["one"], count["granted"], requests, grants, outcome, out)
	}
}

// A reattached subagent keeps its timeout, counted from when it became active: resumed after
// it ran out, the job is cancelled on its runner at once and the subagent ends as a timeout.
func TestResumeKeepsTheTimeout(t *testing.T) {
	got, evs, _, out := reattachFake(t, 2*time.Minute, "")
	var timedOut bool
	var outcome string
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.SubagentTimeout:
			timedOut = true
		case session.SubagentStop:
			outcome = d.Outcome
		}
	}
	if len(got) == 0 || got[0].Type != "cancel" {
		t.Errorf("the runner received %+v, want a cancel first", got)
	}
	if !timedOut || outcome != session.OutcomeTimeout {
		t.Errorf("SubagentTimeout %v, outcome %q; want a timeout\n%s", timedOut, outcome, out)
	}
}

// reattachFake runs a real runners.Runner on the embedded NATS whose job says "one", asks for
// the shell and waits for the local decision (a cancel ends it as cancelled); writes the
// recording of a session killed while that request was undecided, its subagent active since
// ago; and resumes it with approve. It returns the controls the runner received, the
// recording's events, the last seq before the resume and the script's output.
func reattachFake(t *testing.T, ago time.Duration, approve string) ([]runners.Control, []session.Event, uint64, string) {
	t.Helper()
	f := newFleet(t)
	var mu sync.Mutex
	var got []runners.Control
	f.runner("fake-1", func(ctx context.Context, j runners.Job, io runners.JobIO) runners.End {
		line := func(seq uint64, d session.Data) []byte { return runnerLine(t, seq, "sa-1", d) }
		io.Event(line(1, session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-runner", TaskDescription: "t", TimeoutS: 60}))
		io.Event(line(2, session.TranscriptEvent{EventType: session.TranscriptStart, Text: "t"}))
		io.Event(line(3, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "one"}))
		io.Event(line(4, session.PermissionRequested{RequestID: "pr-9", Tool: "run_shell_command", Reason: "asks each time"}))
		select {
		case c := <-io.Control:
			mu.Lock()
			got = append(got, c)
			mu.Unlock()
			if c.Type == "cancel" {
				return runners.End{Outcome: session.OutcomeCancelled}
			}
			text := "denied"
			if c.Type == "decision" && c.Request == "pr-9" && c.Grant {
				text = "granted"
			}
			io.Event(line(5, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: text}))
		case <-time.After(30 * time.Second):
			return runners.End{Outcome: session.OutcomeFailure, Error: "no decision came"}
		case <-ctx.Done():
			return runners.End{Outcome: session.OutcomeCancelled}
		}
		return runners.End{Outcome: session.OutcomeSuccess}
	})
	job := runners.NewJobID()
	if err := f.c.Submit(context.Background(), "fake-1", runners.Job{ID: job, Task: "t", AgentType: "builder", TimeoutS: 60}, ""); err != nil {
		t.Fatal(err)
	}

	// What the killed session recorded: the placement, "one" (stream seq 3) and the local
	// request pr-1 of the runner's pr-9 (seq 4), each with its cursor; no decision.
	before := uint64(0)
	x, path := f.resume(session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-killed",
		TaskDescription: "t", TimeoutS: 60, Runner: "fake-1"}, job, approve, ago, func(add func(string, session.Data)) {
		add("sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "one"})
		add("sa-1", session.RunnerCursor{Job: job, Runner: "fake-1", Seq: 3})
		add("sa-1", session.PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command", Reason: "asks each time"})
		add("sa-1", session.RunnerCursor{Job: job, Runner: "fake-1", Seq: 4})
		before = 8
	})
	evs, out := f.wait(x, path)
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(got), evs, before, out
}
