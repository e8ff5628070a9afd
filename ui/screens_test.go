package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/converge"
)

// Issue 28's screens: a coloured /diff, Markdown in the transcript and in convergence
// outputs, search forward and backward with a count, and a consensus review that shows each
// member's diff and why it disagrees.

// bigSizes are this file's golden sizes: the smallest common terminal and a large one.
var bigSizes = [][2]int{{80, 24}, {200, 50}}

// sgrOnly matches a frame's escape sequences that are colours or attributes (SGR).
var sgrOnly = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// assertNoRawControls fails when a frame holds an escape sequence other than SGR, or a
// bidi or invisible character: what a model wrote must reach the terminal escaped.
func assertNoRawControls(t *testing.T, name, frame string) {
	t.Helper()
	rest := sgrOnly.ReplaceAllString(frame, "")
	if i := strings.IndexByte(rest, 0x1b); i >= 0 {
		t.Errorf("%s: a raw escape sequence reaches the terminal: %q", name, rest[max(0, i-20):min(len(rest), i+20)])
	}
	for _, r := range []rune{'\u202e', '\u200b', '\u2066', '\ufeff', '\u0007', '\u009b'} {
		if strings.ContainsRune(rest, r) {
			t.Errorf("%s: a raw %U reaches the terminal", name, r)
		}
	}
}

// lineWith is the frame's first line (with its escapes) whose text holds s.
func lineWith(frame, s string) string {
	for _, l := range strings.Split(frame, "\n") {
		if strings.Contains(ansi.Strip(l), s) {
			return l
		}
	}
	return ""
}

// painted reports whether the line holds text in the painter's colour.
func painted(line string, p painter, text string) bool {
	return p.on != "" && strings.Contains(line, p.on+text)
}

const hostileDiff = "modified cart.go +2 −1\n" +
	"diff --git a/cart.go b/cart.go\n--- a/cart.go\n+++ b/cart.go\n@@ -10,3 +10,4 @@ func Total(lines []Line) float64 {\n" +
	" \tt := 0.0\n-\tt += round(x)\n+\tt += x // \x1b[2J\x1b]0;pwned\x07 \u202eevil\n+\treturn round(t)\n"

// The /diff panel colours file headers, hunk headers, added and removed lines as the
// review does, and shows a subagent's escape sequences escaped.
func TestGoldenDiffPanel(t *testing.T) {
	for _, sz := range bigSizes {
		b := &fakeBackend{replies: map[string]Reply{"/diff sa-1": {Output: hostileDiff}}}
		m, _ := newModel(t, sz[0], sz[1], b)
		m.in.SetValue("/diff sa-1")
		_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		runCmd(m, cmd)
		if m.panel == nil {
			t.Fatalf("/diff opened no panel (notice %q)", m.notice)
		}
		golden(t, "diff-panel-"+size(sz), m)
		frame := m.Render()
		assertNoRawControls(t, "/diff", frame)
		for _, c := range []struct {
			text string
			p    painter
			what string
		}{
			{"@@ -10,3 +10,4 @@", m.sty.tool, "hunk header"},
			{"+++ b/cart.go", m.sty.bold, "file header"},
			{"modified cart.go +2 −1", m.sty.bold, "changed-file line"},
			{"+\treturn round(t)", m.sty.add, "added line"},
			{"-\tt += round(x)", m.sty.del, "removed line"},
		} {
			plain := strings.ReplaceAll(c.text, "\t", "    ")
			if l := lineWith(frame, plain); !painted(l, c.p, plain) {
				t.Errorf("%v: the %s is not coloured: %q", sz, c.what, l)
			}
		}
		if !strings.Contains(ansi.Strip(frame), `\x1b[2J\x1b]0;pwned\x07 \u202eevil`) {
			t.Errorf("%v: the hostile line is not shown escaped:\n%s", sz, ansi.Strip(frame))
		}
	}
}

// markdownMessage is a settled assistant message in Markdown, with what a hostile model
// might add: raw escapes, bidi and zero-width characters, and character references that
// decode to them.
const markdownMessage = "## Plan\n\nThe **total** rounds each line. Fix it in `cart.go`:\n\n- sum first\n- round once\n\n" +
	"```go\nt += x\n```\n\n" +
	"hostile: \x1b[2J\x1b]0;pwned\x07 \u202eraw-bidi \u200bzw &#x1b;[31mred &#27;[2J &#x202e;ref-bidi &ZeroWidthSpace;ref-zw [link](http://e.x/&#x1b;]0;t)\n"

