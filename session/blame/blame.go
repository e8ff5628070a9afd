package blame

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/summit-dev/summit/session"
)

// Origin is where one landed line came from.
type Origin struct {
	// SubagentID wrote the line ("" when no member did: the reviewer's own text, or a line a
	// convergence made itself); Also are the other members that wrote the same line (identical
	// changes merge into one).
	SubagentID string   `json:"subagent_id,omitempty"`
	Also       []string `json:"also,omitempty"`
	AgentType  string   `json:"agent_type,omitempty"`
	AgentName  string   `json:"agent_name,omitempty"`
	// Model is the provider/model its turns went to ("" on script tapes: Provider says so).
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	// ChangesSeq is the seq of the subagent's SubagentChanges (or ChangesRebased) that holds
	// the line.
	ChangesSeq uint64         `json:"changes_seq,omitempty"`
	Tokens     session.Tokens `json:"tokens"`
	CostUSD    *float64       `json:"cost_usd,omitempty"`

	// ConvergenceID is the convergence the line went through ("" for /apply sa-N).
	ConvergenceID string `json:"convergence_id,omitempty"`
	Strategy      string `json:"strategy,omitempty"`
	// ConflictID is the conflict at the line's place, when there was one, and how it was
	// settled.
	ConflictID  string `json:"conflict_id,omitempty"`
	Method      string `json:"method,omitempty"`
	Choice      string `json:"choice,omitempty"`
	ResolvedSeq uint64 `json:"resolved_seq,omitempty"`
	// Edited: the line is the reviewer's own text (--choose edit).
	Edited bool `json:"edited,omitempty"`

	ApplyID  string `json:"apply_id"`
	ApplySeq uint64 `json:"apply_seq"`
}

// Who is the origin in a few words: "sa-3", "sa-2 (also sa-3)", "you (edit, cf-1)".
func (o *Origin) Who() string {
	switch {
	case o.Edited:
		return "you (edit, " + o.ConflictID + ")"
	case o.SubagentID == "":
		return o.ConvergenceID
	case len(o.Also) > 0:
		return o.SubagentID + " (also " + strings.Join(o.Also, ", ") + ")"
	}
	return o.SubagentID
}

// Line is one line of the file.
type Line struct {
	N    int    `json:"n"`
	Text string `json:"text"`
	// TextKnown is false for a line no diff showed, when the caller gave no text.
	TextKnown bool    `json:"text_known"`
	Origin    *Origin `json:"origin,omitempty"` // nil: unchanged (summit did not land it)
}

// Report is the provenance of one file's lines.
type Report struct {
	Path  string `json:"path"`
	Lines []Line `json:"lines"`
	// Landed counts the lines with an origin; Lost the traced lines not found in the text the
	// caller gave (changed since summit left them).
	Landed int `json:"landed"`
	Lost   int `json:"lost"`
	// Applies are the applies that touched the file, in order (undone ones marked).
	Applies []string `json:"applies"`
	Notes   []string `json:"notes,omitempty"`
}

// entry is one traced line: its number in the file as summit left it, its text, and its
// origin (nil: a context line, which summit did not write).
type entry struct {
	n      int
	text   string
	origin *Origin
}

type fileMap struct {
	entries []entry // sorted by n
	cut     bool    // a diff that landed here was recorded cut
}

func (f *fileMap) clone() *fileMap {
	if f == nil {
		return nil
	}
	return &fileMap{entries: slices.Clone(f.entries), cut: f.cut}
}

// Builder folds a recording's events and traces the lines of every file summit landed.
type Builder struct {
	st         *session.State
	changesSeq map[string]uint64 // subagent → seq of its SubagentChanges
	rebasedSeq map[string]uint64 // convergence/subagent → seq of its ChangesRebased
	rebased    map[string]*session.SubagentChanges
	resolved   map[string]uint64 // conflict → seq of its ConflictResolved
	files      map[string]*fileMap
	// before holds, per apply, the maps of its files before it (nil: the file had none), for
	// ApplyUndone.
	before  map[string]map[string]*fileMap
	applies map[string][]string // path → apply ids, in order
	undone  map[string]bool
	notes   map[string][]string // path → notes
	// batchLanded marks a convergence whose ChangesApplied came: its DeltaBatchApplied that
	// follows lands nothing more.
	batchLanded map[string]bool
}

