package live

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

func (o outcome) rejections() []session.CommandRejected {
	var out []session.CommandRejected
	for _, e := range o.find(session.TypeCommandRejected, "") {
		out = append(out, e.Data.(session.CommandRejected))
	}
	return out
}

func (o outcome) data(t session.Type) []session.Data {
	var out []session.Data
	for _, e := range o.find(t, "") {
		out = append(out, e.Data)
	}
	return out
}

// Two builders edit the same function differently: a conflict with both sides, the current
// file, and review; wrong resolutions are refused precisely; the right one completes the
// convergence and /apply writes the merged result and the playbook.
func TestConvergeManualResolveApply(t *testing.T) {
	h := newHarness(t)
	o := h.run(`/delegate variant a --agent-type builder
/delegate variant b --agent-type builder
/converge sa-1 sa-2 --strategy merge
/status cv-1
/apply cv-1
/wait cv-1
/status cv-1
/resolve cf-9 --choose sa-1
/resolve cf-1 --choose sa-7
/resolve cf-1 --choose both
/resolve cf-1 --choose sa-2 --note "the user greeting"
/resolve cf-1 --choose sa-1
/apply cv-1
/apply cv-1
`)
	checkSeq(t, o.events)
	for _, w := range []string{"cv-1 merge of sa-1, sa-2 · pending (waiting for sa-1, sa-2)", "review (cf-1 open)"} {
		if !strings.Contains(o.progress, w) {
			t.Errorf("progress lacks %q:\n%s", w, o.progress)
		}
	}
	// /status cv-1 lists its conflicts as a table, and what a choice also lands under it.
	for _, re := range []string{`\n +cf-1 +hunk main\.go:4 +open: /resolve cf-1 --choose sa-1\|sa-2\|none\|edit\n`,
		`\n +cf-1: --choose sa-1 also lands in main\.go: sa-2 @@ -1,3 \+1,4 @@\n`} {
		if !regexp.MustCompile(re).MatchString(o.progress) {
			t.Errorf("progress lacks %s:\n%s", re, o.progress)
		}
	}
	det := o.data(session.TypeConflictDetected)
	if len(det) != 1 {
		t.Fatalf("conflicts %+v", det)
	}
	cf := det[0].(session.ConflictDetected)
	if cf.ConflictID != "cf-1" || cf.Kind != "hunk" || cf.File != "main.go" || cf.Lines.String() != "4" || len(cf.Sides) != 2 {
		t.Errorf("conflict %+v", cf)
	}
	if a := cf.Sides[0]; a.SubagentID != "sa-1" || *a.Confidence != 0.8 || !strings.Contains(a.Value.(string), `+	println("hello, world")`) {
		t.Errorf("side a %+v", a)
	}
	if !strings.Contains(cf.Context, `    4 │ 	println("hello") // TODO: say more`) || !slices.Equal(cf.Choices, []string{"sa-1", "sa-2", "none", "edit"}) {
		t.Errorf("context %q choices %v", cf.Context, cf.Choices)
	}
	if rr := o.data(session.TypeConflictReviewRequest); len(rr) != 1 {
		t.Errorf("review requests %+v", rr)
	}
	if mr := o.data(session.TypeManualReviewRequired); len(mr) != 1 || !slices.Equal(mr[0].(session.ManualReviewRequired).ConflictIDs, []string{"cf-1"}) {
		t.Errorf("manual review %+v", mr)
	}
	var msgs []string
	for _, r := range o.rejections() {
		msgs = append(msgs, r.Error)
	}
	want := []string{
		"cv-1 is waiting for review of",      // /apply before the members ended is refused too
		"unknown conflict cf-9",              // a wrong id
		"sa-7 is not a side of cf-1; choose", // a wrong side
		"cannot both be applied",             // both where the sides overlap
		"cf-1 was already resolved by manual: sa-2",
		"cv-1 was already applied",
	}
	if len(msgs) != len(want) {
		t.Fatalf("rejections:\n%s", strings.Join(msgs, "\n"))
	}
	for i, w := range want {
		if i == 0 {
			if !strings.Contains(msgs[0], "waiting") {
				t.Errorf("rejection 0: %s", msgs[0])
			}
			continue
		}
		if !strings.Contains(msgs[i], w) {
			t.Errorf("rejection %d: %q lacks %q", i, msgs[i], w)
		}
	}
	if !strings.Contains(msgs[1], "did you mean cf-1") {
		t.Errorf("no suggestion: %s", msgs[1])
	}
	res := o.data(session.TypeConflictResolved)
	if len(res) != 1 {
		t.Fatalf("resolutions %+v", res)
	}
	if r := res[0].(session.ConflictResolved); r.Choice != "sa-2" || r.Method != "manual" || r.Note != "the user greeting" || !slices.Equal(r.Overridden, []string{"sa-1"}) {
		t.Errorf("resolution %+v", r)
	}
	done := o.data(session.TypeConvergenceComplete)
	if len(done) != 1 {
		t.Fatalf("complete %+v", done)
	}
	if d := done[0].(session.ConvergenceComplete); d.Outcome != "success" || d.ConflictCount != 1 || d.ResolutionCount != 1 || d.OutputSize == 0 {
		t.Errorf("complete %+v", d)
	}
	got, _ := os.ReadFile(filepath.Join(h.ws, "main.go"))
	if string(got) != "// Package main greets.\npackage main\n\nfunc main() {\n\tprintln(\"hello, \" + user())\n}\n" {
		t.Errorf("main.go after apply:\n%s", got)
	}
	cv := o.state.Convergence("cv-1")
	if !cv.Applied || !slices.Equal(cv.AppliedFiles, []string{"main.go"}) {
		t.Errorf("fold: applied %v %v", cv.Applied, cv.AppliedFiles)
	}
	var book []string
	for _, e := range o.state.Playbook {
		book = append(book, e.Section+": "+e.Content)
	}
	if !slices.Equal(book, []string{"integration_points: user() must be defined in user.go", "patterns_established: greetings go through println"}) {
		t.Errorf("playbook %q", book)
	}
	// Rejections make the run exit 1; nothing is left unresolved.
	if o.exit != ExitFailed {
		t.Errorf("exit %d", o.exit)
	}
	// replay --print shows the conflict, the choice and the patches.
	text := render.Render(o.state)
	for _, w := range []string{"conflict cf-1 hunk main.go:4", "resolved by manual: sa-2 — the user greeting", "applied to main.go", "+// Package main greets."} {
		if !strings.Contains(text, w) {
			t.Errorf("rendering lacks %q:\n%s", w, text)
		}
	}
}

