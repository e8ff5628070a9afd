package live

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// accept submits lines to a live session and fails the test on any rejection; it returns
// the last reply.
func accept(t *testing.T, x *Orchestrator, lines ...string) Reply {
	t.Helper()
	var r Reply
	for _, l := range lines {
		var err error
		if r, err = x.Submit(context.Background(), l); err != nil || r.Rejected {
			t.Fatalf("%s: %+v %v", l, r, err)
		}
	}
	return r
}

// changes returns the recorded change set of a subagent.
func (o outcome) changes(t *testing.T, id string) session.SubagentChanges {
	t.Helper()
	evs := o.find(session.TypeSubagentChanges, id)
	if len(evs) != 1 {
		t.Fatalf("%s: %d SubagentChanges", id, len(evs))
	}
	return evs[0].Data.(session.SubagentChanges)
}

// treeSum is a checksum of every file under dir (names, modes and bytes), .summit/ left out.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".summit" || rel == ".git" {
			return fs.SkipDir
		}
		info, _ := d.Info()
		fmt.Fprintf(h, "%s %v\n", rel, info.Mode())
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Two builders edit one function in parallel, one with replace and one with write_file: each
// keeps its own edit (A reads back A's line, not B's), the main workspace is untouched until
// /apply, and each recorded change set is the real one.
func TestIsolatedBuildersKeepTheirEdits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := treeSum(t, h.ws)
	o := h.run(`/delegate iso replace --agent-type builder
/delegate iso write --agent-type builder
/wait sa-1 sa-2
`)
	if after := treeSum(t, h.ws); after != before {
		t.Fatal("the main workspace changed while the builders ran")
	}
	reads := o.transcript("sa-1", session.TranscriptToolResult)
	if len(reads) != 2 || !strings.Contains(reads[1].Result, `println("hello from A")`) || strings.Contains(reads[1].Result, "from B") {
		t.Fatalf("A's read_file after B's write: %+v", reads)
	}
	a, b := o.changes(t, "sa-1"), o.changes(t, "sa-2")
	if len(a.Files) != 1 || a.Files[0].Path != "main.go" || a.Files[0].Kind != session.ChangeModified ||
		!strings.Contains(a.Files[0].Diff, `+	println("hello from A")`) || a.Added != 1 || a.Removed != 1 {
		t.Errorf("A's changes: %+v", a)
	}
	if len(b.Files) != 1 || !strings.Contains(b.Files[0].Diff, `+	println("hello from B")`) {
		t.Errorf("B's changes: %+v", b)
	}
	if a.Base != b.Base || a.BaseCommit == "" || a.ResultCommit == b.ResultCommit {
		t.Errorf("bases %s %s, results %s %s", a.Base, b.Base, a.ResultCommit, b.ResultCommit)
	}
	iso := o.find(session.TypeSubagentIsolated, "sa-1")
	if len(iso) != 1 || strings.HasPrefix(iso[0].Data.(session.SubagentIsolated).Worktree, h.ws) {
		t.Errorf("worktree inside the workspace or missing: %+v", iso)
	}
	// Replayed, the changes render without any worktree.
	if out := render.Render(o.state); !strings.Contains(out, "changes: 1 file +1 −1") || !strings.Contains(out, `+	println("hello from A")`) {
		t.Errorf("--print lacks the changes:\n%s", out)
	}
}