// New returns an empty Builder.
func New() *Builder {
	return &Builder{st: &session.State{}, changesSeq: map[string]uint64{}, rebasedSeq: map[string]uint64{},
		rebased: map[string]*session.SubagentChanges{}, resolved: map[string]uint64{}, files: map[string]*fileMap{},
		before: map[string]map[string]*fileMap{}, applies: map[string][]string{}, undone: map[string]bool{},
		notes: map[string][]string{}, batchLanded: map[string]bool{}}
}

// State is the fold of the events added so far.
func (b *Builder) State() *session.State { return b.st }

// Add folds one event (in seq order) and follows what it landed.
func (b *Builder) Add(e session.Event) error {
	if err := session.Apply(b.st, e); err != nil {
		return err
	}
	switch d := e.Data.(type) {
	case session.SubagentChanges:
		b.changesSeq[e.SubagentID] = e.Seq
	case session.ChangesRebased:
		key := d.ConvergenceID + "/" + e.SubagentID
		ch := d.SubagentChanges
		b.rebased[key], b.rebasedSeq[key] = &ch, e.Seq
	case session.ConflictResolved:
		b.resolved[d.ConflictID] = e.Seq
	case session.ChangesApplied:
		if b.st.Convergence(d.Source) != nil {
			b.batchLanded[d.Source] = true
		}
		if d.ConvergenceID != "" {
			b.batchLanded[d.ConvergenceID] = true
		}
		b.applied(d, e.Seq)
	case session.DeltaBatchApplied:
		// A DeltaBatch applied without real changes (its members only proposed patches)
		// lands its patches; after a ChangesApplied of the same convergence it lands nothing
		// more.
		if b.batchLanded[d.ConvergenceID] {
			delete(b.batchLanded, d.ConvergenceID)
			break
		}
		b.applied(session.ChangesApplied{ApplyID: d.ConvergenceID + "'s DeltaBatch", Source: d.ConvergenceID, Files: d.Files}, e.Seq)
	case session.ApplyUndone:
		for p, m := range b.before[d.ApplyID] {
			if m == nil {
				delete(b.files, p)
			} else {
				b.files[p] = m
			}
		}
		b.undone[d.ApplyID] = true
	}
	return nil
}

