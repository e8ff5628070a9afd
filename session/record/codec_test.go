package record

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
	"github.com/summit-dev/summit/session/render"
)

// TestReplayEqualsLive encodes a session to JSONL, decodes it and folds it again: the state
// and its rendering must be identical to folding the original events.
func TestReplayEqualsLive(t *testing.T) {
	evs := sessiontest.FullSession()
	live := sessiontest.Fold(t, evs)
	var buf []byte
	var err error
	for _, e := range evs {
		if buf, err = AppendLine(buf, e); err != nil {
			t.Fatal(err)
		}
	}
	var replayed []session.Event
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
	replay := sessiontest.Fold(t, replayed)
	if a, b := render.Render(live), render.Render(replay); a != b {
		t.Fatalf("replay renders differently:\n--- live\n%s\n--- replay\n%s", a, b)
	}
	if a, b := sessiontest.Deep(live), sessiontest.Deep(replay); a != b {
		t.Fatalf("replay state differs:\n--- live\n%s\n--- replay\n%s", a, b)
	}
	if !reflect.DeepEqual(render.ComputeMetrics(live), render.ComputeMetrics(replay)) {
		t.Fatal("replay metrics differ")
	}
}
