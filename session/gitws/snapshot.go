package gitws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Snapshot commits the workspace as it is now: tracked files with their uncommitted edits and
// untracked files that are not ignored, never .summit/. The commit's parent is HEAD when there
// is one, and it is kept at refs/summit/<session>/base-N. When the tree equals the previous
// base's, that base is returned and nothing is written.
func (r *Repo) Snapshot(ctx context.Context) (Base, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkOpen(); err != nil {
		return Base{}, err
	}
	tree, err := r.snapshotTree(ctx)
	if err != nil {
		return Base{}, err
	}
	if r.lastBase != nil && r.lastBase.Tree == tree {
		return *r.lastBase, nil
	}
	head, err := r.head(ctx)
	if err != nil {
		return Base{}, err
	}
	id := "base-" + strconv.Itoa(r.baseN+1)
	c, err := r.commit(ctx, tree, "summit snapshot", head)
	if err != nil {
		return Base{}, err
	}
	if err := r.setRefs(ctx, r.sessionRef(id), c); err != nil {
		return Base{}, err
	}
	r.baseN++
	b := Base{ID: id, Commit: c, Tree: tree}
	r.lastBase = &b
	return b, nil
}

// head is the commit HEAD points to, or "" on an unborn branch or in a private dir.
func (r *Repo) head(ctx context.Context) (string, error) {
	if r.private {
		return "", nil
	}
	out, code, err := runGit(ctx, r.git, gitCmd{dir: r.top, args: []string{"rev-parse", "-q", "--verify", "HEAD^{commit}"}, ok: []int{1}})
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", nil
	}
	return trim(out), nil
}

// tempIndex names a fresh temporary index file in the session's tmp dir (not created: git
// makes it); done removes it and its lock.
func (r *Repo) tempIndex(prefix string) (idx string, done func(), err error) {
	f, err := os.CreateTemp(r.tmpDir, prefix)
	if err != nil {
		return "", nil, fmt.Errorf("gitws: %w", err)
	}
	idx = f.Name()
	f.Close()
	os.Remove(idx)
	return idx, func() { os.Remove(idx); os.Remove(idx + ".lock") }, nil
}

// snapshotTree writes the tree of the workspace's working state through a temporary index and
// returns its id. The index is seeded with a copy of the stat cache (the user's index, or the
// private dir's own) so git only hashes files that changed.
func (r *Repo) snapshotTree(ctx context.Context) (string, error) {
	idx, done, err := r.tempIndex("index-")
	if err != nil {
		return "", err
	}
	defer done()

	env := append(r.repoEnv(true), "GIT_INDEX_FILE="+idx)
	seeded, err := copyIndex(filepath.Join(r.gitDir, "index"), idx)
	if err != nil {
		return "", err
	}
	if !seeded && !r.private {
		if head, err := r.head(ctx); err != nil {
			return "", err
		} else if head != "" {
			if _, _, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: env, args: []string{"read-tree", head}}); err != nil {
				return "", err
			}
		}
	}
	tree, err := r.indexTree(ctx, r.top, env)
	if err != nil {
		return "", err
	}
	if r.private {
		// The private dir's index is summit's own stat cache: keep the refreshed one.
		if err := os.Rename(idx, filepath.Join(r.gitDir, "index")); err != nil {
			return "", fmt.Errorf("gitws: %w", err)
		}
	}
	return tree, nil
}

// indexTree stages the whole work tree at dir into the index env selects (add -A: respects
// .gitignore, records deletions and modes), drops .summit/ and writes the tree.
func (r *Repo) indexTree(ctx context.Context, dir string, env []string) (string, error) {
	// .summit/ is in info/exclude, so add skips it when untracked (an exclude pathspec would
	// make add fail on it as an ignored path); rm drops it should the user's index track it.
	add := []string{"add", "-A", "--", ":(top)"}
	if r.excludes != "" {
		add = append([]string{"-c", "core.excludesFile=" + r.excludes}, add...)
	}
	rm := []string{"rm", "--cached", "-r", "-q", "--ignore-unmatch", "--"}
	for _, p := range r.excludePaths() {
		rm = append(rm, ":(top,literal)"+p)
	}
	if _, _, err := runGit(ctx, r.git, gitCmd{dir: dir, env: env, args: add}); err != nil {
		return "", err
	}
	if _, _, err := runGit(ctx, r.git, gitCmd{dir: dir, env: env, args: rm}); err != nil {
		return "", err
	}
	out, _, err := runGit(ctx, r.git, gitCmd{dir: dir, env: env, args: []string{"write-tree"}})
	if err != nil {
		return "", err
	}
	return trim(out), nil
}

// copyIndex copies an index file and gives the copy the original's mtime, so git's racy-entry
// check (entries not older than the index file are re-read) stays as sound as on the original.
// It reports false when there is no index to copy.
func copyIndex(src, dst string) (bool, error) {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("gitws: %w", err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return false, fmt.Errorf("gitws: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("gitws: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, fmt.Errorf("gitws: %w", err)
	}
	if err := out.Close(); err != nil {
		return false, fmt.Errorf("gitws: %w", err)
	}
	if err := os.Chtimes(dst, fi.ModTime(), fi.ModTime()); err != nil {
		return false, fmt.Errorf("gitws: %w", err)
	}
	return true, nil
}
