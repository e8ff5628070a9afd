package provider

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Responses as the APIs send them (shapes from their documentation and the SDKs' fixtures).
const (
	relayAnthropicSSE = `event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15}}

event: message_stop
data: {"type":"message_stop"}

`
	relayAnthropicJSON = `{"id":"msg_02","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"Hi"}],
  "stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":6}}`

	relayResponsesSSE = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5-codex","output":[],"usage":null}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}

event: response.completed
data: {"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-codex-2025","output":[{"type":"reasoning","id":"rs_1"},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"shell","arguments":"{}"}],"usage":{"input_tokens":328,"input_tokens_details":{"cached_tokens":0},"output_tokens":52,"output_tokens_details":{"reasoning_tokens":30},"total_tokens":380}}}

`
	relayResponsesJSON = `{"id":"resp_2","object":"response","status":"completed","model":"gpt-4.1","output":[{"type":"message","id":"msg_2","role":"assistant","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":40,"output_tokens":2,"total_tokens":42}}`

	relayChatSSE = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":17,"completion_tokens":9,"total_tokens":26}}

data: [DONE]

`
	relayChatJSON = `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`

	relayGeminiSSE = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hel\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 10,\"candidatesTokenCount\": 1,\"totalTokenCount\": 11},\"modelVersion\": \"gemini-2.5-flash\"}\r\n\r\n" +
		"data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"name\": \"ls\", \"args\": {}}}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 10,\"candidatesTokenCount\": 8,\"thoughtsTokenCount\": 20,\"totalTokenCount\": 38},\"modelVersion\": \"gemini-2.5-flash\"}\r\n\r\n"
	relayGeminiArray = `[{
  "candidates": [{"content": {"parts": [{"text": "a"}], "role": "model"}, "index": 0}],
  "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 1, "totalTokenCount": 5},
  "modelVersion": "gemini-2.5-pro"
}
,
{
  "candidates": [{"content": {"parts": [{"text": "b"}], "role": "model"}, "finishReason": "MAX_TOKENS", "index": 0}],
  "usageMetadata": {"promptTokenCount": 4, "toolUsePromptTokenCount": 2, "candidatesTokenCount": 30, "totalTokenCount": 36},
  "modelVersion": "gemini-2.5-pro"
}
]`
)

// chunks yields its parts as separate reads (the transport's chunk boundaries).
type chunks struct {
	parts  [][]byte
	closed bool
}

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.parts) > 0 && len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	return n, nil
}

func (c *chunks) Close() error { c.closed = true; return nil }

// meter reads body through UsageReader in the given parts and returns what passed and the
// usage reported (and how many times done was called).
func meter(t *testing.T, kind, path string, parts ...[]byte) (string, CallUsage, int) {
	t.Helper()
	var got CallUsage
	calls := 0
	src := &chunks{parts: parts}
	r := UsageReader(kind, path, src, func(u CallUsage) { got = u; calls++ })
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil || !src.closed {
		t.Fatalf("close: %v, closed %v", err, src.closed)
	}
	return string(out), got, calls
}

