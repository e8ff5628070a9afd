package gitws

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Worktree is a subagent's isolated copy of the workspace: a linked git worktree on a detached
// HEAD at its base, outside the workspace.
type Worktree struct {
	Name string // the subagent's name, e.g. "sa-2"
	Path string // top of the worktree, <cache>/worktrees/<session>/<name>
	Base Base

	root string
	mu   sync.Mutex // one Changes at a time: it uses the worktree's own index

	stop     chan struct{} // closed to call off the pending index refresh
	done     chan struct{} // closed when the refresh goroutine is over
	stopOnce sync.Once
}

// refreshIndex rewrites the worktree's index once its checkout is a second old. git (built
// without USE_NSEC, the default) treats files written in the same second as the index as
// "racily clean" and re-hashes every one of them whenever it reads that index, until the index is
// written in a later second: after a checkout that is every file, ~0.3 s per 100 MB on each
// Changes. Refreshing in the background, while the subagent starts, takes that cost off the
// path of its Changes.
func (r *Repo) refreshIndex(wt *Worktree, checkedOut time.Time) {
	wt.stop, wt.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(wt.done)
		t := time.NewTimer(time.Until(checkedOut.Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-wt.stop:
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		runGit(ctx, r.git, gitCmd{dir: wt.Path, ok: []int{1}, args: []string{"update-index", "-q", "--refresh"}})
	}()
}

// stopRefresh calls off a refresh that has not started and waits for one that has.
func (wt *Worktree) stopRefresh() {
	if wt.stop == nil {
		return
	}
	wt.stopOnce.Do(func() { close(wt.stop) })
	<-wt.done
}

// Root is the directory the subagent's tools are rooted at: Path, or the subdirectory of Path
// that corresponds to the workspace when the workspace is a subdirectory of its repository.
func (wt *Worktree) Root() string { return wt.root }

// ResultRef is the ref Changes keeps the worktree's full state at.
func (r *Repo) ResultRef(name string) string { return r.sessionRef(name + "/result") }

// AddWorktree checks out base into a new worktree for subagent name. Names follow the rules of
// session ids and must not look like base-N or apply-N-pre/post.
func (r *Repo) AddWorktree(ctx context.Context, base Base, name string) (*Worktree, error) {
	if err := validID("worktree name", name); err != nil {
		return nil, err
	}
	if baseRefRe().MatchString(name) || applyRefRe().MatchString(name) {
		return nil, fmt.Errorf("gitws: worktree name %q is reserved for summit's own refs", name)
	}
	if base.Commit == "" {
		return nil, errors.New("gitws: AddWorktree needs a base from Snapshot")
	}
	if err := validRevs(base.Commit); err != nil {
		return nil, err
	}
	path := filepath.Join(r.wtDir, name)
	r.mu.Lock()
	if err := r.checkOpen(); err != nil {
		r.mu.Unlock()
		return nil, err
	}
	if _, ok := r.worktrees[name]; ok {
		r.mu.Unlock()
		return nil, fmt.Errorf("gitws: worktree %s exists", name)
	}
	wt := &Worktree{Name: name, Path: path, Base: base, root: filepath.Join(path, filepath.FromSlash(strings.TrimSuffix(r.prefix, "/")))}
	r.worktrees[name] = wt
	r.mu.Unlock()

	fail := func(err error) (*Worktree, error) {
		r.mu.Lock()
		delete(r.worktrees, name)
		r.mu.Unlock()
		return nil, err
	}
	if _, err := os.Lstat(path); err == nil {
		return fail(fmt.Errorf("gitws: %s already exists", path))
	}
	if err := os.MkdirAll(r.wtDir, 0o700); err != nil {
		return fail(fmt.Errorf("gitws: %w", err))
	}
	r.walk.Lock()
	_, _, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: r.repoEnv(false), args: []string{
		"worktree", "add", "--detach", "--", path, base.Commit}})
	r.walk.Unlock()
	if err != nil {
		r.removeWorktreeDir(ctx, path)
		return fail(err)
	}
	checkedOut := time.Now()
	if err := os.MkdirAll(wt.root, 0o755); err != nil {
		r.removeWorktreeDir(ctx, path)
		return fail(fmt.Errorf("gitws: %w", err))
	}
	r.refreshIndex(wt, checkedOut)
	return wt, nil
}

