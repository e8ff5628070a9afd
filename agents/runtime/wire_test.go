package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// These tests run the loop against servers that send what the real services send (the
// recorded streams of agents/provider/testdata/streams) and that refuse a second turn the
// way the real services do when summit gets the first one wrong.

// recordedStreams reads every recorded stream, before any server starts: a handler runs on
// its own goroutine, where a test must not fail fatally.
func recordedStreams(t testing.TB) map[string][]byte {
	t.Helper()
	dir := filepath.Join("..", "provider", "testdata", "streams")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func writeSSE(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for len(body) > 0 { // a few bytes at a time, as a slow model would
		n := min(7, len(body))
		w.Write(body[:n])
		w.(http.Flusher).Flush()
		body = body[n:]
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// recorder keeps a run's requests and events.
type recorder struct {
	mu     sync.Mutex
	bodies []map[string]any
	raw    []string
	events []session.Data
}

func (r *recorder) request(req *http.Request) (n int, body map[string]any, raw string) {
	b, _ := io.ReadAll(req.Body)
	json.Unmarshal(b, &body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, body)
	r.raw = append(r.raw, string(b))
	return len(r.bodies), body, string(b)
}

func (r *recorder) emit(d session.Data) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, d)
	return nil
}

func (r *recorder) errors() []session.SubagentError {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []session.SubagentError
	for _, e := range r.events {
		if se, ok := e.(session.SubagentError); ok {
			out = append(out, se)
		}
	}
	return out
}

func runLoop(t *testing.T, prov provider.Provider, rec *recorder, tools_ []string, mode agents.PermissionMode, ws string) Result {
	t.Helper()
	sb, _ := tools.New(ws, tools.Options{})
	return Run(context.Background(), Config{
		Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Sandbox: sb, System: "sys", Task: "do it",
		Policy: agents.Policy{Mode: mode, Tools: tools_}, Clock: realClock{}, Emit: rec.emit,
		Approve: func(context.Context, string, map[string]any, string) (bool, string, error) { return true, "", nil },
	})
}

// TestLoopOverOllamaSharedIndex: Ollama sends two calls under one index (or none); summit must
// run both and send both back well formed, since Ollama parses the arguments of every
// assistant tool call and refuses the request when one is not a JSON object. Ollama does not
// use reasoning_content, so summit must not send it.
func TestLoopOverOllamaSharedIndex(t *testing.T) {
	streams := recordedStreams(t)
	for _, file := range []string{"ollama_index0_two_calls.sse", "ollama_noindex_two_calls.sse"} {
		t.Run(file, func(t *testing.T) {
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n"), 0o644)
			os.WriteFile(filepath.Join(ws, "b.go"), []byte("package b\n"), 0o644)
			rec := &recorder{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n, body, raw := rec.request(r)
				if n == 1 {
					writeSSE(w, streams[file])
					return
				}
				msgs, _ := body["messages"].([]any)
				for _, m := range msgs {
					m, _ := m.(map[string]any)
					calls, _ := m["tool_calls"].([]any)
					for _, c := range calls {
						fn, _ := c.(map[string]any)["function"].(map[string]any)
						var args map[string]any
						if s, _ := fn["arguments"].(string); json.Unmarshal([]byte(s), &args) != nil {
							writeJSON(w, 400, `{"error":{"message":"invalid tool call arguments","type":"invalid_request_error","param":null,"code":null}}`)
							return
						}
					}
				}
				if strings.Contains(raw, "reasoning_content") {
					t.Errorf("reasoning_content sent to Ollama: %s", raw)
				}
				writeSSE(w, streams["ollama_final.sse"])
			}))
			defer srv.Close()
			prov, _ := provider.NewOpenAI(provider.OpenAIConfig{Name: "ollama", BaseURL: srv.URL + "/v1", Model: "qwen2.5-coder:7b"})
			res := runLoop(t, prov, rec, []string{"read_file"}, agents.ModePlan, ws)
			if res.Err != nil || res.Outcome != session.OutcomeSuccess || res.ToolCalls != 2 || res.Capsule.Summary != "read a.go and b.go" {
				t.Fatalf("result %+v err %v", res, res.Err)
			}
			if turn2 := rec.raw[1]; !strings.Contains(turn2, "package a") || !strings.Contains(turn2, "package b") {
				t.Errorf("turn 2 lacks a result: %s", turn2)
			}
		})
	}
}

