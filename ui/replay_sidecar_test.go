package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/record/recordgen"
)

// TestMain keeps the replay sidecars the tests write out of the user's cache dir.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "summit-ui-sidecars-")
	if err != nil {
		panic(err)
	}
	sidecarDir = func() (string, error) { return dir, nil }
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// straight is what the state after folding the whole recording at path shows.
func straight(t *testing.T, path string) string {
	t.Helper()
	evs, _, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := &session.State{}
	for _, e := range evs {
		if err := session.Apply(st, e); err != nil {
			t.Fatal(err)
		}
	}
	return shownState(st)
}

// openBlocked opens path with the background fold held (it folds nothing until release).
func openBlocked(t *testing.T, path string) (r *Replay, release func()) {
	t.Helper()
	gate := make(chan struct{})
	foldHook = func() { <-gate }
	r, err := OpenReplay(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var done bool
	release = func() {
		if !done {
			done = true
			close(gate)
			r.Close()
			foldHook = nil
		}
	}
	t.Cleanup(release)
	return r, release
}

// TestReplaySidecar: once a replay has folded a recording to its end, the next replay of it
// seeks to the end at once, before its own fold has folded anything (the sidecar), and shows
// exactly what a straight fold shows; a recording appended to since uses the sidecar as the
// state at its old end; a recording changed in place does not use it; and Sidecars says which
// serve. Old code: the seek to the end waits for the background fold.
func TestReplaySidecar(t *testing.T) {
	defer func(a, c int64, b, d int) {
		checkpointBytes, syncBytes, checkpointEvents, foldBatch = a, c, b, d
	}(checkpointBytes, syncBytes, checkpointEvents, foldBatch)
	checkpointBytes, syncBytes, checkpointEvents, foldBatch = 64<<10, 160<<10, 700, 100
	var data bytes.Buffer
	if err := recordgen.Generate(&data, 2<<20, 11); err != nil {
		t.Fatal(err)
	}
	// Without its SessionEnded, so that it can be appended to.
	raw := data.Bytes()
	if i := bytes.LastIndexByte(raw[:len(raw)-1], '\n'); bytes.Contains(raw[i:], []byte(`"type":"SessionEnded"`)) {
		raw = raw[:i+1]
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	r, err := OpenReplay(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.SidecarLoaded() {
		t.Fatal("a sidecar before any replay finished")
	}
	r.WaitCaughtUp()
	r.Close() // after the sidecar is written

	r2, release := openBlocked(t, path)
	if !r2.SidecarLoaded() {
		t.Fatal("the second replay found no sidecar")
	}
	if err := r2.Seek(r2.Len()); err != nil {
		t.Fatal(err)
	}
	if _, pending := r2.Pending(); pending || r2.Pos() != r2.Len() {
		t.Fatalf("the seek to the end waits for the fold (pending %v, at %d of %d)", pending, r2.Pos(), r2.Len())
	}
	if got, want := shownState(r2.State()), straight(t, path); got != want {
		t.Fatal("the end restored from the sidecar shows another state than a straight fold")
	}
	release()

	// Appended to: the sidecar is the state at the old end, and the seek folds the rest.
	all, _, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	end := all[len(all)-1]
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var more []byte
	for i := range 5 {
		e := session.Event{V: 1, Seq: end.Seq + uint64(i) + 1, TS: end.TS.Add(time.Second), SessionID: end.SessionID, Type: session.TypeUserNote,
			Data: session.UserNote{Text: "appended"}}
		if more, err = record.AppendLine(more, e); err != nil {
			t.Fatal(err)
		}
	}
	f.Write(more)
	f.Close()
	r3, release3 := openBlocked(t, path)
	if !r3.SidecarLoaded() {
		t.Fatal("an appended recording does not reuse its sidecar as a prefix")
	}
	if err := r3.Seek(r3.Len()); err != nil {
		t.Fatal(err)
	}
	if _, pending := r3.Pending(); pending {
		t.Fatal("the seek to the end of an appended recording waits for the fold")
	}
	if got, want := shownState(r3.State()), straight(t, path); got != want {
		t.Fatal("the appended recording's end shows another state than a straight fold")
	}
	release3()

	// Changed in the middle of the prefix the sidecar covers (one letter of a word, the
	// same size): the sidecar does not fit, whether or not the file is as long as it was.
	b, _ := os.ReadFile(path)
	i := len(b)/2 + bytes.Index(b[len(b)/2:], []byte("refund"))
	copy(b[i:], "Refund")
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r4, release4 := openBlocked(t, path)
	if r4.SidecarLoaded() {
		t.Fatal("a recording changed in place used its old sidecar")
	}
	release4()

	cars, err := sidecarsOf(path)
	if err != nil || len(cars) != 1 || cars[0].Stale == "" {
		t.Fatalf("sidecars of a changed recording: %+v, %v", cars, err)
	}
	r5, err := OpenReplay(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r5.WaitCaughtUp()
	r5.Close()
	if cars, _ := sidecarsOf(path); len(cars) != 1 || cars[0].Stale != "" || cars[0].Bytes <= 0 {
		t.Fatalf("the rewritten sidecar: %+v", cars)
	}
	os.Remove(path)
	if cars, _ := sidecarsOf(path); len(cars) != 1 || cars[0].Stale != "its recording is gone" {
		t.Fatalf("the sidecar of a removed recording: %+v", cars)
	}
}

// sidecarsOf are the sidecars of one recording (other tests write theirs beside).
func sidecarsOf(path string) ([]Sidecar, error) {
	all, err := Sidecars()
	var out []Sidecar
	for _, c := range all {
		if c.Recording == path {
			out = append(out, c)
		}
	}
	return out, err
}
