package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// selfCommand is how the user runs this same summit again from their shell, for the follow-up
// commands summit prints ("replay it with: …"). A printed command that answers "command not
// found" is a lie, so it is one of:
//
//   - "summit", when `summit` on PATH is this very executable (go install, a release binary);
//   - "go run ./cmd/summit" (or the package's import path outside the checkout), when `go run`
//     built this process: its executable is the go command's temporary .../go-build…/b001/exe/summit,
//     removed when the process ends, and nothing is installed;
//   - otherwise the executable's own path (a `go build` in some folder, a copy not on PATH).
var selfCommand = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "summit"
	}
	onPath, _ := exec.LookPath("summit")
	wd, _ := os.Getwd()
	return selfCommandFor(exe, onPath, wd, func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.IsDir()
	}, func(a, b string) bool {
		sa, err1 := os.Stat(a)
		sb, err2 := os.Stat(b)
		return err1 == nil && err2 == nil && os.SameFile(sa, sb)
	})
})

// selfCommandFor is selfCommand over its inputs: the executable's path, what `summit` resolves
// to on PATH ("" for nothing), the working directory, and the file system's answers.
func selfCommandFor(exe, onPath, wd string, isDir func(string) bool, same func(a, b string) bool) string {
	if onPath != "" && same(exe, onPath) {
		return "summit"
	}
	if builtByGoRun(exe) {
		// `go run ./cmd/summit` works from the checkout's root, where the quick start runs
		// it; elsewhere inside the module the import path does.
		if wd != "" && isDir(filepath.Join(wd, "cmd", "summit")) {
			return "go run ./cmd/summit"
		}
		return "go run github.com/summit-dev/summit/cmd/summit"
	}
	return shellQuote(exe)
}

// builtByGoRun reports whether exe is where `go run` puts what it builds:
// $GOTMPDIR (else the system's temp dir)/go-build<digits>/b<digits>/exe/<name>.
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "exe" {
		return false
	}
	action := filepath.Dir(dir)
	work := filepath.Base(filepath.Dir(action))
	return strings.HasPrefix(filepath.Base(action), "b") && strings.HasPrefix(work, "go-build")
}

// installHint follows a printed command that only works from the checkout: how to get a
// `summit` on PATH instead ("" when one is already there).
func installHint(self string) string {
	if !strings.HasPrefix(self, "go run ") {
		return ""
	}
	return "(or install it once with 'go install " + strings.TrimPrefix(self, "go run ") + "' and run summit from your PATH)\n"
}
