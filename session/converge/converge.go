package converge

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// Member is one subagent named in a /converge, as it ended.
type Member struct {
	ID       string
	Outcome  string             // session.Outcome*; "" while it runs (not allowed in Analyze)
	Capsule  *protocols.Capsule // nil when it produced none
	Finished uint64             // seq of its SubagentStop: the completion order
	Error    string             // its last error, for the report
	// Changes is what the member really changed in its isolated worktree (nil for a
	// read-only member). When set without an Error, its patches are these recorded changes,
	// not its capsule's patch_suggestions; with an Error the member is left out.
	Changes *session.SubagentChanges
	// Rebased says the caller already brought Changes onto the newest base of the members
	// (with git); otherwise a member on an older base is a base conflict under merge.
	Rebased bool
}

// Input is everything a convergence depends on. Analyze and Output are pure functions of it,
// so a replay recomputes exactly what the live session did.
type Input struct {
	ID         string // cv-N
	Strategy   string // commands.Strategy*
	Resolution string // commands.Resolution*
	Format     string // commands.Format*
	Members    []Member
	// FirstConflict numbers the conflicts: cf-FirstConflict, cf-FirstConflict+1, ...
	FirstConflict int
	// Playbook is the session's playbook, for the DeltaBatch's TAG / UPDATE / REMOVE.
	Playbook []session.PlaybookEntry
	// Read gives the current workspace files for the reviewer's context; nil = none.
	Read ReadFunc
}

// Conflict kinds.
const (
	KindHunk      = "hunk"
	KindFinding   = "finding"
	KindPlaybook  = "playbook"
	KindVote      = "vote"
	KindConsensus = "consensus"
	// KindFile is a file-level conflict between recorded changes (File is set): modify
	// versus delete, two different adds, rename versus modify or a second rename, differing
	// binaries, two different mode changes.
	KindFile = "file"
	// KindBase is a member whose changes were made on an older base than the newest of the
	// convergence and were not rebased: sides are that member and one on the newest base.
	KindBase = "base"
)

// ChooseEdit is the choice of a conflict whose lines the reviewer writes by hand (see
// EditTemplate and ResolveEdit): offered for hunk conflicts only, after none.
const ChooseEdit = "edit"

// Outcomes of a convergence.
const (
	OutcomeSuccess = "success" // output produced from every member
	OutcomePartial = "partial" // output produced; some members failed and were left out
	OutcomeFailure = "failure" // no output (see the notes)
)

// Check validates a /converge before it is accepted: the checks that need no results.
func Check(strategy string, ids []string) error {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return fmt.Errorf("%s is named twice; name each subagent once", id)
		}
		seen[id] = true
	}
	if len(ids) < 2 {
		return fmt.Errorf("a convergence needs 2 or more subagents; %d given", len(ids))
	}
	switch strategy {
	case commands.StrategyVote:
		if len(ids) < 3 {
			return fmt.Errorf("--strategy vote needs 3 or more subagents to have a majority; %d given (use merge or consensus for 2)", len(ids))
		}
	case commands.StrategyMerge, commands.StrategyConsensus, commands.StrategyFirstSuccess:
	default:
		return fmt.Errorf("unknown strategy %q", strategy)
	}
	return nil
}

// Analysis is a convergence after its members ended: the conflicts found, the ones settled
// by the resolution method, and the ones waiting for a person.
type Analysis struct {
	in        Input
	Conflicts []session.ConflictDetected
	// Auto holds the resolutions the method made itself (auto_accept_latest, and
	// prefer_higher_confidence where every side has a confidence).
	Auto []session.ConflictResolved
	// Review lists the conflicts left for manual review, each with why.
	Review []ReviewItem
	// Notes are log lines: members that failed or were ignored, fallbacks, dropped patches.
	Notes []string
	// Fatal is set when no output is possible whatever the resolutions (for example every
	// member failed, or a consensus member failed).
	Fatal string

	used      []Member // the members whose results are combined
	units     []unit
	conflicts []*conflict
	winner    string // vote / consensus / first_success: the result taken without conflicts
	failed    map[string]bool
	origin    map[string]map[string]origin // member → path → its recorded change and units
	inFile    map[int]bool                 // units in a file conflict
}

// ReviewItem is a conflict waiting for /resolve.
type ReviewItem struct {
	ConflictID string
	Reason     string // why it was not settled automatically ("" for manual)
}

type unitKind int

const (
	uHunk unitKind = iota
	uFinding
	uOp
	uFile // a whole recorded file change (fc)
	uMode // a recorded mode change of a text file (fc)
)

// unit is one atomic piece of a combined result.
type unit struct {
	kind    unitKind
	h       *hunk
	finding protocols.Finding
	fkey    string
	op      session.PlaybookOp
	okey    string
	// opBy is each source's own metadata of a TAG, so a TAG whose sources are partly left
	// out counts only the ones that land (opFor).
	opBy    map[string]map[string]any
	sources []string
	// Recorded changes: the file change a uFile or uMode is (the one a real hunk came
	// from), its path, every path a uFile touches, and a text add's or delete's hunks.
	fc    *session.FileChange
	path  string
	paths []string
	fhs   []*hunk
	// edit is the conflict whose hand-written lines this hunk is (choice edit; added by
	// Output only).
	edit string
}

type conflict struct {
	id      string
	kind    string
	units   []int            // every unit it involves
	sides   map[string][]int // member → its units
	order   []string         // side order (by id)
	canBoth bool
	sortKey string
	file    string            // file conflicts
	values  map[string]string // base conflicts: each side's account
}

