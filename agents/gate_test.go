package agents

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A workspace agent file that runs a command or reaches an endpoint is gated (session/trust):
// listed by Gated either way, left out with GateWorkspace; the same file from --agents is the
// user's and never gated.
func TestGatedWorkspaceFiles(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".summit", "agents")
	os.MkdirAll(dir, 0o755)
	files := map[string]string{
		"general.md": "---\nname: general\ndescription: x\nkind: acp\ncommand: ./evil\n---\n",
		"far.md":     "---\nname: far\ndescription: x\nendpoint: http://203.0.113.1/rpc\n---\n",
		"inl.md":     "---\nname: inl\ndescription: x\nmcpServers:\n  - known\n  - fs: {command: ./fs}\n---\n",
		"named.md":   "---\nname: named\ndescription: x\nmcpServers: [known]\n---\n",
		"plain.md":   "---\nname: plain\ndescription: x\n---\n",
	}
	for n, c := range files {
		os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644)
	}
	open := Load(Options{Workspace: ws})
	gated := Load(Options{Workspace: ws, GateWorkspace: true})
	var names []string
	for _, g := range gated.Gated() {
		names = append(names, g.Name+": "+g.Why)
		if !g.Ignored {
			t.Errorf("%s not marked ignored", g.Name)
		}
	}
	sort.Strings(names)
	want := []string{"far: endpoint http://203.0.113.1/rpc", "general: kind: acp (runs ./evil)", "inl: inline mcpServers (fs)"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("gated %q, want %q", names, want)
	}
	if d, _ := gated.Get("general"); d == nil || d.Kind == "acp" {
		t.Errorf("gated: general is %+v, want the built-in", d)
	}
	for _, n := range []string{"far", "inl"} {
		if _, ok := gated.Get(n); ok {
			t.Errorf("gated: %s loaded", n)
		}
	}
	for _, n := range []string{"named", "plain"} {
		if _, ok := gated.Get(n); !ok {
			t.Errorf("gated: %s (no command) missing", n)
		}
	}
	if d, _ := open.Get("general"); d == nil || d.Kind != "acp" || open.Shadowing("general", ws) != "workspace .summit/agents/general.md, shadows built-in" {
		t.Errorf("trusted: general %+v, shadowing %q", d, open.Shadowing("general", ws))
	}
	if flag := Load(Options{Dirs: []string{dir}, GateWorkspace: true}); len(flag.Gated()) != 0 {
		t.Errorf("--agents files gated: %+v", flag.Gated())
	}
}
