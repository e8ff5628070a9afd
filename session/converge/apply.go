package converge

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/summit-dev/summit/session"
)

// Change is the new state of one file after applying patches.
type Change struct {
	Path    string // workspace-relative slash path
	Content []byte
	Delete  bool // remove the file (Content is empty)
	Create  bool // the file did not exist
}

// ReadFunc reads a workspace file by relative slash path. A missing file is an error that
// satisfies errors.Is(err, fs.ErrNotExist).
type ReadFunc func(path string) ([]byte, error)

// HunkError says which hunk no longer fits the current files.
type HunkError struct {
	Path   string
	Hunk   int    // 1-based within the file's patch
	Header string // the hunk's @@ line
	Reason string
}

func (e *HunkError) Error() string {
	return fmt.Sprintf("%s hunk %d (%s) no longer applies: %s", e.Path, e.Hunk, e.Header, e.Reason)
}

// Plan computes the result of applying every patch to the current files, in memory. Either
// every hunk fits and the changes are returned, or nothing is returned and the error names
// the first hunk that does not fit. Patches to one path apply in order, each to the result
// of the ones before.
//
// A hunk fits where its old lines (context and deletions) match the file: at its stated
// position shifted by the changes above it, or else at the nearest position below the
// previous hunk where they match, as patch(1) does when lines moved.
func Plan(read ReadFunc, patches []session.Patch) ([]Change, error) {
	state := map[string]*fileState{}
	var order []string
	for _, p := range patches {
		files, _, err := gitdiff.Parse(strings.NewReader(p.Diff))
		if err != nil {
			return nil, fmt.Errorf("patch for %s: %v", p.Path, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("patch for %s is not a unified diff", p.Path)
		}
		prefixed := hasABPrefixes(p.Diff) && !isGitDiff(p.Diff)
		for _, f := range files {
			name, err := patchPath(f, prefixed)
			if err != nil {
				return nil, err
			}
			if f.IsBinary || f.IsRename || f.IsCopy {
				return nil, fmt.Errorf("%s: only text edits can be applied", name)
			}
			st := state[name]
			if st == nil {
				st = &fileState{path: name}
				data, err := read(name)
				switch {
				case err == nil:
					st.lines, st.existed = splitLines(string(data)), true
				case errors.Is(err, fs.ErrNotExist):
				default:
					return nil, fmt.Errorf("%s: %v", name, err)
				}
				st.exists = st.existed
				state[name] = st
				order = append(order, name)
			}
			if err := st.apply(f); err != nil {
				return nil, err
			}
		}
	}
	var out []Change
	for _, name := range order {
		st := state[name]
		c := Change{Path: name, Content: []byte(strings.Join(st.lines, "")), Create: !st.existed && st.exists}
		if st.existed && !st.exists {
			c.Delete, c.Content = true, nil
		}
		if !st.existed && !st.exists {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

type fileState struct {
	path            string
	lines           []string // with their line endings
	existed, exists bool
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func (st *fileState) apply(f *gitdiff.File) error {
	switch {
	case f.IsNew && st.exists:
		return &HunkError{Path: st.path, Hunk: 1, Header: "new file", Reason: "the file already exists"}
	case !f.IsNew && !st.exists:
		return &HunkError{Path: st.path, Hunk: 1, Header: "--- " + st.path, Reason: "the file does not exist"}
	}
	var out []string
	// cursor is the next old line not yet copied; drift is how far the previous hunk sat from
	// its stated position, carried to the next as patch(1) does.
	cursor, drift := 0, 0
	for i, fr := range f.TextFragments {
		header := strings.TrimSpace(fr.Header())
		var old, repl []string
		for _, l := range fr.Lines {
			if l.Old() {
				old = append(old, l.Line)
			}
			if l.New() {
				repl = append(repl, l.Line)
			}
		}
		stated := int(fr.OldPosition) - 1
		if fr.OldLines == 0 {
			stated = int(fr.OldPosition)
		}
		want := max(stated+drift, cursor)
		at := st.find(old, want, cursor)
		if at < 0 {
			return &HunkError{Path: st.path, Hunk: i + 1, Header: header, Reason: st.mismatch(old, want)}
		}
		out = append(out, st.lines[cursor:at]...)
		out = append(out, repl...)
		cursor = at + len(old)
		drift = at - stated
	}
	out = append(out, st.lines[cursor:]...)
	st.lines = out
	switch {
	case f.IsDelete:
		if len(out) > 0 {
			return &HunkError{Path: st.path, Hunk: len(f.TextFragments), Header: "deleted file", Reason: fmt.Sprintf("%d lines would remain", len(out))}
		}
		st.exists = false
	case f.IsNew:
		st.exists = true
	}
	return nil
}

// find returns where old matches the file: at want, else the nearest index at or after
// cursor; -1 when it matches nowhere.
func (st *fileState) find(old []string, want, cursor int) int {
	matches := func(at int) bool {
		return at >= cursor && at+len(old) <= len(st.lines) && slices.Equal(st.lines[at:at+len(old)], old)
	}
	if matches(want) {
		return want
	}
	if len(old) == 0 {
		return -1 // a pure insertion has nothing to search by
	}
	for d := 1; d <= len(st.lines); d++ {
		if matches(want - d) {
			return want - d
		}
		if matches(want + d) {
			return want + d
		}
	}
	return -1
}

// mismatch explains why old does not fit at want.
func (st *fileState) mismatch(old []string, want int) string {
	if len(old) == 0 {
		return fmt.Sprintf("the file has %d lines; the insertion point %d is past its end", len(st.lines), want)
	}
	for k, l := range old {
		at := want + k
		if at >= len(st.lines) {
			return fmt.Sprintf("expected %q at line %d, past the end of the file (%d lines), and the lines match nowhere else", strings.TrimSuffix(l, "\n"), at+1, len(st.lines))
		}
		if st.lines[at] != l {
			return fmt.Sprintf("line %d is %q, the patch expects %q, and its lines match nowhere else", at+1,
				session.Sanitize(strings.TrimSuffix(st.lines[at], "\n")), session.Sanitize(strings.TrimSuffix(l, "\n")))
		}
	}
	return "its lines match nowhere after the previous hunk"
}
