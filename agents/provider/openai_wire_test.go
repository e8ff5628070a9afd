package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The streams under testdata/streams are written the way each service sends them: its chunk
// fields, its comments (": keep-alive", ": OPENROUTER PROCESSING"), its event lines, its
// quirks. Every one is served whole, line by line and in 2-byte writes, flushed after each.

// splits are the ways a recorded stream is cut into writes.
var splits = []string{"whole", "lines", "2-byte"}

func streamFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "streams", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeSplit writes body to w cut as split says, flushing after every write.
func writeSplit(w http.ResponseWriter, body []byte, split string) {
	var parts [][]byte
	switch split {
	case "lines":
		for len(body) > 0 {
			i := strings.IndexByte(string(body), '\n') + 1
			if i == 0 {
				i = len(body)
			}
			parts, body = append(parts, body[:i]), body[i:]
		}
	case "2-byte":
		for len(body) > 0 {
			n := min(2, len(body))
			parts, body = append(parts, body[:n]), body[n:]
		}
	default:
		parts = [][]byte{body}
	}
	for _, p := range parts {
		w.Write(p)
		w.(http.Flusher).Flush()
	}
}

// serveSSE answers with a recorded event stream.
func serveSSE(w http.ResponseWriter, body []byte, split string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	writeSplit(w, body, split)
}

func openaiFor(t *testing.T, name, url string) Provider {
	t.Helper()
	p, err := NewOpenAI(OpenAIConfig{Name: name, BaseURL: url, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpenAIToolCallsSharingAnIndex: Ollama's legacy tool parser sends every call whole with
// index 0, and Ollama before 0.4.7 sends no index at all; each call that brings its own id and
// name is a call of its own.
func TestOpenAIToolCallsSharingAnIndex(t *testing.T) {
	want := map[string][]ToolCall{
		"ollama_index0_two_calls.sse":  {{"call_kx1a9d2m", "read_file", `{"path":"a.go"}`}, {"call_p3v8q0zr", "read_file", `{"path":"b.go"}`}},
		"ollama_noindex_two_calls.sse": {{"call_0m2xk1", "read_file", `{"path":"a.go"}`}, {"call_7fq3zz", "read_file", `{"path":"b.go"}`}},
	}
	for file, calls := range want {
		body := streamFile(t, file)
		for _, split := range splits {
			t.Run(file+"/"+split, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveSSE(w, body, split) }))
				defer srv.Close()
				ds, err := drain(t, openaiFor(t, "ollama", srv.URL), Request{})
				if err != nil {
					t.Fatal(err)
				}
				_, _, _, got, _, stop := summarize(ds)
				if fmt.Sprint(got) != fmt.Sprint(calls) {
					t.Errorf("calls %+v, want %+v", got, calls)
				}
				if stop == "" {
					t.Errorf("no stop in %+v", ds)
				}
			})
		}
	}
}

