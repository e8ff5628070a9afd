package blame

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// rec builds a recording in memory: each add is the next event.
type rec struct {
	t   *testing.T
	evs []session.Event
}

func (r *rec) add(sub string, d session.Data) uint64 {
	e := session.New(sub, d)
	e.Seq = uint64(len(r.evs) + 1)
	e.TS = time.Date(2026, 11, 22, 10, 0, int(e.Seq), 0, time.UTC)
	e.SessionID = "s-test"
	r.evs = append(r.evs, e)
	return e.Seq
}

func (r *rec) builder() *Builder {
	r.t.Helper()
	b := New()
	for _, e := range r.evs {
		if err := b.Add(e); err != nil {
			r.t.Fatalf("%v: %v", e, err)
		}
	}
	return b
}

func newRec(t *testing.T) *rec {
	r := &rec{t: t}
	r.add("", session.SessionStarted{Schema: session.SchemaVersion, Workspace: "/ws", PermissionMode: "acceptEdits", Provider: "router"})
	return r
}

// subagent records a builder that changed f.txt with diff and stopped; it returns the seq of
// its SubagentChanges.
func (r *rec) subagent(id, model string, diff string, tokens session.Tokens, cost *float64) uint64 {
	r.add(id, session.SubagentSpawned{AgentType: "builder", AgentName: "builder", PermissionMode: "acceptEdits", TaskDescription: "t", TimeoutS: 300})
	r.add(id, session.SubagentActive{InitialState: "running"})
	if model != "" {
		r.add(id, session.ModelRouted{Provider: "anthropic", Model: model, Why: "config"})
	}
	seq := r.add(id, session.SubagentChanges{Base: "base-1", BaseCommit: "b1", ResultCommit: "r-" + id,
		Files: []session.FileChange{{Path: "f.txt", Kind: session.ChangeModified, Diff: diff}}})
	r.add(id, session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}, Tokens: tokens, CostUSD: cost})
	return seq
}

