package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The verify: section: read with its defaults, per agent commands, the workspace file
// replacing the user's and marked as the workspace's; bad values named at file:line.
func TestConfigVerify(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	writeConfig(t, user, "verify:\n  command: go test ./...\n  agents:\n    tester: go vet ./...\n")
	c, err := LoadConfig(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	v := c.Verify
	if v.Command != "go test ./..." || v.TimeoutOr() != DefaultVerifyTimeout || v.Workspace {
		t.Errorf("user verify = %+v", v)
	}
	if got := v.CommandFor("my-tester", "tester"); got != "go vet ./..." {
		t.Errorf("CommandFor(tester) = %q", got)
	}
	if got := v.CommandFor("", "builder"); got != "go test ./..." {
		t.Errorf("CommandFor(builder) = %q", got)
	}
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("verify:\n  command: make check\n  timeout: 60\n"), 0o644)
	if c, err = LoadConfig(ws, user); err != nil {
		t.Fatal(err)
	}
	if v := c.Verify; v.Command != "make check" || v.TimeoutOr() != 60 || !v.Workspace || len(v.Agents) != 0 {
		t.Errorf("workspace verify = %+v", v)
	}
	for text, want := range map[string]string{
		"\n\nverify:\n  command: x\n  timeout: 601\n": "config.yaml:3: verify: timeout 601: want seconds from 1 to 600",
		"verify:\n  timeout: 30\n":                    "config.yaml:1: verify: a timeout without a command",
		"verify:\n  agents:\n    tester: \"\"\n":      "verify: agents.tester: want a shell command",
		"verify:\n  comand: x\n":                      "field comand not found",
	} {
		writeConfig(t, user, text)
		os.Remove(filepath.Join(ws, ".summit", "config.yaml"))
		_, err := LoadConfig(ws, user)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", text, err, want)
		}
	}
}
