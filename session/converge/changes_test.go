package converge

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// Recorded file changes as session/gitws writes them: git diffs with a/ b/ prefixes.

func blob(s string) string { return strings.Repeat(s, 40)[:40] }

// gitMod replaces line n of base() in file, like change, with git's headers.
func gitMod(file string, n int, repl ...string) session.FileChange {
	return session.FileChange{Path: file, Kind: session.ChangeModified, OldMode: "100644", NewMode: "100644", Added: len(repl), Removed: 1,
		Diff: fmt.Sprintf("diff --git a/%s b/%s\nindex %s..%s 100644\n", file, file, blob("1"), blob(fmt.Sprint(n%10))) + change(file, n, repl...)}
}

// gitMods is several edits of one file in one diff (as git writes them).
func gitMods(file string, edits map[int]string) session.FileChange {
	fc := session.FileChange{Path: file, Kind: session.ChangeModified, OldMode: "100644", NewMode: "100644",
		Diff: fmt.Sprintf("diff --git a/%s b/%s\nindex %s..%s 100644\n--- a/%s\n+++ b/%s\n", file, file, blob("1"), blob("2"), file, file)}
	lines := slices.Sorted(func(yield func(int) bool) {
		for n := range edits {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range lines {
		d := change(file, n, edits[n])
		fc.Diff += d[strings.Index(d, "@@"):]
		fc.Added++
		fc.Removed++
	}
	return fc
}

func gitAdd(file string, lines ...string) session.FileChange {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..%s\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n",
		file, file, blob(fmt.Sprint(len(lines[0])%10)), file, len(lines))
	for _, l := range lines {
		fmt.Fprintf(&b, "+%s\n", l)
	}
	return session.FileChange{Path: file, Kind: session.ChangeAdded, NewMode: "100644", Added: len(lines), Diff: b.String()}
}

func gitDel(file string) session.FileChange {
	d := fmt.Sprintf("diff --git a/%s b/%s\ndeleted file mode 100644\nindex %s..0000000000000000000000000000000000000000\n--- a/%s\n+++ /dev/null\n@@ -1,40 +0,0 @@\n",
		file, file, blob("1"), file)
	for i := 1; i <= 40; i++ {
		d += fmt.Sprintf("-l%d\n", i)
	}
	return session.FileChange{Path: file, Kind: session.ChangeDeleted, OldMode: "100644", Removed: 40, Diff: d}
}

func gitRename(from, to string) session.FileChange {
	return session.FileChange{Path: to, OldPath: from, Kind: session.ChangeRenamed, OldMode: "100644", NewMode: "100644",
		Diff: fmt.Sprintf("diff --git a/%s b/%s\nsimilarity index 100%%\nrename from %s\nrename to %s\n", from, to, from, to)}
}

// gitBin is a binary change; with a content id it is git's --binary patch (full blob ids),
// without one git's "Binary files differ" (nothing to compare).
func gitBin(file, content string) session.FileChange {
	fc := session.FileChange{Path: file, Kind: session.ChangeModified, Binary: true, OldMode: "100644", NewMode: "100644"}
	if content == "" {
		fc.Diff = fmt.Sprintf("diff --git a/%s b/%s\nindex 1111111..2222222 100644\nBinary files a/%s and b/%s differ\n", file, file, file, file)
	} else {
		fc.Diff = fmt.Sprintf("diff --git a/%s b/%s\nindex %s..%s 100644\nGIT binary patch\nliteral 3\nK%s\n\nliteral 3\nKcmV+b0RR6000031\n\n",
			file, file, blob("1"), blob(content), content)
	}
	return fc
}

// cut marks a diff as truncated, as session/gitws does past its cap.
func cut(fc session.FileChange) session.FileChange {
	fc.Truncated = true
	fc.Diff = fc.Diff[:strings.LastIndex(fc.Diff, "\n l")+1] + "[summit: diff truncated: 10 of 20 bytes shown; the full change is at refs/summit/s/sa-1/result]\n"
	return fc
}

func gitMode(file, mode string) session.FileChange {
	return session.FileChange{Path: file, Kind: session.ChangeMode, OldMode: "100644", NewMode: mode,
		Diff: fmt.Sprintf("diff --git a/%s b/%s\nold mode 100644\nnew mode %s\n", file, file, mode)}
}

// writer is a member that changed files in its worktree (on base-1), claiming nothing.
func writer(id string, seq uint64, files ...session.FileChange) Member {
	m := member(id, seq, nil, "did "+id)
	m.Changes = &session.SubagentChanges{Base: "base-1", BaseCommit: blob("b"), Files: files}
	for _, f := range files {
		m.Changes.Added += f.Added
		m.Changes.Removed += f.Removed
	}
	return m
}

// claiming makes a writer's capsule propose patches for exactly the paths it changed, so no
// mismatch note is expected.
func claiming(m Member) Member {
	for _, f := range m.Changes.Files {
		m.Capsule.PatchSuggestions = append(m.Capsule.PatchSuggestions, protocols.PatchSuggestion{Paths: []string{f.Path}, Diff: "see the worktree"})
	}
	return m
}

func realInput(strategy, resolution string, ms ...Member) Input {
	in := input(strategy, resolution, commands.FormatDeltaBatch, ms...)
	in.Read = files(map[string]string{"a.go": base(), "b.go": base(), "c.go": base(), "bin.dat": "\x00\x01", "run.sh": base()})
	return in
}

func fileOf(fs []session.FileChange, path string) *session.FileChange {
	for i := range fs {
		if fs[i].Path == path {
			return &fs[i]
		}
	}
	return nil
}

func resolveAll(t *testing.T, a *Analysis, choice func(cf session.ConflictDetected) string) Result {
	t.Helper()
	var rs []session.ConflictResolved
	for _, cf := range a.Conflicts {
		r, err := a.Resolve(cf.ConflictID, choice(cf), "")
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return output(t, a, rs...)
}

// Two members edit one function differently: the conflict comes from their real diffs and
// the chosen side lands in Result.Files, whole, as that member recorded it.
func TestRealHunkConflict(t *testing.T) {
	a1 := writer("sa-1", 5, gitMod("a.go", 12, "if x == nil { return }"))
	a1.Capsule.PatchSuggestions = []protocols.PatchSuggestion{{Diff: change("b.go", 3, "CLAIMED")}} // a claim, not its work
	a2 := claiming(writer("sa-2", 6, gitMod("a.go", 12, "x = defaultX()")))
	a := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, a1, a2))
	if len(a.Conflicts) != 1 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	cf := a.Conflicts[0]
	if cf.Kind != KindHunk || cf.File != "a.go" || cf.Lines.String() != "12" || !strings.Contains(cf.Sides[0].Value.(string), "+if x == nil { return }") ||
		!strings.Contains(cf.Sides[1].Value.(string), "+x = defaultX()") || !slices.Equal(cf.Choices, []string{"sa-1", "sa-2", "none", ChooseEdit}) {
		t.Fatalf("conflict %+v", cf)
	}
	if !slices.Contains(a.Notes, "sa-1's capsule claims patches for b.go; it really changed a.go") || len(a.Notes) != 1 {
		t.Errorf("notes %q", a.Notes)
	}
	for _, choice := range []string{"sa-1", "sa-2", "none"} {
		r, err := a.Resolve("cf-1", choice, "")
		if err != nil {
			t.Fatal(err)
		}
		res := output(t, a, r)
		if strings.Contains(fmt.Sprint(res.Batch.Patches), "CLAIMED") || fileOf(res.Files, "b.go") != nil {
			t.Errorf("%s: a capsule's claim was used: %+v", choice, res.Files)
		}
		if choice == "none" {
			if len(res.Files) != 0 || len(res.Batch.Patches) != 0 || res.Files == nil {
				t.Errorf("none: files %+v patches %+v", res.Files, res.Batch.Patches)
			}
			continue
		}
		want := a.member(choice).Changes.Files[0]
		if len(res.Files) != 1 || res.Files[0] != want || res.Sources["a.go"] != choice {
			t.Errorf("%s: files %+v sources %v", choice, res.Files, res.Sources)
		}
		got := apply(t, res.Batch.Patches, map[string]string{"a.go": base()})
		if repl := map[string]string{"sa-1": "if x == nil { return }", "sa-2": "x = defaultX()"}[choice]; !strings.Contains(got["a.go"], "l11\n"+repl+"\nl13\n") {
			t.Errorf("%s: applied\n%s", choice, got["a.go"])
		}
	}
}

// Three members edit three files: a clean merge holding all three, each as recorded; two
// members editing one file apart combine into one merged diff.
func TestRealCleanMerge(t *testing.T) {
	a := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual,
		claiming(writer("sa-3", 7, gitMod("c.go", 20, "C"))), claiming(writer("sa-1", 5, gitMod("a.go", 5, "A"))), claiming(writer("sa-2", 6, gitMod("b.go", 30, "B")))))
	if len(a.Conflicts) != 0 || len(a.Notes) != 0 {
		t.Fatalf("conflicts %+v notes %q", a.Conflicts, a.Notes)
	}
	res := output(t, a)
	if res.Outcome != OutcomeSuccess || len(res.Files) != 3 || len(res.Batch.Patches) != 3 {
		t.Fatalf("result %+v", res)
	}
	for i, p := range []string{"a.go", "b.go", "c.go"} {
		if res.Files[i].Path != p || res.Sources[p] != fmt.Sprintf("sa-%d", i+1) || res.Files[i] != a.member(res.Sources[p]).Changes.Files[0] {
			t.Errorf("file %d: %+v from %s", i, res.Files[i], res.Sources[p])
		}
	}
	got := apply(t, res.Batch.Patches, map[string]string{"a.go": base(), "b.go": base(), "c.go": base()})
	if !strings.Contains(got["a.go"], "l4\nA\nl6") || !strings.Contains(got["b.go"], "l29\nB\nl31") || !strings.Contains(got["c.go"], "l19\nC\nl21") {
		t.Errorf("applied %q", got)
	}
	if !strings.Contains(res.Batch.Reasoning, "3 files really changed (0 beyond the text patches)") {
		t.Errorf("reasoning %q", res.Batch.Reasoning)
	}

	// One file, two members, apart (one of them also edits another spot that the other
	// made identically): one combined diff.
	a = analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual,
		claiming(writer("sa-1", 5, gitMods("a.go", map[int]string{5: "FIVE", 20: "TWENTY"}))),
		claiming(writer("sa-2", 6, gitMods("a.go", map[int]string{20: "TWENTY", 35: "X"})))))
	if len(a.Conflicts) != 0 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	res = output(t, a)
	f := fileOf(res.Files, "a.go")
	if len(res.Files) != 1 || f == nil || res.Sources["a.go"] != SourceMerged || f.Kind != session.ChangeModified || f.Added != 3 || f.Removed != 3 ||
		!strings.HasPrefix(f.Diff, "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ ") || f.OldMode != "100644" || f.NewMode != "100644" {
		t.Fatalf("merged %+v %v", res.Files, res.Sources)
	}
	got = apply(t, []session.Patch{{Path: "a.go", Diff: f.Diff}}, map[string]string{"a.go": base()})
	want := apply(t, res.Batch.Patches, map[string]string{"a.go": base()})
	if got["a.go"] != want["a.go"] || !strings.Contains(got["a.go"], "l4\nFIVE\nl6") || !strings.Contains(got["a.go"], "l19\nTWENTY\nl21") || !strings.Contains(got["a.go"], "l34\nX\nl36") {
		t.Errorf("merged diff applies to\n%s", got["a.go"])
	}
	checkHeaders(t, res.Batch.Patches)
}