// /apply sa-N lands a subagent's change with a three-way merge against the workspace as it is
// now: a user edit elsewhere in the file merges cleanly; an overlapping edit is refused,
// named, and nothing is written; /undo restores the files byte for byte, and refuses when a
// file was edited since.
func TestApplyThreeWayAndUndo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("script_end")
	submit := func(line string) Reply {
		t.Helper()
		r, err := x.Submit(context.Background(), line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return r
	}
	submit("/delegate iso replace --agent-type builder")
	submit("/delegate iso tail --agent-type builder")
	submit("/wait sa-1 sa-2")
	// The user edits the workspace meanwhile: a line the builders did not touch.
	main := filepath.Join(h.ws, "main.go")
	os.WriteFile(main, []byte("package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n\nfunc user() {}\n"), 0o644)
	original, _ := os.ReadFile(main)
	if r := submit("/apply sa-1"); r.Rejected {
		t.Fatalf("/apply sa-1: %s", r.Error)
	}
	got, _ := os.ReadFile(main)
	if !strings.Contains(string(got), `println("hello from A")`) || !strings.Contains(string(got), "func user() {}") {
		t.Fatalf("the three-way apply:\n%s", got)
	}
	if r := submit("/apply sa-1"); !r.Rejected || !strings.Contains(r.Error, "already applied") {
		t.Errorf("applied twice: %+v", r)
	}
	// Undo restores byte for byte.
	if r := submit("/undo"); r.Rejected {
		t.Fatalf("/undo: %s", r.Error)
	}
	if got, _ := os.ReadFile(main); string(got) != string(original) {
		t.Fatalf("undo did not restore main.go:\n%s", got)
	}
	if r := submit("/undo"); !r.Rejected || !strings.Contains(r.Error, "nothing to undo") {
		t.Errorf("undo twice: %+v", r)
	}
	// An edit to the same line in the workspace: the apply opens a review (kind apply) in the
	// prompt and writes nothing; keeping the workspace's version lands nothing of main.go, and
	// taking sa-1's lands its version.
	os.WriteFile(main, []byte("package main\n\nfunc main() {\n\tprintln(\"hello, user\")\n}\n"), 0o644)
	conflicted, _ := os.ReadFile(main)
	r := submit("/apply sa-1")
	if r.Rejected || !strings.Contains(r.Output, "1 file overlaps") || !strings.Contains(r.Output, "/apply cv-1") {
		t.Fatalf("an overlapping apply: %+v", r)
	}
	if got, _ := os.ReadFile(main); string(got) != string(conflicted) {
		t.Fatal("an overlapping apply changed main.go")
	}
	var cf *session.Conflict
	x.View(func(st *session.State) { cf = st.Conflict("cf-1") })
	if cf == nil || cf.Kind != "apply" || cf.File != "main.go" || !cf.ReviewRequested || !strings.Contains(cf.Context, "<<<<<<<") ||
		!slices.Equal(cf.Choices, []string{"sa-1", "none", "edit"}) {
		t.Fatalf("the apply review: %+v", cf)
	}
	if r := submit("/apply cv-1"); !r.Rejected || !strings.Contains(r.Error, "waiting for review of cf-1") {
		t.Errorf("applied before review: %+v", r)
	}
	if r := submit("/resolve cf-1 --choose sa-1"); r.Rejected {
		t.Fatalf("/resolve: %s", r.Error)
	}
	if r := submit("/apply cv-1"); r.Rejected {
		t.Fatalf("/apply cv-1: %s", r.Error)
	}
	if got := string(readFile(t, main)); !strings.Contains(got, `println("hello from A")`) || strings.Contains(got, "hello, user") {
		t.Fatalf("after the reviewed apply:\n%s", got)
	}
	if r := submit("/undo"); r.Rejected {
		t.Fatalf("/undo: %s", r.Error)
	}
	if got := readFile(t, main); string(got) != string(conflicted) {
		t.Fatalf("undo of the reviewed apply:\n%s", got)
	}
	// Undo refuses when a file was edited after the apply.
	os.WriteFile(main, original, 0o644)
	if r := submit("/apply sa-2"); r.Rejected {
		t.Fatalf("/apply sa-2: %s", r.Error)
	}
	os.WriteFile(main, append(readFile(t, main), "// later\n"...), 0o644)
	if r := submit("/undo"); !r.Rejected || !strings.Contains(r.Error, "main.go") {
		t.Errorf("undo of an edited file: %+v", r)
	}
	if !strings.HasSuffix(string(readFile(t, main)), "// later\n") {
		t.Error("a refused undo changed the file")
	}
	// /diff shows the recorded change; /discard drops the worktree and keeps the record.
	if r := submit("/diff sa-1 main.go"); r.Rejected || !strings.Contains(r.Output, `+	println("hello from A")`) {
		t.Errorf("/diff: %+v", r)
	}
	if r := submit("/diff sa-1 nope.go"); !r.Rejected || !strings.Contains(r.Error, "no change to nope.go") {
		t.Errorf("/diff of an unchanged path: %+v", r)
	}
	wt := x.subs["sa-1"].wt.Path
	if r := submit("/discard sa-1"); r.Rejected {
		t.Fatalf("/discard: %s", r.Error)
	}
	if _, err := os.Stat(wt); err == nil {
		t.Error("the worktree is still there")
	}
	if r := submit("/diff sa-1"); r.Rejected {
		t.Errorf("/diff after /discard: %+v", r)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Deletions, renames, a binary file and a chmod made through the shell are all recorded with
// their kinds, and /apply lands them.
func TestShellChangeKinds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.approve = ApproveAll
	write(t, h.ws, "notes.txt", "notes\n")
	write(t, h.ws, "run.sh", "#!/bin/sh\necho run\n")
	o := h.run(`/delegate iso kinds --agent-type builder
/wait sa-1
/apply sa-1
`)
	ch := o.changes(t, "sa-1")
	kinds := map[string]string{}
	for _, f := range ch.Files {
		kinds[f.Path] = f.Kind
		if f.Path == "logo.bin" && !f.Binary {
			t.Errorf("logo.bin is not binary: %+v", f)
		}
		if f.Path == "notes.md" && f.OldPath != "notes.txt" {
			t.Errorf("rename: %+v", f)
		}
		if f.Path == "run.sh" && f.NewMode != "100755" {
			t.Errorf("chmod: %+v", f)
		}
	}
	want := map[string]string{"main_test.go": session.ChangeDeleted, "notes.md": session.ChangeRenamed, "run.sh": session.ChangeMode,
		"logo.bin": session.ChangeAdded, "main.go": session.ChangeModified}
	for p, k := range want {
		if kinds[p] != k {
			t.Errorf("%s: kind %q, want %q (all %v)", p, kinds[p], k, kinds)
		}
	}
	if r := o.rejections(); len(r) != 0 {
		t.Fatalf("rejections %+v", r)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "main_test.go")); err == nil {
		t.Error("the deletion was not applied")
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "notes.md")); string(b) != "notes\n" {
		t.Error("the rename was not applied")
	}
	if st, _ := os.Stat(filepath.Join(h.ws, "run.sh")); st == nil || st.Mode()&0o111 == 0 {
		t.Error("the chmod was not applied")
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "logo.bin")); string(b) != "PNG\x00\x01\x02" {
		t.Errorf("the binary file: %q", b)
	}
}

