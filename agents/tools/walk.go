package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	pattern string // doublestar pattern, relative to the directory holding the .gitignore
	negate  bool   // "!pattern": re-include
	dirOnly bool   // "pattern/": directories only
}

// parseIgnore translates .gitignore text to rules, following gitignore(5): blank lines and
// "#" comments are skipped; trailing spaces are dropped unless escaped; "!" negates; a
// trailing "/" matches directories only; a pattern with a "/" at the start or in the middle
// is anchored to the .gitignore's directory, one without matches at any depth below it.
// Backslash escapes carry over, doublestar reads them the same way; braces, which are
// literal in git, are escaped. Lines doublestar cannot parse are dropped.
func parseIgnore(text string) []ignoreRule {
	var rules []ignoreRule
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		var r ignoreRule
		if line[0] == '!' {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			line = strings.TrimPrefix(line, "/")
		} else {
			line = "**/" + line
		}
		// In git "dir/**" matches what is inside dir, not dir itself (so "!dir/keep" can
		// still re-include a file); in doublestar it would match dir too.
		if strings.HasSuffix(line, "/**") {
			line += "/*"
		}
		line = escapeBraces(line)
		if line == "**/" || !doublestar.ValidatePattern(line) {
			continue
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}

func escapeBraces(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			i++
			b.WriteByte(p[i])
		case c == '{' || c == '}':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ignorer holds the .gitignore rules of the directories seen so far, by workspace-relative
// slash path ("." for the root).
type ignorer struct {
	root  *os.Root
	rules map[string][]ignoreRule
}

// maxIgnoreFile bounds the .gitignore read; the rest of a larger one is not read.
const maxIgnoreFile = 1 << 20

// load reads dir's .gitignore, if any. A .gitignore that cannot be read (or is a symlink
// leading out, which os.Root refuses), is not a regular file, or has more than one hard link
// (its content may be a file outside the workspace, see errHardLinked) adds no rules.
func (ig *ignorer) load(dir string) {
	if _, ok := ig.rules[dir]; ok {
		return
	}
	ig.rules[dir] = nil
	f, _, err := openContent(ig.root, path.Join(dir, ".gitignore"), ".gitignore")
	if err != nil {
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return
	}
	ig.rules[dir] = parseIgnore(string(data))
}

// ignored reports whether rel is excluded by the rules of its ancestors' .gitignore files.
// As in git, rules apply from the outermost file in, line by line, and the last match wins.
// Whether an ancestor directory is excluded is not checked here: walk does not descend into
// one.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	out := false
	for dir := "."; ; {
		sub := rel
		if dir != "." {
			sub = rel[len(dir)+1:]
		}
		for _, r := range ig.rules[dir] {
			if (isDir || !r.dirOnly) && doublestar.MatchUnvalidated(r.pattern, sub) {
				out = !r.negate
			}
		}
		i := strings.IndexByte(sub, '/')
		if i < 0 {
			return out
		}
		if dir == "." {
			dir = sub[:i]
		} else {
			dir += "/" + sub[:i]
		}
	}
}

// walk calls fn with the workspace-relative slash path of every regular file under base (a
// resolved directory), in lexical order. Invariants: it reads through the os.Root file system,
// so nothing outside the root is touched; it never follows a symlink (entries are Lstat'd and
// symlinks skipped), so it cannot leave the workspace or loop; it skips every .git directory
// and what .gitignore files (of base, its ancestors and below) exclude. It stops when ctx is
// done (returning ctx's error) or when fn returns false.
func walk(ctx context.Context, root *os.Root, base string, fn func(rel string) bool) error {
	fsys := root.FS()
	ig := &ignorer{root: root, rules: map[string][]ignoreRule{}}
	for d := path.Dir(base); base != "."; d = path.Dir(d) {
		ig.load(d)
		if d == "." {
			break
		}
	}
	return fs.WalkDir(fsys, base, func(rel string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if rel == base {
				return err
			}
			return nil // an unreadable entry below base is skipped, not fatal
		}
		switch {
		case d.IsDir():
			if d.Name() == ".git" || Private(rel) || rel != base && ig.ignored(rel, true) {
				return fs.SkipDir
			}
			ig.load(rel)
		case d.Name() == ".git": // a worktree's or submodule's pointer file
		case d.Type().IsRegular() && !ig.ignored(rel, false):
			if !fn(rel) {
				return fs.SkipAll
			}
		}
		return nil
	})
}

// start resolves the optional path argument of glob and search (default the root), checks
// that it exists and opens the root; the caller closes it.
func (s *Sandbox) start(a args) (string, *os.Root, error) {
	p := a.str("path")
	if p == "" {
		p = "."
	}
	rel, err := s.resolve(p)
	if err != nil {
		return "", nil, err
	}
	root, err := s.openRoot()
	if err != nil {
		return "", nil, err
	}
	if _, err := root.Stat(rel); err != nil {
		root.Close()
		return "", nil, fileErr(p, err)
	}
	return rel, root, nil
}

// under is rel relative to base (both workspace-relative slash paths, rel inside base).
func under(base, rel string) string {
	if base == "." {
		return rel
	}
	return strings.TrimPrefix(rel, base+"/")
}

// matchList collects up to max matches and counts the rest.
type matchList struct {
	max   int
	lines []string
	more  int
}

