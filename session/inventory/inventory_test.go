package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("kept.md"), []byte("same"), 0o644)
	os.WriteFile(p("edited.md"), []byte("before"), 0o644)
	os.WriteFile(p("gone.md"), []byte("x"), 0o644)
	if err := syscall.Mkfifo(p("fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := Take([]string{p("kept.md"), p("edited.md"), p("gone.md"), p("fifo.md"), p("missing.md")})
	if len(files) != 3 {
		t.Fatalf("Take kept %d files (a FIFO and a missing file are skipped): %+v", len(files), files)
	}
	start := time.Now().Add(-time.Second)
	inv := Inventory{Session: "s-1", Started: start, Files: files}
	path := filepath.Join(dir, ".summit", "inventory.json")
	if err := Save(path, inv); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("inventory mode %v", st.Mode().Perm())
	}
	// During the session: one edited, one added, one removed.
	os.WriteFile(p("edited.md"), []byte("after!"), 0o644)
	os.WriteFile(p("new.md"), []byte("planted"), 0o644)
	os.Remove(p("gone.md"))
	if err := MarkEnded(path, "s-1", time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := MarkEnded(path, "s-other", time.Now()); err != nil {
		t.Fatal(err)
	}
	prev, err := Load(path)
	if err != nil || prev.Ended.IsZero() || prev.Session != "s-1" {
		t.Fatalf("Load: %+v, %v", prev, err)
	}
	// After it ended: one more file, with a modification time after the end.
	os.WriteFile(p("later.md"), []byte("later"), 0o644)
	later := time.Now().Add(time.Hour)
	os.Chtimes(p("later.md"), later, later)
	got := Compare(prev, Take([]string{p("kept.md"), p("edited.md"), p("new.md"), p("later.md")}))
	want := []session.AgentFileChange{
		{Path: p("edited.md"), Change: session.FileChanged, During: "s-1"},
		{Path: p("gone.md"), Change: session.FileRemoved},
		{Path: p("later.md"), Change: session.FileNew},
		{Path: p("new.md"), Change: session.FileNew, During: "s-1"},
	}
	if len(got) != len(want) {
		t.Fatalf("Compare = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if txt := render.ChangedFilesText(got, dir); !strings.HasPrefix(txt, "4 agent or config files changed since the last session, in effect from now: edited.md (changed, while session s-1 ran), gone.md (removed)") {
		t.Errorf("text: %s", txt)
	}
	if Compare(nil, Take([]string{p("kept.md")})) != nil {
		t.Error("the first session names changes")
	}
	// A damaged inventory is an error naming the file, not a crash.
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("damaged inventory: %v", err)
	}
	if inv, err := Load(filepath.Join(dir, "none.json")); inv != nil || err != nil {
		t.Errorf("missing inventory: %v %v", inv, err)
	}
}
