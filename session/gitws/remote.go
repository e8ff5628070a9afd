package gitws

import (
	"context"
	"fmt"
	"path/filepath"
)

// ImportResult brings a remote runner's change set home (session/runners): the commits of
// bundle (a KeepBundle of the runner's result) are fetched under this session's private refs
// (refs/summit/<session>/<name>/remote/…, so git keeps them), and the worktree's files and
// index become head's tree. Changes then records the change set against the worktree's own
// base exactly as for a subagent that ran here; the user's HEAD, index and refs are untouched.
func (r *Repo) ImportResult(ctx context.Context, wt *Worktree, bundle, head string) error {
	if err := validRevs(head); err != nil {
		return err
	}
	b, err := filepath.Abs(bundle)
	if err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	ref := r.sessionRef(wt.Name + "/remote/")
	r.walk.RLock()
	_, err = r.plain(ctx, "fetch", "-q", "--no-tags", "--no-write-fetch-head", b, "+"+keptRefs+"*:"+ref+"*")
	r.walk.RUnlock()
	if err != nil {
		return fmt.Errorf("gitws: the result bundle: %w", err)
	}
	if _, err := r.plain(ctx, "cat-file", "-e", head+"^{commit}"); err != nil {
		return fmt.Errorf("gitws: commit %s is not in the result bundle: %w", short(head), err)
	}
	wt.stopRefresh()
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if _, _, err := runGit(ctx, r.git, gitCmd{dir: wt.Path, args: []string{"read-tree", "--reset", "-u", head + "^{tree}"}}); err != nil {
		return fmt.Errorf("gitws: checking out the result: %w", err)
	}
	return nil
}
