package compare

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

// Report is the comparison of two recordings, A and B. Its JSON field names are a contract
// (see the package doc): add fields, never rename or drop one.
type Report struct {
	A Recording `json:"a"`
	B Recording `json:"b"`
	// Overall is the whole session; ByAgentType one row per agent type either side ran, sorted.
	Overall     Row   `json:"overall"`
	ByAgentType []Row `json:"by_agent_type"`
	// Divergence is the first point where the two runs differ; nil when none does.
	Divergence *Divergence `json:"divergence"`
	// Files is each path either run changed, sorted by path.
	Files []FileRow `json:"files"`
}

// Recording names one side.
type Recording struct {
	Path      string `json:"path"`
	SessionID string `json:"session_id"`
	Events    int    `json:"events"`
	Commands  int    `json:"commands"`
	Ended     bool   `json:"ended"`
}

// Figures are one side's numbers in a row.
type Figures struct {
	// DurationMS is the session's wall-clock time in the overall row, and the sum of its
	// subagents' running times in an agent type's row.
	DurationMS int64 `json:"duration_ms"`
	Subagents  int   `json:"subagents"`
	TokensIn   int64 `json:"tokens_in"`
	TokensOut  int64 `json:"tokens_out"`
	// CostUSD is null when unknown: no subagent was priced, or one ran on a model with no price.
	CostUSD            *float64 `json:"cost_usd"`
	ToolCalls          int      `json:"tool_calls"`
	Retries            int      `json:"retries"`
	PermissionRequests int      `json:"permission_requests"`
	PermissionsGranted int      `json:"permissions_granted"`
	PermissionsDenied  int      `json:"permissions_denied"`
	// Conflicts are the convergence conflicts (in an agent type's row: those with a side from
	// a subagent of that type); ConflictsResolved the resolved ones among them.
	Conflicts         int            `json:"conflicts"`
	ConflictsResolved int            `json:"conflicts_resolved"`
	Outcomes          map[string]int `json:"outcomes"`
}

// Row is one line of the comparison: A's and B's figures and B minus A.
type Row struct {
	AgentType string  `json:"agent_type,omitempty"`
	A         Figures `json:"a"`
	B         Figures `json:"b"`
	Delta     Figures `json:"delta"`
}

// Divergence is the first point where the runs differ. Kind is command (the command lines
// differ, or one side has more), spawn (the same subagent id is another agent type or task, or
// exists on one side only), or item (a subagent's tool call, tool result, policy denial,
// permission request or decision, retry or stop differs).
type Divergence struct {
	Kind       string `json:"kind"`
	SubagentID string `json:"subagent_id,omitempty"`
	// Command is how many commands both sides had issued, identically, before it.
	Command int   `json:"command"`
	A       Point `json:"a"`
	B       Point `json:"b"`
}

// Point is one side of a divergence: the event's seq (0 when that side has no event there, its
// stream having ended) and a one-line description.
type Point struct {
	Seq         uint64 `json:"seq"`
	Description string `json:"description"`
}

// File row statuses.
const (
	OnlyA     = "a_only"
	OnlyB     = "b_only"
	Same      = "same"
	Different = "different"
)

// FileRow compares the change each side ended with for one path.
type FileRow struct {
	Path   string      `json:"path"`
	Status string      `json:"status"`
	A      *FileChange `json:"a,omitempty"`
	B      *FileChange `json:"b,omitempty"`
}

