//go:build unix

package imports

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFORefused: a named pipe (named, or found in a folder) is refused without being
// opened, whatever the format asked; an open of one with no writer would block for ever.
func TestFIFORefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "rollout-2026-01-01T00-00-00-0199.jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, f := range []Format{Auto, Codex} {
			us, errs := Plan([]string{p}, f)
			if len(us) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), p+": a named pipe (FIFO), not a regular file") {
				t.Errorf("format %s: %v %v", f, us, errs)
			}
		}
		if us, errs := Plan([]string{dir}, Auto); len(us) != 0 || len(errs) != 0 {
			t.Errorf("folder: %v %v", us, errs)
		}
		if _, err := Detect(p); err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("detect: %v", err)
		}
		if _, err := Import(Unit{Format: Codex, Path: p}, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("import: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the import hangs on a FIFO")
	}
}
