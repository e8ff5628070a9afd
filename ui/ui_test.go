package ui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const recording = "../testdata/recordings/valid.jsonl"

// clock is a settable Now for tests.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// fakeBackend records submitted lines and answers with canned replies.
type fakeBackend struct {
	lines   []string
	replies map[string]Reply
}

func (b *fakeBackend) Submit(line string) Reply {
	b.lines = append(b.lines, line)
	return b.replies[line]
}

func newModel(t *testing.T, w, h int, b Backend) (*Model, *clock) {
	t.Helper()
	c := &clock{now: t0}
	m := New(Options{Backend: b, Now: c.Now, Dark: true, Agents: []string{"builder", "explore", "tester"}, After: noTimer})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, c
}

// noTimer stands in for tea.Tick: tests send timer messages themselves.
func noTimer(time.Duration, tea.Msg) tea.Cmd { return nil }

// runCmd runs a Cmd and feeds its messages back, the way the program would (one level of
// batching is enough for these tests; ticks are not run).
func runCmd(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(m, c)
		}
	case nil, tickMsg, replayTickMsg:
	default:
		_, next := m.Update(msg)
		runCmd(m, next)
	}
}

// keyMsg is the key press a terminal sends for a key named as in the help ("enter", "tab",
// "esc", "up", "down", "space", "backspace") or typed ("F", "5").
func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		_, cmd := m.Update(keyMsg(k))
		runCmd(m, cmd)
	}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		if r == ' ' {
			press(m, "space")
			continue
		}
		press(m, string(r))
	}
}

