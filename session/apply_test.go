package session_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
	"github.com/summit-dev/summit/session/render"
)

// observable is everything about a state except the bookkeeping every event touches (seq,
// last ts, per-type event counts): the exhaustiveness test asks whether an event changed
// something beyond those.
func observable(s *session.State) string {
	c := s.Clone()
	c.LastSeq, c.Counters.Events = 0, nil
	c.LastTS = c.StartedAt
	return render.Render(c) + sessiontest.Deep(c)
}

// noStateChange lists the types documented as changing nothing but seq and the counters. It is
// empty: every event of schema v1 changes what a user can see.
var noStateChange = map[session.Type]string{}

func TestEveryTypeChangesState(t *testing.T) {
	evs := sessiontest.FullSession()
	seen := map[session.Type]bool{}
	s := &session.State{}
	for _, e := range evs {
		before := observable(s)
		if err := session.Apply(s, e); err != nil {
			t.Fatalf("apply %v: %v", e, err)
		}
		seen[e.Type] = true
		if _, documented := noStateChange[e.Type]; documented {
			continue
		}
		if observable(s) == before {
			t.Errorf("%v changed nothing but bookkeeping; give it a rule in Apply or document it in noStateChange", e)
		}
	}
	// SessionForked starts a session of its own (a fork): fold one, and check it started the
	// state with the fork's own start and its lineage.
	fork := session.SessionForked{Parent: session.ForkParent{Path: "/r/p.jsonl", SessionID: "s-parent", Seq: 7, SHA256: "ab"},
		Started: session.SessionStarted{Schema: 1, Workspace: "/forks/x", PermissionMode: "plan"}}
	fs := &session.State{}
	fe := session.New("", fork)
	fe.Seq, fe.SessionID = 1, "s-fork"
	if err := session.Apply(fs, fe); err != nil {
		t.Fatal(err)
	}
	seen[fe.Type] = true
	if fs.Fork == nil || fs.Fork.Parent.Seq != 7 || fs.Info.Workspace != "/forks/x" || fs.SessionID != "s-fork" {
		t.Errorf("SessionForked folded to %+v %+v", fs.Fork, fs.Info)
	}
	// RunnerCursor is about a placed subagent: fold one with a cursor at its placement, one as
	// events come, one going back (refused) and a --retry's new job on another runner.
	rb := sessiontest.NewBuilder()
	rb.Add("", session.SessionStarted{Schema: 1, Workspace: "/w", PermissionMode: "acceptEdits"})
	rb.Add("sa-1", session.SubagentSpawned{AgentType: "explore", AgentName: "explore", ParentSessionID: "s-test", TaskDescription: "t", TimeoutS: 60, Runner: "r1"})
	rb.Add("sa-1", session.RunnerCursor{Job: "J1", Runner: "r1"})
	rb.Add("sa-1", session.RunnerCursor{Job: "J1", Runner: "r1", Seq: 5})
	rs := sessiontest.Fold(t, rb.Evs)
	if sa := rs.Subagent("sa-1"); sa.RunnerJob != "J1" || sa.RunnerSeq != 5 || sa.Runner != "r1" {
		t.Errorf("RunnerCursor folded to job %q seq %d runner %q", sa.RunnerJob, sa.RunnerSeq, sa.Runner)
	}
	seen[session.TypeRunnerCursor] = true
	back := rb.Add("sa-1", session.RunnerCursor{Job: "J1", Runner: "r1", Seq: 4})
	if err := session.Apply(rs, back); err == nil {
		t.Errorf("a cursor going back was folded")
	}
	rb.Evs = rb.Evs[:len(rb.Evs)-1]
	rb.Seq--
	rb.Add("sa-1", session.RunnerCursor{Job: "J2", Runner: "r2", Seq: 0})
	rs = sessiontest.Fold(t, rb.Evs)
	if sa := rs.Subagent("sa-1"); sa.RunnerJob != "J2" || sa.RunnerSeq != 0 || sa.Runner != "r2" {
		t.Errorf("a --retry's cursor folded to job %q seq %d runner %q", sa.RunnerJob, sa.RunnerSeq, sa.Runner)
	}
	for _, typ := range session.Types {
		if !seen[typ] {
			t.Errorf("fullSession does not exercise %s: every type must be covered", typ)
		}
	}
	if len(session.Decoders) != len(session.Types) {
		t.Errorf("decoders has %d types, Types lists %d", len(session.Decoders), len(session.Types))
	}
	for _, typ := range session.Types {
		if !typ.Known() {
			t.Errorf("%s is in Types but has no decoder", typ)
		}
	}
}

