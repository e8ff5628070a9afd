package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func fold(t testing.TB, evs []Event) *State {
	t.Helper()
	s := &State{}
	for _, e := range evs {
		if err := Apply(s, e); err != nil {
			t.Fatalf("apply %v: %v", e, err)
		}
	}
	return s
}

// observable is everything about a state except the bookkeeping every event touches (seq,
// last ts, per-type event counts): the exhaustiveness test asks whether an event changed
// something beyond those.
func observable(s *State) string {
	c := s.Clone()
	c.LastSeq, c.Counters.Events = 0, nil
	c.LastTS = c.StartedAt
	return Render(c) + deep(c)
}

// deep renders the whole state as JSON (exported fields; pointers followed), including what
// Render does not show (flags such as ReviewRequested, PendingRequest) and transcript items.
func deep(s *State) string {
	var b strings.Builder
	put := func(v any) {
		j, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	put(s)
	for _, sa := range s.Subagents {
		for i := 0; i < sa.Transcript.Len(); i++ {
			put(sa.Transcript.Item(i))
			put(sa.Transcript.Text(i))
		}
	}
	return b.String()
}

// noStateChange lists the types documented as changing nothing but seq and the counters. It is
// empty: every event of schema v1 changes what a user can see.
var noStateChange = map[Type]string{}

func TestEveryTypeChangesState(t *testing.T) {
	evs := fullSession()
	seen := map[Type]bool{}
	s := &State{}
	for _, e := range evs {
		before := observable(s)
		if err := Apply(s, e); err != nil {
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
	for _, typ := range Types {
		if !seen[typ] {
			t.Errorf("fullSession does not exercise %s: every type must be covered", typ)
		}
	}
	if len(decoders) != len(Types) {
		t.Errorf("decoders has %d types, Types lists %d", len(decoders), len(Types))
	}
	for _, typ := range Types {
		if !typ.Known() {
			t.Errorf("%s is in Types but has no decoder", typ)
		}
	}
}

func TestFoldResult(t *testing.T) {
	s := fold(t, fullSession())
	if !s.Ended || s.EndReason != "quit" {
		t.Fatalf("ended=%v reason=%q", s.Ended, s.EndReason)
	}
	want := map[string]string{"sa-1": StatusDone, "sa-2": StatusDone, "sa-3": StatusTimeout, "sa-4": StatusCancelled}
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
		if sa1.Transcript.Item(i).Kind == TranscriptToken {
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
	if got := s.Subagent("sa-2").Transcript; got.Item(1).Kind != ItemUser || got.Text(1) != "use the existing helper" {
		t.Errorf("user message not in sa-2 transcript: %+v", got.Item(1))
	}
	cf := s.Conflict("cf-1")
	if cf == nil || cf.Resolution == nil || cf.Resolution.Choice != "sa-2" || !cf.ReviewRequested || cf.Lines != (LineRange{1, 3}) {
		t.Fatalf("conflict %+v", cf)
	}
	cv := s.Convergence("cv-1")
	if cv.Status != ConvergenceDone || !cv.Applied || cv.Batch == nil || cv.Result == "" {
		t.Errorf("convergence %+v", cv)
	}
	if len(s.Playbook) != 1 || !reflect.DeepEqual(s.Playbook[0], PlaybookEntry{ID: "pb-1", Section: "style", Content: "prefer helpers", Source: "cv-1"}) {
		t.Errorf("playbook %+v", s.Playbook)
	}
	if p := s.Permission("pr-1"); p.Decision != DecisionGranted || p.Scope != "once" {
		t.Errorf("pr-1 %+v", p)
	}
	if p := s.Permission("pr-2"); p.Decision != DecisionDenied || p.DenyReason != "not that" {
		t.Errorf("pr-2 %+v", p)
	}
	if sa1.PendingRequest != "" {
		t.Errorf("pending request left: %s", sa1.PendingRequest)
	}
}

// TestRejectsInvalidSequences: each bad event is refused with an error naming its seq, and
// the state is exactly what it was (never half-applied).
func TestRejectsInvalidSequences(t *testing.T) {
	base := func() *builder {
		b := newBuilder()
		b.add("", SessionStarted{Schema: 1, PermissionMode: "acceptEdits"})
		b.add("sa-1", SubagentSpawned{AgentType: "builder", TaskDescription: "x"})
		b.add("sa-1", SubagentActive{InitialState: "running"})
		b.add("sa-1", PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command"})
		b.add("", ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1"}, Strategy: "merge"})
		b.add("", ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk"})
		b.add("", ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Method: "manual", Choice: "none"})
		return b
	}
	cases := []struct {
		name string
		mk   func(b *builder) Event
		want string
	}{
		{"gap in seq", func(b *builder) Event { b.seq++; return b.add("", UserNote{Text: "x"}) }, "gap in seq: expected 8 after 7"},
		{"repeated seq", func(b *builder) Event { b.seq--; return b.add("", UserNote{Text: "x"}) }, "repeats or goes back"},
		{"stop before spawn", func(b *builder) Event { return b.add("sa-9", SubagentStop{Outcome: OutcomeSuccess}) }, "unknown subagent sa-9"},
		{"transcript of unknown subagent", func(b *builder) Event {
			return b.add("sa-2", TranscriptEvent{EventType: TranscriptToken, Text: "x"})
		}, "unknown subagent sa-2"},
		{"lifecycle without subagent id", func(b *builder) Event { return b.add("", SubagentActive{}) }, "subagent_id is required"},
		{"spawn twice", func(b *builder) Event { return b.add("sa-1", SubagentSpawned{AgentType: "x"}) }, "spawned twice"},
		{"second SessionStarted", func(b *builder) Event { return b.add("", SessionStarted{}) }, "second SessionStarted"},
		{"session id mismatch", func(b *builder) Event { b.sid = "s-other"; return b.add("", UserNote{}) }, "does not match"},
		{"unknown transcript type", func(b *builder) Event {
			return b.add("sa-1", TranscriptEvent{EventType: "shout"})
		}, `unknown transcript event_type "shout"`},
		{"bad outcome", func(b *builder) Event { return b.add("sa-1", SubagentStop{Outcome: "meh"}) }, `outcome "meh"`},
		{"unknown permission", func(b *builder) Event { return b.add("sa-1", PermissionGranted{RequestID: "pr-7"}) }, `unknown permission request "pr-7"`},
		{"duplicate request id", func(b *builder) Event {
			return b.add("sa-1", PermissionRequested{RequestID: "pr-1"})
		}, "already used"},
		{"handoff complete without initiation", func(b *builder) Event {
			return b.add("sa-1", HandoffComplete{Outcome: OutcomeSuccess})
		}, "no active handoff to sa-1"},
		{"bad handoff mode", func(b *builder) Event {
			return b.add("sa-1", HandoffInitiated{HandoffMode: "watch"})
		}, `handoff_mode "watch"`},
		{"converge unknown subagent", func(b *builder) Event {
			return b.add("", ConvergenceInitiated{ConvergenceID: "cv-2", SubagentIDs: []string{"sa-1", "sa-5"}})
		}, "unknown subagent sa-5"},
		{"conflict of unknown convergence", func(b *builder) Event {
			return b.add("", ConflictDetected{ConvergenceID: "cv-3", ConflictID: "cf-2"})
		}, `unknown convergence "cv-3"`},
		{"resolve twice", func(b *builder) Event {
			return b.add("", ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Choice: "sa-1"})
		}, "already resolved"},
		{"manual review names unknown conflict", func(b *builder) Event {
			return b.add("", ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1", "cf-9"}})
		}, `unknown conflict "cf-9"`},
		{"apply without batch twice", func(b *builder) Event {
			b.add("", DeltaBatchApplied{ConvergenceID: "cv-1"})
			return b.add("", DeltaBatchApplied{ConvergenceID: "cv-1"})
		}, "applied twice"},
		{"bad playbook op", func(b *builder) Event {
			b.add("", DeltaBatch{ConvergenceID: "cv-1", Operations: []PlaybookOp{{Type: OpAdd, BulletID: "a"}, {Type: OpRemove, BulletID: "zz"}}})
			return b.add("", DeltaBatchApplied{ConvergenceID: "cv-1"})
		}, `(REMOVE) names unknown entry "zz"`},
		{"event after SessionEnded", func(b *builder) Event {
			b.add("", SessionEnded{Reason: "quit"})
			return b.add("", UserNote{Text: "late"})
		}, "event after SessionEnded"},
		{"data type mismatch", func(b *builder) Event {
			e := b.add("", UserNote{})
			e.Type = TypeSessionEnded
			return e
		}, "data is UserNote"},
		{"future version", func(b *builder) Event { e := b.add("", UserNote{}); e.V = 2; return e }, "schema version 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := base()
			bad := tc.mk(b)
			s := fold(t, b.evs[:len(b.evs)-1])
			before := observable(s) + fmt.Sprint(s.LastSeq, s.Counters.Events)
			err := Apply(s, bad)
			var ae *ApplyError
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
	b := newBuilder()
	e := b.add("", UserNote{Text: "x"})
	if err := Apply(&State{}, e); err == nil || !strings.Contains(err.Error(), "seq 1 (UserNote): the first event must be SessionStarted") {
		t.Fatalf("got %v", err)
	}
}

func TestUnknownTypeAdvancesSeqOnly(t *testing.T) {
	b := newBuilder()
	b.add("", SessionStarted{})
	b.add("", Unknown{Name: "FutureThing", Raw: []byte(`{"x":1}`)})
	b.add("", UserNote{Text: "after"})
	s := fold(t, b.evs)
	if s.Counters.Unknown != 1 || s.LastSeq != 3 || s.Counters.Notes != 1 {
		t.Fatalf("unknown=%d last=%d notes=%d", s.Counters.Unknown, s.LastSeq, s.Counters.Notes)
	}
}

// TestReplayEqualsLive encodes a session to JSONL, decodes it and folds it again: the state
// and its rendering must be identical to folding the original events.
func TestReplayEqualsLive(t *testing.T) {
	evs := fullSession()
	live := fold(t, evs)
	var buf []byte
	var err error
	for _, e := range evs {
		if buf, err = AppendLine(buf, e); err != nil {
			t.Fatal(err)
		}
	}
	var replayed []Event
	for _, line := range bytes.SplitAfter(buf, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		e, err := DecodeLine(line)
		if err != nil {
			t.Fatalf("decode %q: %v", line, err)
		}
		replayed = append(replayed, e)
	}
	replay := fold(t, replayed)
	if a, b := Render(live), Render(replay); a != b {
		t.Fatalf("replay renders differently:\n--- live\n%s\n--- replay\n%s", a, b)
	}
	if a, b := deep(live), deep(replay); a != b {
		t.Fatalf("replay state differs:\n--- live\n%s\n--- replay\n%s", a, b)
	}
	if !reflect.DeepEqual(ComputeMetrics(live), ComputeMetrics(replay)) {
		t.Fatal("replay metrics differ")
	}
}

// TestCloneIsIndependent: a checkpoint clone does not see later events of the original, and
// events applied to the clone do not leak back (the transcripts share bytes).
func TestCloneIsIndependent(t *testing.T) {
	evs := fullSession()
	s := &State{}
	var cp *State
	var cpRender string
	for i, e := range evs {
		if err := Apply(s, e); err != nil {
			t.Fatal(err)
		}
		if e.Type == TypeTranscriptEvent && e.Data.(TranscriptEvent).EventType == TranscriptToken && cp == nil {
			cp = s.Clone()
			cpRender = observable(cp)
			// The clone streams its own token into the same coalesced item.
			_ = i
		}
	}
	if observable(cp) != cpRender {
		t.Fatal("the original's later events changed the clone")
	}
	full := Render(s)
	b := &builder{seq: cp.LastSeq, ts: cp.LastTS, sid: cp.SessionID}
	if err := Apply(cp, b.add("sa-1", TranscriptEvent{EventType: TranscriptToken, Text: " DIVERGED"})); err != nil {
		t.Fatal(err)
	}
	if Render(s) != full {
		t.Fatal("an event applied to the clone changed the original")
	}
	if !strings.Contains(Render(cp), "Scanning  DIVERGED") {
		t.Fatalf("clone did not extend its token run:\n%s", Render(cp))
	}
}

func TestMetrics(t *testing.T) {
	m := ComputeMetrics(fold(t, fullSession()))
	checks := []struct {
		name      string
		got, want any
	}{
		{"spawns", m.Spawns, 4},
		{"stopped", m.Stopped, 4},
		{"succeeded", m.Succeeded, 2},
		{"success rate", m.SuccessRate, 0.5},
		{"timeouts", m.Timeouts, 1},
		{"retries", m.Retries, 1},
		{"cancellations", m.Cancellations, 1},
		{"permission requests", m.PermissionRequests, 2},
		{"granted", m.PermissionsGranted, 1},
		{"denied", m.PermissionsDenied, 1},
		{"conflict rate", m.ConflictRate, 1.0},
		{"conflicts unresolved", m.ConflictsUnresolved, 0},
		{"handoffs", m.Handoffs, 2},
		{"commands", m.Commands, 1},
		{"rejected", m.CommandsRejected, 1},
		{"events", m.Events, len(fullSession())},
		{"TranscriptEvent count", m.EventsByType["TranscriptEvent"], 11},
		{"builder avg", m.ByAgentType[1], AgentTypeMetrics{AgentType: "builder", Spawned: 2, Stopped: 2, Succeeded: 1, SuccessRate: 0.5, AvgCompletionMS: 151000}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	var b strings.Builder
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"success rate                 50.0% (2 of 4 stopped)", "convergence conflict rate    100.0% (1 of 1 convergences)", "builder"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text metrics lack %q:\n%s", want, b.String())
		}
	}
}

func BenchmarkApply(b *testing.B) {
	// A realistic stream: one subagent streaming tokens with a tool call every 50 events.
	bl := newBuilder()
	bl.add("", SessionStarted{})
	bl.add("sa-1", SubagentSpawned{AgentType: "builder"})
	bl.add("sa-1", SubagentActive{})
	head := len(bl.evs)
	for i := 0; i < 100_000; i++ {
		switch i % 50 {
		case 0:
			bl.add("sa-1", TranscriptEvent{EventType: TranscriptToolCall, CallID: "c", Tool: "read_file", Args: map[string]any{"path": "x"}})
		case 1:
			bl.add("sa-1", TranscriptEvent{EventType: TranscriptToolResult, CallID: "c", Tool: "read_file", Result: "package x\n"})
		default:
			bl.add("sa-1", TranscriptEvent{EventType: TranscriptToken, Text: "word "})
		}
	}
	evs := bl.evs
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		s := &State{}
		for _, e := range evs {
			if err := Apply(s, e); err != nil {
				b.Fatal(err)
			}
		}
		n += len(evs) - head
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// The workspace events fold into the subagent and the applies, and print without a worktree.
func TestWorkspaceEvents(t *testing.T) {
	s := &State{}
	for _, e := range fullSession() {
		if err := Apply(s, e); err != nil {
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
	out := Render(s)
	for _, want := range []string{"3 files +1 −1", "worktree: isolated at base-1 (0123456789ab) · discarded",
		"modified a.go +1 −1", "mode run.sh (mode 100644 → 100755)", "added logo.png (binary)", "+y",
		"== applied to the workspace ==", "apply-1 sa-2: a.go, logo.png, run.sh · undone"} {
		if !strings.Contains(out, want) {
			t.Errorf("Render lacks %q:\n%s", want, out)
		}
	}
	// Undoing twice, or an apply of something unknown, is refused.
	bad := []Event{
		{V: 1, Seq: s.LastSeq + 1, TS: s.LastTS, SessionID: s.SessionID, Type: TypeApplyUndone, Data: ApplyUndone{ApplyID: "apply-1"}},
	}
	s2 := &State{}
	for _, e := range fullSession() {
		if e.Type == TypeSessionEnded {
			break
		}
		Apply(s2, e)
	}
	bad[0].Seq = s2.LastSeq + 1
	if err := Apply(s2, bad[0]); err == nil {
		t.Error("an apply was undone twice")
	}
}
