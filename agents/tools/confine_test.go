package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfinementRefusesEscapes(t *testing.T) {
	s, parent := fixture(t, Options{})
	outside := filepath.Join(parent, "outside")
	sibling := filepath.Join(parent, "ws2", "sibling.txt") // shares the root's prefix: /…/ws2 vs /…/ws
	for _, c := range []struct{ name, tool, args string }{
		{"dotdot", "read_file", `{"path": "../outside/secret.txt"}`},
		{"absolute /etc/passwd", "read_file", `{"path": "/etc/passwd"}`},
		{"absolute outside", "read_file", jsonArgs("path", filepath.Join(outside, "secret.txt"))},
		{"climb through a dir", "read_file", `{"path": "pkg/../../outside/secret.txt"}`},
		{"climb from a missing dir", "read_file", `{"path": "a/../../x"}`},
		{"sibling with the root as prefix", "read_file", `{"path": "../ws2/sibling.txt"}`},
		{"absolute sibling with the root as prefix", "read_file", jsonArgs("path", sibling)},
		{"symlink to /etc/passwd", "read_file", `{"path": "link-passwd"}`},
		{"symlink file out", "read_file", `{"path": "link-out"}`},
		{"symlinked dir out", "read_file", `{"path": "dir-out/secret.txt"}`},
		{"relative symlinked dir out", "read_file", `{"path": "rel-up/secret.txt"}`},
		{"write through symlinked dir", "write_file", `{"path": "dir-out/new.txt", "content": "x"}`},
		{"write new dirs through symlinked dir", "write_file", `{"path": "rel-up/a/b/new.txt", "content": "x"}`},
		{"write final symlink out", "write_file", `{"path": "link-out", "content": "pwned"}`},
		{"write dangling symlink out", "write_file", `{"path": "dangle", "content": "pwned"}`},
		{"write dotdot", "write_file", `{"path": "../escape.txt", "content": "x"}`},
		{"write climb", "write_file", `{"path": "sub/../../escape.txt", "content": "x"}`},
		{"write absolute", "write_file", jsonArgs("path", filepath.Join(parent, "escape.txt"), "content", "x")},
		{"replace final symlink out", "replace", `{"path": "link-out", "old_string": "outside", "new_string": "pwned"}`},
		{"replace through symlinked dir", "replace", `{"path": "dir-out/secret.txt", "old_string": "outside", "new_string": "pwned"}`},
		{"glob dotdot", "glob", `{"pattern": "*", "path": ".."}`},
		{"glob symlinked dir", "glob", `{"pattern": "*", "path": "dir-out"}`},
		{"search symlinked dir", "search_file_content", `{"pattern": "secret", "path": "dir-out"}`},
		{"search symlink file", "search_file_content", `{"pattern": "secret", "path": "link-out"}`},
		{"search absolute", "search_file_content", `{"pattern": "root", "path": "/etc"}`},
	} {
		check(t, c.name, call(s, c.tool, c.args), true, "outside the workspace")
	}
	for tool, args := range map[string]string{
		"read_file":           jsonArgs("path", "main.go\x00"),
		"write_file":          jsonArgs("path", "x\x00/../../../escape.txt", "content", "x"),
		"replace":             jsonArgs("path", "main.go\x00", "old_string", "a", "new_string", "b"),
		"glob":                jsonArgs("pattern", "*", "path", "pkg\x00"),
		"search_file_content": jsonArgs("pattern", "x", "path", "pkg\x00"),
	} {
		check(t, tool+" NUL", call(s, tool, args), true, "contains a NUL byte")
	}
	// Nothing outside changed or appeared.
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside secret\n" {
		t.Errorf("outside file changed: %q", b)
	}
	for _, p := range []string{filepath.Join(outside, "new.txt"), filepath.Join(outside, "a"), filepath.Join(outside, "created.txt"),
		filepath.Join(parent, "escape.txt")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	for _, link := range []string{"link-out", "dangle"} {
		if fi, err := os.Lstat(filepath.Join(s.Root(), link)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink", link)
		}
	}
}

func TestConfinementMessages(t *testing.T) {
	s, parent := fixture(t, Options{})
	r := call(s, "read_file", `{"path": "../outside/secret.txt"}`)
	check(t, "dotdot", r, true, "read_file: ../outside/secret.txt is outside the workspace "+s.Root())
	r = call(s, "write_file", `{"path": "dangle", "content": "x"}`)
	check(t, "dangling", r, true, "write_file: dangle is outside the workspace", "a symlink leads to "+filepath.Join(parent, "outside", "created.txt"))
}

func TestConfinementAllowsInside(t *testing.T) {
	s, _ := fixture(t, Options{})
	check(t, "absolute inside", call(s, "read_file", jsonArgs("path", filepath.Join(s.Root(), "main.go"))), false, "package main")
	check(t, "dot slash", call(s, "read_file", `{"path": "./main.go"}`), false, "package main")
	check(t, "dotdot inside", call(s, "read_file", `{"path": "pkg/../main.go"}`), false, "package main")
	check(t, "symlink inside", call(s, "read_file", `{"path": "link-in"}`), false, "package main")
	check(t, "symlinked dir inside", call(s, "read_file", `{"path": "dir-in/util.go"}`), false, "package pkg")
	check(t, "glob root by absolute path", call(s, "glob", jsonArgs("pattern", "*.go", "path", s.Root())), false, "main.go")
	// Writing through a symlink inside changes its target and keeps the link.
	r := call(s, "write_file", `{"path": "link-in", "content": "package main\n"}`)
	check(t, "write via link", r, false, "overwrote main.go")
	if len(r.Written) != 1 || r.Written[0] != "main.go" {
		t.Errorf("Written = %v, want [main.go]", r.Written)
	}
	if fi, _ := os.Lstat(filepath.Join(s.Root(), "link-in")); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link-in was replaced by a file")
	}
	r = call(s, "write_file", `{"path": "dir-in/new/deep.txt", "content": "x"}`)
	check(t, "write via dir link", r, false)
	if len(r.Written) != 1 || r.Written[0] != "pkg/new/deep.txt" {
		t.Errorf("Written = %v", r.Written)
	}
}

func TestResolveOddPaths(t *testing.T) {
	s, _ := fixture(t, Options{})
	if err := os.Symlink("loop2", filepath.Join(s.Root(), "loop1")); err != nil {
		t.Fatal(err)
	}
	os.Symlink("loop1", filepath.Join(s.Root(), "loop2"))
	check(t, "symlink loop", call(s, "read_file", `{"path": "loop1"}`), true, "too many levels of symbolic links")
	check(t, "file as a directory", call(s, "write_file", `{"path": "main.go/x", "content": "x"}`), true, "main.go/x: not a directory")
	check(t, "empty path", call(s, "read_file", `{"path": ""}`), true, "path is empty")
	check(t, "root is not a file", call(s, "write_file", `{"path": ".", "content": "x"}`), true, "is the workspace root")
	for _, c := range []struct{ in, want string }{
		{"main.go", "main.go"}, {".", "."}, {"./pkg//util.go", "pkg/util.go"}, {"link-in", "main.go"},
		{"dir-in/../main.go", "main.go"}, // lexical: dir-in/.. is the root
		{"new/dir/file", "new/dir/file"}, {"dir-in/new/file", "pkg/new/file"},
	} {
		if got, err := s.resolve(c.in); err != nil || got != c.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
