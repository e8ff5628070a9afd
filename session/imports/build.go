package imports

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"strings"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// agent is one agent of the foreign session, main or subagent, as its events are gathered.
// Its summit id and the times of its lifecycle events are settled only when the whole
// session is read (see session.build).
type agent struct {
	key       string // the source's id for it ("" for the main agent)
	parentKey string // the key of the agent that started it, when the source says
	typ       string
	name      string
	task      string
	model     string
	provider  string
	perm      string
	sessionID string    // the source's session id of its transcript
	spawnAt   time.Time // when its parent started it (the spawning tool call), if known
	outcome   string
	stopNote  string // why the outcome, when not plain success
	tokens    session.Tokens
	// usage keeps one usage per model message: Claude Code repeats a message's usage on
	// every content block line of it.
	usage map[uint64]session.Tokens
	tools int
	// evs is the agent's stream: each event's time and its place in the spool.
	evs   evList
	sp    *spool
	chg   *session.SubagentChanges // its edits so far (see addEdits)
	chgAt map[string]int           // file path -> its place in chg.Files
	perms map[string]string        // open permission request id -> the call it asks for

	// Settled by build.
	id       string
	parent   *agent
	children []*agent
	order    int
	start    time.Time
	stop     time.Time
}

// ev is one event of an agent's stream: its time (Unix microseconds, noTime when the source
// gave none) and its offset in the spool.
type ev struct {
	ts  int64
	off int64
}

// evList is an agent's events, each as two zigzag varints: its time and its spool offset,
// each less the previous event's (an agent's times mostly rise by little and its offsets
// rise by the size of a record), so an event takes about 4 bytes, not the 16 of an ev. It
// is read in order only (evIter), which is all the build and the merge need. The bytes are
// in chunks of evChunk (the first ones smaller: most subagents have few events), so past the
// first chunk it grows without copying, and without the slack of a doubling slice; an
// event's bytes never straddle two chunks.
type evList struct {
	chunks       [][]byte
	n            int
	lastTS, last int64 // the previous event's, to take the differences from
}

const evChunk = 64 << 10

func (l *evList) add(e ev) {
	if len(l.chunks) == 0 || cap(l.chunks[len(l.chunks)-1])-len(l.chunks[len(l.chunks)-1]) < 2*binary.MaxVarintLen64 {
		size := evChunk
		if len(l.chunks) == 0 || cap(l.chunks[len(l.chunks)-1]) < evChunk {
			size = 64
			if len(l.chunks) > 0 {
				size = min(evChunk, 4*cap(l.chunks[len(l.chunks)-1]))
			}
		}
		l.chunks = append(l.chunks, make([]byte, 0, size))
	}
	c := &l.chunks[len(l.chunks)-1]
	// Differences in uint64, wrapping: exact for any two values, noTime included.
	*c = binary.AppendVarint(*c, int64(uint64(e.ts)-uint64(l.lastTS)))
	*c = binary.AppendVarint(*c, int64(uint64(e.off)-uint64(l.last)))
	l.lastTS, l.last = e.ts, e.off
	l.n++
}

func (l *evList) len() int { return l.n }

// iter returns an iterator at the list's first event.
func (l *evList) iter() evIter { return evIter{l: l} }

// evIter reads an evList in order.
type evIter struct {
	l         *evList
	chunk, at int
	i         int
	e         ev
}

// next returns the next event; false past the last.
func (it *evIter) next() (ev, bool) {
	if it.i == it.l.n {
		return ev{}, false
	}
	c := it.l.chunks[it.chunk]
	if it.at == len(c) {
		it.chunk, it.at = it.chunk+1, 0
		c = it.l.chunks[it.chunk]
	}
	dt, k := binary.Varint(c[it.at:])
	it.at += k
	do, k := binary.Varint(c[it.at:])
	it.at += k
	it.e.ts = int64(uint64(it.e.ts) + uint64(dt))
	it.e.off = int64(uint64(it.e.off) + uint64(do))
	it.i++
	return it.e, true
}

// noteEv is a session-level note: its time and its place in the spool (a chat rewound at
// every turn has as many notes as turns).
type noteEv struct {
	ts  time.Time
	off int64
}

