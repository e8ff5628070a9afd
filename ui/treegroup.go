package ui

import (
	"slices"
	"strconv"
	"strings"

	"github.com/summit-dev/summit/session"
)

// Grouping, collapsing and jumping in the tree: how a session of hundreds or a thousand
// subagents stays navigable. All of it is view state of the workbench (which rows it shows),
// never an event: the recording and the fold do not change when the user groups the tree,
// and a replay groups the same way.
//
// With a grouping on, the subagents' rows are listed under one header row per group, each
// group in the order of its first subagent (states in a fixed order, the one that waits for
// the user first); a subagent's row keeps its place in the tree's order inside its group, one
// level under the header (its parent may be in another group, so nesting is not drawn). A
// collapsed group shows its header alone. The filter applies to the subagents' rows first;
// a group none of whose rows match is left out, and a header counts the rows that match.
// Convergences and conflicts follow the groups as they do ungrouped.

// groupModes are the tree's groupings in the order g cycles through them.
var groupModes = []string{"", "runner", "type", "state"}

// groupPrefix starts a group header's row id: no node id (sa-N, cv-N, cf-N) starts with it.
const groupPrefix = "group:"

// stateOrder is the order of the state groups: what waits for the user, then what runs.
var stateOrder = []string{"waits for you", "running", "idle", "queued", "done", "failed", "unknown", "interrupted"}

// groupOf is the group a subagent falls in under mode.
func groupOf(mode string, sa *session.Subagent) string {
	switch mode {
	case "runner":
		if sa.Runner == "" {
			return "local"
		}
		return session.Sanitize(sa.Runner)
	case "type":
		return session.Sanitize(sa.AgentType)
	case "state":
		return stateGroup(sa)
	}
	return ""
}

// stateGroup is a subagent's state as the state grouping names it.
func stateGroup(sa *session.Subagent) string {
	switch {
	case sa.PendingRequest != "":
		return "waits for you"
	case sa.Status == session.StatusQueued:
		return "queued"
	case sa.Status == session.StatusActive && sa.AgentState == "idle":
		return "idle"
	case sa.Status == session.StatusActive:
		return "running"
	case sa.Status == session.StatusDone:
		return "done"
	case sa.Status == session.StatusDisconnected:
		return "unknown"
	case sa.Status == session.StatusInterrupted:
		return "interrupted"
	}
	return "failed"
}

// groupRows lists subs (the subagents' rows, in tree order, filtered) under their groups'
// headers; a collapsed group's rows are left out. byID finds each row's subagent.
func (m *Model) groupRows(subs []row) []row {
	type group struct {
		name    string
		rows    []row
		waiting int
		running int
	}
	var groups []*group
	idx := map[string]*group{}
	for _, r := range subs {
		sa := m.st.Subagent(r.id)
		if sa == nil {
			continue
		}
		name := groupOf(m.groupBy, sa)
		g := idx[name]
		if g == nil {
			g = &group{name: name}
			idx[name] = g
			groups = append(groups, g)
		}
		r.indent = 2
		g.rows = append(g.rows, r)
		if sa.PendingRequest != "" {
			g.waiting++
		} else if sa.Status == session.StatusActive && sa.AgentState != "idle" {
			g.running++
		}
	}
	if m.groupBy == "state" {
		slices.SortStableFunc(groups, func(a, b *group) int {
			return slices.Index(stateOrder, a.name) - slices.Index(stateOrder, b.name)
		})
	}
	out := make([]row, 0, len(subs)+len(groups))
	for _, g := range groups {
		id := groupPrefix + g.name
		folded := m.collapsed[m.groupBy+"\x00"+g.name]
		h := row{id: id, indent: 1, glyph: "▾", text: g.name + " (" + strconv.Itoa(len(g.rows)) + ")"}
		if folded {
			h.glyph = "▸"
		}
		var extra []string
		if g.waiting > 0 {
			extra = append(extra, strconv.Itoa(g.waiting)+" waiting")
			h.style = rowWarn
		}
		if g.running > 0 {
			extra = append(extra, strconv.Itoa(g.running)+" running")
		}
		h.extra = strings.Join(extra, " · ")
		out = append(out, h)
		if !folded {
			out = append(out, g.rows...)
		}
	}
	return out
}

