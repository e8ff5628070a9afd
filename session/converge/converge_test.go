package converge

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// base is a 40-line file "l1\n".."l40\n".
func base() string {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

func files(m map[string]string) ReadFunc {
	return func(p string) ([]byte, error) {
		s, ok := m[p]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return []byte(s), nil
	}
}

// change writes a diff replacing line n (1-based) of base with repl, with 3 lines of context.
func change(file string, n int, repl ...string) string {
	var b strings.Builder
	from, to := max(1, n-3), min(40, n+3)
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", file, file, from, to-from+1, from, to-from+len(repl))
	for i := from; i <= to; i++ {
		if i == n {
			fmt.Fprintf(&b, "-l%d\n", i)
			for _, r := range repl {
				fmt.Fprintf(&b, "+%s\n", r)
			}
			continue
		}
		fmt.Fprintf(&b, " l%d\n", i)
	}
	return b.String()
}

// insert writes a zero-context diff inserting lines after line n.
func insert(file string, n int, lines ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n@@ -%d,0 +%d,%d @@\n", file, file, n, n+1, len(lines))
	for _, l := range lines {
		fmt.Fprintf(&b, "+%s\n", l)
	}
	return b.String()
}

func f64(x float64) *float64 { return &x }

func member(id string, seq uint64, conf *float64, summary string, diffs ...string) Member {
	c := &protocols.Capsule{Summary: summary, Confidence: conf}
	for _, d := range diffs {
		c.PatchSuggestions = append(c.PatchSuggestions, protocols.PatchSuggestion{Diff: d})
	}
	return Member{ID: id, Outcome: session.OutcomeSuccess, Capsule: c, Finished: seq}
}

func input(strategy, resolution, format string, ms ...Member) Input {
	return Input{ID: "cv-1", Strategy: strategy, Resolution: resolution, Format: format, Members: ms, FirstConflict: 1,
		Read: files(map[string]string{"a.go": base(), "b.go": base()})}
}

func analyze(t *testing.T, in Input) *Analysis {
	t.Helper()
	a, err := Analyze(in)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func output(t *testing.T, a *Analysis, rs ...session.ConflictResolved) Result {
	t.Helper()
	m := map[string]session.ConflictResolved{}
	for _, r := range append(slices.Clone(a.Auto), rs...) {
		m[r.ConflictID] = r
	}
	res, err := a.Output(m)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func apply(t *testing.T, patches []session.Patch, start map[string]string) map[string]string {
	t.Helper()
	cs, err := Plan(files(start), patches)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range start {
		out[k] = v
	}
	for _, c := range cs {
		if c.Delete {
			delete(out, c.Path)
		} else {
			out[c.Path] = string(c.Content)
		}
	}
	return out
}

func TestCheck(t *testing.T) {
	cases := []struct {
		strategy string
		ids      []string
		want     string
	}{
		{commands.StrategyMerge, []string{"sa-1", "sa-2"}, ""},
		{commands.StrategyMerge, []string{"sa-1", "sa-1"}, "sa-1 is named twice"},
		{commands.StrategyMerge, []string{"sa-1"}, "needs 2 or more"},
		{commands.StrategyVote, []string{"sa-1", "sa-2"}, "vote needs 3 or more subagents"},
		{commands.StrategyVote, []string{"sa-1", "sa-2", "sa-3"}, ""},
		{"majority", []string{"sa-1", "sa-2"}, "unknown strategy"},
	}
	for _, c := range cases {
		err := Check(c.strategy, c.ids)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%s, %v) = %v, want %q", c.strategy, c.ids, err, c.want)
		}
	}
	if _, err := Analyze(Input{ID: "cv-1", Strategy: commands.StrategyMerge, Members: []Member{{ID: "sa-1", Outcome: "success"}, {ID: "sa-2"}}}); err == nil {
		t.Error("Analyze accepted a running member")
	}
}

func TestMergeDisjointAndIdentical(t *testing.T) {
	shared := change("a.go", 20, "TWENTY")
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-1", 5, f64(0.8), "one", change("a.go", 5, "FIVE"), shared),
		member("sa-2", 6, f64(0.7), "two", shared, change("a.go", 35, "X", "Y"), change("b.go", 1, "B1"))))
	if len(a.Conflicts) != 0 || len(a.Review) != 0 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	res := output(t, a)
	if res.Outcome != OutcomeSuccess || res.Batch == nil || len(res.Batch.Patches) != 2 {
		t.Fatalf("result %+v", res)
	}
	if n := strings.Count(res.Batch.Patches[0].Diff, "\n@@ "); n != 3 {
		t.Errorf("a.go has %d hunks, want 3 (the shared one once):\n%s", n, res.Batch.Patches[0].Diff)
	}
	got := apply(t, res.Batch.Patches, map[string]string{"a.go": base(), "b.go": base()})
	if !strings.Contains(got["a.go"], "l4\nFIVE\nl6\n") || !strings.Contains(got["a.go"], "l19\nTWENTY\nl21\n") ||
		!strings.Contains(got["a.go"], "l34\nX\nY\nl36\n") || !strings.HasPrefix(got["b.go"], "B1\nl2\n") {
		t.Errorf("applied:\n%s", got["a.go"])
	}
	if res.Size == 0 || !strings.Contains(res.Batch.Reasoning, "merge of sa-1, sa-2") {
		t.Errorf("size %d reasoning %q", res.Size, res.Batch.Reasoning)
	}
}