func markdownEvents(g *evGen) []session.Event {
	evs := g.start(1)
	return append(evs,
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: markdownMessage}),
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c1", Tool: "read_file", Args: map[string]any{"path": "cart.go"}}),
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c1", Text: "package shop\n"}),
		g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "still **streaming**"}))
}

// A settled message is drawn as Markdown by glamour (no ** or ## left, a bullet list); the
// one still streaming is plain; nothing a model wrote reaches the terminal unescaped, not
// even through Markdown's character references.
func TestGoldenMarkdownTranscript(t *testing.T) {
	for _, sz := range bigSizes {
		g := &evGen{}
		m, _ := newModel(t, sz[0], sz[1], &fakeBackend{})
		m.Update(EventsMsg(markdownEvents(g)))
		m.sel = "sa-1"
		v := m.view("sa-1")
		v.follow, v.item, v.line = false, 0, 0
		out := golden(t, "markdown-transcript-"+size(sz), m)
		assertNoRawControls(t, "transcript", m.Render())
		for _, want := range []string{"Plan", "total", "• sum first", "• round once", "t += x", `\x1b[2J\x1b]0;pwned\x07`, `\u202eraw-bidi`, `\u200bzw`,
			"&#x1b;[31mred", "&#27;[2J", "&#x202e;ref-bidi", "&ZeroWidthSpace;ref-zw", "still **streaming**"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the transcript lacks %q:\n%s", sz, want, out)
			}
		}
		for _, bad := range []string{"**total**", "`cart.go`", "- sum first"} {
			if strings.Contains(out, bad) {
				t.Errorf("%v: %q is drawn raw, not as Markdown:\n%s", sz, bad, out)
			}
		}
	}
}

// mdSafe and mdClean: a capsule's Markdown cannot carry a control out through glamour.
func TestMarkdownEscapes(t *testing.T) {
	md := newMDCache(true)
	c := &protocols.Capsule{Summary: "done &#x1b;[2J &#x9b;2J", DownstreamContext: "&#x1b;]8;;http://evil\x07click&#x1b;]8;;&#7; &lrm;x &#x2066;y [a](http://e.x/&#x1b;[2J)"}
	frame := strings.Join(md.render("k", capsuleMarkdown(c), 80), "\n")
	assertNoRawControls(t, "capsule", frame)
	if strings.Contains(frame, "\x1b]8") {
		t.Errorf("a hyperlink (OSC 8) reaches the terminal: %q", frame)
	}
	for _, want := range []string{"&#x1b;[2J", "&lrm;x", "&#x2066;y"} {
		if !strings.Contains(ansi.Strip(frame), want) {
			t.Errorf("the capsule lacks %q: %q", want, ansi.Strip(frame))
		}
	}
	if got := mdClean("a\x1b[31mb\x1b[mc\x1b[2Jd\x1b]0;t\x07e\u202ef"); got != `a`+"\x1b[31mb\x1b[mc"+`\x1b[2Jde\u202ef` {
		t.Errorf("mdClean = %q", got)
	}
}

// A convergence whose output is Markdown shows it rendered, not raw.
func TestGoldenMarkdownConvergence(t *testing.T) {
	for _, sz := range bigSizes {
		g := &evGen{}
		m, _ := newModel(t, sz[0], sz[1], &fakeBackend{})
		evs := g.start(2)
		evs = append(evs,
			g.ev("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1", "sa-2"}, Strategy: "merge", ConflictResolution: "auto", OutputFormat: "markdown"}),
			g.ev("", session.ConvergedResult{ConvergenceID: "cv-1", Format: "markdown",
				Output: "# Review\n\n## Findings\n\n- **high** rounding loses cents (`cart.go`)\n- *low* naming\n\n> no network \x1b[2J\n"}),
			g.ev("", session.ConvergenceComplete{ConvergenceID: "cv-1", Outcome: "merged"}))
		m.Update(EventsMsg(evs))
		m.sel = "cv-1"
		out := golden(t, "markdown-convergence-"+size(sz), m)
		assertNoRawControls(t, "convergence", m.Render())
		for _, want := range []string{"Review", "Findings", "• high rounding loses cents", `\x1b[2J`} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the convergence lacks %q:\n%s", sz, want, out)
			}
		}
		if strings.Contains(out, "**high**") || strings.Contains(out, "*low*") || strings.Contains(out, "> no network") {
			t.Errorf("%v: the Markdown output is drawn raw:\n%s", sz, out)
		}
	}
}