func (m *matchList) add(line string) {
	if len(m.lines) < m.max {
		m.lines = append(m.lines, line)
	} else {
		m.more++
	}
}

func (m *matchList) String() string {
	text := strings.Join(m.lines, "\n")
	if m.more > 0 {
		text += fmt.Sprintf("\n[%d more matches not shown]", m.more)
	}
	return text
}

func globTool(ctx context.Context, s *Sandbox, a args) Result {
	pat := a.str("pattern")
	for strings.HasPrefix(pat, "./") {
		pat = pat[2:]
	}
	switch {
	case pat == "":
		return errResult("glob: pattern is empty")
	case strings.HasPrefix(pat, "/"):
		return errResult("glob: pattern %q is absolute; write it relative to path", pat)
	case !doublestar.ValidatePattern(pat):
		return errResult("glob: %q is not a valid glob pattern", pat)
	}
	base, root, err := s.start(a)
	if err != nil {
		return errResult("glob: %v", err)
	}
	defer root.Close()
	fsys := root.FS()
	if st, err := fs.Stat(fsys, base); err == nil && !st.IsDir() {
		return errResult("glob: %s is not a directory", a.str("path"))
	}
	var all []string
	err = walk(ctx, root, base, func(rel string) bool {
		if doublestar.MatchUnvalidated(pat, under(base, rel)) {
			all = append(all, rel)
		}
		return true
	})
	if err != nil {
		return errResult("glob: %v", err)
	}
	if len(all) == 0 {
		return Result{Output: fmt.Sprintf("no files match %s under %s", pat, base)}
	}
	// The walk's order is lexical per directory, which is not sort order of whole paths
	// ("a.go" < "a/b"): sort all, then cap, so the shown part does not depend on layout.
	slices.Sort(all)
	m := matchList{max: s.o.MatchCap}
	for _, p := range all {
		m.add(p)
	}
	return Result{Output: m.String()}
}

// maxShownLine is how much of a matching line search prints.
const maxShownLine = 300

func searchTool(ctx context.Context, s *Sandbox, a args) Result {
	re, err := regexp.Compile(a.str("pattern"))
	if err != nil {
		return errResult("search_file_content: invalid regular expression: %v", err)
	}
	include := a.str("include")
	for strings.HasPrefix(include, "./") {
		include = include[2:]
	}
	if include != "" && !doublestar.ValidatePattern(include) {
		return errResult("search_file_content: include %q is not a valid glob pattern", include)
	}
	base, root, err := s.start(a)
	if err != nil {
		return errResult("search_file_content: %v", err)
	}
	defer root.Close()
	fsys := root.FS()
	m := matchList{max: s.o.MatchCap}
	var failed []string
	search := func(rel string) bool {
		if include != "" {
			// A pattern without "/" matches the file name at any depth (as with grep
			// --include and rg -g); one with "/" is relative to the search path.
			subject := under(base, rel)
			if !strings.Contains(include, "/") {
				subject = path.Base(rel)
			}
			if !doublestar.MatchUnvalidated(include, subject) {
				return true
			}
		}
		if err := grepFile(ctx, root, rel, re, &m); err != nil {
			if hl := (*errHardLinked)(nil); errors.As(err, &hl) {
				failed = append(failed, fmt.Sprintf("%s (%d hard links; another may be outside the workspace)", rel, hl.links))
			} else {
				failed = append(failed, fmt.Sprintf("%s (%v)", rel, err))
			}
		}
		return true
	}
	if st, err := fs.Stat(fsys, base); err == nil && st.Mode().IsRegular() {
		// One file named explicitly: searched even if ignored, but not if binary.
		search(base)
	} else if err := walk(ctx, root, base, search); err != nil {
		return errResult("search_file_content: %v", err)
	}
	if err := ctx.Err(); err != nil {
		return errResult("search_file_content: %v", err)
	}
	out := m.String()
	if len(m.lines) == 0 {
		out = fmt.Sprintf("no matches for %s under %s", a.str("pattern"), base)
	}
	if len(failed) > 0 {
		out += fmt.Sprintf("\n[%d files could not be read: %s]", len(failed), strings.Join(failed[:min(len(failed), 5)], ", "))
	}
	return Result{Output: out}
}

// grepFile adds the lines of rel that match re to m. Binary files are skipped, and files with
// more than one hard link are not read (errHardLinked). The file is streamed: memory stays
// bounded, and of a line longer than the buffer only the first 64 KiB are matched.
func grepFile(ctx context.Context, root *os.Root, rel string, re *regexp.Regexp, m *matchList) error {
	f, _, err := openContent(root, rel, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if head, err := br.Peek(sniffLen); err != nil && err != io.EOF {
		return err
	} else if looksBinary(head) {
		return nil
	}
	for n := 1; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && re.Match(trimEOL(line)) {
			m.add(fmt.Sprintf("%s:%d: %s", rel, n, shorten(trimEOL(line))))
		}
		for errors.Is(err, bufio.ErrBufferFull) { // drop the rest of a long line
			_, err = br.ReadSlice('\n')
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// shorten cuts a matching line for display on a rune boundary.
func shorten(b []byte) string {
	if len(b) <= maxShownLine {
		return string(b)
	}
	cut := maxShownLine
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(b[cut]); i++ {
		cut--
	}
	return string(b[:cut]) + " […]"
}
