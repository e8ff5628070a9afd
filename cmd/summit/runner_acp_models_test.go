package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/runners"
)

// keyedAnthropicServer answers Anthropic's Messages API, but only requests that carry the key:
// any other is a 401 and counted.
func keyedAnthropicServer(t *testing.T, key string) (srv *httptest.Server, served, refused func() int) {
	var mu sync.Mutex
	ok, bad := 0, 0
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Api-Key") != key || r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
			mu.Lock()
			bad++
			mu.Unlock()
			w.WriteHeader(401)
			fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		var body struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		ok++
		mu.Unlock()
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"answered by %s through the session"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_read_input_tokens":100,"output_tokens":7}}`, body.Model, body.Model)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return ok }, func() int { mu.Lock(); defer mu.Unlock(); return bad }
}

// An ACP agent placed on a runner that holds no key calls its model through the session: the
// runner points it at a loopback relay of the job (its ANTHROPIC_BASE_URL, a placeholder key),
// the relay sends each request over NATS to the session, and the session makes it with its own
// key. The runner's own ANTHROPIC_BASE_URL and (wrong) key, which the agent's env entries name,
// are not used. No key is in the runner's environment, the job or the recording.
func TestRunnerACPAgentModelsThroughSession(t *testing.T) {
	forkEnv(t)
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	const key = "k-only-on-the-laptop-acp"
	t.Setenv("SUMMIT_TEST_KEY", key)
	srv, served, refused := keyedAnthropicServer(t, key)
	dir := t.TempDir()
	bin := fakeAgent(t)
	agentScript := filepath.Join(dir, "agent.script")
	os.WriteFile(agentScript, []byte("model anthropic what are you?\n"+
		"say Done.\\n```json\\n{\"agent_name\": \"fake\", \"summary\": \"asked its model\", \"confidence\": 0.9}\\n```\n"), 0o644)
	os.MkdirAll(filepath.Join(cfgHome, "summit"), 0o700)
	os.WriteFile(filepath.Join(cfgHome, "summit", "config.yaml"), []byte(`providers:
  anthropic: {kind: anthropic, base_url: `+srv.URL+`, key_env: SUMMIT_TEST_KEY}
models:
  fake-model: {provider: anthropic, model: claude-fake, price: {input: 3, output: 15}}
acp_agents:
  fake:
    command: `+bin+`
    env: {FAKE_ACP_SCRIPT: $FAKE_ACP_SCRIPT, ANTHROPIC_BASE_URL: $ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY: $ANTHROPIC_API_KEY}
`), 0o600)
	url := natsServer(t)
	_, pub, _ := summit(t, "runner", "key")
	// The runner's environment: no session key; its own endpoint (the same server) and a key
	// of its own that the server refuses: an agent that used them would be refused.
	var env []string
	for _, kv := range runnerEnv(t, "FAKE_ACP_SCRIPT="+agentScript,
		"ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-the-runners-own") {
		if !strings.HasPrefix(kv, "SUMMIT_TEST_KEY=") {
			env = append(env, kv)
		}
	}
	startRunnerWith(t, url, "r-acpm", strings.TrimSpace(pub), env)
	jobs := watchJobs(t, url)
	ws := runnerWorkspace(t)
	script := filepath.Join(dir, "s.summit")
	os.WriteFile(script, []byte("/delegate \"ask your model\" --agent-type fake --on r-acpm\n/wait sa-1\n"), 0o644)
	rec := filepath.Join(dir, "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--nats", url, "--insecure",
		"--approve", "all", "--record", rec)
	if code != 0 {
		t.Fatalf("summit run exits %d\n%s\n%s", code, out, errOut)
	}
	var stop *session.SubagentStop
	var turns []session.ModelTurn
	answered, called := false, ""
	for _, e := range recordingEvents(t, rec) {
		switch d := e.Data.(type) {
		case session.ModelTurn:
			if e.SubagentID == "sa-1" {
				turns = append(turns, d)
			}
		case session.SubagentStop:
			stop = &d
		case session.TranscriptEvent:
			answered = answered || strings.Contains(d.Text, "answered by claude-fake through the session")
			if strings.HasPrefix(d.Text, "model call to ") {
				called = d.Text
			}
		}
	}
	if !answered || served() != 1 || refused() != 0 || stop == nil || stop.Outcome != session.OutcomeSuccess {
		t.Fatalf("the model's answer in the transcript %v; the server served %d and refused %d (want 1, 0); stop %+v\n\n%s", answered, served(), refused(), stop, out)
	}
	// The session recorded the relayed call as a ModelTurn with the tokens the server reported
	// (cache reads are input), and the stop its tokens and its cost at the config's price.
	want := session.ModelTurn{Turn: 1, Attempt: 1, Tokens: session.Tokens{Input: 112, Output: 7}, Stop: "end_turn", Model: "claude-fake"}
	if len(turns) != 1 || turns[0] != want {
		t.Fatalf("ModelTurns %+v, want [%+v]", turns, want)
	}
	if stop.Tokens != want.Tokens || stop.CostUSD == nil || math.Abs(*stop.CostUSD-(112*3+7*15)/1e6) > 1e-12 {
		t.Fatalf("the stop's tokens %+v, cost %v; want %+v, $%g", stop.Tokens, stop.CostUSD, want.Tokens, (112*3+7*15)/1e6)
	}
	// The agent called the relay on loopback with the placeholder, not the runner's endpoint or key.
	if !strings.HasPrefix(called, "model call to http://127.0.0.1:") || !strings.HasSuffix(called, " with key "+runners.RelayKey) ||
		strings.Contains(called, srv.URL) {
		t.Fatalf("the agent's model call: %q", called)
	}
	js := jobs()
	if len(js) != 1 || !strings.Contains(js[0], `"models":"session"`) || !strings.Contains(js[0], `"anthropic":{"kind":"anthropic"}`) ||
		strings.Contains(js[0], key) || strings.Contains(js[0], srv.URL) {
		t.Fatalf("the job: %v", js)
	}
	b, _ := os.ReadFile(rec)
	if strings.Contains(string(b), key) || strings.Contains(string(b), "sk-the-runners-own") {
		t.Fatal("a key is in the recording")
	}
}