// Search goes forward (n) and backward (N) with a count, and wraps around with a message.
func TestGoldenSearch(t *testing.T) {
	for _, sz := range bigSizes {
		g := &evGen{}
		m, _ := newModel(t, sz[0], sz[1], &fakeBackend{})
		var b strings.Builder
		for i := 1; i <= 120; i++ {
			fmt.Fprintf(&b, "line %d", i)
			if i%17 == 0 {
				b.WriteString(" has the Needle")
			}
			b.WriteString("\n")
		}
		evs := append(g.start(1), g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: b.String()}))
		m.Update(EventsMsg(evs))
		m.sel, m.focus = "sa-1", focusTranscript
		m.Update(tea.KeyPressMsg{Code: 'f', Mod: tea.ModCtrl})
		typeText(m, "needle")
		press(m, "enter")
		// Following the tail, the first find is the latest match: line 119, the 7th of 7.
		want := func(step, count, line string) {
			t.Helper()
			if !strings.Contains(m.notice, count) {
				t.Errorf("%v after %s: notice %q, want %q", sz, step, m.notice, count)
			}
			body := strings.Split(ansi.Strip(m.Render()), "\n")
			if len(body) < 3 || !strings.Contains(body[2], line) {
				t.Errorf("%v after %s: the view's first line is %q, want %q", sz, step, body[2], line)
			}
		}
		want("enter", "— 7 of 7 ", "line 119 has the Needle")
		press(m, "N")
		want("N", "— 6 of 7 ", "line 102 has the Needle")
		press(m, "N", "N", "N", "N", "N")
		want("N×6", "— 1 of 7 ", "line 17 has the Needle")
		golden(t, "search-"+size(sz), m)
		press(m, "N")
		want("N past the first", "— 7 of 7 · wrapped to the bottom", "line 119 has the Needle")
		press(m, "n")
		want("n past the last", "— 1 of 7 · wrapped to the top", "line 17 has the Needle")
		press(m, "n")
		want("n", "— 2 of 7 ", "line 34 has the Needle")
		if hl := m.sty.match.Render("Needle"); !strings.Contains(m.Render(), hl) {
			t.Errorf("%v: the match is not highlighted", sz)
		}
		m.Update(tea.KeyPressMsg{Code: 'f', Mod: tea.ModCtrl})
		typeText(m, "absent")
		press(m, "enter")
		if !strings.Contains(m.notice, "absent — not found") {
			t.Errorf("%v: notice %q", sz, m.notice)
		}
	}
}

