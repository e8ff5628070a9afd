package gitws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Leftover is what a session that is no longer running left behind.
type Leftover struct {
	// SessionID is the session, or "" for an unused private git dir.
	SessionID string `json:"session,omitempty"`
	// Reason: "crashed" (its lock was dropped without Close), "kept" (closed with keep),
	// "orphan" (worktrees without a session record) or "unused" (a private git dir no running
	// session uses).
	Reason    string   `json:"reason"`
	Workspace string   `json:"workspace,omitempty"`
	GitDir    string   `json:"git_dir,omitempty"`   // common git dir holding its refs and worktree metadata
	Private   bool     `json:"private,omitempty"`   // GitDir is a private git dir under the cache dir
	Worktrees []string `json:"worktrees,omitempty"` // directories under <cache>/worktrees/<session>/
	Refs      []string `json:"refs,omitempty"`      // refs/summit/<session>/...
	Dir       string   `json:"dir,omitempty"`       // the session dir, or the private git dir for "unused"
	// Bytes is the space it takes: its worktrees and session dir, or the private git dir.
	Bytes int64 `json:"bytes"`
	// KeptFor are the recordings on disk that still fork from this private git dir's
	// snapshots: summit gc keeps it (set by the caller, which knows where recordings are).
	KeptFor []string `json:"kept_for,omitempty"`
}

// Key names the leftover for remembering it was shown (a session id, or the private git dir).
func (l Leftover) Key() string {
	if l.SessionID != "" {
		return "session " + l.SessionID
	}
	return "dir " + l.Dir
}

func (l Leftover) String() string {
	if l.SessionID == "" {
		return fmt.Sprintf("private git dir %s of %s (%s), %s", l.Dir, l.Workspace, l.Reason, HumanBytes(l.Bytes))
	}
	return fmt.Sprintf("session %s (%s) of %s: %d worktree(s), %d ref(s), %s", l.SessionID, l.Reason, l.Workspace, len(l.Worktrees), len(l.Refs), HumanBytes(l.Bytes))
}

// Leftovers lists, without changing anything, what sessions that are not running left in
// cacheDir ("" means DefaultCacheDir) and in their repositories: worktrees, refs/summit/<session>/
// refs, session dirs, and the private git dirs of workspaces that no longer exist. (The private
// git dir of a workspace that exists is that workspace's repository: its next session uses it,
// and forks of its recordings restore from it.)
func Leftovers(ctx context.Context, cacheDir string) ([]Leftover, error) {
	return leftovers(ctx, cacheDir, "")
}

// LeftoversOf is Leftovers of one workspace only (its sessions and its private git dir): what
// a session starting there tells about. It runs git only for that workspace's sessions.
func LeftoversOf(ctx context.Context, cacheDir, workspace string) ([]Leftover, error) {
	ws, err := canonical(workspace)
	if err != nil {
		return nil, nil // no such workspace: nothing of it can be left
	}
	return leftovers(ctx, cacheDir, ws)
}