// isGroup reports whether a row id is a group's header.
func isGroup(id string) bool { return strings.HasPrefix(id, groupPrefix) }

// cycleGroup is g in the tree: the next grouping (none, runner, type, state).
func (m *Model) cycleGroup() {
	i := slices.Index(groupModes, m.groupBy)
	m.setGroup(groupModes[(i+1)%len(groupModes)])
}

// setGroup groups the tree by mode ("" for none). A selected group header of the old
// grouping gives way to the first row.
func (m *Model) setGroup(mode string) {
	m.groupBy = mode
	if isGroup(m.sel) {
		m.sel = ""
	}
	if mode == "" {
		m.notice = "tree: not grouped"
	} else {
		m.notice = "tree: grouped by " + mode + " (enter on a group folds it, g the next grouping)"
	}
	m.noticeErr = false
}

// toggleGroup folds or unfolds the group whose header is selected.
func (m *Model) toggleGroup(id string) {
	if m.collapsed == nil {
		m.collapsed = map[string]bool{}
	}
	k := m.groupBy + "\x00" + strings.TrimPrefix(id, groupPrefix)
	m.collapsed[k] = !m.collapsed[k]
	m.treeGen++
}

// nextWaiting is w in the tree: the selection goes to the next row after it, in tree order
// and wrapping around, that waits for the user (a subagent's permission request or question,
// a conflict's review). A collapsed group that holds it is unfolded and a filter that hides
// it is cleared, so the jump always lands on a visible row.
func (m *Model) nextWaiting() {
	want := map[string]bool{}
	for _, w := range m.waiting() {
		switch {
		case w.Review:
			want[w.ID] = true
		case w.SubagentID != "":
			want[w.SubagentID] = true
		}
	}
	if len(want) == 0 {
		m.notice, m.noticeErr = "nothing waits for you", false
		return
	}
	// Tree order, whatever is folded or filtered: the subagents, then the conflicts.
	var order []string
	for _, n := range m.st.Tree() {
		order = append(order, n.Subagent.ID)
	}
	for _, cv := range m.st.Convergences {
		for _, cf := range cv.Conflicts {
			order = append(order, cf.ID)
		}
	}
	at := slices.Index(order, m.sel)
	var target string
	for k := 1; k <= len(order); k++ {
		if id := order[(at+k+len(order))%len(order)]; want[id] {
			target = id
			break
		}
	}
	if target == "" {
		return
	}
	if sa := m.st.Subagent(target); sa != nil && m.groupBy != "" {
		delete(m.collapsed, m.groupBy+"\x00"+groupOf(m.groupBy, sa))
		m.treeGen++
	}
	m.sel = target
	if !slices.ContainsFunc(m.rowsMemo(), func(r row) bool { return r.id == target }) {
		m.filter, m.filtering = "", false
	}
	n := len(want)
	m.notice, m.noticeErr = target+" waits for you ("+strconv.Itoa(n)+" in all; w the next)", false
}

// groupSource is what the transcript pane shows for a selected group header.
func (m *Model) groupSource(id string) source {
	name := strings.TrimPrefix(id, groupPrefix)
	n := 0
	var ids []string
	for _, t := range m.st.Tree() {
		if groupOf(m.groupBy, t.Subagent) == name {
			n++
			if len(ids) < 20 {
				ids = append(ids, t.Subagent.ID)
			}
		}
	}
	more := ""
	if n > len(ids) {
		more = " …"
	}
	return textSource{m.groupBy + " " + name + ": " + session.Plural(n, "subagent") + "\n" + strings.Join(ids, " ") + more +
		"\n\nenter folds or unfolds the group; g groups by the next of none, runner, type, state."}
}