func TestFoldResult(t *testing.T) {
	s := sessiontest.Fold(t, sessiontest.FullSession())
	if !s.Ended || s.EndReason != "quit" {
		t.Fatalf("ended=%v reason=%q", s.Ended, s.EndReason)
	}
	want := map[string]string{"sa-1": session.StatusDone, "sa-2": session.StatusDone, "sa-3": session.StatusTimeout, "sa-4": session.StatusCancelled}
	for id, st := range want {
		if got := s.Subagent(id).Status; got != st {
			t.Errorf("%s status %s, want %s", id, got, st)
		}
	}
	sa1 := s.Subagent("sa-1")
	if sa1.Retries != 1 || sa1.ToolCalls != 1 || sa1.PolicyDenials != 1 || sa1.CurrentTool != "" {
		t.Errorf("sa-1 retries=%d toolcalls=%d denials=%d current=%q", sa1.Retries, sa1.ToolCalls, sa1.PolicyDenials, sa1.CurrentTool)
	}
	// Two token deltas coalesce into one item.
	var texts []string
	for i := 0; i < sa1.Transcript.Len(); i++ {
		if sa1.Transcript.Item(i).Kind == session.TranscriptToken {
			texts = append(texts, sa1.Transcript.Text(i))
		}
	}
	if !slices.Equal(texts, []string{"Scanning for TODO markers."}) {
		t.Errorf("token items %q", texts)
	}
	// The monitor handoff mirrored sa-1's items into the parent log; the transfer-control one
	// did not mirror sa-2, and control came back to the parent.
	mirrors := 0
	for _, l := range s.Log {
		if l.Kind == "mirror" {
			mirrors++
			if l.SubagentID != "sa-1" {
				t.Errorf("mirror of %s", l.SubagentID)
			}
		}
	}
	// Mirrored after HandoffInitiated: thinking, the token run, tool call, tool result, policy
	// denial, message (subagent_start came before the handoff).
	if mirrors != 6 {
		t.Errorf("mirrors = %d, want 6", mirrors)
	}
	if s.Control != "" {
		t.Errorf("control = %q after handoff complete", s.Control)
	}
	if got := s.Subagent("sa-2").Transcript; got.Item(1).Kind != session.ItemUser || got.Text(1) != "use the existing helper" {
		t.Errorf("user message not in sa-2 transcript: %+v", got.Item(1))
	}
	cf := s.Conflict("cf-1")
	if cf == nil || cf.Resolution == nil || cf.Resolution.Choice != "sa-2" || !cf.ReviewRequested || cf.Lines != (session.LineRange{1, 3}) {
		t.Fatalf("conflict %+v", cf)
	}
	cv := s.Convergence("cv-1")
	if cv.Status != session.ConvergenceDone || !cv.Applied || cv.Batch == nil || cv.Result == "" {
		t.Errorf("convergence %+v", cv)
	}
	if len(s.Playbook) != 1 || !reflect.DeepEqual(s.Playbook[0], session.PlaybookEntry{ID: "pb-1", Section: "style", Content: "prefer helpers", Source: "cv-1"}) {
		t.Errorf("playbook %+v", s.Playbook)
	}
	if p := s.Permission("pr-1"); p.Decision != session.DecisionGranted || p.Scope != "once" {
		t.Errorf("pr-1 %+v", p)
	}
	if p := s.Permission("pr-2"); p.Decision != session.DecisionDenied || p.DenyReason != "not that" {
		t.Errorf("pr-2 %+v", p)
	}
	if sa1.PendingRequest != "" {
		t.Errorf("pending request left: %s", sa1.PendingRequest)
	}
}

// TestRejectsInvalidSequences: each bad event is refused with an error naming its seq, and
// the state is exactly what it was (never half-applied).
// invalidBase is a valid session that each of invalidCases continues with an event the fold
// refuses (the last one it adds), with the error it must give.
func invalidBase() *sessiontest.Builder {
	b := sessiontest.NewBuilder()
	b.Add("", session.SessionStarted{Schema: 1, PermissionMode: "acceptEdits"})
	b.Add("sa-1", session.SubagentSpawned{AgentType: "builder", TaskDescription: "x"})
	b.Add("sa-1", session.SubagentActive{InitialState: "running"})
	b.Add("sa-1", session.PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command"})
	b.Add("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1"}, Strategy: "merge"})
	b.Add("", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk"})
	b.Add("", session.ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Method: "manual", Choice: "none"})
	return b
}