func TestMergeConflictManual(t *testing.T) {
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatMarkdown,
		member("sa-1", 5, f64(0.8), "fix with a guard", change("a.go", 12, "if x == nil { return }")),
		member("sa-2", 9, f64(0.6), "fix with a default", change("a.go", 12, "x = defaultX()"), change("a.go", 30, "keep"))))
	if len(a.Conflicts) != 1 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	cf := a.Conflicts[0]
	if cf.ConflictID != "cf-1" || cf.Kind != KindHunk || cf.File != "a.go" || cf.Lines.String() != "12" || len(cf.Sides) != 2 {
		t.Errorf("conflict %+v", cf)
	}
	if s := cf.Sides[0]; s.SubagentID != "sa-1" || *s.Confidence != 0.8 || !strings.Contains(s.Value.(string), "+if x == nil { return }") {
		t.Errorf("side 0 %+v", s)
	}
	if !strings.Contains(cf.Context, "   12 │ l12") || !strings.Contains(cf.Context, "    9   l9") {
		t.Errorf("context:\n%s", cf.Context)
	}
	if len(a.Review) != 1 || a.Review[0].ConflictID != "cf-1" {
		t.Errorf("review %+v", a.Review)
	}
	if _, err := a.Output(nil); err == nil || !strings.Contains(err.Error(), "unresolved conflicts: cf-1") {
		t.Errorf("output before resolution: %v", err)
	}
	for choice, want := range map[string]string{
		"sa-9": "sa-9 is not a side of cf-1; choose sa-1, sa-2, none or edit",
		"both": "cannot both be applied: they change the same lines",
	} {
		if _, err := a.Resolve("cf-1", choice, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resolve %s: %v", choice, err)
		}
	}
	if _, err := a.Resolve("cf-7", "sa-1", ""); err == nil {
		t.Error("resolved an unknown conflict")
	}
	r, err := a.Resolve("cf-1", "sa-2", "defaults are safer")
	if err != nil || r.Method != commands.ResolutionManual || !slices.Equal(r.Overridden, []string{"sa-1"}) {
		t.Fatalf("resolve: %+v %v", r, err)
	}
	res := output(t, a, r)
	if res.Converged == nil || res.Converged.Format != commands.FormatMarkdown {
		t.Fatalf("result %+v", res)
	}
	md := res.Converged.Output
	for _, want := range []string{"# cv-1 · merge", "+x = defaultX()", "+keep", "cf-1 (hunk) → sa-2 by manual: defaults are safer"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "if x == nil") {
		t.Errorf("the overridden side is in the output:\n%s", md)
	}
	// none drops both sides, keeps the rest.
	res = output(t, a, session.ConflictResolved{ConflictID: "cf-1", Choice: "none", Method: "manual"})
	if strings.Contains(res.Converged.Output, "defaultX") || !strings.Contains(res.Converged.Output, "+keep") {
		t.Errorf("none:\n%s", res.Converged.Output)
	}
}

