package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// anthropicSSE writes events in the Messages API wire format: an `event:` line naming the
// type, then the JSON data.
func anthropicSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(e), &probe); err != nil {
			panic("bad test event " + e)
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", probe.Type, e)
		w.(http.Flusher).Flush()
	}
}

const msgStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":21,"output_tokens":1}}}`

func anthropicProviderFor(t *testing.T, url string, budget int) Provider {
	t.Helper()
	p, err := NewAnthropic(AnthropicConfig{BaseURL: url, Model: "claude-test", ThinkingBudget: budget,
		Getenv: func(k string) string {
			if k == "ANTHROPIC_API_KEY" {
				return "sk-ant-test"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func summarize(ds []Delta) (text, think string, sigs []string, calls []ToolCall, usage Usage, stop string) {
	for _, d := range ds {
		switch d.Kind {
		case DeltaText:
			text += d.Text
		case DeltaThinking:
			think += d.Text
			if d.Signature != "" {
				sigs = append(sigs, d.Signature)
			}
		case DeltaToolCall:
			calls = append(calls, d.ToolCall)
		case DeltaUsage:
			usage = d.Usage
		case DeltaStop:
			stop = d.StopReason
		}
	}
	return
}

func TestAnthropicStream(t *testing.T) {
	var body map[string]any
	var key, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, path = r.Header.Get("X-Api-Key"), r.URL.Path
		json.NewDecoder(r.Body).Decode(&body)
		anthropicSSE(w,
			msgStart,
			`{"type":"ping"}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Look at "}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a.go"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG1"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hel"}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"lo"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_a","name":"read_file","input":{}}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"th\":\"a.go\"}"}}`,
			`{"type":"content_block_stop","index":2}`,
			`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_b","name":"glob","input":{}}}`,
			`{"type":"content_block_stop","index":3}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":57}}`,
			`{"type":"message_stop"}`,
		)
	}))
	defer srv.Close()
	p := anthropicProviderFor(t, srv.URL, 2048)
	temp := 0.2
	ds, err := drain(t, p, Request{System: "sys", Temperature: &temp, MaxTokens: 1000,
		Tools: []ToolSpec{{Name: "read_file", Description: "read", Parameters: map[string]any{"type": "object",
			"properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}, "additionalProperties": false}}},
		Messages: []Message{
			{Role: RoleUser, Text: "hi"},
			{Role: RoleAssistant, Text: "checking", Thinking: []Thinking{{Text: "hmm", Signature: "S0"}, {Text: "unsigned"}, {Redacted: "RED"}},
				ToolCalls: []ToolCall{{ID: "t1", Name: "glob", Args: `{"pattern":"*"}`}, {ID: "t2", Name: "read_file", Args: `{"path":`}}},
			{Role: RoleTool, ToolCallID: "t1", Text: "a.go"},
			{Role: RoleTool, ToolCallID: "t2", Text: "bad arguments", IsError: true},
			{Role: RoleUser, Text: "also this"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	text, think, sigs, calls, usage, stop := summarize(ds)
	if text != "Hello" || think != "Look at a.go" || stop != StopToolUse || usage != (Usage{21, 57}) {
		t.Errorf("text %q think %q stop %q usage %+v", text, think, stop, usage)
	}
	if len(sigs) != 1 || sigs[0] != "SIG1" {
		t.Errorf("signatures %v", sigs)
	}
	if len(calls) != 2 || calls[0] != (ToolCall{"toolu_a", "read_file", `{"path":"a.go"}`}) || calls[1] != (ToolCall{"toolu_b", "glob", `{}`}) {
		t.Errorf("calls %+v", calls)
	}
	if key != "sk-ant-test" || path != "/v1/messages" {
		t.Errorf("key %q path %q", key, path)
	}
	// Request shape: thinking on (so no temperature, max_tokens above the budget), system
	// block, tools with their schema, tool results merged into one user message.
	if body["stream"] != true || body["model"] != "claude-test" || body["temperature"] != nil {
		t.Errorf("body %v", body)
	}
	if th, _ := body["thinking"].(map[string]any); th["type"] != "enabled" || th["budget_tokens"] != 2048.0 {
		t.Errorf("thinking %v", body["thinking"])
	}
	if mt, _ := body["max_tokens"].(float64); mt <= 2048 {
		t.Errorf("max_tokens %v not above the thinking budget", body["max_tokens"])
	}
	// Prompt caching: the system prompt, the last tool and the last block of the
	// conversation are cache breakpoints, and nothing else is.
	if sys, _ := json.Marshal(body["system"]); string(sys) != `[{"cache_control":{"type":"ephemeral"},"text":"sys","type":"text"}]` {
		t.Errorf("system %s", sys)
	}
	if all, _ := json.Marshal(body); strings.Count(string(all), `"cache_control"`) != 3 {
		t.Errorf("want 3 cache breakpoints: %s", all)
	}
	if ts, _ := body["tools"].([]any); len(ts) == 0 || ts[len(ts)-1].(map[string]any)["cache_control"] == nil {
		t.Errorf("the last tool is not a cache breakpoint: %v", body["tools"])
	}
	if ms, _ := body["messages"].([]any); len(ms) > 0 {
		content, _ := ms[len(ms)-1].(map[string]any)["content"].([]any)
		if len(content) == 0 || content[len(content)-1].(map[string]any)["cache_control"] == nil {
			t.Errorf("the last block of the conversation is not a cache breakpoint: %v", ms[len(ms)-1])
		}
	}
	tools, _ := json.Marshal(body["tools"])
	for _, want := range []string{`"name":"read_file"`, `"description":"read"`, `"required":["path"]`, `"additionalProperties":false`, `"type":"object"`} {
		if !strings.Contains(string(tools), want) {
			t.Errorf("tools lack %s: %s", want, tools)
		}
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("want user, assistant, user; got %d messages: %v", len(msgs), msgs)
	}
	asst, _ := json.Marshal(msgs[1])
	for _, want := range []string{`"type":"thinking"`, `"signature":"S0"`, `"type":"redacted_thinking"`, `"data":"RED"`,
		`"type":"tool_use"`, `"input":{"pattern":"*"}`, `"input":{"_raw":"{\"path\":"}`} {
		if !strings.Contains(string(asst), want) {
			t.Errorf("assistant message lacks %s: %s", want, asst)
		}
	}
	if strings.Contains(string(asst), "unsigned") {
		t.Errorf("unsigned thinking was echoed back: %s", asst)
	}
	last, _ := json.Marshal(msgs[2])
	for _, want := range []string{`"tool_use_id":"t1"`, `"tool_use_id":"t2"`, `"is_error":true`, `"text":"also this"`} {
		if !strings.Contains(string(last), want) {
			t.Errorf("merged user message lacks %s: %s", want, last)
		}
	}
}

func TestAnthropicRedactedThinkingAndTemperature(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&body)
		anthropicSSE(w, msgStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"ENC"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"done"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}`,
			`{"type":"message_stop"}`)
	}))
	defer srv.Close()
	temp := 0.3
	ds, err := drain(t, anthropicProviderFor(t, srv.URL, 0), Request{Temperature: &temp, Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	text, _, _, _, _, stop := summarize(ds)
	var red string
	for _, d := range ds {
		red += d.Redacted
	}
	if text != "done" || stop != StopMaxTokens || red != "ENC" {
		t.Errorf("text %q stop %q redacted %q", text, stop, red)
	}
	if body["temperature"] != 0.3 || body["thinking"] != nil || body["max_tokens"] != float64(defaultMaxTokens) {
		t.Errorf("body %v", body)
	}
}

func TestAnthropicErrors(t *testing.T) {
	errBody := func(w http.ResponseWriter, status int, typ string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"msg for %s"}}`, typ, typ)
	}
	cases := []struct {
		name      string
		handler   func(w http.ResponseWriter)
		status    int
		transient bool
		msg       string
	}{
		{"429", func(w http.ResponseWriter) { errBody(w, 429, "rate_limit_error") }, 429, true, "rate_limit_error: msg for rate_limit_error"},
		{"500", func(w http.ResponseWriter) { errBody(w, 500, "api_error") }, 500, true, "api_error"},
		{"529 overloaded", func(w http.ResponseWriter) { errBody(w, 529, "overloaded_error") }, 529, true, "overloaded_error"},
		{"400", func(w http.ResponseWriter) { errBody(w, 400, "invalid_request_error") }, 400, false, "invalid_request_error: msg for invalid_request_error"},
		{"401", func(w http.ResponseWriter) { errBody(w, 401, "authentication_error") }, 401, false, "authentication_error"},
		{"error event mid-stream", func(w http.ResponseWriter) {
			anthropicSSE(w, msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}`,
				`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}, 0, true, "overloaded_error: Overloaded"},
		{"cut mid-message", func(w http.ResponseWriter) {
			anthropicSSE(w, msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_x","name":"glob","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"pat"}}`)
		}, 0, true, "stream ended mid-message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				c.handler(w)
			}))
			defer srv.Close()
			ds, err := drain(t, anthropicProviderFor(t, srv.URL, 0), Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
			pe, ok := err.(*Error)
			if !ok {
				t.Fatalf("err %T %v (deltas %+v)", err, err, ds)
			}
			if pe.Status != c.status || pe.Transient != c.transient || !strings.Contains(pe.Msg, c.msg) || IsTransient(err) != c.transient {
				t.Errorf("got %+v", pe)
			}
			for _, d := range ds {
				if d.Kind == DeltaToolCall || d.Kind == DeltaStop {
					t.Errorf("a failed stream yielded %+v", d)
				}
			}
			if hits.Load() != 1 {
				t.Errorf("%d requests: the SDK must not retry on its own", hits.Load())
			}
			if strings.Contains(err.Error(), "sk-ant-test") {
				t.Errorf("error leaks the key: %v", err)
			}
		})
	}
}

// TestAnthropicRetryThenSuccess: a 429 is transient, and the next attempt (the runtime's
// retry) streams normally.
func TestAnthropicRetryThenSuccess(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
			return
		}
		anthropicSSE(w, msgStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
			`{"type":"message_stop"}`)
	}))
	defer srv.Close()
	p := anthropicProviderFor(t, srv.URL, 0)
	req := Request{Messages: []Message{{Role: RoleUser, Text: "x"}}}
	if _, err := drain(t, p, req); !IsTransient(err) {
		t.Fatalf("first attempt: %v", err)
	}
	ds, err := drain(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if text, _, _, _, usage, stop := summarize(ds); text != "ok" || stop != StopEnd || usage != (Usage{21, 2}) {
		t.Errorf("text %q stop %q usage %+v", text, stop, usage)
	}
}

func TestAnthropicConfig(t *testing.T) {
	p, err := NewAnthropic(AnthropicConfig{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), Request{})
	if err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("missing key: %v", err)
	}
	if _, err := NewAnthropic(AnthropicConfig{ThinkingBudget: 100}); err == nil || !strings.Contains(err.Error(), "1024") {
		t.Errorf("small budget: %v", err)
	}
	// The router builds anthropic from configuration.
	r := NewRouter(Config{Providers: map[string]ProviderConfig{"claude": {Kind: "anthropic", Model: "claude-x", KeyEnv: "K"}},
		Models: map[string]Route{"deep": {Provider: "claude"}}}, nil, func(string) string { return "" })
	prov, model, err := r.Resolve("deep")
	if err != nil || prov.Name() != "claude" {
		t.Fatalf("resolve: %v %v %q", prov, err, model)
	}
	if err := r.Force("anthropic"); err != nil {
		t.Errorf("force anthropic: %v", err)
	}
}