var invalidCases = []struct {
	name string
	mk   func(b *sessiontest.Builder) session.Event
	want string
}{
	{"gap in seq", func(b *sessiontest.Builder) session.Event { b.Seq++; return b.Add("", session.UserNote{Text: "x"}) }, "gap in seq: expected 8 after 7"},
	{"repeated seq", func(b *sessiontest.Builder) session.Event { b.Seq--; return b.Add("", session.UserNote{Text: "x"}) }, "repeats or goes back"},
	{"stop before spawn", func(b *sessiontest.Builder) session.Event {
		return b.Add("sa-9", session.SubagentStop{Outcome: session.OutcomeSuccess})
	}, "unknown subagent sa-9"},
	{"transcript of unknown subagent", func(b *sessiontest.Builder) session.Event {
		return b.Add("sa-2", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "x"})
	}, "unknown subagent sa-2"},
	{"lifecycle without subagent id", func(b *sessiontest.Builder) session.Event { return b.Add("", session.SubagentActive{}) }, "subagent_id is required"},
	{"spawn twice", func(b *sessiontest.Builder) session.Event {
		return b.Add("sa-1", session.SubagentSpawned{AgentType: "x"})
	}, "spawned twice"},
	{"second SessionStarted", func(b *sessiontest.Builder) session.Event { return b.Add("", session.SessionStarted{}) }, "second SessionStarted"},
	{"session id mismatch", func(b *sessiontest.Builder) session.Event { b.SID = "s-other"; return b.Add("", session.UserNote{}) }, "does not match"},
	{"unknown transcript type", func(b *sessiontest.Builder) session.Event {
		return b.Add("sa-1", session.TranscriptEvent{EventType: "shout"})
	}, `unknown transcript event_type "shout"`},
	{"bad outcome", func(b *sessiontest.Builder) session.Event { return b.Add("sa-1", session.SubagentStop{Outcome: "meh"}) }, `outcome "meh"`},
	{"unknown permission", func(b *sessiontest.Builder) session.Event {
		return b.Add("sa-1", session.PermissionGranted{RequestID: "pr-7"})
	}, `unknown permission request "pr-7"`},
	{"duplicate request id", func(b *sessiontest.Builder) session.Event {
		return b.Add("sa-1", session.PermissionRequested{RequestID: "pr-1"})
	}, "already used"},
	{"handoff complete without initiation", func(b *sessiontest.Builder) session.Event {
		return b.Add("sa-1", session.HandoffComplete{Outcome: session.OutcomeSuccess})
	}, "no active handoff to sa-1"},
	{"bad handoff mode", func(b *sessiontest.Builder) session.Event {
		return b.Add("sa-1", session.HandoffInitiated{HandoffMode: "watch"})
	}, `handoff_mode "watch"`},
	{"converge unknown subagent", func(b *sessiontest.Builder) session.Event {
		return b.Add("", session.ConvergenceInitiated{ConvergenceID: "cv-2", SubagentIDs: []string{"sa-1", "sa-5"}})
	}, "unknown subagent sa-5"},
	{"conflict of unknown convergence", func(b *sessiontest.Builder) session.Event {
		return b.Add("", session.ConflictDetected{ConvergenceID: "cv-3", ConflictID: "cf-2"})
	}, `unknown convergence "cv-3"`},
	{"resolve twice", func(b *sessiontest.Builder) session.Event {
		return b.Add("", session.ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Choice: "sa-1"})
	}, "already resolved"},
	{"manual review names unknown conflict", func(b *sessiontest.Builder) session.Event {
		return b.Add("", session.ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1", "cf-9"}})
	}, `unknown conflict "cf-9"`},
	{"apply without batch twice", func(b *sessiontest.Builder) session.Event {
		b.Add("", session.DeltaBatchApplied{ConvergenceID: "cv-1"})
		return b.Add("", session.DeltaBatchApplied{ConvergenceID: "cv-1"})
	}, "applied twice"},
	{"bad playbook op", func(b *sessiontest.Builder) session.Event {
		b.Add("", session.DeltaBatch{ConvergenceID: "cv-1", Operations: []session.PlaybookOp{{Type: session.OpAdd, BulletID: "a"}, {Type: session.OpRemove, BulletID: "zz"}}})
		return b.Add("", session.DeltaBatchApplied{ConvergenceID: "cv-1"})
	}, `(REMOVE) names unknown entry "zz"`},
	{"a stop hook blocks with no subagent", func(b *sessiontest.Builder) session.Event {
		return b.Add("", session.HookRan{HookEvent: "SubagentStop", Command: "x", Source: "user", ExitCode: 2, Outcome: session.HookBlocked})
	}, "hook of a subagent (or a UserPromptSubmit hook on a /delegate's task) can block"},
	{"event after SessionEnded", func(b *sessiontest.Builder) session.Event {
		b.Add("", session.SessionEnded{Reason: "quit"})
		return b.Add("", session.UserNote{Text: "late"})
	}, "event after SessionEnded"},
	{"data type mismatch", func(b *sessiontest.Builder) session.Event {
		e := b.Add("", session.UserNote{})
		e.Type = session.TypeSessionEnded
		return e
	}, "data is UserNote"},
	{"future version", func(b *sessiontest.Builder) session.Event { e := b.Add("", session.UserNote{}); e.V = 2; return e }, "schema version 2"},
}

