package gitws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A recording names commits (its subagents' bases and results, the workspace before and after
// each /apply) that live in its workspace's repository, or in summit's private git dir for a
// workspace that is not one. A fork rebuilds its files from them. When that git dir must go
// (summit demo's workspace is temporary, and so is its private git dir), the commits can be
// kept in a git bundle beside the recording (KeepBundle), which a fork restores from
// (RestoreBundle) when the git dir no longer has them.

// keptRefs is the ref namespace of kept commits: in a bundle, and in a fork's private git dir
// restored from one (so git never prunes them there).
const keptRefs = "refs/summit-kept/"

// KeepBundle writes the commits among commits that workspace's repository (or private git dir)
// still holds into a git bundle at path (mode 0600, written whole or not at all), with every
// object they reach, and returns how many it kept. The repository is only read: the refs the
// bundle needs are made in a scratch git dir that borrows its objects. No commit found: no
// bundle, 0 and no error.
func KeepBundle(ctx context.Context, workspace string, commits []string, path string, opts Options) (int, error) {
	if err := validRevs(commits...); err != nil {
		return 0, err
	}
	bin, err := findGit(ctx, opts.Git)
	if err != nil {
		return 0, err
	}
	cache, err := cacheOf(opts)
	if err != nil {
		return 0, err
	}
	common, err := commonDir(ctx, bin, cache, workspace)
	if err != nil {
		return 0, err
	}
	have, err := existing(ctx, bin, cache, common, commits)
	if err != nil || len(have) == 0 {
		return 0, err
	}
	scratch, err := os.MkdirTemp(cache, "keep-")
	if err != nil {
		return 0, fmt.Errorf("gitws: %w", err)
	}
	defer os.RemoveAll(scratch)
	if _, _, err := runGit(ctx, bin, gitCmd{dir: cache, args: []string{"init", "--bare", "-q", "--template=", "--", scratch}}); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(scratch, "objects", "info", "alternates"), []byte(filepath.Join(common, "objects")+"\n"), 0o600); err != nil {
		return 0, fmt.Errorf("gitws: %w", err)
	}
	var b strings.Builder
	refs := []string{"bundle", "create", "-q", path + ".tmp"}
	for i, c := range have {
		fmt.Fprintf(&b, "update %s%d %s\n", keptRefs, i, c)
		refs = append(refs, fmt.Sprintf("%s%d", keptRefs, i))
	}
	env := []string{"GIT_DIR=" + scratch}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: cache, env: env, stdin: strings.NewReader(b.String()), args: []string{"update-ref", "--stdin"}}); err != nil {
		return 0, err
	}
	tmp := path + ".tmp"
	// Exactly the kept refs, named: nothing else of the scratch repo (its HEAD, other refs)
	// can enter the bundle.
	if _, _, err := runGit(ctx, bin, gitCmd{dir: cache, env: env, args: refs}); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("gitws: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("gitws: %w", err)
	}
	return len(have), nil
}

// RestoreBundle is Restore from a bundle KeepBundle wrote: the bundle's commits are fetched into
// the new workspace's private git dir (under refs/summit-kept/, so they stay), and commit's
// files are written out into dir (missing, or empty). A bundle without commit gives
// ErrSnapshotGone.
func RestoreBundle(ctx context.Context, bundle, commit, dir string, opts Options) (Restored, error) {
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
	b, err := filepath.Abs(bundle)
	if err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	out, err := NewFolder(dir)
	if err != nil {
		return Restored{}, err
	}
	if within(cache, out) {
		return Restored{}, fmt.Errorf("gitws: the fork's workspace %s must be outside summit's cache %s", out, cache)
	}
	pd := privateDir(cache, out)
	if err := os.RemoveAll(pd); err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(pd), 0o700); err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: cache, args: []string{"init", "--bare", "-q", "--template=", "--", pd}}); err != nil {
		return Restored{}, err
	}
	if err := os.WriteFile(filepath.Join(pd, "summit-workspace"), []byte(out+"\n"), 0o600); err != nil {
		return Restored{}, fmt.Errorf("gitws: %w", err)
	}
	env := []string{"GIT_DIR=" + pd}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: cache, env: env,
		args: []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head", b, keptRefs + "*:" + keptRefs + "*"}}); err != nil {
		return Restored{}, fmt.Errorf("gitws: the bundle %s: %w", bundle, err)
	}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: cache, env: env, args: []string{"cat-file", "-e", commit + "^{commit}"}}); err != nil {
		return Restored{}, fmt.Errorf("gitws: commit %s is not in the bundle %s: %w", short(commit), bundle, ErrSnapshotGone)
	}
	wenv := []string{"GIT_DIR=" + pd, "GIT_WORK_TREE=" + out, "GIT_INDEX_FILE=" + filepath.Join(pd, "index")}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: out, env: wenv, args: []string{"read-tree", commit}}); err != nil {
		return Restored{}, err
	}
	if _, _, err := runGit(ctx, bin, gitCmd{dir: out, env: wenv, args: []string{"checkout-index", "-a", "-f"}}); err != nil {
		return Restored{}, err
	}
	return Restored{Dir: out}, nil
}

