package converge

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// hunk is one change to one file, parsed from a unified diff.
//
// Positions are 0-based indexes into the file's old lines. The core of a hunk is its lines
// without the leading and trailing context: two hunks that make the same change with more or
// less context have the same core, so context never causes a false conflict and identical
// changes merge.
type hunk struct {
	file      string // workspace-relative slash path
	isNew     bool   // the diff creates the file (--- /dev/null)
	isDelete  bool   // the diff deletes the file (+++ /dev/null)
	lines     []gitdiff.Line
	lead      int // leading context lines
	trail     int // trailing context lines
	start     int // old index of lines[0]
	coreStart int // old index where the core begins
	coreLen   int // old lines the core spans (middle context and deletions)
	key       string
	sources   []string // subagents proposing this hunk, sorted
}

func (h *hunk) core() []gitdiff.Line { return h.lines[h.lead : len(h.lines)-h.trail] }

// end is the old index just past the core.
func (h *hunk) end() int { return h.coreStart + h.coreLen }

// overlaps reports whether two hunks of one file touch the same old lines. A pure insertion
// overlaps a change whose span strictly contains its point, or another insertion at the same
// point (their order would be a guess).
func overlaps(a, b *hunk) bool {
	switch {
	case a.coreLen == 0 && b.coreLen == 0:
		return a.coreStart == b.coreStart
	case a.coreLen == 0:
		return b.coreStart < a.coreStart && a.coreStart < b.end()
	case b.coreLen == 0:
		return a.coreStart < b.coreStart && b.coreStart < a.end()
	}
	return a.coreStart < b.end() && b.coreStart < a.end()
}

// lineText is a diff line as it appears in a patch.
func lineText(l gitdiff.Line) string {
	s := l.String()
	if l.NoEOL() {
		s += "\n\\ No newline at end of file\n"
	}
	return s
}

// text renders the hunk alone, header included, for conflict sides and review.
func (h *hunk) text() string {
	var b strings.Builder
	oldN, newN := 0, 0
	for _, l := range h.lines {
		if l.Old() {
			oldN++
		}
		if l.New() {
			newN++
		}
	}
	fmt.Fprintf(&b, "@@ -%s +%s @@\n", span(h.start, oldN), span(h.start, newN))
	for _, l := range h.lines {
		b.WriteString(lineText(l))
	}
	return b.String()
}

// span writes a hunk range: 1-based start and count; an empty range names the line before it.
func span(start0, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start0)
	}
	return fmt.Sprintf("%d,%d", start0+1, n)
}

// parseDiff parses one patch suggestion into hunks. Paths are confined: absolute paths, ".."
// and empty names are refused, so a patch can never name a file outside the workspace.
func parseDiff(diff string) ([]*hunk, error) {
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("not a unified diff (no ---/+++ file headers with @@ hunks)")
	}
	var out []*hunk
	prefixed := hasABPrefixes(diff) && !isGitDiff(diff)
	for _, f := range files {
		name, err := patchPath(f, prefixed)
		if err != nil {
			return nil, err
		}
		if f.IsBinary {
			return nil, fmt.Errorf("%s: binary patches are not supported", name)
		}
		if f.IsRename || f.IsCopy {
			return nil, fmt.Errorf("%s: renames and copies are not supported", name)
		}
		if len(f.TextFragments) == 0 && !f.IsNew {
			return nil, fmt.Errorf("%s: the diff has no hunks", name)
		}
		hs, err := fileHunks(name, f)
		if err != nil {
			return nil, err
		}
		out = append(out, hs...)
	}
	return out, nil
}

// fileHunks cuts one parsed file diff into hunks of the file name.
func fileHunks(name string, f *gitdiff.File) ([]*hunk, error) {
	var out []*hunk
	for _, fr := range f.TextFragments {
		if err := fr.Validate(); err != nil {
			return nil, fmt.Errorf("%s %s: %v", name, strings.TrimSpace(fr.Header()), err)
		}
		// Unified diffs name the line before an empty old range.
		start := int(fr.OldPosition) - 1
		if fr.OldLines == 0 {
			start = int(fr.OldPosition)
		}
		start = max(start, 0)
		for _, h := range split(fr.Lines, start) {
			h.file, h.isNew, h.isDelete = name, f.IsNew, f.IsDelete
			var k strings.Builder
			fmt.Fprintf(&k, "%s\x00%d\x00%v%v\x00", h.file, h.coreStart, h.isNew, h.isDelete)
			for _, l := range h.core() {
				k.WriteString(lineText(l))
			}
			h.key = k.String()
			out = append(out, h)
		}
	}
	return out, nil
}