// From a worktree, the file tools cannot reach the main workspace, another subagent's
// worktree or .summit/: every attempt is refused and nothing outside changes.
func TestWorktreeEscapesRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	outside := filepath.Join(filepath.Dir(h.ws), "outside.txt")
	before := treeSum(t, h.ws)
	o := h.run(`/delegate iso replace --agent-type builder
/wait sa-1
/delegate iso escape --agent-type builder
/wait sa-2
`)
	results := o.transcript("sa-2", session.TranscriptToolResult)
	if len(results) != 4 {
		t.Fatalf("results %+v", results)
	}
	for _, r := range results {
		if !r.IsError || !(strings.Contains(r.Result, "outside the workspace") || strings.Contains(r.Result, ".summit/")) {
			t.Errorf("an escape was not refused: %+v", r)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret outside" {
		t.Errorf("outside.txt: %q", b)
	}
	if treeSum(t, h.ws) != before {
		t.Error("the main workspace changed")
	}
	if ch := o.changes(t, "sa-2"); len(ch.Files) != 0 {
		t.Errorf("sa-2 changed %+v", ch.Files)
	}
	// sa-1's worktree kept its own edit.
	if ch := o.changes(t, "sa-1"); len(ch.Files) != 1 || !strings.Contains(ch.Files[0].Diff, "hello from A") {
		t.Errorf("sa-1: %+v", ch)
	}
}