// Analyze combines the members' results by the strategy and finds the conflicts. It fails
// only for input that Check would refuse or members still running.
func Analyze(in Input) (*Analysis, error) {
	ids := make([]string, len(in.Members))
	for i, m := range in.Members {
		ids[i] = m.ID
		if m.Outcome == "" {
			return nil, fmt.Errorf("%s has not finished", m.ID)
		}
	}
	if err := Check(in.Strategy, ids); err != nil {
		return nil, err
	}
	a := &Analysis{in: in, failed: map[string]bool{}}
	var ok []Member
	for _, m := range sortedMembers(in.Members) {
		if m.Outcome == session.OutcomeSuccess && m.Capsule != nil && m.Changes != nil && m.Changes.Error != "" {
			a.failed[m.ID] = true
			a.Notes = append(a.Notes, fmt.Sprintf("%s left out: its changes could not be recorded (%s)", m.ID, m.Changes.Error))
			continue
		}
		if m.Outcome == session.OutcomeSuccess && m.Capsule != nil {
			ok = append(ok, m)
			continue
		}
		a.failed[m.ID] = true
		why := m.Outcome
		if m.Outcome == session.OutcomeSuccess {
			why = "no result capsule"
		}
		if m.Error != "" {
			why += ": " + m.Error
		}
		a.Notes = append(a.Notes, fmt.Sprintf("%s %s (%s)", m.ID, failedVerb(m.Outcome), why))
	}
	failed := len(in.Members) - len(ok)
	switch in.Strategy {
	case commands.StrategyMerge:
		if len(ok) == 0 {
			a.Fatal = "every member failed; there is nothing to merge"
			break
		}
		if failed > 0 {
			a.Notes = append(a.Notes, fmt.Sprintf("merging the %d members that succeeded", len(ok)))
		}
		a.used = ok
		a.pool()
		a.baseConflicts()
	case commands.StrategyFirstSuccess:
		if len(ok) == 0 {
			a.Fatal = "no member succeeded"
			break
		}
		first := slices.MinFunc(ok, func(x, y Member) int { return cmp.Compare(x.Finished, y.Finished) })
		a.winner, a.used = first.ID, []Member{first}
		for _, m := range sortedMembers(in.Members) {
			if m.ID != first.ID {
				a.Notes = append(a.Notes, fmt.Sprintf("%s ignored: %s succeeded first", m.ID, first.ID))
			}
		}
		a.pool()
	case commands.StrategyVote:
		a.vote(ok)
	case commands.StrategyConsensus:
		if failed > 0 {
			a.Fatal = "consensus needs every member's result, and not every member succeeded"
			break
		}
		a.consensus(ok)
	}
	check := ok
	switch in.Strategy {
	case commands.StrategyFirstSuccess:
		check = a.used
	case commands.StrategyVote, commands.StrategyConsensus:
		if n := baseNote(ok); n != "" {
			a.Notes = append(a.Notes, n)
		}
	}
	for _, m := range check {
		if m.real() {
			a.Notes = append(a.Notes, realNotes(m)...)
		}
	}
	a.number()
	a.resolveAuto()
	return a, nil
}

func failedVerb(outcome string) string {
	switch outcome {
	case session.OutcomeTimeout:
		return "timed out"
	case session.OutcomeCancelled:
		return "was cancelled"
	case session.OutcomeSuccess:
		return "gave nothing to combine"
	}
	return "failed"
}

// sortedMembers orders members by id (sa-2 before sa-10), so results do not depend on the
// order they were named in.
func sortedMembers(ms []Member) []Member {
	out := slices.Clone(ms)
	slices.SortFunc(out, func(x, y Member) int { return idCompare(x.ID, y.ID) })
	return out
}

func idCompare(x, y string) int {
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	return cmp.Compare(x, y)
}

func (a *Analysis) member(id string) Member {
	for _, m := range a.in.Members {
		if m.ID == id {
			return m
		}
	}
	return Member{}
}

