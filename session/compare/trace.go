package compare

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/summit-dev/summit/session"
)

// Trace is one recording as the comparison needs it: the folded state without transcript text
// (what inspect folds), the commands in order, and each subagent's spawn and items as 64-bit
// fingerprints with their seqs. It keeps no transcript text: what a tool was called with and
// what it returned survive only as fingerprints (16 bytes an item), and the two events a
// divergence names are read back from the file (Compare). The changes each path ended with
// are kept with their line counts and a fingerprint of their diff.
//
// Fold it with record.FoldFile(path, opts, t.State(), t.Fold): the reader must decode the
// transcript text (not ReadOptions.NoText), since the fingerprints are taken from it; Fold
// drops it before the state sees it.
type Trace struct {
	// Path is the recording's path: Compare reads the events a divergence names from it.
	Path string

	st   *session.State
	cmds []command
	subs map[string]*subTrace
	// order is the subagent ids in spawn order.
	order []string
	// reqs maps a permission request to its subagent, for decisions whose envelope lacks one.
	reqs map[string]string

	// changes is the last change of each path by each source (sa-N, cv-N): what an apply of
	// that source landed. final is the change each path ended with.
	changes map[string]map[string]fileChange
	final   map[string]*finalChange
}

// command is one CommandIssued: its seq and line (what the user typed, not transcript text).
type command struct {
	seq  uint64
	line string
}

// subTrace is one subagent's fingerprints.
type subTrace struct {
	spawnSeq  uint64
	spawn     uint64 // fingerprint of its agent type and task
	agentType string
	items     []item
}

// item is one transcript item (tool call, tool result, policy denial), permission request or
// decision, error or stop of a subagent, as a fingerprint.
type item struct {
	seq uint64
	fp  uint64
}

// fileChange is one recorded change of a path.
type fileChange struct {
	kind           string
	added, removed int
	binary         bool
	fp             uint64
	source         string
	seq            uint64
}

// finalChange is the change a path ended with; applied while an apply of it stands (not undone).
type finalChange struct {
	fileChange
	applied bool
	applyID string
}

// NewTrace returns an empty trace of the recording at path.
func NewTrace(path string) *Trace {
	return &Trace{Path: path, st: &session.State{}, subs: map[string]*subTrace{}, reqs: map[string]string{},
		changes: map[string]map[string]fileChange{}, final: map[string]*finalChange{}}
}

// State is the state the trace folds into (pass it to record.FoldFile with Fold).
func (t *Trace) State() *session.State { return t.st }

// Fold takes the fingerprints of e, then folds e into st (t.State()) without its transcript
// text, as a reader with ReadOptions.NoText would have given it: the state stays as small as
// inspect's, whatever the transcripts hold.
func (t *Trace) Fold(st *session.State, e session.Event) error {
	t.observe(e)
	if te, ok := e.Data.(session.TranscriptEvent); ok {
		e.Data = withoutText(te)
	}
	return session.Apply(st, e)
}

// bare are the text-less transcript events of each event_type, boxed once: most transcript
// events (token and thinking deltas) are one of them without their text, and sharing the
// boxed value saves an allocation an event (an interface holding a struct is never written
// through).
var bare = func() map[string]session.Data {
	m := map[string]session.Data{}
	for _, k := range session.TranscriptEvents {
		m[k] = session.TranscriptEvent{EventType: k}
	}
	return m
}()

// withoutText is te as a reader with ReadOptions.NoText gives it.
func withoutText(te session.TranscriptEvent) session.Data {
	if te.CallID == "" && te.Tool == "" && !te.IsError {
		if d, ok := bare[te.EventType]; ok {
			return d
		}
	}
	te.Text, te.Result, te.Reason, te.Args = "", "", "", nil
	return te
}

// fp fingerprints parts with 64-bit FNV-1a, each part preceded by its length so no two lists
// of parts collide by concatenation. It hashes the strings in place: a tool result of
// megabytes is neither copied nor kept.
func fp(parts ...string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, p := range parts {
		for n := len(p); ; n >>= 8 {
			h = (h ^ uint64(n&0xff)) * prime
			if n < 0x100 {
				break
			}
		}
		h = (h ^ ':') * prime
		for i := 0; i < len(p); i++ {
			h = (h ^ uint64(p[i])) * prime
		}
	}
	return h
}

