package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// keyedModelServer answers like an OpenAI-compatible server, but only requests that carry
// the key: any other is a 401 and counted.
func keyedModelServer(t *testing.T, key string) (srv *httptest.Server, served, refused func() int) {
	var mu sync.Mutex
	ok, bad := 0, 0
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key || r.URL.Path != "/v1/chat/completions" {
			mu.Lock()
			bad++
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		model, _ := body["model"].(string)
		mu.Lock()
		ok++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", model, delta, finish)
			w.(http.Flusher).Flush()
		}
		chunk(`{"role":"assistant","content":"Done.\n`+"```json\\n"+`{\"summary\": \"answered by `+model+` through the session\", \"confidence\": 0.9}\n`+"```"+`"}`, "null")
		chunk(`{}`, `"stop"`)
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":500,\"total_tokens\":1500}}\n\n", model)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return ok }, func() int { mu.Lock(); defer mu.Unlock(); return bad }
}

// A runner with no key, no model configuration, no --tapes and no --local-models runs a model
// subagent: each model request goes back over NATS to the session, which makes it with its
// own key; the answer, the turn's tokens and the cost are in the local recording.
func TestRunnerModelsThroughSession(t *testing.T) {
	forkEnv(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	const key = "k-only-on-the-laptop"
	t.Setenv("SUMMIT_TEST_KEY", key)
	srv, served, refused := keyedModelServer(t, key)
	url := natsServer(t)
	code, pub, errOut := summit(t, "runner", "key")
	if pub = strings.TrimSpace(pub); code != 0 {
		t.Fatalf("runner key: %d %s", code, errOut)
	}
	// The runner's own environment: no key, and a config directory of its own with nothing.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SUMMIT_TEST_KEY=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "XDG_CONFIG_HOME="+t.TempDir())
	startRunnerWith(t, url, "m1", pub, env)

	cfgDir := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "summit")
	os.MkdirAll(cfgDir, 0o700)
	os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte(`providers:
  laptop: {kind: openai, base_url: `+srv.URL+`/v1, key_env: SUMMIT_TEST_KEY}
models:
  default: {provider: laptop, model: small, price: {input: 2, output: 8}}
default_provider: laptop
`), 0o600)
	ws := runnerWorkspace(t)
	script := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(script, []byte("/delegate \"say what you are\" --agent-type general --on m1\n/wait sa-1\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--nats", url, "--insecure",
		"--approve", "all", "--record", rec)
	if code != 0 {
		t.Fatalf("summit run exits %d\n%s\n%s", code, out, errOut)
	}
	if served() < 1 || refused() != 0 {
		t.Fatalf("the model server answered %d requests and refused %d (a request without the session's key)", served(), refused())
	}
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var routed, allRouted, turns, answer, placed int
	var stop *session.SubagentStop
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.SubagentSpawned:
			if d.Runner == "m1" {
				placed++
			}
		case session.ModelRouted:
			allRouted++ // the runner's own first route is its placeholder: never recorded here
			if d.Provider == "laptop" && d.Model == "small" {
				routed++
			}
		case session.ModelTurn:
			if e.SubagentID == "sa-1" && d.Tokens.Input == 1000 && d.Tokens.Output == 500 {
				turns++
			}
		case session.TranscriptEvent:
			if strings.Contains(d.Text, "answered by small through the session") {
				answer++
			}
		case session.SubagentStop:
			stop = &d
		}
	}
	if placed != 1 || routed != 1 || allRouted != 1 || turns != 1 || answer == 0 {
		t.Fatalf("placed %d, ModelRouted laptop/small %d (of %d), ModelTurn 1000/500 %d, answer %d; want 1 1 (1) 1 ≥1\n%s", placed, routed, allRouted, turns, answer, out)
	}
	if stop == nil || stop.Outcome != session.OutcomeSuccess || stop.Tokens.Input != 1000 || stop.Tokens.Output != 500 ||
		stop.CostUSD == nil || fmt.Sprintf("%.4f", *stop.CostUSD) != "0.0060" {
		t.Fatalf("SubagentStop: %+v", stop)
	}
	b, _ := os.ReadFile(rec)
	if strings.Contains(string(b), key) {
		t.Fatal("the key is in the recording")
	}
}