// TestOpenAIFragmentedCallsKeepTheirIndex: OpenAI's own framing (fragments under an index, the
// id only on the first, a server that repeats the id on every fragment) still joins fragments.
func TestOpenAIFragmentedCallsKeepTheirIndex(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sse(w, true,
			chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"glob","arguments":"{\"pat"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"arguments":"tern\":\"*\"}"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read_file","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":\"a.go\"}"}}]}`, ""),
			chunk(`{}`, "tool_calls"))
	}))
	defer srv.Close()
	ds, err := drain(t, openaiFor(t, "vllm", srv.URL), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, calls, _, _ := summarize(ds); fmt.Sprint(calls) != fmt.Sprint([]ToolCall{{"call_a", "glob", `{"pattern":"*"}`}, {"call_b", "read_file", `{"path":"a.go"}`}}) {
		t.Errorf("calls %+v", calls)
	}
}

// TestOpenAIReasoningOnTheWire: reasoning_content (DeepSeek) becomes thinking closed with
// SignatureReasoningContent and goes back on the tool-calling assistant message; reasoning
// that came in another field (Ollama's "reasoning") or without a signature is never sent.
func TestOpenAIReasoningOnTheWire(t *testing.T) {
	body := streamFile(t, "deepseek_thinking_tool_call.sse")
	for _, split := range splits {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveSSE(w, body, split) }))
		ds, err := drain(t, openaiFor(t, "deepseek", srv.URL), Request{})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		text, think, sigs, calls, usage, stop := summarize(ds)
		if text != "" || think != "The user wants a.go; read it first." || stop != StopToolUse || usage != (Usage{320, 41}) {
			t.Errorf("%s: text %q think %q stop %q usage %+v", split, text, think, stop, usage)
		}
		if len(sigs) != 1 || sigs[0] != SignatureReasoningContent || len(calls) != 1 || calls[0].Args != `{"path":"a.go"}` {
			t.Errorf("%s: signatures %v calls %+v", split, sigs, calls)
		}
	}
	msgs, _ := json.Marshal(openaiMessages(Request{Messages: []Message{
		{Role: RoleUser, Text: "read a.go"},
		{Role: RoleAssistant, Thinking: []Thinking{{Text: "deep thought", Signature: SignatureReasoningContent}},
			ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Args: `{"path":"a.go"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Text: "package a"},
		{Role: RoleAssistant, Thinking: []Thinking{{Text: "ollama thought"}}, ToolCalls: []ToolCall{{ID: "c2", Name: "glob", Args: ""}}},
		{Role: RoleTool, ToolCallID: "c2", Text: "a.go"},
		{Role: RoleAssistant, Text: "the end", Thinking: []Thinking{{Text: "final thought", Signature: SignatureReasoningContent}}},
	}}))
	s := string(msgs)
	if strings.Count(s, "reasoning_content") != 1 || !strings.Contains(s, `"reasoning_content":"deep thought"`) || strings.Contains(s, "ollama thought") {
		t.Errorf("reasoning sent back: %s", s)
	}
	if !strings.Contains(s, `"arguments":"{}"`) {
		t.Errorf("empty arguments are not sent as {}: %s", s)
	}
}

// TestOpenAIThinkingInContent: DeepSeek R1 on Together puts <think>...</think> in the content,
// the tags split over chunks; Mistral's magistral sends typed thinking parts in an array
// content. Both are thinking, not answer.
func TestOpenAIThinkingInContent(t *testing.T) {
	cases := []struct{ file, text, think string }{
		{"together_r1_think_tags.sse", "2 + 2 = 4.", "Two plus two is four."},
		{"magistral_thinking_parts.sse", "Hello! How can I help?", "The user greets me, I should greet back."},
	}
	for _, c := range cases {
		body := streamFile(t, c.file)
		for _, split := range splits {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveSSE(w, body, split) }))
			ds, err := drain(t, openaiFor(t, "compat", srv.URL), Request{})
			srv.Close()
			if err != nil {
				t.Fatalf("%s/%s: %v", c.file, split, err)
			}
			text, think, sigs, _, _, stop := summarize(ds)
			if text != c.text || strings.TrimSpace(think) != c.think || stop != StopEnd || len(sigs) != 0 {
				t.Errorf("%s/%s: text %q think %q stop %q sigs %v", c.file, split, text, think, stop, sigs)
			}
		}
	}
}

// TestThinkSplitterAtEveryCut feeds a reply cut at every offset, and replies whose tags are
// answer text: a <think> that does not open the content, and a lone "<" at the start.
func TestThinkSplitterAtEveryCut(t *testing.T) {
	run := func(parts ...string) (text, think string) {
		var ts thinkSplitter
		var ds []Delta
		for _, p := range parts {
			ds = append(ds, ts.feed(p)...)
		}
		ds = append(ds, ts.flush()...)
		for _, d := range ds {
			if d.Kind == DeltaThinking {
				think += d.Text
			} else {
				text += d.Text
			}
		}
		return
	}
	const full = "\n<think>plan: 1 < 2</thin</think>\n\nanswer </think> <think>"
	for i := 0; i <= len(full); i++ {
		for j := i; j <= len(full); j++ {
			text, think := run(full[:i], full[i:j], full[j:])
			if text != "answer </think> <think>" || think != "plan: 1 < 2</thin" {
				t.Fatalf("cut at %d,%d: text %q think %q", i, j, text, think)
			}
		}
	}
	if text, think := run("See ", "<think> tags"); text != "See <think> tags" || think != "" {
		t.Errorf("text %q think %q", text, think)
	}
	if text, think := run("<", "b>bold</b>"); text != "<b>bold</b>" || think != "" {
		t.Errorf("text %q think %q", text, think)
	}
	if text, think := run("<think>cut short"); text != "" || think != "cut short" {
		t.Errorf("unterminated: text %q think %q", text, think)
	}
}