// base is f.txt before any change: "1" to "10".
func base() []string {
	var out []string
	for i := 1; i <= 10; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

const (
	diffThree = "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n"
	diffXY    = "--- a/f.txt\n+++ b/f.txt\n@@ -8,2 +8,4 @@\n 8\n+x\n+y\n 9\n"
)

func tags(rep Report) string {
	var b strings.Builder
	for _, l := range rep.Lines {
		fmt.Fprintf(&b, "%d %s %s\n", l.N, l.Text, l.Tag())
	}
	return b.String()
}

// Two subagents' changes applied one after the other: each line names its subagent, model,
// tokens, cost and apply; lines below a hunk move by it; /undo takes the second back; the file
// as it is now anchors the lines (a line added by hand above moves them; a landed line edited
// by hand is counted lost).
func TestApplyUndoAlign(t *testing.T) {
	r := newRec(t)
	cost := 0.25
	ch1 := r.subagent("sa-1", "claude-x", diffThree, session.Tokens{Input: 100, Output: 20}, &cost)
	ch2 := r.subagent("sa-2", "", diffXY, session.Tokens{Input: 7, Output: 3}, nil)
	a1 := r.add("", session.ChangesApplied{ApplyID: "apply-1", Source: "sa-1", Files: []string{"f.txt"}, PreCommit: "p0", PostCommit: "p1"})
	a2 := r.add("", session.ChangesApplied{ApplyID: "apply-2", Source: "sa-2", Files: []string{"f.txt"}, PreCommit: "p1", PostCommit: "p2"})
	b := r.builder()

	now := []string{"1", "2", "three", "4", "5", "6", "7", "8", "x", "y", "9", "10"}
	rep := b.File("f.txt", now)
	want := "1 1 unchanged\n2 2 unchanged\n3 three sa-1\n4 4 unchanged\n5 5 unchanged\n6 6 unchanged\n7 7 unchanged\n8 8 unchanged\n9 x sa-2\n10 y sa-2\n11 9 unchanged\n12 10 unchanged\n"
	if got := tags(rep); got != want {
		t.Fatalf("got\n%swant\n%s", got, want)
	}
	o1, o2 := rep.Lines[2].Origin, rep.Lines[8].Origin
	if o1.Model != "anthropic/claude-x" || o1.Tokens.Input != 100 || o1.CostUSD == nil || *o1.CostUSD != 0.25 || o1.ChangesSeq != ch1 ||
		o1.ApplyID != "apply-1" || o1.ApplySeq != a1 || o1.AgentType != "builder" || o1.ConvergenceID != "" {
		t.Errorf("sa-1's origin %+v", o1)
	}
	if o2.Model != "" || o2.ChangesSeq != ch2 || o2.ApplySeq != a2 || o2.CostUSD != nil || rep.Lines[9].Origin != o2 {
		t.Errorf("sa-2's origin %+v", o2)
	}
	if rep.Landed != 3 || rep.Lost != 0 || strings.Join(rep.Applies, ",") != "apply-1,apply-2" {
		t.Errorf("landed %d lost %d applies %v", rep.Landed, rep.Lost, rep.Applies)
	}
	// Without the text: the traced lines at their numbers, the rest unknown.
	rep = b.File("f.txt", nil)
	if len(rep.Lines) != 11 || rep.Lines[2].Text != "three" || rep.Lines[8].Text != "x" || rep.Lines[10].Text != "9" || rep.Lines[0].TextKnown {
		t.Errorf("without text:\n%s", tags(rep))
	}
	// A line added by hand at the top moves everything down by one.
	rep = b.File("f.txt", append([]string{"0"}, now...))
	if rep.Lines[3].Tag() != "sa-1" || rep.Lines[9].Tag() != "sa-2" || rep.Lines[0].Origin != nil || rep.Lost != 0 {
		t.Errorf("after a hand edit:\n%s", tags(rep))
	}
	// A landed line changed by hand is no longer sa-1's.
	edited := append([]string(nil), now...)
	edited[2] = "THREE"
	rep = b.File("f.txt", edited)
	if rep.Lines[2].Origin != nil || rep.Lost != 1 || rep.Landed != 2 || len(rep.Notes) == 0 {
		t.Errorf("a landed line edited by hand: lost %d landed %d notes %v\n%s", rep.Lost, rep.Landed, rep.Notes, tags(rep))
	}

	r.add("", session.ApplyUndone{ApplyID: "apply-2", Files: []string{"f.txt"}})
	b = r.builder()
	rep = b.File("f.txt", []string{"1", "2", "three", "4", "5", "6", "7", "8", "9", "10"})
	if rep.Landed != 1 || rep.Lines[2].Tag() != "sa-1" || strings.Join(rep.Applies, ",") != "apply-1,apply-2 (undone)" {
		t.Errorf("after /undo: %v\n%s", rep.Applies, tags(rep))
	}
	if p := b.Paths(); len(p) != 1 || p[0] != "f.txt" {
		t.Errorf("paths %v", p)
	}
}

// A convergence: the lines of the side cf-1's resolution chose name the conflict and how it
// was settled; a member's non-conflicting hunk is that member's; a line both members added the
// same is both members'.
func TestConvergence(t *testing.T) {
	r := newRec(t)
	r.subagent("sa-1", "", "--- a/f.txt\n+++ b/f.txt\n@@ -2,5 +2,6 @@\n 2\n-3\n+three\n 4\n 5\n+five+\n 6\n", session.Tokens{}, nil)
	r.subagent("sa-2", "", "--- a/f.txt\n+++ b/f.txt\n@@ -2,5 +2,6 @@\n 2\n-3\n+drei\n 4\n 5\n+five+\n 6\n@@ -8,3 +9,3 @@\n 8\n-9\n+nine\n 10\n", session.Tokens{}, nil)
	r.add("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1", "sa-2"}, Strategy: "merge", ConflictResolution: "manual", OutputFormat: "delta_batch"})
	r.add("", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk", File: "f.txt", Lines: &session.LineRange{Start: 3, End: 3},
		Sides: []session.ConflictSide{{SubagentID: "sa-1", Value: "+three"}, {SubagentID: "sa-2", Value: "+drei"}}, Choices: []string{"sa-1", "sa-2", "none"}})
	r.add("", session.ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1"})
	r.add("", session.ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1"}})
	res := r.add("", session.ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Method: "manual", Choice: "sa-1", Overridden: []string{"sa-2"}})
	r.add("", session.DeltaBatch{ConvergenceID: "cv-1", Patches: []session.Patch{{Path: "f.txt",
		Diff: "--- a/f.txt\n+++ b/f.txt\n@@ -3 +3 @@\n-3\n+three\n@@ -5,0 +6 @@\n+five+\n@@ -9 +10 @@\n-9\n+nine\n"}}})
	r.add("", session.ConvergenceComplete{ConvergenceID: "cv-1", Outcome: "success", ConflictCount: 1, ResolutionCount: 1})
	ap := r.add("", session.ChangesApplied{ApplyID: "apply-1", Source: "cv-1", Files: []string{"f.txt"}, ConvergenceID: "cv-1"})
	b := r.builder()
	rep := b.File("f.txt", []string{"1", "2", "three", "4", "5", "five+", "6", "7", "8", "nine", "10"})
	want := "1 1 unchanged\n2 2 unchanged\n3 three sa-1 · cv-1 · cf-1\n4 4 unchanged\n5 5 unchanged\n6 five+ sa-1 (also sa-2) · cv-1\n7 6 unchanged\n8 7 unchanged\n9 8 unchanged\n10 nine sa-2 · cv-1\n11 10 unchanged\n"
	if got := tags(rep); got != want {
		t.Fatalf("got\n%swant\n%s", got, want)
	}
	o := rep.Lines[2].Origin
	if o.Method != "manual" || o.Choice != "sa-1" || o.ResolvedSeq != res || o.ApplySeq != ap || o.Strategy != "merge" {
		t.Errorf("cf-1's line: %+v", o)
	}
	var out strings.Builder
	if err := Render(&out, rep); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"f.txt · 11 lines · 3 lines landed by summit · applied by apply-1",
		"through: cv-1 merge · cf-1 resolved by manual: sa-1 (#" + fmt.Sprint(res) + ")", "landed: apply-1 at #" + fmt.Sprint(ap),
		"sa-2 builder · model: router", "through: cv-1 merge · no conflict here"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("render lacks %q:\n%s", w, out.String())
		}
	}
}

// Model and file text reach the output escaped.
func TestRenderSanitizes(t *testing.T) {
	var out strings.Builder
	Render(&out, Report{Path: "f.txt", Lines: []Line{{N: 1, Text: "a\x1b[2Jb", TextKnown: true}}})
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("%q", out.String())
	}
}

func TestSplitLines(t *testing.T) {
	for in, want := range map[string]int{"": 0, "\n": 1, "a": 1, "a\n": 1, "a\nb": 2, "a\n\n": 2} {
		if got := len(SplitLines([]byte(in))); got != want {
			t.Errorf("%q: %d lines, want %d", in, got, want)
		}
	}
}