// Paths are the files summit landed lines in (and still has, after undos), sorted.
func (b *Builder) Paths() []string {
	var out []string
	for p, m := range b.files {
		for _, e := range m.entries {
			if e.origin != nil {
				out = append(out, p)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// landing is what one apply did to one file: its diff hunks, or its deletion or rename.
type landing struct {
	path, oldPath string
	deleted       bool
	cut           bool
	frags         []*gitdiff.TextFragment
}

func (b *Builder) applied(d session.ChangesApplied, seq uint64) {
	saved := map[string]*fileMap{}
	save := func(p string) {
		if _, ok := saved[p]; !ok {
			saved[p] = b.files[p].clone()
		}
	}
	base := Origin{ApplyID: d.ApplyID, ApplySeq: seq}
	var lands []landing
	var attribute func(p string, oldN int, text string) *Origin
	if cv := b.st.Convergence(d.Source); cv != nil {
		lands, attribute = b.convergenceLanding(cv, d, base)
	} else if sa := b.st.Subagent(d.Source); sa != nil && sa.Changes != nil {
		o := b.subagentOrigin(sa.ID, "")
		o.ApplyID, o.ApplySeq = base.ApplyID, base.ApplySeq
		lands = landings(sa.Changes.Files, d.Files)
		attribute = func(string, int, string) *Origin { return o }
	} else {
		for _, p := range d.Files {
			b.notes[p] = append(b.notes[p], fmt.Sprintf("%s (#%d) of %s: no recorded change to follow", d.ApplyID, seq, d.Source))
		}
	}
	for _, l := range lands {
		save(l.path)
		if l.oldPath != "" && l.oldPath != l.path {
			save(l.oldPath)
			if m := b.files[l.oldPath]; m != nil {
				b.files[l.path] = m
				delete(b.files, l.oldPath)
			}
		}
		if l.deleted {
			delete(b.files, l.path)
			continue
		}
		m := b.files[l.path].clone()
		if m == nil {
			m = &fileMap{}
		}
		m.entries = follow(m.entries, l.frags, func(oldN int, text string) *Origin { return attribute(l.path, oldN, text) })
		m.cut = m.cut || l.cut
		b.files[l.path] = m
	}
	for _, p := range d.Files {
		save(p)
		b.applies[p] = append(b.applies[p], d.ApplyID)
	}
	b.before[d.ApplyID] = saved
}

// landings parses the diffs of the files an apply landed (only those: a change set may hold
// files the apply left out).
func landings(files []session.FileChange, only []string) []landing {
	var out []landing
	for _, fc := range files {
		if len(only) > 0 && !slices.Contains(only, fc.Path) {
			continue
		}
		out = append(out, parseLanding(fc.Path, fc.OldPath, fc.Kind == session.ChangeDeleted, fc.Truncated, fc.Diff))
	}
	return out
}

func parseLanding(p, oldPath string, deleted, cut bool, diff string) landing {
	l := landing{path: p, oldPath: oldPath, deleted: deleted, cut: cut}
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err == nil && len(files) == 1 {
		f := files[0]
		l.frags = f.TextFragments
		l.deleted = l.deleted || f.IsDelete
		if f.IsRename && l.oldPath == "" {
			l.oldPath = f.OldName
		}
	} else if err != nil || len(files) > 1 {
		l.cut = true // unreadable: followed as far as nothing
	}
	return l
}

// proposals are the landings of a proposed diff (a capsule's patch suggestion), which may
// span files and name them with git's a/ and b/ prefixes.
func proposals(diff string) []landing {
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		return nil
	}
	var out []landing
	for _, f := range files {
		name := f.NewName
		if f.IsDelete || name == "" {
			name = f.OldName
		}
		if strings.HasPrefix(name, "a/") || strings.HasPrefix(name, "b/") {
			name = name[2:]
		}
		out = append(out, landing{path: path.Clean(name), deleted: f.IsDelete, frags: f.TextFragments})
	}
	return out
}

// subagentOrigin is what the recording says of a subagent (its changes in convergence cv, when
// rebased for it).
func (b *Builder) subagentOrigin(id, cv string) *Origin {
	o := &Origin{SubagentID: id, ChangesSeq: b.changesSeq[id], Provider: b.st.Info.Provider}
	if seq := b.rebasedSeq[cv+"/"+id]; cv != "" && seq != 0 {
		o.ChangesSeq = seq
	}
	if sa := b.st.Subagent(id); sa != nil {
		o.AgentType, o.AgentName, o.Model = sa.AgentType, sa.AgentName, sa.ModelInUse()
		o.Tokens, o.CostUSD = sa.Tokens, sa.CostUSD
	}
	return o
}

// convergenceLanding is the diffs a convergence's apply landed and how to attribute their
// added lines to its members.
func (b *Builder) convergenceLanding(cv *session.Convergence, d session.ChangesApplied, base Origin) ([]landing, func(string, int, string) *Origin) {
	// Each member's added lines, by path, base position and text.
	type key struct {
		path string
		n    int
		text string
	}
	wrote := map[key][]string{}
	var memberFiles = map[string][]session.FileChange{}
	for _, id := range cv.Members {
		ch := b.rebased[cv.ID+"/"+id]
		if ch == nil {
			if sa := b.st.Subagent(id); sa != nil {
				ch = sa.Changes
			}
		}
		var ls []landing
		switch {
		case ch != nil && len(ch.Files) > 0:
			memberFiles[id] = ch.Files
			ls = landings(ch.Files, nil)
		default:
			// A member that changed nothing converged on its capsule's proposals.
			if sa := b.st.Subagent(id); sa != nil && sa.Capsule != nil {
				for _, ps := range sa.Capsule.PatchSuggestions {
					ls = append(ls, proposals(ps.Diff)...)
				}
			}
		}
		for _, l := range ls {
			walkAdds(l.frags, func(n int, text string) {
				k := key{l.path, n, text}
				if !slices.Contains(wrote[k], id) {
					wrote[k] = append(wrote[k], id)
				}
			})
		}
	}
	var lands []landing
	if cv.Batch != nil && len(cv.Batch.Patches) > 0 {
		for _, p := range cv.Batch.Patches {
			if len(d.Files) > 0 && !slices.Contains(d.Files, p.Path) {
				continue
			}
			lands = append(lands, parseLanding(p.Path, "", false, false, p.Diff))
		}
	} else {
		// An apply review has no DeltaBatch: it landed its members' changes.
		for _, id := range cv.Members {
			lands = append(lands, landings(memberFiles[id], d.Files)...)
		}
	}
	origins := map[string]*Origin{}
	return lands, func(p string, n int, text string) *Origin {
		cf := b.conflictAt(cv, p, n)
		ids := wrote[key{p, n, text}]
		if len(ids) == 0 {
			// The same text at another place of the same file (a member's hunk moved by a
			// rebase or a merge): still that member's line.
			for k, v := range wrote {
				if k.path == p && k.text == text {
					ids = append(ids, v...)
				}
			}
			slices.Sort(ids)
			ids = slices.Compact(ids)
		}
		if cf != nil && cf.Resolution != nil {
			// The side the resolution chose goes first.
			if i := slices.Index(ids, cf.Resolution.Choice); i > 0 {
				ids = append([]string{ids[i]}, slices.Delete(slices.Clone(ids), i, i+1)...)
			}
		}
		k := strings.Join(ids, ",")
		if cf != nil {
			k += "/" + cf.ID
		}
		if o := origins[k]; o != nil {
			return o
		}
		o := &Origin{Provider: b.st.Info.Provider}
		if len(ids) > 0 {
			o = b.subagentOrigin(ids[0], cv.ID)
			o.Also = ids[1:]
		}
		o.ConvergenceID, o.Strategy = cv.ID, cv.Strategy
		o.ApplyID, o.ApplySeq = base.ApplyID, base.ApplySeq
		if cf != nil {
			o.ConflictID = cf.ID
			if r := cf.Resolution; r != nil {
				o.Method, o.Choice, o.ResolvedSeq = r.Method, r.Choice, b.resolved[cf.ID]
				o.Edited = len(ids) == 0 && r.Choice == "edit"
			}
		}
		origins[k] = o
		return o
	}
}

// conflictAt is the convergence's conflict on file p whose lines cover base line n (an added
// line sits before line n), or nil.
func (b *Builder) conflictAt(cv *session.Convergence, p string, n int) *session.Conflict {
	for _, cf := range cv.Conflicts {
		if cf.File != p {
			continue
		}
		if cf.Lines.IsZero() || (n >= cf.Lines.Start && n <= cf.Lines.End+1) {
			return cf
		}
	}
	return nil
}

// walkAdds calls fn with each added line of a diff: the old line it is inserted before, and its
// text (without the newline).
func walkAdds(frags []*gitdiff.TextFragment, fn func(oldN int, text string)) {
	for _, f := range frags {
		oldN := int(f.OldPosition)
		if f.OldLines == 0 {
			oldN++ // "-5,0": inserted after line 5
		}
		for _, l := range f.Lines {
			switch l.Op {
			case gitdiff.OpContext, gitdiff.OpDelete:
				oldN++
			case gitdiff.OpAdd:
				fn(oldN, strings.TrimSuffix(l.Line, "\n"))
			}
		}
	}
}

// follow applies a diff's hunks to a file's traced lines: lines before a hunk move by the
// hunks above it, a hunk's context lines keep their origin (and show their text), deleted
// lines go, and added lines take attribute's origin.
func follow(old []entry, frags []*gitdiff.TextFragment, attribute func(oldN int, text string) *Origin) []entry {
	at := map[int]entry{}
	for _, e := range old {
		at[e.n] = e
	}
	var out []entry
	i, delta := 0, 0
	// copyBefore moves the traced lines before old line n.
	copyBefore := func(n int) {
		for i < len(old) && old[i].n < n {
			e := old[i]
			e.n += delta
			out = append(out, e)
			i++
		}
	}
	for _, f := range frags {
		start := int(f.OldPosition)
		if f.OldLines == 0 {
			start++
		}
		copyBefore(start)
		oldN, newN := start, start+delta
		for _, l := range f.Lines {
			text := strings.TrimSuffix(l.Line, "\n")
			switch l.Op {
			case gitdiff.OpContext:
				e := at[oldN]
				out = append(out, entry{n: newN, text: text, origin: e.origin})
				oldN++
				newN++
			case gitdiff.OpDelete:
				oldN++
			case gitdiff.OpAdd:
				out = append(out, entry{n: newN, text: text, origin: attribute(oldN, text)})
				newN++
			}
		}
		// Skip the traced lines the hunk covered.
		for i < len(old) && old[i].n < oldN {
			i++
		}
		delta += int(f.NewLines) - int(f.OldLines)
	}
	copyBefore(int(^uint(0) >> 1))
	return out
}

// File is the provenance of path's lines. text is the file as it is now, one string per line
// (nil when unknown, e.g. the file is gone): the traced lines are aligned to it.
func (b *Builder) File(p string, text []string) Report {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	rep := Report{Path: p, Notes: slices.Clone(b.notes[p])}
	for _, id := range b.applies[p] {
		if b.undone[id] {
			id += " (undone)"
		}
		rep.Applies = append(rep.Applies, id)
	}
	m := b.files[p]
	if m == nil {
		m = &fileMap{}
	}
	if m.cut {
		rep.Notes = append(rep.Notes, "a recorded diff of this file was cut (past 256 KiB) or unreadable: lines past the cut are not traced")
	}
	if text == nil {
		last := 0
		if n := len(m.entries); n > 0 {
			last = m.entries[n-1].n
		}
		rep.Lines = make([]Line, last)
		for i := range rep.Lines {
			rep.Lines[i] = Line{N: i + 1}
		}
		for _, e := range m.entries {
			rep.Lines[e.n-1] = Line{N: e.n, Text: e.text, TextKnown: true, Origin: e.origin}
		}
	} else {
		rep.Lines = make([]Line, len(text))
		for i, t := range text {
			rep.Lines[i] = Line{N: i + 1, Text: t, TextKnown: true}
		}
		matched := map[int]bool{}
		for _, pr := range align(m.entries, text) {
			rep.Lines[pr[1]].Origin = m.entries[pr[0]].origin
			matched[pr[0]] = true
		}
		for i, e := range m.entries {
			if e.origin != nil && !matched[i] {
				rep.Lost++
			}
		}
		if rep.Lost > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s summit landed %s not in the file as it is now: changed since",
				session.Plural(rep.Lost, "line"), map[bool]string{true: "is", false: "are"}[rep.Lost == 1]))
		}
	}
	for _, l := range rep.Lines {
		if l.Origin != nil {
			rep.Landed++
		}
	}
	return rep
}