func events(t *testing.T) []session.Event {
	t.Helper()
	evs, _, err := record.ReadAll(recording, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// upTo returns the events before the first of type typ (and that one when incl).
func upTo(evs []session.Event, typ session.Type, incl bool) []session.Event {
	for i, e := range evs {
		if e.Type == typ {
			if incl {
				return evs[:i+1]
			}
			return evs[:i]
		}
	}
	return evs
}

func golden(t *testing.T, name string, m *Model) string {
	t.Helper()
	got := ansi.Strip(m.Render())
	// Every line fits the width; the screen has exactly the height.
	lines := strings.Split(got, "\n")
	if m.w >= minW && m.h >= minH {
		if len(lines) != m.h {
			t.Errorf("%s: %d lines, want %d", name, len(lines), m.h)
		}
		for i, l := range lines {
			if w := ansi.StringWidth(l); w > m.w {
				t.Errorf("%s: line %d is %d wide (> %d): %q", name, i+1, w, m.w, l)
			}
		}
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./ui -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n%s", name, path, got)
	}
	return got
}

// sizes are the golden sizes of every main screen: the smallest common terminal and a large one.
var sizes = [][2]int{{80, 24}, {160, 48}}

func TestGoldenEmpty(t *testing.T) {
	for _, sz := range sizes {
		m, _ := newModel(t, sz[0], sz[1], &fakeBackend{})
		m.Update(EventsMsg(events(t)[:1]))
		out := golden(t, "empty-"+size(sz), m)
		if !strings.Contains(out, "demo tapes, no model") {
			t.Errorf("the header does not say the session runs on tapes:\n%s", out)
		}
	}
}

func TestGoldenBusyTree(t *testing.T) {
	for _, sz := range sizes {
		m, c := newModel(t, sz[0], sz[1], &fakeBackend{})
		m.Update(EventsMsg(upTo(events(t), session.TypePermissionRequested, false)))
		c.now = m.st.LastTS
		press(m, "tab", "down", "down") // focus the tree, select sa-2
		if m.sel != "sa-2" {
			t.Fatalf("selected %q", m.sel)
		}
		out := golden(t, "busy-"+size(sz), m)
		for _, w := range []string{"sa-1 explore ·plan", "sa-2 builder ·edits", "› ", "┏━ tree", "f filter · tab next pane · / command"} {
			if !strings.Contains(out, w) {
				t.Errorf("%v: busy view lacks %q", sz, w)
			}
		}
	}
}

// The help screen groups keys by pane; a replay's lists only replay keys and no commands.
func TestGoldenHelp(t *testing.T) {
	for _, sz := range sizes {
		m, _ := newModel(t, sz[0], sz[1], &fakeBackend{})
		press(m, "?")
		out := golden(t, "help-"+size(sz), m)
		for range 4 {
			press(m, "pgdown")
			out += ansi.Strip(m.Render())
		}
		for _, w := range []string{"everywhere", "input", "tree", "transcript", "prompts and inbox", "ctrl+o", "/converge"} {
			if !strings.Contains(out, w) {
				t.Errorf("%v: help lacks %q", sz, w)
			}
		}
	}
	r, err := OpenReplay(recording, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := New(Options{Replay: r, Now: time.Now, Dark: true, After: noTimer})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "?")
	out := ansi.Strip(m.Render())
	if !strings.Contains(out, "play / pause") || strings.Contains(out, "/delegate") || strings.Contains(out, "ctrl+o") || strings.Contains(out, "complete a /command") {
		t.Errorf("replay help:\n%s", out)
	}
}

func TestGoldenHandoff(t *testing.T) {
	for _, sz := range sizes {
		testGoldenHandoff(t, sz)
	}
}

func testGoldenHandoff(t *testing.T, sz [2]int) {
	m, c := newModel(t, sz[0], sz[1], &fakeBackend{})
	ev := func(seq uint64, sub string, d session.Data) session.Event {
		return session.Event{V: 1, Seq: seq, TS: t0.Add(time.Duration(seq) * time.Second), SessionID: "s-demo", Type: d.Type(), SubagentID: sub, Data: d}
	}
	m.Update(EventsMsg{
		ev(1, "", session.SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script", AllowedTools: []string{}}),
		ev(2, "sa-1", session.SubagentSpawned{AgentType: "builder", ParentSessionID: "s-demo", ParentSessionRef: "s-demo", PermissionMode: "acceptEdits", Tools: []string{}, TaskDescription: "ask me", TimeoutS: 300, InheritContext: true}),
		ev(3, "sa-1", session.TranscriptEvent{EventType: session.TranscriptStart, Text: "ask me"}),
		ev(4, "sa-1", session.SubagentActive{InitialState: "running"}),
		ev(5, "sa-1", session.HandoffInitiated{ParentSessionID: "s-demo", HandoffMode: session.HandoffTransferControl, TimeoutS: 600, OnFailure: "escalate"}),
		ev(6, "sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "Which file should I change? \x1b[2J\x1b]0;pwned\x07"}),
		ev(7, "sa-1", session.UserNote{Text: "main.go please"}),
	})
	c.now = t0.Add(8 * time.Second)
	// Transfer-control selects the subagent and shows its question.
	if m.sel != "sa-1" || !strings.Contains(ansi.Strip(m.noticeLine()), "sa-1 asks: Which file should I change?") {
		t.Errorf("handoff: selected %q notice %q", m.sel, ansi.Strip(m.noticeLine()))
	}
	press(m, "tab", "tab")
	out := golden(t, "handoff-"+size(sz), m)
	if !strings.Contains(out, "sa-1 has control") || !strings.Contains(out, "sa-1 asks: Which file") || !strings.Contains(out, "sa-1 › ") || !strings.Contains(out, `\x1b[2J`) {
		t.Errorf("handoff view:\n%s", out)
	}
	if strings.Contains(m.Render(), "\x1b[2J") || strings.Contains(m.Render(), "\x1b]0;") {
		t.Error("a control sequence from model text reached the screen")
	}
}

func TestGoldenTiny(t *testing.T) {
	m, _ := newModel(t, 50, 10, &fakeBackend{})
	golden(t, "tiny", m)
}

func TestGoldenReplay(t *testing.T) {
	r, err := OpenReplay(recording, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := &clock{now: t0}
	m := New(Options{Replay: r, Now: c.Now, Dark: true, After: noTimer})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	press(m, "5")
	if r.Pos() != r.Len()/2 {
		t.Errorf("seek 50%%: at %d of %d", r.Pos(), r.Len())
	}
	press(m, "]")
	mark := r.Pos()
	golden(t, "replay-160x48", m)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	golden(t, "replay-80x24", m)
	press(m, "[")
	if r.Pos() >= mark {
		t.Errorf("previous marker did not move back: %d", r.Pos())
	}
	// Seeking back then forward gives the same state as folding straight there.
	press(m, "9", "2", ".")
	direct, err := OpenReplay(recording, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	direct.Seek(r.Pos())
	if render.Render(direct.State()) != render.Render(m.st) {
		t.Error("seeking backwards gave a different state from folding forward")
	}
	press(m, ":")
	typeText(m, "999")
	press(m, "enter")
	if !strings.Contains(ansi.Strip(m.noticeLine()), "no event with seq 999") {
		t.Errorf("bad seq: %q", ansi.Strip(m.noticeLine()))
	}
}

func TestCompletionAndRejection(t *testing.T) {
	b := &fakeBackend{replies: map[string]Reply{"/delegate x --agent-type nope": {Rejected: true, Error: "/delegate: unknown agent nope\nusage: /delegate <task> --agent-type <type>"}}}
	m, _ := newModel(t, 100, 24, b)
	m.Update(EventsMsg(upTo(events(t), session.TypePermissionRequested, false)))
	typeText(m, "/deleg")
	press(m, "tab")
	if m.in.Value() != "/delegate " {
		t.Fatalf("completed to %q", m.in.Value())
	}
	typeText(m, "x --agent-type nope")
	press(m, "enter")
	if m.in.Value() != "/delegate x --agent-type nope" || !m.noticeErr || !strings.Contains(m.notice, "unknown agent nope") {
		t.Errorf("after rejection: input %q notice %q", m.in.Value(), m.notice)
	}
	// Live ids complete: /cancel sa-<tab> lists the subagents.
	m.in.SetValue("")
	typeText(m, "/cancel sa-")
	press(m, "tab")
	if len(m.cands) < 2 || !strings.HasPrefix(m.in.Value(), "/cancel sa-1") {
		t.Errorf("id completion: %q %v", m.in.Value(), m.cands)
	}
	press(m, "tab")
	if !strings.HasPrefix(m.in.Value(), "/cancel sa-2") {
		t.Errorf("tab did not cycle: %q", m.in.Value())
	}
	// History: up brings back the rejected line.
	m.in.SetValue("")
	press(m, "up")
	if m.in.Value() != "/delegate x --agent-type nope" {
		t.Errorf("history: %q", m.in.Value())
	}
	// ? on an empty line opens help built from the grammar.
	m.in.SetValue("")
	press(m, "?")
	if !m.help || !strings.Contains(ansi.Strip(m.Render()), "/converge") {
		t.Error("help")
	}
}

// TestWideAndLong: emoji, CJK, a 5 000-character line and tabs keep every screen line
// inside the width, in the tree and in the transcript.
func TestWideAndLong(t *testing.T) {
	g := &evGen{}
	m, _ := newModel(t, 80, 20, &fakeBackend{})
	evs := g.start(1)
	evs[1].Data = session.SubagentSpawned{AgentType: "builder", AgentName: "構築者🚀", ParentSessionID: "s", ParentSessionRef: "s", PermissionMode: "acceptEdits", Tools: []string{}, TaskDescription: "漢字", TimeoutS: 1, InheritContext: true}
	evs = append(evs,
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "emoji 👩‍👩‍👧‍👦🎉 and 漢字かな交じり文 " + strings.Repeat("x", 5000) + "\n\tindented\n"}),
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "1", Tool: "read_file", Args: map[string]any{"path": strings.Repeat("長い/", 200)}}))
	m.Update(EventsMsg(evs))
	for _, sel := range []string{"", "sa-1"} {
		m.sel = sel
		for _, exp := range []bool{false, true} {
			m.expanded = exp
			for i, l := range strings.Split(m.Render(), "\n") {
				if w := ansi.StringWidth(l); w > 80 {
					t.Errorf("sel %q expanded %v: line %d is %d wide", sel, exp, i, w)
				}
			}
		}
	}
}

func TestTreeAndTranscriptKeys(t *testing.T) {
	m, c := newModel(t, 100, 24, &fakeBackend{})
	m.Update(EventsMsg(upTo(events(t), session.TypePermissionRequested, false)))
	c.now = m.st.LastTS
	press(m, "tab") // tree
	// Typing in the tree does not filter invisibly: only f starts the filter, shown on a line.
	typeText(m, "cod")
	if m.filter != "" {
		t.Fatalf("letters filtered the tree without f: %q", m.filter)
	}
	press(m, "f")
	typeText(m, "cod")
	rows := m.rows()
	if m.filter != "cod" || len(rows) != 2 || rows[1].id != "sa-3" || m.sel != "sa-3" {
		t.Fatalf("filter %q rows %+v sel %q", m.filter, rows, m.sel)
	}
	if !strings.Contains(ansi.Strip(m.Render()), "filter: cod█") {
		t.Errorf("the filter is not shown:\n%s", ansi.Strip(m.Render()))
	}
	press(m, "esc")
	if m.filter != "" || len(m.rows()) < 4 {
		t.Errorf("esc kept the filter %q", m.filter)
	}
	// A filter kept with enter is cleared when the focus leaves the tree.
	press(m, "f")
	typeText(m, "sa-2")
	press(m, "enter", "tab")
	if m.filter != "" || m.focus != focusTranscript {
		t.Errorf("the filter outlived the focus: %q", m.filter)
	}
	press(m, "tab", "tab") // input, tree
	// / from the tree goes to the input with the /.
	press(m, "/")
	if m.focus != focusInput || m.in.Value() != "/" {
		t.Errorf("/ from the tree: focus %d input %q", m.focus, m.in.Value())
	}
	m.in.SetValue("")
	press(m, "tab")
	m.sel = "sa-2"
	press(m, "enter") // open: focus the transcript
	if m.focus != focusTranscript {
		t.Fatalf("focus %d", m.focus)
	}
	before := ansi.Strip(m.Render())
	press(m, "t")
	if after := ansi.Strip(m.Render()); after == before || !strings.Contains(after, "Sum first, then round once") {
		t.Errorf("thinking toggle:\n%s", after)
	}
	press(m, "enter")
	if !strings.Contains(ansi.Strip(m.Render()), "▾ replace") || strings.Contains(ansi.Strip(m.Render()), "▸ replace") {
		t.Errorf("enter did not expand the tool calls")
	}
	// Scrolling up leaves follow mode; G resumes it.
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 15})
	press(m, "up", "up", "up")
	if m.view("sa-2").follow {
		t.Error("still following after scrolling up")
	}
	press(m, "G")
	if !m.view("sa-2").follow {
		t.Error("G did not resume following")
	}
	// Search finds text above and highlights the matches.
	m.Update(tea.KeyPressMsg{Code: 'f', Mod: tea.ModCtrl})
	typeText(m, "package")
	press(m, "enter")
	if m.view("sa-2").follow || !strings.Contains(m.notice, "1 of 1") {
		t.Errorf("search: notice %q", m.notice)
	}
	if hl := m.sty.match.Render("package"); !strings.Contains(m.Render(), hl) {
		t.Errorf("the match is not highlighted")
	}
}