func TestUsageReader(t *testing.T) {
	cases := []struct {
		name, kind, path, body string
		want                   CallUsage
	}{
		{"anthropic stream", "anthropic", "v1/messages", relayAnthropicSSE,
			CallUsage{Usage: Usage{Input: 1125, Output: 15}, Reported: true, Model: "claude-sonnet-4-5-20250929", Stop: StopToolUse, Complete: true}},
		{"anthropic message", "anthropic", "v1/messages?beta=true", relayAnthropicJSON,
			CallUsage{Usage: Usage{Input: 15, Output: 6}, Reported: true, Model: "claude-haiku-4-5", Stop: StopEnd, Complete: true}},
		{"responses stream", "openai", "responses", relayResponsesSSE,
			CallUsage{Usage: Usage{Input: 328, Output: 52}, Reported: true, Model: "gpt-5-codex-2025", Stop: StopToolUse, Complete: true}},
		{"responses JSON", "openai", "responses", relayResponsesJSON,
			CallUsage{Usage: Usage{Input: 40, Output: 2}, Reported: true, Model: "gpt-4.1", Stop: StopEnd, Complete: true}},
		{"chat stream", "openai", "chat/completions", relayChatSSE,
			CallUsage{Usage: Usage{Input: 17, Output: 9}, Reported: true, Model: "gpt-4o-2024-08-06", Stop: StopMaxTokens, Complete: true}},
		{"chat JSON", "openai", "chat/completions", relayChatJSON,
			CallUsage{Usage: Usage{Input: 5, Output: 7}, Reported: true, Model: "gpt-4o-mini", Stop: StopToolUse, Complete: true}},
		{"gemini SSE", "gemini", "v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", relayGeminiSSE,
			CallUsage{Usage: Usage{Input: 10, Output: 28}, Reported: true, Model: "gemini-2.5-flash", Stop: StopToolUse, Complete: true}},
		{"gemini array", "gemini", "v1beta/models/gemini-2.5-pro:streamGenerateContent", relayGeminiArray,
			CallUsage{Usage: Usage{Input: 6, Output: 30}, Reported: true, Model: "gemini-2.5-pro", Stop: StopMaxTokens, Complete: true}},
		{"no usage", "openai", "chat/completions", "data: {\"choices\":[{\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			CallUsage{Stop: StopEnd, Complete: true}},
		{"anthropic error event", "anthropic", "v1/messages", strings.SplitAfter(relayAnthropicSSE, "\n\n")[0] +
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			CallUsage{Usage: Usage{Input: 1125, Output: 1}, Reported: true, Model: "claude-sonnet-4-5-20250929", Stop: "error", Complete: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := []byte(c.body)
			// Every split point, and one byte per read: chunk boundaries change nothing.
			for i := 0; i <= len(b); i++ {
				out, got, calls := meter(t, c.kind, c.path, bytes.Clone(b[:i]), bytes.Clone(b[i:]))
				if out != c.body {
					t.Fatalf("split at %d: the body changed:\n%q", i, out)
				}
				if got != c.want || calls != 1 {
					t.Fatalf("split at %d: usage %+v (%d calls), want %+v once", i, got, calls, c.want)
				}
			}
			var bytewise [][]byte
			for i := range b {
				bytewise = append(bytewise, b[i:i+1])
			}
			if _, got, _ := meter(t, c.kind, c.path, bytewise...); got != c.want {
				t.Fatalf("byte by byte: usage %+v, want %+v", got, c.want)
			}
		})
	}
}

// A line over MaxUsageLine is skipped whole, and the lines after it still count; a malformed
// event is ignored; a body closed before its end reports what came, not complete.
func TestUsageReaderBounds(t *testing.T) {
	big := "data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"" + strings.Repeat("x", MaxUsageLine+10) + "\"}}\n\n"
	// The oversized line looks like a usage event at its start: skipping it must not read it.
	fake := "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":999999},\"pad\":\"" + strings.Repeat("y", MaxUsageLine) + "\"}\n\n"
	body := strings.SplitAfter(relayAnthropicSSE, "\n\n")[0] + big + fake +
		"data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":\n\n" + // malformed
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n"
	out, got, _ := meter(t, "anthropic", "v1/messages", []byte(body[:100]), []byte(body[100:MaxUsageLine]), []byte(body[MaxUsageLine:]))
	if out != body {
		t.Fatal("the body changed")
	}
	want := CallUsage{Usage: Usage{Input: 1125, Output: 7}, Reported: true, Model: "claude-sonnet-4-5-20250929", Stop: StopEnd, Complete: true}
	if got != want {
		t.Fatalf("usage %+v, want %+v", got, want)
	}

	// A JSON body over MaxUsageBody passes without its usage (never buffered past the cap).
	huge := `{"type":"message","content":[{"type":"text","text":"` + strings.Repeat("z", MaxUsageBody) + `"}],"usage":{"input_tokens":1,"output_tokens":2}}`
	out, got, _ = meter(t, "anthropic", "v1/messages", []byte(huge))
	if out != huge || got.Reported {
		t.Fatalf("huge body: changed %v, usage %+v", out != huge, got)
	}

	// Garbage of every kind: no crash, nothing reported.
	for _, kind := range []string{"anthropic", "openai", "gemini"} {
		for _, b := range []string{"", "{", "[1,2", "[{\"usageMetadata\":\"x\"}]", "data: {\"usage\":[]}\n", "data: {\"type\":\"message_start\",\"message\":7}\n", "\x00\xff\n\n"} {
			if _, got, calls := meter(t, kind, "responses", []byte(b)); got.Reported || calls != 1 {
				t.Fatalf("%s %q: usage %+v, %d calls", kind, b, got, calls)
			}
		}
	}

	// Closed mid-stream: what the stream said so far, and not complete; done once.
	var got2 CallUsage
	calls := 0
	r := UsageReader("anthropic", "v1/messages", io.NopCloser(strings.NewReader(relayAnthropicSSE)), func(u CallUsage) { got2 = u; calls++ })
	buf := make([]byte, 600)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	_ = r.Close()
	if calls != 1 || got2.Complete || got2.Usage != (Usage{Input: 1125, Output: 1}) || got2.Stop != "" {
		t.Fatalf("closed early: %+v, %d calls", got2, calls)
	}
}

func TestMetered(t *testing.T) {
	for path, want := range map[string]bool{
		"v1/messages": true, "v1/messages/count_tokens": false, "chat/completions": true, "responses": true,
		"v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse": true, "v1beta/models/gemini-2.5-flash:countTokens": false,
	} {
		p, _, _ := strings.Cut(path, "?")
		kind, _, _ := RelayPath(strings.Replace(strings.Replace(p, "chat/", "v1/chat/", 1), "responses", "v1/responses", 1))
		if got := Metered(kind, path); got != want {
			t.Errorf("Metered(%s, %s) = %v, want %v", kind, path, got, want)
		}
	}
	if Metered("ollama", "api/chat") {
		t.Error("ollama is not relayed")
	}
}
