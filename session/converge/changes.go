package converge

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// Real changes: a member that worked in an isolated worktree brings the change set summit
// recorded at its stop (session.SubagentChanges). Its patches are that change set, file by
// file; its capsule's patch_suggestions are only compared with it, for a note.
//
// A recorded file change becomes units of the pool:
//
//   - a text modification whose whole diff was recorded (regular file modes): one hunk unit
//     per change run, exactly like a proposal's hunks (so a read-only member's proposal and a
//     writer's identical real hunk merge), plus a mode unit when its mode changed too;
//   - a mode-only change: a mode unit;
//   - anything else (an add, a delete, a rename, a binary, a truncated diff, a symlink, a
//     diff that does not parse): one whole-file unit, taken or left whole.
//
// Whole-file units of one path (a rename touches two) that differ, or that meet another
// member's hunks or mode change there, are one file conflict; mode units of one path with
// different new modes are one file conflict too.

// SourceMerged is the Result.Sources value of a file combined from several members' changes.
const SourceMerged = "merged"

// real reports whether the member brings a recorded change set (that could be computed).
func (m Member) real() bool { return m.Changes != nil && m.Changes.Error == "" }

// origin is one member's recorded change of one path and the units it became.
type origin struct {
	fc    *session.FileChange
	units []int // sorted
}

// poolChanges adds a member's recorded changes to the pool.
func (a *Analysis) poolChanges(m Member, add func(u unit, key, from string) int) {
	if a.origin == nil {
		a.origin = map[string]map[string]origin{}
	}
	own := map[string]origin{}
	a.origin[m.ID] = own
	for _, fc := range m.Changes.Files {
		p, err := cleanPath(fc.Path)
		if err == nil && fc.OldPath != "" {
			fc.OldPath, err = cleanPath(fc.OldPath)
		}
		if err != nil {
			a.Notes = append(a.Notes, fmt.Sprintf("%s's change of %s left out: %v", m.ID, session.Sanitize(fc.Path), err))
			continue
		}
		if _, dup := own[p]; dup {
			a.Notes = append(a.Notes, fmt.Sprintf("%s's change set names %s twice; the second is left out", m.ID, session.Sanitize(p)))
			continue
		}
		fc.Path = p
		fcp := &fc
		var idx []int
		if hs, ok := textEdit(fc); ok {
			for _, h := range hs {
				idx = append(idx, add(unit{kind: uHunk, h: h, fc: fcp}, "h\x00"+h.key, m.ID))
			}
			if modeChanged(fc) {
				idx = append(idx, add(unit{kind: uMode, fc: fcp, path: p}, "m\x00"+p+"\x00"+fc.NewMode, m.ID))
			}
		} else {
			u := unit{kind: uFile, fc: fcp, path: p, paths: []string{p}, fhs: textWhole(fc)}
			if fc.OldPath != "" && fc.OldPath != p {
				u.paths = append(u.paths, fc.OldPath)
			}
			idx = append(idx, add(u, "F\x00"+fileKey(fc, m.ID), m.ID))
		}
		slices.Sort(idx)
		own[p] = origin{fc: fcp, units: slices.Compact(idx)}
	}
}

func regularMode(m string) bool { return m == "" || m == "100644" || m == "100755" }

func modeChanged(fc session.FileChange) bool {
	return fc.OldMode != "" && fc.NewMode != "" && fc.OldMode != fc.NewMode
}

// textEdit splits a text modification into hunks. ok is false when the change must be taken
// whole; a mode-only change is ok with no hunks.
func textEdit(fc session.FileChange) ([]*hunk, bool) {
	if fc.Kind == session.ChangeMode {
		return nil, true
	}
	if fc.Kind != session.ChangeModified || fc.Binary || fc.Truncated || !regularMode(fc.OldMode) || !regularMode(fc.NewMode) {
		return nil, false
	}
	f, ok := parseOne(fc.Diff)
	if !ok || f.IsBinary || f.IsRename || f.IsCopy || f.IsNew || f.IsDelete || len(f.TextFragments) == 0 {
		return nil, false
	}
	hs, err := fileHunks(fc.Path, f)
	if err != nil {
		return nil, false
	}
	return hs, true
}

