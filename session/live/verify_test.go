package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
)

// submitOK submits a line and fails the test on a recording error (not on a rejection).
func submitOK(t *testing.T, x *Orchestrator, line string) Reply {
	t.Helper()
	r, err := x.Submit(context.Background(), line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return r
}

// /apply cv-N --verify runs the command on the merged result in a scratch worktree: a failure
// leaves the workspace untouched and is recorded (VerifyRan exit 1, then CommandRejected); a
// pass lands it; --force lands a failure and records it as forced; --dry-run lists the files
// with their diffs and changes nothing. The command sees the merged result, and what it
// writes stays in its scratch worktree.
func TestApplyVerifyAndDryRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	accept(t, x, "/delegate iso replace --agent-type builder", "/delegate iso write --agent-type builder",
		"/converge sa-1 sa-2 --strategy merge", "/wait cv-1", "/resolve cf-1 --choose sa-2", "/wait cv-1")
	main := filepath.Join(h.ws, "main.go")
	before := treeSum(t, h.ws)

	r := submitOK(t, x, `/apply cv-1 --verify "false"`)
	if !r.Rejected || !strings.Contains(r.Error, "nothing applied: the check failed: measured: ✗ `false` exit 1") || !strings.Contains(r.Error, "--force") {
		t.Fatalf("/apply --verify false: %+v", r)
	}
	if treeSum(t, h.ws) != before {
		t.Fatal("a failed verify changed the workspace")
	}
	r = submitOK(t, x, "/apply cv-1 --dry-run")
	if r.Rejected || !strings.Contains(r.Output, "would change 1 file") || !strings.Contains(r.Output, "main.go") ||
		!strings.Contains(r.Output, "+\tprintln(\"hello from B\")") || !strings.Contains(r.Output, "-\tprintln(\"hello\") // TODO: say more") {
		t.Fatalf("/apply cv-1 --dry-run: %+v", r)
	}
	r = submitOK(t, x, "/apply sa-1 --dry-run")
	if r.Rejected || !strings.Contains(r.Output, "+\tprintln(\"hello from A\")") {
		t.Fatalf("/apply sa-1 --dry-run: %+v", r)
	}
	if treeSum(t, h.ws) != before {
		t.Fatal("--dry-run changed the workspace")
	}
	r = submitOK(t, x, `/apply cv-1 --verify "echo made > by-verify && grep -q 'hello from B' main.go"`)
	if r.Rejected {
		t.Fatalf("/apply with a passing verify: %+v", r)
	}
	if got := string(readFile(t, main)); !strings.Contains(got, "hello from B") {
		t.Fatalf("main.go after a verified apply:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "by-verify")); err == nil {
		t.Fatal("the verify command wrote into the workspace")
	}
	accept(t, x, "/undo")
	r = submitOK(t, x, `/apply cv-1 --verify "echo broken; exit 3" --force`)
	if r.Rejected || !strings.Contains(string(readFile(t, main)), "hello from B") {
		t.Fatalf("--force: %+v", r)
	}
	x.Close("quit")
	o := h.read(0, x, "")
	var vs []session.VerifyRan
	for _, e := range o.find(session.TypeVerifyRan, "") {
		vs = append(vs, e.Data.(session.VerifyRan))
	}
	if len(vs) != 3 {
		t.Fatalf("%d VerifyRan, want 3: %+v", len(vs), vs)
	}
	if v := vs[0]; v.Target != "cv-1" || v.ExitCode != 1 || v.Outcome != session.VerifyFailed || v.Forced || v.Source != "flag" || v.Files[0] != "main.go" {
		t.Errorf("failed verify recorded as %+v", v)
	}
	if v := vs[1]; v.ExitCode != 0 || !v.Passed() || v.Forced {
		t.Errorf("passing verify recorded as %+v", v)
	}
	if v := vs[2]; v.ExitCode != 3 || !v.Forced || v.Output != "broken" {
		t.Errorf("forced verify recorded as %+v", v)
	}
	// The failure's line was rejected right after its measurement.
	for i, e := range o.events {
		if e.Type == session.TypeVerifyRan && e.Data.(session.VerifyRan).ExitCode == 1 {
			if next := o.events[i+1]; next.Type != session.TypeCommandRejected {
				t.Errorf("after the failed VerifyRan: %v", next)
			}
		}
	}
	if cv := o.state.Convergence("cv-1"); cv.Verify == nil || !cv.Verify.Forced || !cv.Applied {
		t.Errorf("cv-1 folded: verify %+v applied %v", cv.Verify, cv.Applied)
	}
}

// The config's verify: runs for every /apply (here of one subagent): its failure refuses it,
// recorded with source config; --verify overrides it.
func TestApplyConfigVerify(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("quit")
	x.o.Verify = provider.Verify{Command: "true", Agents: map[string]string{"builder": "test -f nothing-here"}}
	accept(t, x, "/delegate iso replace --agent-type builder", "/wait sa-1")
	before := treeSum(t, h.ws)
	if r := submitOK(t, x, "/apply sa-1"); !r.Rejected || !strings.Contains(r.Error, "`test -f nothing-here` exit 1") {
		t.Fatalf("/apply sa-1 with the builder's verify: %+v", r)
	}
	if treeSum(t, h.ws) != before {
		t.Fatal("a failed verify changed the workspace")
	}
	var v *session.VerifyRan
	x.View(func(st *session.State) { v = st.Subagent("sa-1").Verify })
	if v == nil || v.Source != "config" || v.Target != "sa-1" || v.Passed() {
		t.Fatalf("sa-1's verify: %+v", v)
	}
	accept(t, x, `/apply sa-1 --verify "grep -q 'hello from A' main.go"`)
	if got := string(readFile(t, filepath.Join(h.ws, "main.go"))); !strings.Contains(got, "hello from A") {
		t.Errorf("main.go:\n%s", got)
	}
}

// /diff cv-N works for an apply review: it shows the conflict-marked merge of each file and,
// once settled, what /apply would land; --dry-run and --verify work on the settled result.
func TestDiffAndVerifyApplyReview(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("quit")
	accept(t, x, "/delegate iso replace --agent-type builder", "/delegate iso write --agent-type builder",
		"/converge sa-1 sa-2 --strategy merge", "/wait cv-1", "/resolve cf-1 --choose sa-2", "/wait cv-1")
	main := filepath.Join(h.ws, "main.go")
	os.WriteFile(main, []byte("package main\n\nfunc main() {\n\tprintln(\"hello, user\")\n}\n"), 0o644)
	if r := accept(t, x, "/apply cv-1"); !strings.Contains(r.Output, "/apply cv-2") {
		t.Fatalf("/apply cv-1: %+v", r)
	}
	r := accept(t, x, "/diff cv-2")
	if !strings.Contains(r.Output, "cf-2 main.go (waiting for review)") || !strings.Contains(r.Output, "hello, user") ||
		!strings.Contains(r.Output, "hello from B") || !strings.Contains(r.Output, "<<<<<<< workspace") {
		t.Fatalf("/diff cv-2 before the review:\n%s", r.Output)
	}
	accept(t, x, "/resolve cf-2 --choose cv-1")
	r = accept(t, x, "/diff cv-2")
	if !strings.Contains(r.Output, "/apply cv-2 lands:") || !strings.Contains(r.Output, "-\tprintln(\"hello, user\")") {
		t.Fatalf("/diff cv-2 after the review:\n%s", r.Output)
	}
	before := treeSum(t, h.ws)
	if r := accept(t, x, "/apply cv-2 --dry-run"); !strings.Contains(r.Output, "+\tprintln(\"hello from B\")") {
		t.Fatalf("/apply cv-2 --dry-run: %+v", r)
	}
	if r := submitOK(t, x, `/apply cv-2 --verify "grep -q 'hello, user' main.go"`); !r.Rejected {
		t.Fatalf("a verify that fails on the settled result: %+v", r)
	}
	if treeSum(t, h.ws) != before {
		t.Fatal("the workspace changed")
	}
	accept(t, x, `/apply cv-2 --verify "grep -q 'hello from B' main.go"`)
	if got := string(readFile(t, main)); !strings.Contains(got, "hello from B") {
		t.Errorf("main.go:\n%s", got)
	}
}

// /diff cv-N works for a convergence without a DeltaBatch (here its output is json): it says
// why and shows what each member changed.
func TestDiffConvergenceWithoutBatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("quit")
	accept(t, x, "/delegate iso replace --agent-type builder", "/delegate iso write --agent-type builder",
		"/converge sa-1 sa-2 --strategy merge --output-format json", "/wait cv-1")
	r := accept(t, x, "/diff cv-1")
	for _, want := range []string{"cv-1 has no DeltaBatch", "sa-1 changed:", `+	println("hello from A")`, "sa-2 changed:", `+	println("hello from B")`} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("/diff cv-1 lacks %q:\n%s", want, r.Output)
		}
	}
	if r := submitOK(t, x, "/diff cv-1 nope.go"); !r.Rejected || !strings.Contains(r.Error, "changes no file nope.go") {
		t.Errorf("/diff cv-1 nope.go: %+v", r)
	}
}