// TestOpenAIErrorsAsServersSendThem: each server's own failure, as it sends it; the message
// shown is the server's, and only what a retry can cure is transient.
func TestOpenAIErrorsAsServersSendThem(t *testing.T) {
	jsonBody := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
	// Read before any server starts: a handler must not fail the test fatally.
	tokenLimit, disconnected := streamFile(t, "openrouter_midstream_token_limit.sse"), streamFile(t, "openrouter_midstream_server_error.sse")
	lmstudio, vllm := streamFile(t, "lmstudio_unexpected_endpoint.json"), streamFile(t, "vllm_context_length_400.json")
	cases := []struct {
		name       string
		serve      func(w http.ResponseWriter)
		status     int
		transient  bool
		msg        string
		retryAfter time.Duration
		text       string // answer text streamed before the error
	}{
		{"openrouter token limit mid-stream", func(w http.ResponseWriter) {
			serveSSE(w, tokenLimit, "lines")
		}, 0, false, "Token limit reached", 0, "Partial answer"},
		{"openrouter provider error mid-stream", func(w http.ResponseWriter) {
			serveSSE(w, disconnected, "whole")
		}, 0, true, "Provider disconnected", 0, "Partial"},
		{"openai server_error mid-stream", func(w http.ResponseWriter) {
			serveSSE(w, []byte("data: "+chunk(`{"content":"The"}`, "")+"\n\n"+
				`data: {"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error"}}`+"\n\n"), "whole")
		}, 0, true, "The server had an error", 0, "The"},
		{"vllm error chunk without an error key", func(w http.ResponseWriter) {
			serveSSE(w, []byte("data: "+chunk(`{"role":"assistant","content":""}`, "")+"\n\n"+
				`data: {"object":"error","message":"The decoder prompt (length 9000) is longer than the maximum model length of 8192.","type":"BadRequestError","param":null,"code":400}`+"\n\n"), "whole")
		}, 0, false, "longer than the maximum model length", 0, ""},
		{"lm studio wrong path", func(w http.ResponseWriter) {
			// LM Studio answers an unknown path with 200 and a JSON error (Express headers).
			w.Header().Set("X-Powered-By", "Express")
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Set("ETag", `W/"43-qTdCaLfEMe8wb/ShYO0yTUTunEg"`)
			w.Write(lmstudio)
		}, 0, false, "Unexpected endpoint or method. (POST /chat/completions)", 0, ""},
		{"vllm context length", func(w http.ResponseWriter) {
			jsonBody(w, 400, string(vllm))
		}, 400, false, "BadRequestError: This model's maximum context length is 4096 tokens", 0, ""},
		{"429 retry-after", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "20")
			jsonBody(w, 429, `{"error":{"message":"Rate limit reached for gpt-4.1 in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
		}, 429, true, "Rate limit reached", 20 * time.Second, ""},
		{"429 reset headers", func(w http.ResponseWriter) {
			w.Header().Set("x-ratelimit-limit-requests", "3")
			w.Header().Set("x-ratelimit-remaining-requests", "0")
			w.Header().Set("x-ratelimit-reset-requests", "6m0s")
			w.Header().Set("x-ratelimit-remaining-tokens", "39000")
			w.Header().Set("x-ratelimit-reset-tokens", "1.5s")
			jsonBody(w, 429, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
		}, 429, true, "Rate limit reached", 6 * time.Minute, ""},
		{"429 quota", func(w http.ResponseWriter) {
			jsonBody(w, 429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
		}, 429, false, "You exceeded your current quota", 0, ""},
		{"401", func(w http.ResponseWriter) {
			jsonBody(w, 401, `{"error":{"message":"Incorrect API key provided: sk-proj-****abcd.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
		}, 401, false, "Incorrect API key provided", 0, ""},
		{"404 ollama model", func(w http.ResponseWriter) {
			jsonBody(w, 404, `{"error":{"message":"model \"qwen9\" not found, try pulling it first","type":"not_found_error","param":null,"code":null}}`)
		}, 404, false, `model "qwen9" not found`, 0, ""},
		{"503 envoy plain text", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(503)
			fmt.Fprint(w, "upstream connect error or disconnect/reset before headers. reset reason: connection termination")
		}, 503, true, "upstream connect error", 0, ""},
		{"502 html", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			fmt.Fprint(w, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>")
		}, 502, true, "Bad Gateway", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				c.serve(w)
			}))
			defer srv.Close()
			ds, err := drain(t, openaiFor(t, "srv", srv.URL), Request{})
			pe, ok := err.(*Error)
			if !ok {
				t.Fatalf("err %T %v (deltas %+v)", err, err, ds)
			}
			if pe.Status != c.status || pe.Transient != c.transient || !strings.Contains(pe.Msg, c.msg) {
				t.Errorf("got status %d transient %v msg %q", pe.Status, pe.Transient, pe.Msg)
			}
			if d := pe.RetryAfter - c.retryAfter; d < -time.Second || d > time.Second {
				t.Errorf("retry after %s, want %s", pe.RetryAfter, c.retryAfter)
			}
			if text, _, _, _, _, stop := summarize(ds); text != c.text || stop != "" {
				t.Errorf("text %q stop %q before the error", text, stop)
			}
			if hits.Load() != 1 {
				t.Errorf("%d requests; the SDK must not retry", hits.Load())
			}
		})
	}
}