// textWhole is the hunks of a text add or delete that a plain text patch can express (for
// the DeltaBatch's Patches); nil for anything else.
func textWhole(fc session.FileChange) []*hunk {
	if fc.Binary || fc.Truncated {
		return nil
	}
	switch {
	case fc.Kind == session.ChangeAdded && (fc.NewMode == "" || fc.NewMode == "100644"):
	case fc.Kind == session.ChangeDeleted && regularMode(fc.OldMode):
	default:
		return nil
	}
	f, ok := parseOne(fc.Diff)
	if !ok || f.IsBinary || f.IsRename || f.IsCopy || f.IsNew != (fc.Kind == session.ChangeAdded) ||
		f.IsDelete != (fc.Kind == session.ChangeDeleted) || len(f.TextFragments) == 0 {
		return nil
	}
	hs, err := fileHunks(fc.Path, f)
	if err != nil {
		return nil
	}
	return hs
}

func parseOne(diff string) (*gitdiff.File, bool) {
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil || len(files) != 1 {
		return nil, false
	}
	return files[0], true
}

// fileKey is what makes two whole-file changes the same: kind, paths, new mode and content.
// A change whose content cannot be told (a binary without its blob id or binary patch, a
// cut diff without its blob id) is keyed to its member, so it never equals another's.
func fileKey(fc session.FileChange, member string) string {
	id, ok := identity(fc)
	if !ok {
		id = "?" + member
	}
	return strings.Join([]string{fc.Kind, fc.Path, fc.OldPath, strconv.FormatBool(fc.Binary), fc.NewMode, id}, "\x00")
}

// identity is a file change's content: nothing for a delete (deleting is deleting); the new
// blob id for a binary or cut diff when git named it in full (--binary implies --full-index),
// else a binary's whole binary patch; for text, the hunks (from the first @@ on). ok is false
// when it cannot be told.
func identity(fc session.FileChange) (string, bool) {
	if fc.Kind == session.ChangeDeleted {
		return "", true
	}
	if fc.Binary || fc.Truncated {
		if h := newBlob(fc.Diff); h != "" {
			return "blob " + h, true
		}
		if fc.Binary && !fc.Truncated {
			if i := strings.Index(fc.Diff, "\nGIT binary patch\n"); i >= 0 {
				return fc.Diff[i+1:], true
			}
		}
		return "", false
	}
	return hunkBody(fc.Diff, false), true
}

// newBlob is the full new blob id of a diff's "index OLD..NEW [mode]" line; "" when absent,
// abbreviated or all zeros.
func newBlob(diff string) string {
	for l := range strings.Lines(diff) {
		if strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "GIT binary patch") {
			break
		}
		rest, ok := strings.CutPrefix(l, "index ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return ""
		}
		_, nw, ok := strings.Cut(f[0], "..")
		if !ok || len(nw) < 40 || strings.Trim(nw, "0") == "" || strings.Trim(nw, "0123456789abcdef") != "" {
			return ""
		}
		return nw
	}
	return ""
}