// TestLoopOverDeepSeekThinking: DeepSeek's thinking mode refuses a turn whose tool-calling
// assistant message lacks the reasoning_content it streamed.
func TestLoopOverDeepSeekThinking(t *testing.T) {
	streams := recordedStreams(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n"), 0o644)
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, body, _ := rec.request(r)
		if n == 1 {
			writeSSE(w, streams["deepseek_thinking_tool_call.sse"])
			return
		}
		msgs, _ := body["messages"].([]any)
		for i, m := range msgs {
			m, _ := m.(map[string]any)
			if _, calls := m["tool_calls"]; m["role"] == "assistant" && calls && m["reasoning_content"] != "The user wants a.go; read it first." {
				writeJSON(w, 400, fmt.Sprintf(`{"error":{"message":"Missing `+"`reasoning_content`"+` field in the assistant message at message index %d. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, i))
				return
			}
		}
		writeSSE(w, streams["deepseek_thinking_final.sse"])
	}))
	defer srv.Close()
	prov, _ := provider.NewOpenAI(provider.OpenAIConfig{Name: "deepseek", BaseURL: srv.URL, Model: "deepseek-reasoner"})
	res := runLoop(t, prov, rec, []string{"read_file"}, agents.ModePlan, ws)
	if res.Err != nil || res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != "a.go is package a" {
		t.Fatalf("result %+v err %v", res, res.Err)
	}
	if res.Tokens.Input != 720 || res.Tokens.Output != 71 {
		t.Errorf("tokens %+v", res.Tokens)
	}
}

// TestLoopAnthropicSilentCommand: a command that prints nothing must not kill the subagent;
// the API refuses an empty text block in a tool_result with a 400.
func TestLoopAnthropicSilentCommand(t *testing.T) {
	streams := recordedStreams(t)
	ws := t.TempDir()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, body, raw := rec.request(r)
		if n == 1 {
			writeSSE(w, streams["anthropic_silent_command.sse"])
			return
		}
		msgs, _ := json.Marshal(body["messages"])
		if strings.Contains(string(msgs), `"text":""`) {
			writeJSON(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: text content blocks must be non-empty"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)
			return
		}
		if !strings.Contains(raw, "toolu_01D7FLrfh4GYq7yT1ULFeyMV") {
			t.Errorf("turn 2 lacks the tool result: %s", raw)
		}
		writeSSE(w, streams["anthropic_final.sse"])
	}))
	defer srv.Close()
	prov, _ := provider.NewAnthropic(provider.AnthropicConfig{BaseURL: srv.URL, Getenv: func(string) string { return "sk-ant-test" }})
	res := runLoop(t, prov, rec, []string{"run_shell_command"}, agents.ModeAcceptEdits, ws)
	if res.Err != nil || res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != "created marker" {
		t.Fatalf("result %+v err %v", res, res.Err)
	}
	if _, err := os.Stat(filepath.Join(ws, "marker")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}

// TestLoopCutAtTheTokenLimit: a reply cut by finish_reason "length" or stop_reason
// "max_tokens" fails the subagent with the server's reason, once (a retry would be cut
// again), and its tokens count.
func TestLoopCutAtTheTokenLimit(t *testing.T) {
	streams := recordedStreams(t)
	cases := []struct {
		file, reason string
		anthropic    bool
		tokens       session.Tokens
	}{
		{"openai_finish_length.sse", `finish_reason "length"`, false, session.Tokens{Input: 50, Output: 16}},
		{"anthropic_max_tokens.sse", `stop_reason "max_tokens"`, true, session.Tokens{Input: 300, Output: 1024}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rec := &recorder{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec.request(r)
				writeSSE(w, streams[c.file])
			}))
			defer srv.Close()
			var prov provider.Provider
			if c.anthropic {
				prov, _ = provider.NewAnthropic(provider.AnthropicConfig{BaseURL: srv.URL, Getenv: func(string) string { return "k" }})
			} else {
				prov, _ = provider.NewOpenAI(provider.OpenAIConfig{Name: "openai", BaseURL: srv.URL, Model: "gpt-4.1"})
			}
			res := runLoop(t, prov, rec, nil, agents.ModePlan, t.TempDir())
			if res.Outcome != session.OutcomeFailure || res.Err == nil || !strings.Contains(res.Err.Error(), c.reason) || provider.IsTransient(res.Err) {
				t.Fatalf("outcome %s err %v", res.Outcome, res.Err)
			}
			errs := rec.errors()
			if len(rec.bodies) != 1 || len(errs) != 1 || errs[0].Retrying() || !strings.Contains(errs[0].Error, c.reason) {
				t.Errorf("%d requests, errors %+v", len(rec.bodies), errs)
			}
			if res.Tokens != c.tokens {
				t.Errorf("tokens %+v, want %+v", res.Tokens, c.tokens)
			}
		})
	}
}

// TestLoopErrorsAreRetriedOnlyWhenCurable: a mid-stream token-limit error (OpenRouter), a
// wrong base_url (LM Studio's 200 with a JSON error) and a context-length 400 (vLLM) fail at
// once with the server's words; an upstream disconnect and an overload are retried, and the
// tokens of the failed attempt count.
func TestLoopErrorsAreRetriedOnlyWhenCurable(t *testing.T) {
	streams := recordedStreams(t)
	cases := []struct {
		name      string
		anthropic bool
		first     func(w http.ResponseWriter)
		then      string // the stream of later attempts
		requests  int
		outcome   string
		msg       string
		tokens    session.Tokens
	}{
		{"openrouter token limit", false, func(w http.ResponseWriter) { writeSSE(w, streams["openrouter_midstream_token_limit.sse"]) },
			"ollama_final.sse", 1, session.OutcomeFailure, "Token limit reached", session.Tokens{}},
		{"openrouter provider disconnected", false, func(w http.ResponseWriter) { writeSSE(w, streams["openrouter_midstream_server_error.sse"]) },
			"ollama_final.sse", 2, session.OutcomeSuccess, "Provider disconnected", session.Tokens{Input: 300, Output: 30}},
		{"lm studio wrong base_url", false, func(w http.ResponseWriter) {
			w.Header().Set("X-Powered-By", "Express")
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(streams["lmstudio_unexpected_endpoint.json"])
		}, "ollama_final.sse", 1, session.OutcomeFailure, "Unexpected endpoint or method. (POST /chat/completions)", session.Tokens{}},
		{"vllm context length", false, func(w http.ResponseWriter) { writeJSON(w, 400, string(streams["vllm_context_length_400.json"])) },
			"ollama_final.sse", 1, session.OutcomeFailure, "maximum context length is 4096 tokens", session.Tokens{}},
		{"anthropic overloaded mid-stream", true, func(w http.ResponseWriter) { writeSSE(w, streams["anthropic_overloaded_midstream.sse"]) },
			"anthropic_final.sse", 2, session.OutcomeSuccess, "overloaded_error: Overloaded", session.Tokens{Input: 700 + 520, Output: 1 + 24}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n, _, _ := rec.request(r); n == 1 {
					c.first(w)
					return
				}
				writeSSE(w, streams[c.then])
			}))
			defer srv.Close()
			var prov provider.Provider
			if c.anthropic {
				prov, _ = provider.NewAnthropic(provider.AnthropicConfig{BaseURL: srv.URL, Getenv: func(string) string { return "k" }})
			} else {
				prov, _ = provider.NewOpenAI(provider.OpenAIConfig{Name: "compat", BaseURL: srv.URL, Model: "m"})
			}
			sb, _ := tools.New(t.TempDir(), tools.Options{})
			res := Run(context.Background(), Config{
				Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Sandbox: sb, Task: "do it",
				Policy: agents.Policy{Mode: agents.ModePlan}, Clock: realClock{}, Emit: rec.emit, Backoff: func(int) time.Duration { return time.Millisecond },
			})
			errs := rec.errors()
			if len(rec.bodies) != c.requests || res.Outcome != c.outcome || len(errs) == 0 || !strings.Contains(errs[0].Error, c.msg) {
				t.Fatalf("%d requests, outcome %s (%v), errors %+v", len(rec.bodies), res.Outcome, res.Err, errs)
			}
			if res.Tokens != c.tokens {
				t.Errorf("tokens %+v, want %+v", res.Tokens, c.tokens)
			}
		})
	}
}