func leftovers(ctx context.Context, cacheDir, only string) ([]Leftover, error) {
	cacheDir, err := resolveCache(cacheDir)
	if err != nil || cacheDir == "" {
		return nil, err
	}
	bin, err := findGit(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []Leftover
	live := map[string]bool{} // git dirs used by running sessions
	seen := map[string]bool{} // sessions with a record
	sessions, _ := os.ReadDir(filepath.Join(cacheDir, "sessions"))
	for _, e := range sessions {
		if !e.IsDir() || validID("session", e.Name()) != nil {
			continue
		}
		dir := filepath.Join(cacheDir, "sessions", e.Name())
		rec, lockPath := readRecord(dir)
		seen[e.Name()] = true
		if rec.Session == "" {
			rec.Session = e.Name()
		}
		if sessionLive(lockPath, rec) {
			live[rec.GitDir] = true
			continue
		}
		if only != "" && rec.Workspace != only {
			continue
		}
		l := Leftover{SessionID: e.Name(), Reason: "crashed", Workspace: rec.Workspace, GitDir: rec.GitDir, Private: rec.Private, Dir: dir}
		if rec.Kept {
			l.Reason = "kept"
		}
		l.Worktrees = listDirs(filepath.Join(cacheDir, "worktrees", e.Name()))
		l.Bytes = DirSize(dir) + DirSize(filepath.Join(cacheDir, "worktrees", e.Name()))
		if rec.GitDir != "" {
			if _, err := os.Stat(rec.GitDir); err == nil {
				if l.Refs, err = sessionRefs(ctx, bin, rec.GitDir, e.Name()); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, l)
	}
	wts, _ := os.ReadDir(filepath.Join(cacheDir, "worktrees"))
	for _, e := range wts {
		if !e.IsDir() || seen[e.Name()] || only != "" {
			continue // an orphan names no workspace
		}
		l := Leftover{SessionID: e.Name(), Reason: "orphan", Worktrees: listDirs(filepath.Join(cacheDir, "worktrees", e.Name()))}
		l.Bytes = DirSize(filepath.Join(cacheDir, "worktrees", e.Name()))
		for _, wt := range l.Worktrees {
			if common := worktreeCommonDir(wt); common != "" {
				l.GitDir = common
				break
			}
		}
		if l.GitDir != "" {
			l.Refs, _ = sessionRefs(ctx, bin, l.GitDir, e.Name())
		}
		out = append(out, l)
	}
	repos, _ := os.ReadDir(filepath.Join(cacheDir, "repos"))
	for _, e := range repos {
		dir := filepath.Join(cacheDir, "repos", e.Name())
		if !e.IsDir() || live[dir] {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, "summit-workspace"))
		ws := strings.TrimSpace(string(b))
		if only != "" && ws != only {
			continue
		}
		if ws != "" && fileExists(ws) {
			continue // the workspace's own repository, not a leftover
		}
		out = append(out, Leftover{Reason: "unused", Workspace: ws, GitDir: dir, Private: true, Dir: dir, Bytes: DirSize(dir)})
	}
	return out, nil
}

// GC removes the leftovers Leftovers listed (sessions that started running again since are
// skipped): worktrees with git worktree remove, their refs, session dirs, and unused private git
// dirs. It removes nothing outside cacheDir but summit's refs and worktree metadata.
func GC(ctx context.Context, cacheDir string, leftovers []Leftover) error {
	cacheDir, err := resolveCache(cacheDir)
	if err != nil || cacheDir == "" {
		return err
	}
	bin, err := findGit(ctx, "")
	if err != nil {
		return err
	}
	var errs []error
	var private []Leftover
	for _, l := range leftovers {
		if l.SessionID == "" {
			private = append(private, l)
			continue
		}
		if validID("session", l.SessionID) != nil {
			continue
		}
		sessDir := filepath.Join(cacheDir, "sessions", l.SessionID)
		if rec, lockPath := readRecord(sessDir); rec.Session != "" && sessionLive(lockPath, rec) {
			continue
		}
		for _, wt := range l.Worktrees {
			common := l.GitDir
			if common == "" {
				common = worktreeCommonDir(wt)
			}
			if err := removeWorktree(ctx, bin, common, cacheDir, wt); err != nil {
				errs = append(errs, err)
			}
		}
		os.Remove(filepath.Join(cacheDir, "worktrees", l.SessionID))
		if l.GitDir != "" {
			if _, err := os.Stat(l.GitDir); err == nil {
				if err := deleteSessionRefs(ctx, bin, l.GitDir, l.SessionID); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if err := os.RemoveAll(sessDir); err != nil {
			errs = append(errs, err)
		}
	}
	// Private dirs last, once their sessions' worktrees are gone; a session that started using
	// one meanwhile keeps it.
	live := liveGitDirs(cacheDir)
	for _, l := range private {
		if !within(filepath.Join(cacheDir, "repos"), l.Dir) || l.Dir == filepath.Join(cacheDir, "repos") || live[l.Dir] {
			continue
		}
		if err := os.RemoveAll(l.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func resolveCache(cacheDir string) (string, error) {
	if cacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return "", err
		}
		cacheDir = d
	}
	c, err := canonical(cacheDir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return c, err
}

func readRecord(sessDir string) (record, string) {
	lockPath := filepath.Join(sessDir, "lock")
	var rec record
	if b, err := os.ReadFile(lockPath); err == nil {
		json.Unmarshal(b, &rec)
	}
	return rec, lockPath
}

func liveGitDirs(cacheDir string) map[string]bool {
	live := map[string]bool{}
	sessions, _ := os.ReadDir(filepath.Join(cacheDir, "sessions"))
	for _, e := range sessions {
		rec, lockPath := readRecord(filepath.Join(cacheDir, "sessions", e.Name()))
		if rec.GitDir != "" && sessionLive(lockPath, rec) {
			live[rec.GitDir] = true
		}
	}
	return live
}

func listDirs(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// worktreeCommonDir reads a linked worktree's .git file ("gitdir: <common>/worktrees/<id>").
func worktreeCommonDir(wt string) string {
	b, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		return ""
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return ""
	}
	meta := filepath.Dir(p) // <common>/worktrees
	if filepath.Base(meta) != "worktrees" {
		return ""
	}
	return filepath.Dir(meta)
}