// In a git workspace the user's HEAD, index, refs, stash and working tree are identical
// before and after a whole session of isolated builders (changes recorded, nothing applied),
// and no worktree is left.
func TestUserGitStateUntouched(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = h.ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "one")
	write(t, h.ws, "stash.txt", "stash me")
	git("add", "stash.txt")
	git("stash", "-q")
	write(t, h.ws, "main_test.go", "package main // edited, not staged\n")
	write(t, h.ws, "untracked.txt", "new\n")
	state := func() string {
		idx, _ := os.ReadFile(filepath.Join(h.ws, ".git", "index"))
		refs := git("for-each-ref", "--format=%(refname) %(objectname)")
		var mine []string
		for _, l := range strings.Split(refs, "\n") {
			if !strings.HasPrefix(l, "refs/summit/") {
				mine = append(mine, l)
			}
		}
		return fmt.Sprintf("%s|%x|%s|%s|%s|%s", git("rev-parse", "HEAD"), sha256.Sum256(idx), strings.Join(mine, "\n"),
			git("stash", "list"), git("status", "--porcelain"), treeSum(t, h.ws))
	}
	before := state()
	o := h.run(`/delegate iso replace --agent-type builder
/delegate iso write --agent-type builder
/wait sa-1 sa-2
`)
	if after := state(); after != before {
		t.Errorf("the user's git state changed:\n%s\n---\n%s", before, after)
	}
	a := o.changes(t, "sa-1")
	if len(a.Files) != 1 || a.Files[0].Path != "main.go" {
		t.Errorf("in a git workspace the uncommitted edits are the base, so only main.go changed: %+v", a.Files)
	}
	if refs := git("for-each-ref", "refs/summit/"); refs != "" {
		t.Errorf("refs left after the session closed:\n%s", refs)
	}
	if wts := git("worktree", "list"); strings.Count(wts, "\n") != 1 {
		t.Errorf("worktrees left:\n%s", wts)
	}
	if !slices.Contains(strings.Split(string(readFile(t, filepath.Join(h.ws, ".git", "info", "exclude"))), "\n"), "/.summit/") {
		t.Error(".summit/ is not in .git/info/exclude")
	}
}

// Convergence on real changes: two builders edit one function differently, so merge reports
// the conflict from their real edits; the chosen side lands on /apply cv-1, and the main
// workspace is untouched until then.
func TestConvergeRealConflict(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := treeSum(t, h.ws)
	o := h.run(`/delegate iso replace --agent-type builder
/delegate iso write --agent-type builder
/converge sa-1 sa-2 --strategy merge
/wait cv-1
/resolve cf-1 --choose sa-2
/wait cv-1
`)
	cfs := o.find(session.TypeConflictDetected, "")
	if len(cfs) != 1 {
		t.Fatalf("conflicts %+v", cfs)
	}
	cf := cfs[0].Data.(session.ConflictDetected)
	if cf.File != "main.go" || !strings.Contains(fmt.Sprint(cf.Sides[0].Value), "hello from A") || !strings.Contains(fmt.Sprint(cf.Sides[1].Value), "hello from B") {
		t.Errorf("the conflict is not the real edits: %+v", cf)
	}
	if treeSum(t, h.ws) != before {
		t.Fatal("the workspace changed before /apply")
	}
	h2 := *h
	h2.rec = filepath.Join(t.TempDir(), "rec2.jsonl")
	x := h2.start(RealClock{})
	defer x.Close("quit")
	accept(t, x, "/delegate iso replace --agent-type builder", "/delegate iso write --agent-type builder",
		"/converge sa-1 sa-2 --strategy merge", "/wait cv-1", "/resolve cf-1 --choose sa-2", "/wait cv-1", "/apply cv-1")
	if got := string(readFile(t, filepath.Join(h.ws, "main.go"))); !strings.Contains(got, `println("hello from B")`) || strings.Contains(got, "from A") {
		t.Errorf("main.go after /apply cv-1:\n%s", got)
	}
}

