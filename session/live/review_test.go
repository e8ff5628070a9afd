package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// numbered is the lines l1..ln, with line k replaced where repl says.
func numbered(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r + "\n")
			continue
		}
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

// Issue 27, item 1: A changes lines 3 and 10 of one file, B changes line 3. The review
// recorded before the resolution contains A's line-10 change and says it lands with "take B
// here"; "take B's file" (--whole-file) lands B's file exactly.
func TestReviewWholeFileLandsExactly(t *testing.T) {
	t.Parallel()
	for _, whole := range []bool{true, false} {
		t.Run(fmt.Sprint("whole=", whole), func(t *testing.T) {
			h := newHarness(t)
			write(t, h.ws, "list.txt", numbered(20, nil))
			x := h.start(RealClock{})
			accept(t, x, `/delegate "review A lines 3 and 10" --agent-type builder`, `/delegate "review B line 3" --agent-type builder`,
				"/wait sa-1 sa-2", "/converge sa-1 sa-2 --strategy merge", "/wait cv-1")
			// /status says what a region choice also lands, before it is made.
			if st := accept(t, x, "/status cv-1"); !strings.Contains(st.Output, "--choose sa-2 also lands in list.txt: sa-1 @@") ||
				!strings.Contains(st.Output, "--choose sa-2 --whole-file takes that side's whole list.txt") {
				t.Errorf("/status cv-1:\n%s", st.Output)
			}
			resolve := "/resolve cf-1 --choose sa-2"
			if whole {
				resolve += " --whole-file"
			}
			r := accept(t, x, resolve, "/wait cv-1", "/apply cv-1")
			x.Close("quit")
			got := string(readFile(t, filepath.Join(h.ws, "list.txt")))
			want := numbered(20, map[int]string{3: "B3", 10: "A10"})
			if whole {
				want = numbered(20, map[int]string{3: "B3"})
			}
			if got != want {
				t.Errorf("after %s (%s), list.txt is\n%s\nwant\n%s", resolve, r.Output, got, want)
			}
			o := h.read(0, x, "")
			cfs := o.find(session.TypeConflictDetected, "")
			if len(cfs) != 1 {
				t.Fatalf("conflicts: %+v", cfs)
			}
			d := cfs[0].Data.(session.ConflictDetected)
			if d.Review == nil {
				t.Fatalf("the recorded conflict has no review: %+v", d)
			}
			var here *session.ChoiceOutcome
			for i, oc := range d.Review.Outcomes {
				if oc.Choice == "sa-2" && !oc.WholeFile {
					here = &d.Review.Outcomes[i]
				}
			}
			if here == nil || len(here.AlsoLands) != 1 || here.AlsoLands[0].SubagentID != "sa-1" || !strings.Contains(here.AlsoLands[0].Text, "+A10") {
				t.Errorf("take sa-2 here does not say A's line 10 lands with it: %+v", d.Review.Outcomes)
			}
			rs := o.find(session.TypeConflictResolved, "")
			if len(rs) != 1 {
				t.Fatalf("resolutions %+v", rs)
			}
			if res := rs[0].Data.(session.ConflictResolved); res.WholeFile != whole || res.Choice != "sa-2" {
				t.Errorf("recorded resolution %+v", res)
			}
			// replay --print shows the review too.
			var pr strings.Builder
			if err := render.Print(&pr, o.state); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"sa-1's whole change to list.txt:", "[lands with any region choice]", "--choose sa-2 also lands sa-1's @@"} {
				if !strings.Contains(pr.String(), want) {
					t.Errorf("replay --print lacks %q:\n%s", want, pr.String())
				}
			}
			if whole && !strings.Contains(pr.String(), "resolved by manual: sa-2's whole list.txt") {
				t.Errorf("replay --print does not say the whole file was taken:\n%s", pr.String())
			}
		})
	}
}

