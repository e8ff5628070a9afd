package imports

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
	usage map[string]session.Tokens
	tools int
	evs   []ev
	edits []edit
	perms map[string]string // open permission request id -> the call it asks for

	// Settled by build.
	id       string
	parent   *agent
	children []*agent
	order    int
	start    time.Time
	stop     time.Time
}

// ev is one event of an agent's stream (or of the session, on session.notes).
type ev struct {
	ts time.Time
	d  session.Data
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
	notes    []ev // session-level notes
	// skipped counts source lines and items that are not replayed one by one, by what they
	// are; the recording ends with a note that lists them, so nothing goes silently.
	skipped map[string]int
	unknown map[string]int
	lines   int
	warn    []string
	permSeq int
}

func newSess(format Format, path string) *sess {
	s := &sess{format: format, path: path, byKey: map[string]*agent{}, skipped: map[string]int{}, unknown: map[string]int{}}
	s.agents = []*agent{{typ: format.agentType(), name: "main", usage: map[string]session.Tokens{}, perms: map[string]string{}}}
	s.byKey[""] = s.agents[0]
	return s
}

func (s *sess) main() *agent { return s.agents[0] }

// agent returns the subagent with the source key, creating it.
func (s *sess) agent(key string) *agent {
	if a := s.byKey[key]; a != nil {
		return a
	}
	a := &agent{key: key, typ: "subagent", usage: map[string]session.Tokens{}, perms: map[string]string{}}
	s.byKey[key] = a
	s.agents = append(s.agents, a)
	return a
}

func (a *agent) add(ts time.Time, d session.Data) { a.evs = append(a.evs, ev{ts, d}) }

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
	a.usage[msgID] = t
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
	s.notes = append(s.notes, ev{ts, session.UserNote{Text: "[imported: " + what + "] " + text}})
}

// unknownLine keeps a line of a kind this importer does not map: a note with its start.
func (s *sess) unknownLine(a *agent, ts time.Time, kind string, raw []byte) {
	s.unknown[kind]++
	a.note(ts, kind, clip(string(raw), 2048))
}

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
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
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

// changes folds an agent's edits into one SubagentChanges: per file, the edits' diffs in the
// order they were made (each is a diff against the file as it was then, so together they are
// a history, not one patch git could apply) and the lines they added and removed.
func (a *agent) changes() *session.SubagentChanges {
	if len(a.edits) == 0 {
		return nil
	}
	const maxDiff = 64 << 10
	byPath := map[string]*session.FileChange{}
	var order []string
	ch := &session.SubagentChanges{Base: "imported"}
	for _, e := range a.edits {
		fc := byPath[e.path]
		if fc == nil {
			fc = &session.FileChange{Path: e.path, OldPath: e.oldPath, Kind: e.kind}
			byPath[e.path] = fc
			order = append(order, e.path)
		} else if fc.Kind == session.ChangeAdded && e.kind == session.ChangeDeleted {
			fc.Kind = session.ChangeDeleted
		} else if fc.Kind != session.ChangeAdded {
			fc.Kind = e.kind
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
	for _, p := range order {
		ch.Files = append(ch.Files, *byPath[p])
	}
	return ch
}

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

// stamped is an event of the merged stream, with what orders it.
type stamped struct {
	ts    time.Time
	rank  int // 0 lifecycle start, 1 body, 2 lifecycle end: keeps each agent's stream in order
	order int // the agent's place in the tree (-1 for session notes)
	idx   int // its place in the agent's stream
	sub   string
	d     session.Data
}

// build settles the tree (parents, summit ids in spawn order), the times (each stream made
// non-decreasing, a child started no earlier than its parent and a parent stopped no earlier
// than its children) and merges every stream into one by time.
func (s *sess) build() ([]stamped, time.Time, time.Time) {
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
		for _, e := range a.evs {
			if !e.ts.IsZero() {
				return e.ts
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
		last := a.start
		for i := range a.evs {
			t := a.evs[i].ts.Truncate(time.Microsecond)
			if t.Before(last) {
				t = last
			}
			a.evs[i].ts, last = t, t
		}
		slices.SortStableFunc(a.children, func(x, y *agent) int { return first(x).Compare(first(y)) })
		for _, c := range a.children {
			from := last
			if t := first(c); !t.IsZero() {
				from = t.Truncate(time.Microsecond)
			}
			if from.Before(a.start) {
				from = a.start
			}
			walk(c, from)
			if c.stop.After(last) {
				last = c.stop
			}
		}
		a.stop = last
	}
	walk(m, start)
	end := m.stop
	var out []stamped
	for i, nt := range s.notes {
		t := nt.ts.Truncate(time.Microsecond)
		if t.Before(start) {
			t = start
		}
		if t.After(end) {
			end = t
		}
		out = append(out, stamped{ts: t, rank: 1, order: -1, idx: i, d: nt.d})
	}
	for _, a := range s.agents {
		out = append(out, a.stream()...)
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := &out[i], &out[j]
		if c := x.ts.Compare(y.ts); c != 0 {
			return c < 0
		}
		if x.rank != y.rank {
			return x.rank < y.rank
		}
		if x.order != y.order {
			return x.order < y.order
		}
		return x.idx < y.idx
	})
	return out, start, end
}

// stream is an agent's events with its lifecycle around them.
func (a *agent) stream() []stamped {
	out := make([]stamped, 0, len(a.evs)+5)
	i := 0
	put := func(ts time.Time, rank int, d session.Data) {
		out = append(out, stamped{ts: ts, rank: rank, order: a.order, idx: i, sub: a.id, d: d})
		i++
	}
	sp := session.SubagentSpawned{AgentType: a.typ, AgentName: a.name, PermissionMode: a.perm,
		TaskDescription: a.task, InheritContext: false, AgentSessionID: a.sessionID}
	if a.parent != nil {
		sp.ParentSubagentID = a.parent.id
	}
	put(a.start, 0, sp)
	put(a.start, 0, session.SubagentActive{InitialState: "active"})
	if a.model != "" || a.provider != "" {
		put(a.start, 0, session.ModelRouted{Provider: a.provider, Model: a.model, Requested: a.model, Why: "imported: the model the source names"})
	}
	for _, e := range a.evs {
		put(e.ts, 1, e.d)
	}
	// Requests the source never answered: the call did not run.
	for _, id := range slices.Sorted(maps.Keys(a.perms)) {
		put(a.stop, 2, session.PermissionDenied{RequestID: id, Reason: "imported: no decision recorded, and the call did not run"})
	}
	if ch := a.changes(); ch != nil {
		put(a.stop, 2, *ch)
	}
	outcome := a.outcome
	if outcome == "" {
		outcome = session.OutcomeSuccess
	}
	if outcome == session.OutcomeDisconnected && a.parent == nil {
		outcome = session.OutcomeFailure
	}
	if a.stopNote != "" {
		put(a.stop, 2, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "[imported: outcome] " + a.stopNote})
	}
	put(a.stop, 2, session.SubagentStop{Outcome: outcome, ToolInvocationCount: a.tools, ArtifactPaths: []string{},
		DurationMS: a.stop.Sub(a.start).Milliseconds(), Tokens: a.totalTokens()})
	return out
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
