package live

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session/gitws"
)

// otherSummitPaths are what summit knows of beyond this subagent's own worktree (root), for a
// subagent's jail to hide (tools.Options.Hidden): the .summit/ of every workspace a session
// lock in the cache names, the private git dirs of other non-git workspaces (snapshots of
// them), the sessions' temporary indexes, and every other subagent's worktree.
func (x *Orchestrator) otherSummitPaths(root string) []string {
	cache := x.o.CacheDir
	if cache == "" {
		cache, _ = gitws.DefaultCacheDir()
	}
	if cache == "" {
		return nil
	}
	if real, err := filepath.EvalSymlinks(cache); err == nil {
		cache = real
	}
	// The private git dirs of non-git workspaces, but the one this worktree belongs to (its
	// git commit reads it).
	own := worktreeGitDir(root)
	repos, _ := filepath.Glob(filepath.Join(cache, "repos", "*"))
	var out []string
	for _, r := range repos {
		if own != r && !strings.HasPrefix(own, r+string(filepath.Separator)) {
			out = append(out, r)
		}
	}
	locks, _ := filepath.Glob(filepath.Join(cache, "sessions", "*", "lock"))
	out = append(out, filepath.Join(cache, "sessions"))
	seen := map[string]bool{}
	for _, l := range locks {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		var rec struct {
			Workspace string `json:"workspace"`
		}
		if json.Unmarshal(b, &rec) == nil && filepath.IsAbs(rec.Workspace) && !seen[rec.Workspace] {
			seen[rec.Workspace] = true
			out = append(out, filepath.Join(rec.Workspace, tools.PrivateDir))
		}
	}
	wts, _ := filepath.Glob(filepath.Join(cache, "worktrees", "*", "*"))
	for _, w := range wts {
		if root != w && !strings.HasPrefix(root, w+string(filepath.Separator)) {
			out = append(out, w)
		}
	}
	return out
}

// worktreeGitDir is the git dir a linked worktree's .git file (at root or above it) names, or "".
func worktreeGitDir(root string) string {
	for d := root; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, ".git")); err == nil {
			g, ok := strings.CutPrefix(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), "gitdir: ")
			if !ok {
				return ""
			}
			if !filepath.IsAbs(g) {
				g = filepath.Join(d, g)
			}
			if real, err := filepath.EvalSymlinks(g); err == nil {
				g = real
			}
			return filepath.Clean(g)
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
