//go:build unix

package record

import (
	"errors"
	"path/filepath"
	"testing"
)

// One summit writes a recording at a time: while a recorder holds it, reopening it (summit
// resume, a replay's reattach) is refused and Busy says so; once it is closed (or its summit
// died: the kernel drops the lock) it reopens.
func TestRecordingWriterLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	rec, err := OpenRecorderFile(path, RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if !Busy(path) {
		t.Error("Busy is false while a recorder holds the recording")
	}
	if r2, _, err := ReopenRecorderFile(path, RecorderOptions{Environ: []string{}}); !errors.Is(err, ErrRecordingInUse) {
		if r2 != nil {
			r2.Close()
		}
		t.Fatalf("reopening a recording being written: %v, want ErrRecordingInUse", err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if Busy(path) {
		t.Error("Busy is true after the recorder closed")
	}
	r2, _, err := ReopenRecorderFile(path, RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatalf("reopening a closed recording: %v", err)
	}
	if !Busy(path) {
		t.Error("Busy is false while the reopened recorder holds it")
	}
	r2.Close()
}
