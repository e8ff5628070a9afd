package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// sse writes chunks in OpenAI's wire format; done adds the [DONE] line.
func sse(w http.ResponseWriter, done bool, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		w.(http.Flusher).Flush()
	}
	if done {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, delta, f)
}

func drain(t *testing.T, p Provider, req Request) ([]Delta, error) {
	t.Helper()
	st, err := p.Stream(context.Background(), req)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []Delta
	for {
		d, err := st.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
}

func TestOpenAIStream(t *testing.T) {
	var body map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		json.NewDecoder(r.Body).Decode(&body)
		sse(w, true,
			chunk(`{"role":"assistant","reasoning_content":"think "}`, ""),
			chunk(`{"content":"Hel"}`, ""),
			chunk(`{"content":"lo"}`, ""),
			chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"glob","arguments":"{\"pat"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.go\"}"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"tern\":\"*\"}"}}]}`, ""),
			chunk(`{}`, "tool_calls"),
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}`,
		)
	}))
	defer srv.Close()
	p, _ := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, Model: "m", KeyEnv: "TEST_KEY", Getenv: func(string) string { return "sk-test" }})
	temp := 0.2
	ds, err := drain(t, p, Request{System: "sys", Temperature: &temp, Tools: []ToolSpec{{Name: "read_file", Parameters: map[string]any{"type": "object"}}},
		Messages: []Message{{Role: RoleUser, Text: "hi"}, {Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "x1", Name: "glob", Args: "{}"}}},
			{Role: RoleTool, ToolCallID: "x1", Text: "result"}}})
	if err != nil {
		t.Fatal(err)
	}
	text, think, _, calls, usage, stop := summarize(ds)
	if text != "Hello" || think != "think " || stop != StopToolUse || usage != (Usage{12, 7}) {
		t.Errorf("text %q think %q stop %q usage %+v", text, think, stop, usage)
	}
	if len(calls) != 2 || calls[0] != (ToolCall{"call_a", "read_file", `{"path":"a.go"}`}) || calls[1] != (ToolCall{"call_b", "glob", `{"pattern":"*"}`}) {
		t.Errorf("calls %+v", calls)
	}
	if auth != "Bearer sk-test" {
		t.Errorf("auth %q", auth)
	}
	msgs, _ := json.Marshal(body["messages"])
	for _, want := range []string{`"role":"system"`, `"content":"sys"`, `"tool_call_id":"x1"`, `"role":"tool"`, `"tool_calls"`} {
		if !strings.Contains(string(msgs), want) {
			t.Errorf("messages lack %s: %s", want, msgs)
		}
	}
	if tools, _ := json.Marshal(body["tools"]); !strings.Contains(string(tools), `"name":"read_file"`) {
		t.Errorf("tools %s", tools)
	}
	if body["stream"] != true || body["temperature"] != 0.2 {
		t.Errorf("body %v", body)
	}
}

func TestOpenAIErrors(t *testing.T) {
	var hits atomic.Int32
	mode := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch mode {
		case "429":
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"message":"slow down","type":"rate_limit"}}`)
		case "500":
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"boom"}}`)
		case "400":
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"bad model name","type":"invalid_request_error"}}`)
		case "cut":
			sse(w, false, chunk(`{"content":"partial"}`, ""))
		default:
			sse(w, true, chunk(`{"content":"ok"}`, "stop"))
		}
	}))
	defer srv.Close()
	p, _ := NewOpenAI(OpenAIConfig{Name: "ollama", BaseURL: srv.URL, Model: "m"})
	for _, c := range []struct {
		mode      string
		transient bool
		want      string
	}{{"429", true, "slow down"}, {"500", true, "boom"}, {"400", false, "bad model name"}, {"cut", true, "mid-message"}} {
		mode = c.mode
		hits.Store(0)
		_, err := drain(t, p, Request{})
		if err == nil || IsTransient(err) != c.transient || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.mode, err)
		}
		if hits.Load() != 1 {
			t.Errorf("%s: %d requests; the SDK must not retry", c.mode, hits.Load())
		}
	}
	mode = ""
	ds, err := drain(t, p, Request{})
	if err != nil || ds[0].Text != "ok" || ds[len(ds)-1].StopReason != StopEnd {
		t.Errorf("success after failures: %+v %v", ds, err)
	}
	keyless, _ := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, KeyEnv: "MISSING_KEY", Getenv: func(string) string { return "" }})
	if _, err := keyless.Stream(context.Background(), Request{}); err == nil || IsTransient(err) || !strings.Contains(err.Error(), "MISSING_KEY") {
		t.Errorf("missing key: %v", err)
	}
}