// pool gathers the units of the used members, merging identical ones, and finds conflicts
// between members (never within one member: its own overlapping hunks fail at /apply).
func (a *Analysis) pool() {
	byKey := map[string]int{}
	add := func(u unit, key, from string) int {
		if i, ok := byKey[key]; ok {
			if !slices.Contains(a.units[i].sources, from) {
				a.units[i].sources = append(a.units[i].sources, from)
			}
			if u.kind == uOp && u.op.Type == session.OpTag {
				a.units[i].op.Metadata = addCounts(a.units[i].op.Metadata, u.op.Metadata)
				a.units[i].opBy[from] = addCounts(a.units[i].opBy[from], u.op.Metadata)
			}
			return i
		}
		u.sources = []string{from}
		if u.kind == uOp {
			u.opBy = map[string]map[string]any{from: u.op.Metadata}
		}
		byKey[key] = len(a.units)
		a.units = append(a.units, u)
		return len(a.units) - 1
	}
	for _, m := range a.used {
		c := m.Capsule
		if m.real() {
			// Its patches are what it really changed; its proposals are only compared
			// with that (realNotes).
			a.poolChanges(m, add)
		} else {
			for pi, ps := range c.PatchSuggestions {
				hs, err := parseDiff(ps.Diff)
				if err != nil {
					a.Notes = append(a.Notes, fmt.Sprintf("%s patch %d left out: %v", m.ID, pi+1, err))
					continue
				}
				for _, h := range hs {
					add(unit{kind: uHunk, h: h}, "h\x00"+h.key, m.ID)
				}
			}
		}
		for _, f := range c.Findings {
			fk := findingKey(f)
			add(unit{kind: uFinding, finding: f, fkey: fk}, "f\x00"+fk+"\x00"+strings.ToLower(f.Severity), m.ID)
		}
		for _, it := range parseDownstream(c.DownstreamContext, a.in.Playbook) {
			if it.problem != "" {
				a.Notes = append(a.Notes, fmt.Sprintf("%s Downstream Context: %s; left out", m.ID, it.problem))
				continue
			}
			op := it.op
			var key string
			switch op.Type {
			case session.OpAdd:
				key = "add\x00" + op.Section + "\x00" + norm(op.Content)
			case session.OpTag:
				key = "tag\x00" + op.BulletID
			default: // UPDATE and REMOVE of one entry must agree
				key = "edit\x00" + op.BulletID + "\x00" + op.Type + "\x00" + norm(op.Content)
			}
			add(unit{kind: uOp, op: op, okey: "edit\x00" + op.BulletID}, key, m.ID)
		}
	}
	for i := range a.units {
		slices.SortFunc(a.units[i].sources, idCompare)
	}
	a.fileConflicts()
	a.hunkConflicts()
	a.groupConflicts(uFinding, KindFinding, func(u unit) string { return u.fkey })
	a.groupConflicts(uOp, KindPlaybook, func(u unit) string {
		if u.op.Type == session.OpUpdate || u.op.Type == session.OpRemove {
			return u.okey
		}
		return ""
	})
}

func addCounts(x, y map[string]any) map[string]any {
	out := maps.Clone(x)
	for k, v := range y {
		out[k] = toInt(out[k]) + toInt(v)
	}
	return out
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

// findingKey is what makes two findings "the same": their file references and summary.
func findingKey(f protocols.Finding) string {
	refs := slices.Clone(f.FileRefs)
	slices.Sort(refs)
	return strings.Join(refs, ",") + "\x00" + norm(f.Summary)
}

// hunkConflicts groups overlapping hunks of each file (transitively); a group with hunks
// from two or more members is one conflict.
func (a *Analysis) hunkConflicts() {
	var idx []int
	for i, u := range a.units {
		if u.kind == uHunk && !a.inFile[i] {
			idx = append(idx, i)
		}
	}
	parent := map[int]int{}
	var find func(int) int
	find = func(i int) int {
		if p, ok := parent[i]; ok && p != i {
			r := find(p)
			parent[i] = r
			return r
		}
		return i
	}
	for x, i := range idx {
		for _, j := range idx[x+1:] {
			hi, hj := a.units[i].h, a.units[j].h
			if hi.file == hj.file && (overlaps(hi, hj) || hi.isNew != hj.isNew || hi.isDelete != hj.isDelete) {
				ri, rj := find(i), find(j)
				if ri != rj {
					parent[max(ri, rj)] = min(ri, rj)
				}
			}
		}
	}
	groups := map[int][]int{}
	for _, i := range idx {
		r := find(i)
		groups[r] = append(groups[r], i)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		c := a.newConflict(KindHunk, g)
		if c == nil {
			continue
		}
		// Both sides can be applied together only when all are insertions at one point.
		c.canBoth = true
		h0 := a.units[g[0]].h
		for _, i := range g {
			h := a.units[i].h
			if h.coreLen != 0 || h.coreStart != h0.coreStart || h.isDelete {
				c.canBoth = false
			}
		}
		start, end := h0.coreStart, h0.end()
		for _, i := range g {
			start, end = min(start, a.units[i].h.coreStart), max(end, a.units[i].h.end())
		}
		c.sortKey = fmt.Sprintf("0\x00%s\x00%09d\x00%09d", h0.file, start, end)
	}
}

// groupConflicts makes a conflict of units of one kind sharing a key, e.g. findings on the
// same file and summary with different severities.
func (a *Analysis) groupConflicts(kind unitKind, name string, key func(unit) string) {
	groups := map[string][]int{}
	for i, u := range a.units {
		if u.kind == kind {
			if k := key(u); k != "" {
				groups[k] = append(groups[k], i)
			}
		}
	}
	for k, g := range groups {
		if len(g) < 2 {
			continue
		}
		if c := a.newConflict(name, g); c != nil {
			c.canBoth = kind == uFinding
			c.sortKey = fmt.Sprintf("%d\x00%s", kind, k)
		}
	}
}

// newConflict records a conflict over units when they come from two or more members.
func (a *Analysis) newConflict(kind string, g []int) *conflict {
	slices.Sort(g)
	c := &conflict{kind: kind, units: g, sides: map[string][]int{}}
	for _, i := range g {
		for _, s := range a.units[i].sources {
			c.sides[s] = append(c.sides[s], i)
		}
	}
	if len(c.sides) < 2 {
		return nil
	}
	// Members that proposed exactly the same units agree; it is a conflict only when at
	// least two different positions remain.
	positions := map[string]bool{}
	for _, us := range c.sides {
		positions[fmt.Sprint(us)] = true
	}
	if len(positions) < 2 {
		return nil
	}
	c.order = slices.SortedFunc(maps.Keys(c.sides), idCompare)
	a.conflicts = append(a.conflicts, c)
	return c
}

// normalised is a member's result as compared by vote and consensus: its recorded change
// set when it has one, else its set of changes when it proposes patches, else its verdict,
// else its summary.
func (a *Analysis) normalised(m Member) (key, show string) {
	if m.real() {
		return changesKey(m)
	}
	var keys []string
	for _, ps := range m.Capsule.PatchSuggestions {
		hs, err := parseDiff(ps.Diff)
		if err != nil {
			keys = append(keys, "unparsed:"+ps.Diff)
			continue
		}
		for _, h := range hs {
			keys = append(keys, h.key)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		keys = slices.Compact(keys)
		return "patch\x00" + strings.Join(keys, "\x01"), fmt.Sprintf("%d hunks: %s", len(keys), m.Capsule.Summary)
	}
	if v := m.Capsule.Verification; v != nil && v.Status != "" {
		return "verdict\x00" + strings.ToLower(v.Status), "verdict " + v.Status + ": " + m.Capsule.Summary
	}
	if s := m.Capsule.Status; s != "" && s != "success" {
		return "status\x00" + norm(s) + "\x00" + norm(m.Capsule.Summary), m.Capsule.Summary
	}
	return "summary\x00" + norm(m.Capsule.Summary), m.Capsule.Summary
}

// groups splits members by normalised result, largest group first (ties: the group whose
// first member finished first).
func (a *Analysis) groups(ms []Member) [][]Member {
	byKey := map[string][]Member{}
	var keys []string
	for _, m := range ms {
		k, _ := a.normalised(m)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], m)
	}
	var out [][]Member
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	first := func(g []Member) uint64 {
		return slices.MinFunc(g, func(x, y Member) int { return cmp.Compare(x.Finished, y.Finished) }).Finished
	}
	slices.SortStableFunc(out, func(x, y []Member) int {
		if c := cmp.Compare(len(y), len(x)); c != 0 {
			return c
		}
		return cmp.Compare(first(x), first(y))
	})
	return out
}

