package converge

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// replaceLines writes a diff replacing lines from..to (1-based, inclusive) of base with
// repl, with 3 lines of context.
func replaceLines(file string, from, to int, repl ...string) string {
	var b strings.Builder
	first, last := max(1, from-3), min(40, to+3)
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", file, file, first, last-first+1, first, last-first+1-(to-from+1)+len(repl))
	for i := first; i <= last; i++ {
		switch {
		case i < from || i > to:
			fmt.Fprintf(&b, " l%d\n", i)
		default:
			fmt.Fprintf(&b, "-l%d\n", i)
			if i == to {
				for _, r := range repl {
					fmt.Fprintf(&b, "+%s\n", r)
				}
			}
		}
	}
	return b.String()
}

// withLines is base() with old lines [from, to) (0-based) replaced by text.
func withLines(from, to int, text string) string {
	ls := splitLines(base())
	return strings.Join(ls[:from], "") + text + strings.Join(ls[to:], "")
}

// editMembers: sa-1 and sa-2 change overlapping lines (12-13 and 13-14: one conflict over
// lines 12-14); sa-3 changes the lines just around that region and sa-4 inserts at its very
// start and end, none of them in conflict.
func editMembers() []Member {
	return []Member{
		member("sa-1", 5, nil, "one", replaceLines("a.go", 12, 13, "A")),
		member("sa-2", 6, nil, "two", replaceLines("a.go", 13, 14, "B")),
		member("sa-3", 7, nil, "three", change("a.go", 11, "ELEVEN"), change("a.go", 15, "FIFTEEN"), change("a.go", 30, "THIRTY")),
		member("sa-4", 8, nil, "four", insert("a.go", 11, "IN11"), insert("a.go", 14, "IN14")),
	}
}

func TestEditChoices(t *testing.T) {
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch, editMembers()...))
	if len(a.Conflicts) != 1 || a.Conflicts[0].Kind != KindHunk || a.Conflicts[0].Lines.String() != "12-14" {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	want := []string{"sa-1", "sa-2", "none", ChooseEdit}
	if got := a.Choices("cf-1"); !slices.Equal(got, want) || !slices.Equal(a.Conflicts[0].Choices, want) {
		t.Errorf("choices %v, detected %v", got, a.Conflicts[0].Choices)
	}

	// A vote tie: whole results, no lines to write.
	v := analyze(t, input(commands.StrategyVote, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-1", 5, nil, "one", change("a.go", 12, "A")),
		member("sa-2", 6, nil, "two", change("a.go", 12, "B")),
		member("sa-3", 7, nil, "three", change("a.go", 12, "C"))))
	if len(v.Conflicts) != 1 || v.Conflicts[0].Kind != KindVote {
		t.Fatalf("vote conflicts %+v", v.Conflicts)
	}
	if got := v.Choices("cf-1"); slices.Contains(got, ChooseEdit) || slices.Contains(v.Conflicts[0].Choices, ChooseEdit) {
		t.Errorf("a vote conflict offers edit: %v", got)
	}
	if _, err := v.ResolveEdit("cf-1", "x\n", ""); err == nil || !strings.Contains(err.Error(), "cannot be edited by hand") {
		t.Errorf("edit of a vote conflict: %v", err)
	}
	if _, err := v.Resolve("cf-1", ChooseEdit, ""); err == nil || !strings.Contains(err.Error(), "cannot be edited by hand") {
		t.Errorf("resolve edit of a vote conflict: %v", err)
	}
	if _, err := v.EditTemplate("cf-1"); err == nil {
		t.Error("a vote conflict has an edit template")
	}
	// Output refuses an edit of a conflict that has none (a recording made elsewhere).
	if _, err := v.Output(map[string]session.ConflictResolved{"cf-1": {ConflictID: "cf-1", Choice: ChooseEdit, Method: "manual", Content: "x\n"}}); err == nil {
		t.Error("Output took an edit of a vote conflict")
	}

	// A file conflict (modify versus delete) is taken whole.
	f := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual,
		writer("sa-1", 5, gitMod("a.go", 3, "x")), writer("sa-2", 6, gitDel("a.go"))))
	if len(f.Conflicts) != 1 || f.Conflicts[0].Kind != KindFile || slices.Contains(f.Choices("cf-1"), ChooseEdit) {
		t.Errorf("file conflict %+v choices %v", f.Conflicts, f.Choices("cf-1"))
	}

	// Edit needs the text: Resolve alone refuses it and says so.
	_, err := a.Resolve("cf-1", ChooseEdit, "")
	if err == nil || !strings.Contains(err.Error(), "ResolveEdit") || !strings.Contains(err.Error(), "content") {
		t.Errorf("resolve edit without content: %v", err)
	}
	if _, err := a.ResolveEdit("cf-1", "bad \xff\n", ""); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if _, err := a.ResolveEdit("cf-9", "x\n", ""); err == nil || !strings.Contains(err.Error(), "cf-9 is not a conflict of cv-1") {
		t.Errorf("unknown conflict: %v", err)
	}
	r, err := a.ResolveEdit("cf-1", "AB\n", "both ideas")
	want2 := session.ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Method: commands.ResolutionManual, Choice: ChooseEdit,
		Note: "both ideas", Overridden: []string{"sa-1", "sa-2"}, Content: "AB\n"}
	// The reviewer's text drops both sides' hunks, and says so.
	if len(r.Kept) != 0 || len(r.Dropped) != 2 || r.Dropped[0].SubagentID != "sa-1" || r.Dropped[1].SubagentID != "sa-2" {
		t.Errorf("resolve edit kept %+v dropped %+v", r.Kept, r.Dropped)
	}
	// The file's other hunks land with the reviewer's lines, and the resolution says so.
	if len(r.AlsoLands) == 0 {
		t.Errorf("resolve edit: what else lands is not recorded: %+v", r)
	}
	r.Kept, r.Dropped, r.AlsoLands = nil, nil, nil
	if err != nil || fmt.Sprint(r) != fmt.Sprint(want2) {
		t.Errorf("resolve edit: %+v %v", r, err)
	}
	if r, err := a.ResolveEdit("cf-1", "", ""); err != nil || r.Content != "" || r.Choice != ChooseEdit {
		t.Errorf("empty content: %+v %v", r, err)
	}
}