// File-level cases: each either merges (no conflict) or is one file conflict whose every
// choice yields a result, the chosen side's changes taken whole.
func TestRealFileConflicts(t *testing.T) {
	cases := []struct {
		name    string
		m1, m2  []session.FileChange
		file    string // the conflict's file; "" = no conflict
		choices []string
		// merged: what Files holds without a conflict
		merged func(t *testing.T, res Result)
	}{
		{name: "modify vs delete", m1: []session.FileChange{gitMod("a.go", 3, "x")}, m2: []session.FileChange{gitDel("a.go")},
			file: "a.go", choices: []string{"sa-1", "sa-2", "none"}},
		{name: "add vs add, same", m1: []session.FileChange{gitAdd("n.go", "package n")}, m2: []session.FileChange{gitAdd("n.go", "package n")},
			merged: func(t *testing.T, res Result) {
				if len(res.Files) != 1 || res.Files[0].Kind != session.ChangeAdded || res.Sources["n.go"] != "sa-1" || len(res.Batch.Patches) != 1 {
					t.Errorf("files %+v sources %v", res.Files, res.Sources)
				}
				if got := apply(t, res.Batch.Patches, map[string]string{}); got["n.go"] != "package n\n" {
					t.Errorf("applied %q", got)
				}
			}},
		{name: "add vs add, different", m1: []session.FileChange{gitAdd("n.go", "package n")}, m2: []session.FileChange{gitAdd("n.go", "package m")},
			file: "n.go", choices: []string{"sa-1", "sa-2", "none"}},
		{name: "rename vs modify", m1: []session.FileChange{gitRename("a.go", "z.go")}, m2: []session.FileChange{gitMod("a.go", 7, "y")},
			file: "a.go", choices: []string{"sa-1", "sa-2", "none"}},
		{name: "two renames", m1: []session.FileChange{gitRename("a.go", "z.go")}, m2: []session.FileChange{gitRename("a.go", "y.go")},
			file: "a.go", choices: []string{"sa-1", "sa-2", "none"}},
		{name: "same rename", m1: []session.FileChange{gitRename("a.go", "z.go")}, m2: []session.FileChange{gitRename("a.go", "z.go")},
			merged: func(t *testing.T, res Result) {
				if len(res.Files) != 1 || res.Files[0].OldPath != "a.go" || res.Sources["z.go"] != "sa-1" || len(res.Batch.Patches) != 0 ||
					!strings.Contains(res.Batch.Reasoning, "1 file really changed (1 beyond the text patches)") {
					t.Errorf("files %+v sources %v reasoning %q", res.Files, res.Sources, res.Batch.Reasoning)
				}
			}},
		{name: "differing binaries", m1: []session.FileChange{gitBin("bin.dat", "a")}, m2: []session.FileChange{gitBin("bin.dat", "c")},
			file: "bin.dat", choices: []string{"sa-1", "sa-2", "none"}},
		{name: "binaries that cannot be told apart", m1: []session.FileChange{gitBin("bin.dat", "")}, m2: []session.FileChange{gitBin("bin.dat", "")},
			file: "bin.dat", choices: []string{"sa-1", "sa-2", "none"}},
		{name: "identical binaries", m1: []session.FileChange{gitBin("bin.dat", "a")}, m2: []session.FileChange{gitBin("bin.dat", "a")},
			merged: func(t *testing.T, res Result) {
				if len(res.Files) != 1 || !res.Files[0].Binary || res.Sources["bin.dat"] != "sa-1" || len(res.Batch.Patches) != 0 {
					t.Errorf("files %+v", res.Files)
				}
			}},
		{name: "mode vs mode", m1: []session.FileChange{gitMode("run.sh", "100755")}, m2: []session.FileChange{gitMode("run.sh", "100600")},
			file: "run.sh", choices: []string{"sa-1", "sa-2", "none"}},
		{name: "same mode", m1: []session.FileChange{gitMode("run.sh", "100755")}, m2: []session.FileChange{gitMode("run.sh", "100755")},
			merged: func(t *testing.T, res Result) {
				if len(res.Files) != 1 || res.Files[0].Kind != session.ChangeMode || res.Sources["run.sh"] != "sa-1" {
					t.Errorf("files %+v", res.Files)
				}
			}},
		{name: "mode and an edit combine", m1: []session.FileChange{gitMode("run.sh", "100755")}, m2: []session.FileChange{gitMod("run.sh", 9, "nine")},
			merged: func(t *testing.T, res Result) {
				f := fileOf(res.Files, "run.sh")
				if len(res.Files) != 1 || f.Kind != session.ChangeModified || f.OldMode != "100644" || f.NewMode != "100755" || res.Sources["run.sh"] != SourceMerged ||
					!strings.HasPrefix(f.Diff, "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n--- a/run.sh\n+++ b/run.sh\n@@ -6,7 +6,7 @@\n") {
					t.Errorf("files %+v", res.Files)
				}
				if len(res.Batch.Patches) != 1 || !strings.Contains(res.Batch.Reasoning, "(1 beyond the text patches)") {
					t.Errorf("patches %+v reasoning %q", res.Batch.Patches, res.Batch.Reasoning)
				}
			}},
		{name: "delete vs delete", m1: []session.FileChange{gitDel("a.go")}, m2: []session.FileChange{gitDel("a.go")},
			merged: func(t *testing.T, res Result) {
				if len(res.Files) != 1 || res.Files[0].Kind != session.ChangeDeleted {
					t.Errorf("files %+v", res.Files)
				}
				if got := apply(t, res.Batch.Patches, map[string]string{"a.go": base()}); len(got) != 0 {
					t.Errorf("applied %q", got)
				}
			}},
		{name: "cut diffs are taken whole", m1: []session.FileChange{cut(gitMod("a.go", 3, "x"))}, m2: []session.FileChange{cut(gitMod("a.go", 30, "y"))},
			file: "a.go", choices: []string{"sa-1", "sa-2", "none"}},
		{name: "an edit elsewhere stays", m1: []session.FileChange{gitMod("a.go", 3, "x"), gitMod("b.go", 9, "kept")}, m2: []session.FileChange{gitDel("a.go")},
			file: "a.go", choices: []string{"sa-1", "sa-2", "none"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m1, m2 := claiming(writer("sa-1", 5, tc.m1...)), claiming(writer("sa-2", 6, tc.m2...))
			a := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, m1, m2))
			if tc.file == "" {
				if len(a.Conflicts) != 0 {
					t.Fatalf("conflicts %+v", a.Conflicts)
				}
				tc.merged(t, output(t, a))
				return
			}
			if len(a.Conflicts) != 1 {
				t.Fatalf("conflicts %+v", a.Conflicts)
			}
			cf := a.Conflicts[0]
			if cf.Kind != KindFile || cf.File != tc.file || cf.Lines != nil || !slices.Equal(cf.Choices, tc.choices) || len(cf.Sides) != 2 || cf.Context == "" {
				t.Fatalf("conflict %+v", cf)
			}
			for i, sd := range cf.Sides {
				if v, ok := sd.Value.(string); !ok || v == "" || sd.SubagentID != fmt.Sprintf("sa-%d", i+1) {
					t.Errorf("side %d: %+v", i, sd)
				}
			}
			if _, err := a.Resolve(cf.ConflictID, "both", ""); err == nil || !strings.Contains(err.Error(), "cannot be combined") {
				t.Errorf("both: %v", err)
			}
			for _, choice := range tc.choices {
				r, err := a.Resolve(cf.ConflictID, choice, "")
				if err != nil {
					t.Fatal(err)
				}
				res := output(t, a, r)
				var want []session.FileChange
				for _, m := range []Member{m1, m2} {
					for _, f := range m.Changes.Files {
						// The chosen side's changes of the contested paths; every
						// uncontested change stays.
						contested := f.Path == tc.file || f.OldPath == tc.file
						if !contested || m.ID == choice {
							want = append(want, f)
						}
					}
				}
				slices.SortFunc(want, func(x, y session.FileChange) int { return strings.Compare(x.Path, y.Path) })
				if !slices.Equal(res.Files, want) {
					t.Errorf("%s: files\n%+v\nwant\n%+v", choice, res.Files, want)
				}
				for _, f := range res.Files {
					if owner := res.Sources[f.Path]; owner != choice && (f.Path == tc.file || f.OldPath == tc.file) {
						t.Errorf("%s: %s from %s", choice, f.Path, owner)
					}
				}
			}
		})
	}
}

