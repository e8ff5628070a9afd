package gitws

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var ctx = context.Background()

func TestSnapshotIncludesEditsAndUntrackedNotIgnoredNorSummit(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	write(t, ws, "main.go", strings.Replace(mainGo, "hello", "hi", 1)) // uncommitted edit
	write(t, ws, "new.txt", "new\n")                                   // untracked
	write(t, ws, "debug.log", "ignored\n")                             // ignored
	write(t, ws, "build/out", "ignored\n")                             // ignored dir
	write(t, ws, ".summit/history.jsonl", "{}\n")                      // summit's own
	os.Remove(filepath.Join(ws, "pkg/util.go"))                        // uncommitted deletion
	gitT(t, ws, "add", "README.md")                                    // staged: same as worktree

	r := open(t, ws, "s1", t.TempDir())
	defer r.Close(ctx, false)
	b, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.ID != "base-1" {
		t.Fatalf("id %q", b.ID)
	}
	files := lsTree(t, r, b.Commit)
	want := []string{".gitignore", "README.md", "main.go", "new.txt"}
	if !slices.Equal(files, want) {
		t.Fatalf("snapshot files %v, want %v", files, want)
	}
	if got, _ := showFile(t, r, b.Commit, "main.go"); !strings.Contains(got, `"hi"`) {
		t.Fatalf("snapshot lacks the uncommitted edit:\n%s", got)
	}
	// Parent is HEAD; the ref is in place.
	if p := strings.TrimSpace(gitT(t, ws, "rev-parse", b.Commit+"^")); p != strings.TrimSpace(gitT(t, ws, "rev-parse", "HEAD")) {
		t.Fatalf("parent %s is not HEAD", p)
	}
	if ref := strings.TrimSpace(gitT(t, ws, "rev-parse", "refs/summit/s1/base-1")); ref != b.Commit {
		t.Fatalf("ref %s, commit %s", ref, b.Commit)
	}
	excl := read(t, ws, ".git/info/exclude")
	if strings.Count(excl, "/.summit/\n") != 1 {
		t.Fatalf("info/exclude:\n%s", excl)
	}
	// A second Open does not add the line again.
	r2 := open(t, ws, "s2", t.TempDir())
	r2.Close(ctx, false)
	if excl2 := read(t, ws, ".git/info/exclude"); excl2 != excl {
		t.Fatalf("info/exclude changed:\n%s", excl2)
	}
}

func TestUnchangedWorkspaceGivesSameBase(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	write(t, ws, "new.txt", "x\n")
	cache := t.TempDir()
	r := open(t, ws, "s1", cache)
	b1, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b1 != b2 {
		t.Fatalf("unchanged workspace gave two bases: %v %v", b1, b2)
	}
	write(t, ws, "new.txt", "y\n")
	b3, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b3.ID != "base-2" || b3.Commit == b1.Commit {
		t.Fatalf("changed workspace: %v", b3)
	}
	write(t, ws, "new.txt", "x\n")
	b4, _ := r.Snapshot(ctx)
	if b4.ID != "base-3" || b4.Commit != b1.Commit {
		// Same tree and parent, fixed dates: the same commit, under a new id.
		t.Fatalf("back to the first state: %v (first %v)", b4, b1)
	}
	// A reopened session continues from its refs.
	r.Close(ctx, true)
	r = open(t, ws, "s1", cache)
	defer r.Close(ctx, false)
	b5, _ := r.Snapshot(ctx)
	if b5 != b4 {
		t.Fatalf("reopened session: %v, want %v", b5, b4)
	}
}