// Three builders change different files: a clean merge lands all three.
func TestConvergeRealCleanMerge(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("quit")
	ctx := context.Background()
	accept(t, x, "/delegate iso file one --agent-type builder", "/delegate iso file two --agent-type builder",
		"/delegate iso file three --agent-type builder", "/converge sa-1 sa-2 sa-3 --strategy merge", "/wait cv-1", "/apply cv-1")
	for name, want := range map[string]string{"docs/one.txt": "one\n", "docs/two.txt": "two\n"} {
		if got := string(readFile(t, filepath.Join(h.ws, name))); got != want {
			t.Errorf("%s: %q", name, got)
		}
	}
	if got := string(readFile(t, filepath.Join(h.ws, "main.go"))); !strings.HasPrefix(got, "// Package main greets.\npackage main") {
		t.Errorf("main.go:\n%s", got)
	}
	book := func() int {
		n := 0
		x.View(func(st *session.State) { n = len(st.Playbook) })
		return n
	}
	if book() != 1 {
		t.Errorf("the playbook after /apply cv-1 has %d entries, want 1", book())
	}
	if r, _ := x.Submit(ctx, "/undo"); r.Rejected {
		t.Fatalf("/undo: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "docs")); err == nil {
		t.Error("undo left docs/")
	}
	// The playbook operations went back with the files, and cv-1 can be applied again.
	if book() != 0 {
		t.Errorf("the playbook after /undo has %d entries", book())
	}
	if r, _ := x.Submit(ctx, "/apply cv-1"); r.Rejected || book() != 1 {
		t.Errorf("re-apply: %+v, playbook %d", r, book())
	}
}

// Members on different bases: one builder started before the user edited the workspace, the
// other after. The older one's changes are brought onto the newest base with git (recorded as
// ChangesRebased), the convergence merges cleanly, and /apply keeps the user's edit.
func TestConvergeRebasesOlderMembers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	submit := func(l string) Reply { t.Helper(); return accept(t, x, l) }
	submit("/delegate iso replace --agent-type builder")
	submit("/wait sa-1")
	main := filepath.Join(h.ws, "main.go")
	os.WriteFile(main, []byte("package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n\nfunc user() {}\n"), 0o644)
	submit("/delegate iso file two --agent-type builder")
	submit("/converge sa-1 sa-2 --strategy merge")
	submit("/wait cv-1")
	submit("/apply cv-1")
	got := string(readFile(t, main))
	if !strings.Contains(got, `println("hello from A")`) || !strings.Contains(got, "func user() {}") {
		t.Errorf("main.go:\n%s", got)
	}
	if b := readFile(t, filepath.Join(h.ws, "docs", "two.txt")); string(b) != "two\n" {
		t.Errorf("docs/two.txt: %q", b)
	}
	x.Close("quit")
	o := h.read(0, x, "")
	rb := o.find(session.TypeChangesRebased, "sa-1")
	if len(rb) != 1 || rb[0].Data.(session.ChangesRebased).Base != "base-2" {
		t.Fatalf("rebased: %+v", rb)
	}
	if n := len(o.find(session.TypeConflictDetected, "")); n != 0 {
		t.Errorf("%d conflicts; the rebase should have cleared the base difference", n)
	}
}

// Choice edit: the reviewer writes the conflicted lines; the convergence records the text,
// and /apply lands it with the other members' hunks.
func TestConvergeEditChoice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("quit")
	ctx := context.Background()
	accept(t, x, "/delegate iso replace --agent-type builder", "/delegate iso write --agent-type builder",
		"/converge sa-1 sa-2 --strategy merge", "/wait cv-1")
	var cf *session.Conflict
	x.View(func(st *session.State) { cf = st.Conflict("cf-1") })
	if cf == nil || !strings.Contains(cf.EditTemplate, "<<<<<<< sa-1") || !strings.Contains(cf.EditTemplate, `println("hello from B")`) {
		t.Fatalf("edit template: %+v", cf)
	}
	if r, _ := x.Submit(ctx, `/resolve cf-1 --choose sa-1 --content "x"`); !r.Rejected || !strings.Contains(r.Error, "--content goes with --choose edit") {
		t.Errorf("--content without edit: %+v", r)
	}
	accept(t, x, `/resolve cf-1 --choose edit --content "\tprintln(\"hello from both\")\n" --note "by hand"`, "/wait cv-1", "/apply cv-1")
	if got := string(readFile(t, filepath.Join(h.ws, "main.go"))); got != "package main\n\nfunc main() {\n\tprintln(\"hello from both\")\n}\n" {
		t.Errorf("main.go:\n%s", got)
	}
	x.View(func(st *session.State) { cf = st.Conflict("cf-1") })
	if r := cf.Resolution; r == nil || r.Choice != "edit" || r.Content != "\tprintln(\"hello from both\")\n" || r.Note != "by hand" {
		t.Errorf("recorded resolution: %+v", r)
	}
}