// Remove discards a worktree: its directory and its metadata in the git dir. Its result ref, if
// any, stays until Close, so a recorded change can still be applied.
func (r *Repo) Remove(ctx context.Context, wt *Worktree) error {
	wt.stopRefresh()
	r.mu.Lock()
	delete(r.worktrees, wt.Name)
	r.mu.Unlock()
	return r.removeWorktreeDir(ctx, wt.Path)
}

// removeWorktreeDir removes one of summit's worktrees with git, or, when git cannot (the
// repository moved, the directory is half made), by hand: the directory, and the metadata dir in
// the common git dir whose gitdir file points into it. It never prunes other worktrees.
func (r *Repo) removeWorktreeDir(ctx context.Context, path string) error {
	return removeWorktree(ctx, r.git, r.common, r.cacheDir, path)
}

func removeWorktree(ctx context.Context, bin, common, cacheDir, path string) error {
	if !within(filepath.Join(cacheDir, "worktrees"), path) {
		return fmt.Errorf("gitws: refusing to remove %s: not one of summit's worktrees", path)
	}
	if _, err := os.Stat(common); err == nil {
		runGit(ctx, bin, gitCmd{dir: cacheDir, env: []string{"GIT_DIR=" + common}, args: []string{
			"worktree", "remove", "--force", "--force", "--", path}})
		// Metadata left behind (the directory was already gone): remove exactly ours.
		ents, _ := os.ReadDir(filepath.Join(common, "worktrees"))
		for _, e := range ents {
			meta := filepath.Join(common, "worktrees", e.Name())
			b, err := os.ReadFile(filepath.Join(meta, "gitdir"))
			if err != nil {
				continue
			}
			if filepath.Clean(strings.TrimSpace(string(b))) == filepath.Join(path, ".git") {
				os.RemoveAll(meta)
			}
		}
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	os.Remove(filepath.Dir(path)) // the session's worktrees dir, once empty
	return nil
}

// Close ends the session. Unless keep, it removes all the session's worktrees, its refs under
// refs/summit/<session>/ and its session dir. With keep they all stay and the session's record is
// left unlocked, so Leftovers lists them later. Nothing else is deleted.
func (r *Repo) Close(ctx context.Context, keep bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	defer unlockSession(r.lock)
	for _, wt := range r.worktrees {
		wt.stopRefresh()
	}
	if keep {
		rec := record{Session: r.session, PID: os.Getpid(), Workspace: r.workspace, GitDir: r.common, Private: r.private, Kept: true}
		os.RemoveAll(r.tmpDir)
		return writeRecord(r.lock, rec)
	}
	var errs []error
	ents, _ := os.ReadDir(r.wtDir)
	for _, e := range ents {
		if err := r.removeWorktreeDir(ctx, filepath.Join(r.wtDir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	os.Remove(r.wtDir)
	r.worktrees = map[string]*Worktree{}
	if err := deleteSessionRefs(ctx, r.git, r.common, r.session); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		os.RemoveAll(r.sessDir)
	}
	return errors.Join(errs...)
}

// deleteSessionRefs deletes refs/summit/<session>/* in the repository at common.
func deleteSessionRefs(ctx context.Context, bin, common, session string) error {
	refs, err := sessionRefs(ctx, bin, common, session)
	if err != nil || len(refs) == 0 {
		return err
	}
	var b strings.Builder
	for _, ref := range refs {
		fmt.Fprintf(&b, "delete %s\n", ref)
	}
	_, _, err = runGit(ctx, bin, gitCmd{dir: filepath.Dir(common), env: []string{"GIT_DIR=" + common},
		stdin: strings.NewReader(b.String()), args: []string{"update-ref", "--stdin"}})
	// git leaves the emptied namespace directories of loose refs; they are summit's.
	os.Remove(filepath.Join(common, "refs", "summit", session))
	os.Remove(filepath.Join(common, "refs", "summit"))
	return err
}

// sessionRefs lists refs/summit/<session>/* in the repository at common.
func sessionRefs(ctx context.Context, bin, common, session string) ([]string, error) {
	out, _, err := runGit(ctx, bin, gitCmd{dir: filepath.Dir(common), env: []string{"GIT_DIR=" + common},
		args: []string{"for-each-ref", "--format=%(refname)", "--", "refs/summit/" + session + "/"}})
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			refs = append(refs, l)
		}
	}
	return refs, nil
}
