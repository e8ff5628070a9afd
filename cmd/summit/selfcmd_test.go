package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSelfCommand: the follow-up commands summit prints ("replay it with: …") name a command
// that runs: `summit` only when `summit` on PATH is this executable; the go command's spelling
// when `go run` built it (the README's `go run ./cmd/summit demo` installs nothing, so a bare
// `summit replay …` answered "command not found"); else the executable's path.
func TestSelfCommand(t *testing.T) {
	t.Parallel()
	root := t.TempDir() // a checkout: it has cmd/summit
	dirs := map[string]bool{filepath.Join(root, "cmd", "summit"): true}
	isDir := func(p string) bool { return dirs[p] }
	same := func(a, b string) bool { return a == b }
	goRun := "/tmp/go-build2586688421/b001/exe/summit" // as `go run` names its build (Go 1.26)
	for _, c := range []struct {
		name, exe, onPath, wd, want string
	}{
		{"installed", "/home/u/go/bin/summit", "/home/u/go/bin/summit", root, "summit"},
		{"go run at the checkout's root", goRun, "", root, "go run ./cmd/summit"},
		{"go run elsewhere", goRun, "", "/home/u", "go run github.com/summit-dev/summit/cmd/summit"},
		{"go run beside an installed one", goRun, "/home/u/go/bin/summit", root, "go run ./cmd/summit"},
		{"go build in the checkout", filepath.Join(root, "summit"), "", root, filepath.Join(root, "summit")},
		{"another summit on PATH", "/opt/summit 2/summit", "/usr/bin/summit", root, `'/opt/summit 2/summit'`},
		{"a folder named exe is not go run's", "/home/u/exe/summit", "", root, "/home/u/exe/summit"},
	} {
		if got := selfCommandFor(c.exe, c.onPath, c.wd, isDir, same); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}

	// The note after the workbench: a command that replays, and how to install when the
	// command only works from the checkout.
	note := recordedNoteAs("go run ./cmd/summit", "/d/s-1.jsonl")
	if !strings.Contains(note, "replay it with: go run ./cmd/summit replay /d/s-1.jsonl\n") ||
		!strings.Contains(note, "go install ./cmd/summit") {
		t.Errorf("go run note:\n%s", note)
	}
	if note := recordedNoteAs("summit", "/d/s-1.jsonl"); strings.Contains(note, "install") {
		t.Errorf("installed note has an install hint:\n%s", note)
	}
}
