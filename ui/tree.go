package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// row is one line of the tree.
type row struct {
	id     string // node id: "" session, sa-N, cv-N, cf-N
	indent int
	glyph  string
	text   string // plain text, for filtering
	extra  string // right part: elapsed, tokens, state (a subagent's cols, joined)
	// cols are a subagent's figures, drawn in aligned columns (treeCols): changes and
	// verification, state, elapsed, tokens, cost, tool. Other rows have none: their extra
	// follows their text.
	cols  [treeCols]string
	style int // rowPlain, rowWarn, rowBad, rowOK, rowRun
	// memo is a subagent row's pieces (nil on other rows): it holds the widths of the row's
	// text and columns, measured when they changed, so sizing the columns of 1,000 rows does
	// not measure 7,000 strings a frame.
	memo *saRow
}

const (
	rowPlain = iota
	rowWarn
	rowBad
	rowOK
	rowRun
)

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// modeTag is a subagent's permission mode, short, for its tree row.
var modeTag = map[string]string{"plan": "plan", "acceptEdits": "edits", "bypassPermissions": "bypass"}

// rows lists the tree: the session, its subagents, then convergences with their conflicts.
// The filter keeps the rows whose text contains it (the session row always stays); a
// grouping lists the subagents under their groups' headers (treegroup.go).
func (m *Model) rows() []row {
	st := m.st
	now := m.now()
	// Sized once: with 1,000 subagents, growing the slice row by row was a third of a frame.
	n := 1 + len(st.Subagents)
	for _, cv := range st.Convergences {
		n += 1 + len(cv.Conflicts)
	}
	out := make([]row, 1, n)
	out[0] = row{id: "", glyph: "▾", text: "session"}
	var handoff map[string]string
	for _, h := range st.Handoffs {
		if h.Status == session.HandoffActive {
			if handoff == nil {
				handoff = map[string]string{}
			}
			handoff[h.SubagentID] = h.Mode
		}
	}
	for _, n := range m.treeNodes() {
		sa, memo := n.sa, n.memo
		r := row{id: sa.ID, indent: 1 + n.depth, glyph: render.StatusGlyph(sa), memo: memo}
		mode, inHandoff := handoff[sa.ID]
		r.text = memo.textOf(textKey{sa.AgentType, sa.AgentName, sa.PermissionMode, mode, inHandoff, sa.AgentShadows, sa.Runner}, sa.ID)
		var parts [treeCols]string
		if ch := sa.Changes; ch != nil && ch.Error == "" {
			parts[0] = memo.changesOf(ch.Added, ch.Removed) // first: it is what matters once it stopped
		}
		if tag := verifyTag(sa.Verify); tag != "" { // summit's measurement, never the capsule's claim
			parts[0] = strings.TrimSpace(parts[0] + " " + tag)
		}
		switch {
		case sa.PendingRequest != "":
			r.style, r.glyph = rowWarn, "⚠"
			parts[1] = "waits for you"
		case sa.Status == session.StatusQueued:
			parts[1] = "queued"
		case sa.Status == session.StatusActive && sa.AgentState == "idle":
			r.glyph = "◦" // an agent's own subagent between pieces of work: nothing runs
			parts[1] = "idle"
		case sa.Status == session.StatusActive:
			r.style = rowRun
			r.glyph = spinner[m.frame%len(spinner)]
		case sa.Status == session.StatusDone:
			r.style = rowOK
		case sa.Status == session.StatusDisconnected:
			parts[1] = "unknown" // its agent stopped reporting on it: an unknown outcome, not a failure
		case sa.Status == session.StatusInterrupted:
			r.glyph = "↯" // running at the fork point: neither failed nor cancelled; /retry runs it again
		default:
			r.style = rowBad
		}
		if sa.Status != session.StatusQueued {
			parts[2], parts[3] = memo.durationOf(sa.Elapsed(now)), memo.tokensOf(sa)
		}
		if sa.CostUSD != nil {
			parts[4] = memo.costOf(*sa.CostUSD)
		}
		switch {
		case sa.CurrentTool != "" && sa.PendingRequest == "":
			parts[5] = session.Sanitize(sa.CurrentTool)
		case sa.PlanStep != "" && sa.Status == session.StatusActive:
			parts[5] = "▸ " + session.Sanitize(sa.PlanStep) // an external agent's plan step
		}
		r.extra, r.cols = memo.extraOf(parts), parts
		out = append(out, r)
	}
	nSubs := len(out) - 1
	for _, cv := range st.Convergences {
		r := row{id: cv.ID, text: fmt.Sprintf("%s %s (%s)", cv.ID, cv.Strategy, strings.Join(cv.Members, ", "))}
		r.glyph, r.style = convergenceGlyph(cv, m.frame)
		r.extra = render.ConvergenceStatus(st, cv)
		if tag := verifyTag(cv.Verify); tag != "" { // first: a narrow tree cuts the end of the row
			r.extra = tag + " · " + r.extra
		}
		out = append(out, r)
		for _, cf := range cv.Conflicts {
			c := row{id: cf.ID, indent: 1, glyph: "⚠", style: rowWarn, text: cf.ID + " " + conflictWhere(cf)}
			switch {
			case cf.Resolution != nil:
				c.glyph, c.style, c.extra = "✓", rowOK, cf.Resolution.Choice
			case cv.Status == session.ConvergenceDone:
				// Its convergence ended without it (interrupted by a fork): nothing waits.
				c.glyph, c.style, c.extra = "↯", rowPlain, "interrupted"
			case cf.ReviewRequested:
				c.extra = "waits for you"
			default:
				c.glyph, c.style, c.extra = "○", rowPlain, "open"
			}
			out = append(out, c)
		}
	}
	if m.filter == "" && m.groupBy == "" {
		return out
	}
	subs, rest := out[1:1+nSubs], out[1+nSubs:]
	if m.filter != "" {
		f := strings.ToLower(m.filter)
		keep := func(rs []row) []row {
			var kept []row
			for _, r := range rs {
				if strings.Contains(strings.ToLower(r.text+" "+r.extra), f) {
					kept = append(kept, r)
				}
			}
			return kept
		}
		subs, rest = keep(subs), keep(rest)
	}
	if m.groupBy != "" {
		subs = m.groupRows(subs) // treegroup.go
	}
	return append(append(out[:1:1], subs...), rest...)
}

