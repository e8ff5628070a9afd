package provider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// anthropicInvalid checks a Messages API request the way the API does for the rules summit can
// break, and returns the API's message for the first one broken: every text block, also inside
// a tool_result, must hold text that is not only white space, and every tool_use must be
// answered by a tool_result in the next message.
func anthropicInvalid(body []byte) string {
	var req struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "messages: " + err.Error()
	}
	var checkText func(raw json.RawMessage) string
	checkText = func(raw json.RawMessage) string {
		var b struct {
			Type    string          `json:"type"`
			Text    *string         `json:"text"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(raw, &b)
		switch b.Type {
		case "text":
			if b.Text == nil || *b.Text == "" {
				return "messages: text content blocks must be non-empty"
			}
			if strings.TrimSpace(*b.Text) == "" {
				return "messages: text content blocks must contain non-whitespace text"
			}
		case "tool_result":
			var inner []json.RawMessage
			if json.Unmarshal(b.Content, &inner) == nil {
				for _, in := range inner {
					if msg := checkText(in); msg != "" {
						return msg
					}
				}
			}
		}
		return ""
	}
	for i, m := range req.Messages {
		for _, c := range m.Content {
			if msg := checkText(c); msg != "" {
				return msg
			}
			var b struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			}
			json.Unmarshal(c, &b)
			if b.Type != "tool_use" {
				continue
			}
			answered := false
			if i+1 < len(req.Messages) {
				for _, n := range req.Messages[i+1].Content {
					var r struct {
						ToolUseID string `json:"tool_use_id"`
					}
					json.Unmarshal(n, &r)
					answered = answered || r.ToolUseID == b.ID
				}
			}
			if !answered {
				return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s", i, b.ID)
			}
		}
	}
	return ""
}

func anthropic400(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_011CSHoEeqs5C35K2UUqR7Fy")
	w.WriteHeader(http.StatusBadRequest)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": msg},
		"request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"})
	w.Write(b)
}

// TestAnthropicNeverSendsEmptyText: a silent tool's result, an error result without output,
// an assistant turn of white space and an empty user message all reach an API that refuses
// empty text blocks, and pass.
func TestAnthropicNeverSendsEmptyText(t *testing.T) {
	var sent string
	final := streamFile(t, "anthropic_final.sse")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sent = string(b)
		if msg := anthropicInvalid(b); msg != "" {
			anthropic400(w, msg)
			return
		}
		serveSSE(w, final, "lines")
	}))
	defer srv.Close()
	ds, err := drain(t, anthropicProviderFor(t, srv.URL, 0), Request{Messages: []Message{
		{Role: RoleUser, Text: "make a marker"},
		{Role: RoleAssistant, Text: "\n\n", ToolCalls: []ToolCall{{ID: "toolu_1", Name: "run_shell_command", Args: `{"command":"touch marker"}`},
			{ID: "toolu_2", Name: "run_shell_command", Args: `{"command":"false"}`}}},
		{Role: RoleTool, ToolCallID: "toolu_1", Text: ""},
		{Role: RoleTool, ToolCallID: "toolu_2", Text: "", IsError: true},
		{Role: RoleUser, Text: ""},
	}})
	if err != nil {
		t.Fatalf("%v\nrequest: %s", err, sent)
	}
	if text, _, _, _, _, stop := summarize(ds); !strings.HasPrefix(text, "Done.") || stop != StopEnd {
		t.Errorf("text %q stop %q", text, stop)
	}
	if strings.Count(sent, `"text":"(no output)"`) != 2 {
		t.Errorf("silent results are not sent as (no output): %s", sent)
	}
	// The validator is the real API's: the request the old code built fails it.
	if msg := anthropicInvalid([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":""}]}]}]}`)); msg != "messages: text content blocks must be non-empty" {
		t.Errorf("validator: %q", msg)
	}
}

// TestAnthropicRateLimitHeaders: a 429 carries retry-after and the rate-limit reset times;
// the error says how long the API asked to wait.
func TestAnthropicRateLimitHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after", "17")
		w.Header().Set("anthropic-ratelimit-requests-limit", "50")
		w.Header().Set("anthropic-ratelimit-requests-remaining", "0")
		w.Header().Set("anthropic-ratelimit-requests-reset", time.Now().Add(17*time.Second).UTC().Format(time.RFC3339))
		w.WriteHeader(429)
		fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute."},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)
	}))
	defer srv.Close()
	_, err := drain(t, anthropicProviderFor(t, srv.URL, 0), Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	pe, ok := err.(*Error)
	if !ok || !pe.Transient || pe.Status != 429 || pe.RetryAfter != 17*time.Second || !strings.Contains(pe.Msg, "rate_limit_error: This request would exceed") {
		t.Errorf("%T %+v", err, err)
	}
}

// TestAnthropicUsageBeforeAFailure: message_start's input tokens are reported before an
// overload cuts the stream, so the failed attempt is counted.
func TestAnthropicUsageBeforeAFailure(t *testing.T) {
	body := streamFile(t, "anthropic_overloaded_midstream.sse")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveSSE(w, body, "2-byte") }))
	defer srv.Close()
	ds, err := drain(t, anthropicProviderFor(t, srv.URL, 0), Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if !IsTransient(err) || !strings.Contains(err.Error(), "overloaded_error: Overloaded") {
		t.Fatalf("err %v", err)
	}
	if text, _, _, _, usage, _ := summarize(ds); usage.Input != 700 || text != "Let me" {
		t.Errorf("usage %+v text %q", usage, text)
	}
}

// TestAnthropicMaxTokens: stop_reason max_tokens ends the turn with StopMaxTokens, naming it.
func TestAnthropicMaxTokens(t *testing.T) {
	body := streamFile(t, "anthropic_max_tokens.sse")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveSSE(w, body, "whole") }))
	defer srv.Close()
	ds, err := drain(t, anthropicProviderFor(t, srv.URL, 0), Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if last := ds[len(ds)-1]; last.StopReason != StopMaxTokens || last.StopDetail != `stop_reason "max_tokens"` {
		t.Errorf("stop %+v", last)
	}
}