// consensusEvents is a consensus of two members whose results differ, waiting for review.
func consensusEvents(t *testing.T) []session.Event {
	t.Helper()
	conf := func(f float64) *float64 { return &f }
	member := func(id string, seq uint64, c float64, summary, diff string) converge.Member {
		return converge.Member{ID: id, Outcome: session.OutcomeSuccess, Finished: seq,
			Capsule: &protocols.Capsule{Summary: summary, Confidence: conf(c)},
			Changes: &session.SubagentChanges{Base: "base-1", Files: []session.FileChange{{Path: "cart.go", Kind: session.ChangeModified,
				OldMode: "100644", NewMode: "100644", Added: 2, Removed: 2, Diff: diff}}}}
	}
	a, err := converge.Analyze(converge.Input{ID: "cv-1", Strategy: commands.StrategyConsensus, Resolution: commands.ResolutionManual,
		Format: commands.FormatDeltaBatch, FirstConflict: 1, Members: []converge.Member{
			member("sa-2", 10, 0.8, "sum first, round once", sa2Diff), member("sa-3", 11, 0.7, "round in cents", sa3Diff)}})
	if err != nil || len(a.Conflicts) != 1 {
		t.Fatalf("%v %+v", err, a)
	}
	g := &evGen{}
	return append(g.start(3),
		g.ev("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-2", "sa-3"}, Strategy: "consensus", ConflictResolution: "manual", OutputFormat: "delta_batch"}),
		g.ev("", a.Conflicts[0]),
		g.ev("", session.ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1"}),
		g.ev("", session.ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1"}}))
}

// The consensus review shows each member's result, why it disagrees and its diff, coloured
// (hunk headers too), in the inbox and in the conflict's transcript; never raw JSON.
func TestGoldenConsensusReview(t *testing.T) {
	for _, sz := range bigSizes {
		m, _ := openOn(t, sz[0], sz[1], consensusEvents(t), "cf-1")
		out := golden(t, "review-consensus-"+size(sz), m)
		// The review scrolls (PgUp/PgDn): read it whole.
		frame := m.Render()
		for range 8 {
			press(m, "pgdown")
			frame += "\n" + m.Render()
		}
		assertNoRawControls(t, "review", frame)
		for _, want := range []string{"why: its result differs from sa-2's", "round in cents", "@@ -10,7 +10,8 @@"} {
			if !strings.Contains(ansi.Strip(frame), want) {
				t.Errorf("%v: the review lacks %q:\n%s", sz, want, out)
			}
		}
		if l := lineWith(frame, "@@ -10,7 +10,8 @@"); !strings.Contains(l, m.sty.tool.on+"@@ -10,7 +10,8 @@") {
			t.Errorf("%v: the hunk header is not coloured: %q", sz, l)
		}
		if l := lineWith(frame, "why: its result differs"); !strings.Contains(l, m.sty.warn.on+"why: its result differs") {
			t.Errorf("%v: the reason is not marked: %q", sz, l)
		}
		// The conflict's own transcript (its row in the tree) says the same, without JSON.
		press(m, "esc")
		m.sel = "cf-1"
		m.view("cf-1").follow = false
		m.focus = focusTranscript
		golden(t, "conflict-consensus-"+size(sz), m)
		tr := ansi.Strip(m.Render())
		for range 8 {
			press(m, "pgdown")
			tr += "\n" + ansi.Strip(m.Render())
		}
		for _, want := range []string{"why: its result differs from sa-2's", "why: the reference", "sum first", "+        cents := int64"} {
			if !strings.Contains(tr, want) {
				t.Errorf("%v: the conflict's transcript lacks %q:\n%s", sz, want, tr)
			}
		}
		for _, s := range []string{out, tr} {
			if strings.Contains(s, "finished_seq") || strings.Contains(s, `{"`) || strings.Contains(s, `"result"`) {
				t.Errorf("%v: raw JSON on screen:\n%s", sz, s)
			}
		}
	}
}

// A finding conflict's sides are drawn field by field, not as JSON.
func TestSideFieldsNotJSON(t *testing.T) {
	got := sideText(session.ConflictSide{SubagentID: "sa-1", Value: map[string]any{"severity": "high", "summary": "loses cents", "file_refs": []any{"cart.go:12", "cart_test.go"}}})
	want := "file refs: cart.go:12, cart_test.go\nseverity: high\nsummary: loses cents\n"
	if got != want {
		t.Errorf("sideText = %q, want %q", got, want)
	}
	// An older recording's consensus side (no reason, no diff): its result, no bookkeeping.
	got = sideText(session.ConflictSide{SubagentID: "sa-1", Value: map[string]any{"result": "1 hunks: fix", "finished_seq": 53.0}})
	if got != "1 hunks: fix\n" {
		t.Errorf("sideText of an old consensus side = %q", got)
	}
}

// A search over a long transcript renders the Markdown only of the messages that may match
// (glamour costs about a millisecond a message).
func TestSearchRendersOnlyCandidates(t *testing.T) {
	g := &evGen{}
	m, _ := newModel(t, 120, 40, &fakeBackend{})
	evs := g.start(1)
	for i := range 2000 {
		text := fmt.Sprintf("message **%d** of the answer", i)
		if i == 1234 {
			text += ", with the **nee**dle"
		}
		evs = append(evs, g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: text}),
			g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: fmt.Sprint(i), Tool: "read_file", Args: map[string]any{"path": "a.go"}}))
	}
	m.Update(EventsMsg(evs))
	m.sel, m.focus = "sa-1", focusTranscript
	_ = m.Render()
	m.Update(tea.KeyPressMsg{Code: 'f', Mod: tea.ModCtrl})
	typeText(m, "needle")
	press(m, "enter")
	if !strings.Contains(m.notice, "— 1 of 1 ") {
		t.Errorf("notice %q", m.notice)
	}
	if n := len(m.md.done); n > 100 {
		t.Errorf("the search rendered %d messages as Markdown", n)
	}
}

// BenchmarkMarkdownFrame: the first frame of a transcript of settled Markdown messages on a
// 200×60 screen, nothing cached (a theme change, a resize, a page never seen): every visible
// message goes through glamour once. Later frames reuse the cache (BenchmarkTranscriptFrame).
func BenchmarkMarkdownFrame(b *testing.B) {
	g := &evGen{}
	m := New(Options{Backend: &fakeBackend{}, Now: func() time.Time { return t0 }, Dark: true})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	evs := g.start(1)
	for i := range 200 {
		evs = append(evs, g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken,
			Text: fmt.Sprintf("### Step %d\n\nThe **total** rounds each line; fix it in `cart.go`:\n\n- sum first\n- round once\n", i)}),
			g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: fmt.Sprint(i), Tool: "read_file", Args: map[string]any{"path": "a.go"}}))
	}
	m.Update(EventsMsg(evs))
	m.sel = "sa-1"
	for b.Loop() {
		m.md = newMDCache(true)
		m.view("sa-1").cache = map[int]wrapped{}
		_ = m.Render()
	}
}