func TestMergeInsertionsBoth(t *testing.T) {
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-2", 5, nil, "adds a", insert("a.go", 10, "A1", "A2")),
		member("sa-1", 6, nil, "adds b", insert("a.go", 10, "B1"))))
	if len(a.Conflicts) != 1 || !slices.Equal(a.Choices("cf-1"), []string{"sa-1", "sa-2", "both", "none", ChooseEdit}) {
		t.Fatalf("conflicts %+v choices %v", a.Conflicts, a.Choices("cf-1"))
	}
	r, err := a.Resolve("cf-1", "both", "")
	if err != nil || len(r.Overridden) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	res := output(t, a, r)
	got := apply(t, res.Batch.Patches, map[string]string{"a.go": base()})
	if !strings.Contains(got["a.go"], "l10\nB1\nA1\nA2\nl11\n") {
		t.Errorf("both, in side order sa-1 then sa-2:\n%s\n%s", res.Batch.Patches[0].Diff, got["a.go"])
	}
}

func TestMergeFindings(t *testing.T) {
	m1 := member("sa-1", 3, f64(0.9), "s1")
	m1.Capsule.Findings = []protocols.Finding{{Severity: "high", Summary: "Nil deref in Load", FileRefs: []string{"a.go:12"}}, {Severity: "low", Summary: "typo", FileRefs: []string{"b.go:3"}}}
	m2 := member("sa-2", 4, f64(0.5), "s2")
	m2.Capsule.Findings = []protocols.Finding{{Severity: "medium", Summary: "nil deref in load.", FileRefs: []string{"a.go:12"}}, {Severity: "low", Summary: "Typo", FileRefs: []string{"b.go:3"}}}
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionPreferHigherConfidence, commands.FormatJSON, m1, m2))
	if len(a.Conflicts) != 1 || a.Conflicts[0].Kind != KindFinding || a.Conflicts[0].File != "a.go" || a.Conflicts[0].Lines.String() != "12" {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	if len(a.Auto) != 1 || a.Auto[0].Choice != "sa-1" || a.Auto[0].Method != commands.ResolutionPreferHigherConfidence || !slices.Equal(a.Auto[0].Overridden, []string{"sa-2"}) {
		t.Fatalf("auto %+v", a.Auto)
	}
	res := output(t, a)
	var doc Document
	if err := json.Unmarshal([]byte(res.Converged.Output), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) != 2 || doc.Findings[0].Severity != "high" || !slices.Equal(doc.Findings[1].Sources, []string{"sa-1", "sa-2"}) {
		t.Errorf("findings %+v", doc.Findings)
	}
	// both keeps both severities.
	r, err := a.Resolve("cf-1", "both", "")
	if err != nil {
		t.Fatal(err)
	}
	if res := output(t, a, r); strings.Count(res.Converged.Output, "eref in") != 2 {
		t.Errorf("both:\n%s", res.Converged.Output)
	}
}

