package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	s, _ := fixture(t, Options{MaxRead: 100})
	ws := s.Root()
	write(t, filepath.Join(ws, "nonl.txt"), "one\ntwo\nthree")
	write(t, filepath.Join(ws, "crlf.txt"), "a\r\nb\r\n")
	write(t, filepath.Join(ws, "empty.txt"), "")
	write(t, filepath.Join(ws, "latin1.txt"), "caf\xe9 cr\xe8me br\xfbl\xe9e, a long enough line of plain text around it\n")
	write(t, filepath.Join(ws, "noise.bin"), strings.Repeat("\xff\xfe\x80abc", 15))
	write(t, filepath.Join(ws, "big.txt"), strings.Repeat("0123456789\n", 20)) // 220 bytes > MaxRead
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, args string
		wantErr    bool
		want       string // the whole output when exact, else a substring
		exact      bool
	}{
		{"whole", `{"path": "main.go"}`, false, "package main\n\nfunc main() {\n\tprintln(\"hi\") // TODO\n}\n", true},
		// A range that stops before the end says more follow, without reading on to count them.
		{"range", `{"path": "main.go", "offset": 2, "limit": 2}`, false, "[main.go: lines 3-4; more follow, continue with offset 4]\nfunc main() {\n\tprintln(\"hi\") // TODO\n", true},
		{"range to the end", `{"path": "main.go", "offset": 2, "limit": 3}`, false, "[main.go: lines 3-5 of 5]\nfunc main() {\n\tprintln(\"hi\") // TODO\n}\n", true},
		{"offset only", `{"path": "main.go", "offset": 4}`, false, "[main.go: lines 5-5 of 5]\n}\n", true},
		{"limit only", `{"path": "main.go", "limit": 1}`, false, "[main.go: lines 1-1; more follow, continue with offset 1]\npackage main\n", true},
		{"limit past the end", `{"path": "nonl.txt", "offset": 1, "limit": 50}`, false, "[nonl.txt: lines 2-3 of 3]\ntwo\nthree", true},
		{"crlf kept", `{"path": "crlf.txt", "offset": 1}`, false, "[crlf.txt: lines 2-2 of 2]\nb\r\n", true},
		{"empty", `{"path": "empty.txt"}`, false, "", true},
		{"empty range", `{"path": "empty.txt", "offset": 0, "limit": 3}`, false, "[empty.txt: empty file]", true},
		{"via link header names the target", `{"path": "link-in", "limit": 1}`, false, "[main.go: lines 1-1; more follow", false},
		{"latin-1 text is text", `{"path": "latin1.txt"}`, false, "caf\uFFFD cr\uFFFDme", false},
		{"offset past the end", `{"path": "main.go", "offset": 5}`, true, "read_file: offset 5 is past the end of main.go (5 lines)", true},
		{"offset far past the end", `{"path": "nonl.txt", "offset": 9, "limit": 2}`, true, "read_file: offset 9 is past the end of nonl.txt (3 lines)", true},
		{"offset at the unterminated last line", `{"path": "nonl.txt", "offset": 2}`, false, "[nonl.txt: lines 3-3 of 3]\nthree", true},
		{"negative offset", `{"path": "main.go", "offset": -1}`, true, "offset must be 0 or more, got -1", false},
		{"zero limit", `{"path": "main.go", "limit": 0}`, true, "limit must be 1 or more, got 0", false},
		{"directory", `{"path": "pkg"}`, true, "read_file: pkg is a directory; use glob to list its files", true},
		{"missing", `{"path": "nope.go"}`, true, "read_file: nope.go: no such file or directory", true},
		{"missing dir", `{"path": "nope/x.go"}`, true, "read_file: nope/x.go: no such file or directory", true},
		{"binary NUL", `{"path": "bin.dat"}`, true, "read_file: bin.dat is a binary file (5 bytes)", true},
		{"binary noise", `{"path": "noise.bin"}`, true, "noise.bin is a binary file (90 bytes)", false},
		{"fifo", `{"path": "fifo"}`, true, "fifo is not a regular file", false},
		{"over MaxRead", `{"path": "big.txt"}`, true, "big.txt is 220 bytes, over the read limit of 100 bytes; read it in ranges with offset and limit", false},
		{"over MaxRead, ranged", `{"path": "big.txt", "offset": 19}`, false, "[big.txt: lines 20-20 of 20]\n0123456789\n", true},
	} {
		r := call(s, "read_file", c.args)
		if c.exact {
			if r.Output != c.want || r.IsError != c.wantErr {
				t.Errorf("%s: got %q (error %v), want %q", c.name, r.Output, r.IsError, c.want)
			}
			continue
		}
		check(t, c.name, r, c.wantErr, c.want)
		if len(r.Written) != 0 {
			t.Errorf("%s: read_file reports writes %v", c.name, r.Written)
		}
	}
}

