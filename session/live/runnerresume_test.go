package live

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/fork"
	"github.com/summit-dev/summit/session/record"
)

// killedRecording writes a recording of a session that was killed: no SessionEnded, sa-1 ran
// here and sa-2 (when placed) on runner gpu-1 as job J1, folded to stream sequence 7.
func killedRecording(t *testing.T, path string, placed bool) *session.State {
	t.Helper()
	rec, err := record.OpenRecorderFile(path, record.RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var seq uint64
	add := func(sub string, d session.Data) {
		seq++
		e := session.New(sub, d)
		e.Seq, e.TS, e.SessionID = seq, ts.Add(time.Duration(seq)*time.Second), "s-killed"
		if _, err := rec.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	add("", session.SessionStarted{Schema: 1, Workspace: t.TempDir(), PermissionMode: "acceptEdits"})
	add("sa-1", session.SubagentSpawned{AgentType: "explore", AgentName: "explore", ParentSessionID: "s-killed", TaskDescription: "map it", TimeoutS: 60})
	add("sa-1", session.SubagentActive{InitialState: "running"})
	if placed {
		add("sa-2", session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-killed", TaskDescription: "build it", TimeoutS: 60, Runner: "gpu-1"})
		add("sa-2", session.SubagentActive{InitialState: "running"})
		add("sa-2", session.RunnerCursor{Job: "J1", Runner: "gpu-1"})
		add("sa-2", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "from the runner"})
		add("sa-2", session.RunnerCursor{Job: "J1", Runner: "gpu-1", Seq: 7})
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	st, _, err := record.LoadFile(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func resumeOptions(t *testing.T, st *session.State, rec *record.Recorder) Options {
	return Options{
		Workspace: st.Info.Workspace, SessionID: st.SessionID, ProgramVersion: "test", Recorder: rec,
		Clock:     NewSimClock(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)),
		Catalogue: agents.Load(agents.Options{Workspace: st.Info.Workspace}),
		Route: func(*agents.Definition) (provider.Provider, string, error) {
			return nil, "", nil
		},
		ProviderName: "script", Approve: ApproveNone,
		Resume: &ResumeStart{State: st, Closing: fork.Close(st, "restarted", "resume", func(sa *session.Subagent) bool {
			return sa != nil && sa.Runner != "" && sa.RunnerJob != ""
		})},
	}
}

// A killed session whose subagent runs on a runner is not resumed without NATS: resume says
// which subagent runs where and how to reattach it, and the recording is not touched.
func TestResumeWithoutNATSNamesThePlacedSubagents(t *testing.T) {
	path := t.TempDir() + "/rec.jsonl"
	st := killedRecording(t, path, true)
	if got := st.Subagent("sa-2"); got.RunnerJob != "J1" || got.RunnerSeq != 7 {
		t.Fatalf("the fold of the cursor: %+v", got)
	}
	rec, _, err := record.ReopenRecorderFile(path, record.RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	_, err = Start(resumeOptions(t, st, rec))
	if err == nil || !strings.Contains(err.Error(), "sa-2 on gpu-1 as job J1") || !strings.Contains(err.Error(), "--nats") {
		t.Fatalf("Start: %v; want a refusal naming sa-2, gpu-1, J1 and --nats", err)
	}
	if evs, _, _ := record.ReadAll(path, record.ReadOptions{}); len(evs) != 8 {
		t.Errorf("the refused resume recorded %d events (want the 8 there were)", len(evs))
	}
}

// A killed session with nothing on runners resumes on its recording: the same session, seqs
// going on from the last, a subagent that ran here failed naming the restart, and the session
// ends there.
func TestResumeAppendsAndInterruptsLocalWork(t *testing.T) {
	path := t.TempDir() + "/rec.jsonl"
	st := killedRecording(t, path, false)
	rec, _, err := record.ReopenRecorderFile(path, record.RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Start(resumeOptions(t, st, rec))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := RunScript(context.Background(), x, strings.NewReader("/status\n"), &out); err != nil {
		t.Fatalf("RunScript: %v\n%s", err, out.String())
	}
	evs, _, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, evs)
	var stopped, ended bool
	for _, e := range evs[3:] {
		if e.SessionID != "s-killed" {
			t.Errorf("#%d is of session %s", e.Seq, e.SessionID)
		}
		if d, ok := e.Data.(session.SubagentStop); ok && e.SubagentID == "sa-1" && d.Outcome == session.OutcomeFailure {
			stopped = true
		}
		if d, ok := e.Data.(session.SubagentError); ok && !strings.Contains(d.Error, "/retry sa-1") {
			t.Errorf("sa-1's error does not say how to run it again: %q", d.Error)
		}
		_, ended = e.Data.(session.SessionEnded)
	}
	if !stopped || !ended {
		t.Errorf("after the resume: sa-1 stopped as a failure %v, the session ended %v", stopped, ended)
	}
}

// A runner's delta that stream redaction holds back (it may be the start of a secret) records
// no cursor; the event that releases it, here a note of this session about the subagent,
// records the held text, itself and the held cursor in one write, so a resume neither loses
// nor repeats that delta.
func TestHeldRunnerDeltaGoesWithItsCursor(t *testing.T) {
	path := t.TempDir() + "/rec.jsonl"
	rec, err := record.OpenRecorderFile(path, record.RecorderOptions{Environ: []string{"API_KEY=sk-verysecretvalue123"}})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	x, err := Start(Options{Workspace: ws, SessionID: "s-held", ProgramVersion: "test", Recorder: rec, Clock: RealClock{},
		Catalogue: agents.Load(agents.Options{Workspace: ws}),
		Route:     func(*agents.Definition) (provider.Provider, string, error) { return nil, "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.emit("sa-1", session.SubagentSpawned{AgentType: "explore", AgentName: "explore", ParentSessionID: "s-held", TaskDescription: "t", TimeoutS: 60, Runner: "r1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.emit("sa-1", session.RunnerCursor{Job: "J", Runner: "r1"}); err != nil {
		t.Fatal(err)
	}
	if err := x.emitFromRunner("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "sk-very"}, session.RunnerCursor{Job: "J", Runner: "r1", Seq: 5}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	evs, _, _ := record.ReadAll(path, record.ReadOptions{})
	if last := evs[len(evs)-1]; last.Type != session.TypeRunnerCursor || last.Data.(session.RunnerCursor).Seq != 0 {
		t.Fatalf("a held delta recorded %v", last)
	}
	if _, err := x.emit("sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "runner r1 is back"}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	evs, _, _ = record.ReadAll(path, record.ReadOptions{})
	tail := evs[len(evs)-3:]
	tok, _ := tail[0].Data.(session.TranscriptEvent)
	note, _ := tail[1].Data.(session.TranscriptEvent)
	cur, _ := tail[2].Data.(session.RunnerCursor)
	if tok.EventType != session.TranscriptToken || note.Text != "runner r1 is back" || cur.Seq != 5 || cur.Job != "J" {
		t.Fatalf("after the note: %v %v %v; want the held delta, the note, then the cursor 5", tail[0], tail[1], tail[2])
	}
	x.stop()
	rec.Close()
}