func TestVote(t *testing.T) {
	pass := func(id string, seq uint64, status string) Member {
		m := member(id, seq, f64(0.7), "ran the tests")
		m.Capsule.Verification = &protocols.Verification{Status: status}
		return m
	}
	// 2 of 3 agree.
	a := analyze(t, input(commands.StrategyVote, commands.ResolutionManual, commands.FormatJSON,
		pass("sa-1", 5, "passed"), pass("sa-2", 6, "failed"), pass("sa-3", 4, "passed")))
	if len(a.Conflicts) != 0 || a.winner != "sa-3" || !slices.Contains(a.Notes, "sa-2 outvoted") {
		t.Fatalf("conflicts %+v winner %s notes %v", a.Conflicts, a.winner, a.Notes)
	}
	// A tie (one failed, the other two disagree) is a conflict.
	failed := pass("sa-3", 4, "passed")
	failed.Outcome, failed.Error = session.OutcomeTimeout, "deadline"
	a = analyze(t, input(commands.StrategyVote, commands.ResolutionAutoAcceptLatest, commands.FormatJSON,
		pass("sa-1", 5, "passed"), pass("sa-2", 6, "failed"), failed))
	if len(a.Conflicts) != 1 || a.Conflicts[0].Kind != KindVote || len(a.Conflicts[0].Sides) != 2 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	if !slices.Contains(a.Notes, "sa-3 timed out (timeout: deadline)") {
		t.Errorf("notes %v", a.Notes)
	}
	if len(a.Auto) != 1 || a.Auto[0].Choice != "sa-2" {
		t.Fatalf("auto_accept_latest %+v", a.Auto)
	}
	res := output(t, a)
	if res.Outcome != OutcomePartial || !strings.Contains(res.Converged.Output, `"subagent_id": "sa-2",
      "outcome": "success",
      "confidence": 0.7,
      "used": true`) {
		t.Errorf("result %s\n%s", res.Outcome, res.Converged.Output)
	}
	if _, err := a.Resolve("cf-1", "both", ""); err == nil {
		t.Error("both accepted for a vote")
	}
	// A 1-1-1 split is a three-way tie; none leaves no result.
	a = analyze(t, input(commands.StrategyVote, commands.ResolutionManual, commands.FormatMarkdown,
		member("sa-1", 1, nil, "A"), member("sa-2", 2, nil, "B"), member("sa-3", 3, nil, "C")))
	if len(a.Conflicts) != 1 || len(a.Conflicts[0].Sides) != 3 {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	r, _ := a.Resolve("cf-1", "none", "")
	if res := output(t, a, r); res.Outcome != OutcomeFailure {
		t.Errorf("none: %+v", res)
	}
}

func TestConsensus(t *testing.T) {
	// One low-confidence member breaks it.
	a := analyze(t, input(commands.StrategyConsensus, commands.ResolutionManual, commands.FormatJSON,
		member("sa-1", 1, f64(0.9), "The cache is stale"), member("sa-2", 2, f64(0.85), "the cache is stale."), member("sa-3", 3, f64(0.4), "The cache is stale")))
	if len(a.Conflicts) != 1 || a.Conflicts[0].Kind != KindConsensus {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	if s := a.Conflicts[0].Sides; s[0].SubagentID != "sa-1" || s[1].SubagentID != "sa-3" {
		t.Errorf("sides %+v", s)
	}
	// Agreement within 0.1: no conflict.
	a = analyze(t, input(commands.StrategyConsensus, commands.ResolutionManual, commands.FormatJSON,
		member("sa-1", 1, f64(0.9), "ok"), member("sa-2", 2, f64(0.82), "OK")))
	if len(a.Conflicts) != 0 || a.winner != "sa-1" {
		t.Errorf("conflicts %+v winner %s", a.Conflicts, a.winner)
	}
	// A different result with a side lacking confidence: prefer_higher_confidence falls back.
	a = analyze(t, input(commands.StrategyConsensus, commands.ResolutionPreferHigherConfidence, commands.FormatJSON,
		member("sa-1", 1, f64(0.9), "ok"), member("sa-2", 2, f64(0.9), "ok"), member("sa-3", 3, nil, "broken")))
	if len(a.Review) != 1 || !strings.Contains(a.Review[0].Reason, "sa-3 gave no confidence; falling back to manual review") || len(a.Auto) != 0 {
		t.Fatalf("review %+v auto %+v", a.Review, a.Auto)
	}
	r, _ := a.Resolve("cf-1", "sa-3", "it is broken")
	res := output(t, a, r)
	if !strings.Contains(res.Converged.Output, `"summary": "sa-3: broken"`) {
		t.Errorf("chosen dissent:\n%s", res.Converged.Output)
	}
	// A failed member is fatal to a consensus.
	failed := member("sa-2", 2, nil, "x")
	failed.Outcome = session.OutcomeFailure
	a = analyze(t, input(commands.StrategyConsensus, commands.ResolutionManual, commands.FormatJSON, member("sa-1", 1, nil, "x"), failed))
	if res := output(t, a); res.Outcome != OutcomeFailure || a.Fatal == "" {
		t.Errorf("fatal %q outcome %s", a.Fatal, res.Outcome)
	}
}

func TestFirstSuccess(t *testing.T) {
	failed := member("sa-2", 3, nil, "x")
	failed.Outcome = session.OutcomeFailure
	cancelled := member("sa-4", 9, nil, "x")
	cancelled.Outcome = session.OutcomeCancelled
	a := analyze(t, input(commands.StrategyFirstSuccess, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-1", 8, nil, "slow", change("a.go", 3, "S")), failed, member("sa-3", 5, nil, "fast", change("a.go", 3, "F")), cancelled))
	if len(a.Conflicts) != 0 || a.winner != "sa-3" {
		t.Fatalf("conflicts %+v winner %s", a.Conflicts, a.winner)
	}
	for _, want := range []string{"sa-1 ignored: sa-3 succeeded first", "sa-4 ignored: sa-3 succeeded first", "sa-2 failed (failure)"} {
		if !slices.Contains(a.Notes, want) {
			t.Errorf("notes %v lack %q", a.Notes, want)
		}
	}
	res := output(t, a)
	if res.Outcome != OutcomeSuccess || len(res.Batch.Patches) != 1 || !strings.Contains(res.Batch.Patches[0].Diff, "+F\n") {
		t.Errorf("result %+v", res.Batch)
	}
}

func TestAutoAcceptLatest(t *testing.T) {
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionAutoAcceptLatest, commands.FormatDeltaBatch,
		member("sa-1", 20, nil, "late", change("a.go", 7, "LATE")), member("sa-2", 10, nil, "early", change("a.go", 7, "EARLY"))))
	if len(a.Conflicts) != 1 || len(a.Auto) != 1 || a.Auto[0].Choice != "sa-1" || !slices.Equal(a.Auto[0].Overridden, []string{"sa-2"}) ||
		!strings.Contains(a.Auto[0].Note, "finished last") {
		t.Fatalf("conflicts %+v auto %+v", a.Conflicts, a.Auto)
	}
	res := output(t, a)
	if !strings.Contains(res.Batch.Patches[0].Diff, "+LATE") || strings.Contains(res.Batch.Patches[0].Diff, "EARLY") {
		t.Errorf("%s", res.Batch.Patches[0].Diff)
	}
}

func TestPlaybookOps(t *testing.T) {
	book := []session.PlaybookEntry{{ID: "ctx-1", Section: "warnings", Content: "The cache is not thread-safe"}, {ID: "ctx-2", Section: "patterns", Content: "old"}}
	m1 := member("sa-1", 1, nil, "one")
	m1.Capsule.DownstreamContext = "### Downstream Context\n- Key Interfaces Introduced: `Load(ctx)` in a.go\n- Warnings: the cache is not thread-safe.\n- Assumptions: none\n- UPDATE ctx-2: use functional options\n- TAG ctx-1 helpful\n"
	m2 := member("sa-2", 2, nil, "two")
	m2.Capsule.DownstreamContext = "- Key Interfaces Introduced: `load(ctx)`   in a.go\n- UPDATE ctx-2: use a config struct\n- REMOVE ctx-9\n### Gotchas\n- tests need TZ=UTC\n  (or they fail at midnight)\n"
	in := input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch, m1, m2)
	in.Playbook = book
	a := analyze(t, in)
	if len(a.Conflicts) != 1 || a.Conflicts[0].Kind != KindPlaybook || !strings.Contains(a.Conflicts[0].Context, "ctx-2 [patterns] old") {
		t.Fatalf("conflicts %+v", a.Conflicts)
	}
	if !slices.Contains(a.Notes, "sa-2 Downstream Context: REMOVE names playbook entry ctx-9, which does not exist; left out") {
		t.Errorf("notes %v", a.Notes)
	}
	r, _ := a.Resolve("cf-1", "sa-2", "")
	res := output(t, a, r)
	var got []string
	for _, op := range res.Batch.Operations {
		got = append(got, fmt.Sprintf("%s %s %s %s %v", op.Type, op.BulletID, op.Section, op.Content, op.Metadata))
	}
	want := []string{
		"TAG ctx-1   map[helpful:2]",
		"UPDATE ctx-2  use a config struct map[]",
		"ADD cv-1-b1 gotchas tests need TZ=UTC (or they fail at midnight) map[sources:[sa-2]]",
		"ADD cv-1-b2 key_interfaces_introduced `Load(ctx)` in a.go map[sources:[sa-1 sa-2]]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestBadPatches(t *testing.T) {
	a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatDeltaBatch,
		member("sa-1", 1, nil, "x", "--- a/x.go\n+++ b/x.go\n@@ ... @@\n", "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1,1 +1,1 @@\n-a\n+b\n", "not a diff at all\x1b[2J"),
		member("sa-2", 2, nil, "y", change("a.go", 2, "ok"))))
	if len(a.Notes) != 3 || !strings.Contains(a.Notes[0], "sa-1 patch 1 left out: not a unified diff") || !strings.Contains(a.Notes[1], "leaves the workspace") {
		t.Errorf("notes %q", a.Notes)
	}
	res := output(t, a)
	if res.Outcome != OutcomeSuccess || len(res.Batch.Patches) != 1 {
		t.Errorf("%+v", res.Batch)
	}
}

