package gitws

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestImportResultWhileWorktreesAreAdded imports runners' result bundles into one worktree
// while other worktrees are added to the same repository, as a session does with many placed
// subagents: `git worktree add` writes the new worktree's HEAD as the null id for a moment,
// and a fetch's connectivity check (`rev-list --not --all`) that reads it then fails with
// "bad object worktrees/NAME/HEAD". Every import must succeed and check out its own result.
func TestImportResultWhileWorktreesAreAdded(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	r := open(t, ws, "s1", t.TempDir())
	defer r.Close(ctx, false)
	base, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, base, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	// The results: commits of another repository (a runner's), each bundled with KeepBundle.
	const n = 12
	src := t.TempDir()
	gitT(t, src, "init", "-q", "-b", "main")
	heads := make([]string, n)
	bundles := make([]string, n)
	for i := range n {
		write(t, src, "out.txt", fmt.Sprintf("result %d\n", i))
		gitT(t, src, "add", "-A")
		gitT(t, src, "commit", "-q", "-m", fmt.Sprintf("result %d", i))
		heads[i] = strings.TrimSpace(gitT(t, src, "rev-parse", "HEAD"))
		bundles[i] = filepath.Join(t.TempDir(), "result.bundle")
		k, err := KeepBundle(ctx, src, []string{heads[i]}, bundles[i], Options{CacheDir: t.TempDir()})
		if err != nil || k != 1 {
			t.Fatalf("KeepBundle: %d %v", k, err)
		}
		// The bundle names exactly its one kept ref.
		if refs := strings.TrimSpace(gitT(t, src, "bundle", "list-heads", bundles[i])); refs != heads[i]+" "+keptRefs+"0" {
			t.Fatalf("bundle %d heads: %q", i, refs)
		}
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	var added atomic.Int32
	wg.Add(1)
	go func() { // the other subagents' worktrees, added all the while
		defer wg.Done()
		for i := 2; !stop.Load(); i++ {
			if _, err := r.AddWorktree(ctx, base, fmt.Sprintf("sa-%d", i)); err != nil {
				t.Error(err)
				return
			}
			added.Add(1)
		}
	}()
	for i := range n {
		if err := r.ImportResult(ctx, wt, bundles[i], heads[i]); err != nil {
			t.Errorf("import %d (with %d worktrees added): %v", i, added.Load(), err)
			continue
		}
		if got := read(t, wt.Path, "out.txt"); got != fmt.Sprintf("result %d\n", i) {
			t.Errorf("after import %d, out.txt is %q", i, got)
		}
	}
	stop.Store(true)
	wg.Wait()
	if added.Load() == 0 {
		t.Error("no worktree was added during the imports")
	}
}
