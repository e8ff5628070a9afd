package session_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// foldBoth folds evs into a full state and a counting one (SetCountOnly), each stopping at its
// first error, and returns both errors.
func foldBoth(evs []session.Event) (full, counted *session.State, errFull, errCounted error) {
	full, counted = &session.State{}, &session.State{}
	counted.SetCountOnly()
	for _, e := range evs {
		if errFull = session.Apply(full, e); errFull != nil {
			break
		}
	}
	for _, e := range evs {
		if errCounted = session.Apply(counted, e); errCounted != nil {
			break
		}
	}
	return full, counted, errFull, errCounted
}

// counted is what a counting state keeps of s: everything but the transcripts' items, the log
// and the permission requests' arguments and reasons, as JSON.
func countedView(t *testing.T, s *session.State) string {
	t.Helper()
	c := s.Clone()
	c.Log = nil
	var b strings.Builder
	for _, sa := range c.Subagents {
		fmt.Fprintf(&b, "%s: %d items, %d bytes, %d streamed\n", sa.ID, sa.Transcript.Len(), sa.Transcript.Bytes(), sa.StreamedBytes)
		sa.Transcript = nil
	}
	for _, p := range c.Permissions {
		p.Args, p.Reason = nil, ""
	}
	j, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b.String() + string(j)
}

// TestCountOnlyFoldsAlike: a counting state folds every event as a full one does (the same
// counters, tree, statuses, handoffs, convergences and permissions; as many transcript items
// and bytes), keeping no items and no log.
func TestCountOnlyFoldsAlike(t *testing.T) {
	sessions := map[string][]session.Event{"full session": sessiontest.FullSession()}
	for seed := range uint64(8) {
		sessions[fmt.Sprintf("streaming %d", seed)] = streamingSession(seed, 3000)
	}
	for name, evs := range sessions {
		full, counted, err1, err2 := foldBoth(evs)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v / %v", name, err1, err2)
		}
		if !counted.CountOnly() || full.CountOnly() {
			t.Fatal("CountOnly does not say what SetCountOnly set")
		}
		if a, b := countedView(t, full), countedView(t, counted); a != b {
			t.Errorf("%s: the counting fold differs:\n%s\nwant\n%s", name, b, a)
		}
		if len(counted.Log) != 0 || len(full.Log) == 0 {
			t.Errorf("%s: log of %d items kept by the counting state (%d in the full one)", name, len(counted.Log), len(full.Log))
		}
	}
}

// TestCountItemsFoldsAlike: a state whose transcripts count their items (SetCountItems) folds
// every event as a full one does and keeps everything a full one keeps but the items: the
// same log (its mirror items naming the same item indexes), permissions with their arguments.
func TestCountItemsFoldsAlike(t *testing.T) {
	sessions := map[string][]session.Event{"full session": sessiontest.FullSession()}
	for seed := range uint64(8) {
		sessions[fmt.Sprintf("streaming %d", seed)] = streamingSession(seed, 3000)
	}
	view := func(s *session.State) string {
		c := s.Clone()
		var b strings.Builder
		for _, sa := range c.Subagents {
			fmt.Fprintf(&b, "%s: %d items, %d bytes, %d streamed\n", sa.ID, sa.Transcript.Len(), sa.Transcript.Bytes(), sa.StreamedBytes)
			sa.Transcript = nil
		}
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return b.String() + string(j)
	}
	for name, evs := range sessions {
		full, counted := &session.State{}, &session.State{}
		counted.SetCountItems()
		for _, e := range evs {
			if err := session.Apply(full, e); err != nil {
				t.Fatal(err)
			}
			if err := session.Apply(counted, e); err != nil {
				t.Fatal(err)
			}
		}
		if !counted.CountsItems() || full.CountsItems() || counted.CountOnly() {
			t.Fatal("CountsItems does not say what SetCountItems set")
		}
		if a, b := view(full), view(counted); a != b {
			t.Errorf("%s: the fold counting items differs:\n%s\nwant\n%s", name, b, a)
		}
		mirrors := 0
		for _, l := range counted.Log {
			if l.Kind == "mirror" {
				mirrors++
			}
		}
		if mirrors == 0 {
			t.Errorf("%s: no mirror items in the log", name)
		}
	}
}