func TestLooksBinary(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"plain text\n", false},
		{"héllo wörld ✓ 日本語", false},
		{"a\x00b", true},
		{"mostly ascii with one stray \xe9 byte in a sentence", false},
		{"\xff\xfe\xfd\xfc", true},
		{strings.Repeat("x", 20) + "\xe6\x97", false}, // a rune cut at the end of the sniffed head
	} {
		if got := looksBinary([]byte(c.in)); got != c.want {
			t.Errorf("looksBinary(%q) = %v", c.in, got)
		}
	}
}

func TestWriteFile(t *testing.T) {
	s, _ := fixture(t, Options{})
	ws := s.Root()
	r := call(s, "write_file", `{"path": "new/dir/f.txt", "content": "héllo\n"}`)
	check(t, "create", r, false, "created new/dir/f.txt (7 bytes)")
	if len(r.Written) != 1 || r.Written[0] != "new/dir/f.txt" {
		t.Errorf("Written = %v", r.Written)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "new/dir/f.txt")); string(b) != "héllo\n" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Stat(filepath.Join(ws, "new/dir/f.txt")); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v", st.Mode())
	}
	// Overwriting keeps the mode, and leaves no temporary file behind.
	os.Chmod(filepath.Join(ws, "new/dir/f.txt"), 0o751)
	r = call(s, "write_file", jsonArgs("path", filepath.Join(ws, "new/dir/f.txt"), "content", ""))
	check(t, "overwrite", r, false, "overwrote new/dir/f.txt (0 bytes)")
	if st, _ := os.Stat(filepath.Join(ws, "new/dir/f.txt")); st.Mode().Perm() != 0o751 || st.Size() != 0 {
		t.Errorf("after overwrite: mode %v size %d", st.Mode(), st.Size())
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, "new/dir")); len(entries) != 1 {
		t.Errorf("directory holds %d entries, want just f.txt", len(entries))
	}
	check(t, "directory", call(s, "write_file", `{"path": "pkg", "content": "x"}`), true, "write_file: pkg: is a directory")
	check(t, "fifo", func() Result {
		syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644)
		return call(s, "write_file", `{"path": "fifo", "content": "x"}`)
	}(), true, "fifo: is not a regular file")
	// A failed write leaves the old content: the target's directory is read-only.
	if os.Getuid() != 0 {
		os.Chmod(filepath.Join(ws, "new/dir"), 0o555)
		check(t, "read-only dir", call(s, "write_file", `{"path": "new/dir/f.txt", "content": "lost"}`), true, "permission denied")
		os.Chmod(filepath.Join(ws, "new/dir"), 0o755)
		if b, _ := os.ReadFile(filepath.Join(ws, "new/dir/f.txt")); len(b) != 0 {
			t.Errorf("failed write changed the file: %q", b)
		}
	}
}