// Issue 27, item 5: an apply conflict at line 41 of a 100-line file. The recorded review holds
// line 41's two versions and the region with git's diff3 markers (not the whole files), and
// choice edit settles it with the reviewer's text.
func TestApplyReviewShowsTheConflictLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	big := filepath.Join(h.ws, "big.txt")
	write(t, h.ws, "big.txt", numbered(100, nil))
	x := h.start(RealClock{})
	accept(t, x, `/delegate "review line 41" --agent-type builder`, "/wait sa-1")
	if err := os.WriteFile(big, []byte(numbered(100, map[int]string{41: "ours 41"})), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := accept(t, x, "/apply sa-1"); !strings.Contains(r.Output, "review cf-1") {
		t.Fatalf("/apply sa-1: %+v", r)
	}
	// The markers are refused as an answer; the whole file as the reviewer wrote it lands.
	if r, _ := x.Submit(t.Context(), `/resolve cf-1 --choose edit --content "<<<<<<< workspace\n"`); !r.Rejected || !strings.Contains(r.Error, "conflict markers") {
		t.Errorf("markers accepted: %+v", r)
	}
	mine := numbered(100, map[int]string{41: "both 41"})
	accept(t, x, "/resolve cf-1 --choose edit --content "+fmt.Sprintf("%q", mine), "/apply cv-1")
	x.Close("quit")
	if got := string(readFile(t, big)); got != mine {
		t.Errorf("big.txt after the edit:\n%s", got)
	}
	o := h.read(0, x, "")
	cfs := o.find(session.TypeConflictDetected, "")
	if len(cfs) != 1 {
		t.Fatalf("conflicts: %+v", cfs)
	}
	d := cfs[0].Data.(session.ConflictDetected)
	theirs, ours := fmt.Sprint(d.Sides[0].Value), fmt.Sprint(d.Sides[1].Value)
	if d.Lines == nil || d.Lines.Start != 41 || !strings.Contains(theirs, "+theirs 41") || !strings.Contains(theirs, "-l41") ||
		!strings.Contains(ours, "+ours 41") || strings.Contains(theirs, "l1\n") {
		t.Errorf("the recorded sides do not show line 41's versions: lines %v\n%s\n%s", d.Lines, theirs, ours)
	}
	for _, want := range []string{"<<<<<<< workspace", "ours 41", "||||||| base", "theirs 41", ">>>>>>> sa-1", "   40   l40", "   42   l42"} {
		if !strings.Contains(d.Context, want) {
			t.Errorf("the recorded region lacks %q:\n%s", want, d.Context)
		}
	}
	if strings.Contains(d.Context, "l30\n") || !strings.Contains(d.EditTemplate, "<<<<<<< workspace") {
		t.Errorf("context %q / template %q", d.Context, d.EditTemplate)
	}
}

// The demo's clash (issue 27): variant A's one git hunk changes the loop line and `return t →
// return round(t)`, variant B replaces the loop line. Taking B's whole cart.go lands exactly
// B's file, not a hybrid with A's return line.
func TestDemoTakeWholeFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tapes = "../../agents/provider/tapes"
	write(t, h.ws, "cart.go", demoCart)
	x := h.start(RealClock{})
	defer x.Close("quit")
	accept(t, x, `/delegate "fix rounding in cart.go, variant A" --agent-type builder`, `/delegate "fix rounding in cart.go, variant B" --agent-type builder`,
		"/wait sa-1 sa-2", "/converge sa-1 sa-2 --strategy merge", "/wait cv-1")
	var cf *session.Conflict
	x.View(func(st *session.State) { cf = st.Conflict("cf-1") })
	if cf == nil || cf.Review == nil {
		t.Fatalf("no review: %+v", cf)
	}
	// The review shows A's return line, and says "take sa-2 here" lands it.
	shown := fmt.Sprint(cf.Review.Changes)
	if !strings.Contains(shown, "+\treturn round(t)") {
		t.Errorf("A's whole change is not in the review: %s", shown)
	}
	for _, o := range cf.Review.Outcomes {
		if o.Choice == "sa-2" && !o.WholeFile && (len(o.AlsoLands) != 1 || !strings.Contains(o.AlsoLands[0].Text, "return round(t)")) {
			t.Errorf("take sa-2 here does not list A's return line: %+v", o)
		}
	}
	want := string(readFile(t, filepath.Join(x.subs["sa-2"].wt.Path, "cart.go")))
	if !strings.Contains(want, "cents") || strings.Contains(want, "return round(t)") {
		t.Fatalf("the tapes changed: sa-2's cart.go is\n%s", want)
	}
	accept(t, x, "/resolve cf-1 --choose sa-2 --whole-file", "/wait cv-1", "/apply cv-1")
	if got := string(readFile(t, filepath.Join(h.ws, "cart.go"))); got != want {
		t.Errorf("cart.go after taking sa-2's whole file:\n%s\nwant sa-2's:\n%s", got, want)
	}
}