// A whole cycle leaves HEAD, the index, refs outside refs/summit, the stash, the worktree list
// and the working tree exactly as they were.
func TestUserStateUntouchedByWholeCycle(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	write(t, ws, "main.go", strings.Replace(mainGo, "return 1", "return 2", 1))
	write(t, ws, "untracked.txt", "u\n")
	write(t, ws, "x.log", "ignored\n")
	gitT(t, ws, "add", "main.go") // something staged
	write(t, ws, "main.go", strings.Replace(mainGo, "return 1", "return 3", 1))
	before := userState(t, ws)
	worktreesBefore := gitT(t, ws, "worktree", "list", "--porcelain")
	// info/exclude gets its line at the first Open; after that, .git must not change but objects.
	open(t, ws, "first", t.TempDir()).Close(ctx, false)
	gitDirBefore := gitDirState(t, ws)
	gitDirBeforeSkip := gitDirState(t, ws, "worktrees", filepath.Join("refs", "summit"))

	cache := t.TempDir()
	r := open(t, ws, "cycle", cache)
	base, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := r.AddWorktree(ctx, base, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.AddWorktree(ctx, base, "sa-2")
	if err != nil {
		t.Fatal(err)
	}
	write(t, a.Root(), "a.txt", "from a\n")
	sh(t, b.Root(), "echo from b > b.txt && rm README.md")
	csA, err := r.Changes(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Changes(ctx, b); err != nil {
		t.Fatal(err)
	}
	if mid := userState(t, ws); mid != before {
		t.Fatalf("state changed before any apply:\n%s\nvs\n%s", before, mid)
	}
	applied, err := r.Apply(ctx, csA.Base, csA.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if read(t, ws, "a.txt") != "from a\n" {
		t.Fatal("apply did not write a.txt")
	}
	if err := r.Undo(ctx, applied); err != nil {
		t.Fatal(err)
	}
	// While the session runs, .git changes only in objects, worktrees/ and refs/summit/.
	if mid, pre := gitDirState(t, ws, "worktrees", filepath.Join("refs", "summit")), gitDirBeforeSkip; mid != pre {
		t.Fatalf(".git changed during the session:\nbefore:\n%s\nduring:\n%s", pre, mid)
	}
	if err := r.Close(ctx, false); err != nil {
		t.Fatal(err)
	}
	if after := userState(t, ws); after != before {
		t.Fatalf("user state changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if refs := gitT(t, ws, "for-each-ref", "refs/summit/"); refs != "" {
		t.Fatalf("refs left after Close: %s", refs)
	}
	if g := gitDirState(t, ws); g != gitDirBefore {
		t.Fatalf(".git changed beyond objects:\nbefore:\n%s\nafter:\n%s", gitDirBefore, g)
	}
	if wl := gitT(t, ws, "worktree", "list", "--porcelain"); wl != worktreesBefore {
		t.Fatalf("worktree list after Close:\n%s", wl)
	}
	if ents, _ := os.ReadDir(filepath.Join(ws, ".git", "worktrees")); len(ents) != 0 {
		t.Fatalf("worktree metadata left: %v", ents)
	}
	if exists(cache, "worktrees/cycle") || exists(cache, "sessions/cycle") {
		t.Fatal("session files left in the cache")
	}
}

// Two subagents on one base edit the same function differently; each keeps its own edit, and
// landing both is a conflict, not a silent overwrite.
func TestTwoWorktreesEditSameFunction(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	base2, _ := r.Snapshot(ctx)
	if base2 != base {
		t.Fatal("two delegations on an unchanged workspace must share a base")
	}
	a, err := r.AddWorktree(ctx, base, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.AddWorktree(ctx, base2, "sa-2")
	if err != nil {
		t.Fatal(err)
	}
	if a.Path == b.Path || within(ws, a.Path) || within(ws, b.Path) {
		t.Fatalf("worktrees %s %s must be distinct and outside %s", a.Path, b.Path, ws)
	}
	write(t, a.Root(), "main.go", strings.Replace(mainGo, `"hello"`, `"hello from A"`, 1))
	write(t, b.Root(), "main.go", strings.Replace(mainGo, `"hello"`, `"hello from B"`, 1))
	if !strings.Contains(read(t, a.Root(), "main.go"), "from A") || !strings.Contains(read(t, b.Root(), "main.go"), "from B") {
		t.Fatal("a worktree lost its own edit")
	}
	if read(t, ws, "main.go") != mainGo {
		t.Fatal("the main workspace changed")
	}
	csA, _ := r.Changes(ctx, a)
	csB, _ := r.Changes(ctx, b)
	if fa := fileOf(csA, "main.go"); fa == nil || !strings.Contains(fa.Diff, `+	return "hello from A"`) || fa.Added != 1 || fa.Removed != 1 {
		t.Fatalf("A's change set: %+v", csA)
	}
	if fb := fileOf(csB, "main.go"); fb == nil || !strings.Contains(fb.Diff, `+	return "hello from B"`) {
		t.Fatalf("B's change set: %+v", csB)
	}
	if _, err := r.Apply(ctx, csA.Base, csA.Result, "sa-1"); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, ws)
	_, err = r.Apply(ctx, csB.Base, csB.Result, "sa-2")
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != "main.go" {
		t.Fatalf("want a conflict on main.go, got %v", err)
	}
	if treeSum(t, ws) != before {
		t.Fatal("a conflicting apply wrote files")
	}
}

func TestShellChangesCaptured(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, err := r.AddWorktree(ctx, base, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, wt.Root(), `printf 'gen\n' > gen.txt && sed -i.bak 's/return 1/return 42/' main.go && rm main.go.bak && mkdir -p deep/er && echo x > deep/er/f && echo y > junk.log`)
	cs, err := r.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range cs.Files {
		paths = append(paths, string(f.Kind)+" "+f.Path)
	}
	want := []string{"added deep/er/f", "added gen.txt", "modified main.go"}
	if !slices.Equal(paths, want) {
		t.Fatalf("changes %v, want %v", paths, want)
	}
	if cs.Added != 3 || cs.Removed != 1 {
		t.Fatalf("+%d -%d", cs.Added, cs.Removed)
	}
	if got := strings.TrimSpace(gitT(t, ws, "rev-parse", "refs/summit/s/sa-1/result")); got != cs.Result {
		t.Fatalf("result ref %s, want %s", got, cs.Result)
	}
	// Nothing changed: an empty set with a result equal in tree to the base.
	wt2, _ := r.AddWorktree(ctx, base, "sa-2")
	cs2, err := r.Changes(ctx, wt2)
	if err != nil || len(cs2.Files) != 0 {
		t.Fatalf("unchanged worktree: %+v %v", cs2, err)
	}
}

func TestKinds(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	write(t, ws, "bin.dat", "\x00\x01\x02binary\x00")
	write(t, ws, "script.sh", "#!/bin/sh\necho hi\n")
	write(t, ws, "big.txt", strings.Repeat("line of text that is long enough\n", 40))
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, err := r.AddWorktree(ctx, base, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	root := wt.Root()
	must(t, os.Remove(filepath.Join(root, "README.md")))
	must(t, os.Rename(filepath.Join(root, "big.txt"), filepath.Join(root, "moved.txt")))
	write(t, root, "bin.dat", "\x00\x01\x03binary!\x00")
	must(t, os.Chmod(filepath.Join(root, "script.sh"), 0o755))
	must(t, os.Symlink("main.go", filepath.Join(root, "link")))
	cs, err := r.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	check := func(path string, kind Kind, binary bool) *FileChange {
		t.Helper()
		f := fileOf(cs, path)
		if f == nil {
			t.Fatalf("%s missing from %+v", path, cs.Files)
		}
		if f.Kind != kind || f.Binary != binary {
			t.Fatalf("%s: kind %s binary %v, want %s %v", path, f.Kind, f.Binary, kind, binary)
		}
		return f
	}
	check("README.md", Deleted, false)
	if f := check("moved.txt", Renamed, false); f.OldPath != "big.txt" {
		t.Fatalf("rename from %q", f.OldPath)
	}
	if f := check("bin.dat", Modified, true); !strings.Contains(f.Diff, "GIT binary patch") {
		t.Fatalf("binary diff: %q", f.Diff)
	}
	if f := check("script.sh", Mode, false); f.OldMode != "100644" || f.NewMode != "100755" {
		t.Fatalf("modes %s -> %s", f.OldMode, f.NewMode)
	}
	if f := check("link", Added, false); f.NewMode != "120000" {
		t.Fatalf("symlink mode %s", f.NewMode)
	}
	if len(cs.Files) != 5 {
		t.Fatalf("files %+v", cs.Files)
	}

	// All of it applies to the main workspace, and undo restores it byte for byte.
	before := treeSum(t, ws)
	a, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if exists(ws, "README.md") || exists(ws, "big.txt") || read(t, ws, "moved.txt") != read(t, root, "moved.txt") {
		t.Fatal("delete or rename not applied")
	}
	if fi, _ := os.Stat(filepath.Join(ws, "script.sh")); fi.Mode().Perm()&0o100 == 0 {
		t.Fatal("chmod not applied")
	}
	if l, _ := os.Readlink(filepath.Join(ws, "link")); l != "main.go" {
		t.Fatal("symlink not applied")
	}
	if read(t, ws, "bin.dat") != "\x00\x01\x03binary!\x00" {
		t.Fatal("binary not applied")
	}
	if after := treeSum(t, root); treeSum(t, ws) != after {
		t.Fatalf("workspace differs from the worktree after apply:\n%s\nvs\n%s", treeSum(t, ws), after)
	}
	if err := r.Undo(ctx, a); err != nil {
		t.Fatal(err)
	}
	if after := treeSum(t, ws); after != before {
		t.Fatalf("undo is not exact:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The user edited another part of the same file while the subagent worked: a clean three-way
// apply keeps both edits, and touches nothing else.
func TestApplyCleanThreeWay(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	write(t, wt.Root(), "main.go", strings.Replace(mainGo, `"hello"`, `"hello, world"`, 1))
	write(t, wt.Root(), "pkg/new.go", "package pkg\n")
	cs, err := r.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	userEdit := strings.Replace(mainGo, "return 1", "return 7", 1)
	write(t, ws, "main.go", userEdit)
	write(t, ws, "notes.txt", "user's untracked notes\n")
	a, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, ws, "main.go")
	if !strings.Contains(got, `"hello, world"`) || !strings.Contains(got, "return 7") {
		t.Fatalf("three-way merge lost an edit:\n%s", got)
	}
	if read(t, ws, "pkg/new.go") != "package pkg\n" || read(t, ws, "notes.txt") != "user's untracked notes\n" {
		t.Fatal("new file missing or user's file changed")
	}
	if !slices.Equal(a.Files, []string{"main.go", "pkg/new.go"}) || a.ID != "apply-1" {
		t.Fatalf("applied %+v", a)
	}
	for _, ref := range []string{"refs/summit/s/apply-1-pre", "refs/summit/s/apply-1-post"} {
		gitT(t, ws, "rev-parse", "--verify", ref)
	}
	if pre, _ := showFile(t, r, a.Pre, "main.go"); pre != userEdit {
		t.Fatal("apply-1-pre is not the workspace before the apply")
	}
	if err := r.Undo(ctx, a); err != nil {
		t.Fatal(err)
	}
	if read(t, ws, "main.go") != userEdit || exists(ws, "pkg/new.go") {
		t.Fatal("undo did not restore")
	}
}

func TestApplyConflictWritesNothing(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	write(t, wt.Root(), "main.go", strings.Replace(mainGo, `"hello"`, `"theirs"`, 1))
	write(t, wt.Root(), "clean.txt", "would apply cleanly\n")
	must(t, os.Remove(filepath.Join(wt.Root(), "pkg/util.go")))
	cs, _ := r.Changes(ctx, wt)
	write(t, ws, "main.go", strings.Replace(mainGo, `"hello"`, `"ours"`, 1))
	write(t, ws, "pkg/util.go", "package pkg\n\nfunc Util() { println() }\n") // modify vs delete
	before := treeSum(t, ws)
	_, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("want ConflictError, got %v", err)
	}
	if treeSum(t, ws) != before {
		t.Fatal("conflicting apply wrote files")
	}
	if refs := gitT(t, ws, "for-each-ref", "refs/summit/s/apply-1-pre"); refs != "" {
		t.Fatal("a conflicting apply recorded a pre-apply state")
	}
	if len(ce.Conflicts) != 2 {
		t.Fatalf("conflicts %+v", ce.Conflicts)
	}
	c := ce.Conflicts[0]
	if c.Path != "main.go" || !slices.Contains(c.Types, "contents") {
		t.Fatalf("conflict %+v", c)
	}
	if c.Base == nil || string(c.Base.Content) != mainGo || !strings.Contains(string(c.Ours.Content), `"ours"`) || !strings.Contains(string(c.Theirs.Content), `"theirs"`) {
		t.Fatal("conflict sides wrong")
	}
	for _, m := range []string{"<<<<<<< workspace", "||||||| base", "=======", ">>>>>>> sa-1", `return "ours"`, `return "theirs"`} {
		if !strings.Contains(c.Merged, m) {
			t.Fatalf("merged text lacks %q:\n%s", m, c.Merged)
		}
	}
	d := ce.Conflicts[1]
	if d.Path != "pkg/util.go" || !slices.Contains(d.Types, "modify/delete") || d.Theirs != nil || d.Ours == nil || d.Merged != "" {
		t.Fatalf("modify/delete conflict %+v", d)
	}
}

func TestUndoRefusesEditedFile(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	write(t, wt.Root(), "main.go", strings.Replace(mainGo, `"hello"`, `"x"`, 1))
	write(t, wt.Root(), "added.txt", "added\n")
	cs, _ := r.Changes(ctx, wt)
	a, err := r.Apply(ctx, cs.Base, cs.Result, "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, ws, "added.txt", "edited after the apply\n")
	write(t, ws, "unrelated.txt", "fine\n")
	before := treeSum(t, ws)
	err = r.Undo(ctx, a)
	var ee *EditedError
	if !errors.As(err, &ee) || !slices.Equal(ee.Files, []string{"added.txt"}) || !strings.Contains(err.Error(), "added.txt") {
		t.Fatalf("want EditedError naming added.txt, got %v", err)
	}
	if treeSum(t, ws) != before {
		t.Fatal("a refused undo changed files")
	}
	// Put the file back as the apply left it: undo works.
	write(t, ws, "added.txt", "added\n")
	if err := r.Undo(ctx, a); err != nil {
		t.Fatal(err)
	}
	if read(t, ws, "main.go") != mainGo || exists(ws, "added.txt") || read(t, ws, "unrelated.txt") != "fine\n" {
		t.Fatal("undo wrong")
	}
}

func TestNonGitWorkspace(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	write(t, ws, "a.txt", "a\n")
	write(t, ws, "dir/b.txt", "b\n")
	write(t, ws, ".summit/log", "x\n")
	cache := t.TempDir()
	r := open(t, ws, "s", cache)
	if !r.Private() {
		t.Fatal("not private")
	}
	base, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := lsTree(t, r, base.Commit); !slices.Equal(got, []string{"a.txt", "dir/b.txt"}) {
		t.Fatalf("snapshot %v", got)
	}
	if b2, _ := r.Snapshot(ctx); b2 != base {
		t.Fatal("unchanged non-git workspace gave a new base")
	}
	wt, err := r.AddWorktree(ctx, base, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, wt.Root(), "echo c > c.txt && rm a.txt")
	cs, err := r.Changes(ctx, wt)
	if err != nil || len(cs.Files) != 2 {
		t.Fatalf("%+v %v", cs, err)
	}
	write(t, ws, "dir/b.txt", "user edit\n")
	a, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if exists(ws, "a.txt") || read(t, ws, "c.txt") != "c\n" || read(t, ws, "dir/b.txt") != "user edit\n" {
		t.Fatal("apply wrong")
	}
	if err := r.Undo(ctx, a); err != nil {
		t.Fatal(err)
	}
	if read(t, ws, "a.txt") != "a\n" || exists(ws, "c.txt") {
		t.Fatal("undo wrong")
	}
	if err := r.Close(ctx, false); err != nil {
		t.Fatal(err)
	}
	if exists(ws, ".git") {
		t.Fatal(".git created in a non-git workspace")
	}
	if exists(ws, ".summit/tmp") {
		if ents, _ := os.ReadDir(filepath.Join(ws, ".summit/tmp")); len(ents) != 0 {
			t.Fatalf("staging left: %v", ents)
		}
	}
}

// A workspace in a subdirectory of a repository: the whole repository is in the worktree, the
// subagent is rooted at the subdirectory, and only changes under it count and land.
func TestSubdirectoryWorkspace(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ws := filepath.Join(repo, "pkg")
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	if wt.Root() != filepath.Join(wt.Path, "pkg") || !exists(wt.Path, "main.go") {
		t.Fatalf("root %s", wt.Root())
	}
	write(t, wt.Root(), "util.go", "package pkg\n\nfunc Util() int { return 1 }\n")
	write(t, wt.Root(), "../outside.txt", "outside\n")
	cs, err := r.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Files) != 1 || cs.Files[0].Path != "util.go" || !slices.Equal(cs.Outside, []string{"outside.txt"}) {
		t.Fatalf("%+v", cs)
	}
	a, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if exists(repo, "outside.txt") || !strings.Contains(read(t, ws, "util.go"), "return 1") || !slices.Equal(a.Files, []string{"util.go"}) {
		t.Fatalf("apply %+v", a)
	}
	if !strings.Contains(read(t, repo, ".git/info/exclude"), "/pkg/.summit/\n") {
		t.Fatal("workspace .summit not excluded")
	}
}

func TestHugeDiffIsCapped(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r, err := Open(ctx, ws, Options{SessionID: "s", CacheDir: t.TempDir(), MaxFileDiff: 4 << 10, MaxTotalDiff: 10 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	var big strings.Builder
	for i := range 2000 {
		big.WriteString(strings.Repeat("x", i%50) + "\n")
	}
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		write(t, wt.Root(), f, big.String())
	}
	write(t, wt.Root(), "e.txt", "small\n")
	cs, err := r.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Truncated || len(cs.Files) != 5 {
		t.Fatalf("truncated %v files %d", cs.Truncated, len(cs.Files))
	}
	total := 0
	for _, f := range cs.Files {
		if f.Path == "e.txt" && f.Added != 1 {
			t.Fatal("counts are of the full change")
		}
		if f.Path != "e.txt" && (!f.Truncated || !strings.Contains(f.Diff, TruncationMarker) || !strings.Contains(f.Diff, cs.Ref) || f.Added != 2000) {
			t.Fatalf("%s not capped: truncated %v, %d bytes, +%d", f.Path, f.Truncated, len(f.Diff), f.Added)
		}
		body, _, _ := strings.Cut(f.Diff, TruncationMarker)
		if len(body) > 4<<10 {
			t.Fatalf("%s: %d bytes over the file cap", f.Path, len(body))
		}
		total += len(body)
	}
	if total > 10<<10 {
		t.Fatalf("total %d over the cap", total)
	}
	// The ref keeps the full change.
	if full, _ := showFile(t, r, cs.Result, "a.txt"); full != big.String() {
		t.Fatal("result ref lacks the full content")
	}
}

func TestGitMissingOrTooOld(t *testing.T) {
	t.Parallel()
	_, err := Open(ctx, t.TempDir(), Options{SessionID: "s", CacheDir: t.TempDir(), Git: "summit-no-such-git"})
	if !errors.Is(err, ErrGitMissing) || !strings.Contains(err.Error(), "install git 2.38") {
		t.Fatalf("got %v", err)
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "oldgit")
	must(t, os.WriteFile(fake, []byte("#!/bin/sh\necho git version 2.37.1\n"), 0o755))
	_, err = Open(ctx, t.TempDir(), Options{SessionID: "s", CacheDir: t.TempDir(), Git: fake})
	if !errors.Is(err, ErrGitMissing) || !strings.Contains(err.Error(), "2.37.1") {
		t.Fatalf("got %v", err)
	}
}

func TestOpenRefusals(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	if _, err := Open(ctx, ws, Options{SessionID: "../x", CacheDir: t.TempDir()}); err == nil {
		t.Fatal("bad session id accepted")
	}
	if _, err := Open(ctx, ws, Options{SessionID: "s", CacheDir: filepath.Join(ws, "cache")}); err == nil {
		t.Fatal("cache dir inside the workspace accepted")
	}
	cache := t.TempDir()
	r := open(t, ws, "s", cache)
	defer r.Close(ctx, false)
	if _, err := Open(ctx, ws, Options{SessionID: "s", CacheDir: cache}); err == nil {
		t.Fatal("a session opened twice")
	}
	base, _ := r.Snapshot(ctx)
	if _, err := r.AddWorktree(ctx, base, "base-2"); err == nil {
		t.Fatal("reserved worktree name accepted")
	}
	if _, err := r.AddWorktree(ctx, base, "-x"); err == nil {
		t.Fatal("option-like worktree name accepted")
	}
	if _, err := r.Apply(ctx, "--output=/tmp/x", base.Commit, ""); err == nil {
		t.Fatal("option-like revision accepted")
	}
}

func TestRemoveWorktree(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	write(t, wt.Root(), "dirty.txt", "x\n")
	cs, _ := r.Changes(ctx, wt)
	if err := r.Remove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if exists(wt.Path, "") {
		t.Fatal("worktree dir left")
	}
	if strings.Contains(gitT(t, ws, "worktree", "list"), wt.Path) {
		t.Fatal("worktree still listed")
	}
	// The recorded change can still be applied after the discard.
	if _, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1"); err != nil || read(t, ws, "dirty.txt") != "x\n" {
		t.Fatalf("apply after remove: %v", err)
	}
}

// A failure halfway through writing rolls everything back: all files or none.
func TestApplyAllOrNothing(t *testing.T) {
	ws := newRepo(t)
	write(t, ws, "dir/a.txt", "a\n")
	write(t, ws, "dir/b.txt", "b\n")
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	root := wt.Root()
	write(t, root, "README.md", "changed\n")
	must(t, os.RemoveAll(filepath.Join(root, "dir")))
	write(t, root, "dir", "dir is a file now\n") // directory → file
	write(t, root, "new/deep/file.txt", "new\n")
	must(t, os.Chmod(filepath.Join(root, "main.go"), 0o755))
	cs, err := r.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, ws)
	for _, failAt := range []string{"main.go", "new/deep/file.txt", "dir"} {
		testHookPlace = func(p string) error {
			if p == failAt {
				return errors.New("injected failure")
			}
			return nil
		}
		_, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
		testHookPlace = nil
		if err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("fail at %s: %v", failAt, err)
		}
		if after := treeSum(t, ws); after != before {
			t.Fatalf("fail at %s: not rolled back:\nbefore:\n%s\nafter:\n%s", failAt, before, after)
		}
	}
	a, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if read(t, ws, "dir") != "dir is a file now\n" || read(t, ws, "new/deep/file.txt") != "new\n" {
		t.Fatal("apply wrong")
	}
	if err := r.Undo(ctx, a); err != nil {
		t.Fatal(err)
	}
	if after := treeSum(t, ws); after != before {
		t.Fatalf("undo not exact:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// A file the result adds where the user has an ignored file is not overwritten.
func TestApplyRefusesToOverwriteIgnoredFile(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	write(t, wt.Root(), ".gitignore", "build/\n") // the subagent stops ignoring *.log
	write(t, wt.Root(), "app.log", "subagent's\n")
	cs, _ := r.Changes(ctx, wt)
	write(t, ws, "app.log", "user's precious log\n")
	before := treeSum(t, ws)
	if _, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1"); err == nil || !strings.Contains(err.Error(), "app.log") {
		t.Fatalf("got %v", err)
	}
	if treeSum(t, ws) != before {
		t.Fatal("files written")
	}
}

func TestParallelChanges(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	var wts []*Worktree
	for i := range 4 {
		wt, err := r.AddWorktree(ctx, base, "sa-"+string(rune('1'+i)))
		if err != nil {
			t.Fatal(err)
		}
		write(t, wt.Root(), "own.txt", wt.Name+"\n")
		wts = append(wts, wt)
	}
	errs := make(chan error, len(wts))
	for _, wt := range wts {
		go func() {
			cs, err := r.Changes(ctx, wt)
			if err == nil && (len(cs.Files) != 1 || !strings.Contains(cs.Files[0].Diff, "+"+wt.Name)) {
				err = errors.New("wrong change set for " + wt.Name)
			}
			errs <- err
		}()
	}
	for range wts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestOddFileNames(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	names := []string{"with space.txt", "ünïcode/ファイル.txt", "tab\there.txt", "new\nline.txt", `quo"te.txt`, "-dash.txt"}
	for _, n := range names {
		write(t, wt.Root(), n, n+"\n")
	}
	cs, err := r.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if f := fileOf(cs, n); f == nil || f.Kind != Added || !strings.Contains(f.Diff, "+"+strings.Split(n, "\n")[0]) {
			t.Fatalf("%q: %+v", n, f)
		}
	}
	before := treeSum(t, ws)
	a, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if read(t, ws, n) != n+"\n" {
			t.Fatalf("%q not applied", n)
		}
	}
	if err := r.Undo(ctx, a); err != nil {
		t.Fatal(err)
	}
	if treeSum(t, ws) != before {
		t.Fatal("undo not exact")
	}
}

// A repository without commits, and a workspace that is itself a linked worktree of the user.
func TestUnbornHeadAndUserLinkedWorktree(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	gitT(t, ws, "init", "-q")
	write(t, ws, "a.txt", "a\n")
	r := open(t, ws, "s", t.TempDir())
	b, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out := gitT(t, ws, "rev-list", "--parents", "-n1", b.Commit); len(strings.Fields(out)) != 1 {
		t.Fatalf("snapshot of an unborn HEAD has parents: %s", out)
	}
	if _, err := gitTErr(ws, "rev-parse", "-q", "--verify", "HEAD"); err == nil {
		t.Fatal("HEAD was born")
	}
	if exists(ws, ".git/index") {
		t.Fatal("the user's index was created")
	}
	r.Close(ctx, false)

	repo := newRepo(t)
	linked := filepath.Join(t.TempDir(), "linked")
	gitT(t, repo, "worktree", "add", "-q", "-b", "feature", linked)
	write(t, linked, "main.go", strings.Replace(mainGo, "hello", "feature", 1))
	before := userState(t, linked)
	r = open(t, linked, "s", t.TempDir())
	b, err = r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := showFile(t, r, b.Commit, "main.go"); !strings.Contains(got, "feature") {
		t.Fatal("snapshot of a linked worktree lacks its edit")
	}
	wt, err := r.AddWorktree(ctx, b, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt.Root(), "x.txt", "x\n")
	cs, _ := r.Changes(ctx, wt)
	a, err := r.Apply(ctx, cs.Base, cs.Result, "")
	if err != nil || read(t, linked, "x.txt") != "x\n" {
		t.Fatal(err)
	}
	must(t, r.Undo(ctx, a))
	must(t, r.Close(ctx, false))
	if after := userState(t, linked); after != before {
		t.Fatalf("user state changed:\n%s\nvs\n%s", before, after)
	}
}

func gitTErr(dir string, args ...string) (string, error) {
	out, _, err := runGit(ctx, "git", gitCmd{dir: dir, args: args})
	return string(out), err
}

// Files the user ignores globally stay out of snapshots, as they stay out of git status.
func TestGlobalExcludesHonoured(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	write(t, home, ".config/git/ignore", "*.secret\n")
	write(t, home, ".gitconfig", "[core]\n\texcludesFile = ~/my-ignore\n")
	write(t, home, "my-ignore", ".env\n")
	ws := newRepo(t)
	write(t, ws, ".env", "TOKEN=x\n")
	write(t, ws, "a.secret", "x\n")
	write(t, ws, "kept.txt", "x\n")
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	b, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files := lsTree(t, r, b.Commit)
	// ~/.gitconfig's core.excludesFile wins over the XDG default, as in git.
	if slices.Contains(files, ".env") || !slices.Contains(files, "a.secret") || !slices.Contains(files, "kept.txt") {
		t.Fatalf("snapshot %v", files)
	}
}

// Same-size edits are seen right after the checkout (racy git) and after the background index
// refresh, which must not hide any edit.
func TestSameSizeEditsSeenAroundIndexRefresh(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	r := open(t, ws, "s", t.TempDir())
	defer r.Close(ctx, false)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	write(t, wt.Root(), "README.md", "READMe\n") // same size as "readme\n", same second
	cs, err := r.Changes(ctx, wt)
	if err != nil || len(cs.Files) != 1 {
		t.Fatalf("%+v %v", cs, err)
	}
	wt2, _ := r.AddWorktree(ctx, base, "sa-2")
	time.Sleep(1200 * time.Millisecond) // the refresh has run
	write(t, wt2.Root(), "README.md", "rEADME\n")
	cs2, err := r.Changes(ctx, wt2)
	if err != nil || len(cs2.Files) != 1 || !strings.Contains(cs2.Files[0].Diff, "+rEADME") {
		t.Fatalf("%+v %v", cs2, err)
	}
	write(t, wt2.Root(), "README.md", "Readme\n") // again, in the second of the last index write
	cs3, err := r.Changes(ctx, wt2)
	if err != nil || len(cs3.Files) != 1 || !strings.Contains(cs3.Files[0].Diff, "+Readme") {
		t.Fatalf("%+v %v", cs3, err)
	}
}