// The capsule's claims against what really changed.
func TestRealCapsuleMismatch(t *testing.T) {
	cases := []struct {
		name   string
		claims []string // paths proposed by diff
		files  []session.FileChange
		want   string // "" = no note
	}{
		{"differ", []string{"a.go", "b.go"}, []session.FileChange{gitMod("a.go", 2, "x"), gitMod("c.go", 2, "y")},
			"sa-1's capsule claims patches for a.go, b.go; it really changed a.go, c.go"},
		// A capsule that claims nothing is not a mismatch (issue 27): no note.
		{"claims none", nil, []session.FileChange{gitMod("a.go", 2, "x")}, ""},
		{"changed nothing", []string{"a.go"}, nil, "sa-1's capsule claims patches for a.go; it really changed nothing"},
		{"agree", []string{"a.go"}, []session.FileChange{gitMod("a.go", 2, "x")}, ""},
		{"nothing either way", nil, nil, ""},
		{"a rename claimed by its old path", []string{"a.go"}, []session.FileChange{gitRename("a.go", "z.go")}, ""},
		{"a rename unclaimed", []string{"b.go"}, []session.FileChange{gitRename("a.go", "z.go")},
			"sa-1's capsule claims patches for b.go; it really changed a.go → z.go"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := writer("sa-1", 1, tc.files...)
			for _, p := range tc.claims {
				m.Capsule.PatchSuggestions = append(m.Capsule.PatchSuggestions, protocols.PatchSuggestion{Diff: change(p, 2, "claimed")})
			}
			other := claiming(writer("sa-2", 2, gitMod("b.go", 30, "B")))
			if tc.name == "differ" || tc.name == "a rename unclaimed" {
				other = claiming(writer("sa-2", 2, gitMod("c.go", 38, "C")))
			}
			a := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, m, other))
			var got []string
			for _, n := range a.Notes {
				if strings.Contains(n, "capsule") {
					got = append(got, n)
				}
			}
			if (tc.want == "" && len(got) != 0) || (tc.want != "" && !slices.Equal(got, []string{tc.want})) {
				t.Errorf("notes %q, want %q", got, tc.want)
			}
			res := output(t, a, a.Auto...)
			if strings.Contains(fmt.Sprint(res.Files), "claimed") {
				t.Errorf("a claim reached the output: %+v", res.Files)
			}
		})
	}
	// A recorded path that leaves the workspace is refused.
	m0 := claiming(writer("sa-1", 1, gitMod("a.go", 2, "x")))
	m0.Changes.Files = append(m0.Changes.Files, gitMod("../etc/passwd", 2, "x"))
	a0 := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, m0, claiming(writer("sa-2", 2))))
	if !slices.Contains(a0.Notes, "sa-1's change of ../etc/passwd left out: path ../etc/passwd leaves the workspace") {
		t.Errorf("notes %q", a0.Notes)
	}
	if res := output(t, a0); len(res.Files) != 1 {
		t.Errorf("files %+v", res.Files)
	}
	// Changes outside the workspace are named.
	m := claiming(writer("sa-1", 1, gitMod("a.go", 2, "x")))
	m.Changes.Outside = []string{"../lib/x.go"}
	a := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, m, claiming(writer("sa-2", 2))))
	if !slices.Contains(a.Notes, "sa-1 also changed files outside the workspace (../lib/x.go); they are never applied") {
		t.Errorf("notes %q", a.Notes)
	}
}