func TestMultiLineOutputPanel(t *testing.T) {
	long := "◐ sa-1 builder active 3s · waiting for approval pr-7 · " + strings.Repeat("word ", 30) + "END"
	var many []string
	for i := 0; i < 60; i++ {
		many = append(many, fmt.Sprintf("row %d", i))
	}
	b := &fakeBackend{replies: map[string]Reply{"/status": {Output: "session s · acceptEdits · 1 running\n" + long + "\n" + strings.Join(many, "\n") + "\nLAST\n"}}}
	m, _ := newModel(t, 80, 24, b)
	typeText(m, "/status")
	press(m, "enter")
	out := golden(t, "panel-80x24", m)
	// Wrapped at 80 columns, never cut: the end of the long line is on screen.
	if !strings.Contains(out, "END") || !strings.Contains(out, "esc closes") || strings.Contains(out, "…\n") {
		t.Fatalf("panel:\n%s", out)
	}
	press(m, "pgdown", "pgdown", "pgdown", "pgdown")
	if !strings.Contains(ansi.Strip(m.Render()), "LAST") {
		t.Errorf("the panel does not scroll to its end:\n%s", ansi.Strip(m.Render()))
	}
	press(m, "esc")
	if m.panel != nil || strings.Contains(ansi.Strip(m.Render()), "◐ sa-1 builder active 3s") {
		t.Error("esc did not close the panel")
	}
}

// The final message's fenced capsule is not shown twice: the capsule renders below it.
func TestCapsuleShownOnce(t *testing.T) {
	g := &evGen{}
	m, _ := newModel(t, 100, 30, &fakeBackend{})
	evs := append(g.start(1),
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "Done, the totals now round once.\n```json\n{\"summary\": \"Totals round once\"}\n```\n"}),
		g.ev("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess, Capsule: &protocols.Capsule{Summary: "Totals round once"}, ArtifactPaths: []string{}}))
	m.Update(EventsMsg(evs))
	m.sel = "sa-1"
	out := ansi.Strip(m.Render())
	if strings.Contains(out, "```json") || strings.Count(out, "Totals round once") != 1 || !strings.Contains(out, "Done, the totals now round once.") {
		t.Errorf("capsule:\n%s", out)
	}
}
