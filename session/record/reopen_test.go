package record

import (
	"os"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

// A Hold keeps lines in the buffer, a lifecycle event and the sync loop's tick included, and
// Release writes them together and fsyncs for the lifecycle event.
func TestRecorderHoldWritesOnce(t *testing.T) {
	opts, tick := manualTicks(RecorderOptions{Environ: []string{}})
	r, err := OpenRecorder(t.TempDir(), "s-h", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mustAppend(t, r, stamp(session.New("", session.SessionStarted{Schema: 1}), 1))
	if err := r.Hold(); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, r, stamp(session.New("sa-1", session.SubagentError{Error: "x"}), 2))
	tick()
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(fileLines(t, r.Path())); n != 1 {
		t.Fatalf("%d lines on disk during a Hold, want 1 (the start)", n)
	}
	mustAppend(t, r, stamp(session.New("sa-1", session.RunnerCursor{Job: "J", Runner: "r", Seq: 3}), 3))
	syncs := r.syncs.Load()
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if n := len(fileLines(t, r.Path())); n != 3 || r.syncs.Load() != syncs+1 {
		t.Fatalf("after Release: %d lines, %d fsyncs; want 3 lines and one fsync", n, r.syncs.Load()-syncs)
	}
}

// Reopening a recording cuts a torn last line and appends after the last whole one; its
// offsets (NextOffset) count from the file's end.
func TestReopenRecorderFileCutsTornLine(t *testing.T) {
	opts, _ := manualTicks(RecorderOptions{Environ: []string{}})
	r, err := OpenRecorder(t.TempDir(), "s-r", opts)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, r, stamp(session.New("", session.SessionStarted{Schema: 1}), 1))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	path := r.Path()
	whole, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"v":1,"seq":2,"ts":"2026-11-`)
	f.Close()
	r2, torn, err := ReopenRecorderFile(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if torn != int64(len(`{"v":1,"seq":2,"ts":"2026-11-`)) {
		t.Errorf("torn %d bytes", torn)
	}
	if off, ok := r2.NextOffset(); !ok || off != int64(len(whole)) {
		t.Errorf("NextOffset %d %v, want %d", off, ok, len(whole))
	}
	mustAppend(t, r2, stamp(session.New("", session.UserNote{Text: "again"}), 2))
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	lines := fileLines(t, path)
	if len(lines) != 2 || !strings.Contains(lines[1], `"seq":2`) || !strings.Contains(lines[1], "again") {
		t.Fatalf("after the reopen: %q", lines)
	}
	evs, _, err := ReadAll(path, ReadOptions{})
	if err != nil || len(evs) != 2 {
		t.Fatalf("read back: %d events, %v", len(evs), err)
	}
}
