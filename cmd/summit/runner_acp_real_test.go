package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/provider/tapeserve"
	"github.com/summit-dev/summit/session"
)

// The real Claude Code (claude-agent-acp from session/live/testdata/npm, as session/live's
// TestACPRealClaudeCode drives it) placed on a real `summit runner` process that holds no key:
// its model calls reach tapes served as the Anthropic API only through the runner's relay and
// the session, which adds its key; the server refuses any request without it.
func TestRunnerRealClaudeCodeModelsThroughSession(t *testing.T) {
	bin, err := filepath.Abs("../../session/live/testdata/npm/node_modules/.bin/claude-agent-acp")
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(bin); err != nil || nodeErr != nil {
		msg := "node or claude-agent-acp is missing: install it as session/live/acp_real_test.go says"
		if os.Getenv("SUMMIT_E2E") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	forkEnv(t)
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	const key = "k-only-on-the-laptop-claude"
	t.Setenv("SUMMIT_TEST_KEY", key)
	tapes, err := provider.ParseTapes([]byte(`
tapes:
  - name: claude-title
    match: {agent: summit-fast}
    steps:
      - say: '{"title": "Hello"}'
  - name: claude-main
    match: {agent: summit-main}
    steps:
      - say: "Hello through the session."
      - capsule: {summary: "answered through the session", confidence: 0.9}
`), "claude.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var served []string
	refused := 0
	h := tapeserve.New(tapes, tapeserve.Options{NoSleep: true, Log: func(l string) { mu.Lock(); served = append(served, l); mu.Unlock() }})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			mu.Lock()
			refused++
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	vars := []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
		"ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "CLAUDE_CONFIG_DIR", "HOME",
		"DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"}
	var refs []string
	for _, v := range vars {
		refs = append(refs, v+": $"+v)
	}
	os.MkdirAll(filepath.Join(cfgHome, "summit"), 0o700)
	os.WriteFile(filepath.Join(cfgHome, "summit", "config.yaml"), []byte(`providers:
  anthropic: {kind: anthropic, base_url: `+srv.URL+`, key_env: SUMMIT_TEST_KEY}
acp_agents:
  claude-real:
    command: `+bin+`
    env: {`+strings.Join(refs, ", ")+`}
`), 0o600)
	url := natsServer(t)
	_, pub, _ := summit(t, "runner", "key")
	// The runner's environment: Claude Code's settings, its own endpoint (the same server) and
	// a key of its own that the server refuses; no session key.
	home := t.TempDir()
	var env []string
	for _, kv := range runnerEnv(t, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-the-runners-own",
		"ANTHROPIC_MODEL=summit-main", "ANTHROPIC_SMALL_FAST_MODEL=summit-fast", "ANTHROPIC_DEFAULT_OPUS_MODEL=summit-main",
		"ANTHROPIC_DEFAULT_SONNET_MODEL=summit-main", "ANTHROPIC_DEFAULT_HAIKU_MODEL=summit-fast", "CLAUDE_CONFIG_DIR="+home, "HOME="+home,
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1") {
		if !strings.HasPrefix(kv, "SUMMIT_TEST_KEY=") {
			env = append(env, kv)
		}
	}
	startRunnerWith(t, url, "r-claude", strings.TrimSpace(pub), env)
	ws := runnerWorkspace(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.summit")
	os.WriteFile(script, []byte("/delegate \"say hello\" --agent-type claude-real --on r-claude\n/wait sa-1\n"), 0o644)
	rec := filepath.Join(dir, "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--nats", url, "--insecure",
		"--approve", "all", "--record", rec)
	mu.Lock()
	log, nRefused := strings.Join(served, "\n"), refused
	mu.Unlock()
	if code != 0 {
		t.Fatalf("summit run exits %d\n%s\n%s\nserved:\n%s", code, out, errOut, log)
	}
	var stop *session.SubagentStop
	said := false
	for _, e := range recordingEvents(t, rec) {
		switch d := e.Data.(type) {
		case session.SubagentStop:
			stop = &d
		case session.TranscriptEvent:
			said = said || strings.Contains(d.Text, "Hello through the session.")
		}
	}
	if stop == nil || stop.Outcome != session.OutcomeSuccess || stop.Capsule == nil || stop.Capsule.Summary != "answered through the session" ||
		!said || nRefused != 0 || !strings.Contains(log, "tape claude-main") {
		t.Fatalf("stop %+v, said %v, refused %d\nserved:\n%s\n%s", stop, said, nRefused, log, out)
	}
	b, _ := os.ReadFile(rec)
	if strings.Contains(string(b), key) || strings.Contains(string(b), "sk-the-runners-own") {
		t.Fatal("a key is in the recording")
	}
}
