package sessiontest

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

func Fold(t testing.TB, evs []session.Event) *session.State {
	t.Helper()
	s := &session.State{}
	for _, e := range evs {
		if err := session.Apply(s, e); err != nil {
			t.Fatalf("apply %v: %v", e, err)
		}
	}
	return s
}

// Deep renders the whole state as JSON (exported fields; pointers followed), including what
// render.Render does not show (flags such as ReviewRequested, PendingRequest) and transcript items.
func Deep(s *session.State) string {
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

// FoldStream folds with apply a session with one subagent whose transcript has n events
// (token runs, tool calls and results, thinking, notes to it) under an open monitor handoff,
// and a command in the log every 50 events. The events are made one at a time, so only the
// state (and the spool) hold memory.
func FoldStream(t testing.TB, st *session.State, apply func(*session.State, session.Event) error, n int) {
	t.Helper()
	ts := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	seq := uint64(0)
	add := func(sub string, d session.Data) {
		seq++
		e := session.Event{V: session.SchemaVersion, Seq: seq, TS: ts.Add(time.Duration(seq) * time.Millisecond), SessionID: "s-stream", Type: d.Type(), SubagentID: sub, Data: d}
		if err := apply(st, e); err != nil {
			t.Fatal(err)
		}
	}
	add("", session.SessionStarted{Schema: 1})
	add("sa-1", session.SubagentSpawned{AgentType: "builder"})
	add("sa-1", session.SubagentActive{InitialState: "running"})
	add("sa-1", session.HandoffInitiated{HandoffMode: session.HandoffMonitor})
	for i := range n {
		switch i % 10 {
		case 0:
			add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c", Tool: "read_file", Args: map[string]any{"path": "x.go"}})
		case 1:
			add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c", Tool: "read_file", Result: "package x\n"})
		case 2:
			add("sa-1", session.TranscriptEvent{EventType: session.TranscriptThinking, Text: "sum first"})
		case 3:
			if i%50 == 3 {
				add("", session.CommandIssued{Line: "/status", Command: "status"})
			} else {
				add("sa-1", session.UserNote{Text: "go on"})
			}
		default:
			add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "word "})
		}
	}
	add("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess})
}

// Retained is the heap that what build makes still holds after a collection: the memory
// tests' measure. build returns what must stay reachable while it is measured.
func Retained(build func() any) int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := int64(ms.HeapAlloc)
	kept := build()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(kept)
	return int64(ms.HeapAlloc) - before
}