// treeNode is a subagent of the tree in tree order, with its row's memo.
type treeNode struct {
	sa    *session.Subagent
	depth int
	memo  *saRow
}

// treeShape keeps the tree's order (st.Tree) and each node's memo while the shape holds: a
// subagent's parent is set when it spawns and never changes, so the order changes only when a
// subagent is added or the state is replaced (a replay's seek), not with each token.
type treeShape struct {
	st          *session.State
	n           int
	first, last *session.Subagent
	nodes       []treeNode
}

func (m *Model) treeNodes() []treeNode {
	st, c := m.st, &m.treeShape
	n := len(st.Subagents)
	if c.st == st && c.n == n && (n == 0 || c.first == st.Subagents[0] && c.last == st.Subagents[n-1]) {
		return c.nodes
	}
	if m.rowMemo == nil {
		m.rowMemo = map[string]*saRow{}
	}
	tree := st.Tree()
	nodes := make([]treeNode, len(tree))
	for i, t := range tree {
		memo := m.rowMemo[t.Subagent.ID]
		if memo == nil {
			memo = &saRow{}
			m.rowMemo[t.Subagent.ID] = memo
		}
		nodes[i] = treeNode{t.Subagent, t.Depth, memo}
	}
	*c = treeShape{st: st, n: n, nodes: nodes}
	if n > 0 {
		c.first, c.last = st.Subagents[0], st.Subagents[n-1]
	}
	return nodes
}

