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
// lock in the cache names, the private git dirs of non-git workspaces (snapshots of other
// workspaces), the sessions' temporary indexes, and every other subagent's worktree.
func (x *Orchestrator) otherSummitPaths(root string) []string {
	cache := x.o.CacheDir
	if cache == "" {
		cache, _ = gitws.DefaultCacheDir()
	}
	if cache == "" {
		return nil
	}
	out := []string{filepath.Join(cache, "repos")}
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
