package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sandbox(t *testing.T, o Options) (*Sandbox, string) {
	t.Helper()
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	for name, content := range map[string]string{
		"ws/main.go":           "package main\n\nfunc main() {\n\tprintln(\"hi\") // TODO\n}\n",
		"ws/pkg/util.go":       "package pkg\n// TODO later\n",
		"ws/pkg/gen/out.go":    "package gen // TODO generated\n",
		"ws/pkg/gen/keep.go":   "package gen // TODO kept\n",
		"ws/.gitignore":        "*.log\n/pkg/gen/\n",
		"ws/debug.log":         "TODO in a log\n",
		"ws/.git/config":       "TODO git\n",
		"ws/bin.dat":           "ab\x00cd",
		"ws2/sibling.txt":      "sibling secret",
		"outside/passwd":       "root:x:0:0",
		"ws/sub/.gitignore":    "skip.txt\n",
		"ws/sub/skip.txt":      "TODO skip",
		"ws/sub/seen.txt":      "TODO seen",
		"ws/pkg/gen/.keepme":   "",
		"ws/pkg/gen/notes.txt": "",
	} {
		p := filepath.Join(parent, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(filepath.Join(parent, "outside", "passwd"), filepath.Join(ws, "link-out"))
	os.Symlink(filepath.Join(parent, "outside"), filepath.Join(ws, "dir-out"))
	os.Symlink("main.go", filepath.Join(ws, "link-in"))
	s, err := New(ws, o)
	if err != nil {
		t.Fatal(err)
	}
	return s, parent
}

func call(s *Sandbox, tool, args string) Result { return s.Call(context.Background(), tool, args) }

func TestConfinement(t *testing.T) {
	s, parent := sandbox(t, Options{})
	escapes := []struct{ tool, args string }{
		{"read_file", `{"path": "../outside/passwd"}`},
		{"read_file", `{"path": "/etc/passwd"}`},
		{"read_file", `{"path": "pkg/../../outside/passwd"}`},
		{"read_file", `{"path": "../ws2/sibling.txt"}`},
		{"read_file", `{"path": "link-out"}`},
		{"read_file", `{"path": "dir-out/passwd"}`},
		{"read_file", `{"path": "main.go\u0000x"}`},
		{"write_file", `{"path": "dir-out/new.txt", "content": "x"}`},
		{"write_file", `{"path": "link-out", "content": "pwned"}`},
		{"write_file", `{"path": "../escape.txt", "content": "x"}`},
		{"replace", `{"path": "link-out", "old_string": "root", "new_string": "toor"}`},
		{"glob", `{"pattern": "*", "path": ".."}`},
		{"search_file_content", `{"pattern": "root", "path": "dir-out"}`},
	}
	for _, e := range escapes {
		r := call(s, e.tool, e.args)
		if !r.IsError || !strings.Contains(r.Output, "outside the workspace") && !strings.Contains(r.Output, "NUL") {
			t.Errorf("%s %s: %+v", e.tool, e.args, r)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(parent, "outside", "passwd")); string(b) != "root:x:0:0" {
		t.Errorf("outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(parent, "outside", "new.txt")); err == nil {
		t.Errorf("a file was written outside")
	}
	// Inside paths, absolute or through an inner symlink, work.
	if r := call(s, "read_file", fmt.Sprintf(`{"path": %q}`, filepath.Join(s.Root(), "main.go"))); r.IsError {
		t.Errorf("absolute inside: %+v", r)
	}
	if r := call(s, "read_file", `{"path": "link-in"}`); r.IsError || !strings.Contains(r.Output, "package main") {
		t.Errorf("inner symlink: %+v", r)
	}
	// Walks do not follow symlinks out.
	if r := call(s, "search_file_content", `{"pattern": "root"}`); strings.Contains(r.Output, "root:x") {
		t.Errorf("search followed a symlink out: %s", r.Output)
	}
}

func TestArgumentErrors(t *testing.T) {
	s, _ := sandbox(t, Options{})
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"path": 3}`, `argument "path" must be a string, got a number`},
		{"read_file", `{}`, `missing required argument "path"`},
		{"read_file", `{"path": "main.go", "pth": 1}`, `unknown argument "pth"`},
		{"read_file", `{"path": `, "arguments are not a JSON object"},
		{"read_file", `[1,2]`, "arguments are not a JSON object"},
		{"read_file", `{"path": "main.go", "offset": 1.5}`, "must be an integer"},
		{"nope", `{}`, `unknown tool "nope"`},
		{"read_file", `{"path": "pkg"}`, "is a directory; use glob"},
		{"read_file", `{"path": "missing.go"}`, "no such file"},
		{"read_file", `{"path": "bin.dat"}`, "binary file (5 bytes)"},
		{"replace", `{"path": "main.go", "old_string": "absent", "new_string": "x"}`, "old_string not found in main.go"},
		{"replace", `{"path": "main.go", "old_string": "func  main()  {", "new_string": "x"}`, "matches at line 3 if whitespace is ignored"},
		{"replace", `{"path": "main.go", "old_string": "main", "new_string": "x"}`, "occurs 2 times in main.go, expected 1"},
		{"search_file_content", `{"pattern": "("}`, "bad pattern"},
		{"glob", `{"pattern": "[a"}`, "not a valid glob pattern"},
		{"web_fetch", `{"url": "file:///etc/passwd"}`, "not an http or https URL"},
		{"web_search", `{"query": "x"}`, "no search backend"},
	} {
		r := call(s, c.tool, c.args)
		if !r.IsError || !strings.Contains(r.Output, c.want) {
			t.Errorf("%s %s: %+v, want %q", c.tool, c.args, r, c.want)
		}
	}
}

func TestFileTools(t *testing.T) {
	s, _ := sandbox(t, Options{})
	r := call(s, "read_file", `{"path": "main.go", "offset": 2, "limit": 2}`)
	if r.IsError || !strings.Contains(r.Output, "lines 3-4 of 5") || !strings.Contains(r.Output, "func main") || strings.Contains(r.Output, "package") {
		t.Errorf("range read: %q", r.Output)
	}
	r = call(s, "write_file", `{"path": "new/dir/f.txt", "content": "one two"}`)
	if r.IsError || len(r.Written) != 1 || r.Written[0] != "new/dir/f.txt" {
		t.Fatalf("write: %+v", r)
	}
	os.Chmod(filepath.Join(s.Root(), "new/dir/f.txt"), 0o600)
	r = call(s, "replace", `{"path": "new/dir/f.txt", "old_string": "two", "new_string": "three"}`)
	b, _ := os.ReadFile(filepath.Join(s.Root(), "new/dir/f.txt"))
	st, _ := os.Stat(filepath.Join(s.Root(), "new/dir/f.txt"))
	if r.IsError || string(b) != "one three" || st.Mode().Perm() != 0o600 {
		t.Errorf("replace: %+v %q %v", r, b, st.Mode())
	}
	r = call(s, "replace", `{"path": "main.go", "old_string": "main", "new_string": "Main", "expected_replacements": 2}`)
	if r.IsError {
		t.Errorf("counted replace: %+v", r)
	}
}

func TestGlobSearchIgnore(t *testing.T) {
	s, _ := sandbox(t, Options{})
	r := call(s, "glob", `{"pattern": "**/*"}`)
	for _, hidden := range []string{"debug.log", "pkg/gen/out.go", ".git/config", "sub/skip.txt", "link-out", "dir-out"} {
		if strings.Contains(r.Output, hidden) {
			t.Errorf("glob lists ignored %s:\n%s", hidden, r.Output)
		}
	}
	for _, seen := range []string{"main.go", "pkg/util.go", "sub/seen.txt"} {
		if !strings.Contains(r.Output, seen) {
			t.Errorf("glob misses %s:\n%s", seen, r.Output)
		}
	}
	r = call(s, "search_file_content", `{"pattern": "TODO"}`)
	if r.IsError || !strings.Contains(r.Output, "main.go:4:") || !strings.Contains(r.Output, "pkg/util.go:2:") ||
		strings.Contains(r.Output, "log") || strings.Contains(r.Output, "generated") || strings.Contains(r.Output, "git") || strings.Contains(r.Output, "skip") {
		t.Errorf("search:\n%s", r.Output)
	}
	r = call(s, "search_file_content", `{"pattern": "TODO", "include": "pkg/**"}`)
	if strings.Contains(r.Output, "main.go") || !strings.Contains(r.Output, "pkg/util.go") {
		t.Errorf("include filter:\n%s", r.Output)
	}
	small, _ := sandbox(t, Options{MatchCap: 1})
	if r := call(small, "search_file_content", `{"pattern": "TODO"}`); !strings.Contains(r.Output, "more matches not shown") {
		t.Errorf("match cap:\n%s", r.Output)
	}
}

func TestTruncation(t *testing.T) {
	s, _ := sandbox(t, Options{MaxResult: 1000})
	big := strings.Repeat("é", 5<<20) // 10 MB of two-byte runes
	os.WriteFile(filepath.Join(s.Root(), "big.txt"), []byte(big), 0o644)
	r := call(s, "read_file", `{"path": "big.txt"}`)
	if !r.IsError || !strings.Contains(r.Output, "over the") {
		t.Errorf("size cap: %.200s", r.Output)
	}
	r = call(s, "read_file", `{"path": "big.txt", "offset": 0, "limit": 1}`)
	if len(r.Output) > 1300 || !strings.Contains(r.Output, "truncated") {
		t.Errorf("capped read is %d bytes", len(r.Output))
	}
	r = call(s, "run_shell_command", `{"command": "head -c 10000000 /dev/zero | tr '\\0' x"}`)
	if len(r.Output) > 1300 || !strings.Contains(r.Output, "10000000 bytes total") {
		t.Errorf("capped shell output: %d bytes: %.100s", len(r.Output), r.Output[max(0, len(r.Output)-100):])
	}
}

func TestShell(t *testing.T) {
	s, _ := sandbox(t, Options{Environ: []string{"PATH=" + os.Getenv("PATH"), "FOO_API_KEY=sekrit", "GITHUB_TOKEN=t0k", "PLAIN=visible"}})
	r := call(s, "run_shell_command", `{"command": "env; pwd"}`)
	if r.IsError || strings.Contains(r.Output, "sekrit") || strings.Contains(r.Output, "t0k") || !strings.Contains(r.Output, "PLAIN=visible") || !strings.Contains(r.Output, s.Root()) {
		t.Errorf("env: %s", r.Output)
	}
	if r := call(s, "run_shell_command", `{"command": "echo out; exit 3"}`); !r.IsError || !strings.Contains(r.Output, "exit code 3") || !strings.Contains(r.Output, "out") {
		t.Errorf("exit: %+v", r)
	}

	base := runtime.NumGoroutine()
	start := time.Now()
	r = call(s, "run_shell_command", `{"command": "sleep 30 & echo $! > child.pid; sleep 30; wait", "timeout_s": 1}`)
	if !r.IsError || !strings.Contains(r.Output, "timed out") || time.Since(start) > 5*time.Second {
		t.Errorf("timeout: %+v after %v", r, time.Since(start))
	}
	pidText, _ := os.ReadFile(filepath.Join(s.Root(), "child.pid"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatalf("child pid %q", pidText)
	}
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("child %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	start = time.Now()
	r = s.Call(ctx, "run_shell_command", `{"command": "sleep 30"}`)
	if !r.IsError || !strings.Contains(r.Output, "cancelled") || time.Since(start) > 5*time.Second {
		t.Errorf("cancel: %+v", r)
	}
	deadline = time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines leaked: %d > %d", runtime.NumGoroutine(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWebFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "hello docs")
	}))
	defer srv.Close()
	s, _ := sandbox(t, Options{})
	if r := call(s, "web_fetch", fmt.Sprintf(`{"url": %q}`, srv.URL)); r.IsError || r.Output != "hello docs" {
		t.Errorf("fetch: %+v", r)
	}
	if r := call(s, "web_fetch", fmt.Sprintf(`{"url": %q}`, srv.URL+"/missing")); !r.IsError || !strings.Contains(r.Output, "404") {
		t.Errorf("404: %+v", r)
	}
}

func TestSpecs(t *testing.T) {
	specs := Specs([]string{"write_file", "nope", "read_file"})
	if len(specs) != 2 || specs[0].Name != "write_file" || specs[1].Name != "read_file" {
		t.Fatalf("specs %+v", specs)
	}
	if specs[1].Parameters["type"] != "object" || !Known("run_shell_command") || Known("task") {
		t.Errorf("spec shape")
	}
}