// saRow keeps the pieces of a subagent's tree row with what they were made from, so a frame
// formats only what changed since the last (a streaming subagent's tokens; its elapsed time
// once a second), not every figure of every row.
type saRow struct {
	textIn        textKey
	text          string
	textW         int // the width of text, sanitised
	added, rmd    int
	changes       string
	dur           time.Duration
	durText       string
	tokIn, tokIn2 int64
	tokOK         bool
	tokText       string
	cost          float64
	costText      string
	parts         [treeCols]string
	partsW        [treeCols]int // the width of each of parts, sanitised
	extra         string
	extraOK       bool
}

type textKey struct {
	agentType, agentName, mode, handoff string
	inHandoff                           bool
	shadows                             string
	runner                              string // the remote runner it was placed on ("" here)
}

func (r *saRow) textOf(k textKey, id string) string {
	if r.text != "" && r.textIn == k {
		return r.text
	}
	name := k.agentType
	if k.agentName != "" && k.agentName != k.agentType && !strings.HasSuffix(k.agentType, "/"+k.agentName) {
		name += " " + k.agentName
	}
	text := id + " " + session.Sanitize(name)
	if k.shadows != "" {
		// Which definition runs, when it took another's name: its layer ("workspace").
		layer, _, _ := strings.Cut(k.shadows, " ")
		text += " [" + session.Sanitize(layer) + "]"
	}
	if k.runner != "" {
		// Where it runs, before the tags: a narrow tree cuts the end of the row.
		text += " @" + session.Sanitize(k.runner)
	}
	if t := modeTag[k.mode]; t != "" {
		text += " ·" + t
	}
	if k.inHandoff {
		text += " ⇄"
		if k.handoff == session.HandoffTransferControl {
			text += " control"
		}
	}
	r.textIn, r.text, r.textW = k, text, textWidth(session.Sanitize(text))
	return text
}

func (r *saRow) changesOf(added, removed int) string {
	if r.changes == "" || r.added != added || r.rmd != removed {
		r.added, r.rmd, r.changes = added, removed, fmt.Sprintf("+%d −%d", added, removed)
	}
	return r.changes
}

func (r *saRow) durationOf(d time.Duration) string {
	d = d.Round(time.Second) // what FormatDuration shows
	if r.durText == "" || r.dur != d {
		r.dur, r.durText = d, render.FormatDuration(d)
	}
	return r.durText
}

func (r *saRow) tokensOf(sa *session.Subagent) string {
	a, b := sa.Tokens.Input+sa.Tokens.Output, int64(sa.StreamedBytes)
	if !r.tokOK || r.tokIn != a || r.tokIn2 != b {
		r.tokIn, r.tokIn2, r.tokOK, r.tokText = a, b, true, render.FormatTokens(sa)
	}
	return r.tokText
}

func (r *saRow) costOf(usd float64) string {
	if r.costText == "" || r.cost != usd {
		r.cost, r.costText = usd, render.FormatCost(usd)
	}
	return r.costText
}