// TestCountOnlyRejectsAlike: every invalid event a full state refuses, a counting state refuses
// with the same error, unchanged.
func TestCountOnlyRejectsAlike(t *testing.T) {
	for _, tc := range invalidCases {
		b := invalidBase()
		bad := tc.mk(b) // (some cases change the event they return, not b.Evs)
		good := b.Evs[:len(b.Evs)-1]
		full, counted, err1, err2 := foldBoth(append(good[:len(good):len(good)], bad))
		if err1 == nil || err2 == nil || err1.Error() != err2.Error() || !strings.Contains(err1.Error(), tc.want) {
			t.Errorf("%s: full fold: %v; counting fold: %v", tc.name, err1, err2)
			continue
		}
		if last := good[len(good)-1].Seq; full.LastSeq != last || counted.LastSeq != last || !reflect.DeepEqual(full.Counters, counted.Counters) {
			t.Errorf("%s: a rejected event changed the counting state: seq %d, counters %+v", tc.name, counted.LastSeq, counted.Counters)
		}
	}
}

// TestCountOnlyMemoryFlat: the memory a counting state retains does not grow with the length of
// a transcript (one subagent streaming 10× more deltas, tool calls and results), while a full
// state's does (which shows the measure can see growth).
func TestCountOnlyMemoryFlat(t *testing.T) {
	retained := func(countOnly bool, n int) int64 {
		return sessiontest.Retained(func() any {
			s := &session.State{}
			if countOnly {
				s.SetCountOnly()
			}
			sessiontest.FoldStream(t, s, session.Apply, n)
			return s
		})
	}
	const n = 20_000
	fullSmall, fullBig := retained(false, n), retained(false, 10*n)
	if fullBig-fullSmall < 1<<20 {
		t.Fatalf("a full fold of %d more events retained only %d more bytes: the measure is off", 9*n, fullBig-fullSmall)
	}
	small, big := retained(true, n), retained(true, 10*n)
	if big-small > 64<<10 {
		t.Errorf("a counting fold of %d events retained %d bytes, of %d events %d: it grows with the transcript (a full fold: %d, %d)",
			n, small, 10*n, big, fullSmall, fullBig)
	}
}