// canonical is v as JSON with sorted keys (encoding/json sorts map keys), so equal arguments
// fingerprint equal whatever order the recording wrote them in.
func canonical(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

func (t *Trace) sub(id string) *subTrace {
	s := t.subs[id]
	if s == nil {
		// An event about a subagent the trace did not see spawn (a damaged file the fold will
		// refuse): keep it apart rather than crash.
		s = &subTrace{}
		t.subs[id] = s
		t.order = append(t.order, id)
	}
	return s
}

func (t *Trace) add(id string, seq uint64, parts ...string) {
	if id == "" {
		return
	}
	s := t.sub(id)
	s.items = append(s.items, item{seq: seq, fp: fp(parts...)})
}

// observe takes what the comparison needs from one event.
func (t *Trace) observe(e session.Event) {
	sa := e.SubagentID
	switch d := e.Data.(type) {
	case session.CommandIssued:
		t.cmds = append(t.cmds, command{seq: e.Seq, line: d.Line})
	case session.SubagentSpawned:
		if t.subs[sa] == nil && sa != "" {
			t.subs[sa] = &subTrace{}
			t.order = append(t.order, sa)
		}
		if s := t.subs[sa]; s != nil {
			s.spawnSeq, s.agentType = e.Seq, d.AgentType
			s.spawn = fp(d.AgentType, d.AgentName, d.TaskDescription, d.ParentSubagentID)
		}
	case session.TranscriptEvent:
		switch d.EventType {
		case session.TranscriptToolCall:
			t.add(sa, e.Seq, "call", d.Tool, canonical(d.Args))
		case session.TranscriptToolResult:
			t.add(sa, e.Seq, "result", d.Tool, strconv.FormatBool(d.IsError), d.Result)
		case session.TranscriptPolicyDenied:
			t.add(sa, e.Seq, "denied", d.Tool, d.Reason)
		}
	case session.PermissionRequested:
		t.reqs[d.RequestID] = sa
		t.add(sa, e.Seq, "ask", d.Tool, canonical(d.Args))
	case session.PermissionGranted:
		t.add(t.requester(sa, d.RequestID), e.Seq, "granted", d.Scope)
	case session.PermissionDenied:
		t.add(t.requester(sa, d.RequestID), e.Seq, "refused")
	case session.SubagentError:
		t.add(sa, e.Seq, "error", strconv.FormatBool(d.Retrying()))
	case session.SubagentStop:
		t.add(sa, e.Seq, "stop", d.Outcome)
	case session.SubagentChanges:
		for _, f := range d.Files {
			t.change(f.Path, fileChange{kind: f.Kind, added: f.Added, removed: f.Removed, binary: f.Binary,
				fp: fp(f.Kind, f.OldPath, f.OldMode, f.NewMode, strconv.FormatBool(f.Binary), diffBody(f.Diff),
					strconv.Itoa(f.Added), strconv.Itoa(f.Removed)),
				source: sa, seq: e.Seq})
		}
	case session.DeltaBatch:
		for _, p := range d.Patches {
			add, rm := diffStat(p.Diff)
			kind := session.ChangeModified
			switch {
			case strings.Contains(p.Diff, "--- /dev/null"):
				kind = session.ChangeAdded
			case strings.Contains(p.Diff, "+++ /dev/null"):
				kind = session.ChangeDeleted
			}
			t.change(p.Path, fileChange{kind: kind, added: add, removed: rm,
				fp:     fp(kind, "", "", "", "false", diffBody(p.Diff), strconv.Itoa(add), strconv.Itoa(rm)),
				source: d.ConvergenceID, seq: e.Seq})
		}
	case session.ChangesApplied:
		t.applied(d.ApplyID, d.Source, d.Files, e.Seq)
	case session.DeltaBatchApplied:
		t.applied("", d.ConvergenceID, d.Files, e.Seq)
	case session.ApplyUndone:
		for _, p := range d.Files {
			if f := t.final[p]; f != nil && f.applyID == d.ApplyID {
				f.applied = false
			}
		}
	}
}

func (t *Trace) requester(sa, req string) string {
	if sa != "" {
		return sa
	}
	return t.reqs[req]
}

// change records a change of path by its source; it becomes the path's final change unless an
// apply that stands already landed one (what the workspace ended with wins over a proposal).
func (t *Trace) change(path string, c fileChange) {
	bySrc := t.changes[c.source]
	if bySrc == nil {
		bySrc = map[string]fileChange{}
		t.changes[c.source] = bySrc
	}
	bySrc[path] = c
	if f := t.final[path]; f != nil && f.applied {
		return
	}
	t.final[path] = &finalChange{fileChange: c}
}

// applied marks the files an apply of source landed. A file the source's recorded changes do
// not name (a merge brought it) keeps the last change recorded for it, or an empty one.
func (t *Trace) applied(applyID, source string, files []string, seq uint64) {
	for _, p := range files {
		c, ok := t.changes[source][p]
		if !ok {
			if f := t.final[p]; f != nil {
				c = f.fileChange
			} else {
				c = fileChange{kind: session.ChangeModified, source: source, seq: seq, fp: fp("applied", source, p)}
			}
		}
		t.final[p] = &finalChange{fileChange: c, applied: true, applyID: applyID}
	}
}

// diffBody is a unified diff without its "index" lines: they name blob hashes, which equal
// content gives equal anyway, and which a diff computed against another base commit changes
// for nothing.
func diffBody(diff string) string {
	if !strings.Contains(diff, "\nindex ") && !strings.HasPrefix(diff, "index ") {
		return diff
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(diff, "\n") {
		if !strings.HasPrefix(l, "index ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// diffStat counts the added and removed lines of a unified diff (the file headers left out).
func diffStat(diff string) (added, removed int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}