func TestReplace(t *testing.T) {
	s, _ := fixture(t, Options{MaxRead: 1000})
	ws := s.Root()
	code := "func f() {\n\tif x {\n\t\treturn 1\n\t}\n\treturn 2\n}\n"
	write(t, filepath.Join(ws, "f.go"), code)
	write(t, filepath.Join(ws, "big.txt"), strings.Repeat("x", 1001))
	os.Chmod(filepath.Join(ws, "f.go"), 0o600)
	for _, c := range []struct {
		name, args string
		wantErr    bool
		want       string
	}{
		{"not found", `{"path": "f.go", "old_string": "absent", "new_string": "x"}`, true, "replace: old_string not found in f.go"},
		{"whitespace differs", `{"path": "f.go", "old_string": "if x {\n    return 1\n}", "new_string": "x"}`, true,
			"old_string not found in f.go; it matches at line 2 if whitespace is normalised"},
		{"too many", `{"path": "f.go", "old_string": "return", "new_string": "yield"}`, true,
			"replace: found 2 occurrences of old_string in f.go, expected 1; add surrounding lines to old_string to pick one, or set expected_replacements to 2"},
		{"too few", `{"path": "f.go", "old_string": "return", "new_string": "yield", "expected_replacements": 3}`, true,
			"found 2 occurrences of old_string in f.go, expected 3"},
		{"empty old", `{"path": "f.go", "old_string": "", "new_string": "x"}`, true, "old_string is empty; use write_file"},
		{"same", `{"path": "f.go", "old_string": "f", "new_string": "f"}`, true, "old_string and new_string are the same"},
		{"zero expected", `{"path": "f.go", "old_string": "f", "new_string": "g", "expected_replacements": 0}`, true, "expected_replacements must be 1 or more, got 0"},
		{"missing file", `{"path": "nope.go", "old_string": "a", "new_string": "b"}`, true, "replace: nope.go: no such file or directory"},
		{"directory", `{"path": "pkg", "old_string": "a", "new_string": "b"}`, true, "pkg is a directory"},
		{"binary", `{"path": "bin.dat", "old_string": "ab", "new_string": "x"}`, true, "bin.dat is a binary file (5 bytes)"},
		{"too big", `{"path": "big.txt", "old_string": "x", "new_string": "y"}`, true, "big.txt is 1001 bytes, over the limit of 1000 bytes"},
	} {
		r := call(s, "replace", c.args)
		check(t, c.name, r, c.wantErr, c.want)
		if len(r.Written) != 0 {
			t.Errorf("%s: Written %v after a failed replace", c.name, r.Written)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f.go")); string(b) != code {
		t.Fatalf("failed replaces changed the file: %q", b)
	}
	r := call(s, "replace", `{"path": "f.go", "old_string": "\t\treturn 1", "new_string": "\t\treturn 10"}`)
	check(t, "one", r, false, "replaced 1 occurrence(s) in f.go")
	if len(r.Written) != 1 || r.Written[0] != "f.go" {
		t.Errorf("Written = %v", r.Written)
	}
	r = call(s, "replace", `{"path": "./f.go", "old_string": "return", "new_string": "yield", "expected_replacements": 2}`)
	check(t, "two", r, false, "replaced 2 occurrence(s) in f.go")
	b, _ := os.ReadFile(filepath.Join(ws, "f.go"))
	if want := "func f() {\n\tif x {\n\t\tyield 10\n\t}\n\tyield 2\n}\n"; string(b) != want {
		t.Errorf("content %q, want %q", b, want)
	}
	if st, _ := os.Stat(filepath.Join(ws, "f.go")); st.Mode().Perm() != 0o600 {
		t.Errorf("mode not kept: %v", st.Mode())
	}
}

func TestLooseLine(t *testing.T) {
	text := "a\n  b  c\n\td\n\n e f\n"
	for _, c := range []struct {
		old  string
		want int
	}{
		{"b c", 2}, {"  b\tc  ", 2}, {"c d", 2}, {"d\ne f", 3}, {"e  f", 5}, {"a b", 1}, {"bc", 0}, {"x", 0}, {"  ", 0},
	} {
		if got := looseLine(text, c.old); got != c.want {
			t.Errorf("looseLine(%q) = %d, want %d", c.old, got, c.want)
		}
	}
}

// .summit/ is out of every tool's reach: by name, by a symlink into it, in a glob and a search.
func TestPrivateDirUnreachable(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".summit", "sessions"), 0o755)
	os.WriteFile(filepath.Join(root, ".summit", "history"), []byte("secret-history-line\n"), 0o600)
	os.WriteFile(filepath.Join(root, ".summit", "sessions", "s.jsonl"), []byte(`{"thinking":"secret-history-line"}`), 0o600)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644)
	os.Symlink(filepath.Join(root, ".summit", "history"), filepath.Join(root, "h"))
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct{ tool, args string }{
		{"read_file", `{"path": ".summit/history"}`},
		{"read_file", `{"path": "./.summit/../.summit/history"}`},
		{"read_file", `{"path": "h"}`},
		{"write_file", `{"path": ".summit/config.yaml", "content": "providers: {}"}`},
		{"write_file", `{"path": ".summit/sessions/s.jsonl", "content": "forged"}`},
		{"replace", `{"path": ".summit/history", "old_string": "secret", "new_string": "x"}`},
		{"glob", `{"pattern": "**/*", "path": ".summit"}`},
	} {
		r := s.Call(ctx, c.tool, c.args)
		if !r.IsError || !strings.Contains(r.Output, ".summit/") {
			t.Errorf("%s %s: %+v", c.tool, c.args, r)
		}
	}
	for _, c := range []struct{ tool, args string }{
		{"glob", `{"pattern": "**/*"}`},
		{"glob", `{"pattern": ".summit/**"}`},
		{"search_file_content", `{"pattern": "secret-history-line"}`},
	} {
		r := s.Call(ctx, c.tool, c.args)
		if strings.Contains(r.Output, ".summit/history") || strings.Contains(r.Output, "s.jsonl") || strings.Contains(r.Output, "h:") {
			t.Errorf("%s %s reached .summit/: %s", c.tool, c.args, r.Output)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".summit", "sessions", "s.jsonl")); string(b) != `{"thinking":"secret-history-line"}` {
		t.Errorf("the recording was changed: %s", b)
	}
}

