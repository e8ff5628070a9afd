package gitws

import (
	"context"
	"strings"
)

// Preview is what Apply(base, result) would make of the workspace as it is now, computed
// without writing it: the same merge Apply runs (merge-tree on a commit of the workspace and
// the result, both with base as their parent), kept as commits so the merged result can be
// checked out in a scratch worktree and verified before it lands.
type Preview struct {
	Cur     string // commit of the workspace now (parent: base)
	CurTree string // its tree: Apply landed exactly this merge if its Pre has the same tree
	Merged  string // commit of the merged result (parent: Cur)
	// Changes is Cur → Merged, reported the way Changes reports a worktree: exactly the files
	// Apply would write or delete, each with its diff.
	Changes ChangeSet
}

// Preview runs Apply's merge of base→result into the workspace as it is now and writes
// nothing: conflicts return a *ConflictError, as Apply does. label names the result in
// conflict markers ("" means "result").
func (r *Repo) Preview(ctx context.Context, base, result, label string) (*Preview, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkOpen(); err != nil {
		return nil, err
	}
	if label == "" {
		label = "result"
	}
	if err := validRevs(base, result); err != nil {
		return nil, err
	}
	curTree, cur, merged, err := r.mergeInto(ctx, base, result, label)
	if err != nil {
		return nil, err
	}
	// Outside a subdirectory workspace nothing is applied: the merged commit keeps the
	// workspace's own files there, so the scratch checkout is what the repository would hold.
	if r.prefix != "" {
		if merged, err = r.onlyWorkspace(ctx, curTree, merged); err != nil {
			return nil, err
		}
	}
	mc, err := r.commit(ctx, merged, "summit "+r.session+" preview "+label, cur)
	if err != nil {
		return nil, err
	}
	p := &Preview{Cur: cur, CurTree: curTree, Merged: mc, Changes: ChangeSet{Base: cur, Result: mc}}
	if merged == curTree {
		return p, nil
	}
	return p, r.diff(ctx, &p.Changes)
}

// onlyWorkspace is tree `to` with everything outside the workspace's prefix as in tree `from`.
func (r *Repo) onlyWorkspace(ctx context.Context, from, to string) (string, error) {
	run, done, err := r.indexRunner(ctx, "preview-")
	if err != nil {
		return "", err
	}
	defer done()
	if _, err := run("", "read-tree", from); err != nil {
		return "", err
	}
	prefix := strings.TrimSuffix(r.prefix, "/")
	if _, err := run("", "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", prefix); err != nil {
		return "", err
	}
	if _, err := run("", "read-tree", "--prefix="+r.prefix, to+":"+prefix); err != nil {
		return "", err
	}
	out, err := run("", "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// TreeOf is the tree of a commit.
func (r *Repo) TreeOf(ctx context.Context, commit string) (string, error) {
	if err := validRevs(commit); err != nil {
		return "", err
	}
	out, err := r.plain(ctx, "rev-parse", "--verify", "--end-of-options", commit+"^{tree}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Scratch checks commit out into a new worktree called name, outside the workspace, for a
// check of a result before it lands (a verify command). Remove takes it away.
func (r *Repo) Scratch(ctx context.Context, commit, name string) (*Worktree, error) {
	return r.AddWorktree(ctx, Base{ID: name, Commit: commit}, name)
}