// Members on different bases: a base conflict per member not on the newest, unless rebased.
func TestRealBases(t *testing.T) {
	on := func(m Member, base, commit string) Member {
		m.Changes.Base, m.Changes.BaseCommit = base, commit
		return m
	}
	old := on(claiming(writer("sa-1", 5, gitMod("a.go", 5, "OLD"))), "base-1", blob("1"))
	mid := on(claiming(writer("sa-10", 6, gitMod("a.go", 30, "MID"))), "base-2", blob("2"))
	newer := on(claiming(writer("sa-2", 7, gitMod("b.go", 5, "NEW"))), "base-3", blob("3"))
	a := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, newer, mid, old))
	if len(a.Conflicts) != 2 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	for i, stale := range []string{"sa-1", "sa-10"} {
		cf := a.Conflicts[i]
		if cf.Kind != KindBase || cf.ConflictID != fmt.Sprintf("cf-%d", i+1) || !slices.Equal(cf.Choices, []string{stale, "sa-2", "none"}) ||
			cf.Sides[0].SubagentID != stale || cf.Sides[1].SubagentID != "sa-2" {
			t.Fatalf("conflict %d %+v", i, cf)
		}
		v := cf.Sides[0].Value.(string)
		if !strings.Contains(v, stale+" worked on base-") || !strings.Contains(v, "the newest base of cv-1 is base-3 (333333333333) (sa-2)") ||
			!strings.Contains(v, "The engine cannot rebase") || !strings.Contains(v, "modified a.go +1 −1") {
			t.Errorf("side %q", v)
		}
	}
	// Keep sa-1 as recorded, leave sa-10 out.
	r1, _ := a.Resolve("cf-1", "sa-1", "")
	r2, _ := a.Resolve("cf-2", "none", "")
	res := output(t, a, r1, r2)
	f := fileOf(res.Files, "a.go")
	if len(res.Files) != 2 || f == nil || res.Sources["a.go"] != "sa-1" || *f != old.Changes.Files[0] || fileOf(res.Files, "b.go") == nil {
		t.Fatalf("files %+v sources %v", res.Files, res.Sources)
	}
	if strings.Contains(fmt.Sprint(res.Batch.Patches), "MID") || !slices.Contains(res.Notes, "cf-2: sa-10's changes are left out (made on an older base)") {
		t.Errorf("patches %+v notes %q", res.Batch.Patches, res.Notes)
	}
	// Taking the newest side leaves the member out, too.
	r1, _ = a.Resolve("cf-1", "sa-2", "")
	if res := output(t, a, r1, r2); len(res.Files) != 1 || res.Files[0].Path != "b.go" {
		t.Errorf("files %+v", res.Files)
	}

	// A stale member's side chosen in a hunk conflict while its base conflict leaves it out.
	clash := on(claiming(writer("sa-3", 8, gitMod("a.go", 5, "CLASH"))), "base-3", blob("3"))
	a = analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, old, clash))
	if len(a.Conflicts) != 2 || a.Conflicts[0].Kind != KindBase || a.Conflicts[1].Kind != KindHunk {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	r1, _ = a.Resolve("cf-1", "none", "")
	r2, _ = a.Resolve("cf-2", "sa-1", "")
	res = output(t, a, r1, r2)
	if len(res.Files) != 0 || !slices.Contains(res.Notes, "cf-2: sa-1's side was chosen, but its changes are left out by its base conflict") {
		t.Errorf("files %+v notes %q", res.Files, res.Notes)
	}

	// Rebased members, members sharing a snapshot under two names, and a member that
	// changed nothing merge without a base conflict.
	rebased := old
	rebased.Rebased = true
	same := on(claiming(writer("sa-4", 9, gitMod("c.go", 5, "SAME"))), "base-2", blob("3"))
	idle := on(claiming(writer("sa-5", 9)), "base-1", blob("1"))
	a = analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, rebased, newer, same, idle))
	if len(a.Conflicts) != 0 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	if res := output(t, a); len(res.Files) != 3 || res.Sources["a.go"] != "sa-1" {
		t.Errorf("files %+v", res.Files)
	}
	// vote and consensus never merge: they note the bases.
	a = analyze(t, realInput(commands.StrategyConsensus, commands.ResolutionManual, old, on(claiming(writer("sa-2", 7, gitMod("a.go", 5, "OLD"))), "base-3", blob("3"))))
	if len(a.Conflicts) != 0 || !slices.Contains(a.Notes, "the change sets are on different bases (sa-1 on base-1 (111111111111); sa-2 on base-3 (333333333333)); they are compared as diffs") {
		t.Errorf("conflicts %+v notes %q", a.Conflicts, a.Notes)
	}
}

