package gitws

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Preview runs Apply's merge and writes nothing: it reports exactly the files Apply then
// writes, its merged commit has the tree Apply leaves, a scratch worktree of it holds the
// merged files, and an overlap is the same ConflictError.
func TestPreviewIsWhatApplyLands(t *testing.T) {
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
	write(t, ws, "main.go", strings.Replace(mainGo, "return 1", "return 7", 1))
	before := treeSum(t, ws)
	user := userState(t, ws)
	p, err := r.Preview(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if treeSum(t, ws) != before || userState(t, ws) != user {
		t.Fatal("Preview changed the workspace or the user's git state")
	}
	var files []string
	for _, f := range p.Changes.Files {
		files = append(files, f.Path)
	}
	if !slices.Equal(files, []string{"main.go", "pkg/new.go"}) || !strings.Contains(fileOf(p.Changes, "main.go").Diff, `+	println("hello, world")`) &&
		!strings.Contains(fileOf(p.Changes, "main.go").Diff, `"hello, world"`) {
		t.Fatalf("preview files %v:\n%+v", files, p.Changes.Files)
	}
	sc, err := r.Scratch(ctx, p.Merged, "verify-1-sa-1")
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, sc.Root(), "main.go")
	if !strings.Contains(got, `"hello, world"`) || !strings.Contains(got, "return 7") {
		t.Errorf("the scratch worktree does not hold the merged result:\n%s", got)
	}
	must(t, r.Remove(ctx, sc))
	a, err := r.Apply(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Files, files) {
		t.Errorf("Apply wrote %v, Preview said %v", a.Files, files)
	}
	pre, _ := r.TreeOf(ctx, a.Pre)
	post, _ := r.TreeOf(ctx, a.Post)
	merged, _ := r.TreeOf(ctx, p.Merged)
	if pre != p.CurTree || post != merged {
		t.Errorf("Apply merged %s into %s; Preview had %s into %s", post, pre, merged, p.CurTree)
	}
	// An overlap is the same ConflictError, and still nothing is written.
	write(t, ws, "main.go", strings.Replace(mainGo, `"hello"`, `"ours"`, 1))
	before = treeSum(t, ws)
	wt2, _ := r.AddWorktree(ctx, base, "sa-2")
	write(t, wt2.Root(), "main.go", strings.Replace(mainGo, `"hello"`, `"theirs"`, 1))
	cs2, _ := r.Changes(ctx, wt2)
	var ce *ConflictError
	if _, err := r.Preview(ctx, cs2.Base, cs2.Result, "sa-2"); !errors.As(err, &ce) || ce.Conflicts[0].Path != "main.go" {
		t.Fatalf("overlap: %v", err)
	}
	if treeSum(t, ws) != before {
		t.Fatal("a conflicting Preview wrote")
	}
}

// In a subdirectory workspace, the preview (and its scratch checkout) holds only the changes
// under it, as Apply lands only those.
func TestPreviewSubdirectory(t *testing.T) {
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
	write(t, wt.Root(), "util.go", "package pkg\n\nfunc Util() int { return 1 }\n")
	write(t, wt.Root(), "../outside.txt", "outside\n")
	cs, err := r.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Preview(ctx, cs.Base, cs.Result, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes.Files) != 1 || p.Changes.Files[0].Path != "util.go" || len(p.Changes.Outside) != 0 {
		t.Fatalf("preview %+v", p.Changes)
	}
	sc, err := r.Scratch(ctx, p.Merged, "verify-1-sa-1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Remove(ctx, sc)
	if exists(sc.Path, "outside.txt") || !strings.Contains(read(t, sc.Root(), "util.go"), "return 1") {
		t.Errorf("scratch root %s", sc.Root())
	}
}
