package converge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// fileAfter applies one file's patch of a result to base().
func fileAfter(t *testing.T, res Result, file string) string {
	t.Helper()
	var ps []session.Patch
	for _, p := range res.Batch.Patches {
		if p.Path == file {
			ps = append(ps, p)
		}
	}
	return apply(t, ps, map[string]string{file: base()})[file]
}

// Issue 27: A changes lines 3 and 10 of one file, B changes line 3. The review recorded
// before the resolution shows A's line-10 change and says it lands with "take B here";
// "take B's file" lands B's file exactly.
func TestReviewShowsWhatLands(t *testing.T) {
	for _, oneHunk := range []bool{false, true} {
		a10 := gitMods("a.go", map[int]string{3: "A3", 10: "A10"})
		if oneHunk { // as git writes two edits 7 lines apart: one @@ with two change runs
			a10 = gitMod("a.go", 3, "A3")
			a10.Diff = strings.Replace(a10.Diff, "@@ -1,6 +1,6 @@", "@@ -1,13 +1,13 @@", 1)
			a10.Diff += " l7\n l8\n l9\n-l10\n+A10\n l11\n l12\n l13\n"
		}
		A := writer("sa-1", 1, a10)
		B := writer("sa-2", 2, gitMod("a.go", 3, "B3"))
		an := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, A, B))
		if len(an.Conflicts) != 1 {
			t.Fatalf("conflicts %+v", an.Conflicts)
		}
		d := an.Conflicts[0]
		rec, _ := json.Marshal(d) // what the recording holds
		if d.Review == nil || !strings.Contains(string(rec), "+A10") {
			t.Fatalf("one hunk %v: the recorded review lacks A's line-10 change:\n%s", oneHunk, rec)
		}
		// A's whole change: both hunks, the line-3 one marked as in cf-1.
		ch := d.Review.Changes[0]
		if ch.SubagentID != "sa-1" || len(ch.Hunks) != 2 || ch.Hunks[0].Conflict != "cf-1" || ch.Hunks[1].Conflict != "" || !strings.Contains(ch.Hunks[1].Text, "+A10") {
			t.Errorf("A's change in the review: %+v", ch)
		}
		outcome := func(choice string, whole bool) session.ChoiceOutcome {
			for _, o := range d.Review.Outcomes {
				if o.Choice == choice && o.WholeFile == whole {
					return o
				}
			}
			t.Fatalf("no outcome %s whole=%v in %+v", choice, whole, d.Review.Outcomes)
			return session.ChoiceOutcome{}
		}
		// take B here: A's line 10 still lands, and the review says so.
		here := outcome("sa-2", false)
		if len(here.AlsoLands) != 1 || here.AlsoLands[0].SubagentID != "sa-1" || !strings.Contains(here.AlsoLands[0].Text, "+A10") {
			t.Errorf("take sa-2 here: also lands %+v", here.AlsoLands)
		}
		if !strings.Contains(here.Diff, "+B3") || !strings.Contains(here.Diff, "+A10") || strings.Contains(here.Diff, "+A3") {
			t.Errorf("take sa-2 here: result\n%s", here.Diff)
		}
		if len(here.Drops) != 1 || !strings.Contains(here.Drops[0].Text, "+A3") {
			t.Errorf("take sa-2 here: drops %+v", here.Drops)
		}
		// take B's file: A's both hunks dropped.
		whole := outcome("sa-2", true)
		if len(whole.Drops) != 2 || strings.Contains(whole.Diff, "A10") || !strings.Contains(whole.Diff, "+B3") {
			t.Errorf("take sa-2's a.go: %+v", whole)
		}
		// Each choice lands what its outcome showed.
		r, err := an.Resolve("cf-1", "sa-2", "")
		if err != nil {
			t.Fatal(err)
		}
		got := fileAfter(t, output(t, an, r), "a.go")
		if !strings.Contains(got, "B3\n") || !strings.Contains(got, "A10\n") {
			t.Errorf("take sa-2 here landed\n%s", got)
		}
		rs, err := an.ResolveWholeFile("cf-1", "sa-2", "B's file")
		if err != nil || len(rs) != 1 || !rs[0].WholeFile || rs[0].Choice != "sa-2" || len(rs[0].Dropped) != 2 {
			t.Fatalf("whole file: %+v %v", rs, err)
		}
		res := output(t, an, rs...)
		if len(res.Files) != 1 || res.Files[0].Diff != B.Changes.Files[0].Diff || res.Sources["a.go"] != "sa-2" {
			t.Errorf("take sa-2's a.go: files %+v sources %v", res.Files, res.Sources)
		}
		if got := fileAfter(t, res, "a.go"); strings.Contains(got, "A10") || !strings.Contains(got, "B3\n") {
			t.Errorf("take sa-2's a.go landed\n%s", got)
		}
		// Refused spellings name what is valid.
		if _, err := an.ResolveWholeFile("cf-1", commands.ChooseNone, ""); err == nil || !strings.Contains(err.Error(), "choose sa-1 or sa-2") {
			t.Errorf("whole file none: %v", err)
		}
	}
}

