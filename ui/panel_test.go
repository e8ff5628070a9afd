package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// What the orchestrator answers to /agents and /status (session/live: tab-separated tables,
// the first line of each the header), with wide runes and a description longer than 80 columns.
const (
	agentsOut = "name\tfrom\tmode\tdescription\n" +
		"analyzer\tbuiltin\tplan\t/delegate type: code analysis, trajectory inspection and pattern detection.\n" +
		"builder\tbuiltin\tacceptEdits\t/delegate type: code generation, file modifications and build operations.\n" +
		"code-reviewer\tbuiltin\tplan\tCode review: correctness, quality, SOLID, security; verified findings with file/line references. Read-only.\n" +
		"general\tworkspace\tsession's\tthe repository's own general\n" +
		"\t\t\t↳ runs workspace .summit/agents/general.md, shadows built-in\n" +
		"構築者\tuser\tsession's\t日本語で説明するエージェント、とても長い説明文がここに続きます。\n" +
		"ext-agent\tacp\tsession's\texternal agent over ACP: /bin/true --acp\n" +
		"\nmode: what an agent asks for, never above the session's (acceptEdits); session's: it sets none and takes the session's\n"
	statusOut = "session s-ui · acceptEdits · 2 running\n" +
		"\tid\tagent\tstatus\ttime\tnow\n" +
		"◐\tsa-1\texplore\tactive\t12s\tread_file\n" +
		"⚠\tsa-2\tbuilder\tactive\t8s\twaiting for approval pr-1\n" +
		"✓\tsa-10\ttester\tdone\t1m4s\t\n" +
		"\nconvergence\tstrategy\tmembers\tstatus\n" +
		"cv-1\tmerge\tsa-1, sa-2\trunning\n"
)

func openPanel(t *testing.T, w, h int, line, out string) *Model {
	t.Helper()
	m, _ := newModel(t, w, h, &fakeBackend{replies: map[string]Reply{line: {Output: out}}})
	m.Update(EventsMsg(upTo(events(t), session.TypePermissionRequested, false)))
	typeText(m, line)
	press(m, "enter")
	if m.panel == nil {
		t.Fatalf("%s opened no panel", line)
	}
	return m
}

// panelRows are the lines inside the panel's box (the first ┏ line to its ┗ line), without
// the borders.
func panelRows(t *testing.T, screen string) []string {
	t.Helper()
	var rows []string
	in := false
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.Contains(l, "┏"):
			in = true
		case strings.Contains(l, "┗"):
			in = false
		case in:
			i, j := strings.Index(l, "┃"), strings.LastIndex(l, "┃")
			if i < 0 || j <= i {
				t.Fatalf("a panel line without its borders: %q", l)
			}
			rows = append(rows, l[i+len("┃"):j])
		}
	}
	return rows
}

// checkTable: every row of the table is on one line, its cells start at the header's columns
// (measured in display cells), and only the last column is cut.
// A first cell "↳" is a continuation row: it starts in the last column.
func checkTable(t *testing.T, what string, rows []string, header []string, firsts []string) {
	t.Helper()
	hi := -1
	for i, r := range rows {
		if strings.HasPrefix(strings.TrimSpace(r), header[0]) && strings.Contains(r, header[1]) {
			hi = i
			break
		}
	}
	if hi < 0 {
		t.Fatalf("%s: no header %v in\n%s", what, header, strings.Join(rows, "\n"))
	}
	col := func(line, cell string) int {
		i := strings.Index(line, cell)
		if i < 0 {
			return -1
		}
		return ansi.StringWidth(line[:i])
	}
	starts := make([]int, len(header))
	for j, h := range header {
		starts[j] = col(rows[hi], h)
	}
	for i, first := range firsts {
		r := rows[hi+1+i]
		if !strings.Contains(r, first) {
			t.Errorf("%s: row %d is %q, want it to start with %q (a row wrapped?)", what, i+1, r, first)
			continue
		}
		want := starts[0]
		if strings.HasPrefix(first, "↳") {
			want = starts[len(starts)-1]
		}
		if c := col(r, first); c != want {
			t.Errorf("%s: %q starts at column %d, its header's at %d", what, first, c, want)
		}
	}
}