func TestEditTemplate(t *testing.T) {
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch, editMembers()...))
	got, err := a.EditTemplate("cf-1")
	want := "<<<<<<< sa-1\nA\nl14\n||||||| base\nl12\nl13\nl14\n=======\nl12\nB\n>>>>>>> sa-2\n"
	if err != nil || got != want {
		t.Errorf("template %v:\n%s\nwant\n%s", err, got, want)
	}
	if _, err := a.EditTemplate("cf-9"); err == nil {
		t.Error("a template for an unknown conflict")
	}

	// Three sides: one block per side, each opened by a separator naming it.
	a = analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-3", 7, nil, "three", change("a.go", 12, "C")),
		member("sa-1", 5, nil, "one", change("a.go", 12, "A1", "A2")),
		member("sa-2", 6, nil, "two", change("a.go", 12))))
	got, err = a.EditTemplate("cf-1")
	want = "<<<<<<< sa-1\nA1\nA2\n||||||| base\nl12\n======= sa-2\n======= sa-3\nC\n>>>>>>> sa-3\n"
	if err != nil || got != want {
		t.Errorf("three sides %v:\n%s\nwant\n%s", err, got, want)
	}

	// Insertions at one point: an empty base.
	a = analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-2", 5, nil, "adds a", insert("a.go", 10, "A1", "A2")),
		member("sa-1", 6, nil, "adds b", insert("a.go", 10, "B1"))))
	got, err = a.EditTemplate("cf-1")
	want = "<<<<<<< sa-1\nB1\n||||||| base\n=======\nA1\nA2\n>>>>>>> sa-2\n"
	if err != nil || got != want {
		t.Errorf("insertions %v:\n%s\nwant\n%s", err, got, want)
	}
	r, err := a.ResolveEdit("cf-1", "A1\nB1\n", "")
	if err != nil {
		t.Fatal(err)
	}
	res := output(t, a, r)
	if got := apply(t, res.Batch.Patches, map[string]string{"a.go": base()}); got["a.go"] != withLines(10, 10, "A1\nB1\n") {
		t.Errorf("insertions edited:\n%s\n%s", res.Batch.Patches[0].Diff, got["a.go"])
	}
}