// vote compares normalised real change sets: two equal ones (told apart only by index
// lines, hunk context and capsule claims) outvote a third.
func TestRealVote(t *testing.T) {
	same := gitMod("a.go", 12, "fixed")
	renumbered := same
	renumbered.Diff = strings.Replace(strings.Replace(same.Diff, blob("1"), "abcdef0", 1), "@@ -9,7 +9,7 @@", "@@ -9,7 +9,7 @@ func Load()", 1)
	m1 := writer("sa-1", 9, same, gitAdd("n.go", "package n"))
	m2 := claiming(writer("sa-2", 8, gitAdd("n.go", "package n"), renumbered))
	m3 := claiming(writer("sa-3", 7, gitMod("a.go", 12, "broken"), gitAdd("n.go", "package n")))
	a := analyze(t, realInput(commands.StrategyVote, commands.ResolutionManual, m1, m2, m3))
	if len(a.Conflicts) != 0 || a.winner != "sa-2" || !slices.Contains(a.Notes, "sa-3 outvoted") || !slices.Contains(a.Notes, "2 of 3 votes agree; sa-2's result stands for them") {
		t.Fatalf("conflicts %+v winner %s notes %q", a.Conflicts, a.winner, a.Notes)
	}
	res := output(t, a)
	if len(res.Files) != 2 || res.Files[0] != renumbered || res.Sources["a.go"] != "sa-2" || res.Sources["n.go"] != "sa-2" {
		t.Errorf("files %+v sources %v", res.Files, res.Sources)
	}
	// A three-way split is a tie, shown by change sets.
	a = analyze(t, realInput(commands.StrategyVote, commands.ResolutionManual, m1, m3, claiming(writer("sa-4", 6, gitDel("a.go")))))
	if len(a.Conflicts) != 1 || a.Conflicts[0].Kind != KindVote {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	if v := fmt.Sprint(a.Conflicts[0].Sides[2].Value); !strings.Contains(v, "1 file (deleted a.go +0 −40): did sa-4") {
		t.Errorf("side %s", v)
	}
	r, _ := a.Resolve("cf-1", "sa-4", "")
	if res := output(t, a, r); len(res.Files) != 1 || res.Files[0].Kind != session.ChangeDeleted || res.Sources["a.go"] != "sa-4" {
		t.Errorf("files %+v", res.Files)
	}
	// Binaries that cannot be told apart never agree.
	b1, b2, b3 := claiming(writer("sa-1", 1, gitBin("bin.dat", ""))), claiming(writer("sa-2", 2, gitBin("bin.dat", ""))), claiming(writer("sa-3", 3, gitBin("bin.dat", "a")))
	if a := analyze(t, realInput(commands.StrategyVote, commands.ResolutionManual, b1, b2, b3)); len(a.Conflicts) != 1 {
		t.Errorf("untellable binaries agreed: %+v", a.Conflicts)
	}
	b1, b2, b3 = claiming(writer("sa-1", 1, gitBin("bin.dat", "a"))), claiming(writer("sa-2", 2, gitBin("bin.dat", "c"))), claiming(writer("sa-3", 3, gitBin("bin.dat", "a")))
	if a := analyze(t, realInput(commands.StrategyVote, commands.ResolutionManual, b1, b2, b3)); len(a.Conflicts) != 0 || a.winner != "sa-1" || !slices.Contains(a.Notes, "sa-2 outvoted") {
		t.Errorf("equal binaries: %+v %s", a.Conflicts, a.winner)
	}
	// consensus: equal change sets agree.
	a = analyze(t, realInput(commands.StrategyConsensus, commands.ResolutionManual, m1, m2))
	if len(a.Conflicts) != 0 {
		t.Errorf("consensus %+v", a.Conflicts)
	}
}

// A member whose changes could not be recorded is left out like a failed one.
func TestRealChangesError(t *testing.T) {
	broken := claiming(writer("sa-2", 6, gitMod("b.go", 3, "lost")))
	broken.Changes.Error = "git diff-tree: exit status 128"
	in := realInput(commands.StrategyMerge, commands.ResolutionManual, claiming(writer("sa-1", 5, gitMod("a.go", 3, "A"))), broken)
	a := analyze(t, in)
	if len(a.Conflicts) != 0 || !slices.Contains(a.Notes, "sa-2 left out: its changes could not be recorded (git diff-tree: exit status 128)") {
		t.Fatalf("conflicts %+v notes %q", a.Conflicts, a.Notes)
	}
	res := output(t, a)
	if res.Outcome != OutcomePartial || len(res.Files) != 1 || res.Files[0].Path != "a.go" {
		t.Errorf("outcome %s files %+v", res.Outcome, res.Files)
	}
	for _, d := range res.Doc.Members {
		if d.SubagentID == "sa-2" && d.Used {
			t.Error("sa-2 used")
		}
	}
	in.Strategy = commands.StrategyConsensus
	if a := analyze(t, in); a.Fatal == "" {
		t.Error("consensus without a member's changes")
	}
	in.Strategy = commands.StrategyFirstSuccess
	broken.Finished = 1
	in.Members[1] = broken
	if a := analyze(t, in); a.winner != "sa-1" {
		t.Errorf("first_success took %s", a.winner)
	}
}

// A read-only member's proposal and a writer's identical real hunk merge; the proposals
// also reach Files.
func TestRealWithProposals(t *testing.T) {
	reader := member("sa-1", 5, nil, "reads", change("a.go", 12, "same"), change("b.go", 4, "proposed"))
	w := claiming(writer("sa-2", 6, gitMod("a.go", 12, "same")))
	a := analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, reader, w))
	if len(a.Conflicts) != 0 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	res := output(t, a)
	if len(res.Files) != 2 || res.Sources["a.go"] != "sa-2" || *fileOf(res.Files, "a.go") != w.Changes.Files[0] || res.Sources["b.go"] != "sa-1" ||
		!strings.HasPrefix(fileOf(res.Files, "b.go").Diff, "diff --git a/b.go b/b.go\n--- a/b.go") {
		t.Errorf("files %+v sources %v", res.Files, res.Sources)
	}
	// Proposals alone: no Files, exactly as before.
	a = analyze(t, realInput(commands.StrategyMerge, commands.ResolutionManual, reader, member("sa-2", 6, nil, "x", change("c.go", 3, "c"))))
	if res := output(t, a); res.Files != nil || res.Sources != nil || strings.Contains(res.Batch.Reasoning, "really") {
		t.Errorf("files %+v", res.Files)
	}
}

