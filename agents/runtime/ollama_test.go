package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// TestLoopOverOllamaNative runs the loop against a server speaking Ollama's native /api/chat
// NDJSON, reached through the configuration as a user with an old base_url (…/v1) and a
// num_ctx writes it. The first request finds Ollama's queue full (503, retried); then the model
// thinks and calls read_file twice without call ids; the next request must carry both calls
// back with object arguments (Ollama refuses string ones with a 400) and both results under
// tool_name, and gets the capsule. Every request asks for the configured context size.
func TestLoopOverOllamaNative(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n"), 0o644)
	stream := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "provider", "testdata", "streams", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	toolTurn, final := stream("ollama_native_think_tool_calls.ndjson"), stream("ollama_native_final.ndjson")
	type wire struct {
		Model    string `json:"model"`
		Messages []struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"` // as Ollama decodes them
				} `json:"function"`
			} `json:"tool_calls"`
			ToolName string `json:"tool_name"`
		} `json:"messages"`
		Options map[string]any `json:"options"`
	}
	var mu sync.Mutex
	var reqs []wire
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(code int, msg string) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(code)
			json.NewEncoder(w).Encode(map[string]string{"error": msg})
		}
		if r.Method != http.MethodPost || r.URL.Path != "/api/chat" {
			http.Error(w, "404 page not found", http.StatusNotFound)
			return
		}
		var req wire
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		mu.Lock()
		reqs = append(reqs, req)
		n := len(reqs)
		mu.Unlock()
		send := func(body []byte) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Write(body)
		}
		switch {
		case req.Model != "qwen3:8b":
			fail(http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		case n == 1:
			fail(http.StatusServiceUnavailable, "server busy, please try again.  maximum pending requests exceeded")
		case n == 2:
			send(toolTurn)
		default:
			send(final)
		}
	}))
	defer srv.Close()

	cfg := provider.Config{Providers: map[string]provider.ProviderConfig{
		"ollama": {Kind: "ollama", BaseURL: srv.URL + "/v1", Model: "qwen3:8b", NumCtx: 16384}}, DefaultProvider: "ollama"}
	prov, model, err := provider.NewRouter(cfg, provider.NewScript(provider.ScriptConfig{}), func(string) string { return "" }).Resolve("default")
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := tools.New(ws, tools.Options{})
	var kinds []string
	var errs []session.SubagentError
	res := Run(context.Background(), Config{
		Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Model: model, Sandbox: sb, System: "sys", Task: "read a.go",
		Policy: agents.Policy{Mode: agents.ModePlan, Tools: []string{"read_file"}},
		Clock:  realClock{}, Backoff: func(int) time.Duration { return time.Millisecond },
		Emit: func(d session.Data) error {
			switch e := d.(type) {
			case session.TranscriptEvent:
				kinds = append(kinds, e.EventType)
			case session.SubagentError:
				errs = append(errs, e)
			}
			return nil
		},
	})
	if res.Err != nil || res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != "read a.go" || res.ToolCalls != 2 {
		t.Fatalf("result %+v err %v", res, res.Err)
	}
	if res.Tokens.Input != 412+530 || res.Tokens.Output != 61+38 {
		t.Errorf("tokens %+v", res.Tokens)
	}
	if got := strings.Join(kinds, ","); got != "error,thinking,tool_call,tool_result,tool_call,tool_result,thinking,token" {
		t.Errorf("events %s", got)
	}
	if len(errs) != 1 || !errs[0].Retryable || !strings.Contains(errs[0].Error, "server busy") {
		t.Errorf("subagent errors %+v", errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.Options["num_ctx"] != 16384.0 {
			t.Errorf("request %d: options %v", i+1, r.Options)
		}
	}
	msgs := reqs[2].Messages
	if len(msgs) != 5 || msgs[2].Role != "assistant" || len(msgs[2].ToolCalls) != 2 {
		t.Fatalf("turn 2 messages: %+v", msgs)
	}
	if a := msgs[2].ToolCalls; a[0].Function.Arguments["path"] != "a.go" || a[1].Function.Arguments["path"] != "b.go" {
		t.Errorf("calls sent back: %+v", a)
	}
	if m := msgs[3]; m.Role != "tool" || m.ToolName != "read_file" || !strings.Contains(m.Content, "package a") {
		t.Errorf("first result: %+v", m)
	}
	if m := msgs[4]; m.Role != "tool" || m.ToolName != "read_file" || m.Content == "" {
		t.Errorf("second result: %+v", m)
	}
}
