package session_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

// textEvents is the full session with long coalesced runs of deltas from two subagents,
// interleaved, added before its end.
func textEvents(t *testing.T) []session.Event {
	t.Helper()
	evs := sessiontest.FullSession()
	last := evs[len(evs)-1]
	evs = evs[:len(evs)-1]
	b := sessiontest.NewBuilder()
	seq := evs[len(evs)-1].Seq
	var subs []string
	for _, e := range evs {
		if e.Type == session.TypeSubagentSpawned {
			subs = append(subs, e.SubagentID)
		}
	}
	// Two fresh subagents stream, interleaved, runs of tokens and thinking with tool calls
	// between.
	for _, id := range []string{"sa-90", "sa-91"} {
		seq++
		e := b.Add(id, session.SubagentSpawned{AgentType: "builder", PermissionMode: "acceptEdits", TaskDescription: "stream " + id})
		e.Seq, e.TS, e.SessionID = seq, evs[len(evs)-1].TS, evs[0].SessionID
		evs = append(evs, e)
	}
	for i := range 300 {
		id := []string{"sa-90", "sa-91"}[i%2]
		var d session.Data
		switch k := i / 2 % 40; {
		case k < 25:
			d = session.TranscriptEvent{EventType: session.TranscriptToken, Text: fmt.Sprintf("tok%d ", i)}
		case k < 30:
			d = session.TranscriptEvent{EventType: session.TranscriptThinking, Text: fmt.Sprintf("hm%d ", i)}
		case k == 30:
			d = session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: fmt.Sprint("c", i), Tool: "read_file", Args: map[string]any{"path": fmt.Sprint("f", i)}}
		case k == 31:
			d = session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: fmt.Sprint("c", i-2), Tool: "read_file", Result: strings.Repeat("line\n", i%7)}
		default:
			d = session.TranscriptEvent{EventType: session.TranscriptToken, Text: ""}
		}
		seq++
		e := b.Add(id, d)
		e.Seq, e.TS, e.SessionID = seq, evs[len(evs)-1].TS, evs[0].SessionID
		evs = append(evs, e)
	}
	seq++
	last.Seq = seq
	return append(evs, last)
}

// encode writes evs as a recording and returns it with each event's place.
func encode(t *testing.T, evs []session.Event) ([]byte, []session.Loc) {
	t.Helper()
	var data []byte
	locs := make([]session.Loc, len(evs))
	for i, e := range evs {
		off := len(data)
		var err error
		if data, err = record.AppendLine(data, e); err != nil {
			t.Fatal(err)
		}
		locs[i] = session.Loc{Off: int64(off), Len: len(data) - off}
	}
	// Decode them back: the fold sees what a reader sees.
	for i := range evs {
		ev, err := record.DecodeLine(data[locs[i].Off : locs[i].Off+int64(locs[i].Len)])
		if err != nil {
			t.Fatal(err)
		}
		evs[i] = ev
	}
	return data, locs
}

func shown(s *session.State) string { return render.Render(s) + sessiontest.Deep(s) }

// TestTextStoreFold: a state whose transcript text lives in the recording (read back through
// a cache small enough to evict all the time) shows, after every event, exactly what a state
// holding all text in memory shows; so do clones taken along the way and folded on.
func TestTextStoreFold(t *testing.T) {
	evs := textEvents(t)
	data, locs := encode(t, evs)
	mem := &session.State{}
	ts := session.NewTextStore(record.NewFileSource(bytes.NewReader(data)), 300)
	rec := &session.State{}
	rec.SetTextStore(ts)
	var clones []*session.State
	var cloneAt []int
	for i, e := range evs {
		if err := session.Apply(mem, e); err != nil {
			t.Fatalf("apply %v: %v", e, err)
		}
		if err := session.ApplyAt(rec, e, locs[i]); err != nil {
			t.Fatalf("apply at %v: %v", e, err)
		}
		if got, want := shown(rec), shown(mem); got != want {
			t.Fatalf("after %v the text-store state differs:\n%s\nwant:\n%s", e, got, want)
		}
		if i%37 == 0 {
			clones, cloneAt = append(clones, rec.Clone()), append(cloneAt, i+1)
		}
	}
	for k, c := range clones {
		for i := cloneAt[k]; i < len(evs); i++ {
			if err := session.ApplyAt(c, evs[i], locs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := shown(c), shown(mem); got != want {
			t.Fatalf("a clone taken after %d events and folded on differs", cloneAt[k])
		}
	}
	if _, reads := ts.CacheStats(); reads == 0 {
		t.Error("nothing was read back from the recording")
	}
	// Events with no place (a zero Loc) keep their text in memory, even mixed into one item.
	mixed := &session.State{}
	mixed.SetTextStore(ts)
	for i, e := range evs {
		at := locs[i]
		if i%3 == 0 {
			at = session.Loc{}
		}
		if err := session.ApplyAt(mixed, e, at); err != nil {
			t.Fatal(err)
		}
	}
	if shown(mixed) != shown(mem) {
		t.Error("mixing events with and without a place changes what is shown")
	}
}

// TestCheckpointFold: folding on from any checkpoint (restored with Clone) gives the state of
// a straight fold, with and without a text store, whatever the spacing.
func TestCheckpointFold(t *testing.T) {
	evs := textEvents(t)
	data, locs := encode(t, evs)
	want := shown(sessiontest.Fold(t, evs))
	for _, every := range []int{1, 2, 5, 64} {
		for _, withText := range []bool{false, true} {
			st := &session.State{}
			if withText {
				st.SetTextStore(session.NewTextStore(record.NewFileSource(bytes.NewReader(data)), 0))
			}
			var prev *session.State
			var cks []*session.State
			var at []int
			for i, e := range evs {
				if err := session.ApplyAt(st, e, locs[i]); err != nil {
					t.Fatal(err)
				}
				if (i+1)%every == 0 {
					prev = st.Checkpoint(prev)
					cks, at = append(cks, prev), append(at, i+1)
				}
			}
			for k, ck := range cks {
				c := ck.Clone()
				for i := at[k]; i < len(evs); i++ {
					if err := session.ApplyAt(c, evs[i], locs[i]); err != nil {
						t.Fatal(err)
					}
				}
				if got := shown(c); got != want {
					t.Fatalf("every %d, text %v: folding on from the checkpoint after %d events differs", every, withText, at[k])
				}
			}
		}
	}
}