// Properties over random real change sets: member order does not matter and the same input
// gives the same bytes, in every format.
func TestRealProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := func(k int) []session.FileChange {
		return []session.FileChange{
			gitMod("a.go", 4+7*r.IntN(5), fmt.Sprintf("m%d", k)),
			gitMod("b.go", 4+7*r.IntN(5), "shared"),
			gitAdd("n.go", []string{"package n", "package m"}[r.IntN(2)]),
			gitDel("c.go"),
			gitRename("c.go", "d.go"),
			gitBin("bin.dat", []string{"", "a", "c"}[r.IntN(3)]),
			gitMode("run.sh", []string{"100755", "100600"}[r.IntN(2)]),
			gitMod("run.sh", 4+7*r.IntN(5), "edit"),
		}
	}
	for iter := 0; iter < 150; iter++ {
		n := 2 + r.IntN(3)
		var ms []Member
		for k := 0; k < n; k++ {
			var fs []session.FileChange
			seen := map[string]bool{}
			for _, f := range pool(k) {
				if r.IntN(3) == 0 && !seen[f.Path] && !seen[f.OldPath] {
					fs = append(fs, f)
					seen[f.Path] = true
					if f.OldPath != "" {
						seen[f.OldPath] = true
					}
				}
			}
			m := writer(fmt.Sprintf("sa-%d", k+1), uint64(10+r.IntN(20)), fs...)
			if r.IntN(3) == 0 {
				m.Changes.Base, m.Changes.BaseCommit = "base-2", blob("2")
			}
			m.Rebased = r.IntN(4) == 0
			ms = append(ms, m)
		}
		st := []string{commands.StrategyMerge, commands.StrategyMerge, commands.StrategyVote, commands.StrategyConsensus, commands.StrategyFirstSuccess}[r.IntN(5)]
		if st == commands.StrategyVote && n < 3 {
			st = commands.StrategyMerge
		}
		out := func(ms []Member, format string) string {
			in := realInput(st, commands.ResolutionAutoAcceptLatest, ms...)
			in.Format = format
			a := analyze(t, in)
			res := output(t, a)
			b, _ := json.Marshal(struct {
				A  *Analysis
				C  []session.ConflictDetected
				R  Result
				Au []session.ConflictResolved
			}{a, a.Conflicts, res, a.Auto})
			return string(b)
		}
		for _, format := range []string{commands.FormatDeltaBatch, commands.FormatJSON, commands.FormatMarkdown} {
			first := out(ms, format)
			shuffled := slices.Clone(ms)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if again := out(shuffled, format); again != first {
				t.Fatalf("iter %d %s %s: order changed the output:\n%s\n%s", iter, st, format, first, again)
			}
			if again := out(ms, format); again != first {
				t.Fatalf("iter %d: not deterministic", iter)
			}
		}
		// Every choice of every conflict yields a result.
		a := analyze(t, realInput(st, commands.ResolutionManual, ms...))
		for _, cf := range a.Conflicts {
			for _, ch := range cf.Choices {
				m := map[string]session.ConflictResolved{}
				for _, o := range a.Conflicts {
					c := o.Choices[0]
					if o.ConflictID == cf.ConflictID {
						c = ch
					}
					rr, err := a.Resolve(o.ConflictID, c, "")
					if c == ChooseEdit {
						rr, err = a.ResolveEdit(o.ConflictID, "edited\n", "")
					}
					if err != nil {
						t.Fatal(err)
					}
					m[o.ConflictID] = rr
				}
				res, err := a.Output(m)
				if err != nil {
					t.Fatal(err)
				}
				paths := map[string]bool{}
				for _, f := range res.Files {
					if paths[f.Path] || res.Sources[f.Path] == "" {
						t.Fatalf("iter %d: %s twice or without a source: %+v %v", iter, f.Path, res.Files, res.Sources)
					}
					paths[f.Path] = true
				}
				// (checkHeaders reads positions of edits; an add or delete names line 0.)
				checkHeaders(t, slices.DeleteFunc(slices.Clone(res.Batch.Patches), func(p session.Patch) bool { return strings.Contains(p.Diff, " /dev/null\n") }))
			}
		}
	}
}