// edit is one file change a tool recorded.
type edit struct {
	path    string
	oldPath string
	kind    string // session.ChangeAdded, ChangeModified, ChangeDeleted, ChangeRenamed
	diff    string
	added   int
	removed int
}

// maxDiff caps the diffs kept for one file of an agent's changes.
const maxDiff = 64 << 10

// addEdits folds edits into the agent's changes as they come (see changes), so what an agent
// holds grows with the files it touched, not with its edits.
func (a *agent) addEdits(es ...edit) {
	for _, e := range es {
		ch := a.chg
		if ch == nil {
			ch = &session.SubagentChanges{Base: "imported"}
			a.chg, a.chgAt = ch, map[string]int{}
		}
		i, ok := a.chgAt[e.path]
		if !ok {
			i = len(ch.Files)
			path := strings.Clone(e.path)
			a.chgAt[path] = i
			ch.Files = append(ch.Files, session.FileChange{Path: path, OldPath: strings.Clone(e.oldPath), Kind: e.kind})
		}
		fc := &ch.Files[i]
		if ok {
			if fc.Kind == session.ChangeAdded && e.kind == session.ChangeDeleted {
				fc.Kind = session.ChangeDeleted
			} else if fc.Kind != session.ChangeAdded {
				fc.Kind = e.kind
			}
		}
		fc.Added += e.added
		fc.Removed += e.removed
		ch.Added += e.added
		ch.Removed += e.removed
		if fc.Truncated || e.diff == "" {
			continue
		}
		if len(fc.Diff)+len(e.diff) > maxDiff {
			fc.Diff += "[cut by summit import: the rest of this file's edits]\n"
			fc.Truncated, ch.Truncated = true, true
			continue
		}
		fc.Diff += e.diff
	}
}

// sess is a foreign session read into agents, ready to be written as a recording.
type sess struct {
	format   Format
	path     string
	sourceID string
	version  string
	cwd      string
	perm     string
	provider string
	start    time.Time
	agents   []*agent // [0] is the main agent
	byKey    map[string]*agent
	notes    []noteEv // session-level notes
	sp       *spool
	built    *merged // set by build
	// skipped counts source lines and items that are not replayed one by one, by what they
	// are; the recording ends with a note that lists them, so nothing goes silently.
	skipped map[string]int
	unknown map[string]int
	lines   int
	warn    []string
	permSeq int
}

func newSess(format Format, path string) *sess {
	s := &sess{format: format, path: path, byKey: map[string]*agent{}, skipped: map[string]int{}, unknown: map[string]int{}, sp: newSpool()}
	s.agents = []*agent{{typ: format.agentType(), name: "main", usage: map[uint64]session.Tokens{}, perms: map[string]string{}, sp: s.sp}}
	s.byKey[""] = s.agents[0]
	return s
}

func (s *sess) main() *agent { return s.agents[0] }

// agent returns the subagent with the source key, creating it.
func (s *sess) agent(key string) *agent {
	if a := s.byKey[key]; a != nil {
		return a
	}
	a := &agent{key: key, typ: "subagent", usage: map[uint64]session.Tokens{}, perms: map[string]string{}, sp: s.sp}
	s.byKey[key] = a
	s.agents = append(s.agents, a)
	return a
}

func (a *agent) add(ts time.Time, d session.Data) { a.evs.add(ev{micros(ts), a.sp.put(d)}) }

// callRaw is call with the source's raw JSON input as the arguments (decoded by rawArgs when
// the event is written); it returns the event's spool offset.
func (a *agent) callRaw(ts time.Time, id, tool string, raw []byte) int64 {
	a.tools++
	off := a.sp.putToolRaw(id, tool, raw)
	a.evs.add(ev{micros(ts), off})
	return off
}

func (a *agent) text(ts time.Time, kind, text string) {
	if text == "" {
		return
	}
	a.add(ts, session.TranscriptEvent{EventType: kind, Text: text})
}

func (a *agent) call(ts time.Time, id, tool string, args map[string]any) {
	a.tools++
	a.add(ts, session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: id, Tool: tool, Args: args})
}