// Three testers vote three ways: a tie, left for review, so the run exits 3. A vote of two
// is refused; a failed voter is reported.
func TestConvergeVoteTieUnresolved(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.run(`/delegate vote pass --agent-type tester
/delegate vote red --agent-type tester
/delegate vote flaky --agent-type tester
/converge sa-1 sa-2 sa-3 --strategy vote --output-format markdown
`)
	if o.exit != ExitUnresolved {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	det := o.data(session.TypeConflictDetected)
	if len(det) != 1 || det[0].(session.ConflictDetected).Kind != "vote" || len(det[0].(session.ConflictDetected).Sides) != 3 {
		t.Fatalf("conflicts %+v", det)
	}
	if len(o.data(session.TypeConvergenceComplete)) != 0 {
		t.Error("a convergence with an open conflict completed")
	}
	if !strings.Contains(o.progress, "cf-1") {
		t.Errorf("progress does not name the open conflict:\n%s", o.progress)
	}

	o = h.run(`/delegate vote pass --agent-type tester
/delegate vote red --agent-type tester
/delegate vote broken --agent-type tester
/converge sa-1 sa-2 --strategy vote
/converge sa-1 sa-2 sa-3 --strategy vote --conflict-resolution auto_accept_latest
/wait cv-1
`)
	if r := o.rejections(); len(r) != 1 || !strings.Contains(r[0].Error, "vote needs 3 or more subagents") {
		t.Errorf("rejections %+v", r)
	}
	det = o.data(session.TypeConflictDetected)
	if len(det) != 1 || len(det[0].(session.ConflictDetected).Sides) != 2 {
		t.Fatalf("conflicts %+v", det)
	}
	done := o.data(session.TypeConvergenceComplete)
	if len(done) != 1 || done[0].(session.ConvergenceComplete).Outcome != "partial" ||
		!slices.ContainsFunc(done[0].(session.ConvergenceComplete).Notes, func(n string) bool { return strings.HasPrefix(n, "sa-3 failed") }) {
		t.Errorf("complete %+v", done)
	}
	if o.exit != ExitFailed {
		t.Errorf("exit %d", o.exit)
	}
}

// A consensus broken by one low-confidence member, settled by prefer_higher_confidence.
func TestConvergeConsensusLowConfidence(t *testing.T) {
	h := newHarness(t)
	o := h.run(`/delegate consensus sure --agent-type analyzer
/delegate consensus fairly --agent-type analyzer
/delegate consensus unsure --agent-type analyzer
/converge sa-1 sa-2 sa-3 --strategy consensus --conflict-resolution prefer_higher_confidence --output-format json
/wait cv-1
`)
	if o.exit != ExitOK {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	det := o.data(session.TypeConflictDetected)
	if len(det) != 1 || det[0].(session.ConflictDetected).Kind != "consensus" {
		t.Fatalf("conflicts %+v", det)
	}
	r := o.data(session.TypeConflictResolved)
	if len(r) != 1 || r[0].(session.ConflictResolved).Choice != "sa-1" || r[0].(session.ConflictResolved).Method != "prefer_higher_confidence" ||
		!slices.Equal(r[0].(session.ConflictResolved).Overridden, []string{"sa-3"}) {
		t.Fatalf("resolution %+v", r)
	}
	out := o.data(session.TypeConvergedResult)
	if len(out) != 1 || !strings.Contains(out[0].(session.ConvergedResult).Output, `"summary": "sa-1: The TODO on line 4 is the only marker"`) {
		t.Errorf("result %+v", out)
	}
}

// first_success races three members: the fast one wins, the others are cancelled and that
// is logged.
func TestConvergeFirstSuccess(t *testing.T) {
	h := newHarness(t)
	o := h.run(`/delegate race 1 --agent-type retriever
/delegate sprint --agent-type retriever
/delegate race 3 --agent-type retriever
/converge sa-1 sa-2 sa-3 --strategy first_success --output-format markdown
/wait cv-1
`)
	for _, id := range []string{"sa-1", "sa-3"} {
		c := o.find(session.TypeSubagentCancelled, id)
		if len(c) != 1 || !strings.Contains(c[0].Data.(session.SubagentCancelled).Reason, "cv-1 (first_success): sa-2 succeeded first") {
			t.Errorf("%s cancelled %+v", id, c)
		}
	}
	done := o.data(session.TypeConvergenceComplete)
	if len(done) != 1 {
		t.Fatalf("complete %+v", done)
	}
	d := done[0].(session.ConvergenceComplete)
	if d.Outcome != "success" || !slices.Contains(d.Notes, "sa-1 ignored: sa-2 succeeded first") {
		t.Errorf("complete %+v", d)
	}
	if out := o.data(session.TypeConvergedResult); len(out) != 1 || !strings.Contains(out[0].(session.ConvergedResult).Output, "sa-2: sprinted") {
		t.Errorf("result %+v", out)
	}
	// Cancelled members make the run exit 1, as any failed subagent does.
	if o.exit != ExitFailed {
		t.Errorf("exit %d", o.exit)
	}
}

// A patch that no longer fits: the file changed after the convergence; /apply changes
// nothing and names the hunk.
func TestConvergeStalePatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.run(`/delegate variant a --agent-type builder
/delegate variant doc --agent-type builder
/converge sa-1 sa-2 --strategy merge
/wait cv-1
/delegate change the greeting --agent-type builder
/wait sa-3
/apply sa-3
/apply cv-1
`)
	r := o.rejections()
	if len(r) != 1 || !strings.Contains(r[0].Error, "nothing applied: main.go hunk 2 (@@ -3,3 +4,3 @@) no longer applies") {
		t.Fatalf("rejections %+v", r)
	}
	got, _ := os.ReadFile(filepath.Join(h.ws, "main.go"))
	if !strings.Contains(string(got), `println("hello, world") // TODO`) || strings.Contains(string(got), "Package main greets") {
		t.Errorf("main.go changed:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "NOTES.md")); err == nil {
		t.Error("NOTES.md was created by a failed apply")
	}
	if o.state.Convergence("cv-1").Applied {
		t.Error("fold says applied")
	}
}

// /apply needs acceptEdits, and refuses formats other than delta_batch.
func TestApplyPermissionAndFormat(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.run(`/delegate variant a --agent-type builder
/delegate variant doc --agent-type builder
/converge sa-1 sa-2 --strategy merge --output-format json
/wait cv-1
/apply cv-1
/apply cv-2
`)
	r := o.rejections()
	if len(r) != 2 || !strings.Contains(r[0].Error, "has no DeltaBatch: its output is json") || !strings.Contains(r[1].Error, "unknown convergence cv-2") {
		t.Fatalf("rejections %+v", r)
	}
}

// A convergence whose members are still running when the script ends: the session end
// cancels them, the convergence reports the failures, and nothing follows SessionEnded.
func TestConvergeAtSessionEnd(t *testing.T) {
	h := newHarness(t)
	x := h.start(RealClock{}) // real goroutines: the analysis races the session end
	ctx := context.Background()
	for _, line := range []string{"/delegate race 1 --agent-type retriever", "/delegate race 2 --agent-type retriever", "/converge sa-1 sa-2 --strategy merge"} {
		if r, err := x.Submit(ctx, line); err != nil || r.Rejected {
			t.Fatalf("%s: %+v %v", line, r, err)
		}
	}
	if err := x.Close("quit"); err != nil {
		t.Fatal(err)
	}
	o := h.read(0, x, "")
	last := o.events[len(o.events)-1]
	if last.Type != session.TypeSessionEnded {
		t.Errorf("last event %s", last.Type)
	}
	done := o.data(session.TypeConvergenceComplete)
	if len(done) != 1 || done[0].(session.ConvergenceComplete).Outcome != "failure" {
		t.Errorf("complete %+v", done)
	}
}