// RemovePrivate removes the private git dir of workspace (a folder that is not a repository),
// unless a running session uses it: for a workspace that is going away with everything summit
// made for it (summit demo's). It reports whether there was one to remove.
func RemovePrivate(workspace string, opts Options) (bool, error) {
	cache, err := cacheOf(opts)
	if err != nil {
		return false, err
	}
	ws, err := canonical(workspace)
	if err != nil {
		return false, fmt.Errorf("gitws: %w", err)
	}
	pd := privateDir(cache, ws)
	if _, err := os.Stat(filepath.Join(pd, "HEAD")); err != nil {
		return false, nil
	}
	if liveGitDirs(cache)[pd] {
		return false, fmt.Errorf("gitws: a running session uses %s", pd)
	}
	if err := os.RemoveAll(pd); err != nil {
		return false, fmt.Errorf("gitws: %w", err)
	}
	return true, nil
}

// commonDir is the common git dir of workspace: its repository's, or its private git dir
// (which must exist: a workspace gone with it has nothing left to keep).
func commonDir(ctx context.Context, bin, cache, workspace string) (string, error) {
	ws, err := canonical(workspace)
	if err != nil {
		ws, _ = filepath.Abs(workspace)
	}
	if pd := privateDir(cache, ws); fileExists(filepath.Join(pd, "HEAD")) {
		if _, err := os.Stat(ws); err != nil || !InRepository(ctx, ws) {
			return pd, nil
		}
	}
	out, _, err := runGit(ctx, bin, gitCmd{dir: ws, args: []string{"rev-parse", "--path-format=absolute", "--git-common-dir"}})
	if err != nil {
		return "", fmt.Errorf("gitws: %s has no repository of summit's or its own: %w", workspace, ErrSnapshotGone)
	}
	return canonical(trim(out))
}

// existing are the commits among revs that the repository at common holds, in order.
func existing(ctx context.Context, bin, cache, common string, revs []string) ([]string, error) {
	if len(revs) == 0 {
		return nil, nil
	}
	var in strings.Builder
	for _, r := range revs {
		in.WriteString(r + "^{commit}\n")
	}
	out, _, err := runGit(ctx, bin, gitCmd{dir: cache, env: []string{"GIT_DIR=" + common}, stdin: strings.NewReader(in.String()),
		args: []string{"cat-file", "--batch-check=%(objectname) %(objecttype)"}})
	if err != nil {
		return nil, err
	}
	var have []string
	seen := map[string]bool{}
	for _, l := range strings.Split(string(bytes.TrimSpace(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && f[1] == "commit" && !seen[f[0]] {
			seen[f[0]] = true
			have = append(have, f[0])
		}
	}
	return have, nil
}

// haveCommits says in words which of revs the repository no longer holds (ErrSnapshotGone),
// rather than git's "fatal: failed to unpack tree object" in the middle of a merge.
func (r *Repo) haveCommits(ctx context.Context, revs ...string) error {
	var in strings.Builder
	for _, rev := range revs {
		in.WriteString(rev + "^{commit}\n")
	}
	out, err := r.plainIn(ctx, []byte(in.String()), "cat-file", "--batch-check=%(objecttype)")
	if err != nil {
		return err
	}
	for i, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if i < len(revs) && strings.TrimSpace(l) != "commit" {
			return fmt.Errorf("gitws: the recorded commit %s is no longer in the repository %s (removed with the git dir that held it: summit gc, the end of summit demo, or git gc); /retry the subagent that made it to make the change again: %w", short(revs[i]), r.common, ErrSnapshotGone)
		}
	}
	return nil
}

// DirSize is the bytes of the regular files under dir (0 when it is missing).
func DirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// HumanBytes is n as people read it: 812 B, 14 KB, 3.2 MB, 1.1 GB.
func HumanBytes(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return strconv.FormatInt(n, 10) + " B"
	case n < k*k:
		return strconv.FormatInt((n+k/2)/k, 10) + " KB"
	case n < 100*k*k:
		return strconv.FormatFloat(float64(n)/(k*k), 'f', 1, 64) + " MB"
	case n < k*k*k:
		return strconv.FormatInt((n+k*k/2)/(k*k), 10) + " MB"
	}
	return strconv.FormatFloat(float64(n)/(k*k*k), 'f', 1, 64) + " GB"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, fs.ErrNotExist) && err == nil
}