// streamingSession is a random valid session: subagents streaming tokens and thinking, tool
// calls and results, policy denials, notes to a subagent and to the session, monitor and
// transfer-control handoffs, permissions granted and denied, retries, errors and stops.
func streamingSession(seed uint64, n int) []session.Event {
	b := sessiontest.NewBuilder()
	b.Add("", session.SessionStarted{Schema: 1, PermissionMode: "acceptEdits"})
	live := []string{}
	handoff := map[string]string{}
	next, perm := 0, 0
	r := seed*7919 + 1
	rnd := func(k int) int { r = r*6364136223846793005 + 1442695040888963407; return int(r>>33) % k }
	for range n {
		if len(live) == 0 || len(live) < 5 && rnd(30) == 0 {
			next++
			id := fmt.Sprintf("sa-%d", next)
			b.Add(id, session.SubagentSpawned{AgentType: []string{"builder", "explore"}[rnd(2)], TaskDescription: "task"})
			b.Add(id, session.SubagentActive{InitialState: "running"})
			live = append(live, id)
			continue
		}
		k := rnd(len(live))
		id := live[k]
		switch x := rnd(100); {
		case x < 50:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptToken, Text: "some words "})
		case x < 60:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptThinking, Text: "hmm"})
		case x < 68:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c", Tool: "read_file", Args: map[string]any{"path": "a.go"}})
		case x < 76:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c", Tool: "read_file", Result: "package a\n", IsError: x%2 == 0})
		case x < 78:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptPolicyDenied, Tool: "write_file", Reason: "plan mode"})
		case x < 80:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "step", Tool: session.PlanTool, Args: map[string]any{"step": "two"}})
		case x < 82:
			b.Add(id, session.UserNote{Text: "keep going"})
		case x < 83:
			b.Add("", session.UserNote{Text: "a note"})
		case x < 84:
			b.Add("", session.CommandIssued{Line: "/status", Command: "status"})
		case x < 86:
			if handoff[id] == "" {
				mode := []string{session.HandoffMonitor, session.HandoffTransferControl}[rnd(2)]
				if mode == session.HandoffTransferControl && slicesContain(handoff, session.HandoffTransferControl) {
					mode = session.HandoffMonitor
				}
				handoff[id] = mode
				b.Add(id, session.HandoffInitiated{HandoffMode: mode, TimeoutS: 60})
			}
		case x < 88:
			perm++
			req := fmt.Sprintf("pr-%d", perm)
			b.Add(id, session.PermissionRequested{RequestID: req, Tool: "run_shell_command", Args: map[string]any{"command": "go test"}, Reason: "tests"})
			if rnd(2) == 0 {
				b.Add(id, session.PermissionGranted{RequestID: req, Scope: "once", By: "user"})
			} else {
				b.Add(id, session.PermissionDenied{RequestID: req, Reason: "no", By: "user"})
			}
		case x < 89:
			b.Add(id, session.SubagentError{Error: "rate limited", Retryable: true, Attempt: 1})
		case x < 90:
			b.Add(id, session.ModelTurn{Turn: 1, Attempt: 1, Tokens: session.Tokens{Input: 10, Output: 20}})
		default:
			if rnd(5) == 0 {
				b.Add(id, session.SubagentStop{Outcome: []string{session.OutcomeSuccess, session.OutcomeFailure}[rnd(2)], DurationMS: int64(1000 + rnd(9000))})
				if handoff[id] != "" {
					b.Add(id, session.HandoffComplete{Outcome: session.OutcomeSuccess})
					delete(handoff, id)
				}
				live = append(live[:k], live[k+1:]...)
			}
		}
	}
	b.Add("", session.SessionEnded{Reason: "quit"})
	return b.Evs
}

func slicesContain(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// TestForgetDecidedFoldsAlike: a counting state that forgets decided permission requests
// (SetForgetDecided, the import's check) folds a session as a counting state does, with the
// same counters and tree, but keeps no decided request.
func TestForgetDecidedFoldsAlike(t *testing.T) {
	evs := sessiontest.FullSession()
	_, counted, _, err := foldBoth(evs)
	if err != nil {
		t.Fatal(err)
	}
	forget := &session.State{}
	forget.SetCountOnly()
	forget.SetForgetDecided()
	for _, e := range evs {
		if err := session.Apply(forget, e); err != nil {
			t.Fatalf("seq %d: %v", e.Seq, err)
		}
	}
	if counted.Counters.PermissionRequests == 0 || counted.Permission("pr-1") == nil {
		t.Fatal("the session decides no permission request: the test proves nothing")
	}
	if !reflect.DeepEqual(forget.Counters, counted.Counters) {
		t.Errorf("counters differ:\n%+v\n%+v", forget.Counters, counted.Counters)
	}
	if len(forget.Permissions) != 0 || forget.Permission("pr-1") != nil || forget.Permission("pr-2") != nil {
		t.Errorf("decided requests kept: %d", len(forget.Permissions))
	}
	c1, c2 := counted.Clone(), forget.Clone()
	c1.Permissions, c2.Permissions = nil, nil
	if a, b := countedView(t, c1), countedView(t, c2); a != b {
		t.Errorf("the states differ beyond the permissions:\n%s\n%s", a, b)
	}
}