func TestRejectsInvalidSequences(t *testing.T) {
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			b := invalidBase()
			bad := tc.mk(b)
			s := sessiontest.Fold(t, b.Evs[:len(b.Evs)-1])
			before := observable(s) + fmt.Sprint(s.LastSeq, s.Counters.Events)
			err := session.Apply(s, bad)
			var ae *session.ApplyError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want an *ApplyError", err)
			}
			if ae.Seq != bad.Seq || !strings.Contains(err.Error(), fmt.Sprintf("seq %d", bad.Seq)) {
				t.Errorf("error %q does not name seq %d", err, bad.Seq)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if after := observable(s) + fmt.Sprint(s.LastSeq, s.Counters.Events); after != before {
				t.Errorf("state changed by a rejected event")
			}
		})
	}
}

func TestFirstEventMustBeSessionStarted(t *testing.T) {
	b := sessiontest.NewBuilder()
	e := b.Add("", session.UserNote{Text: "x"})
	if err := session.Apply(&session.State{}, e); err == nil || !strings.Contains(err.Error(), "seq 1 (UserNote): the first event must be SessionStarted") {
		t.Fatalf("got %v", err)
	}
}

func TestUnknownTypeAdvancesSeqOnly(t *testing.T) {
	b := sessiontest.NewBuilder()
	b.Add("", session.SessionStarted{})
	b.Add("", session.Unknown{Name: "FutureThing", Raw: []byte(`{"x":1}`)})
	b.Add("", session.UserNote{Text: "after"})
	s := sessiontest.Fold(t, b.Evs)
	if s.Counters.Unknown != 1 || s.LastSeq != 3 || s.Counters.Notes != 1 {
		t.Fatalf("unknown=%d last=%d notes=%d", s.Counters.Unknown, s.LastSeq, s.Counters.Notes)
	}
}

// TestCloneIsIndependent: a checkpoint clone does not see later events of the original, and
// events applied to the clone do not leak back (the transcripts share bytes).
func TestCloneIsIndependent(t *testing.T) {
	evs := sessiontest.FullSession()
	s := &session.State{}
	var cp *session.State
	var cpRender string
	for i, e := range evs {
		if err := session.Apply(s, e); err != nil {
			t.Fatal(err)
		}
		if e.Type == session.TypeTranscriptEvent && e.Data.(session.TranscriptEvent).EventType == session.TranscriptToken && cp == nil {
			cp = s.Clone()
			cpRender = observable(cp)
			// The clone streams its own token into the same coalesced item.
			_ = i
		}
	}
	if observable(cp) != cpRender {
		t.Fatal("the original's later events changed the clone")
	}
	full := render.Render(s)
	b := &sessiontest.Builder{Seq: cp.LastSeq, TS: cp.LastTS, SID: cp.SessionID}
	if err := session.Apply(cp, b.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: " DIVERGED"})); err != nil {
		t.Fatal(err)
	}
	if render.Render(s) != full {
		t.Fatal("an event applied to the clone changed the original")
	}
	if !strings.Contains(render.Render(cp), "Scanning  DIVERGED") {
		t.Fatalf("clone did not extend its token run:\n%s", render.Render(cp))
	}
}