// TestOpenAIFinishLength: a reply cut at the token limit ends with max_tokens, naming the
// server's own reason, after its usage.
func TestOpenAIFinishLength(t *testing.T) {
	body := streamFile(t, "openai_finish_length.sse")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveSSE(w, body, "2-byte") }))
	defer srv.Close()
	ds, err := drain(t, openaiFor(t, "openai", srv.URL), Request{})
	if err != nil {
		t.Fatal(err)
	}
	last := ds[len(ds)-1]
	if _, _, _, _, usage, _ := summarize(ds); last.StopReason != StopMaxTokens || last.StopDetail != `finish_reason "length"` || usage != (Usage{50, 16}) {
		t.Errorf("stop %+v usage %+v", last, usage)
	}
}

// TestRetryAfterHeaders: every way a server says how long to wait.
func TestRetryAfterHeaders(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	cases := []struct {
		name   string
		status int
		h      http.Header
		want   time.Duration
	}{
		{"seconds", 429, h("Retry-After", "20"), 20 * time.Second},
		{"http date", 503, h("Retry-After", "Thu, 01 Jan 2026 12:00:30 GMT"), 30 * time.Second},
		{"date in the past", 429, h("Retry-After", "Thu, 01 Jan 2026 11:00:00 GMT"), 0},
		{"ms wins", 429, h("retry-after-ms", "1500", "Retry-After", "2"), 1500 * time.Millisecond},
		{"openai exhausted requests", 429, h("x-ratelimit-reset-requests", "1s", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-tokens", "6m0s", "x-ratelimit-remaining-tokens", "12000"), time.Second},
		{"openai exhausted tokens", 429, h("x-ratelimit-reset-requests", "1s", "x-ratelimit-remaining-requests", "59",
			"x-ratelimit-reset-tokens", "6m0s", "x-ratelimit-remaining-tokens", "0"), 6 * time.Minute},
		{"resets ignored without 429", 500, h("x-ratelimit-reset-tokens", "6m0s", "x-ratelimit-remaining-tokens", "0"), 0},
		{"anthropic rfc 3339", 429, h("anthropic-ratelimit-requests-reset", "2026-01-01T12:00:45Z", "anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-tokens-reset", "2026-01-01T12:00:05Z", "anthropic-ratelimit-tokens-remaining", "8000"), 45 * time.Second},
		{"nothing", 429, h(), 0},
		{"garbage", 429, h("Retry-After", "soon", "x-ratelimit-reset-requests", "later"), 0},
	}
	for _, c := range cases {
		if got := retryAfter(c.status, c.h, now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
