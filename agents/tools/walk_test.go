package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	s, _ := fixture(t, Options{})
	write(t, filepath.Join(s.Root(), "a.go"), "package a\n")
	write(t, filepath.Join(s.Root(), "a/b.go"), "package a\n")
	write(t, filepath.Join(s.Root(), "wt/.git"), "gitdir: ../.git/worktrees/wt\n") // a worktree's pointer file
	write(t, filepath.Join(s.Root(), "wt/w.txt"), "")
	for _, c := range []struct {
		name, args string
		wantErr    bool
		want       string
	}{
		// Sorted by whole path ("a.go" < "a/b.go"); ignored, .git and symlinks left out.
		{"all go files", `{"pattern": "**/*.go"}`, false, "a.go\na/b.go\nmain.go\npkg/util.go"},
		{"top level", `{"pattern": "*.go"}`, false, "a.go\nmain.go"},
		{"dot slash", `{"pattern": "./*.go"}`, false, "a.go\nmain.go"},
		{"relative to path, shown from the root", `{"pattern": "*.go", "path": "pkg"}`, false, "pkg/util.go"},
		{"braces", `{"pattern": "{a,main}.go"}`, false, "a.go\nmain.go"},
		{"gitignore and negation", `{"pattern": "**/*.{log,txt}"}`, false, "keep.log\nsub/seen.txt\nwt/w.txt"},
		{"dotfiles are listed", `{"pattern": "**/.gitignore"}`, false, ".gitignore\nsub/.gitignore"},
		{"no match", `{"pattern": "**/*.rs"}`, false, "no files match **/*.rs under ."},
		{".git file skipped", `{"pattern": "wt/*"}`, false, "wt/w.txt"},
		{"ignored dir named explicitly", `{"pattern": "*", "path": "pkg/gen"}`, false, "pkg/gen/out.go"},
		{".git named explicitly", `{"pattern": "**", "path": ".git"}`, false, "no files match ** under .git"},
		{"bad pattern", `{"pattern": "[a"}`, true, `glob: "[a" is not a valid glob pattern`},
		{"absolute pattern", `{"pattern": "/etc/*"}`, true, `glob: pattern "/etc/*" is absolute; write it relative to path`},
		{"empty pattern", `{"pattern": ""}`, true, "glob: pattern is empty"},
		{"path is a file", `{"pattern": "*", "path": "main.go"}`, true, "glob: main.go is not a directory"},
		{"missing path", `{"pattern": "*", "path": "nope"}`, true, "glob: nope: no such file or directory"},
	} {
		r := call(s, "glob", c.args)
		if r.Output != c.want || r.IsError != c.wantErr {
			t.Errorf("%s: got %q (error %v), want %q", c.name, r.Output, r.IsError, c.want)
		}
	}
	// Symlinks are never listed nor followed, whatever they point at.
	r := call(s, "glob", `{"pattern": "**"}`)
	for _, hidden := range []string{"link-in", "dir-in", "link-out", "dir-out", "secret", "passwd", ".git/", "debug.log", "skip.txt", "gen/"} {
		if strings.Contains(r.Output, hidden) {
			t.Errorf("glob ** lists %s:\n%s", hidden, r.Output)
		}
	}
}

func TestGlobCaps(t *testing.T) {
	s, _ := fixture(t, Options{MatchCap: 3})
	for i := range 10 {
		write(t, filepath.Join(s.Root(), "many", fmt.Sprintf("f%02d.txt", i)), "")
	}
	r := call(s, "glob", `{"pattern": "many/*"}`)
	check(t, "match cap", r, false, "many/f00.txt\nmany/f01.txt\nmany/f02.txt\n[7 more matches not shown]")
	s.o.MatchCap, s.o.MaxResult = 100, 60 // 4 lines of 13 bytes, then 8 of the fifth
	r = call(s, "glob", `{"pattern": "many/*"}`)
	check(t, "result cap", r, false, "many/f00.txt\nmany/f01.txt\nmany/f02.txt\nmany/f03.txt\nmany/f04\n[... truncated: 129 bytes total, showing the first 60]")
}