func TestPlan(t *testing.T) {
	start := map[string]string{"a.go": base()}
	// Lines were added above since the patch was made: it still fits, shifted.
	shifted := map[string]string{"a.go": "new1\nnew2\n" + base()}
	got := apply(t, []session.Patch{{Path: "a.go", Diff: change("a.go", 20, "T")}}, shifted)
	if !strings.Contains(got["a.go"], "l19\nT\nl21") {
		t.Errorf("shifted:\n%s", got["a.go"])
	}
	// Create and delete.
	got = apply(t, []session.Patch{
		{Path: "n.go", Diff: "--- /dev/null\n+++ b/n.go\n@@ -0,0 +1,2 @@\n+package n\n+// new\n"},
		{Path: "a.go", Diff: "--- a/a.go\n+++ /dev/null\n@@ -1,40 +0,0 @@\n" + strings.ReplaceAll("-"+strings.TrimSuffix(base(), "\n"), "\n", "\n-") + "\n"},
	}, start)
	if got["n.go"] != "package n\n// new\n" || got["a.go"] != "" {
		t.Errorf("create/delete: %q", got)
	}
	if _, ok := got["a.go"]; ok {
		t.Error("a.go not deleted")
	}
	// A stale patch: the second hunk no longer fits; nothing is returned.
	stale := map[string]string{"a.go": strings.Replace(base(), "l30\n", "changed\n", 1)}
	diff := change("a.go", 5, "F") + strings.SplitN(change("a.go", 30, "T"), "\n", 3)[2]
	cs, err := Plan(files(stale), []session.Patch{{Path: "a.go", Diff: diff}})
	var he *HunkError
	if cs != nil || err == nil || !errorsAs(err, &he) || he.Hunk != 2 || he.Path != "a.go" || !strings.Contains(err.Error(), `line 30 is "changed", the patch expects "l30"`) {
		t.Errorf("stale: %v %v", cs, err)
	}
	// Creating a file that exists, and editing one that does not.
	if _, err := Plan(files(start), []session.Patch{{Path: "a.go", Diff: "--- /dev/null\n+++ b/a.go\n@@ -0,0 +1 @@\n+x\n"}}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("create existing: %v", err)
	}
	if _, err := Plan(files(start), []session.Patch{{Path: "z.go", Diff: change("z.go", 3, "x")}}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("edit missing: %v", err)
	}
}