// align pairs traced entries with the file's lines: first where the traced line number holds
// the same text (the common case, nothing moved), else by a longest common subsequence of the
// texts. It returns (entry index, line index) pairs.
func align(es []entry, text []string) [][2]int {
	exact := true
	for _, e := range es {
		if e.n < 1 || e.n > len(text) || text[e.n-1] != e.text {
			exact = false
			break
		}
	}
	var out [][2]int
	if exact {
		for i, e := range es {
			out = append(out, [2]int{i, e.n - 1})
		}
		return out
	}
	// LCS, bounded: a huge file with many traced lines falls back to exact matches only.
	n, m := len(es), len(text)
	if n*m > 50_000_000 {
		for i, e := range es {
			if e.n >= 1 && e.n <= m && text[e.n-1] == e.text {
				out = append(out, [2]int{i, e.n - 1})
			}
		}
		return out
	}
	dp := make([][]int32, n+1)
	for i := range dp {
		dp[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case es[i].text == text[j]:
				dp[i][j] = dp[i+1][j+1] + 1
			case dp[i+1][j] >= dp[i][j+1]:
				dp[i][j] = dp[i+1][j]
			default:
				dp[i][j] = dp[i][j+1]
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case es[i].text == text[j]:
			out = append(out, [2]int{i, j})
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

// SplitLines splits a file's content into lines as blame counts them (a final newline ends
// the last line; it does not start another).
func SplitLines(b []byte) []string {
	if len(b) == 0 {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
