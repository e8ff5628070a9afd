package live

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/runners"
	"github.com/summit-dev/summit/session/runners/natstest"
)

// fleet is the embedded NATS server with in-process runners (real runners.Runner, each on its
// own connection) whose jobs run exec, and a session's client signed with key.
type fleet struct {
	t     *testing.T
	url   string
	key   nkeys.KeyPair
	c     *runners.Client
	conns map[string]*nats.Conn
	// killed are the runners kill dropped: their Run is not waited for (a killed runner's
	// publisher retries its last message on its closed connection, as on a lost link).
	killed map[string]bool
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{t: t, url: natstest.Start(t), conns: map[string]*nats.Conn{}, killed: map[string]bool{}}
	var err error
	if f.key, err = nkeys.CreateUser(); err != nil {
		t.Fatal(err)
	}
	nc, err := runners.Connect(runners.ConnOptions{URL: f.url, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.c, err = runners.NewClient(context.Background(), nc, f.key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.c.Close)
	return f
}

// runner starts runner name; it is stopped when the test ends.
func (f *fleet) runner(name string, exec func(ctx context.Context, j runners.Job, io runners.JobIO) runners.End) {
	t := f.t
	t.Helper()
	signer, _ := f.key.PublicKey()
	ready := make(chan struct{})
	var closed bool
	r := &runners.Runner{Name: name, Slots: 1, Trusted: []string{signer}, WorkDir: t.TempDir(),
		Log: func(l string) {
			if strings.Contains(l, "ready") && !closed {
				closed = true
				close(ready)
			}
		},
		Exec: func(ctx context.Context, j runners.Job, dir string, io runners.JobIO) runners.End {
			return exec(ctx, j, io)
		}}
	nc, err := runners.Connect(runners.ConnOptions{URL: f.url, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	f.conns[name] = nc
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, nc) }()
	t.Cleanup(func() {
		stop()
		if !f.killed[name] {
			<-done
		}
		nc.Close()
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(20 * time.Second):
		t.Fatalf("runner %s was not ready", name)
	}
}

// kill stands for `kill -9` of runner name: its connection drops (NATS holds none of it, so
// the liveness probe finds it dead) and its lease is gone (what LeaseTTL's expiry does; the
// end-to-end tests wait for the real one).
func (f *fleet) kill(name string) {
	f.t.Helper()
	f.killed[name] = true
	f.conns[name].Close()
	nc, err := nats.Connect(f.url)
	if err != nil {
		f.t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		f.t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), runners.RunnersBucket)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := kv.Delete(context.Background(), name); err != nil {
		f.t.Fatal(err)
	}
}

// runnerLine is a runner session's recorded event, as a job stream carries it.
func runnerLine(t *testing.T, seq uint64, sub string, d session.Data) []byte {
	e := session.New(sub, d)
	e.Seq, e.SessionID, e.TS = seq, "s-runner", time.Now()
	b, err := record.AppendLine(nil, e)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}

// resume writes the recording of a session killed while sa-1 ran as job on spawned.Runner
// (placed with spawned's --on and --retry), active since ago, with more after the placement
// (the killed session's later events), and starts a session resumed on it with the fleet's
// client and --approve approve.
func (f *fleet) resume(spawned session.SubagentSpawned, job, approve string, ago time.Duration, more func(add func(string, session.Data))) (*Orchestrator, string) {
	t := f.t
	t.Helper()
	path := t.TempDir() + "/rec.jsonl"
	rec, err := record.OpenRecorderFile(path, record.RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	add := func(sub string, d session.Data) {
		seq++
		e := session.New(sub, d)
		e.Seq, e.TS, e.SessionID = seq, time.Now().Add(-ago), "s-killed"
		if _, err := rec.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	add("", session.SessionStarted{Schema: 1, Workspace: t.TempDir(), PermissionMode: "acceptEdits"})
	add("sa-1", spawned)
	add("sa-1", session.SubagentActive{InitialState: "running"})
	add("sa-1", session.RunnerCursor{Job: job, Runner: spawned.Runner})
	more(add)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	st, _, err := record.LoadFile(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err = record.ReopenRecorderFile(path, record.RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	o := resumeOptions(t, st, rec)
	o.Runners, o.Approve, o.Clock = f.c, approve, RealClock{}
	x, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	return x, path
}

// wait is /wait sa-1 on x, then the recording's events (seqs checked).
func (f *fleet) wait(x *Orchestrator, path string) ([]session.Event, string) {
	t := f.t
	t.Helper()
	var out bytes.Buffer
	if _, err := RunScript(context.Background(), x, strings.NewReader("/wait sa-1\n"), &out); err != nil {
		t.Fatalf("RunScript: %v\n%s", err, out.String())
	}
	evs, _, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, evs)
	return evs, out.String()
}

// A grant for the whole subagent (/approve --scope subagent) made before the kill answers
// the reattached subagent's later request of that tool after the resume, with no one asked:
// the resumed session has no --approve and nobody types /approve, so without the grant the
// runner would wait for a decision and fail.
func TestResumeKeepsSubagentScopedGrant(t *testing.T) {
	f := newFleet(t)
	asked := make(chan struct{})
	decisions := make(chan runners.Control, 4)
	f.runner("fake-1", func(ctx context.Context, j runners.Job, io runners.JobIO) runners.End {
		ev := func(seq uint64, d session.Data) { io.Event(runnerLine(t, seq, "sa-1", d)) }
		ev(1, session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-runner", TaskDescription: "t", TimeoutS: 60})
		ev(2, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "one"})
		ev(3, session.PermissionRequested{RequestID: "pr-9", Tool: "run_shell_command", Reason: "make"})
		close(asked)
		// Each request waits for its own decision: a control stream may hand one over twice
		// (an ordered consumer recreated under load), which a runner ignores.
		for i, id := range []string{"pr-9", "pr-10"} {
			if i == 1 {
				ev(4, session.PermissionRequested{RequestID: "pr-10", Tool: "run_shell_command", Reason: "make test"})
			}
			for decided := false; !decided; {
				select {
				case c := <-io.Control:
					if c.Type == "decision" && c.Request != id {
						continue
					}
					decisions <- c
					if c.Type != "decision" || !c.Grant {
						return runners.End{Outcome: session.OutcomeFailure, Error: "denied"}
					}
					decided = true
				case <-time.After(10 * time.Second):
					return runners.End{Outcome: session.OutcomeFailure, Error: "no decision came for request " + id}
				case <-ctx.Done():
					return runners.End{Outcome: session.OutcomeCancelled}
				}
			}
		}
		return runners.End{Outcome: session.OutcomeSuccess}
	})
	job := runners.NewJobID()
	if err := f.c.Submit(context.Background(), "fake-1", runners.Job{ID: job, Task: "t", AgentType: "builder", TimeoutS: 60}, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the runner did not ask")
	}
	// The killed session granted pr-1 (the runner's pr-9) for the whole subagent, and the
	// decision reached the runner; then it was killed.
	if err := f.c.Control(context.Background(), job, runners.Control{Type: "decision", Request: "pr-9", Grant: true}); err != nil {
		t.Fatal(err)
	}
	x, path := f.resume(session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-killed",
		TaskDescription: "t", TimeoutS: 60, Runner: "fake-1", RunnerOn: "fake-1"}, job, "", 0, func(add func(string, session.Data)) {
		add("sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "one"})
		add("sa-1", session.RunnerCursor{Job: job, Runner: "fake-1", Seq: 2})
		add("sa-1", session.PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command", Reason: "make"})
		add("sa-1", session.RunnerCursor{Job: job, Runner: "fake-1", Seq: 3})
		add("", session.CommandIssued{Line: "/approve pr-1 --scope subagent", Command: "approve"})
		add("sa-1", session.PermissionGranted{RequestID: "pr-1", Scope: commands.ScopeSubagent, By: "user"})
	})
	evs, out := f.wait(x, path)
	var outcome string
	requests := 0
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.PermissionRequested:
			requests++
		case session.SubagentStop:
			outcome = d.Outcome
		}
	}
	close(decisions)
	var got []string
	for c := range decisions {
		got = append(got, c.Request)
	}
	if strings.Join(got, ",") != "pr-9,pr-10" || outcome != session.OutcomeSuccess || requests != 1 {
		t.Errorf("the runner was answered %v (want pr-9,pr-10), %d requests recorded (want 1: the grant answers pr-10 without asking), outcome %q\n%s",
			got, requests, outcome, out)
	}
}

// --retry holds for a reattached subagent: its runner dies after the resume, and it is
// placed again on the other runner, as a subagent the resumed session placed itself would be.
func TestResumeRetriesReattachedSubagent(t *testing.T) {
	f := newFleet(t)
	started := make(chan struct{})
	f.runner("fake-1", func(ctx context.Context, j runners.Job, io runners.JobIO) runners.End {
		io.Event(runnerLine(t, 1, "sa-1", session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-runner", TaskDescription: "t", TimeoutS: 60}))
		io.Event(runnerLine(t, 2, "sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "on fake-1"}))
		close(started)
		<-ctx.Done() // runs until it is killed
		return runners.End{Outcome: session.OutcomeCancelled}
	})
	placed := make(chan runners.Job, 1)
	f.runner("fake-2", func(ctx context.Context, j runners.Job, io runners.JobIO) runners.End {
		placed <- j
		io.Event(runnerLine(t, 1, "sa-1", session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-runner", TaskDescription: "t", TimeoutS: 60}))
		io.Event(runnerLine(t, 2, "sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "on fake-2"}))
		return runners.End{Outcome: session.OutcomeSuccess}
	})
	job := runners.NewJobID()
	if err := f.c.Submit(context.Background(), "fake-1", runners.Job{ID: job, Task: "t", AgentType: "builder", TimeoutS: 60}, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the job did not start on fake-1")
	}
	x, path := f.resume(session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-killed",
		TaskDescription: "t", TimeoutS: 60, Runner: "fake-1", RunnerOn: "any", RunnerRetry: true, PermissionMode: "acceptEdits",
		Tools: []string{"read_file"}}, job, "", 0, func(add func(string, session.Data)) {
		add("sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "on fake-1"})
		add("sa-1", session.RunnerCursor{Job: job, Runner: "fake-1", Seq: 2})
	})
	f.kill("fake-1")
	evs, out := f.wait(x, path)
	count := map[string]int{}
	var outcome, gone string
	var cursors []string
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.TranscriptEvent:
			count[d.Text]++
			if strings.Contains(d.Text, "runner fake-1 is gone") && strings.Contains(d.Text, "--retry places it again") {
				gone = d.Text
			}
		case session.RunnerCursor:
			if d.Seq == 0 {
				cursors = append(cursors, d.Runner)
			}
		case session.SubagentStop:
			outcome = d.Outcome
		}
	}
	var j runners.Job
	select {
	case j = <-placed:
	default:
	}
	if gone == "" || strings.Join(cursors, ",") != "fake-1,fake-2" || count["on fake-1"] != 1 || count["on fake-2"] != 1 ||
		outcome != session.OutcomeSuccess {
		t.Errorf("gone %q, placements %v (want fake-1,fake-2), %d×on fake-1, %d×on fake-2, outcome %q\n%s",
			gone, cursors, count["on fake-1"], count["on fake-2"], outcome, out)
	}
	if j.Task != "t" || j.PermissionMode != "acceptEdits" || strings.Join(j.Tools, ",") != "read_file" {
		t.Errorf("the job placed again is %+v; want the task, mode and tools as recorded", j)
	}
}