func errorsAs(err error, he **HunkError) bool {
	e, ok := err.(*HunkError)
	*he = e
	return ok
}

// Properties of merge over random disjoint edits: member order does not matter, the output
// is byte-identical for the same input, and applying it equals applying each member's
// patches in turn.
func TestMergeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		// Lines 4..37 in steps of 7 are far enough apart that contexts never touch.
		slots := []int{4, 11, 18, 25, 32}
		r.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		n := 2 + r.IntN(3)
		var ms []Member
		used := 0
		for k := 0; k < n; k++ {
			var diffs []string
			for j := 0; j < 1+r.IntN(2) && used < len(slots); j++ {
				repl := []string{fmt.Sprintf("m%d-%d", k, j)}
				if r.IntN(2) == 0 {
					repl = append(repl, "extra")
				}
				diffs = append(diffs, change("a.go", slots[used], repl...))
				used++
			}
			// Sometimes repeat another member's exact change: identical hunks merge.
			if k > 0 && r.IntN(3) == 0 && len(ms[0].Capsule.PatchSuggestions) > 0 {
				diffs = append(diffs, ms[0].Capsule.PatchSuggestions[0].Diff)
			}
			ms = append(ms, member(fmt.Sprintf("sa-%d", k+1), uint64(10+k), nil, "s", diffs...))
		}
		out := func(ms []Member) Result {
			a := analyze(t, input(commands.StrategyMerge, commands.ResolutionManual, commands.FormatJSON, ms...))
			if len(a.Conflicts) != 0 {
				t.Fatalf("iter %d: disjoint edits conflict: %+v", iter, a.Conflicts)
			}
			return output(t, a)
		}
		first := out(ms)
		shuffled := slices.Clone(ms)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again := out(shuffled); again.Converged.Output != first.Converged.Output {
			t.Fatalf("iter %d: order changed the output", iter)
		}
		if again := out(ms); again.Converged.Output != first.Converged.Output {
			t.Fatalf("iter %d: not deterministic", iter)
		}
		checkHeaders(t, first.Doc.Patches)
		merged := apply(t, first.Doc.Patches, map[string]string{"a.go": base()})
		seq := map[string]string{"a.go": base()}
		for _, m := range ms {
			for _, ps := range m.Capsule.PatchSuggestions {
				if strings.Contains(seq["a.go"], hunkMarker(ps.Diff)) {
					continue // an identical change another member already made
				}
				seq = apply(t, []session.Patch{{Path: "a.go", Diff: ps.Diff}}, seq)
			}
		}
		if merged["a.go"] != seq["a.go"] {
			t.Fatalf("iter %d: merged\n%s\nsequential\n%s", iter, merged["a.go"], seq["a.go"])
		}
	}
}

