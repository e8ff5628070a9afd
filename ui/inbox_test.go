package ui

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// decisions are the lines that settle something: none may come from stray keys.
func decisions(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "/approve") || strings.HasPrefix(l, "/deny") || strings.HasPrefix(l, "/resolve") {
			out = append(out, l)
		}
	}
	return out
}

// permissionModel is a workbench with pr-1 waiting and the inbox open on it, past its grace.
func permissionModel(t *testing.T, w, h int) (*Model, *clock, *fakeBackend) {
	t.Helper()
	b := &fakeBackend{}
	m, c := newModel(t, w, h, b)
	m.Update(EventsMsg(upTo(events(t), session.TypePermissionRequested, true)))
	if m.ib == nil || m.ib.id != "pr-1" {
		t.Fatalf("the inbox did not open on pr-1 while idle: %+v", m.ib)
	}
	c.now = c.now.Add(time.Second)
	return m, c, b
}

// reviewModel has cf-1 waiting for review (the permission was decided in the recording).
func reviewModel(t *testing.T, w, h int) (*Model, *clock, *fakeBackend) {
	t.Helper()
	b := &fakeBackend{}
	m, c := newModel(t, w, h, b)
	m.Update(EventsMsg(upTo(events(t), session.TypeConflictResolved, false)))
	if m.ib == nil || m.ib.id != "cf-1" {
		t.Fatalf("the inbox did not open on cf-1: %+v", m.ib)
	}
	c.now = c.now.Add(time.Second)
	return m, c, b
}

func TestGoldenPermission(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		m, _, b := permissionModel(t, sz[0], sz[1])
		out := golden(t, "permission-"+size(sz), m)
		for _, want := range []string{"permission pr-1", "run_shell_command", "$ go test ./internal/checkout/...",
			"1 allow once", "2 allow for sa-2", "3 deny", "4 deny with a message…", "runs this call only", "⚠ 1 waiting"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the permission view lacks %q", sz, want)
			}
		}
		if len(b.lines) != 0 {
			t.Errorf("sent %v", b.lines)
		}
	}
}

func size(sz [2]int) string { return fmt.Sprintf("%dx%d", sz[0], sz[1]) }

// Select then confirm: a number selects, enter confirms; each choice sends its command.
func TestPermissionAnswers(t *testing.T) {
	for _, c := range []struct {
		keys []string
		text string
		want string
	}{
		{[]string{"1", "enter"}, "", "/approve pr-1"},
		{[]string{"2", "enter"}, "", "/approve pr-1 --scope subagent"},
		{[]string{"down", "down", "down", "enter"}, "", `/deny pr-1 --reason "denied in the workbench"`},
		{[]string{"4", "enter"}, "run go vet instead", `/deny pr-1 --reason "run go vet instead"`},
		{[]string{"up", "enter"}, "", "/approve pr-1"},
	} {
		m, _, b := permissionModel(t, 100, 30)
		press(m, c.keys...)
		if c.text != "" {
			if len(b.lines) != 0 || m.ib == nil || !m.ib.typing {
				t.Fatalf("%v: deny with a message did not open its text field: %v %+v", c.keys, b.lines, m.ib)
			}
			if !strings.Contains(ansi.Strip(m.Render()), "message to sa-2: █") {
				t.Errorf("the message field is not shown:\n%s", ansi.Strip(m.Render()))
			}
			typeText(m, c.text)
			press(m, "enter")
		}
		if len(b.lines) != 1 || b.lines[0] != c.want {
			t.Errorf("%v %q: sent %v, want %q", c.keys, c.text, b.lines, c.want)
		}
	}
}

// Enter alone, arrows alone, a number alone decide nothing.
func TestNoSingleKeyDecides(t *testing.T) {
	m, _, b := permissionModel(t, 100, 30)
	for _, k := range []string{"enter", "1", "2", "down", "up", "3", "4", "2"} {
		press(m, k)
		if d := decisions(b.lines); len(d) != 0 {
			t.Fatalf("after %q: %v", k, d)
		}
	}
	if m.ib == nil || m.ib.sel != 1 {
		t.Fatalf("the last number did not select: %+v", m.ib)
	}
	if !strings.Contains(ansi.Strip(m.Render()), "enter confirms ⚠ allow for sa-2") {
		t.Errorf("a risky selection is not called out:\n%s", ansi.Strip(m.Render()))
	}
}