// split cuts a fragment into one hunk per run of changed lines, each with the context
// around it. A model often writes two separate edits as one hunk; splitting lets an edit
// merge with another member's edit elsewhere in that hunk instead of conflicting with it.
func split(lines []gitdiff.Line, start int) []*hunk {
	var out []*hunk
	n := len(lines)
	old := 0 // old lines before index i
	for i := 0; i < n; {
		if lines[i].Op == gitdiff.OpContext {
			old++
			i++
			continue
		}
		// A change run [i, j), with the context before it back to the previous run and
		// after it up to the next.
		j := i
		for j < n && lines[j].Op != gitdiff.OpContext {
			j++
		}
		lead := 0
		for lead < i && lines[i-1-lead].Op == gitdiff.OpContext {
			lead++
		}
		trail := 0
		for j+trail < n && lines[j+trail].Op == gitdiff.OpContext {
			trail++
		}
		h := &hunk{lines: slices.Clone(lines[i-lead : j+trail]), lead: lead, trail: trail}
		h.start = start + old - lead
		h.coreStart = start + old
		for _, l := range h.core() {
			if l.Old() {
				h.coreLen++
			}
		}
		out = append(out, h)
		for _, l := range lines[i:j] {
			if l.Old() {
				old++
			}
		}
		i = j
	}
	return out
}

var (
	oldHeaderRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^--- (a/|/dev/null)`) })
	newHeaderRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\+\+\+ (b/|/dev/null)`) })
	gitHeaderRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^diff --git `) })
)

// isGitDiff reports whether a diff has git's "diff --git" headers: the parser has stripped
// its a/ and b/ prefixes already, so they must not be stripped twice (a directory named a).
func isGitDiff(diff string) bool { return gitHeaderRe().MatchString(diff) }

// hasABPrefixes reports whether a plain unified diff names its files a/… and b/… (as git
// and diff -u with labels do). The parser strips those only for "diff --git" patches.
func hasABPrefixes(diff string) bool {
	return oldHeaderRe().MatchString(diff) && newHeaderRe().MatchString(diff)
}

// patchPath is the workspace-relative path a file diff changes.
func patchPath(f *gitdiff.File, prefixed bool) (string, error) {
	oldN, newN := f.OldName, f.NewName
	if prefixed {
		strip := func(n string) string {
			if strings.HasPrefix(n, "a/") || strings.HasPrefix(n, "b/") {
				return n[2:]
			}
			return n
		}
		oldN, newN = strip(oldN), strip(newN)
	}
	name := newN
	if f.IsDelete || name == "" {
		name = oldN
	}
	if f.IsRename && oldN != newN {
		return "", fmt.Errorf("%s → %s: renames are not supported", oldN, newN)
	}
	return cleanPath(name)
}

// cleanPath confines a patch path to the workspace.
func cleanPath(name string) (string, error) {
	switch {
	case name == "":
		return "", fmt.Errorf("a file diff names no path")
	case strings.ContainsRune(name, 0):
		return "", fmt.Errorf("path %q contains NUL", name)
	case path.IsAbs(name) || strings.HasPrefix(name, `\`) || (len(name) > 1 && name[1] == ':'):
		return "", fmt.Errorf("path %s is absolute; patches name workspace-relative paths", name)
	}
	c := path.Clean(name)
	if c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return "", fmt.Errorf("path %s leaves the workspace", name)
	}
	return c, nil
}

// renderFile writes the unified diff of one file from hunks that do not overlap, sorted by
// position. Context is trimmed where neighbouring hunks would otherwise share lines (a patch
// whose hunks overlap is invalid), and insertions at the same point become one hunk.
func renderFile(file string, hs []*hunk) string {
	hs = slices.Clone(hs)
	slices.SortStableFunc(hs, func(a, b *hunk) int {
		if a.coreStart != b.coreStart {
			return a.coreStart - b.coreStart
		}
		return min(a.coreLen, 1) - min(b.coreLen, 1) // an insertion goes before a change at its point
	})
	// Group insertions at one point (kept together by /resolve --choose both).
	type piece struct {
		lead, trail []gitdiff.Line
		core        []gitdiff.Line
		start, n    int // core start and old length
	}
	var ps []piece
	for _, h := range hs {
		p := piece{lead: h.lines[:h.lead], trail: h.lines[len(h.lines)-h.trail:], core: h.core(), start: h.coreStart, n: h.coreLen}
		if k := len(ps) - 1; k >= 0 && ps[k].n == 0 && p.n == 0 && ps[k].start == p.start {
			ps[k].core = append(slices.Clone(ps[k].core), p.core...)
			ps[k].trail = p.trail
			continue
		}
		ps = append(ps, p)
	}
	var b strings.Builder
	oldName, newName := "a/"+file, "b/"+file
	if len(hs) > 0 && hs[0].isNew {
		oldName = "/dev/null"
	}
	if len(hs) > 0 && hs[0].isDelete {
		newName = "/dev/null"
	}
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", oldName, newName)
	prevEnd, delta := 0, 0
	for i, p := range ps {
		lead := min(len(p.lead), p.start-prevEnd)
		room := len(p.trail)
		if i+1 < len(ps) {
			room = min(room, ps[i+1].start-(p.start+p.n))
		}
		lines := append(append(slices.Clone(p.lead[len(p.lead)-lead:]), p.core...), p.trail[:room]...)
		oldN, newN := 0, 0
		for _, l := range lines {
			if l.Old() {
				oldN++
			}
			if l.New() {
				newN++
			}
		}
		start := p.start - lead
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", span(start, oldN), span(start+delta, newN))
		for _, l := range lines {
			b.WriteString(lineText(l))
		}
		delta += newN - oldN
		prevEnd = start + oldN
	}
	return b.String()
}