func (a *Analysis) vote(ok []Member) {
	if len(ok) < 2 {
		a.Fatal = fmt.Sprintf("%d member(s) succeeded; a vote needs at least 2 results", len(ok))
		return
	}
	gs := a.groups(ok)
	if len(gs) > 1 && len(gs[0]) == len(gs[1]) {
		var tied []Member
		for _, g := range gs {
			if len(g) == len(gs[0]) {
				tied = append(tied, g...)
			}
		}
		a.resultConflict(KindVote, tied, "")
		return
	}
	w := earliest(gs[0])
	a.winner = w.ID
	a.Notes = append(a.Notes, fmt.Sprintf("%d of %d votes agree; %s's result stands for them", len(gs[0]), len(ok), w.ID))
	for _, g := range gs[1:] {
		for _, m := range g {
			a.Notes = append(a.Notes, fmt.Sprintf("%s outvoted", m.ID))
		}
	}
}

func earliest(g []Member) Member {
	return slices.MinFunc(g, func(x, y Member) int { return cmp.Compare(x.Finished, y.Finished) })
}

// consensus: the largest group of equal results is the reference; every member outside it,
// and every member of it whose confidence lies outside the widest 0.1 band, disagrees.
func (a *Analysis) consensus(ok []Member) {
	gs := a.groups(ok)
	ref := gs[0]
	var band []Member
	var noConf []string
	for _, m := range ref {
		if m.Capsule.Confidence == nil {
			noConf = append(noConf, m.ID)
		}
	}
	if len(noConf) > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("%s gave no confidence; compared on result only", strings.Join(noConf, ", ")))
	}
	// The 0.1-wide window holding the most members (ties: the higher window).
	bestLo, bestN := math.NaN(), -1
	for _, m := range ref {
		if c := m.Capsule.Confidence; c != nil {
			n := 0
			for _, o := range ref {
				if oc := o.Capsule.Confidence; oc != nil && *oc >= *c-1e-9 && *oc <= *c+0.1+1e-9 {
					n++
				}
			}
			if n > bestN || (n == bestN && *c > bestLo) {
				bestLo, bestN = *c, n
			}
		}
	}
	var dissent []Member
	for _, m := range ref {
		c := m.Capsule.Confidence
		if c == nil || bestN < 0 || (*c >= bestLo-1e-9 && *c <= bestLo+0.1+1e-9) {
			band = append(band, m)
		} else {
			dissent = append(dissent, m)
		}
	}
	for _, g := range gs[1:] {
		dissent = append(dissent, g...)
	}
	// The representative: the most confident of the band, then the earliest.
	rep := slices.MinFunc(band, func(x, y Member) int {
		cx, cy := conf(x), conf(y)
		if cx != cy {
			return cmp.Compare(cy, cx)
		}
		return cmp.Compare(x.Finished, y.Finished)
	})
	a.winner = rep.ID
	slices.SortFunc(dissent, func(x, y Member) int { return idCompare(x.ID, y.ID) })
	for _, d := range dissent {
		a.resultConflict(KindConsensus, []Member{rep, d}, rep.ID)
	}
	if len(dissent) == 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("all %d members agree; %s's result stands for them", len(ok), rep.ID))
	}
}

func conf(m Member) float64 {
	if m.Capsule.Confidence == nil {
		return -1
	}
	return *m.Capsule.Confidence
}