// /apply cv-N that overlaps edits made to the workspace since opens a review too; taking the
// convergence's side lands its version of the file.
func TestApplyConvergenceReview(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("quit")
	submit := func(l string) Reply { t.Helper(); return accept(t, x, l) }
	for _, l := range []string{"/delegate iso replace --agent-type builder", "/delegate iso write --agent-type builder",
		"/converge sa-1 sa-2 --strategy merge", "/wait cv-1", "/resolve cf-1 --choose sa-2", "/wait cv-1"} {
		submit(l)
	}
	main := filepath.Join(h.ws, "main.go")
	os.WriteFile(main, []byte("package main\n\nfunc main() {\n\tprintln(\"hello, user\")\n}\n"), 0o644)
	if r := submit("/apply cv-1"); !strings.Contains(r.Output, "review cf-2") || !strings.Contains(r.Output, "/apply cv-2") {
		t.Fatalf("/apply cv-1: %+v", r)
	}
	if got := string(readFile(t, main)); !strings.Contains(got, "hello, user") {
		t.Fatal("the overlapping apply wrote main.go")
	}
	submit("/resolve cf-2 --choose cv-1")
	submit("/apply cv-2")
	if got := string(readFile(t, main)); !strings.Contains(got, `println("hello from B")`) || strings.Contains(got, "hello, user") {
		t.Errorf("main.go:\n%s", got)
	}
}

// The shell of an isolated subagent cannot write outside its worktree either: not the main
// workspace by its absolute path, not another subagent's worktree (Landlock).
func TestWorktreeShellConfined(t *testing.T) {
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: the shell cannot be confined here")
	}
	h := newHarness(t)
	h.approve = ApproveAll
	dir := t.TempDir()
	main := filepath.Join(h.ws, "main.go")
	other := filepath.Join(h.cache, "worktrees", "s-test", "sa-1", "main.go")
	// summit's own config directory is out of reach too.
	userConf := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", userConf)
	os.MkdirAll(filepath.Join(userConf, "summit"), 0o700)
	write(t, filepath.Join(userConf, "summit"), "config.yaml", "secret config\n")
	os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(`tapes:
  - name: first
    match: {task: "first"}
    steps:
      - tool: replace
        args: {path: main.go, old_string: "hello", new_string: "first"}
      - sleep: 2s
      - capsule: {summary: "first"}
  - name: escape
    match: {task: "escape"}
    steps:
      - tool: run_shell_command
        args: {command: "echo pwned > `+main+`"}
      - tool: run_shell_command
        args: {command: "echo pwned > `+other+`"}
      - tool: run_shell_command
        args: {command: "echo fine > inside.txt"}
      - tool: run_shell_command
        args: {command: "cat `+filepath.Join(h.ws, ".summit", "history")+`"}
      - tool: run_shell_command
        args: {command: "cat `+filepath.Join(userConf, "summit", "config.yaml")+`"}
      - capsule: {summary: "tried"}
`), 0o644)
	os.MkdirAll(filepath.Join(h.ws, ".summit"), 0o700)
	write(t, filepath.Join(h.ws, ".summit"), "history", "secret history\n")
	h.tapes = dir
	before := treeSum(t, h.ws)
	o := h.run(`/delegate first --agent-type builder
/delegate escape --agent-type builder
/wait sa-1 sa-2
`)
	res := o.transcript("sa-2", session.TranscriptToolResult)
	if len(res) != 5 || !res[0].IsError || !res[1].IsError || res[2].IsError || !res[3].IsError || strings.Contains(res[3].Result, "secret") ||
		!res[4].IsError || strings.Contains(res[4].Result, "secret") {
		t.Fatalf("results: %+v", res)
	}
	if treeSum(t, h.ws) != before {
		t.Error("the main workspace was written")
	}
	if ch := o.changes(t, "sa-1"); len(ch.Files) != 1 || strings.Contains(ch.Files[0].Diff, "pwned") {
		t.Errorf("sa-1's worktree was written: %+v", ch)
	}
	if ch := o.changes(t, "sa-2"); len(ch.Files) != 1 || ch.Files[0].Path != "inside.txt" {
		t.Errorf("sa-2's changes: %+v", ch)
	}
}
