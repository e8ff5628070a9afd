package provider

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// acp_agents' writable lists where the agent process may write besides its worktree: read
// from the config, each entry absolute (/, ~ or a variable), else the file fails to load with
// its line.
func TestACPAgentWritable(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".summit"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(ws, ".summit", "config.yaml")
	os.WriteFile(conf, []byte("acp_agents:\n  mine:\n    command: my-agent\n    writable: [\"~/.my-agent/\", \"${MY_HOME:-~/.x}\", /data/state.json]\n"), 0o644)
	cfg, err := LoadConfig(ws, "")
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.ACPAgents["mine"].Writable; !slices.Equal(w, []string{"~/.my-agent/", "${MY_HOME:-~/.x}", "/data/state.json"}) {
		t.Errorf("writable: %q", w)
	}
	os.WriteFile(conf, []byte("acp_agents:\n  mine:\n    command: my-agent\n    writable: [state/]\n"), 0o644)
	if _, err := LoadConfig(ws, ""); err == nil || !strings.Contains(err.Error(), `config.yaml:2: acp_agents.mine: writable "state/" is not an absolute path`) {
		t.Errorf("a relative writable: %v", err)
	}
}