func (a *agent) result(ts time.Time, id, tool, text string, isErr bool) {
	a.add(ts, session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: id, Tool: tool, Result: text, IsError: isErr})
}

// note keeps what summit has no event for as a transcript message marked as imported.
func (a *agent) note(ts time.Time, what, text string) {
	a.add(ts, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "[imported: " + what + "] " + text})
}

// useTokens records a model message's usage once, whatever number of lines repeat it.
func (a *agent) useTokens(msgID string, t session.Tokens) {
	if msgID == "" {
		a.tokens.Input += t.Input
		a.tokens.Output += t.Output
		return
	}
	a.usage[a.sp.hash(msgID)] = t
}

func (a *agent) totalTokens() session.Tokens {
	t := a.tokens
	for _, u := range a.usage {
		t.Input += u.Input
		t.Output += u.Output
	}
	return t
}

// ask opens a permission request for a tool call; decide settles it.
func (s *sess) ask(a *agent, ts time.Time, call, tool string, args map[string]any, reason string) {
	s.permSeq++
	id := fmt.Sprintf("pr-%d", s.permSeq)
	a.perms[id] = call
	a.add(ts, session.PermissionRequested{RequestID: id, Tool: tool, Args: args, Reason: reason})
}

func (s *sess) decide(a *agent, ts time.Time, call string, granted bool, reason string) bool {
	for id, c := range a.perms {
		if c != call {
			continue
		}
		delete(a.perms, id)
		if granted {
			a.add(ts, session.PermissionGranted{RequestID: id, Scope: "once", By: "user"})
		} else {
			a.add(ts, session.PermissionDenied{RequestID: id, Reason: reason, By: "user"})
		}
		return true
	}
	return false
}

func (s *sess) sessionNote(ts time.Time, what, text string) {
	s.notes = append(s.notes, noteEv{ts, s.sp.put(session.UserNote{Text: "[imported: " + what + "] " + text})})
}

// unknownLine keeps a line of a kind this importer does not map: a note with its start.
func (s *sess) unknownLine(a *agent, ts time.Time, kind string, raw []byte) {
	if _, ok := s.unknown[kind]; !ok && len(s.unknown) >= maxUnknownKinds {
		// A source with a new "type" on every line must not grow the count (and the
		// closing note) with its length: past maxUnknownKinds they are counted together.
		s.unknown["lines of other types"]++
		a.note(ts, kind, clip(string(raw), 2048))
		return
	}
	s.unknown[kind]++
	a.note(ts, kind, clip(string(raw), 2048))
}

// maxUnknownKinds is how many kinds of unknown lines the closing note counts one by one.
const maxUnknownKinds = 256

// clip cuts s to at most n bytes on a character boundary, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d more bytes]", len(s)-cut)
}

func parseTS(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, ok := parseUTC(s); ok {
		return t
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// parseUTC reads the one form nearly every source time has, 2006-01-02T15:04:05[.fraction]Z,
// as time.Parse(time.RFC3339Nano, s) does, without its generic layout walk (one or more
// times per source line). ok is false for anything else, and for a day past the 28th (its
// month's length is time.Parse's to check): the caller parses those.
func parseUTC(s string) (time.Time, bool) {
	if len(s) < 20 || len(s) > 30 || s[len(s)-1] != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, sec := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > 28 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	ns := 0
	if frac := s[19 : len(s)-1]; frac != "" {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Time{}, false
		}
		v := num(20, len(frac)-1)
		if v < 0 {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			v *= 10
		}
		ns = v
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC), true
}

// rawArgs decodes a tool input into the args map of a tool_call; anything but an object is
// kept under "input".
func rawArgs(raw []byte) map[string]any {
	raw = trimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '{' {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			return m
		}
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		return map[string]any{"input": v}
	}
	return map[string]any{"input": string(raw)}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// sessionID derives the recording's session id from the source's, so importing the same
// session again writes the same file. Only characters that are safe in a file name and in
// a tree row are kept (the fold's plainID rule is stricter than needed for that).
func sessionID(f Format, sourceID, path string) string {
	var b strings.Builder
	for _, r := range sourceID {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		}
		if b.Len() >= 64 {
			break
		}
	}
	id := strings.Trim(b.String(), ".")
	if id == "" {
		abs, _ := filepath.Abs(path)
		h := sha256.Sum256([]byte(abs))
		id = hex.EncodeToString(h[:8])
	}
	return "s-" + string(f) + "-" + id
}