// hunkMarker is the first added line of a diff.
func hunkMarker(diff string) string {
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			return l[1:] + "\n"
		}
	}
	return "\x00"
}

// checkHeaders: a rendered patch is a valid unified diff whose hunks are ordered, do not
// overlap, and whose new positions follow from the changes above them.
func checkHeaders(t *testing.T, ps []session.Patch) {
	t.Helper()
	for _, p := range ps {
		fs, _, err := gitdiff.Parse(strings.NewReader(p.Diff))
		if err != nil || len(fs) != 1 {
			t.Fatalf("%s: %v", p.Diff, err)
		}
		delta, prevEnd := int64(0), int64(0)
		for _, fr := range fs[0].TextFragments {
			if err := fr.Validate(); err != nil {
				t.Fatalf("%v in\n%s", err, p.Diff)
			}
			// An empty range names the line before it.
			oldAt, newAt := fr.OldPosition, fr.NewPosition
			if fr.OldLines == 0 {
				oldAt++
			}
			if fr.NewLines == 0 {
				newAt++
			}
			if oldAt < prevEnd || newAt-oldAt != delta {
				t.Fatalf("hunk %s out of place (delta %d, previous end %d) in\n%s", fr.Header(), delta, prevEnd, p.Diff)
			}
			delta += fr.NewLines - fr.OldLines
			prevEnd = oldAt + fr.OldLines
		}
	}
}

