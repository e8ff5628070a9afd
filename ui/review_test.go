package ui

import (
	"os"
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

// The demo's clash (issue 27): sa-2's real change to cart.go is one git hunk touching the
// loop line and `return t → return round(t)`; sa-3's replaces the loop line only.
const (
	demoCart = "package shop\n\n// Line is one line of a cart.\ntype Line struct {\n\tPrice float64\n\tQty   int\n}\n\n" +
		"// Total sums the cart. TODO: it rounds every line, which loses cents.\nfunc Total(lines []Line) float64 {\n\tt := 0.0\n" +
		"\tfor _, l := range lines {\n\t\tt += round(l.Price * float64(l.Qty))\n\t}\n\treturn t\n}\n\nfunc round(x float64) float64 { return float64(int(x*100+0.5)) / 100 }\n"
	sa2Diff = "diff --git a/cart.go b/cart.go\nindex 5a794e0..9e607ac 100644\n--- a/cart.go\n+++ b/cart.go\n@@ -10,9 +10,9 @@ type Line struct {\n" +
		" func Total(lines []Line) float64 {\n \tt := 0.0\n \tfor _, l := range lines {\n-\t\tt += round(l.Price * float64(l.Qty))\n+\t\tt += l.Price * float64(l.Qty)\n" +
		" \t}\n-\treturn t\n+\treturn round(t)\n }\n \n func round(x float64) float64 { return float64(int(x*100+0.5)) / 100 }\n"
	sa3Diff = "diff --git a/cart.go b/cart.go\nindex 5a794e0..b33df8b 100644\n--- a/cart.go\n+++ b/cart.go\n@@ -10,7 +10,8 @@ type Line struct {\n" +
		" func Total(lines []Line) float64 {\n \tt := 0.0\n \tfor _, l := range lines {\n-\t\tt += round(l.Price * float64(l.Qty))\n" +
		"+\t\tcents := int64(l.Price*100+0.5) * int64(l.Qty)\n+\t\tt += float64(cents) / 100\n \t}\n \treturn t\n }\n"
)

// demoReviewEvents is a session with the demo's conflict waiting, as the engine records it.
func demoReviewEvents(t *testing.T) []session.Event {
	t.Helper()
	return demoReviewEventsWith(t, "", "")
}

// demoReviewEventsWith is the demo's conflict with the members' Downstream Context.
func demoReviewEventsWith(t *testing.T, dc2, dc3 string) []session.Event {
	t.Helper()
	dcs := map[string]string{"sa-2": dc2, "sa-3": dc3}
	conf := func(f float64) *float64 { return &f }
	member := func(id string, seq uint64, c float64, diff string) converge.Member {
		return converge.Member{ID: id, Outcome: session.OutcomeSuccess, Finished: seq,
			Capsule: &protocols.Capsule{Summary: "fix rounding", Confidence: conf(c), DownstreamContext: dcs[id]},
			Changes: &session.SubagentChanges{Base: "base-1", Files: []session.FileChange{{Path: "cart.go", Kind: session.ChangeModified,
				OldMode: "100644", NewMode: "100644", Diff: diff}}}}
	}
	a, err := converge.Analyze(converge.Input{ID: "cv-1", Strategy: commands.StrategyMerge, Resolution: commands.ResolutionManual,
		Format: commands.FormatDeltaBatch, FirstConflict: 1,
		Members: []converge.Member{member("sa-2", 10, 0.8, sa2Diff), member("sa-3", 11, 0.7, sa3Diff)},
		Read:    func(string) ([]byte, error) { return []byte(demoCart), nil }})
	if err != nil || len(a.Conflicts) != 1 {
		t.Fatalf("%v %+v", err, a)
	}
	g := &evGen{}
	evs := g.start(3)
	d := a.Conflicts[0]
	d.EditTemplate, _ = a.EditTemplate("cf-1")
	return append(evs,
		g.ev("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-2", "sa-3"}, Strategy: "merge", ConflictResolution: "manual", OutputFormat: "delta_batch"}),
		g.ev("", d),
		g.ev("", session.ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1"}),
		g.ev("", session.ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1"}}))
}

func openOn(t *testing.T, w, h int, evs []session.Event, id string) (*Model, *fakeBackend) {
	t.Helper()
	b := &fakeBackend{}
	m, c := newModel(t, w, h, b)
	m.Update(EventsMsg(evs))
	if m.ib == nil || m.ib.id != id {
		t.Fatalf("the inbox did not open on %s: %+v", id, m.ib)
	}
	c.now = c.now.Add(time.Second)
	return m, b
}

func choiceNumber(t *testing.T, m *Model, label string) string {
	t.Helper()
	for _, c := range m.choices(m.ib.id) {
		if c.label == label {
			return c.key
		}
	}
	t.Fatalf("no choice %q in %+v", label, m.choices(m.ib.id))
	return ""
}

// The review shows sa-2's whole change (its return line too), tells "take sa-3 here" from
// "take sa-3's cart.go", and with "take sa-3 here" selected lists sa-2's return line as
// landing with it, before enter.
func TestGoldenWholeReview(t *testing.T) {
	evs := demoReviewEvents(t)
	for _, sz := range sizes {
		m, b := openOn(t, sz[0], sz[1], evs, "cf-1")
		press(m, choiceNumber(t, m, "take sa-3 here"))
		out := golden(t, "review-whole-"+size(sz), m)
		for _, want := range []string{"take sa-3 here", "take sa-3's cart.go", "these changes of other sides also land", "sa-2's hunk"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the review lacks %q", sz, want)
			}
		}
		if len(b.lines) != 0 {
			t.Errorf("a number decided: %v", b.lines)
		}
		// Read on with PgDn: sa-2's whole change, its return line marked as landing anyway.
		seen := out
		for range 10 {
			m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
			seen += ansi.Strip(m.Render())
		}
		if !strings.Contains(seen, "✓ lands with any region choice") || !strings.Contains(seen, "+    return round(t)") {
			t.Errorf("%v: scrolling never showed sa-2's other hunk", sz)
		}
		press(m, choiceNumber(t, m, "take sa-3's cart.go"), "enter")
		if len(b.lines) != 1 || b.lines[0] != "/resolve cf-1 --choose sa-3 --whole-file" {
			t.Errorf("%v: sent %v", sz, b.lines)
		}
	}
}

// The selected choice says which playbook pattern it drops and which lands (issue 27): take
// sa-3 here drops sa-2's, take sa-2 here drops sa-3's.
func TestReviewShowsPlaybookFate(t *testing.T) {
	evs := demoReviewEventsWith(t, "- Patterns Established: money is rounded once, at the boundary",
		"- Patterns Established: amounts are integer cents inside Total")
	for _, tc := range []struct{ label, drop, land string }{
		{"take sa-3 here", "⚠ playbook: sa-2's ADD patterns_established: money is rounded once", "playbook: sa-3's ADD patterns_established: amounts are integer"},
		{"take sa-3's cart.go", "⚠ playbook: sa-2's ADD patterns_established: money is rounded once", "playbook: sa-3's ADD patterns_established: amounts are integer"},
		{"take sa-2 here", "⚠ playbook: sa-3's ADD patterns_established: amounts are integer", "playbook: sa-2's ADD patterns_established: money is rounded once"},
	} {
		m, _ := openOn(t, 160, 48, evs, "cf-1")
		press(m, choiceNumber(t, m, tc.label))
		out := ansi.Strip(m.Render())
		if !strings.Contains(out, tc.drop) || !strings.Contains(out, tc.land) {
			t.Errorf("%s: the review does not say %q and %q:\n%s", tc.label, tc.drop, tc.land, out)
		}
	}
}

// PgUp/PgDn move a long review; the box says where it is.
func TestReviewScrolls(t *testing.T) {
	m, _ := openOn(t, 80, 24, demoReviewEvents(t), "cf-1")
	first := ansi.Strip(m.Render())
	if !strings.Contains(first, "PgUp/PgDn scroll") {
		t.Fatalf("no scroll hint:\n%s", first)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	second := ansi.Strip(m.Render())
	if second == first || strings.Contains(second, "lines 1-") {
		t.Errorf("PgDn did not scroll:\n%s", second)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	if got := ansi.Strip(m.Render()); got != first {
		t.Errorf("PgUp did not come back:\n%s", got)
	}
}

// An apply review shows the conflict-marked region, and edit opens the merged file.
func TestGoldenApplyReview(t *testing.T) {
	g := &evGen{}
	evs := g.start(1)
	merged := "l1\n<<<<<<< workspace\nours 41\n||||||| base\nl41\n=======\ntheirs 41\n>>>>>>> sa-1\nl42\n"
	ctx := "   38   l38\n   39   l39\n   40   l40\n        <<<<<<< workspace\n        ours 41\n        ||||||| base\n        l41\n        =======\n        theirs 41\n        >>>>>>> sa-1\n   42   l42\n   43   l43\n   44   l44\n"
	evs = append(evs,
		g.ev("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1"}, Strategy: "apply", ConflictResolution: "manual", OutputFormat: "delta_batch"}),
		g.ev("", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "apply", File: "big.txt", Lines: &session.LineRange{Start: 41, End: 41},
			Sides:   []session.ConflictSide{{SubagentID: "sa-1", Value: "@@ line 41 @@\n-l41\n+theirs 41\n"}, {SubagentID: "workspace", Value: "@@ line 41 @@\n-l41\n+ours 41\n"}},
			Context: ctx, Choices: []string{"sa-1", "none", "edit"}, EditTemplate: merged}),
		g.ev("", session.ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1", Reason: "sa-1 changed big.txt, and so did the workspace since (contents)"}),
		g.ev("", session.ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1"}}))
	for _, sz := range sizes {
		m, b := openOn(t, sz[0], sz[1], evs, "cf-1")
		out := golden(t, "review-apply-"+size(sz), m)
		for range 3 {
			m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
			out += ansi.Strip(m.Render())
		}
		for _, want := range []string{"<<<<<<< workspace", "ours 41", "theirs 41", "edit in $EDITOR…"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the apply review lacks %q", sz, want)
			}
		}
		m.Update(keyMsg(choiceNumber(t, m, "edit in $EDITOR…")))
		_, cmd := m.Update(keyMsg("enter"))
		if cmd == nil || len(b.lines) != 0 {
			t.Fatalf("%v: edit did not start (sent %v)", sz, b.lines)
		}
		ready, ok := cmd().(editReadyMsg)
		if !ok || ready.err != nil {
			t.Fatalf("%v: %+v", sz, ready)
		}
		got, _ := os.ReadFile(ready.path)
		os.Remove(ready.path)
		if string(got) != merged {
			t.Errorf("%v: the editor opens %q", sz, got)
		}
	}
}

// A consensus review shows each member's diff and why it disagrees, not raw JSON.
func TestConsensusReviewShowsDiffs(t *testing.T) {
	conf := func(f float64) *float64 { return &f }
	member := func(id string, seq uint64, c float64, diff string) converge.Member {
		return converge.Member{ID: id, Outcome: session.OutcomeSuccess, Finished: seq,
			Capsule: &protocols.Capsule{Summary: "fix rounding", Confidence: conf(c)},
			Changes: &session.SubagentChanges{Base: "base-1", Files: []session.FileChange{{Path: "cart.go", Kind: session.ChangeModified,
				OldMode: "100644", NewMode: "100644", Diff: diff}}}}
	}
	a, err := converge.Analyze(converge.Input{ID: "cv-1", Strategy: commands.StrategyConsensus, Resolution: commands.ResolutionManual,
		Format: commands.FormatDeltaBatch, FirstConflict: 1, Members: []converge.Member{member("sa-2", 10, 0.8, sa2Diff), member("sa-3", 11, 0.7, sa3Diff)}})
	if err != nil || len(a.Conflicts) != 1 {
		t.Fatalf("%v %+v", err, a)
	}
	g := &evGen{}
	evs := append(g.start(3),
		g.ev("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-2", "sa-3"}, Strategy: "consensus", ConflictResolution: "manual", OutputFormat: "delta_batch"}),
		g.ev("", a.Conflicts[0]),
		g.ev("", session.ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1"}),
		g.ev("", session.ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1"}}))
	m, _ := openOn(t, 160, 48, evs, "cf-1")
	out := ansi.Strip(m.Render())
	for _, want := range []string{"why: its result differs from sa-2's", "+        t += float64(cents) / 100", "+    return round(t)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the consensus review lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "finished_seq") {
		t.Errorf("raw JSON in the consensus review:\n%s", out)
	}
}

// A heading underline is not a conflict marker: an apply review's edit opens whole files.
func TestHasMarkers(t *testing.T) {
	for text, want := range map[string]bool{
		"Title\n==========\n":               false,
		"a\n=======\nb\n":                   true,
		"<<<<<<< workspace\nx\n":            true,
		"x\n>>>>>>> sa-1\n":                 true,
		"x\n======= sa-3\n":                 true,
		"x\r\n=======\r\n":                  true,
		"plain\ntext with ======= inside\n": false,
		"||||||| base\n":                    true,
	} {
		if got := hasMarkers(text); got != want {
			t.Errorf("hasMarkers(%q) = %v, want %v", text, got, want)
		}
	}
}