// The edited text replaces the region's base lines in the patch; the other members' hunks
// around it (right up to its first and last line, and insertions at its very edges) stay.
func TestEditOutput(t *testing.T) {
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch, editMembers()...))
	// The file as the non-conflicting hunks leave it, with text in place of lines 12-14.
	expect := func(text string) string {
		ls := splitLines(base())
		return strings.Join(ls[:10], "") + "ELEVEN\nIN11\n" + text + "IN14\nFIFTEEN\n" + strings.Join(ls[15:29], "") + "THIRTY\n" + strings.Join(ls[30:], "")
	}
	cases := map[string]string{ // content → what the region becomes
		"AB1\nAB2\n":             "AB1\nAB2\n",
		"":                       "",
		"no newline":             "no newline\n",
		"l12\nl13\nl14\n":        "l12\nl13\nl14\n", // unchanged
		"l12\nX\nl13\nl14\n":     "l12\nX\nl13\nl14\n",
		"X\nl12\nl13\nl14\n":     "X\nl12\nl13\nl14\n",
		"l12\nl13\nl14\nX\n":     "l12\nl13\nl14\nX\n",
		"l13\n":                  "l13\n",
		"l12\nl14\n":             "l12\nl14\n",
		"l14\nl13\nl12\n":        "l14\nl13\nl12\n",
		"crlf\r\n":               "crlf\r\n",
		"l12\r\nl13\nl14\n":      "l12\r\nl13\nl14\n",
		"l12\nA\nl14\nl12\nB\n":  "l12\nA\nl14\nl12\nB\n",
		"IN11\nl12\nIN14\nl14\n": "IN11\nl12\nIN14\nl14\n",
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 { // random mixes of base lines and new ones
		var b strings.Builder
		for range r.IntN(6) {
			switch r.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "l%d\n", 12+r.IntN(3))
			case 1:
				fmt.Fprintf(&b, "new%d\n", r.IntN(3))
			default:
				b.WriteString([]string{"l11\n", "l15\n", "IN11\n", "IN14\n", "ELEVEN\n"}[r.IntN(5)])
			}
		}
		cases[b.String()] = b.String()
	}
	for _, content := range slices.Sorted(func(yield func(string) bool) {
		for k := range cases {
			if !yield(k) {
				return
			}
		}
	}) {
		rr, err := a.ResolveEdit("cf-1", content, "")
		if err != nil {
			t.Fatal(err)
		}
		res := output(t, a, rr)
		checkHeaders(t, res.Batch.Patches)
		if len(res.Batch.Patches) != 1 {
			t.Fatalf("%q: patches %+v", content, res.Batch.Patches)
		}
		got := apply(t, res.Batch.Patches, map[string]string{"a.go": base()})
		if got["a.go"] != expect(cases[content]) {
			t.Errorf("content %q: the patch\n%s\ngives\n%s\nwant\n%s", content, res.Batch.Patches[0].Diff, got["a.go"], expect(cases[content]))
		}
		if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, "cf-1: a.go:12-14 edited by the reviewer") }) {
			t.Errorf("notes %q", res.Notes)
		}
		if res.Files != nil {
			t.Errorf("proposals only, yet files %+v", res.Files)
		}
	}
	// A hand-made resolution is said to be one, in markdown and json.
	rr, _ := a.ResolveEdit("cf-1", "AB\n", "took both")
	in := input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatMarkdown, editMembers()...)
	md := output(t, analyze(t, in), rr).Converged.Output
	for _, w := range []string{"cf-1 (hunk) → edit by manual (written by hand: edited by the reviewer): took both",
		"cf-1: a.go:12-14 edited by the reviewer (1 line in place of 3 lines)", "+AB\n"} {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	in.Format = commands.FormatJSON
	js := output(t, analyze(t, in), rr).Converged.Output
	var doc Document
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Conflicts) != 1 || !doc.Conflicts[0].Edited || doc.Conflicts[0].Choice != ChooseEdit ||
		!slices.Contains(doc.Notes, "cf-1: a.go:12-14 edited by the reviewer (1 line in place of 3 lines)") || !strings.Contains(js, `"edited_by_reviewer": true`) {
		t.Errorf("json %v:\n%s", err, js)
	}
}

// A file that ends without a newline still does when its last line is edited, and text
// without a final newline gets one in the middle of a file.
func TestEditNewlines(t *testing.T) {
	const file = "l1\nl2\nl3\nl4\nl5"
	last := func(repl string) string {
		return "--- a/t.txt\n+++ b/t.txt\n@@ -2,4 +2,4 @@\n l2\n l3\n l4\n-l5\n\\ No newline at end of file\n+" + repl + "\n\\ No newline at end of file\n"
	}
	in := input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-1", 5, nil, "one", last("A")), member("sa-2", 6, nil, "two", last("B")))
	in.Read = files(map[string]string{"t.txt": file})
	a := analyze(t, in)
	if tmpl, err := a.EditTemplate("cf-1"); err != nil || tmpl != "<<<<<<< sa-1\nA\n||||||| base\nl5\n=======\nB\n>>>>>>> sa-2\n" {
		t.Errorf("template %v:\n%s", err, tmpl)
	}
	for content, want := range map[string]string{
		"AB\n":   "l1\nl2\nl3\nl4\nAB",
		"AB":     "l1\nl2\nl3\nl4\nAB",
		"X\nY\n": "l1\nl2\nl3\nl4\nX\nY",
		"":       "l1\nl2\nl3\nl4\n",
		"l5\n":   file,
	} {
		r, err := a.ResolveEdit("cf-1", content, "")
		if err != nil {
			t.Fatal(err)
		}
		res := output(t, a, r)
		got := apply(t, res.Batch.Patches, map[string]string{"t.txt": file})
		if got["t.txt"] != want {
			t.Errorf("%q: %q, want %q\n%v", content, got["t.txt"], want, res.Batch.Patches)
		}
	}
	// In the middle of a file.
	a = analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-1", 5, nil, "one", change("a.go", 12, "A")), member("sa-2", 6, nil, "two", change("a.go", 12, "B"))))
	r, _ := a.ResolveEdit("cf-1", "X", "")
	got := apply(t, output(t, a, r).Batch.Patches, map[string]string{"a.go": base()})
	if got["a.go"] != withLines(11, 12, "X\n") {
		t.Errorf("middle:\n%s", got["a.go"])
	}
}