// extraOf joins the row's right part with single spaces, skipping empty pieces.
func (r *saRow) extraOf(parts [treeCols]string) string {
	if r.extraOK && r.parts == parts {
		return r.extra
	}
	var b strings.Builder
	for j, p := range parts {
		if !r.extraOK || p != r.parts[j] {
			r.partsW[j] = textWidth(session.Sanitize(p))
		}
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	r.parts, r.extra, r.extraOK = parts, b.String(), true
	return r.extra
}

// convergenceGlyph is a convergence's status glyph and row style: running spins, a review
// waits (⚠), complete is ✓, partial ◑, and a failed one stands out (✗, in the error style).
func convergenceGlyph(cv *session.Convergence, frame int) (string, int) {
	switch cv.Status {
	case session.ConvergenceRunning:
		return spinner[frame%len(spinner)], rowRun
	case session.ConvergenceReview:
		return "⚠", rowWarn
	case session.ConvergenceDone:
		switch cv.Outcome {
		case session.OutcomeSuccess:
			return "✓", rowOK
		case "partial":
			return "◑", rowWarn
		}
		return "✗", rowBad
	}
	return "?", rowPlain
}

func conflictWhere(cf *session.Conflict) string {
	return session.ConflictWhere(cf.Kind, cf.File, cf.Lines)
}

// renderTree draws the tree's rows in w×h (inside its pane); the selected row stays in view
// and is marked with ▸ and the accent, not a full-width bar. While filtering, the first line
// is the filter.
func (m *Model) renderTree(w, h int) []string {
	var out []string
	if m.filtering || m.filter != "" {
		l := "filter: " + session.Sanitize(m.filter)
		if m.filtering {
			l += "█"
		}
		out = append(out, m.sty.prompt.Render(truncate(l, w, "…")))
		h--
	}
	rs, lay := m.treeRows()
	sel := 0
	for i, r := range rs {
		if r.id == m.sel {
			sel = i
		}
	}
	top := max(0, sel-h+1)
	lines := m.treeLines.next()
	for i := top; i < len(rs) && i-top < h; i++ {
		r := rs[i]
		k := rowKey{row: r, w: w, lay: lay, sel: i == sel, focus: i == sel && m.focus == focusTree}
		line, ok := m.treeLines.get(k)
		if !ok {
			line = m.renderRow(k)
		}
		lines[k] = line
		out = append(out, line)
	}
	return out
}

// rowKey is everything a tree row's line is drawn from: a row that did not change (a
// subagent that is done, or whose figures did not move this frame) is not drawn again.
type rowKey struct {
	row
	w          int
	lay        treeLayout
	sel, focus bool
}

// treeCols is the number of a subagent row's figure columns; treeRight are the ones aligned
// right (elapsed, tokens, cost).
const treeCols = 6

var treeRight = [treeCols]bool{false, false, true, true, true, false}

// treeLayout is the tree's columns sized to their content: the left part (mark, indent,
// glyph, text) as wide as the widest subagent row's, each figure column as wide as its widest
// cell (an empty column takes no room), and the natural width of the whole.
type treeLayout struct {
	left int
	cols [treeCols]int
	nat  int
}

// colsWidth is the width of the figure columns with the gaps before each.
func (l treeLayout) colsWidth() int {
	n := 0
	for _, c := range l.cols {
		if c > 0 {
			n += c + 1
		}
	}
	return n
}

// fitWidth is the widest row no wider than w that shows whole columns: the names and as many
// of the figure columns as fit (all of them: the natural width).
func (l treeLayout) fitWidth(w int) int {
	if l.nat <= w {
		return l.nat
	}
	x := l.left
	for _, c := range l.cols {
		if c > 0 && x+1+c > w {
			break
		}
		if c > 0 {
			x += 1 + c
		}
	}
	return x
}

// layoutOf sizes the columns of rows.
func layoutOf(rs []row) treeLayout {
	var l treeLayout
	lefts := make([]int, len(rs))
	for i, r := range rs {
		if mm := r.memo; mm != nil && mm.text == r.text && mm.extraOK && mm.parts == r.cols {
			// A subagent's row: its widths were measured when its pieces changed.
			lefts[i] = 1 + 2*r.indent + textWidth(r.glyph) + 1 + mm.textW
			for j := range r.cols {
				l.cols[j] = max(l.cols[j], mm.partsW[j])
			}
		} else {
			lefts[i] = 1 + 2*r.indent + textWidth(r.glyph) + 1 + textWidth(session.Sanitize(r.text))
			for j, c := range r.cols {
				l.cols[j] = max(l.cols[j], textWidth(session.Sanitize(c)))
			}
		}
		if r.id == "" || r.cols != ([treeCols]string{}) || r.extra == "" {
			l.left = max(l.left, lefts[i])
		}
	}
	l.nat = l.left + l.colsWidth()
	for i, r := range rs {
		if r.cols == ([treeCols]string{}) && r.extra != "" {
			l.nat = max(l.nat, max(lefts[i], l.left)+2+textWidth(session.Sanitize(r.extra)))
		}
	}
	return l
}

// treeMemo keeps the rows and their layout for one state of the tree: a frame asks for them
// several times (the panes' widths, the tree itself).
type treeMemo struct {
	st     *session.State
	seq    uint64
	frame  int
	filter string
	group  string
	gen    int
	now    int64
	n      int
	rows   []row
	lay    treeLayout
	ok     bool
}

// treeRows are the tree's rows and their layout.
func (m *Model) treeRows() ([]row, treeLayout) {
	c := &m.treeMemo
	now := m.now().Unix()
	// Tokens alone (figuresOnly events, all folded here since the rows were made) do not make
	// them again: the tree's figures move with the spinner's tick (frame, every 120 ms) and
	// the clock's second, not with each batch of events (FrameRate a second). With 1,000
	// subagents streaming, every row's count changes in every batch; listing and drawing them
	// at the tick costs a quarter of it, in View and in the terminal's update alike. The
	// selected transcript still streams every frame, and any other event shows at once.
	tokensOnly := c.seq <= m.st.LastSeq && m.treeAt <= c.seq && m.foldedTo == m.st.LastSeq
	if c.ok && c.st == m.st && (c.seq == m.st.LastSeq || tokensOnly) && c.frame == m.frame && c.filter == m.filter && c.group == m.groupBy &&
		c.gen == m.treeGen && c.now == now && c.n == len(m.st.Subagents) {
		return c.rows, c.lay
	}
	rs := m.rows()
	*c = treeMemo{st: m.st, seq: m.st.LastSeq, frame: m.frame, filter: m.filter, group: m.groupBy, gen: m.treeGen, now: now, n: len(m.st.Subagents), rows: rs, lay: layoutOf(rs), ok: true}
	return rs, c.lay
}

// rowsMemo are the tree's rows, from the memo when nothing they show changed: a key that
// moves the selection does not list 1,000 subagents again.
func (m *Model) rowsMemo() []row {
	rs, _ := m.treeRows()
	return rs
}

// lineCache keeps the lines drawn for the last frame; what a frame does not show again is
// dropped with it.
type lineCache[K comparable] struct{ prev, cur map[K]string }

func (c *lineCache[K]) get(k K) (string, bool) {
	if l, ok := c.cur[k]; ok {
		return l, true
	}
	l, ok := c.prev[k]
	return l, ok
}

// next starts a frame: the lines put in the map it returns are the ones kept for the next.
func (c *lineCache[K]) next() map[K]string {
	c.prev, c.cur = c.cur, make(map[K]string, len(c.cur))
	return c.cur
}

func (m *Model) renderRow(k rowKey) string {
	r, w, lay := k.row, k.w, k.lay
	mark := " "
	if k.sel {
		mark = "▸"
	}
	// Ids, names and choices are what the events say (a replayed recording can say
	// anything): the row's text is drawn sanitised.
	left := mark + strings.Repeat("  ", r.indent) + r.glyph + " " + session.Sanitize(r.text)
	// Names are never cut for the figures: these start after the widest name, and a column
	// that does not fit whole is left out with the ones after it (the same for every row, so
	// they stay aligned); only the last, the tool, is cut with … to what remains.
	leftW := lay.left
	line := left
	switch {
	case r.cols != ([treeCols]string{}):
		var b strings.Builder
		b.WriteString(left)
		b.WriteString(strings.Repeat(" ", max(0, leftW-textWidth(left))))
		x := leftW
		for j, c := range r.cols {
			cw := lay.cols[j]
			if cw == 0 {
				continue
			}
			if x+1+cw > w {
				if j == treeCols-1 && w-x-1 >= 4 {
					b.WriteString(" " + truncate(session.Sanitize(c), w-x-1, "…"))
				}
				break
			}
			x += 1 + cw
			c = session.Sanitize(c)
			pad := strings.Repeat(" ", max(0, cw-textWidth(c)))
			b.WriteByte(' ')
			if treeRight[j] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		line = strings.TrimRight(b.String(), " ")
	case r.extra != "":
		// A convergence's or conflict's state, where the figures start.
		line = left + strings.Repeat(" ", max(2, leftW-textWidth(left)+1)) + session.Sanitize(r.extra)
	}
	line = truncate(line, w, "…")
	switch {
	case k.focus:
		line = m.sty.selected.Render(line)
	case k.sel:
		line = m.sty.bold.Render(line)
	case r.style == rowWarn:
		line = m.sty.warn.Render(line)
	case r.style == rowBad:
		line = m.sty.bad.Render(line)
	case r.style == rowOK:
		line = m.sty.ok.Render(line)
	case r.style == rowRun:
		line = m.sty.run.Render(line)
	}
	return line
}

// leaveTree ends filtering when the focus leaves the tree: a filter is never left on
// invisibly.
func (m *Model) leaveTree() {
	m.filtering, m.filter = false, ""
}

func (m *Model) treeKey(k tea.KeyPressMsg) tea.Cmd {
	if m.filtering {
		switch s := k.String(); s {
		case "esc":
			m.leaveTree()
		case "enter":
			m.filtering = false // keep the filter; ↑↓ move among the matches
		case "backspace":
			if r := []rune(m.filter); len(r) > 0 {
				m.filter = string(r[:len(r)-1])
			}
		case "up", "down":
			m.moveSel(s == "down")
		case "tab":
			m.cycleFocus()
		default:
			if t := k.Text; t != "" {
				m.filter += t
			}
		}
		m.keepSel()
		return nil
	}
	switch s := k.String(); s {
	case "tab":
		m.cycleFocus()
	case "esc":
		if m.filter != "" {
			m.leaveTree()
			return nil
		}
		if m.o.Replay == nil {
			m.focus = focusInput
			m.in.Focus()
		}
	case "up", "k":
		m.moveSel(false)
	case "down", "j":
		m.moveSel(true)
	case "enter":
		if isGroup(m.sel) {
			m.toggleGroup(m.sel) // treegroup.go
			break
		}
		m.leaveTree()
		m.focus = focusTranscript
		// A conflict whose convergence ended without it (interrupted by a fork) has no review.
		if cf := m.st.Conflict(m.sel); cf != nil && cf.Resolution == nil && m.o.Replay == nil && !interruptedConflict(m.st, cf) {
			m.openConflict(cf.ID)
		}
	case "f":
		m.filtering = true
	case "g":
		m.cycleGroup()
	case "w":
		m.nextWaiting()
	case "<":
		m.treeW = max(20, m.treeWidth()-2)
	case ">":
		m.treeW = min(m.w-34, m.treeWidth()+2)
	case "?":
		m.help, m.helpTop = true, 0
	}
	m.keepSel()
	return nil
}

func (m *Model) moveSel(down bool) {
	rs := m.rowsMemo()
	idx := 0
	for i, r := range rs {
		if r.id == m.sel {
			idx = i
		}
	}
	if down {
		m.sel = rs[min(len(rs)-1, idx+1)].id
	} else {
		m.sel = rs[max(0, idx-1)].id
	}
}

// keepSel keeps the selection on a visible row; while filtering, on the first match.
func (m *Model) keepSel() {
	rs := m.rowsMemo()
	found := false
	for _, r := range rs {
		found = found || r.id == m.sel
	}
	if !found || (m.filter != "" && m.sel == "" && len(rs) > 1) {
		m.sel = rs[min(1, len(rs)-1)].id
	}
}

// interruptedConflict reports whether cf's convergence completed while cf was open (a fork
// interrupted it): nothing can answer it.
func interruptedConflict(st *session.State, cf *session.Conflict) bool {
	cv := st.Convergence(cf.ConvergenceID)
	return cv != nil && cv.Status == session.ConvergenceDone && cf.Resolution == nil
}