func BenchmarkApply(b *testing.B) {
	// A realistic stream: one subagent streaming tokens with a tool call every 50 events.
	bl := sessiontest.NewBuilder()
	bl.Add("", session.SessionStarted{})
	bl.Add("sa-1", session.SubagentSpawned{AgentType: "builder"})
	bl.Add("sa-1", session.SubagentActive{})
	head := len(bl.Evs)
	for i := 0; i < 100_000; i++ {
		switch i % 50 {
		case 0:
			bl.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c", Tool: "read_file", Args: map[string]any{"path": "x"}})
		case 1:
			bl.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c", Tool: "read_file", Result: "package x\n"})
		default:
			bl.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "word "})
		}
	}
	evs := bl.Evs
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		s := &session.State{}
		for _, e := range evs {
			if err := session.Apply(s, e); err != nil {
				b.Fatal(err)
			}
		}
		n += len(evs) - head
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// The workspace events fold into the subagent and the applies, and print without a worktree.
func TestWorkspaceEvents(t *testing.T) {
	s := &session.State{}
	for _, e := range sessiontest.FullSession() {
		if err := session.Apply(s, e); err != nil {
			t.Fatal(err)
		}
	}
	sa := s.Subagent("sa-2")
	if sa.Isolation == nil || sa.Isolation.Base != "base-1" || sa.Changes == nil || len(sa.Changes.Files) != 3 || !sa.Discarded {
		t.Fatalf("sa-2: %+v %+v %v", sa.Isolation, sa.Changes, sa.Discarded)
	}
	if a := s.FindApply("apply-1"); a == nil || !a.Undone || a.Source != "sa-2" {
		t.Fatalf("apply-1: %+v", a)
	}
	out := render.Render(s)
	for _, want := range []string{"3 files +1 −1", "worktree: isolated at base-1 (0123456789ab) · discarded",
		"modified a.go +1 −1", "mode run.sh (mode 100644 → 100755)", "added logo.png (binary)", "+y",
		"== applied to the workspace ==", "apply-1 sa-2: a.go, logo.png, run.sh · undone"} {
		if !strings.Contains(out, want) {
			t.Errorf("Render lacks %q:\n%s", want, out)
		}
	}
	// Undoing twice, or an apply of something unknown, is refused.
	bad := []session.Event{
		{V: 1, Seq: s.LastSeq + 1, TS: s.LastTS, SessionID: s.SessionID, Type: session.TypeApplyUndone, Data: session.ApplyUndone{ApplyID: "apply-1"}},
	}
	s2 := &session.State{}
	for _, e := range sessiontest.FullSession() {
		if e.Type == session.TypeSessionEnded {
			break
		}
		session.Apply(s2, e)
	}
	bad[0].Seq = s2.LastSeq + 1
	if err := session.Apply(s2, bad[0]); err == nil {
		t.Error("an apply was undone twice")
	}
}

// TestForkRules: a fork has its own id and names its parent; interrupted is an outcome of a
// fork's subagents only.
func TestForkRules(t *testing.T) {
	start := func(d session.Data, id string) (*session.State, error) {
		s := &session.State{}
		e := session.New("", d)
		e.Seq, e.SessionID = 1, id
		return s, session.Apply(s, e)
	}
	parent := session.ForkParent{SessionID: "s-parent", Seq: 3}
	if _, err := start(session.SessionForked{Parent: parent}, "s-parent"); err == nil {
		t.Error("a fork with its parent's id was accepted")
	}
	if _, err := start(session.SessionForked{Parent: session.ForkParent{SessionID: "s-parent"}}, "s-fork"); err == nil {
		t.Error("a fork without a seq was accepted")
	}
	stopInterrupted := func(s *session.State) error {
		for i, d := range []session.Data{
			session.SubagentSpawned{AgentType: "explore", AgentName: "explore", Tools: []string{}},
			session.SubagentStop{Outcome: session.OutcomeInterrupted, ArtifactPaths: []string{}},
		} {
			e := session.New("sa-1", d)
			e.Seq, e.SessionID = uint64(2+i), s.SessionID
			if err := session.Apply(s, e); err != nil {
				return err
			}
		}
		return nil
	}
	s, err := start(session.SessionStarted{Schema: 1}, "s-plain")
	if err != nil {
		t.Fatal(err)
	}
	if err := stopInterrupted(s); err == nil {
		t.Error("interrupted accepted in a session that is not a fork")
	}
	s, err = start(session.SessionForked{Parent: parent}, "s-fork")
	if err != nil {
		t.Fatal(err)
	}
	if err := stopInterrupted(s); err != nil {
		t.Fatalf("interrupted in a fork: %v", err)
	}
	if sa := s.Subagent("sa-1"); sa.Status != session.StatusInterrupted || !sa.Terminal() {
		t.Errorf("status %s terminal %v", sa.Status, sa.Terminal())
	}
}

// A UserPromptSubmit hook may block a /delegate's task, before any subagent exists.
func TestHookBlocksDelegateTask(t *testing.T) {
	b := invalidBase()
	b.Add("", session.HookRan{HookEvent: "UserPromptSubmit", Command: "x", Source: "user", ExitCode: 2, Outcome: session.HookBlocked, Reason: "no"})
	s := sessiontest.Fold(t, b.Evs)
	if s.Counters.HooksBlocked != 1 {
		t.Errorf("blocked hooks: %d", s.Counters.HooksBlocked)
	}
}