// resultConflict is a conflict between whole results (vote, consensus). Its sides have no
// units; the choice picks the member whose result is output.
func (a *Analysis) resultConflict(kind string, ms []Member, ref string) {
	c := &conflict{kind: kind, sides: map[string][]int{}}
	for _, m := range ms {
		c.sides[m.ID] = nil
	}
	c.order = slices.SortedFunc(maps.Keys(c.sides), idCompare)
	if ref != "" { // the reference side first
		c.order = append([]string{ref}, slices.DeleteFunc(c.order, func(s string) bool { return s == ref })...)
	}
	c.sortKey = fmt.Sprintf("3\x00%s", strings.Join(c.order, ","))
	a.conflicts = append(a.conflicts, c)
}

// number sorts the conflicts by kind, file and position and gives them ids.
func (a *Analysis) number() {
	slices.SortStableFunc(a.conflicts, func(x, y *conflict) int { return cmp.Compare(x.sortKey, y.sortKey) })
	for i, c := range a.conflicts {
		c.id = "cf-" + strconv.Itoa(a.in.FirstConflict+i)
	}
	inConflict := a.conflictOf()
	for _, c := range a.conflicts {
		ev := a.detected(c)
		ev.Review = a.review(c, inConflict)
		a.Conflicts = append(a.Conflicts, ev)
	}
}

func (a *Analysis) detected(c *conflict) session.ConflictDetected {
	ev := session.ConflictDetected{ConvergenceID: a.in.ID, ConflictID: c.id, Kind: c.kind}
	ev.Choices = a.choices(c)
	for _, id := range c.order {
		m := a.member(id)
		side := session.ConflictSide{SubagentID: id, Confidence: m.Capsule.Confidence}
		switch c.kind {
		case KindHunk:
			var b strings.Builder
			for _, i := range c.sides[id] {
				b.WriteString(a.units[i].h.text())
			}
			side.Value = b.String()
		case KindFinding:
			f := a.units[c.sides[id][0]].finding
			side.Value = map[string]any{"severity": f.Severity, "summary": f.Summary, "file_refs": f.FileRefs}
		case KindPlaybook:
			op := a.units[c.sides[id][0]].op
			side.Value = map[string]any{"type": op.Type, "bullet_id": op.BulletID, "content": op.Content}
		case KindFile:
			side.Value = a.sideText(c.sides[id])
		case KindBase:
			side.Value = c.values[id]
		default:
			_, show := a.normalised(m)
			side.Value = map[string]any{"result": show, "finished_seq": m.Finished}
			side.Reason, side.Diff = a.resultReason(c, m), memberDiff(m)
		}
		ev.Sides = append(ev.Sides, side)
	}
	switch c.kind {
	case KindHunk:
		h0 := a.units[c.units[0]].h
		start, end := h0.coreStart, h0.end()
		for _, i := range c.units {
			start, end = min(start, a.units[i].h.coreStart), max(end, a.units[i].h.end())
		}
		ev.File = h0.file
		lr := session.LineRange{Start: start + 1, End: max(end, start+1)}
		ev.Lines = &lr
		ev.Context = a.context(h0.file, start, end)
	case KindFinding:
		f := a.units[c.units[0]].finding
		if len(f.FileRefs) > 0 {
			file, lines := splitRef(f.FileRefs[0])
			ev.File, ev.Lines = file, lines
			if lines != nil {
				ev.Context = a.context(file, lines.Start-1, lines.End)
			}
		}
	case KindFile:
		ev.File = c.file
		ev.Context = a.fileContext(c.file)
	case KindPlaybook:
		id := a.units[c.units[0]].op.BulletID
		if i := entry(a.in.Playbook, id); i >= 0 {
			ev.Context = fmt.Sprintf("%s [%s] %s", id, a.in.Playbook[i].Section, a.in.Playbook[i].Content)
		}
	}
	return ev
}

// splitRef reads "path:40" or "path:40-58".
func splitRef(ref string) (string, *session.LineRange) {
	i := strings.LastIndexByte(ref, ':')
	if i < 0 {
		return ref, nil
	}
	var lr session.LineRange
	if err := lr.UnmarshalJSON(strconv.AppendQuote(nil, ref[i+1:])); err != nil || lr.Start <= 0 {
		return ref, nil
	}
	return ref[:i], &lr
}

// context is the current file around old lines [start, end), numbered, for the reviewer.
func (a *Analysis) context(file string, start, end int) string {
	if a.in.Read == nil {
		return ""
	}
	data, err := a.in.Read(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "(the file does not exist yet)"
	}
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	lines := splitLines(string(data))
	from, to := max(0, start-3), min(len(lines), end+3)
	var b strings.Builder
	for i := from; i < to; i++ {
		mark := " "
		if i >= start && i < end {
			mark = "│"
		}
		fmt.Fprintf(&b, "%5d %s %s\n", i+1, mark, strings.TrimRight(session.Sanitize(lines[i]), "\n"))
	}
	if b.Len() == 0 {
		return fmt.Sprintf("(the file has %d lines)", len(lines))
	}
	return b.String()
}