// FileChange is the change a path ended with on one side.
type FileChange struct {
	Kind    string `json:"kind"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
	// Source is the subagent (sa-N) or convergence (cv-N) that made it; Applied is set when an
	// apply of it to the workspace stands (not undone); Seq is the event that recorded it.
	Source  string `json:"source"`
	Applied bool   `json:"applied"`
	Seq     uint64 `json:"seq"`
}

// Compare compares two folded traces. The events a divergence names are read back from the
// traces' files (their index, then those two lines); an error there is the only error.
func Compare(a, b *Trace) (Report, error) {
	rep := Report{A: recordingOf(a), B: recordingOf(b)}
	ma, mb := render.ComputeMetrics(a.st), render.ComputeMetrics(b.st)
	fa, fb := overall(a.st, ma), overall(b.st, mb)
	rep.Overall = Row{A: fa, B: fb, Delta: delta(fa, fb)}
	ta, tb := byType(a.st), byType(b.st)
	for _, typ := range slices.Sorted(maps.Keys(union(ta, tb))) {
		x, y := orZero(ta[typ]), orZero(tb[typ])
		rep.ByAgentType = append(rep.ByAgentType, Row{AgentType: typ, A: x, B: y, Delta: delta(x, y)})
	}
	if rep.ByAgentType == nil {
		rep.ByAgentType = []Row{}
	}
	rep.Files = files(a, b)
	d, err := diverge(a, b)
	if err != nil {
		return rep, err
	}
	rep.Divergence = d
	return rep, nil
}

func recordingOf(t *Trace) Recording {
	n := 0
	for _, c := range t.st.Counters.Events {
		n += c
	}
	return Recording{Path: t.Path, SessionID: t.st.SessionID, Events: n, Commands: len(t.cmds), Ended: t.st.Ended}
}

func union[V any](a, b map[string]V) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

func orZero(f *Figures) Figures {
	if f == nil {
		return Figures{Outcomes: map[string]int{}}
	}
	return *f
}

// overall takes the session's figures from the metrics inspect prints, and the tokens, which
// the metrics do not sum, from the subagents.
func overall(st *session.State, m render.Metrics) Figures {
	f := Figures{DurationMS: m.DurationMS, Subagents: m.Spawns, ToolCalls: m.ToolCalls, Retries: m.Retries,
		PermissionRequests: m.PermissionRequests, PermissionsGranted: m.PermissionsGranted,
		PermissionsDenied: m.PermissionsDenied, Conflicts: m.Conflicts, ConflictsResolved: m.ConflictsResolved,
		Outcomes: m.Outcomes}
	for _, sa := range st.Subagents {
		f.TokensIn += sa.Tokens.Input
		f.TokensOut += sa.Tokens.Output
	}
	if m.CostPriced > 0 && m.CostUnpriced == 0 {
		c := m.CostUSD
		f.CostUSD = &c
	}
	return f
}

// byType sums the subagents of each agent type. A type's cost is known when some of its
// subagents were priced and none ran on a model without a price.
func byType(st *session.State) map[string]*Figures {
	out := map[string]*Figures{}
	typeOf := map[string]string{}
	unpriced := map[string]bool{}
	for _, sa := range st.Subagents {
		typeOf[sa.ID] = sa.AgentType
		f := out[sa.AgentType]
		if f == nil {
			f = &Figures{Outcomes: map[string]int{}}
			out[sa.AgentType] = f
		}
		f.Subagents++
		if sa.Stopped {
			f.DurationMS += sa.DurationMS
			f.Outcomes[sa.Outcome]++
		} else {
			f.DurationMS += sa.Elapsed(st.LastTS).Milliseconds()
		}
		f.TokensIn += sa.Tokens.Input
		f.TokensOut += sa.Tokens.Output
		f.ToolCalls += sa.ToolCalls
		f.Retries += sa.Retries
		switch {
		case sa.CostUSD != nil:
			c := *sa.CostUSD
			if f.CostUSD != nil {
				c += *f.CostUSD
			}
			f.CostUSD = &c
		case sa.Stopped && sa.Route != nil:
			unpriced[sa.AgentType] = true
		}
	}
	for typ := range unpriced {
		out[typ].CostUSD = nil
	}
	for _, p := range st.Permissions {
		if f := out[typeOf[p.SubagentID]]; f != nil {
			f.PermissionRequests++
			switch p.Decision {
			case session.DecisionGranted:
				f.PermissionsGranted++
			case session.DecisionDenied:
				f.PermissionsDenied++
			}
		}
	}
	for _, cv := range st.Convergences {
		for _, cf := range cv.Conflicts {
			types := map[string]bool{}
			for _, s := range cf.Sides {
				if typ, ok := typeOf[s.SubagentID]; ok {
					types[typ] = true
				}
			}
			for typ := range types {
				out[typ].Conflicts++
				if cf.Resolution != nil {
					out[typ].ConflictsResolved++
				}
			}
		}
	}
	return out
}

// delta is b minus a, field by field; the cost only when both are known.
func delta(a, b Figures) Figures {
	d := Figures{DurationMS: b.DurationMS - a.DurationMS, Subagents: b.Subagents - a.Subagents,
		TokensIn: b.TokensIn - a.TokensIn, TokensOut: b.TokensOut - a.TokensOut,
		ToolCalls: b.ToolCalls - a.ToolCalls, Retries: b.Retries - a.Retries,
		PermissionRequests: b.PermissionRequests - a.PermissionRequests,
		PermissionsGranted: b.PermissionsGranted - a.PermissionsGranted,
		PermissionsDenied:  b.PermissionsDenied - a.PermissionsDenied,
		Conflicts:          b.Conflicts - a.Conflicts, ConflictsResolved: b.ConflictsResolved - a.ConflictsResolved,
		Outcomes: map[string]int{}}
	if a.CostUSD != nil && b.CostUSD != nil {
		c := *b.CostUSD - *a.CostUSD
		d.CostUSD = &c
	}
	for o := range union(a.Outcomes, b.Outcomes) {
		d.Outcomes[o] = b.Outcomes[o] - a.Outcomes[o]
	}
	return d
}

// files compares the change each path ended with.
func files(a, b *Trace) []FileRow {
	out := []FileRow{}
	for _, p := range slices.Sorted(maps.Keys(union(a.final, b.final))) {
		x, y := a.final[p], b.final[p]
		row := FileRow{Path: p, A: fileOf(x), B: fileOf(y)}
		switch {
		case y == nil:
			row.Status = OnlyA
		case x == nil:
			row.Status = OnlyB
		case x.fp == y.fp && x.applied == y.applied:
			row.Status = Same
		default:
			row.Status = Different
		}
		out = append(out, row)
	}
	return out
}

func fileOf(f *finalChange) *FileChange {
	if f == nil {
		return nil
	}
	return &FileChange{Kind: f.kind, Added: f.added, Removed: f.removed, Binary: f.binary, Source: f.source, Applied: f.applied, Seq: f.seq}
}

// candidate is a divergence found while aligning, with where it lies on each side (the seq of
// its event, or of the last event that side had there) to find the first.
type candidate struct {
	d        Divergence
	atA, atB uint64
	descA    string // set when the description is known without reading the file
	descB    string
	readA    bool // describe from the event at d.A.Seq
	readB    bool
}

// diverge aligns the two runs: their command lines in order, then each subagent id both
// spawned, item by item. Of the differences found, the first is the one earliest in A (then in
// B).
func diverge(a, b *Trace) (*Divergence, error) {
	var cands []candidate
	cmdAt := func(t *Trace, seq uint64) int {
		return sort.Search(len(t.cmds), func(i int) bool { return t.cmds[i].seq >= seq })
	}
	last := func(t *Trace) uint64 { return t.st.LastSeq }
	// Commands.
	for i := 0; i < max(len(a.cmds), len(b.cmds)); i++ {
		var x, y *command
		if i < len(a.cmds) {
			x = &a.cmds[i]
		}
		if i < len(b.cmds) {
			y = &b.cmds[i]
		}
		if x != nil && y != nil && x.line == y.line {
			continue
		}
		c := candidate{d: Divergence{Kind: "command", Command: i}, atA: last(a), atB: last(b)}
		c.descA, c.descB = "no more commands", "no more commands"
		if x != nil {
			c.d.A.Seq, c.atA, c.descA = x.seq, x.seq, "command "+x.line
		}
		if y != nil {
			c.d.B.Seq, c.atB, c.descB = y.seq, y.seq, "command "+y.line
		}
		cands = append(cands, c)
		break
	}
	// Subagents, in A's spawn order then B's extras.
	ids := slices.Clone(a.order)
	for _, id := range b.order {
		if a.subs[id] == nil {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		x, y := a.subs[id], b.subs[id]
		c := candidate{d: Divergence{SubagentID: id}}
		switch {
		case x == nil || y == nil || x.spawn != y.spawn:
			c.d.Kind = "spawn"
			c.atA, c.atB = last(a), last(b)
			c.descA, c.descB = "no "+id, "no "+id
			if x != nil {
				c.d.A.Seq, c.atA, c.readA = x.spawnSeq, x.spawnSeq, true
			}
			if y != nil {
				c.d.B.Seq, c.atB, c.readB = y.spawnSeq, y.spawnSeq, true
			}
		default:
			j := 0
			for j < len(x.items) && j < len(y.items) && x.items[j].fp == y.items[j].fp {
				j++
			}
			if j == len(x.items) && j == len(y.items) {
				continue
			}
			c.d.Kind = "item"
			// Where a side has no item j, the divergence lies after its last item there.
			c.atA, c.atB = x.spawnSeq, y.spawnSeq
			if j > 0 {
				c.atA, c.atB = x.items[j-1].seq, y.items[j-1].seq
			}
			c.descA, c.descB = "no further event for "+id, "no further event for "+id
			if j < len(x.items) {
				c.d.A.Seq, c.atA, c.readA = x.items[j].seq, x.items[j].seq, true
			}
			if j < len(y.items) {
				c.d.B.Seq, c.atB, c.readB = y.items[j].seq, y.items[j].seq, true
			}
		}
		cands = append(cands, c)
	}
	if len(cands) == 0 {
		return nil, nil
	}
	first := slices.MinFunc(cands, func(p, q candidate) int {
		if p.atA != q.atA {
			return cmpU(p.atA, q.atA)
		}
		return cmpU(p.atB, q.atB)
	})
	d := first.d
	if d.Kind != "command" {
		// The commands both sides issued alike before it.
		d.Command = min(cmdAt(a, max(first.atA, 1)), cmdAt(b, max(first.atB, 1)))
		if cd := slices.IndexFunc(cands, func(c candidate) bool { return c.d.Kind == "command" }); cd >= 0 {
			d.Command = min(d.Command, cands[cd].d.Command)
		}
	}
	var err error
	d.A.Description, err = describe(a, first.readA, d.A.Seq, first.descA)
	if err != nil {
		return nil, err
	}
	d.B.Description, err = describe(b, first.readB, d.B.Seq, first.descB)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// describe is the one-line description of one side of the divergence: known already, or the
// event at seq read back from the recording.
func describe(t *Trace, read bool, seq uint64, known string) (string, error) {
	if !read {
		return oneLine(known), nil
	}
	e, err := readEvent(t.Path, seq)
	if err != nil {
		return "", fmt.Errorf("%s: reading seq %d back: %w", t.Path, seq, err)
	}
	return oneLine(Describe(e)), nil
}

// readEvent reads the event with seq from a recording: its index from the line prefixes, then
// that one line.
func readEvent(path string, seq uint64) (session.Event, error) {
	ix, err := record.BuildIndexFile(path, record.ReadOptions{Lenient: true})
	if err != nil {
		return session.Event{}, err
	}
	i, ok := ix.Find(seq)
	if !ok {
		return session.Event{}, fmt.Errorf("no event with seq %d", seq)
	}
	f, err := os.Open(path)
	if err != nil {
		return session.Event{}, err
	}
	defer f.Close()
	return ix.ReadEvent(f, i)
}

// maxDesc bounds a description: it names the event, it does not quote it whole.
const maxDesc = 160

// oneLine keeps a description on one line and within maxDesc runes. It is not sanitised: the
// text and JSON writers do that.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxDesc {
		s = string(r[:maxDesc-1]) + "…"
	}
	return s
}

// Describe says what an event is in one line: the subagent, what happened, and the start of
// what it carried (tool arguments, a result).
func Describe(e session.Event) string {
	who := e.SubagentID
	if who != "" {
		who += " "
	}
	switch d := e.Data.(type) {
	case session.CommandIssued:
		return "command " + d.Line
	case session.SubagentSpawned:
		return fmt.Sprintf("%sspawned: %s %q", who, d.AgentType, d.TaskDescription)
	case session.TranscriptEvent:
		switch d.EventType {
		case session.TranscriptToolCall:
			return fmt.Sprintf("%scalls %s %s", who, d.Tool, canonical(d.Args))
		case session.TranscriptToolResult:
			state := "ok"
			if d.IsError {
				state = "error"
			}
			return fmt.Sprintf("%s%s result (%s): %s", who, d.Tool, state, d.Result)
		case session.TranscriptPolicyDenied:
			return fmt.Sprintf("%s%s refused by policy: %s", who, d.Tool, d.Reason)
		}
		return fmt.Sprintf("%s%s", who, d.EventType)
	case session.PermissionRequested:
		return fmt.Sprintf("%sasks permission %s for %s %s", who, d.RequestID, d.Tool, canonical(d.Args))
	case session.PermissionGranted:
		return fmt.Sprintf("%spermission %s granted (%s)", who, d.RequestID, d.Scope)
	case session.PermissionDenied:
		return fmt.Sprintf("%spermission %s denied: %s", who, d.RequestID, d.Reason)
	case session.SubagentError:
		retry := "no retry"
		if d.Retrying() {
			retry = "retrying"
		}
		return fmt.Sprintf("%serror (%s): %s", who, retry, d.Error)
	case session.SubagentStop:
		return fmt.Sprintf("%sstopped: %s", who, d.Outcome)
	}
	return fmt.Sprintf("%s%s", who, e.Type)
}
