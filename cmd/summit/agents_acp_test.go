package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// agents list shows the external ACP agents of the config with the others.
func TestAgentsListACP(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o700)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("acp_agents:\n  ext: {command: /bin/true, args: [--acp]}\n"), 0o600)
	trustWS(t, ws)
	code, out, errOut := summit(t, "agents", "list", "--workspace", ws)
	if code != 0 || !regexp.MustCompile(`(?m)^ext +acp +session's +session's +external agent over ACP: /bin/true --acp`).MatchString(out) {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}