// A third member's hunk in the file is dropped by a side's whole version too, and a second
// conflict of the file is settled with it.
func TestWholeFileSettlesTheFile(t *testing.T) {
	A := writer("sa-1", 1, gitMods("a.go", map[int]string{3: "A3", 20: "A20"}))
	B := writer("sa-2", 2, gitMods("a.go", map[int]string{3: "B3", 20: "B20"}))
	C := writer("sa-3", 3, gitMod("a.go", 35, "C35"))
	an := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, A, B, C))
	if len(an.Conflicts) != 2 {
		t.Fatalf("conflicts %+v", an.Conflicts)
	}
	if p := an.Conflicts[0].Review.Outcomes[0].Pending; !slices.Equal(p, []string{"cf-2"}) {
		t.Errorf("pending %v", p)
	}
	rs, err := an.ResolveWholeFile("cf-1", "sa-1", "")
	if err != nil || len(rs) != 2 || rs[1].ConflictID != "cf-2" || rs[1].Choice != "sa-1" || !rs[1].WholeFile {
		t.Fatalf("%+v %v", rs, err)
	}
	res := output(t, an, rs...)
	if got := fileAfter(t, res, "a.go"); strings.Contains(got, "C35") || !strings.Contains(got, "A3\n") || !strings.Contains(got, "A20\n") {
		t.Errorf("landed\n%s", got)
	}
}

// An automatic method records what its choice kept and dropped.
func TestAutoResolutionRecordsKeptAndDropped(t *testing.T) {
	A := writer("sa-1", 1, gitMod("a.go", 3, "A3"))
	B := writer("sa-2", 2, gitMod("a.go", 3, "B3"))
	an := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionAutoAcceptLatest, A, B))
	if len(an.Auto) != 1 {
		t.Fatalf("auto %+v", an.Auto)
	}
	r := an.Auto[0]
	if r.Choice != "sa-2" || len(r.Kept) != 1 || !strings.Contains(r.Kept[0].Text, "+B3") || len(r.Dropped) != 1 || r.Dropped[0].SubagentID != "sa-1" {
		t.Errorf("%+v", r)
	}
}

// A consensus conflict shows each member's diff and why it disagrees, not raw values.
func TestConsensusSidesShowDiffAndReason(t *testing.T) {
	conf := func(f float64) *float64 { return &f }
	A := writer("sa-1", 1, gitMod("a.go", 3, "A3"))
	A.Capsule.Confidence = conf(0.9)
	B := writer("sa-2", 2, gitMod("a.go", 3, "B3"))
	B.Capsule.Confidence = conf(0.8)
	C := writer("sa-3", 3, gitMod("a.go", 3, "A3"))
	C.Capsule.Confidence = conf(0.5)
	an := analyze(t, realInput(commands.StrategyConsensus, commands.ResolutionManual, A, B, C))
	if len(an.Conflicts) != 2 {
		t.Fatalf("conflicts %+v", an.Conflicts)
	}
	byOther := map[string]session.ConflictSide{}
	for _, d := range an.Conflicts {
		if ref := d.Sides[0]; ref.SubagentID != "sa-1" || !strings.Contains(ref.Reason, "the reference") || !strings.Contains(ref.Diff, "+A3") {
			t.Errorf("reference side %+v", ref)
		}
		byOther[d.Sides[1].SubagentID] = d.Sides[1]
	}
	if s := byOther["sa-2"]; s.Reason != "its result differs from sa-1's" || !strings.Contains(s.Diff, "+B3") {
		t.Errorf("sa-2: %+v", s)
	}
	if s := byOther["sa-3"]; !strings.Contains(s.Reason, "confidence 0.50 is outside the 0.1 band of 0.90") {
		t.Errorf("sa-3: %+v", s)
	}
}

