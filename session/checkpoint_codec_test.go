package session_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/record/recordgen"
)

// foldFile folds the recording at path with its text kept in the recording (as replay does),
// calling at with the state after each event (and before the first).
func foldFile(t *testing.T, path string, text bool, at func(pos int, st *session.State)) (*record.Index, *os.File, *session.TextStore) {
	t.Helper()
	ix, err := record.BuildIndexFile(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st := &session.State{}
	var ts *session.TextStore
	if text {
		ts = session.NewTextStore(record.NewFileSource(f), 0)
		st.SetTextStore(ts)
	}
	evs, err := ix.ReadRange(f, 0, ix.Len())
	if err != nil {
		t.Fatal(err)
	}
	at(0, st)
	for i, e := range evs {
		off, n := ix.Loc(i)
		if err := session.ApplyAt(st, e, session.Loc{Off: off, Len: n}); err != nil {
			t.Fatal(err)
		}
		at(i+1, st)
	}
	return ix, f, ts
}

func writeRecording(t *testing.T, evs []session.Event) string {
	t.Helper()
	var b []byte
	for _, e := range evs {
		var err error
		if b, err = record.AppendLine(b, e); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckpointCodecRoundTrip: a state saved and read back (EncodeCheckpoint,
// DecodeCheckpoint) is the state it was, field by field and item by item, after every event of
// a session that uses every event type, with its text in the recording or in memory; and
// folding the rest of the recording into it ends in the same state as one straight fold (the
// unexported fold fields survive too).
func TestCheckpointCodecRoundTrip(t *testing.T) {
	path := writeRecording(t, sessiontest.FullSession())
	for _, text := range []bool{true, false} {
		var saved [][]byte
		var want []string
		_, f, ts := foldFile(t, path, text, func(pos int, st *session.State) {
			var b bytes.Buffer
			if err := st.EncodeCheckpoint(&b); err != nil {
				t.Fatalf("pos %d: %v", pos, err)
			}
			saved = append(saved, b.Bytes())
			want = append(want, sessiontest.Deep(st.Clone()))
		})
		ix, _ := record.BuildIndexFile(path, record.ReadOptions{})
		evs, _ := ix.ReadRange(f, 0, ix.Len())
		end := want[len(want)-1]
		for pos, b := range saved {
			ck, err := session.DecodeCheckpoint(bytes.NewReader(b), ts)
			if err != nil {
				t.Fatalf("text %v, pos %d: %v", text, pos, err)
			}
			st := ck.Clone()
			if got := sessiontest.Deep(st); got != want[pos] {
				t.Fatalf("text %v, pos %d: the state read back differs:\n%s\nwant\n%s", text, pos, got, want[pos])
			}
			for i := pos; i < len(evs); i++ {
				off, n := ix.Loc(i)
				if err := session.ApplyAt(st, evs[i], session.Loc{Off: off, Len: n}); err != nil {
					t.Fatalf("text %v, pos %d, folding #%d: %v", text, pos, evs[i].Seq, err)
				}
			}
			if got := sessiontest.Deep(st); got != end {
				t.Fatalf("text %v: the fold continued from pos %d ends elsewhere than a straight fold", text, pos)
			}
		}
	}
}

// TestCheckpointCodecLong: a generated recording of 4 MB (many subagents, long transcripts
// spanning many store chunks) reads back whole.
func TestCheckpointCodecLong(t *testing.T) {
	var data bytes.Buffer
	if err := recordgen.Generate(&data, 4<<20, 3); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	os.WriteFile(path, data.Bytes(), 0o600)
	var last *session.State
	_, _, ts := foldFile(t, path, true, func(_ int, st *session.State) { last = st })
	var b bytes.Buffer
	if err := last.EncodeCheckpoint(&b); err != nil {
		t.Fatal(err)
	}
	ck, err := session.DecodeCheckpoint(bytes.NewReader(b.Bytes()), ts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sessiontest.Deep(ck.Clone()), sessiontest.Deep(last.Clone()); got != want {
		t.Fatal("a long state read back differs")
	}
	t.Logf("%d MB recording: a %d KB checkpoint", data.Len()>>20, b.Len()>>10)
}

// TestCheckpointCodecDamaged: a checkpoint cut short anywhere, or with a byte changed in its
// header, is refused with an error, never a panic or a half state.
func TestCheckpointCodecDamaged(t *testing.T) {
	st := sessiontest.Fold(t, sessiontest.FullSession())
	var b bytes.Buffer
	if err := st.EncodeCheckpoint(&b); err != nil {
		t.Fatal(err)
	}
	full := b.Bytes()
	for n := 0; n < len(full); n += 1 + n/50 {
		if _, err := session.DecodeCheckpoint(bytes.NewReader(full[:n]), nil); err == nil {
			t.Fatalf("a checkpoint cut at %d of %d bytes was accepted", n, len(full))
		}
	}
	bad := bytes.Clone(full)
	bad[3] ^= 1
	if _, err := session.DecodeCheckpoint(bytes.NewReader(bad), nil); err == nil {
		t.Fatal("a damaged header was accepted")
	}
	if _, err := session.DecodeCheckpoint(bytes.NewReader(append(bytes.Clone(full), 0)), nil); err == nil {
		t.Fatal("trailing bytes were accepted")
	}
}