// TestReadFileRangeStopsEarly: a ranged read reads no further than its range. The file is
// 16 KiB of lines followed by a sparse terabyte of NUL bytes (no newline in it): reading a
// range at the start, or from an offset with no limit until the output is full, returns at
// once; counting the file's lines would read the terabyte.
func TestReadFileRangeStopsEarly(t *testing.T) {
	s, _ := fixture(t, Options{MaxResult: 4096})
	p := filepath.Join(s.Root(), "huge.txt")
	var text strings.Builder
	for i := 0; text.Len() < 16<<10; i++ {
		fmt.Fprintf(&text, "line %05d of a file far too big to count\n", i+1)
	}
	write(t, p, text.String())
	if err := os.Truncate(p, 1<<40); err != nil {
		t.Skip("no sparse terabyte file here:", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	r := s.Call(ctx, "read_file", `{"path": "huge.txt", "offset": 100, "limit": 2}`)
	want := "[huge.txt: lines 101-102; more follow, continue with offset 102]\nline 00101 of a file far too big to count\nline 00102 of a file far too big to count\n"
	if r.IsError || r.Output != want {
		t.Errorf("range near the start: %q", r.Output)
	}
	// No limit: whole lines until the output is full, then where to continue.
	r = s.Call(ctx, "read_file", `{"path": "huge.txt", "offset": 10}`)
	wantHead := "[huge.txt: lines 11-107; more follow, continue with offset 107]\nline 00011 "
	if r.IsError || !strings.HasPrefix(r.Output, wantHead) || !strings.HasSuffix(r.Output, "line 00107 of a file far too big to count\n") || len(r.Output) > 4096+len(wantHead) {
		t.Errorf("offset without limit: %d bytes: %.100q … %q", len(r.Output), r.Output, r.Output[max(0, len(r.Output)-60):])
	}
	// A range that runs into the endless line: the line is counted up to countAhead past a
	// full output, then cut.
	n := strings.Count(text.String(), "\n")
	r = s.Call(ctx, "read_file", fmt.Sprintf(`{"path": "huge.txt", "offset": %d}`, n))
	wantHead = fmt.Sprintf("[huge.txt: lines %d-%d, the last one cut; continue with offset %d]\n", n+1, n+1, n+1)
	if r.IsError || !strings.HasPrefix(r.Output, wantHead) || !strings.Contains(r.Output, "[... truncated: more than") {
		t.Errorf("into the endless line: %.200q", r.Output)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("three ranged reads of the start of a file took %v", el)
	}
}

// TestReadFileWholeLines: a range larger than MaxResult ends on the last whole line that fits
// and names the offset to continue with; only a first line longer than MaxResult is cut.
func TestReadFileWholeLines(t *testing.T) {
	s, _ := fixture(t, Options{MaxResult: 100})
	write(t, filepath.Join(s.Root(), "lines.txt"), strings.Repeat("123456789\n", 30))
	write(t, filepath.Join(s.Root(), "long.txt"), strings.Repeat("x", 150)+"\nshort\n")
	r := call(s, "read_file", `{"path": "lines.txt", "offset": 5, "limit": 20}`)
	if want := "[lines.txt: lines 6-15; more follow, continue with offset 15]\n" + strings.Repeat("123456789\n", 10); r.IsError || r.Output != want {
		t.Errorf("whole lines: %q", r.Output)
	}
	r = call(s, "read_file", `{"path": "lines.txt", "offset": 25}`)
	if want := "[lines.txt: lines 26-30 of 30]\n" + strings.Repeat("123456789\n", 5); r.IsError || r.Output != want {
		t.Errorf("to the end: %q", r.Output)
	}
	r = call(s, "read_file", `{"path": "long.txt", "offset": 0}`)
	if want := "[long.txt: lines 1-1; more follow, continue with offset 1]\n" + strings.Repeat("x", 100) + "\n[... truncated: 151 bytes total, showing the first 100]"; r.IsError || r.Output != want {
		t.Errorf("a first line over MaxResult: %q", r.Output)
	}
}

// TestHardLinks: a file with a second hard link outside the workspace is not read by any tool
// (read_file, ranged or not, replace, search_file_content, a .gitignore), and write_file
// replaces the workspace's link instead of writing through it: the outside file is unchanged.
func TestHardLinks(t *testing.T) {
	s, parent := fixture(t, Options{})
	ws := s.Root()
	outside := filepath.Join(parent, "outside-secret.txt")
	write(t, outside, "top secret outside\n")
	link := func(name string) {
		t.Helper()
		if err := os.Link(outside, filepath.Join(ws, name)); err != nil {
			t.Skip("no hard links here:", err)
		}
	}
	link("hl.txt")
	refused := "hl.txt has 2 hard links; summit cannot tell whether another one is outside the workspace, so it does not read it (ask for the shell if you need it)"
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"path": "hl.txt"}`, "read_file: " + refused},
		{"read_file", `{"path": "hl.txt", "offset": 0, "limit": 1}`, "read_file: " + refused},
		{"replace", `{"path": "hl.txt", "old_string": "top", "new_string": "bottom"}`, "replace: " + refused},
	} {
		r := call(s, c.tool, c.args)
		if !r.IsError || r.Output != c.want {
			t.Errorf("%s %s: %q, want %q", c.tool, c.args, r.Output, c.want)
		}
	}
	for _, args := range []string{`{"pattern": "secret"}`, `{"pattern": "secret", "path": "hl.txt"}`} {
		r := call(s, "search_file_content", args)
		if strings.Contains(r.Output, "top secret") || !strings.Contains(r.Output, "hl.txt (2 hard links; another may be outside the workspace)") {
			t.Errorf("search %s: %q", args, r.Output)
		}
	}
	// A .gitignore linked to a file outside adds no rules: its content is not read.
	write(t, outside, "*.go\n")
	os.Remove(filepath.Join(ws, ".gitignore"))
	link(".gitignore")
	if r := call(s, "glob", `{"pattern": "*.go"}`); r.Output != "main.go" {
		t.Errorf("glob under a hard-linked .gitignore: %q", r.Output)
	}
	// write_file breaks the link: the workspace gets a file of its own, the outside one stays.
	write(t, outside, "top secret outside\n")
	check(t, "write_file", call(s, "write_file", `{"path": "hl.txt", "content": "mine\n"}`), false, "overwrote hl.txt (5 bytes)")
	if b, _ := os.ReadFile(outside); string(b) != "top secret outside\n" {
		t.Errorf("write_file wrote through the hard link: outside is %q", b)
	}
	if st, err := os.Stat(filepath.Join(ws, "hl.txt")); err != nil || st.Sys().(*syscall.Stat_t).Nlink != 1 {
		t.Errorf("hl.txt after write_file: %v", err)
	}
	check(t, "read after write", call(s, "read_file", `{"path": "hl.txt"}`), false, "mine\n")
}