// opsOf are a result's playbook operations as the reviewer reads them.
func opsOf(res Result) []string {
	var out []string
	for _, op := range res.Batch.Operations {
		out = append(out, opText(op))
	}
	return out
}

// Issue 27: a member's playbook operations land only with its whole change. A changes lines
// 3 and 10 and establishes pattern A; B changes line 3 and establishes pattern B; both confirm
// one shared note. Taking B, here or B's whole file, drops pattern A (its line-10 hunk may
// still land: its change is not whole), and the review says so before the choice.
func TestPlaybookFollowsWholeChange(t *testing.T) {
	A := writer("sa-1", 1, gitMods("a.go", map[int]string{3: "A3", 10: "A10"}))
	A.Capsule.DownstreamContext = "- Patterns Established: pattern A\n- Notes: shared"
	B := writer("sa-2", 2, gitMod("a.go", 3, "B3"))
	B.Capsule.DownstreamContext = "- Patterns Established: pattern B\n- Notes: shared"
	an := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, A, B))
	if len(an.Conflicts) != 1 {
		t.Fatalf("conflicts %+v", an.Conflicts)
	}
	d := an.Conflicts[0]
	texts := func(ops []session.ReviewOp) string {
		var out []string
		for _, o := range ops {
			out = append(out, o.SubagentID+" "+o.Text)
		}
		return strings.Join(out, "; ")
	}
	for _, o := range d.Review.Outcomes {
		lands, drops := texts(o.PlaybookLands), texts(o.PlaybookDrops)
		switch {
		case o.Choice == "sa-2":
			if lands != "sa-2 ADD notes: shared; sa-2 ADD patterns_established: pattern B" || drops != "sa-1 ADD patterns_established: pattern A" {
				t.Errorf("take sa-2 (whole %v): playbook lands %q drops %q", o.WholeFile, lands, drops)
			}
		case o.Choice == "sa-1" && !o.WholeFile: // B's only hunk is dropped
			if lands != "sa-1 ADD patterns_established: pattern A; sa-1 ADD notes: shared" || drops != "sa-2 ADD patterns_established: pattern B" {
				t.Errorf("take sa-1 here: playbook lands %q drops %q", lands, drops)
			}
		case o.Choice == commands.ChooseNone:
			if lands != "" || !strings.Contains(drops, "pattern A") || !strings.Contains(drops, "pattern B") {
				t.Errorf("none: playbook lands %q drops %q", lands, drops)
			}
		}
	}
	r, err := an.Resolve("cf-1", "sa-2", "")
	if err != nil {
		t.Fatal(err)
	}
	if texts(r.PlaybookDropped) != "sa-1 ADD patterns_established: pattern A" || len(r.PlaybookKept) != 2 {
		t.Errorf("the resolution's playbook: kept %+v dropped %+v", r.PlaybookKept, r.PlaybookDropped)
	}
	want := []string{"ADD notes: shared", "ADD patterns_established: pattern B"}
	res := output(t, an, r)
	if got := opsOf(res); !slices.Equal(got, want) || !strings.Contains(strings.Join(res.Notes, "\n"), "sa-1's 1 playbook operation left out") {
		t.Errorf("take sa-2 here: operations %q notes %q", got, res.Notes)
	}
	// The shared note is B's alone now.
	for _, op := range res.Batch.Operations {
		if op.Content == "shared" && fmt.Sprint(op.Metadata["sources"]) != "[sa-2]" {
			t.Errorf("shared note's sources: %v", op.Metadata)
		}
	}
	rs, err := an.ResolveWholeFile("cf-1", "sa-2", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := opsOf(output(t, an, rs...)); !slices.Equal(got, want) || texts(rs[0].PlaybookDropped) != "sa-1 ADD patterns_established: pattern A" {
		t.Errorf("take sa-2's a.go: operations %q, recorded %+v", got, rs[0].PlaybookDropped)
	}
	// both sides kept by the reviewer's own lines: both patterns stand.
	re, err := an.ResolveEdit("cf-1", "AB3\n", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := opsOf(output(t, an, re)); len(got) != 3 {
		t.Errorf("edit: operations %q", got)
	}
}

// Issue 27: an automatic method records what else lands in the file with its choice (the
// other side's non-conflicting hunks) and the playbook operations it keeps and drops, as a
// manual review shows them before enter.
func TestAutoResolutionRecordsWhatElseLands(t *testing.T) {
	conf := func(f float64) *float64 { return &f }
	for _, method := range []string{commands.ResolutionAutoAcceptLatest, commands.ResolutionPreferHigherConfidence} {
		A := writer("sa-1", 1, gitMods("a.go", map[int]string{3: "A3", 10: "A10"}))
		A.Capsule.DownstreamContext = "- Patterns Established: pattern A"
		A.Capsule.Confidence = conf(0.5)
		B := writer("sa-2", 2, gitMod("a.go", 3, "B3"))
		B.Capsule.DownstreamContext = "- Patterns Established: pattern B"
		B.Capsule.Confidence = conf(0.9)
		an := analyze(t, realInput(commands.StrategyMerge, method, A, B))
		if len(an.Auto) != 1 {
			t.Fatalf("%s: auto %+v", method, an.Auto)
		}
		r := an.Auto[0]
		if r.Choice != "sa-2" || len(r.AlsoLands) != 1 || r.AlsoLands[0].SubagentID != "sa-1" || !strings.Contains(r.AlsoLands[0].Text, "+A10") {
			t.Errorf("%s: the recorded resolution does not say A's line 10 lands with it: %+v", method, r)
		}
		if len(r.PlaybookDropped) != 1 || r.PlaybookDropped[0].Text != "ADD patterns_established: pattern A" ||
			len(r.PlaybookKept) != 1 || r.PlaybookKept[0].Text != "ADD patterns_established: pattern B" {
			t.Errorf("%s: playbook kept %+v dropped %+v", method, r.PlaybookKept, r.PlaybookDropped)
		}
		// What was recorded is what lands.
		res := output(t, an)
		if got := fileAfter(t, res, "a.go"); !strings.Contains(got, "A10\n") || !strings.Contains(got, "B3\n") {
			t.Errorf("%s landed\n%s", method, got)
		}
		if got := opsOf(res); !slices.Equal(got, []string{"ADD patterns_established: pattern B"}) {
			t.Errorf("%s: operations %q", method, got)
		}
	}
}

// A vote tie settled by auto_accept_latest records the chosen member's whole result as kept
// and the other sides' as dropped, playbook operations included.
func TestAutoVoteRecordsKeptAndDropped(t *testing.T) {
	A := writer("sa-1", 1, gitMod("a.go", 3, "A3"))
	A.Capsule.DownstreamContext = "- Patterns Established: pattern A"
	B := writer("sa-2", 2, gitMod("a.go", 3, "B3"))
	B.Capsule.DownstreamContext = "- Patterns Established: pattern B"
	C := writer("sa-3", 3, gitMod("b.go", 5, "C5"))
	D := writer("sa-4", 4, gitMod("a.go", 3, "A3"))
	E := writer("sa-5", 5, gitMod("b.go", 5, "C5"))
	F := writer("sa-6", 6, gitMod("a.go", 3, "B3"))
	an := analyze(t, realInput(commands.StrategyVote, commands.ResolutionAutoAcceptLatest, A, B, C, D, E, F))
	if len(an.Auto) != 1 {
		t.Fatalf("auto %+v conflicts %+v", an.Auto, an.Conflicts)
	}
	r := an.Auto[0]
	if r.Choice != "sa-6" || len(r.Kept) != 1 || r.Kept[0].File != "a.go" || !strings.Contains(r.Kept[0].Text, "+B3") {
		t.Errorf("kept %+v", r)
	}
	var dropped []string
	for _, h := range r.Dropped {
		dropped = append(dropped, h.SubagentID+":"+h.File)
	}
	if len(dropped) != 5 || !slices.Contains(dropped, "sa-1:a.go") || !slices.Contains(dropped, "sa-3:b.go") {
		t.Errorf("dropped %v", dropped)
	}
	if len(r.PlaybookDropped) != 2 || len(r.PlaybookKept) != 0 {
		t.Errorf("playbook kept %+v dropped %+v", r.PlaybookKept, r.PlaybookDropped)
	}
}