func TestGoldenAgentsPanel(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		m := openPanel(t, sz[0], sz[1], "/agents", agentsOut)
		out := ansi.Strip(m.Render())
		if sz[0] != 120 {
			out = golden(t, "agents-"+size(sz), m)
		}
		rows := panelRows(t, out)
		checkTable(t, "/agents "+size(sz), rows, []string{"name", "from", "mode", "description"},
			[]string{"analyzer", "builder", "code-reviewer", "general", "↳ runs", "構築者", "ext-agent"})
		// The description gives way only when the screen is too narrow for it.
		cut := strings.Contains(out, "…")
		if sz[0] >= 200 && cut {
			t.Errorf("/agents at %s cuts text with room to spare:\n%s", size(sz), out)
		}
		if sz[0] == 80 && !cut {
			t.Errorf("/agents at 80 columns: the long description is not cut with …:\n%s", out)
		}
		for _, w := range []string{"session's", "mode: what an agent asks for"} {
			if !strings.Contains(strings.Join(rows, " "), w) {
				t.Errorf("/agents at %s lacks %q", size(sz), w)
			}
		}
		if strings.Contains(out, " - ") {
			t.Errorf("/agents at %s still shows an unexplained -:\n%s", size(sz), out)
		}
	}
}

// /status: a table sized to its content, floating over the panes (which stay visible).
func TestGoldenStatusPanel(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		m := openPanel(t, sz[0], sz[1], "/status", statusOut)
		out := ansi.Strip(m.Render())
		if sz[0] != 120 {
			out = golden(t, "status-"+size(sz), m)
		}
		rows := panelRows(t, out)
		if len(rows) != 8 {
			t.Errorf("/status at %s: the panel has %d rows, want its 8 lines:\n%s", size(sz), len(rows), out)
		}
		checkTable(t, "/status "+size(sz), rows, []string{"id", "agent", "status", "time", "now"}, []string{"sa-1 ", "sa-2 ", "sa-10 "})
		checkTable(t, "/status "+size(sz), rows, []string{"convergence", "strategy", "members", "status"}, []string{"cv-1"})
		if !strings.Contains(out, "tree") || !strings.Contains(out, "session log") {
			t.Errorf("/status at %s hides the panes behind it:\n%s", size(sz), out)
		}
		if strings.Contains(out, "↑↓ scroll") {
			t.Errorf("/status at %s: a panel that does not scroll says it does:\n%s", size(sz), out)
		}
		var box string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "┏") {
				box = l[strings.Index(l, "┏"):strings.LastIndex(l, "┓")]
			}
		}
		if w := ansi.StringWidth(box) + 1; w > 70 {
			t.Errorf("/status at %s: the panel is %d wide for content under 60", size(sz), w)
		}
	}
}

// The help's keys column is as wide as its widest key; a description wraps within its own
// column, never into the keys column or the commands beside it.
func TestGoldenHelpColumns(t *testing.T) {
	known := map[string]bool{}
	k := DefaultKeyMap()
	for _, g := range k.helpGroups(false) {
		known[g.title] = true
		for _, b := range g.keys {
			known[b.Help().Key] = true
		}
	}
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		m, _ := newModel(t, sz[0], sz[1], &fakeBackend{})
		press(m, "?")
		out := ansi.Strip(m.Render())
		if sz[0] == 200 {
			golden(t, "help-"+size(sz), m)
		}
		for range 3 {
			press(m, "pgdown")
			out += "\n" + ansi.Strip(m.Render())
		}
		rows := panelRows(t, out)
		// The keys column: 1 space, 2 of indent, the widest key (12), 2 of gap. A line that
		// starts left of the descriptions starts with a key, a title, a command or the note.
		const descAt = 1 + 2 + 12 + 2
		note := strings.Join(strings.Fields(commands.Overview()), " ")
		for _, r := range rows {
			text := strings.TrimLeft(r, " ")
			if text == "" || ansi.StringWidth(r)-ansi.StringWidth(text) >= descAt {
				continue
			}
			key, _, _ := strings.Cut(text, "  ")
			if !known[key] && !strings.HasPrefix(key, "/") && key != "commands" && !strings.Contains(note, strings.TrimSpace(text)) {
				t.Errorf("help at %s: %q starts in the keys column (a description wrapped into it?)", size(sz), r)
			}
		}
		// The commands line up in their own column, whatever stands beside them.
		at := map[int]string{}
		for _, r := range rows {
			for _, c := range commands.Specs() {
				if i := strings.Index(r, "/"+c.Name+"  "); i >= 0 && strings.TrimSpace(r[i+len(c.Name)+1:]) != "" {
					at[ansi.StringWidth(r[:i])] = c.Name
				}
			}
		}
		if len(at) != 1 {
			t.Errorf("help at %s: the commands start at %d different columns: %v", size(sz), len(at), at)
		}
		joined := strings.Join(rows, "\n")
		for _, w := range []string{"/converge", "ctrl+o", "output panels", "--transfer-control"} {
			if !strings.Contains(joined, w) {
				t.Errorf("help at %s lacks %q", size(sz), w)
			}
		}
	}
}