// The demo's clash, playbook side (issue 27): taking one side, here or its whole cart.go,
// leaves only that side's Downstream Context pattern in the playbook, not both contradictory
// ones, and the review said which pattern each choice lands and drops.
func TestDemoTakeSidePlaybook(t *testing.T) {
	t.Parallel()
	const patternA, patternB = "money is rounded once, at the boundary", "amounts are integer cents inside Total"
	for _, tc := range []struct {
		resolve    string
		keep, drop string
	}{
		{"/resolve cf-1 --choose sa-2 --whole-file", patternB, patternA},
		{"/resolve cf-1 --choose sa-2", patternB, patternA},
		{"/resolve cf-1 --choose sa-1", patternA, patternB},
	} {
		t.Run(tc.resolve, func(t *testing.T) {
			h := newHarness(t)
			h.tapes = "../../agents/provider/tapes"
			write(t, h.ws, "cart.go", demoCart)
			x := h.start(RealClock{})
			defer x.Close("quit")
			accept(t, x, `/delegate "fix rounding in cart.go, variant A" --agent-type builder`, `/delegate "fix rounding in cart.go, variant B" --agent-type builder`,
				"/wait sa-1 sa-2", "/converge sa-1 sa-2 --strategy merge", "/wait cv-1")
			var cf *session.Conflict
			x.View(func(st *session.State) { cf = st.Conflict("cf-1") })
			if cf == nil || cf.Review == nil {
				t.Fatalf("no review: %+v", cf)
			}
			choice := strings.Fields(tc.resolve)[3]
			whole := strings.HasSuffix(tc.resolve, "--whole-file")
			shown := false
			for _, o := range cf.Review.Outcomes {
				if o.Choice != choice || o.WholeFile != whole {
					continue
				}
				shown = true
				if len(o.PlaybookLands) != 1 || !strings.Contains(o.PlaybookLands[0].Text, tc.keep) ||
					len(o.PlaybookDrops) != 1 || !strings.Contains(o.PlaybookDrops[0].Text, tc.drop) {
					t.Errorf("the review of %s does not say which pattern lands: lands %+v drops %+v", tc.resolve, o.PlaybookLands, o.PlaybookDrops)
				}
			}
			if !shown {
				t.Fatalf("no outcome for %s in %+v", tc.resolve, cf.Review.Outcomes)
			}
			accept(t, x, tc.resolve, "/wait cv-1", "/apply cv-1")
			var book []string
			x.View(func(st *session.State) {
				for _, e := range st.Playbook {
					book = append(book, e.Content)
				}
			})
			if len(book) != 1 || book[0] != tc.keep {
				t.Errorf("after %s the playbook holds %q; want only %q", tc.resolve, book, tc.keep)
			}
		})
	}
}

