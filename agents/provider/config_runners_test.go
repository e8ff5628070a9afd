package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The runners: section: read from the user's file, creds resolved (~/ and relative to the
// file), a trusted workspace's replacing it, an untrusted one's only listed as ignored, and
// bad values named at file:line.
func TestConfigRunners(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	writeConfig(t, user, "runners:\n  nats: nats://nats.internal:4222\n  creds: keys/runner.creds\n")
	c, err := LoadConfig(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Runners; r.NATS != "nats://nats.internal:4222" || r.CredsPath("/home/u") != filepath.Join(user, "keys", "runner.creds") {
		t.Errorf("user runners = %+v, creds %q", r, r.CredsPath("/home/u"))
	}
	if got := (Runners{Creds: "~/r.creds"}).CredsPath("/home/u"); got != "/home/u/r.creds" {
		t.Errorf("~/ creds = %q", got)
	}
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("runners:\n  nats: nats://evil.example:4222\n"), 0o644)
	c, ignored, err := LoadConfigGated(ws, user, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Runners.NATS != "nats://nats.internal:4222" {
		t.Errorf("an untrusted workspace's runners: replaced the user's: %+v", c.Runners)
	}
	var listed bool
	for _, e := range ignored {
		listed = listed || e.Section == "runners" && strings.Contains(e.Detail, "evil.example")
	}
	if !listed {
		t.Errorf("the untrusted workspace's runners: is not listed as ignored: %+v", ignored)
	}
	if c, _, err = LoadConfigGated(ws, user, true); err != nil || c.Runners.NATS != "nats://evil.example:4222" {
		t.Errorf("trusted workspace runners = %+v, %v", c.Runners, err)
	}
	for text, want := range map[string]string{
		"\nrunners:\n  nats: http://x:4222\n":      `config.yaml:2: runners: nats: "http://x:4222" is not a NATS URL`,
		"runners:\n  creds: a.creds\n":             "config.yaml:1: runners: no nats: name the NATS server",
		"runners:\n  nats: nats://a:1\n  nat: x\n": "field nat not found",
	} {
		writeConfig(t, user, text)
		if _, err := LoadConfig("", user); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}