// The finding of the issue: /status typed while the permission prompt is open runs /status,
// and grants nothing. The keys go to the input, none is lost.
func TestStrayCommandLineGrantsNothing(t *testing.T) {
	m, _, b := permissionModel(t, 100, 30)
	typeText(m, "/status")
	if m.ib != nil || m.in.Value() != "/status" || m.focus != focusInput {
		t.Fatalf("after typing /status: inbox %+v input %q focus %d", m.ib, m.in.Value(), m.focus)
	}
	press(m, "enter")
	if len(b.lines) != 1 || b.lines[0] != "/status" {
		t.Errorf("sent %v, want only /status", b.lines)
	}
	// Letters typed into the open review are a note for the input, never "none" or "both".
	m2, _, b2 := reviewModel(t, 100, 30)
	typeText(m2, "/frobnicate")
	press(m2, "enter")
	typeText(m2, "nb")
	if d := decisions(b2.lines); len(d) != 0 || m2.in.Value() != "nb" {
		t.Errorf("decisions %v, input %q", d, m2.in.Value())
	}
	// The item is docked: the dock names the key that opens it, and ctrl+o does.
	m2.in.SetValue("")
	if d := ansi.Strip(m2.dockLine()); !strings.Contains(d, "cf-1") || !strings.Contains(d, "ctrl+o answers") {
		t.Errorf("dock line %q", d)
	}
	m2.Update(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	if m2.ib == nil || m2.ib.id != "cf-1" {
		t.Errorf("ctrl+o did not open the inbox on cf-1")
	}
}

// A prompt that arrives while the user types (or the input holds text) does not take the
// focus; it docks. Keys typed in the grace period after it opened by itself go to the input.
func TestPromptDocksWhileTyping(t *testing.T) {
	b := &fakeBackend{}
	m, c := newModel(t, 100, 30, b)
	evs := upTo(events(t), session.TypePermissionRequested, true)
	m.Update(EventsMsg(evs[:len(evs)-1]))
	typeText(m, "hello")
	m.Update(EventsMsg(evs[len(evs)-1:]))
	if m.ib != nil {
		t.Fatal("the prompt took the focus while the user was typing")
	}
	if !strings.Contains(ansi.Strip(m.Render()), "ctrl+o answers") {
		t.Errorf("no dock line:\n%s", ansi.Strip(m.Render()))
	}
	// The input holds text: even after a quiet while it does not open by itself.
	c.now = c.now.Add(5 * time.Second)
	m.Update(graceMsg{})
	if m.ib != nil {
		t.Fatal("the prompt opened over a half-typed line")
	}
	typeText(m, " world")
	press(m, "enter")
	if len(b.lines) != 1 || b.lines[0] != "hello world" {
		t.Fatalf("sent %v", b.lines)
	}
	// Empty input and quiet: now it opens; a key within its grace goes to the input.
	c.now = c.now.Add(5 * time.Second)
	m.Update(graceMsg{})
	if m.ib == nil {
		t.Fatal("the prompt did not open once the user was idle")
	}
	press(m, "2")
	if m.ib != nil || m.in.Value() != "2" {
		t.Errorf("a key in the grace period: inbox %+v input %q", m.ib, m.in.Value())
	}
	if d := decisions(b.lines); len(d) != 0 {
		t.Errorf("decided %v", d)
	}
}

// The property: every printable key, and whole command lines and notes, typed into open
// prompts at random moments (the prompt opening in the middle of the typing or before it),
// take no decision.
func TestPropertyStrayKeysDecideNothing(t *testing.T) {
	var printable []string
	for r := rune(' '); r < 127; r++ {
		printable = append(printable, string(r))
	}
	printable = append(printable, "é", "漢", "🚀")
	lines := []string{"/status", "/frobnicate", "/approve", "/deny pr-1", "/resolve cf-1 --choose sa-2", "/help",
		"looks good", "yes do it", "no", "both sides please", "none of these", "allow", "ok 2", "2 please", "a", "s", "n", "b", "y"}
	evsAll := events(t)
	for _, prompt := range []session.Type{session.TypePermissionRequested, session.TypeConflictReviewRequest} {
		pre := upTo(evsAll, prompt, true)
		if prompt == session.TypeConflictReviewRequest {
			pre = upTo(evsAll, session.TypeConflictResolved, false)
		}
		rng := rand.New(rand.NewPCG(7, uint64(len(pre))))
		for iter := 0; iter < 300; iter++ {
			b := &fakeBackend{}
			m, c := newModel(t, 100, 30, b)
			m.Update(EventsMsg(pre[:len(pre)-1]))
			// What is typed: printable keys and whole lines, in random order.
			var keys []string
			typed := map[string]bool{}
			for n := rng.IntN(6) + 1; n > 0; n-- {
				if rng.IntN(2) == 0 {
					keys = append(keys, printable[rng.IntN(len(printable))])
				} else {
					l := lines[rng.IntN(len(lines))]
					typed[l] = true
					for _, r := range l {
						keys = append(keys, string(r))
					}
					keys = append(keys, "enter")
				}
			}
			at := rng.IntN(len(keys) + 1) // when the prompt arrives
			for i := 0; i <= len(keys); i++ {
				if i == at {
					// Before the first key the user may have been idle for a while.
					if i == 0 && rng.IntN(2) == 0 {
						c.now = c.now.Add(3 * time.Second)
					}
					m.Update(EventsMsg(pre[len(pre)-1:]))
				}
				if i == len(keys) {
					break
				}
				c.now = c.now.Add(time.Duration(rng.IntN(600)) * time.Millisecond)
				k := keys[i]
				if k == " " {
					k = "space"
				}
				press(m, k)
			}
			for _, d := range decisions(b.lines) {
				// A command line typed whole into the input is deliberate; anything else
				// that decides came from the inbox.
				if !typed[d] {
					t.Fatalf("%s: keys %q decided %q (sent %q)", prompt, keys, d, b.lines)
				}
			}
		}
	}
}

func TestGoldenReview(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		m, _, b := reviewModel(t, sz[0], sz[1])
		press(m, "2")
		out := golden(t, "review-"+size(sz), m)
		for _, want := range []string{"conflict cf-1", "take sa-2", "take sa-3", "none", "enter confirms take sa-3"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: review lacks %q", sz, want)
			}
		}
		if len(b.lines) != 0 {
			t.Errorf("a number decided: %v", b.lines)
		}
	}
}

