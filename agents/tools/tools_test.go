package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// fixture builds parent/{ws, ws2, outside} and returns a sandbox on parent/ws. The workspace:
//
//	main.go            5 lines, "main" twice, a TODO
//	pkg/util.go        a TODO
//	pkg/gen/out.go     ignored by /pkg/gen/ in .gitignore
//	debug.log          ignored by *.log
//	keep.log           re-included by !keep.log
//	sub/skip.txt       ignored by sub/.gitignore
//	sub/seen.txt
//	.git/config        never listed or searched
//	bin.dat            binary (NUL byte)
//	link-in -> main.go, dir-in -> pkg          symlinks that stay inside
//	link-out -> ../outside/secret.txt           symlinks that lead out
//	dir-out -> ../outside, link-passwd -> /etc/passwd, rel-up -> ../outside (relative)
//	dangle -> ../outside/created.txt            dangling, leads out
func fixture(t *testing.T, o Options) (*Sandbox, string) {
	t.Helper()
	parent := t.TempDir()
	files := map[string]string{
		"ws/main.go":         "package main\n\nfunc main() {\n\tprintln(\"hi\") // TODO\n}\n",
		"ws/pkg/util.go":     "package pkg\n// TODO later\n",
		"ws/pkg/gen/out.go":  "package gen // TODO generated\n",
		"ws/.gitignore":      "*.log\n!keep.log\n/pkg/gen/\n",
		"ws/debug.log":       "TODO in a log\n",
		"ws/keep.log":        "TODO kept log\n",
		"ws/.git/config":     "TODO git\n",
		"ws/bin.dat":         "ab\x00cd",
		"ws/sub/.gitignore":  "skip.txt\n",
		"ws/sub/skip.txt":    "TODO skip\n",
		"ws/sub/seen.txt":    "TODO seen\n",
		"ws2/sibling.txt":    "sibling secret\n",
		"outside/secret.txt": "outside secret\n",
	}
	for name, content := range files {
		write(t, filepath.Join(parent, name), content)
	}
	ws := filepath.Join(parent, "ws")
	for link, target := range map[string]string{
		"link-in": "main.go", "dir-in": "pkg",
		"link-out":    filepath.Join(parent, "outside", "secret.txt"),
		"dir-out":     filepath.Join(parent, "outside"),
		"link-passwd": "/etc/passwd",
		"rel-up":      "../outside",
		"dangle":      filepath.Join(parent, "outside", "created.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(ws, o)
	if err != nil {
		t.Fatal(err)
	}
	return s, parent
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func call(s *Sandbox, tool, args string) Result { return s.Call(context.Background(), tool, args) }

// jsonArgs builds an argument object.
func jsonArgs(kv ...any) string {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// check asserts a result: wantErr, and every want substring present.
func check(t *testing.T, name string, r Result, wantErr bool, want ...string) {
	t.Helper()
	if r.IsError != wantErr {
		t.Errorf("%s: IsError = %v, want %v; output:\n%s", name, r.IsError, wantErr, r.Output)
	}
	for _, w := range want {
		if !strings.Contains(r.Output, w) {
			t.Errorf("%s: output lacks %q:\n%s", name, w, r.Output)
		}
	}
	if !utf8.ValidString(r.Output) {
		t.Errorf("%s: output is not valid UTF-8", name)
	}
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	write(t, filepath.Join(real, "f"), "x")
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	s, err := New(filepath.Join(dir, "link"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(real)
	if s.Root() != want {
		t.Errorf("Root() = %s, want %s", s.Root(), want)
	}
	if s.o.MaxResult != 64<<10 || s.o.MaxRead != 4<<20 || s.o.MatchCap != 200 || s.o.ShellTimeout.Seconds() != 120 ||
		s.o.Environ == nil || s.o.HTTPClient == nil || s.o.HTTPClient.Timeout.Seconds() != 30 {
		t.Errorf("defaults: %+v", s.o)
	}
	if s, _ := New(real, Options{ShellTimeout: 3600e9}); s.o.ShellTimeout != maxShellTimeout {
		t.Errorf("ShellTimeout not capped: %v", s.o.ShellTimeout)
	}
	for _, bad := range []string{filepath.Join(dir, "missing"), filepath.Join(real, "f")} {
		if _, err := New(bad, Options{}); err == nil {
			t.Errorf("New(%s) succeeded", bad)
		}
	}
}

func TestArguments(t *testing.T) {
	s, _ := fixture(t, Options{})
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"path": 3}`, `read_file: argument "path" must be a string, got the number 3`},
		{"read_file", `{"path": null}`, `argument "path" must be a string, got null`},
		{"read_file", `{"path": ["a"]}`, `argument "path" must be a string, got an array`},
		{"read_file", `{}`, `read_file: missing required argument "path"`},
		{"read_file", ``, `missing required argument "path"`},
		{"read_file", `{"path": "main.go", "pth": 1}`, `unknown argument "pth" (known: path, offset, limit)`},
		{"read_file", `{"path": "main.go", "b": 1, "a": 2}`, `unknown argument "a"`}, // first in sorted order
		{"read_file", `{"path": `, "read_file: arguments are not valid JSON: unexpected EOF"},
		{"read_file", `{"path": "a",}`, "arguments are not valid JSON: invalid character '}'"},
		{"read_file", `{"path": "a"} {}`, "arguments are not valid JSON: data after the object"},
		{"read_file", `[1,2]`, "arguments must be a JSON object, got an array"},
		{"read_file", `null`, "arguments must be a JSON object, got null"},
		{"read_file", `"main.go"`, "arguments must be a JSON object, got a string"},
		{"read_file", `{"path": "main.go", "offset": 1.5}`, `argument "offset" must be an integer, got the number 1.5`},
		{"read_file", `{"path": "main.go", "offset": "2"}`, `argument "offset" must be an integer, got a string`},
		{"read_file", `{"path": "main.go", "offset": 1e20}`, `argument "offset" must be an integer`},
		{"read_file", `{"path": "main.go", "limit": true}`, `argument "limit" must be an integer, got a boolean`},
		{"read_file", `{"path": "main.go", "limit": {}}`, `argument "limit" must be an integer, got an object`},
		{"glob", `{}`, `glob: missing required argument "pattern"`},
		{"search_file_content", `{"path": "."}`, `missing required argument "pattern"`},
		{"write_file", `{"path": "x"}`, `write_file: missing required argument "content"`},
		{"write_file", `{"path": "x", "content": 5}`, `argument "content" must be a string, got the number 5`},
		{"replace", `{"path": "main.go", "old_string": "a"}`, `missing required argument "new_string"`},
		{"replace", `{"path": "main.go", "old_string": "a", "new_string": "b", "expected_replacements": "2"}`, `argument "expected_replacements" must be an integer`},
		{"run_shell_command", `{"cmd": "ls"}`, `unknown argument "cmd" (known: command, timeout_s, description)`},
		{"run_shell_command", `{"command": "ls", "timeout_s": 1.25}`, `argument "timeout_s" must be an integer`},
		{"web_fetch", `{}`, `missing required argument "url"`},
		{"web_search", `{"q": "x"}`, `unknown argument "q"`},
		{"nope", `{}`, `unknown tool "nope" (known: glob, read_file, replace, run_shell_command, search_file_content, web_fetch, web_search, write_file)`},
		{"Read", `{"path": "main.go"}`, `unknown tool "Read"`},
	} {
		check(t, c.tool+" "+c.args, call(s, c.tool, c.args), true, c.want)
	}
	// Accepted spellings: integral floats, null optional values.
	check(t, "offset 1.0", call(s, "read_file", `{"path": "main.go", "offset": 2.0, "limit": 1}`), false, "func main")
	check(t, "null optional", call(s, "read_file", `{"path": "main.go", "offset": null, "limit": null}`), false, "package main")
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		text  string
		total int64
		max   int
		want  string
	}{
		{"hello", 5, 5, "hello"},
		{"hello", 5, 10, "hello"},
		{"hello", 5, 3, "hel\n[... truncated: 5 bytes total, showing the first 3]"},
		{"hello", 100, 10, "hello\n[... truncated: 100 bytes total, showing the first 5]"},
		{"héllo", 6, 2, "h\n[... truncated: 6 bytes total, showing the first 1]"}, // é is 2 bytes: not split
		{"ab€cd", 7, 4, "ab\n[... truncated: 7 bytes total, showing the first 2]"},
		{"ab€cd", 7, 5, "ab€\n[... truncated: 7 bytes total, showing the first 5]"},
		{"hello", -1, 3, "hel\n[... truncated: more than 5 bytes total, showing the first 3]"},
		// Invalid UTF-8: a run of continuation bytes is not backed over to the start.
		{strings.Repeat("\x80", 20), 20, 10, strings.Repeat("\x80", 7) + "\n[... truncated: 20 bytes total, showing the first 7]"},
	} {
		if got := clip(c.text, c.total, c.max); got != c.want {
			t.Errorf("clip(%q, %d, %d) = %q, want %q", c.text, c.total, c.max, got, c.want)
		}
	}
}

func TestSpecs(t *testing.T) {
	all := []string{"read_file", "glob", "search_file_content", "write_file", "replace", "run_shell_command", "web_fetch", "web_search"}
	specs := Specs(append([]string{"task", "Read"}, all...))
	if len(specs) != len(all) {
		t.Fatalf("Specs returned %d specs, want %d", len(specs), len(all))
	}
	for i, sp := range specs {
		if sp.Name != all[i] || !Known(sp.Name) || sp.Description == "" {
			t.Errorf("spec %d: %s", i, sp.Name)
		}
		// The schema must be a valid JSON Schema object that accepts what Call accepts.
		doc, _ := json.Marshal(sp.Parameters)
		var schema jsonschema.Schema
		if err := json.Unmarshal(doc, &schema); err != nil {
			t.Fatal(err)
		}
		sch, err := schema.Resolve(nil)
		if err != nil {
			t.Errorf("%s: schema does not compile: %v", sp.Name, err)
			continue
		}
		if sp.Parameters["type"] != "object" || sp.Parameters["additionalProperties"] != false {
			t.Errorf("%s: schema %s", sp.Name, doc)
		}
		req := sp.Parameters["required"].([]string)
		good := map[string]any{}
		for _, r := range req {
			good[r] = "x"
		}
		if err := sch.Validate(good); err != nil {
			t.Errorf("%s: schema rejects its required args: %v", sp.Name, err)
		}
		if err := sch.Validate(map[string]any{"zzz": 1}); err == nil {
			t.Errorf("%s: schema accepts unknown keys", sp.Name)
		}
	}
	if got := Specs([]string{"write_file", "read_file"}); got[0].Name != "write_file" || got[1].Name != "read_file" {
		t.Errorf("order not kept: %s, %s", got[0].Name, got[1].Name)
	}
	// Callers get their own maps.
	Specs([]string{"glob"})[0].Parameters["properties"].(map[string]any)["pattern"] = "changed"
	if p := Specs([]string{"glob"})[0].Parameters["properties"].(map[string]any)["pattern"]; p == "changed" {
		t.Errorf("Specs shares maps between calls")
	}
	for _, n := range []string{"task", "Bash", "", "READ_FILE"} {
		if Known(n) {
			t.Errorf("Known(%q)", n)
		}
	}
	if !slices.Equal(names(), []string{"glob", "read_file", "replace", "run_shell_command", "search_file_content", "web_fetch", "web_search", "write_file"}) {
		t.Errorf("names() = %v", names())
	}
}

// TestConcurrentCalls: a Sandbox is used from several goroutines (run under -race).
func TestConcurrentCalls(t *testing.T) {
	s, _ := fixture(t, Options{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("c/%d.txt", i)
			if r := call(s, "write_file", jsonArgs("path", name, "content", "v1")); r.IsError {
				t.Errorf("write: %s", r.Output)
			}
			if r := call(s, "replace", jsonArgs("path", name, "old_string", "v1", "new_string", "v2")); r.IsError {
				t.Errorf("replace: %s", r.Output)
			}
			if r := call(s, "glob", `{"pattern": "**/*.go"}`); r.IsError {
				t.Errorf("glob: %s", r.Output)
			}
		})
	}
	wg.Wait()
	if r := call(s, "search_file_content", `{"pattern": "v2", "path": "c"}`); strings.Count(r.Output, ":1: v2") != 8 {
		t.Errorf("after concurrent writes:\n%s", r.Output)
	}
}
