package gitws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrSnapshotGone says a recorded snapshot commit is no longer in the repository it was
// recorded in (git gc pruned it, or the recording came from another machine).
var ErrSnapshotGone = errors.New("the recorded snapshot is no longer in its repository")

// Restored is what Restore wrote.
type Restored struct {
	Dir string // the new workspace (absolute, symlinks resolved)
	// Prefix is the source workspace's place in its repository ("" at the top, else
	// "sub/dir/"): its snapshots hold the whole repository, and the fork got that folder only.
	// Commits recorded in such a session do not apply in the fork, whose top is the folder.
	Prefix string
}

// Restore writes the files of a recorded snapshot commit into dir, a new folder (missing, or
// empty), for a forked session (session/fork). source is the workspace the commit was recorded
// in; private says that workspace used summit's private git dir.
//
// dir becomes a workspace of its own: not a repository (no .git is made in it), with the private
// git dir Open will use for it, which borrows the source's objects through
// objects/info/alternates. So the source session's commits (its subagents' results, its
// snapshots) resolve in the fork and /apply, /converge work on them there, without copying the
// repository. The source repository is only read: no ref, index or file of it changes. Objects
// only summit's refs held can be pruned by a git gc in the source repository once those refs are
// gone (two weeks by default); a fork is meant for soon after its parent.
func Restore(ctx context.Context, source string, private bool, commit, dir string, opts Options) (Restored, error) {
	if err := validRevs(commit); err != nil {
		return Restored{}, err
	}
	bin, err := findGit(ctx, opts.Git)
	if err != nil {
		return Restored{}, err
	}
	cache, err := cacheOf(opts)
	if err != nil {
		return Restored{}, err
	}
	src, err := canonical(source)
	if err != nil && private {
		// The workspace is gone (summit demo's is temporary), but its private git dir, keyed
		// by the path it had (recorded resolved), may still hold the snapshot.
		src, err = filepath.Abs(source)
	}
	if err != nil {
		return Restored{}, fmt.Errorf("gitws: the parent workspace %s: %w", source, err)
	}
	r := &Repo{git: bin, cacheDir: cache, workspace: src}
	if private {
		r.private, r.top, r.gitDir, r.common = true, src, privateDir(cache, src), privateDir(cache, src)
		if _, err := os.Stat(filepath.Join(r.common, "HEAD")); err != nil {
			return Restored{}, fmt.Errorf("gitws: the parent workspace's private git dir %s: %w", r.common, ErrSnapshotGone)
		}
	} else if err := r.locate(ctx); err != nil {
		return Restored{}, err
	} else if r.private {
		return Restored{}, fmt.Errorf("gitws: %s is no longer a repository: %w", src, ErrSnapshotGone)
	}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: cache, env: []string{"GIT_DIR=" + r.common},
		args: []string{"cat-file", "-e", commit + "^{commit}"}}); err != nil {
		return Restored{}, fmt.Errorf("gitws: commit %s in %s: %w", short(commit), r.common, ErrSnapshotGone)
	}
	out, err := NewFolder(dir)
	if err != nil {
		return Restored{}, err
	}
	if within(r.top, out) || within(cache, out) {
		return Restored{}, fmt.Errorf("gitws: the fork's workspace %s must be outside the parent's work tree %s and summit's cache %s", out, r.top, cache)
	}
	pd := privateDir(cache, out)
	// A private dir left by an earlier workspace at this path would bring its stale index.
	if err := os.RemoveAll(pd); err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(pd), 0o700); err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: cache, args: []string{"init", "--bare", "-q", "--template=", "--", pd}}); err != nil {
		return Restored{}, err
	}
	if err := os.MkdirAll(filepath.Join(pd, "objects", "info"), 0o700); err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	if err := os.WriteFile(filepath.Join(pd, "objects", "info", "alternates"), []byte(filepath.Join(r.common, "objects")+"\n"), 0o600); err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	if err := os.WriteFile(filepath.Join(pd, "summit-workspace"), []byte(out+"\n"), 0o600); err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	treeish := commit
	if r.prefix != "" {
		treeish = commit + ":" + strings.TrimSuffix(r.prefix, "/")
	}
	env := []string{"GIT_DIR=" + pd, "GIT_WORK_TREE=" + out, "GIT_INDEX_FILE=" + filepath.Join(pd, "index")}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: out, env: env, args: []string{"read-tree", treeish}}); err != nil {
		return Restored{}, err
	}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: out, env: env, args: []string{"checkout-index", "-a", "-f"}}); err != nil {
		return Restored{}, err
	}
	return Restored{Dir: out, Prefix: r.prefix}, nil
}

// SnapshotNow records the workspace as it is now in its repository, for a fork whose recording
// has no snapshot of its own: the commit is written (objects only; refs/summit/<session>/ is
// removed again before it returns), and Restore writes it out. The commit's objects stay
// reachable from no ref: Restore's alternates borrow them.
func SnapshotNow(ctx context.Context, workspace string, opts Options) (commit string, private bool, err error) {
	r, err := Open(ctx, workspace, opts)
	if err != nil {
		return "", false, err
	}
	b, err := r.Snapshot(ctx)
	if cerr := r.Close(ctx, false); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return "", false, err
	}
	return b.Commit, r.Private(), nil
}

// cacheOf is opts.CacheDir (or the default), made and resolved.
func cacheOf(opts Options) (string, error) {
	cache := opts.CacheDir
	if cache == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return "", err
		}
		cache = d
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", fmt.Errorf("gitws: cache dir: %w", err)
	}
	return canonical(cache)
}

// privateDir is the private git dir of a workspace that is not a repository.
func privateDir(cache, workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(cache, "repos", hex.EncodeToString(sum[:])[:16])
}

// NewFolder makes dir (a missing or empty folder) and returns it resolved: a fork's workspace,
// which Restore fills, or which stays empty when there is nothing to restore.
func NewFolder(dir string) (string, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return "", fmt.Errorf("gitws: %s is not empty; a fork's workspace must be a new folder", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("gitws: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("gitws: %w", err)
	}
	return canonical(dir)
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// InRepository reports whether dir is inside a git work tree (git rev-parse), for callers that
// copy a workspace only when git bounds what it holds (its ignore files).
func InRepository(ctx context.Context, dir string) bool {
	bin, err := findGit(ctx, "")
	if err != nil {
		return false
	}
	out, _, err := runGit(ctx, bin, gitCmd{dir: dir, args: []string{"rev-parse", "--is-inside-work-tree"}})
	return err == nil && strings.TrimSpace(string(out)) == "true"
}
