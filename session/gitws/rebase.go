package gitws

import (
	"context"
)

// Rebase brings a change made on one base (oldBase → result) onto a newer base with git's
// merge machinery (merge-tree, merge base = oldBase), and reports it as a ChangeSet against
// newBase, kept at refs/summit/<session>/<name>/rebased. A change that overlaps what moved
// between the two bases returns a *ConflictError and records nothing. Nothing in the
// workspace is touched.
func (r *Repo) Rebase(ctx context.Context, oldBase, result, newBase, name string) (ChangeSet, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkOpen(); err != nil {
		return ChangeSet{}, err
	}
	if err := validRevs(oldBase, result, newBase); err != nil {
		return ChangeSet{}, err
	}
	if err := validID("worktree name", name); err != nil {
		return ChangeSet{}, err
	}
	// Both sides get oldBase as their only parent, so merge-tree finds it as the merge base
	// (git 2.38/2.39 have no --merge-base).
	ours, err := r.commit(ctx, newBase+"^{tree}", "summit "+r.session+" newer base", oldBase)
	if err != nil {
		return ChangeSet{}, err
	}
	theirs, err := r.commit(ctx, result+"^{tree}", "summit "+r.session+" "+name, oldBase)
	if err != nil {
		return ChangeSet{}, err
	}
	out, code, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: r.repoEnv(false), ok: []int{1},
		args: []string{"merge-tree", "--write-tree", "-z", "--", ours, theirs}})
	if err != nil {
		return ChangeSet{}, err
	}
	merged, stages, msgs, err := parseMergeTree(out)
	if err != nil {
		return ChangeSet{}, err
	}
	if code == 1 {
		conflicts, err := r.conflicts(ctx, stages, msgs, name)
		if err != nil {
			return ChangeSet{}, err
		}
		if len(conflicts) > 0 {
			return ChangeSet{}, &ConflictError{Conflicts: conflicts}
		}
	}
	rebased, err := r.commit(ctx, merged, "summit "+r.session+" "+name+" rebased", newBase)
	if err != nil {
		return ChangeSet{}, err
	}
	ref := r.sessionRef(name + "/rebased")
	if err := r.setRefs(ctx, ref, rebased); err != nil {
		return ChangeSet{}, err
	}
	cs := ChangeSet{Base: newBase, Result: rebased, Ref: ref}
	return cs, r.diff(ctx, &cs)
}