// permMode maps a source's permission words onto summit's modes (plan < acceptEdits <
// bypassPermissions); "" when the source says nothing.
func permMode(s string) string {
	switch s {
	case "plan", "read-only", "readonly":
		return "plan"
	case "bypassPermissions", "danger-full-access", "yolo", "dontAsk":
		return "bypassPermissions"
	case "":
		return ""
	}
	return "acceptEdits"
}

// changes is an agent's edits as one SubagentChanges (nil when it made none): per file, the
// edits' diffs in the order they were made (each is a diff against the file as it was then,
// so together they are a history, not one patch git could apply; past maxDiff the rest is
// cut) and the lines they added and removed. addEdits builds it.
func (a *agent) changes() *session.SubagentChanges { return a.chg }

// diffStat counts the added and removed lines of a unified diff's hunks.
func diffStat(diff string) (added, removed int) {
	for l := range strings.Lines(diff) {
		switch {
		case strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return
}

// stamped is an event of the merged stream, with what orders it. d is nil for an event still
// in the spool (off).
type stamped struct {
	ts    int64 // Unix microseconds
	rank  int   // 0 lifecycle start, 1 body, 2 lifecycle end: keeps each agent's stream in order
	order int   // the agent's place in the tree (-1 for session notes)
	idx   int   // its place in the agent's stream
	sub   string
	d     session.Data
	off   int64
}

func (x *stamped) less(y *stamped) bool {
	if x.ts != y.ts {
		return x.ts < y.ts
	}
	if x.rank != y.rank {
		return x.rank < y.rank
	}
	if x.order != y.order {
		return x.order < y.order
	}
	return x.idx < y.idx
}

// merged is the session's events in recording order, read lazily: a merge of the agents'
// streams (each already in order by time, rank and index) and the session notes. Only the
// heads of the streams are in memory.
type merged struct {
	start, end time.Time
	total      int // events, SessionStarted, the summary note and SessionEnded not counted
	streams    []*agentStream
	heads      []*agentStream // a heap by head
}

// agentStream is one agent's stream: the lifecycle events before its body (pre), the body
// from the spool (a.evs) and the lifecycle events after it (post). Session notes are a
// stream with pre only.
type agentStream struct {
	a    *agent
	pre  []stamped
	post []stamped
	i    int // next event: pre, then body, then post
	head stamped
	cur  cursor
	body evIter // the body's next event
	last int64  // the body's time so far: an event earlier than the one before takes its time
	// notes, for the session notes' stream (no agent): sorted by time, each taking the
	// session's start when it is earlier (noteStart, Unix microseconds).
	notes     []noteEv
	noteStart int64
}

func (st *agentStream) n() int {
	n := len(st.pre) + len(st.post) + len(st.notes)
	if st.a != nil {
		n += st.a.evs.len()
	}
	return n
}

// next loads the stream's next event into head; false at its end.
func (st *agentStream) next() bool {
	i := st.i
	st.i++
	if st.notes != nil {
		if i < len(st.notes) {
			nt := st.notes[i]
			ts := max(nt.ts.Truncate(time.Microsecond).UnixMicro(), st.noteStart)
			st.head = stamped{ts: ts, rank: 1, order: -1, idx: i, off: nt.off}
			return true
		}
		return false
	}
	if i < len(st.pre) {
		st.head = st.pre[i]
		return true
	}
	i -= len(st.pre)
	if st.a != nil && i < st.a.evs.len() {
		if i == 0 {
			st.body, st.last = st.a.evs.iter(), st.a.start.UnixMicro()
		}
		e, _ := st.body.next()
		st.last = max(st.last, e.ts) // noTime is the least int64: it takes the previous time
		st.head = stamped{ts: st.last, rank: 1, order: st.a.order, idx: len(st.pre) + i, sub: st.a.id, off: e.off}
		return true
	}
	if st.a != nil {
		i -= st.a.evs.len()
	}
	if i < len(st.post) {
		st.cur.release()
		st.head = st.post[i]
		return true
	}
	return false
}

// build settles the tree (parents, summit ids in spawn order), the times (each stream made
// non-decreasing, a child started no earlier than its parent and a parent stopped no earlier
// than its children) and prepares the merge of every stream by time. It runs once.
func (s *sess) build() *merged {
	if s.built != nil {
		return s.built
	}
	m := s.main()
	// Parents: a subagent whose parent is unknown or would make a cycle is the main agent's.
	for _, a := range s.agents[1:] {
		p := s.byKey[a.parentKey]
		if p == nil || p == a {
			p = m
		}
		for q := p; q != nil; q = q.parent {
			if q == a {
				p = m
				break
			}
		}
		a.parent = p
	}
	for _, a := range s.agents[1:] {
		a.parent.children = append(a.parent.children, a)
	}
	if m.perm == "" {
		m.perm = s.perm
	}
	// A subagent the source gives no mode runs in its parent's.
	var inherit func(a *agent)
	inherit = func(a *agent) {
		for _, c := range a.children {
			if c.perm == "" {
				c.perm = a.perm
			}
			inherit(c)
		}
	}
	inherit(m)
	// Times: the session starts at the earliest time anything has.
	start := s.start
	first := func(a *agent) time.Time {
		if !a.spawnAt.IsZero() {
			return a.spawnAt
		}
		for it := a.evs.iter(); ; {
			e, ok := it.next()
			if !ok {
				break
			}
			if e.ts != noTime {
				return fromMicros(e.ts)
			}
		}
		return time.Time{}
	}
	for _, a := range s.agents {
		if t := first(a); !t.IsZero() && (start.IsZero() || t.Before(start)) {
			start = t
		}
	}
	for _, n := range s.notes {
		if !n.ts.IsZero() && (start.IsZero() || n.ts.Before(start)) {
			start = n.ts
		}
	}
	if start.IsZero() {
		// Nothing the source holds has a time (headless stream outputs, checkpoints): the
		// file's modification time, when it was last written.
		if fi, err := os.Stat(s.path); err == nil {
			start = fi.ModTime().UTC()
		} else {
			start = time.Unix(0, 0).UTC()
		}
	}
	start = start.Truncate(time.Microsecond)
	// Ids in spawn order, depth first.
	var walk func(a *agent, from time.Time)
	n := 0
	walk = func(a *agent, from time.Time) {
		n++
		a.id, a.order = fmt.Sprintf("sa-%d", n), n
		a.start = from
		if t := first(a); t.After(from) && a != m {
			a.start = t
		}
		a.start = a.start.Truncate(time.Microsecond)
		// Its events are made non-decreasing as the stream reads them (agentStream.next):
		// the last of them is the greatest.
		last := a.start.UnixMicro()
		for it := a.evs.iter(); ; {
			e, ok := it.next()
			if !ok {
				break
			}
			last = max(last, e.ts)
		}
		a.stop = fromMicros(last)
		slices.SortStableFunc(a.children, func(x, y *agent) int { return first(x).Compare(first(y)) })
		for _, c := range a.children {
			from := a.stop
			if t := first(c); !t.IsZero() {
				from = t.Truncate(time.Microsecond)
			}
			if from.Before(a.start) {
				from = a.start
			}
			walk(c, from)
			if c.stop.After(a.stop) {
				a.stop = c.stop
			}
		}
	}
	walk(m, start)
	end := m.stop
	mg := &merged{start: start}
	// The session notes, in order by time (stable: a tie keeps the order they were taken in),
	// read as a stream of their own without a copy of each as a stamped event.
	noteTS := func(nt noteEv) time.Time {
		t := nt.ts.Truncate(time.Microsecond)
		if t.Before(start) {
			t = start
		}
		return t
	}
	for _, nt := range s.notes {
		if t := noteTS(nt); t.After(end) {
			end = t
		}
	}
	slices.SortStableFunc(s.notes, func(x, y noteEv) int { return noteTS(x).Compare(noteTS(y)) })
	notes := &agentStream{notes: s.notes, noteStart: start.UnixMicro()}
	mg.end = end
	mg.streams = append(mg.streams, notes)
	for _, a := range s.agents {
		mg.streams = append(mg.streams, a.stream())
	}
	for _, st := range mg.streams {
		mg.total += st.n()
	}
	s.built = mg
	return mg
}

// merge calls f with every event in recording order: d, or for an event in the spool d nil
// and raw, its record's body (valid until f returns; decodeSpooled reads it).
func (mg *merged) merge(sp *spool, f func(ts time.Time, sub string, d session.Data, raw []byte) error) error {
	if err := sp.flush(); err != nil {
		return err
	}
	h := mg.heads[:0]
	for _, st := range mg.streams {
		st.cur.sp = sp
		if st.next() {
			h = append(h, st)
		}
	}
	less := func(i, j int) bool { return h[i].head.less(&h[j].head) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && less(r, l) {
				l = r
			}
			if !less(l, i) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		st := h[0]
		e := &st.head
		d := e.d
		var raw []byte
		if d == nil && e.off < 0 {
			d = sp.mem[-e.off-1]
		} else if d == nil {
			var err error
			if raw, err = st.cur.record(e.off); err != nil {
				return err
			}
		}
		if err := f(fromMicros(e.ts), e.sub, d, raw); err != nil {
			return err
		}
		if cap(st.cur.body) > 1<<20 {
			st.cur.body = nil
		}
		if !st.next() {
			st.cur.release()
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return nil
}

// stream is an agent's events with its lifecycle around them.
func (a *agent) stream() *agentStream {
	st := &agentStream{a: a}
	i := 0
	put := func(list *[]stamped, ts time.Time, rank int, d session.Data) {
		*list = append(*list, stamped{ts: ts.UnixMicro(), rank: rank, order: a.order, idx: i, sub: a.id, d: d})
		i++
	}
	sp := session.SubagentSpawned{AgentType: a.typ, AgentName: a.name, PermissionMode: a.perm,
		TaskDescription: a.task, InheritContext: false, AgentSessionID: a.sessionID}
	if a.parent != nil {
		sp.ParentSubagentID = a.parent.id
	}
	put(&st.pre, a.start, 0, sp)
	put(&st.pre, a.start, 0, session.SubagentActive{InitialState: "active"})
	if a.model != "" || a.provider != "" {
		put(&st.pre, a.start, 0, session.ModelRouted{Provider: a.provider, Model: a.model, Requested: a.model, Why: "imported: the model the source names"})
	}
	i += a.evs.len()
	// Requests the source never answered: the call did not run.
	for _, id := range slices.Sorted(maps.Keys(a.perms)) {
		put(&st.post, a.stop, 2, session.PermissionDenied{RequestID: id, Reason: "imported: no decision recorded, and the call did not run"})
	}
	if ch := a.changes(); ch != nil {
		put(&st.post, a.stop, 2, *ch)
	}
	outcome := a.outcome
	if outcome == "" {
		outcome = session.OutcomeSuccess
	}
	if outcome == session.OutcomeDisconnected && a.parent == nil {
		outcome = session.OutcomeFailure
	}
	if a.stopNote != "" {
		put(&st.post, a.stop, 2, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "[imported: outcome] " + a.stopNote})
	}
	put(&st.post, a.stop, 2, session.SubagentStop{Outcome: outcome, ToolInvocationCount: a.tools, ArtifactPaths: []string{},
		DurationMS: a.stop.Sub(a.start).Milliseconds(), Tokens: a.totalTokens()})
	return st
}

// summary is the closing note: what the source held that is not replayed item by item.
func (s *sess) summary() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.skipped)) {
		parts = append(parts, fmt.Sprintf("%d %s", s.skipped[k], k))
	}
	for _, k := range slices.Sorted(maps.Keys(s.unknown)) {
		parts = append(parts, fmt.Sprintf("%d unknown %s (kept as notes)", s.unknown[k], k))
	}
	if len(parts) == 0 {
		return ""
	}
	return "not replayed one by one: " + strings.Join(parts, "; ")
}