// hunkBody is a diff from its first @@ line on, without summit's truncation marker. With
// changesOnly, only the + and - lines (and "\ No newline" marks) are kept: the
// normalisation of vote and consensus.
func hunkBody(diff string, changesOnly bool) string {
	var b strings.Builder
	in := false
	for l := range strings.Lines(diff) {
		if !in {
			if !strings.HasPrefix(l, "@@") {
				continue
			}
			in = true
		}
		if strings.HasPrefix(l, truncationMarker) {
			continue
		}
		if changesOnly && (l == "" || !strings.ContainsRune("+-\\", rune(l[0]))) {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// truncationMarker starts the line summit appends to a cut diff (session/gitws).
const truncationMarker = "[summit: diff truncated"

// changesKey is a member's recorded change set as vote and consensus compare it: its files
// sorted by path, each as kind, paths, new mode and the diff's + and - lines (a binary or cut
// diff by its identity; one that cannot be told equals nobody else's).
func changesKey(m Member) (key, show string) {
	fs := slices.Clone(m.Changes.Files)
	slices.SortFunc(fs, func(x, y session.FileChange) int {
		return cmp.Or(cmp.Compare(x.Path, y.Path), cmp.Compare(x.OldPath, y.OldPath))
	})
	var b strings.Builder
	b.WriteString("changes\x00")
	var lines []string
	for _, fc := range fs {
		body := hunkBody(fc.Diff, true)
		if fc.Binary || fc.Truncated {
			id, ok := identity(fc)
			if !ok {
				id = "?" + m.ID
			}
			body = id
		}
		fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x00%s\x01", fc.Kind, fc.Path, fc.OldPath, fc.NewMode, body)
		lines = append(lines, render.FileChangeLine(fc))
	}
	if len(fs) == 0 {
		return b.String(), "changed nothing: " + m.Capsule.Summary
	}
	return b.String(), fmt.Sprintf("%s (%s): %s", session.Plural(len(fs), "file"), capList(lines, "; "), m.Capsule.Summary)
}

// capList joins at most 8 items, then says how many more.
func capList(xs []string, sep string) string {
	if len(xs) > 8 {
		return strings.Join(xs[:8], sep) + fmt.Sprintf("%sand %d more", sep, len(xs)-8)
	}
	return strings.Join(xs, sep)
}

// realNotes compares what a member's capsule claims (its patch_suggestions) with what it
// really changed, and names changes outside the workspace.
func realNotes(m Member) []string {
	var notes []string
	ch := m.Changes
	renamed := map[string]string{}
	var real, show []string
	for _, fc := range ch.Files {
		real = append(real, fc.Path)
		if fc.OldPath != "" && fc.OldPath != fc.Path {
			renamed[fc.OldPath] = fc.Path
		}
	}
	slices.Sort(real)
	real = slices.Compact(real)
	claimed := map[string]bool{}
	for _, ps := range m.Capsule.PatchSuggestions {
		for _, p := range append(slices.Clone(ps.Paths), diffPaths(ps.Diff)...) {
			if c, err := cleanPath(p); err == nil {
				if n, ok := renamed[c]; ok { // a rename may be claimed by its old path
					c = n
				}
				claimed[c] = true
			}
		}
	}
	claims := slices.Sorted(maps.Keys(claimed))
	// A capsule that claims no patches says nothing about files (most writers report in
	// prose and let the worktree speak): only claims that differ from the real changes are
	// worth a note, or the note becomes noise on every convergence and hides the real ones.
	if len(claims) > 0 && !slices.Equal(claims, real) {
		for _, fc := range slices.SortedFunc(slices.Values(ch.Files), func(x, y session.FileChange) int { return cmp.Compare(x.Path, y.Path) }) {
			name := session.Sanitize(fc.Path)
			if fc.OldPath != "" && fc.OldPath != fc.Path {
				name = session.Sanitize(fc.OldPath) + " → " + name
			}
			show = append(show, name)
		}
		for i, c := range claims {
			claims[i] = session.Sanitize(c)
		}
		claim := "claims patches for " + capList(claims, ", ")
		did := "changed nothing"
		if len(show) > 0 {
			did = "changed " + capList(slices.Compact(show), ", ")
		}
		notes = append(notes, fmt.Sprintf("%s's capsule %s; it really %s", m.ID, claim, did))
	}
	if len(ch.Outside) > 0 {
		out := make([]string, len(ch.Outside))
		for i, o := range ch.Outside {
			out[i] = session.Sanitize(o)
		}
		notes = append(notes, fmt.Sprintf("%s also changed files outside the workspace (%s); they are never applied", m.ID, capList(out, ", ")))
	}
	return notes
}

// diffPaths is every path a proposed diff names (old and new), "" and /dev/null left out.
func diffPaths(diff string) []string {
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		return nil
	}
	prefixed := hasABPrefixes(diff) && !isGitDiff(diff)
	var out []string
	for _, f := range files {
		for _, n := range []string{f.OldName, f.NewName} {
			if prefixed && (strings.HasPrefix(n, "a/") || strings.HasPrefix(n, "b/")) {
				n = n[2:]
			}
			if n != "" && n != "/dev/null" {
				out = append(out, n)
			}
		}
	}
	return out
}

// Bases.

// baseNum is N of "base-N"; -1 for anything else.
func baseNum(b string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(b, "base-"))
	if err != nil || !strings.HasPrefix(b, "base-") || n < 0 {
		return -1
	}
	return n
}

// baseKey identifies a member's base: its snapshot commit (two base-N may share one), else
// its name.
func baseKey(m Member) string {
	if m.Changes.BaseCommit != "" {
		return m.Changes.BaseCommit
	}
	return m.Changes.Base
}

func baseName(m Member) string {
	name := cmp.Or(m.Changes.Base, "an unnamed base")
	if c := m.Changes.BaseCommit; c != "" {
		name += " (" + c[:min(len(c), 12)] + ")"
	}
	return name
}

// newestBase splits the members with recorded changes into those on the newest base (the
// highest base-N; Rebased members count as on it) and the others.
func newestBase(ms []Member) (newest Member, cur, stale []Member) {
	var real []Member
	for _, m := range ms {
		if m.real() {
			real = append(real, m)
		}
	}
	if len(real) == 0 {
		return Member{}, nil, nil
	}
	newest = slices.MaxFunc(real, func(x, y Member) int {
		return cmp.Or(cmp.Compare(baseNum(x.Changes.Base), baseNum(y.Changes.Base)), cmp.Compare(baseKey(x), baseKey(y)))
	})
	for _, m := range real {
		if baseKey(m) == baseKey(newest) || m.Rebased {
			cur = append(cur, m)
		} else {
			stale = append(stale, m)
		}
	}
	return newest, cur, stale
}

// baseConflicts (merge): each member whose changes are on an older base than the newest and
// were not rebased is one base conflict; the engine never merges diffs made against different
// bases silently. Its sides are the stale member and the first member on the newest base.
func (a *Analysis) baseConflicts() {
	newest, cur, stale := newestBase(a.used)
	var ids []string
	for _, m := range cur {
		if baseKey(m) == baseKey(newest) {
			ids = append(ids, m.ID)
		}
	}
	for i, s := range stale {
		if len(s.Changes.Files) == 0 {
			continue // nothing to bring over
		}
		ref := newest
		for _, m := range cur {
			if baseKey(m) == baseKey(newest) {
				ref = m
				break
			}
		}
		var files []string
		for _, fc := range s.Changes.Files {
			files = append(files, render.FileChangeLine(fc))
		}
		c := &conflict{kind: KindBase, sides: map[string][]int{s.ID: nil, ref.ID: nil}, order: []string{s.ID, ref.ID}}
		c.values = map[string]string{
			s.ID: fmt.Sprintf("%s worked on %s; the newest base of %s is %s (%s). The engine cannot rebase: "+
				"take %s to merge its changes as recorded against its older base (the three-way /apply checks them), "+
				"or %s or none to leave them out.\n%s\n",
				s.ID, baseName(s), a.in.ID, baseName(newest), strings.Join(ids, ", "), s.ID, ref.ID, strings.Join(files, "\n")),
			ref.ID: fmt.Sprintf("%s is the newest base: %s worked on it. Taking %s leaves %s's changes out.\n",
				baseName(newest), strings.Join(ids, ", "), ref.ID, s.ID),
		}
		c.sortKey = fmt.Sprintf(" \x00%04d", i)
		a.conflicts = append(a.conflicts, c)
	}
}

// baseNote (vote, consensus) says when the compared change sets are on different bases.
func baseNote(ms []Member) string {
	_, _, stale := newestBase(ms)
	if len(stale) == 0 {
		return ""
	}
	by := map[string][]string{}
	var order []string
	for _, m := range ms {
		if !m.real() {
			continue
		}
		name := baseName(m)
		if m.Rebased {
			name = "rebased"
		}
		if _, ok := by[name]; !ok {
			order = append(order, name)
		}
		by[name] = append(by[name], m.ID)
	}
	var parts []string
	for _, n := range order {
		parts = append(parts, strings.Join(by[n], ", ")+" on "+n)
	}
	return "the change sets are on different bases (" + strings.Join(parts, "; ") + "); they are compared as diffs"
}

// File conflicts.

// unitPaths is every path a change unit touches.
func unitPaths(u unit) []string {
	switch u.kind {
	case uHunk:
		return []string{u.h.file}
	case uFile:
		return u.paths
	case uMode:
		return []string{u.path}
	}
	return nil
}

func isChange(u unit) bool { return u.kind == uHunk || u.kind == uFile || u.kind == uMode }

// fileConflicts finds the file-level conflicts: change units of linked paths (a rename links
// its two) with a whole-file unit among them, from members that do not all agree; and mode
// changes of one path to different modes. Units it puts in a conflict are kept out of
// hunk conflicts.
func (a *Analysis) fileConflicts() {
	parent := map[string]string{}
	var find func(string) string
	find = func(p string) string {
		if q, ok := parent[p]; ok && q != p {
			r := find(q)
			parent[p] = r
			return r
		}
		return p
	}
	for _, u := range a.units {
		ps := unitPaths(u)
		for _, p := range ps[min(1, len(ps)):] {
			r0, r := find(ps[0]), find(p)
			if r0 != r {
				parent[max(r0, r)] = min(r0, r)
			}
		}
	}
	groups := map[string][]int{}
	for i, u := range a.units {
		if isChange(u) {
			r := find(unitPaths(u)[0])
			groups[r] = append(groups[r], i)
		}
	}
	for _, root := range slices.Sorted(maps.Keys(groups)) {
		g := groups[root]
		var modes []int
		whole := false
		for _, i := range g {
			switch a.units[i].kind {
			case uFile:
				whole = true
			case uMode:
				modes = append(modes, i)
			}
		}
		var c *conflict
		switch {
		case whole:
			c = a.newConflict(KindFile, g)
		case len(modes) > 1:
			c = a.newConflict(KindFile, modes)
		}
		if c == nil {
			continue
		}
		c.file = root
		c.sortKey = fmt.Sprintf("0\x00%s\x00-", root)
		if a.inFile == nil {
			a.inFile = map[int]bool{}
		}
		for _, i := range c.units {
			a.inFile[i] = true
		}
	}
}

// sideText shows one side of a file conflict: each of its changes with a one-line account,
// a text change's hunks under it.
func (a *Analysis) sideText(us []int) string {
	var b strings.Builder
	var hunks []*hunk
	flush := func() {
		if len(hunks) == 0 {
			return
		}
		add, del := countLines(hunks)
		fmt.Fprintf(&b, "modified %s +%d −%d\n", session.Sanitize(hunks[0].file), add, del)
		for _, h := range hunks {
			b.WriteString(h.text())
		}
		hunks = nil
	}
	for _, i := range us {
		u := a.units[i]
		if u.kind != uHunk {
			flush()
		}
		switch u.kind {
		case uHunk:
			if len(hunks) > 0 && hunks[0].file != u.h.file {
				flush()
			}
			hunks = append(hunks, u.h)
		case uMode:
			fmt.Fprintf(&b, "mode of %s %s → %s\n", session.Sanitize(u.path), u.fc.OldMode, u.fc.NewMode)
		case uFile:
			b.WriteString(render.FileChangeLine(*u.fc) + "\n")
			switch {
			case u.fc.Binary:
				if h := newBlob(u.fc.Diff); h != "" {
					fmt.Fprintf(&b, "new content: blob %s\n", h)
				} else {
					b.WriteString("(binary: its content cannot be compared here)\n")
				}
			default:
				b.WriteString(hunkBody(u.fc.Diff, false))
			}
		}
	}
	flush()
	return b.String()
}

func countLines(hs []*hunk) (added, removed int) {
	for _, h := range hs {
		for _, l := range h.core() {
			switch l.Op {
			case gitdiff.OpAdd:
				added++
			case gitdiff.OpDelete:
				removed++
			}
		}
	}
	return added, removed
}

// fileContext is the current state of a file in a file conflict, for the reviewer.
func (a *Analysis) fileContext(file string) string {
	if a.in.Read == nil {
		return ""
	}
	data, err := a.in.Read(file)
	if err != nil {
		return a.context(file, 0, 0)
	}
	n := len(splitLines(string(data)))
	return fmt.Sprintf("(the file has %s now)\n", session.Plural(n, "line")) + a.context(file, 0, 0)
}

// The combined change set.

// changedFiles is the resolved change set of the taken units, one entry per path: a
// whole-file change as recorded; a text file as one member recorded it when the taken
// units are exactly that member's, else combined from the taken hunks (and mode).
func (a *Analysis) changedFiles(take []int, dropped map[string]bool) ([]session.FileChange, map[string]string, []string) {
	type acc struct{ hunks, modes, whole []int }
	per := map[string]*acc{}
	get := func(p string) *acc {
		if per[p] == nil {
			per[p] = &acc{}
		}
		return per[p]
	}
	for _, i := range take {
		u := a.units[i]
		switch u.kind {
		case uHunk:
			get(u.h.file).hunks = append(get(u.h.file).hunks, i)
		case uMode:
			get(u.path).modes = append(get(u.path).modes, i)
		case uFile:
			get(u.path).whole = append(get(u.path).whole, i)
		}
	}
	files := []session.FileChange{}
	sources := map[string]string{}
	var notes []string
	members := slices.SortedFunc(maps.Keys(a.origin), idCompare)
	for _, p := range slices.Sorted(maps.Keys(per)) {
		x := per[p]
		if len(x.whole) > 0 {
			u := a.units[x.whole[0]]
			files = append(files, *u.fc)
			sources[p] = a.effSources(u, dropped)[0]
			if len(x.whole)+len(x.hunks)+len(x.modes) > 1 {
				notes = append(notes, fmt.Sprintf("%s: %s's whole-file change stands; the other changes of it are left out", session.Sanitize(p), sources[p]))
			}
			continue
		}
		set := slices.Sorted(slices.Values(append(slices.Clone(x.hunks), x.modes...)))
		found := false
		for _, id := range members {
			if o, ok := a.origin[id][p]; ok && !dropped[id] && slices.Equal(o.units, set) {
				files = append(files, *o.fc)
				sources[p] = id
				found = true
				break
			}
		}
		if found {
			continue
		}
		files = append(files, a.mergedChange(p, x.hunks, x.modes))
		var srcs []string
		edited := false
		for _, i := range set {
			srcs = append(srcs, a.effSources(a.units[i], dropped)...)
			edited = edited || a.units[i].edit != ""
		}
		slices.SortFunc(srcs, idCompare)
		if srcs = slices.Compact(srcs); len(srcs) == 1 && !edited {
			sources[p] = srcs[0]
		} else {
			sources[p] = SourceMerged
		}
	}
	return files, sources, notes
}

// effSources are the members a change unit still stands for once the members left out by a
// base conflict are taken away.
//
// The reviewer's hand-written lines (choice edit) stand for every side of their conflict
// whatever the base conflicts decided.
func (a *Analysis) effSources(u unit, dropped map[string]bool) []string {
	if !isChange(u) || len(dropped) == 0 || u.edit != "" {
		return u.sources
	}
	return slices.DeleteFunc(slices.Clone(u.sources), func(s string) bool { return dropped[s] })
}

// mergedChange is one file combined from hunks (and perhaps a mode change) of one or more
// members, with a git-style diff (diff --git header, mode lines, ---/+++, hunks).
func (a *Analysis) mergedChange(p string, hunkIdx, modeIdx []int) session.FileChange {
	fc := session.FileChange{Path: p, Kind: session.ChangeModified}
	var hs []*hunk
	for _, i := range hunkIdx {
		u := a.units[i]
		hs = append(hs, u.h)
		if u.fc != nil && fc.OldMode == "" {
			fc.OldMode, fc.NewMode = u.fc.OldMode, u.fc.OldMode
		}
	}
	if len(modeIdx) > 0 {
		m := a.units[modeIdx[0]].fc
		fc.OldMode, fc.NewMode = m.OldMode, m.NewMode
	}
	fc.Added, fc.Removed = countLines(hs)
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n", p, p)
	switch {
	case len(hs) == 0:
		fc.Kind = session.ChangeMode
	case hs[0].isNew:
		fc.Kind = session.ChangeAdded
		fc.OldMode, fc.NewMode = "", cmp.Or(fc.NewMode, "100644")
		fmt.Fprintf(&b, "new file mode %s\n", fc.NewMode)
	case hs[0].isDelete:
		fc.Kind = session.ChangeDeleted
		fc.OldMode, fc.NewMode = cmp.Or(fc.OldMode, "100644"), ""
		fmt.Fprintf(&b, "deleted file mode %s\n", fc.OldMode)
	}
	if modeChanged(fc) {
		fmt.Fprintf(&b, "old mode %s\nnew mode %s\n", fc.OldMode, fc.NewMode)
	}
	if len(hs) > 0 {
		b.WriteString(renderFile(p, hs))
	}
	fc.Diff = b.String()
	return fc
}

// hasReal reports whether any used member brings recorded changes: then the output carries
// Files and Sources.
func (a *Analysis) hasReal() bool {
	return slices.ContainsFunc(a.used, Member.real)
}

// textPatchable reports whether a file change is carried whole by the DeltaBatch's text
// Patches (a text edit, add or delete with its whole diff, no mode change); the others are
// only in Result.Files.
func textPatchable(f session.FileChange) bool {
	if f.Binary || f.Truncated || modeChanged(f) || !strings.Contains(f.Diff, "\n@@") {
		return false
	}
	switch f.Kind {
	case session.ChangeModified:
		return regularMode(f.OldMode) && regularMode(f.NewMode)
	case session.ChangeAdded:
		return f.NewMode == "" || f.NewMode == "100644"
	case session.ChangeDeleted:
		return regularMode(f.OldMode)
	}
	return false
}
