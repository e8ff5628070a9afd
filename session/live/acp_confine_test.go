package live

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// An external agent writes files itself (as Claude Code and Codex do), not only over
// fs/write_text_file: the process is confined to its worktree. It cannot write the main
// workspace, its .summit/ or summit's config dir, by absolute path or through a symlink in
// the worktree, while what it writes in its worktree is its recorded change.
func TestACPAgentProcessConfined(t *testing.T) {
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: the agent process cannot be confined here")
	}
	userConf := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", userConf)
	if err := os.MkdirAll(filepath.Join(userConf, "summit"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := newACPCase(t, "", nil)
	if err := os.Symlink(c.ws, filepath.Join(c.ws, "link-to-ws")); err != nil { // in the snapshot, so in the worktree too
		t.Fatal(err)
	}
	escapes := []string{filepath.Join(c.ws, "escape.txt"), filepath.Join(c.ws, ".summit", "escape.txt"),
		filepath.Join(userConf, "summit", "config.yaml"), "link-to-ws/via-link.txt"}
	var script strings.Builder
	for _, p := range escapes {
		script.WriteString("direct " + p + " pwned\n")
	}
	script.WriteString("direct inside.txt written in the worktree\nsay " + capsule + "\n")
	if err := os.WriteFile(filepath.Join(filepath.Dir(c.log), "script"), []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	o := c.live(nil, "/delegate write files --agent-type fake")
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess || !slices.Equal(st.ArtifactPaths, []string{"inside.txt"}) {
		t.Errorf("stop: %+v", st)
	}
	for _, p := range escapes {
		c.logHas(t, "direct "+p+": err=open ")
		if !slices.ContainsFunc(c.agentLog(), func(l string) bool {
			return strings.HasPrefix(l, "direct "+p+": ") && strings.HasSuffix(l, "permission denied")
		}) {
			t.Errorf("writing %s was not refused by the confinement:\n%s", p, strings.Join(c.agentLog(), "\n"))
		}
	}
	c.logHas(t, "direct inside.txt: err=<nil>")
	for _, p := range []string{filepath.Join(c.ws, "escape.txt"), filepath.Join(c.ws, ".summit", "escape.txt"),
		filepath.Join(userConf, "summit", "config.yaml"), filepath.Join(c.ws, "via-link.txt"), filepath.Join(c.ws, "inside.txt")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	var paths []string
	for _, f := range o.changes(t, "sa-1").Files {
		paths = append(paths, f.Path+" "+f.Kind)
	}
	if !slices.Equal(paths, []string{"inside.txt added"}) {
		t.Errorf("changes: %v", paths)
	}
}