// Issue 27, item 1: an automatic choice is recorded with what else lands in the file (A's
// line 10 with "take B here"), and what was recorded lands.
func TestAutoResolutionRecordsAlsoLands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	write(t, h.ws, "list.txt", numbered(20, nil))
	x := h.start(RealClock{})
	// B is started after A has stopped, so it finishes last whatever the machine's load.
	accept(t, x, `/delegate "review A lines 3 and 10" --agent-type builder`, "/wait sa-1", `/delegate "review B line 3" --agent-type builder`,
		"/wait sa-2", "/converge sa-1 sa-2 --strategy merge --conflict-resolution auto_accept_latest", "/wait cv-1", "/apply cv-1")
	x.Close("quit")
	if got, want := string(readFile(t, filepath.Join(h.ws, "list.txt"))), numbered(20, map[int]string{3: "B3", 10: "A10"}); got != want {
		t.Errorf("list.txt is\n%s\nwant\n%s", got, want)
	}
	o := h.read(0, x, "")
	rs := o.find(session.TypeConflictResolved, "")
	if len(rs) != 1 {
		t.Fatalf("resolutions %+v", rs)
	}
	r := rs[0].Data.(session.ConflictResolved)
	if r.Method != "auto_accept_latest" || r.Choice != "sa-2" || len(r.AlsoLands) != 1 || r.AlsoLands[0].SubagentID != "sa-1" ||
		!strings.Contains(r.AlsoLands[0].Text, "+A10") || len(r.Dropped) != 1 || !strings.Contains(r.Dropped[0].Text, "+A3") {
		t.Errorf("the recorded automatic resolution does not say what else lands: %+v", r)
	}
	if len(r.PlaybookDropped) != 1 || r.PlaybookDropped[0].Text != "ADD patterns_established: lines are rewritten by A" ||
		len(r.PlaybookKept) != 1 || r.PlaybookKept[0].SubagentID != "sa-2" {
		t.Errorf("the recorded automatic resolution's playbook: kept %+v dropped %+v", r.PlaybookKept, r.PlaybookDropped)
	}
	var book []string
	for _, e := range o.state.Playbook {
		book = append(book, e.Content)
	}
	if len(book) != 1 || book[0] != "lines are rewritten by B" {
		t.Errorf("playbook %q", book)
	}
	var pr strings.Builder
	if err := render.Print(&pr, o.state); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pr.String(), "with it also lands sa-1's @@") {
		t.Errorf("replay --print does not show what else landed with the automatic choice:\n%s", pr.String())
	}
}

// demoCart is the demo's cart.go (cmd/summit/demo.go); the demo tapes' edits fit it.
const demoCart = `package shop

// Line is one line of a cart.
type Line struct {
	Price float64
	Qty   int
}

// Total sums the cart. TODO: it rounds every line, which loses cents.
func Total(lines []Line) float64 {
	t := 0.0
	for _, l := range lines {
		t += round(l.Price * float64(l.Qty))
	}
	return t
}

func round(x float64) float64 { return float64(int(x*100+0.5)) / 100 }
`

// mergedReview reads git merge-file --diff3 output: regions numbered as in the workspace's
// file, context not repeated between close regions, CRLF markers understood.
func TestMergedReview(t *testing.T) {
	merged := "a\nb\nc\n<<<<<<< workspace\nW5\n||||||| base\nB5\n=======\nT5\n>>>>>>> sa-1\nf\ng\n<<<<<<< workspace\nW8\nW9\n||||||| base\nB8\n=======\n>>>>>>> sa-1\nj\nk\nl\nm\n"
	rv := mergedReview(merged)
	// The workspace's file: a b c W5 f g W8 W9 j k l m.
	if !rv.ok || rv.lines != (session.LineRange{Start: 4, End: 8}) {
		t.Fatalf("%+v", rv)
	}
	if rv.theirs != "@@ line 4 @@\n-B5\n+T5\n@@ line 7 @@\n-B8\n" || rv.ours != "@@ line 4 @@\n-B5\n+W5\n@@ line 7 @@\n-B8\n+W8\n+W9\n" {
		t.Errorf("sides:\n%s\n%s", rv.theirs, rv.ours)
	}
	want := "    1   a\n    2   b\n    3   c\n        <<<<<<< workspace\n        W5\n        ||||||| base\n        B5\n        =======\n        T5\n        >>>>>>> sa-1\n" +
		"    5   f\n    6   g\n        <<<<<<< workspace\n        W8\n        W9\n        ||||||| base\n        B8\n        =======\n        >>>>>>> sa-1\n" +
		"    9   j\n   10   k\n   11   l\n"
	if rv.context != want {
		t.Errorf("context:\n%s\nwant:\n%s", rv.context, want)
	}
	crlf := mergedReview(strings.ReplaceAll(merged, "\n", "\r\n"))
	if !crlf.ok || !strings.Contains(crlf.theirs, "+T5") || strings.Contains(crlf.theirs, "=======") {
		t.Errorf("CRLF: %+v", crlf)
	}
	if rv := mergedReview("no markers\n"); rv.ok {
		t.Errorf("no markers: %+v", rv)
	}
}