// The same input gives the same bytes, whatever the order the members were named in.
func TestEditDeterministic(t *testing.T) {
	for _, format := range []string{commands.FormatDeltaBatch, commands.FormatJSON, commands.FormatMarkdown} {
		out := func(ms []Member) string {
			a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, format, ms...))
			tmpl, err := a.EditTemplate("cf-1")
			if err != nil {
				t.Fatal(err)
			}
			r, err := a.ResolveEdit("cf-1", "AB\nl14\n", "mine")
			if err != nil {
				t.Fatal(err)
			}
			res := output(t, a, r)
			b, _ := json.Marshal(struct {
				T string
				C []session.ConflictDetected
				R Result
			}{tmpl, a.Conflicts, res})
			return string(b)
		}
		ms := editMembers()
		first := out(ms)
		if again := out(ms); again != first {
			t.Errorf("%s: not deterministic", format)
		}
		slices.Reverse(ms)
		if again := out(ms); again != first {
			t.Errorf("%s: member order changed the output", format)
		}
	}
}

// Edit in a convergence of real changes: Result.Files holds the file combined from the
// edited region and the members' other hunks of it, from "merged".
func TestEditRealChanges(t *testing.T) {
	mk := func() []Member {
		return []Member{
			claiming(writer("sa-1", 5, gitMods("a.go", map[int]string{12: "A", 30: "THIRTY"}))),
			claiming(writer("sa-2", 6, gitMods("a.go", map[int]string{12: "B", 5: "FIVE"}), gitMod("b.go", 3, "b3"))),
			claiming(writer("sa-3", 7, gitMod("c.go", 20, "C"))),
		}
	}
	a := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, mk()...))
	if len(a.Conflicts) != 1 || !slices.Contains(a.Choices("cf-1"), ChooseEdit) {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	if tmpl, _ := a.EditTemplate("cf-1"); tmpl != "<<<<<<< sa-1\nA\n||||||| base\nl12\n=======\nB\n>>>>>>> sa-2\n" {
		t.Errorf("template:\n%s", tmpl)
	}
	r, err := a.ResolveEdit("cf-1", "A and B\n", "")
	if err != nil {
		t.Fatal(err)
	}
	res := output(t, a, r)
	if len(res.Files) != 3 || res.Sources["a.go"] != SourceMerged || res.Sources["b.go"] != "sa-2" || res.Sources["c.go"] != "sa-3" {
		t.Fatalf("files %+v sources %v", res.Files, res.Sources)
	}
	f := fileOf(res.Files, "a.go")
	if f.Kind != session.ChangeModified || f.OldMode != "100644" || f.NewMode != "100644" || f.Added != 3 || f.Removed != 3 ||
		!strings.HasPrefix(f.Diff, "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ ") {
		t.Errorf("a.go %+v", f)
	}
	want := strings.Replace(strings.Replace(strings.Replace(base(), "\nl5\n", "\nFIVE\n", 1), "\nl12\n", "\nA and B\n", 1), "\nl30\n", "\nTHIRTY\n", 1)
	got := apply(t, []session.Patch{{Path: "a.go", Diff: f.Diff}}, map[string]string{"a.go": base()})
	if got["a.go"] != want {
		t.Errorf("the merged diff gives\n%s", got["a.go"])
	}
	batch := apply(t, res.Batch.Patches, map[string]string{"a.go": base(), "b.go": base(), "c.go": base()})
	if batch["a.go"] != want || !strings.Contains(batch["b.go"], "l2\nb3\nl4\n") || !strings.Contains(batch["c.go"], "l19\nC\nl21\n") {
		t.Errorf("the batch gives %q", batch)
	}
	// Editing back to the base leaves only the other hunks, still merged from two members.
	r, _ = a.ResolveEdit("cf-1", "l12\n", "")
	res = output(t, a, r)
	f = fileOf(res.Files, "a.go")
	if got := apply(t, []session.Patch{{Path: "a.go", Diff: f.Diff}}, map[string]string{"a.go": base()}); f == nil ||
		got["a.go"] != strings.Replace(strings.Replace(base(), "\nl5\n", "\nFIVE\n", 1), "\nl30\n", "\nTHIRTY\n", 1) || res.Sources["a.go"] != SourceMerged {
		t.Errorf("edited back to base: %+v %v", f, res.Sources)
	}
}