// TestMatrix runs every strategy × resolution × format on members that disagree, resolving
// what is left for review with each conflict's first side, and checks the output's shape.
func TestMatrix(t *testing.T) {
	members := func() []Member {
		a := member("sa-1", 5, f64(0.9), "guard", change("a.go", 12, "A"))
		b := member("sa-2", 7, f64(0.5), "default", change("a.go", 12, "B"))
		c := member("sa-3", 6, nil, "guard", change("a.go", 12, "A"))
		return []Member{a, b, c}
	}
	for _, st := range []string{commands.StrategyMerge, commands.StrategyVote, commands.StrategyConsensus, commands.StrategyFirstSuccess} {
		for _, rs := range []string{commands.ResolutionManual, commands.ResolutionAutoAcceptLatest, commands.ResolutionPreferHigherConfidence} {
			for _, ft := range []string{commands.FormatJSON, commands.FormatMarkdown, commands.FormatDeltaBatch} {
				t.Run(st+"/"+rs+"/"+ft, func(t *testing.T) {
					a := analyze(t, input(st, rs, ft, members()...))
					wantConflicts := map[string]int{commands.StrategyMerge: 1, commands.StrategyVote: 0, commands.StrategyConsensus: 1, commands.StrategyFirstSuccess: 0}[st]
					if len(a.Conflicts) != wantConflicts {
						t.Fatalf("%d conflicts, want %d: %+v", len(a.Conflicts), wantConflicts, a.Conflicts)
					}
					if len(a.Auto)+len(a.Review) != len(a.Conflicts) {
						t.Fatalf("auto %d + review %d != %d conflicts", len(a.Auto), len(a.Review), len(a.Conflicts))
					}
					if rs == commands.ResolutionManual && len(a.Auto) != 0 {
						t.Errorf("manual resolved on its own: %+v", a.Auto)
					}
					if rs == commands.ResolutionAutoAcceptLatest && len(a.Review) != 0 {
						t.Errorf("auto_accept_latest left %+v", a.Review)
					}
					var manual []session.ConflictResolved
					for _, r := range a.Review {
						res, err := a.Resolve(r.ConflictID, a.Choices(r.ConflictID)[0], "first side")
						if err != nil {
							t.Fatal(err)
						}
						manual = append(manual, res)
					}
					res := output(t, a, manual...)
					again := output(t, a, manual...)
					if res.Outcome != OutcomeSuccess {
						t.Errorf("outcome %s notes %v", res.Outcome, res.Notes)
					}
					switch ft {
					case commands.FormatJSON:
						var d Document
						if err := json.Unmarshal([]byte(res.Converged.Output), &d); err != nil || d.ConvergenceID != "cv-1" || res.Size != len(res.Converged.Output) {
							t.Errorf("json %v size %d", err, res.Size)
						}
						if again.Converged.Output != res.Converged.Output {
							t.Error("not deterministic")
						}
					case commands.FormatMarkdown:
						if !strings.HasPrefix(res.Converged.Output, "# cv-1 · "+st) || res.Size != len(res.Converged.Output) {
							t.Errorf("markdown %q", res.Converged.Output)
						}
					case commands.FormatDeltaBatch:
						if res.Batch == nil || res.Converged != nil || len(res.Batch.Patches) != 1 || res.Size == 0 {
							t.Fatalf("batch %+v", res.Batch)
						}
						if _, err := Plan(files(map[string]string{"a.go": base()}), res.Batch.Patches); err != nil {
							t.Errorf("the batch does not apply: %v", err)
						}
					}
				})
			}
		}
	}
}