func TestGlobCancelled(t *testing.T) {
	s, _ := fixture(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	check(t, "cancelled before", s.Call(ctx, "glob", `{"pattern": "**"}`), true, "glob: not run: context canceled")
	// Cancelled during the walk.
	var fsysErr error
	root, _ := s.openRoot()
	defer root.Close()
	ctx, cancel = context.WithCancel(context.Background())
	n := 0
	fsysErr = walk(ctx, root, ".", func(string) bool { n++; cancel(); return true })
	if fsysErr != context.Canceled || n != 1 {
		t.Errorf("walk after cancel: %v after %d files", fsysErr, n)
	}
}

func TestSearch(t *testing.T) {
	s, _ := fixture(t, Options{})
	ws := s.Root()
	write(t, filepath.Join(ws, "deep/x/y.go"), "// TODO deep\n")
	write(t, filepath.Join(ws, "crlf.txt"), "one TODO\r\ntwo\r\n")
	write(t, filepath.Join(ws, "long.txt"), "TODO "+strings.Repeat("é", 400)+"\n")
	write(t, filepath.Join(ws, "huge-line.txt"), strings.Repeat("x", 200<<10)+"TODO tail\nTODO next\n")
	write(t, filepath.Join(ws, "nul-late.txt"), "TODO\n"+strings.Repeat("a", 9000)+"\x00")
	for _, c := range []struct {
		name, args string
		wantErr    bool
		want       string
	}{
		{"everything not ignored", `{"pattern": "TODO", "include": "*.{go,txt,log}"}`, false,
			"crlf.txt:1: one TODO\n" + // walk order: file by file, lexical in each directory
				"deep/x/y.go:1: // TODO deep\n" +
				"huge-line.txt:2: TODO next\n" + // line 1's match is beyond the first 64 KiB
				"keep.log:1: TODO kept log\n" +
				"long.txt:1: TODO " + strings.Repeat("é", 147) + " […]\n" +
				"main.go:4: \tprintln(\"hi\") // TODO\n" +
				"nul-late.txt:1: TODO\n" + // the NUL is past the sniffed head
				"pkg/util.go:2: // TODO later\n" +
				"sub/seen.txt:1: TODO seen"},
		{"include by name at any depth", `{"pattern": "TODO", "include": "*.go"}`, false,
			"deep/x/y.go:1: // TODO deep\nmain.go:4: \tprintln(\"hi\") // TODO\npkg/util.go:2: // TODO later"},
		{"include with a slash is relative to path", `{"pattern": "TODO", "path": "deep", "include": "x/*.go"}`, false,
			"deep/x/y.go:1: // TODO deep"},
		{"path", `{"pattern": "TODO", "path": "pkg"}`, false, "pkg/util.go:2: // TODO later"},
		{"one file", `{"pattern": "package", "path": "main.go"}`, false, "main.go:1: package main"},
		{"one ignored file, named", `{"pattern": "TODO", "path": "debug.log"}`, false, "debug.log:1: TODO in a log"},
		{"one binary file", `{"pattern": "ab", "path": "bin.dat"}`, false, "no matches for ab under bin.dat"},
		{"regexp", `{"pattern": "(?i)^func\\s+MAIN\\(\\)", "include": "*.go"}`, false, "main.go:3: func main() {"},
		{"anchor at line end", `{"pattern": "TODO$", "path": "crlf.txt"}`, false, "crlf.txt:1: one TODO"},
		{"no match", `{"pattern": "zzz"}`, false, "no matches for zzz under ."},
		{"bad regexp", `{"pattern": "func("}`, true, "search_file_content: invalid regular expression: error parsing regexp: missing closing ): `func(`"},
		{"bad include", `{"pattern": "x", "include": "[a"}`, true, `search_file_content: include "[a" is not a valid glob pattern`},
		{"missing path", `{"pattern": "x", "path": "nope"}`, true, "search_file_content: nope: no such file or directory"},
	} {
		r := call(s, "search_file_content", c.args)
		if r.Output != c.want || r.IsError != c.wantErr {
			t.Errorf("%s: got\n%s\n(error %v), want\n%s", c.name, r.Output, r.IsError, c.want)
		}
	}
	// Never .git, ignored files, binary files or anything behind a symlink.
	r := call(s, "search_file_content", `{"pattern": "TODO|secret|root:"}`)
	for _, hidden := range []string{".git", "debug.log", "skip.txt", "generated", "bin.dat", "link-", "dir-", "secret", "root:"} {
		if strings.Contains(r.Output, hidden) {
			t.Errorf("search shows %s:\n%s", hidden, r.Output)
		}
	}
	small, _ := fixture(t, Options{MatchCap: 2})
	check(t, "match cap", call(small, "search_file_content", `{"pattern": "TODO"}`), false,
		"keep.log:1: TODO kept log\nmain.go:4: \tprintln(\"hi\") // TODO\n[2 more matches not shown]")
}

func TestParseIgnore(t *testing.T) {
	got := parseIgnore("# comment\n\n*.log\n!keep.log\n/build/\ndocs/*.md\n\\#lit\ntrail\\ \nspaces   \n{a,b}\nfoo/**\n[\n/\n")
	want := []ignoreRule{
		{pattern: "**/*.log"},
		{pattern: "**/keep.log", negate: true},
		{pattern: "build", dirOnly: true},
		{pattern: "docs/*.md"},
		{pattern: `**/\#lit`},
		{pattern: `**/trail\ `},
		{pattern: "**/spaces"},
		{pattern: `**/\{a,b\}`},
		{pattern: "foo/**/*"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseIgnore:\n got %+v\nwant %+v", got, want)
	}
}

// TestIgnoreMatchesGit compares glob's view of a tree with git's own (`git ls-files --others
// --exclude-standard`) over patterns exercising anchoring, "**", directory-only rules,
// negation, nested files, escapes and literal braces.
func TestIgnoreMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	files := map[string]string{
		".gitignore": "*.log\n!important.log\n/build/\ndocs/**/*.tmp\nnode_modules\ncache/\nfoo/**\n!foo/keep.txt\n" +
			"\\#hash\ntrail\\ \n*.bak   \na/**/z.txt\n[Tt]emp*\n{x,y}.cfg\n",
		"main.go": "", "a.log": "", "important.log": "", "sub2/x.log": "", "build/out.o": "", "src/build/kept.c": "",
		"docs/a/b/c.tmp": "", "docs/c.tmp": "", "docs/readme.md": "", "node_modules/p/index.js": "", "lib/node_modules/x.js": "",
		"cache/x": "", "other/cache": "", "foo/a.txt": "", "foo/keep.txt": "", "foo/deep/x.txt": "", "#hash": "",
		"trail ": "", "trail": "", "x.bak": "", "a/z.txt": "", "a/b/c/z.txt": "", "b/z.txt": "", "Temp1": "", "temp2": "",
		"tamp": "", "{x,y}.cfg": "", "x.cfg": "",
		"sub/.gitignore": "*.txt\n!keep.txt\n/anchored.md\n", "sub/a.txt": "", "sub/keep.txt": "", "sub/anchored.md": "",
		"sub/inner/anchored.md": "", "sub/inner/b.txt": "",
		"sub/deeper/.gitignore": "!*.txt\n", "sub/deeper/c.txt": "",
	}
	for name, content := range files {
		write(t, filepath.Join(dir, name), content)
	}
	git := func(args ...string) []byte {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	git("init", "-q")
	var want []string
	for _, p := range bytes.Split(git("ls-files", "-z", "--others", "--exclude-standard"), []byte{0}) {
		if len(p) > 0 {
			want = append(want, string(p))
		}
	}
	slices.Sort(want)
	s, err := New(dir, Options{MatchCap: 1000})
	if err != nil {
		t.Fatal(err)
	}
	r := call(s, "glob", `{"pattern": "**"}`)
	if got := strings.Split(r.Output, "\n"); !slices.Equal(got, want) {
		t.Errorf("glob ** and git disagree:\n glob: %q\n  git: %q", got, want)
	}
	// Starting below the root applies the ancestors' .gitignore files too.
	r = call(s, "glob", `{"pattern": "**", "path": "sub/inner"}`)
	if r.Output != "sub/inner/anchored.md" {
		t.Errorf("glob under sub/inner: %q", r.Output)
	}
}