// resolveAuto settles what the method can settle on its own.
func (a *Analysis) resolveAuto() {
	for i, c := range a.conflicts {
		ev := a.Conflicts[i]
		switch a.in.Resolution {
		case commands.ResolutionAutoAcceptLatest:
			latest := slices.MaxFunc(c.order, func(x, y string) int { return cmp.Compare(a.member(x).Finished, a.member(y).Finished) })
			a.Auto = append(a.Auto, a.resolution(c, latest, commands.ResolutionAutoAcceptLatest,
				fmt.Sprintf("%s finished last", latest)))
		case commands.ResolutionPreferHigherConfidence:
			var missing []string
			best, bestC, tie := "", -1.0, false
			for _, s := range ev.Sides {
				if s.Confidence == nil {
					missing = append(missing, s.SubagentID)
					continue
				}
				switch {
				case *s.Confidence > bestC:
					best, bestC, tie = s.SubagentID, *s.Confidence, false
				case *s.Confidence == bestC:
					tie = true
				}
			}
			switch {
			case len(missing) > 0:
				a.Review = append(a.Review, ReviewItem{c.id, fmt.Sprintf("%s gave no confidence; falling back to manual review", strings.Join(missing, ", "))})
			case tie:
				a.Review = append(a.Review, ReviewItem{c.id, fmt.Sprintf("confidence is tied at %.2f; falling back to manual review", bestC)})
			default:
				a.Auto = append(a.Auto, a.resolution(c, best, commands.ResolutionPreferHigherConfidence,
					fmt.Sprintf("%s is the most confident (%.2f)", best, bestC)))
			}
		default:
			a.Review = append(a.Review, ReviewItem{ConflictID: c.id})
		}
	}
}

func (a *Analysis) resolution(c *conflict, choice, method, note string) session.ConflictResolved {
	r := session.ConflictResolved{ConvergenceID: a.in.ID, ConflictID: c.id, Method: method, Choice: choice, Note: note, Overridden: []string{}}
	for _, s := range c.order {
		if s != choice && choice != commands.ChooseBoth {
			r.Overridden = append(r.Overridden, s)
		}
	}
	// What the choice keeps and drops, and what else lands with it: the same a manual review
	// shows before enter, so an automatic choice is on record with its consequences.
	switch {
	case c.kind == KindVote || c.kind == KindConsensus:
		r.Kept, r.Dropped, r.PlaybookKept, r.PlaybookDropped = a.resultKept(c, choice)
	case a.conflictFile(c) != "":
		r.Kept, r.Dropped, _, _ = a.keptDropped(c, choice)
		o := a.regionOutcome(c, choice, a.conflictOf())
		r.AlsoLands, r.PlaybookKept, r.PlaybookDropped = o.AlsoLands, o.PlaybookLands, o.PlaybookDrops
	default:
		r.Kept, r.Dropped, r.PlaybookKept, r.PlaybookDropped = a.keptDropped(c, choice)
	}
	return r
}

// conflict is the conflict with an id; nil when there is none.
func (a *Analysis) conflict(id string) *conflict {
	for _, c := range a.conflicts {
		if c.id == id {
			return c
		}
	}
	return nil
}

// choices are a conflict's valid --choose values: its sides, both where they can be applied
// together, none, and edit where its lines can be written by hand.
func (a *Analysis) choices(c *conflict) []string {
	out := slices.Clone(c.order)
	if c.canBoth {
		out = append(out, commands.ChooseBoth)
	}
	out = append(out, commands.ChooseNone)
	if a.editable(c) {
		out = append(out, ChooseEdit)
	}
	return out
}

// Resolve checks a manual choice for a conflict and returns the resolution event. Choice
// edit needs the reviewer's text: it is refused here (use ResolveEdit).
func (a *Analysis) Resolve(conflictID, choice, note string) (session.ConflictResolved, error) {
	c := a.conflict(conflictID)
	if c == nil {
		return session.ConflictResolved{}, fmt.Errorf("%s is not a conflict of %s", conflictID, a.in.ID)
	}
	valid := a.choices(c)
	if choice == ChooseEdit && slices.Contains(valid, ChooseEdit) {
		return session.ConflictResolved{}, fmt.Errorf("choice edit of %s needs the text its lines become: give the content (ResolveEdit), or choose %s",
			conflictID, orList(slices.DeleteFunc(valid, func(s string) bool { return s == ChooseEdit })))
	}
	if !slices.Contains(valid, choice) {
		msg := fmt.Sprintf("%s is not a side of %s", choice, conflictID)
		switch choice {
		case commands.ChooseBoth:
			msg = fmt.Sprintf("the sides of %s cannot both be applied: %s", conflictID, whyNotBoth(c.kind))
		case ChooseEdit:
			msg = fmt.Sprintf("%s cannot be edited by hand: %s", conflictID, whyNotEdit(c.kind))
		}
		return session.ConflictResolved{}, fmt.Errorf("%s; choose %s", msg, orList(valid))
	}
	return a.resolution(c, choice, commands.ResolutionManual, note), nil
}

func whyNotBoth(kind string) string {
	switch kind {
	case KindHunk:
		return "they change the same lines"
	case KindPlaybook:
		return "they edit the same playbook entry differently"
	case KindFile:
		return "they change the same file in ways that cannot be combined; the chosen side's change of it is taken whole"
	case KindBase:
		return "the engine cannot rebase; take the member to keep its changes as recorded, or another side or none to leave them out"
	}
	return "only one result can stand"
}

