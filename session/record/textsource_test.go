package record

import (
	"path/filepath"
	"testing"

	"github.com/summit-dev/summit/session"
)

// TestRecorderOffsets: NextOffset before an Append and after its Flush brackets the event's
// line, so a PathSource reads back exactly the event the recorder returned (as redacted),
// while the recording is still being written.
func TestRecorderOffsets(t *testing.T) {
	rec, err := OpenRecorderFile(filepath.Join(t.TempDir(), "r.jsonl"), RecorderOptions{Environ: []string{"GITHUB_TOKEN=" + fakeGHP}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	src := NewPathSource(rec.Path())
	var locs []session.Loc
	var want []session.Event
	for i, e := range benchEvents(500) {
		if i == 7 {
			e = session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "token " + fakeGHP})
			e.Seq, e.SessionID = uint64(i+1), "s-1"
		}
		before, ok := rec.NextOffset()
		if !ok {
			t.Fatal("no offset from a file recorder")
		}
		got, err := rec.Append(e)
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		after, _ := rec.NextOffset()
		locs, want = append(locs, session.Loc{Off: before, Len: int(after - before)}), append(want, got)
		if i%50 == 49 {
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
			evs, err := src.ReadEvents(locs)
			if err != nil {
				t.Fatal(err)
			}
			for k := range evs {
				a, _ := AppendLine(nil, evs[k])
				b, _ := AppendLine(nil, want[k])
				if string(a) != string(b) {
					t.Fatalf("event %d read back as %s, recorded %s", k, a, b)
				}
			}
		}
	}
}