func TestReviewWithNote(t *testing.T) {
	m, _, b := reviewModel(t, 120, 36)
	press(m, "5", "enter") // note…
	typeText(m, "smaller change")
	press(m, "enter")
	if len(b.lines) != 0 || !strings.Contains(ansi.Strip(m.Render()), "note: smaller change") {
		t.Fatalf("the note: sent %v\n%s", b.lines, ansi.Strip(m.Render()))
	}
	press(m, "2", "enter")
	if len(b.lines) != 1 || b.lines[0] != `/resolve cf-1 --choose sa-3 --note "smaller change"` {
		t.Errorf("sent %v", b.lines)
	}
	// Answered: a tick before the resolution arrives does not reopen it.
	m.Update(tickMsg{})
	if m.ib != nil {
		t.Fatalf("the answered review reopened: %+v", m.ib)
	}
	// esc closes a review without deciding; it stays docked and ctrl+o reopens it.
	m2, _, b2 := reviewModel(t, 120, 36)
	press(m2, "esc")
	if m2.ib != nil || len(b2.lines) != 0 || !strings.Contains(ansi.Strip(m2.dockLine()), "cf-1") {
		t.Fatalf("after esc: %+v %v %q", m2.ib, b2.lines, ansi.Strip(m2.dockLine()))
	}
	m2.Update(tickMsg{})
	if m2.ib != nil {
		t.Error("a dismissed review opened by itself again")
	}
}

// Two waiting items: one inbox, oldest first, tab moves between them, the header counts
// them and the tree marks the waiting subagent.
func TestInboxTwoItems(t *testing.T) {
	g := &evGen{}
	evs := g.start(2)
	evs = append(evs,
		g.ev("sa-2", session.PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command", Args: map[string]any{"command": "make test > out.txt && echo <ok>"}, Reason: "run_shell_command asks each time in acceptEdits"}),
		g.ev("sa-1", session.PermissionRequested{RequestID: "pr-2", Tool: "write_file", Args: map[string]any{"path": "a.go"}, Reason: "plan denies edits"}))
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		b := &fakeBackend{}
		m, c := newModel(t, sz[0], sz[1], b)
		m.Update(EventsMsg(evs))
		c.now = c.now.Add(time.Second)
		out := golden(t, "inbox-"+size(sz), m)
		for _, want := range []string{"⚠ 2 waiting", "inbox · 2 waiting", "make test > out.txt && echo <ok>", "pr-2 sa-2"[:4]} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: inbox lacks %q", sz, want)
			}
		}
		if strings.Contains(out, `\u003e`) {
			t.Error("arguments shown with \\u003e")
		}
		if m.ib.id != "pr-1" {
			t.Errorf("not oldest first: %s", m.ib.id)
		}
		press(m, "tab")
		if m.ib.id != "pr-2" {
			t.Errorf("tab: %s", m.ib.id)
		}
		press(m, "1", "enter")
		if len(b.lines) != 1 || b.lines[0] != "/approve pr-2" || m.ib == nil || m.ib.id != "pr-1" {
			t.Errorf("answered in place: %v, then %+v", b.lines, m.ib)
		}
		rows := m.rows()
		if rows[1].glyph != "⚠" || rows[2].glyph != "⚠" || !strings.Contains(rows[2].extra, "waits for you") {
			t.Errorf("the tree does not mark the waiting subagents: %+v", rows[1:3])
		}
	}
}