func orList(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// Choices returns the valid --choose values of a conflict, for completion and the review
// prompt.
func (a *Analysis) Choices(conflictID string) []string {
	if c := a.conflict(conflictID); c != nil {
		return a.choices(c)
	}
	return nil
}

// Result is the output of a convergence.
type Result struct {
	Outcome string
	// Converged is set for json and markdown; Batch for delta_batch.
	Converged *session.ConvergedResult
	Batch     *session.DeltaBatch
	Size      int // bytes of the output
	Notes     []string
	Doc       Document
	// Files is the resolved change set when any used member brings recorded changes (nil
	// otherwise): one entry per path, sorted by path. A whole-file change (add, delete,
	// rename, binary, mode, cut diff) is the winning member's FileChange as recorded; a text
	// file is the FileChange of the one member whose change it exactly is, else one combined
	// from the taken hunks (a git-style diff, Kind modified). Files also holds what
	// read-only members proposed. Live applies it with git; a binary's or cut diff's content
	// is in the Sources member's result commit.
	Files []session.FileChange
	// Sources maps each path of Files to the member whose recorded change it is, or to
	// SourceMerged when it combines several members' changes.
	Sources map[string]string
}

// Output builds the result once every conflict has a resolution (auto or manual). It fails
// when one is missing.
func (a *Analysis) Output(resolved map[string]session.ConflictResolved) (Result, error) {
	var missing []string
	for _, c := range a.conflicts {
		if _, ok := resolved[c.id]; !ok {
			missing = append(missing, c.id)
		}
	}
	if len(missing) > 0 {
		return Result{}, fmt.Errorf("unresolved conflicts: %s", strings.Join(missing, ", "))
	}
	for _, c := range a.conflicts {
		if r := resolved[c.id]; r.Choice == ChooseEdit {
			if !a.editable(c) {
				return Result{}, fmt.Errorf("%s cannot be edited by hand: %s", c.id, whyNotEdit(c.kind))
			}
			if err := checkContent(c.id, r.Content); err != nil {
				return Result{}, err
			}
		}
	}
	notes := slices.Clone(a.Notes)
	doc := Document{ConvergenceID: a.in.ID, Strategy: a.in.Strategy, ConflictResolution: a.in.Resolution}
	for _, m := range sortedMembers(a.in.Members) {
		doc.Members = append(doc.Members, MemberDoc{SubagentID: m.ID, Outcome: m.Outcome, Confidence: confOf(m)})
	}
	for _, c := range a.conflicts {
		r := resolved[c.id]
		doc.Conflicts = append(doc.Conflicts, ConflictDoc{ConflictID: c.id, Kind: c.kind, Choice: r.Choice, Method: r.Method, Note: r.Note,
			Edited: r.Choice == ChooseEdit})
	}
	// Members whose base conflict left their changes out.
	dropped := map[string]bool{}
	for _, c := range a.conflicts {
		if c.kind == KindBase {
			if s := c.order[0]; resolved[c.id].Choice != s {
				dropped[s] = true
				notes = append(notes, fmt.Sprintf("%s: %s's changes are left out (made on an older base)", c.id, s))
			}
		}
	}
	for _, c := range a.conflicts {
		if ch := resolved[c.id].Choice; c.kind != KindBase && dropped[ch] {
			notes = append(notes, fmt.Sprintf("%s: %s's side was chosen, but its changes are left out by its base conflict", c.id, ch))
		}
	}
	// Which units stand, and from which pool.
	src, take := a, []int(nil)
	fatal := a.Fatal
	editKept := map[int]bool{} // units of conflicts settled by edit: the reviewer's lines stand for them
	switch a.in.Strategy {
	case commands.StrategyMerge, commands.StrategyFirstSuccess:
		in := map[int]bool{}
		for _, c := range a.conflicts {
			for _, u := range c.units {
				in[u] = true
			}
		}
		for i := range a.units {
			if !in[i] {
				take = append(take, i)
			}
		}
		var edits []unit
		wf := a.wholeFileOf(resolved)
		for i, c := range a.conflicts {
			switch ch := resolved[c.id].Choice; ch {
			case commands.ChooseBoth:
				take = append(take, c.units...)
			case commands.ChooseNone:
			case ChooseEdit:
				if _, ok := wf[a.conflictFile(c)]; ok {
					continue // a side's whole version of the file stands instead
				}
				// The reviewer's text in place of every side's hunks.
				for _, u := range c.units {
					editKept[u] = true
				}
				u, note := a.editUnit(c, a.Conflicts[i].Lines, resolved[c.id].Content)
				notes = append(notes, note)
				if u != nil {
					edits = append(edits, *u)
				}
			default:
				take = append(take, c.sides[ch]...)
			}
		}
		// A side's whole version of a file (--whole-file): exactly its units there, every
		// other member's dropped, whatever the file's region choices took.
		for _, p := range slices.Sorted(maps.Keys(wf)) {
			side := wf[p]
			take = slices.DeleteFunc(take, func(i int) bool { return inFileOf(a.units[i], p) })
			for _, i := range a.fileUnits(p) {
				if slices.Contains(a.units[i].sources, side) {
					take = append(take, i)
				}
			}
			notes = append(notes, fmt.Sprintf("%s: %s's whole version taken; every other change of it is left out", session.Sanitize(p), side))
		}
		if len(edits) > 0 {
			cp := *a
			cp.units = append(slices.Clone(a.units), edits...)
			for i := range edits {
				take = append(take, len(a.units)+i)
			}
			src = &cp
		}
	case commands.StrategyVote, commands.StrategyConsensus:
		w := a.winner
		for _, c := range a.conflicts {
			switch ch := resolved[c.id].Choice; ch {
			case commands.ChooseNone:
				if fatal == "" {
					fatal = fmt.Sprintf("%s was resolved with none: no result stands", c.id)
				}
			case commands.ChooseBoth:
			default:
				if w != "" && ch != w {
					notes = append(notes, fmt.Sprintf("%s: %s's result stands instead of %s's", c.id, ch, w))
				}
				w = ch
			}
		}
		if fatal == "" && w != "" {
			// The chosen result alone: one member's units never conflict.
			src = &Analysis{in: a.in, used: []Member{a.member(w)}, winner: w}
			src.pool()
			notes = append(notes, src.Notes...)
			for i := range src.units {
				take = append(take, i)
			}
		}
	}
	if fatal != "" {
		notes = append(notes, fatal)
		doc.Outcome = OutcomeFailure
		take = nil
	} else {
		doc.Outcome = OutcomeSuccess
		for _, m := range a.in.Members {
			if a.failed[m.ID] && a.in.Strategy != commands.StrategyFirstSuccess {
				doc.Outcome = OutcomePartial
			}
		}
	}
	slices.Sort(take)
	take = slices.Compact(take)
	take = slices.DeleteFunc(take, func(i int) bool {
		return isChange(src.units[i]) && len(src.effSources(src.units[i], dropped)) == 0
	})
	if fatal == "" && a.in.Strategy == commands.StrategyMerge {
		// A member's playbook operations land only with its whole change (review.go).
		var opNotes []string
		src, take, opNotes = a.orphanOps(src, take, editKept, dropped)
		notes = append(notes, opNotes...)
	}
	notes = append(notes, src.fill(&doc, take, dropped)...)
	doc.Notes = notes
	res := Result{Outcome: doc.Outcome, Notes: notes, Doc: doc, Files: doc.Files, Sources: doc.Sources}
	switch a.in.Format {
	case commands.FormatDeltaBatch:
		b := &session.DeltaBatch{ConvergenceID: a.in.ID, Reasoning: doc.reasoning(), Operations: doc.Operations, Patches: doc.Patches}
		if b.Operations == nil {
			b.Operations = []session.PlaybookOp{}
		}
		if b.Patches == nil {
			b.Patches = []session.Patch{}
		}
		data, _ := json.Marshal(b)
		res.Batch, res.Size = b, len(data)
	case commands.FormatJSON:
		data, _ := json.MarshalIndent(doc, "", "  ")
		res.Converged = &session.ConvergedResult{ConvergenceID: a.in.ID, Format: commands.FormatJSON, Output: string(data)}
		res.Size = len(data)
	default:
		md := doc.Markdown()
		res.Converged = &session.ConvergedResult{ConvergenceID: a.in.ID, Format: commands.FormatMarkdown, Output: md}
		res.Size = len(md)
	}
	return res, nil
}

func confOf(m Member) *float64 {
	if m.Capsule == nil {
		return nil
	}
	return m.Capsule.Confidence
}

// fill writes the standing units into the document in a canonical order. It returns notes
// on the combined change set.
func (a *Analysis) fill(doc *Document, take []int, dropped map[string]bool) []string {
	files := map[string][]*hunk{}
	var ops []unit
	for _, i := range take {
		u := a.units[i]
		switch u.kind {
		case uHunk:
			files[u.h.file] = append(files[u.h.file], u.h)
		case uFile:
			if len(u.fhs) > 0 { // a text add or delete: a plain text patch can carry it
				files[u.path] = append(files[u.path], u.fhs...)
			}
		case uFinding:
			doc.Findings = append(doc.Findings, FindingDoc{Finding: u.finding, Sources: u.sources})
		case uOp:
			ops = append(ops, u)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		doc.Patches = append(doc.Patches, session.Patch{Path: f, Diff: renderFile(f, files[f])})
	}
	slices.SortFunc(doc.Findings, func(x, y FindingDoc) int {
		if c := cmp.Compare(severityRank(x.Severity), severityRank(y.Severity)); c != 0 {
			return c
		}
		return cmp.Compare(findingKey(x.Finding), findingKey(y.Finding))
	})
	// Playbook: edits of existing entries first (by id), then additions (by section, text).
	slices.SortFunc(ops, func(x, y unit) int {
		ax, ay := x.op.Type == session.OpAdd, y.op.Type == session.OpAdd
		if ax != ay {
			if ax {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(x.op.BulletID, y.op.BulletID); c != 0 {
			return c
		}
		if c := cmp.Compare(x.op.Section, y.op.Section); c != 0 {
			return c
		}
		return cmp.Compare(norm(x.op.Content), norm(y.op.Content))
	})
	n := 0
	for _, u := range ops {
		op := u.op
		op.Metadata = maps.Clone(op.Metadata)
		if op.Type == session.OpAdd {
			n++
			op.BulletID = fmt.Sprintf("%s-b%d", a.in.ID, n)
			op.Metadata = map[string]any{"sources": u.sources}
		}
		doc.Operations = append(doc.Operations, op)
	}
	used := map[string]bool{}
	for _, m := range a.used {
		used[m.ID] = true
	}
	var sums []string
	for i, md := range doc.Members {
		if used[md.SubagentID] && doc.Outcome != OutcomeFailure {
			doc.Members[i].Used = true
			sums = append(sums, md.SubagentID+": "+a.member(md.SubagentID).Capsule.Summary)
		}
	}
	doc.Summary = strings.Join(sums, "\n")
	if !a.hasReal() || doc.Outcome == OutcomeFailure {
		return nil
	}
	var notes []string
	doc.Files, doc.Sources, notes = a.changedFiles(take, dropped)
	return notes
}

func severityRank(s string) int {
	switch strings.ToLower(s) {
	case "critical":
		return 0
	case "high":
		return 1
	case "medium":
		return 2
	case "low":
		return 3
	case "info":
		return 4
	}
	return 5
}