// /inbox opens the inbox (and, with nothing waiting, says so).
func TestInboxCommand(t *testing.T) {
	m, _, b := reviewModel(t, 100, 30)
	press(m, "esc")
	typeText(m, "/inbox")
	press(m, "enter")
	if m.ib == nil || m.ib.id != "cf-1" || len(b.lines) != 0 {
		t.Errorf("/inbox: %+v %v", m.ib, b.lines)
	}
	m2, _ := newModel(t, 100, 30, &fakeBackend{})
	typeText(m2, "/inbox")
	press(m2, "enter")
	if m2.ib != nil || !strings.Contains(m2.notice, "nothing waits") {
		t.Errorf("empty inbox: %q", m2.notice)
	}
}

// An /apply that overlapped the workspace is reviewed in the same prompt: its choices say
// what they do to the file.
func TestApplyReviewChoices(t *testing.T) {
	g := &evGen{}
	evs := g.start(1)
	evs = append(evs,
		g.ev("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1"}, Strategy: "apply", ConflictResolution: "manual", OutputFormat: "delta_batch"}),
		g.ev("", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "apply", File: "main.go",
			Sides:   []session.ConflictSide{{SubagentID: "sa-1", Value: "theirs\n"}, {SubagentID: "workspace", Value: "mine\n"}},
			Context: "<<<<<<< workspace\nmine\n=======\ntheirs\n>>>>>>> sa-1\n", Choices: []string{"sa-1", "none"}}),
		g.ev("", session.ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1", Reason: "sa-1 changed main.go, and so did the workspace since"}))
	b := &fakeBackend{}
	m, c := newModel(t, 120, 40, b)
	m.Update(EventsMsg(evs))
	c.now = c.now.Add(time.Second)
	out := ansi.Strip(m.Render())
	for _, want := range []string{"take sa-1", "land sa-1's version of main.go", "keep the workspace", "<<<<<<< workspace", "why: sa-1 changed main.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("the apply review lacks %q:\n%s", want, out)
		}
	}
	press(m, "2", "enter")
	if len(b.lines) != 1 || b.lines[0] != "/resolve cf-1 --choose none" {
		t.Errorf("sent %v", b.lines)
	}
}

// Choice edit: the region opens in $EDITOR with conflict markers; what is saved is sent as
// /resolve --choose edit --content; a file that still has markers decides nothing.
func TestEditChoice(t *testing.T) {
	tmpl := "<<<<<<< sa-1\n\tprintln(\"a\")\n||||||| base\n\tprintln(\"hello\")\n=======\n\tprintln(\"b\")\n>>>>>>> sa-2\n"
	g := &evGen{}
	evs := g.start(2)
	evs = append(evs,
		g.ev("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1", "sa-2"}, Strategy: "merge", ConflictResolution: "manual", OutputFormat: "delta_batch"}),
		g.ev("", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk", File: "main.go",
			Sides:   []session.ConflictSide{{SubagentID: "sa-1", Value: "+\tprintln(\"a\")"}, {SubagentID: "sa-2", Value: "+\tprintln(\"b\")"}},
			Choices: []string{"sa-1", "sa-2", "none", "edit"}, EditTemplate: tmpl}),
		g.ev("", session.ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1"}))
	b := &fakeBackend{}
	m, c := newModel(t, 120, 40, b)
	m.Update(EventsMsg(evs))
	c.now = c.now.Add(time.Second)
	if !strings.Contains(ansi.Strip(m.Render()), "4 edit in $EDITOR…") {
		t.Fatalf("no edit choice:\n%s", ansi.Strip(m.Render()))
	}
	// The template goes to a file for the editor.
	ready := m.startEdit("cf-1", tmpl)().(editReadyMsg)
	if got, err := os.ReadFile(ready.path); err != nil || string(got) != tmpl {
		t.Fatalf("the file for the editor: %q %v", got, err)
	}
	os.Remove(ready.path)
	// Saved with the markers still in: nothing is decided.
	m.Update(editReadMsg{id: "cf-1", content: tmpl})
	if len(b.lines) != 0 || !m.noticeErr || !strings.Contains(m.notice, "markers are still there") {
		t.Fatalf("a file with markers decided: %v %q", b.lines, m.notice)
	}
	// Saved as the reviewer wrote it: recorded as edit with the content.
	_, cmd := m.Update(editReadMsg{id: "cf-1", content: "\tprintln(\"a and b\")\n"})
	runCmd(m, cmd)
	if len(b.lines) != 1 || b.lines[0] != `/resolve cf-1 --choose edit --content "\tprintln(\"a and b\")\n"` {
		t.Errorf("sent %q", b.lines)
	}
	// An editor that fails decides nothing.
	m2, _ := newModel(t, 120, 40, &fakeBackend{})
	m2.Update(editReadMsg{id: "cf-1", err: os.ErrNotExist})
	if !m2.noticeErr || !strings.Contains(m2.notice, "nothing was decided") {
		t.Errorf("editor failure: %q", m2.notice)
	}
}
