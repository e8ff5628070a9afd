package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeOllama answers POST /api/chat the way Ollama does: it decodes the request into the
// shapes Ollama's api.ChatRequest has, so a tool call whose arguments are not a JSON object
// is refused with a 400 and the decoder's message, as Ollama refuses it; an unknown model is
// a 404 {"error":"model 'x' not found"}; tools on a model without tool support are a 400;
// any other path is gin's plain-text 404. It records every request, and answers with the
// reply its test chooses, streamed as NDJSON cut as split says.
type fakeOllama struct {
	t      *testing.T
	split  string
	models map[string]bool // model -> supports tools
	reply  func(n int, req ollamaWire, w http.ResponseWriter)

	mu      sync.Mutex
	reqs    []ollamaWire
	raw     []map[string]any
	headers []http.Header
	paths   []string
}

// ollamaWire is a request as Ollama decodes it.
type ollamaWire struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		Thinking  string `json:"thinking"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Index     int            `json:"index"`
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolName   string `json:"tool_name"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Stream *bool `json:"stream"`
	Tools  []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Parameters  struct {
				Type       string         `json:"type"`
				Required   []string       `json:"required"`
				Properties map[string]any `json:"properties"`
			} `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Options map[string]any `json:"options"`
	Think   any            `json:"think"`
}

func newFakeOllama(t *testing.T, split string, reply func(n int, req ollamaWire, w http.ResponseWriter)) (*fakeOllama, *httptest.Server) {
	f := &fakeOllama{t: t, split: split, reply: reply, models: map[string]bool{"qwen3:8b": true, "llama3.1:8b": true, "gemma3:1b": false}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func ollamaJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/api/chat" {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "404 page not found")
		return
	}
	var raw map[string]any
	json.Unmarshal(data, &raw)
	var req ollamaWire
	if err := json.Unmarshal(data, &req); err != nil {
		ollamaJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.raw = append(f.raw, raw)
	n := len(f.reqs)
	f.mu.Unlock()
	tools, known := f.models[req.Model]
	switch {
	case req.Model == "":
		ollamaJSON(w, http.StatusBadRequest, map[string]string{"error": "model is required"})
	case !known:
		ollamaJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", req.Model)})
	case len(req.Tools) > 0 && !tools:
		ollamaJSON(w, http.StatusBadRequest, map[string]string{"error": "registry.ollama.ai/library/" + req.Model + " does not support tools"})
	default:
		f.reply(n, req, w)
	}
}

func (f *fakeOllama) requests() []ollamaWire {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ollamaWire(nil), f.reqs...)
}

// seen is what reached the server: every request's method and path, and its headers, and the
// bodies of the requests it decoded, as plain JSON.
func (f *fakeOllama) seen() (paths []string, headers []http.Header, raw []map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append(paths, f.paths...), append(headers, f.headers...), append(raw, f.raw...)
}

// serveNDJSON streams a recorded answer as Ollama does.
func (f *fakeOllama) serveNDJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	writeSplit(w, body, f.split)
}

func ollamaFor(t *testing.T, c OllamaConfig) Provider {
	t.Helper()
	if c.Model == "" {
		c.Model = "qwen3:8b"
	}
	p, err := NewOllama(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ollamaFold is what the runtime builds from a turn's deltas.
type ollamaTurn struct {
	text, thinking string
	calls          []ToolCall
	usage          Usage
	stop, detail   string
}

func ollamaFold(ds []Delta) ollamaTurn {
	var o ollamaTurn
	for _, d := range ds {
		switch d.Kind {
		case DeltaText:
			o.text += d.Text
		case DeltaThinking:
			o.thinking += d.Text
		case DeltaToolCall:
			o.calls = append(o.calls, d.ToolCall)
		case DeltaUsage:
			o.usage = d.Usage
		case DeltaStop:
			o.stop, o.detail = d.StopReason, d.StopDetail
		}
	}
	return o
}

// ollamaAnswer is the text of ollama_native_final.ndjson.
const ollamaAnswer = "\n\nDone.\n```json\n{\"summary\": \"read a.go\", \"confidence\": 0.8}\n```"

var ollamaTools = []ToolSpec{
	{Name: "read_file", Description: "Read a file.", Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}}, "required": []string{"path"}}},
	{Name: "glob", Description: "Find files."},
}

// TestOllamaToolConversation: turn 1 thinks and calls read_file twice, one call per line and
// without ids (Ollama before November 2025); turn 2 sends the calls back with their arguments
// as objects, a stored call whose arguments are malformed and one with none, the results
// under tool_name, and gets the answer. Every stream is fed whole, by lines and in 2-byte
// writes.
func TestOllamaToolConversation(t *testing.T) {
	for _, split := range splits {
		t.Run(split, func(t *testing.T) {
			var f *fakeOllama
			f, srv := newFakeOllama(t, split, func(n int, _ ollamaWire, w http.ResponseWriter) {
				if n == 1 {
					f.serveNDJSON(w, streamFile(t, "ollama_native_think_tool_calls.ndjson"))
					return
				}
				f.serveNDJSON(w, streamFile(t, "ollama_native_final.ndjson"))
			})
			p := ollamaFor(t, OllamaConfig{BaseURL: srv.URL})
			temp := 0.2
			req := Request{System: "You are an analyzer.", Tools: ollamaTools, Temperature: &temp, Turn: 0,
				Messages: []Message{{Role: RoleUser, Text: "read a.go and b.go"}}}
			ds, err := drain(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			got := ollamaFold(ds)
			want := []ToolCall{{"ollama_call_0_0", "read_file", `{"path":"a.go"}`}, {"ollama_call_0_1", "read_file", `{"path":"b.go","limit":20}`}}
			if got.thinking != "The user wants both files read; I will call read_file twice." || got.text != "" ||
				fmt.Sprint(got.calls) != fmt.Sprint(want) || got.stop != StopToolUse || got.detail != `done_reason "stop"` ||
				got.usage != (Usage{Input: 412, Output: 61}) {
				t.Fatalf("turn 1: %+v", got)
			}
			if ds[len(ds)-1].Kind != DeltaStop {
				t.Errorf("the last delta is %+v", ds[len(ds)-1])
			}

			req.Turn = 1
			req.Messages = append(req.Messages,
				Message{Role: RoleAssistant, Text: "", Thinking: []Thinking{{Text: got.thinking}}, ToolCalls: append(got.calls,
					ToolCall{ID: "call_9", Name: "glob", Args: `{"pattern": "*.go"`}, ToolCall{ID: "call_10", Name: "glob", Args: ""})},
				Message{Role: RoleTool, ToolCallID: "ollama_call_0_0", ToolName: "read_file", Text: "package a\n"},
				Message{Role: RoleTool, ToolCallID: "ollama_call_0_1", Text: "no such file: b.go", IsError: true},
				Message{Role: RoleTool, ToolCallID: "call_9", ToolName: "glob", Text: "error: the arguments are not JSON", IsError: true},
				Message{Role: RoleTool, ToolCallID: "call_10", ToolName: "glob", Text: "a.go"})
			ds, err = drain(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			got = ollamaFold(ds)
			if got.text != ollamaAnswer || got.thinking != "a.go is a package clause." ||
				got.stop != StopEnd || len(got.calls) != 0 || got.usage != (Usage{Input: 530, Output: 38}) {
				t.Fatalf("turn 2: %+v", got)
			}

			reqs := f.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			r1 := reqs[0]
			if r1.Model != "qwen3:8b" || r1.Stream == nil || !*r1.Stream || r1.Think != nil || len(r1.Messages) != 2 ||
				r1.Messages[0].Role != "system" || r1.Messages[0].Content != "You are an analyzer." || r1.Messages[1].Role != "user" {
				t.Errorf("request 1: %+v", r1)
			}
			if len(r1.Tools) != 2 || r1.Tools[0].Type != "function" || r1.Tools[0].Function.Name != "read_file" ||
				r1.Tools[0].Function.Parameters.Type != "object" || fmt.Sprint(r1.Tools[0].Function.Parameters.Required) != "[path]" ||
				r1.Tools[1].Function.Parameters.Type != "object" || r1.Tools[1].Function.Parameters.Properties == nil {
				t.Errorf("tools: %+v", r1.Tools)
			}
			if r1.Options["temperature"] != 0.2 || r1.Options["num_ctx"] != nil {
				t.Errorf("options %v", r1.Options)
			}
			msgs := reqs[1].Messages
			if len(msgs) != 7 {
				t.Fatalf("request 2 has %d messages", len(msgs))
			}
			a := msgs[2]
			if a.Role != "assistant" || a.Thinking != "" || len(a.ToolCalls) != 4 {
				t.Fatalf("assistant message %+v", a)
			}
			args := func(i int) string { b, _ := json.Marshal(a.ToolCalls[i].Function.Arguments); return string(b) }
			if a.ToolCalls[0].ID != "" || a.ToolCalls[0].Function.Name != "read_file" || args(0) != `{"path":"a.go"}` ||
				args(1) != `{"limit":20,"path":"b.go"}` || a.ToolCalls[2].ID != "call_9" || args(2) != `{"_raw":"{\"pattern\": \"*.go\""}` || args(3) != `{}` {
				t.Errorf("tool calls sent back: %+v", a.ToolCalls)
			}
			for i, want := range []struct{ name, id, content string }{
				{"read_file", "", "package a\n"}, {"read_file", "", "no such file: b.go"}, {"glob", "call_9", "error: the arguments are not JSON"}, {"glob", "call_10", "a.go"},
			} {
				m := msgs[3+i]
				if m.Role != "tool" || m.ToolName != want.name || m.ToolCallID != want.id || m.Content != want.content {
					t.Errorf("tool message %d: %+v", i, m)
				}
			}
		})
	}
}

// TestOllamaServerIDs: a server since November 2025 names its calls; the ids are kept and go
// back on the calls and their results.
func TestOllamaServerIDs(t *testing.T) {
	var f *fakeOllama
	f, srv := newFakeOllama(t, "lines", func(n int, _ ollamaWire, w http.ResponseWriter) {
		f.serveNDJSON(w, streamFile(t, "ollama_native_ids_two_calls.ndjson"))
	})
	p := ollamaFor(t, OllamaConfig{BaseURL: srv.URL})
	ds, err := drain(t, p, Request{Tools: ollamaTools, Turn: 3, Messages: []Message{{Role: RoleUser, Text: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := ollamaFold(ds)
	want := []ToolCall{{"call_x8k2m1qz", "read_file", `{"path":"a.go"}`}, {"call_p0v7r3ta", "glob", `{"pattern":"**/*.go"}`}}
	if fmt.Sprint(got.calls) != fmt.Sprint(want) || got.stop != StopToolUse || got.thinking != "Two files." {
		t.Fatalf("%+v", got)
	}
	_, err = drain(t, p, Request{Tools: ollamaTools, Messages: []Message{{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, ToolCalls: got.calls}, {Role: RoleTool, ToolCallID: "call_x8k2m1qz", ToolName: "read_file", Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	m := f.requests()[1].Messages
	if m[1].ToolCalls[0].ID != "call_x8k2m1qz" || m[1].ToolCalls[1].ID != "call_p0v7r3ta" || m[2].ToolCallID != "call_x8k2m1qz" {
		t.Errorf("ids sent back: %+v", m)
	}
}

// TestOllamaThinkTags: before Ollama separated thinking, a thinking model's content opened
// with <think>…</think>, the tags cut anywhere.
func TestOllamaThinkTags(t *testing.T) {
	for _, split := range splits {
		var f *fakeOllama
		f, srv := newFakeOllama(t, split, func(n int, _ ollamaWire, w http.ResponseWriter) {
			f.serveNDJSON(w, streamFile(t, "ollama_native_think_tags.ndjson"))
		})
		f.models["deepseek-r1:7b"] = false
		ds, err := drain(t, ollamaFor(t, OllamaConfig{BaseURL: srv.URL, Model: "deepseek-r1:7b"}), Request{Messages: []Message{{Role: RoleUser, Text: "?"}}})
		got := ollamaFold(ds)
		if err != nil || got.thinking != "\nShort answer.\n" || got.text != "Yes." || got.stop != StopEnd {
			t.Errorf("%s: %+v %v", split, got, err)
		}
	}
}

// TestOllamaNumCtx: num_ctx goes as options.num_ctx on every request when configured, also
// through the configuration and the router, and not at all otherwise; reasoning_effort
// becomes think's level; max tokens become num_predict.
func TestOllamaNumCtx(t *testing.T) {
	var f *fakeOllama
	f, srv := newFakeOllama(t, "whole", func(n int, _ ollamaWire, w http.ResponseWriter) {
		f.serveNDJSON(w, streamFile(t, "ollama_native_final.ndjson"))
	})
	user := t.TempDir()
	writeConfig(t, user, "providers:\n  local: {kind: ollama, base_url: "+srv.URL+", model: qwen3:8b, num_ctx: 32768}\n"+
		"  bare: {kind: ollama, base_url: "+srv.URL+"/, model: qwen3:8b}\nmodels:\n  default: {provider: local, model: qwen3:8b}\ndefault_provider: local\n")
	c, err := LoadConfig("", user)
	if err != nil {
		t.Fatal(err)
	}
	if c.Providers["local"].NumCtx != 32768 {
		t.Fatalf("num_ctx not read: %+v", c.Providers["local"])
	}
	r := NewRouter(c, NewScript(ScriptConfig{}), func(string) string { return "" })
	local, err := r.provider("local")
	if err != nil {
		t.Fatal(err)
	}
	bare, err := r.provider("bare")
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: RoleUser, Text: "hi"}}
	for _, req := range []Request{{Messages: msgs}, {Messages: msgs, Turn: 1}} {
		if _, err := drain(t, local, req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := drain(t, bare, Request{Messages: msgs, MaxTokens: 512, ReasoningEffort: "high"}); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	for i, want := range []any{32768.0, 32768.0, nil} {
		if got := reqs[i].Options["num_ctx"]; got != want {
			t.Errorf("request %d: num_ctx %v, want %v (options %v)", i, got, want, reqs[i].Options)
		}
	}
	_, _, raw := f.seen()
	if _, has := raw[0]["think"]; has || raw[0]["options"] == nil {
		t.Errorf("request 1: %v", raw[0])
	}
	if reqs[2].Options["num_predict"] != 512.0 || reqs[2].Think != "high" || len(reqs[2].Options) != 1 {
		t.Errorf("request 3: options %v think %v", reqs[2].Options, reqs[2].Think)
	}
	if _, err := NewOllama(OllamaConfig{NumCtx: -1}); err == nil {
		t.Errorf("a negative num_ctx was accepted")
	}
}

// TestOllamaLength: done_reason "length" stops the turn as cut at the token limit, naming the
// server's reason, after the text and the usage.
func TestOllamaLength(t *testing.T) {
	for _, split := range splits {
		var f *fakeOllama
		f, srv := newFakeOllama(t, split, func(n int, _ ollamaWire, w http.ResponseWriter) {
			f.serveNDJSON(w, streamFile(t, "ollama_native_length.ndjson"))
		})
		ds, err := drain(t, ollamaFor(t, OllamaConfig{BaseURL: srv.URL, Model: "llama3.1:8b", NumCtx: 4096}), Request{Messages: []Message{{Role: RoleUser, Text: "write"}}})
		got := ollamaFold(ds)
		if err != nil || got.text != "Here is the first part" || got.stop != StopMaxTokens || got.usage != (Usage{Input: 3968, Output: 128}) ||
			!strings.HasPrefix(got.detail, `done_reason "length"`) || !strings.Contains(got.detail, "num_ctx") {
			t.Errorf("%s: %+v %v", split, got, err)
		}
	}
}

// TestOllamaErrors: the server's own words, whether a retry may help, and a missing model
// that a route's fallbacks recognise.
func TestOllamaErrors(t *testing.T) {
	midstream := streamFile(t, "ollama_native_midstream_error.ndjson")
	final := streamFile(t, "ollama_native_final.ndjson")
	for _, c := range []struct {
		name      string
		model     string
		tools     bool
		reply     func(f *fakeOllama, w http.ResponseWriter)
		status    int
		transient bool
		missing   bool // modelMissing: the router moves to a fallback
		msg       string
		text      string // text streamed before the error
		after     time.Duration
	}{
		{name: "model not found", model: "nosuch:7b", status: 404, missing: true, msg: "ollama: HTTP 404: model 'nosuch:7b' not found (ollama pull it"},
		{name: "no tool support", model: "gemma3:1b", tools: true, status: 400, missing: true, msg: "gemma3:1b does not support tools"},
		{name: "bad request", reply: func(_ *fakeOllama, w http.ResponseWriter) {
			ollamaJSON(w, 400, map[string]string{"error": `invalid think value: "extreme" (must be "high", "medium", "low", "max", true, or false)`})
		}, status: 400, msg: "invalid think value"},
		{name: "server error", reply: func(_ *fakeOllama, w http.ResponseWriter) {
			ollamaJSON(w, 500, map[string]string{"error": "llama runner process has terminated: exit status 2"})
		}, status: 500, transient: true, msg: "HTTP 500: llama runner process has terminated"},
		{name: "queue full", reply: func(_ *fakeOllama, w http.ResponseWriter) {
			ollamaJSON(w, 503, map[string]string{"error": "server busy, please try again.  maximum pending requests exceeded"})
		}, status: 503, transient: true, msg: "server busy"},
		{name: "rate limited", reply: func(_ *fakeOllama, w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			ollamaJSON(w, 429, map[string]string{"error": "you have reached your hourly usage limit"})
		}, status: 429, transient: true, msg: "hourly usage limit", after: 7 * time.Second},
		{name: "mid-stream error line", reply: func(f *fakeOllama, w http.ResponseWriter) { f.serveNDJSON(w, midstream) },
			transient: true, msg: "ollama: an error was encountered while running the model: unexpected EOF", text: "Reading the"},
		{name: "cut before done", reply: func(f *fakeOllama, w http.ResponseWriter) {
			f.serveNDJSON(w, final[:strings.LastIndex(string(final), "\n{")+1])
		}, transient: true, msg: "stream ended mid-message", text: ollamaAnswer},
		{name: "cut mid-line", reply: func(f *fakeOllama, w http.ResponseWriter) {
			f.serveNDJSON(w, final[:strings.LastIndex(string(final), "\n{")+20])
		}, transient: true, msg: "stream cut in the middle of a line", text: ollamaAnswer},
		{name: "not ollama", reply: func(_ *fakeOllama, w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Sign in</body></html>\n")
		}, msg: "is not Ollama's stream"},
		{name: "another API's JSON", reply: func(_ *fakeOllama, w http.ResponseWriter) {
			ollamaJSON(w, 200, map[string]any{"object": "list", "data": []any{}})
		}, msg: "is not Ollama's stream"},
	} {
		for _, split := range []string{"whole", "2-byte"} {
			t.Run(c.name+"/"+split, func(t *testing.T) {
				var f *fakeOllama
				f, srv := newFakeOllama(t, split, func(n int, _ ollamaWire, w http.ResponseWriter) { c.reply(f, w) })
				model := c.model
				if model == "" {
					model = "qwen3:8b"
				}
				req := Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}
				if c.tools {
					req.Tools = ollamaTools
				}
				ds, err := drain(t, ollamaFor(t, OllamaConfig{BaseURL: srv.URL, Model: model}), req)
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v (%T), deltas %+v", err, err, ds)
				}
				if pe.Status != c.status || pe.Transient != c.transient || !strings.Contains(err.Error(), c.msg) ||
					modelMissing(err) != c.missing || pe.RetryAfter != c.after {
					t.Errorf("err %q: status %d transient %v missing %v retry after %v", err, pe.Status, pe.Transient, modelMissing(err), pe.RetryAfter)
				}
				if got := ollamaFold(ds); got.text != c.text || got.stop != "" {
					t.Errorf("deltas before the error: %+v", got)
				}
			})
		}
	}
}

// TestOllamaRejectsStringArguments: the fake refuses what Ollama refuses, so the tests above
// prove something.
func TestOllamaRejectsStringArguments(t *testing.T) {
	_, srv := newFakeOllama(t, "whole", func(int, ollamaWire, http.ResponseWriter) { t.Error("answered") })
	res, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(
		`{"model":"qwen3:8b","messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || !strings.Contains(string(body), `"error":"json: cannot unmarshal string`) {
		t.Errorf("%d %s", res.StatusCode, body)
	}
}

// TestOllamaBaseURL: the server's root, with or without a slash, and a base_url written for
// the OpenAI-compatible endpoint (…/v1) all reach /api/chat; the built-in ollama provider is
// the native one; a wrong base_url says so.
func TestOllamaBaseURL(t *testing.T) {
	var f *fakeOllama
	f, srv := newFakeOllama(t, "whole", func(n int, _ ollamaWire, w http.ResponseWriter) {
		f.serveNDJSON(w, streamFile(t, "ollama_native_final.ndjson"))
	})
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/v1", srv.URL + "/v1/"} {
		if _, err := drain(t, ollamaFor(t, OllamaConfig{BaseURL: base}), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}); err != nil {
			t.Errorf("%s: %v", base, err)
		}
	}
	paths, _, _ := f.seen()
	for i, p := range paths {
		if p != "POST /api/chat" {
			t.Errorf("request %d went to %s", i, p)
		}
	}
	_, err := drain(t, ollamaFor(t, OllamaConfig{BaseURL: srv.URL + "/ollama"}), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 404 || pe.Transient || !strings.Contains(err.Error(), "no Ollama API at "+srv.URL+"/ollama/api/chat (404 page not found)") {
		t.Errorf("wrong base_url: %v", err)
	}
	if b := builtins["ollama"]; b.Kind != "ollama" || ollamaRoot(b.BaseURL) != DefaultOllamaBaseURL || ollamaRoot("") != DefaultOllamaBaseURL {
		t.Errorf("built-in ollama %+v", b)
	}
	if _, err := NewOllama(OllamaConfig{BaseURL: "localhost:11434"}); err == nil {
		t.Errorf("a base_url without a scheme was accepted")
	}
}

// TestOllamaKeys: no key unless key_env names one; then a bearer token, and a clear error
// when the variable is empty.
func TestOllamaKeys(t *testing.T) {
	var f *fakeOllama
	f, srv := newFakeOllama(t, "whole", func(n int, _ ollamaWire, w http.ResponseWriter) {
		f.serveNDJSON(w, streamFile(t, "ollama_native_final.ndjson"))
	})
	env := map[string]string{"OLLAMA_KEY": "sk-ollama-1"}
	getenv := func(k string) string { return env[k] }
	req := Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}
	if _, err := drain(t, ollamaFor(t, OllamaConfig{BaseURL: srv.URL, Getenv: getenv}), req); err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, ollamaFor(t, OllamaConfig{BaseURL: srv.URL, KeyEnv: "OLLAMA_KEY", Getenv: getenv}), req); err != nil {
		t.Fatal(err)
	}
	_, headers, _ := f.seen()
	if a, b := headers[0].Get("Authorization"), headers[1].Get("Authorization"); a != "" || b != "Bearer sk-ollama-1" {
		t.Errorf("authorization %q, %q", a, b)
	}
	_, err := drain(t, ollamaFor(t, OllamaConfig{BaseURL: srv.URL, KeyEnv: "NOT_SET", Getenv: getenv}), req)
	if paths, _, _ := f.seen(); err == nil || !strings.Contains(err.Error(), "NOT_SET") || strings.Contains(err.Error(), "sk-ollama") || len(paths) != 2 {
		t.Errorf("missing key: %v", err)
	}
}

// TestOllamaUnreachable: nothing listening is a transient error that names the address.
func TestOllamaUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = drain(t, ollamaFor(t, OllamaConfig{BaseURL: "http://" + addr}), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
	if !IsTransient(err) || !strings.Contains(err.Error(), "cannot reach Ollama at http://"+addr) {
		t.Errorf("%v", err)
	}
}

// TestOllamaCancel: cancelling the context mid-stream ends it with the context's error.
func TestOllamaCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, srv := newFakeOllama(t, "whole", func(n int, _ ollamaWire, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"model":"qwen3:8b","created_at":"2026-03-02T10:15:06.611802Z","message":{"role":"assistant","content":"Hel"},"done":false}`+"\n")
		w.(http.Flusher).Flush()
		<-release
	})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := ollamaFor(t, OllamaConfig{BaseURL: srv.URL}).Stream(ctx, Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if d, err := st.Next(); err != nil || d.Text != "Hel" {
		t.Fatalf("%+v %v", d, err)
	}
	cancel()
	if _, err := st.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
}

// TestOllamaListModels: `summit models` and `summit doctor` list what /api/tags names, with a
// base_url of either form.
func TestOllamaListModels(t *testing.T) {
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if r.Method != http.MethodGet || r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		ollamaJSON(w, 200, map[string]any{"models": []map[string]any{
			{"name": "qwen3:8b", "model": "qwen3:8b", "modified_at": "2026-02-11T09:01:33.120434Z", "size": 5225388164, "digest": "500a1f067a9f", "details": map[string]any{"family": "qwen3"}},
			{"name": "llama3:latest", "model": "llama3:latest", "modified_at": "2025-12-01T17:44:02.938104Z", "size": 4661224676, "digest": "365c0bd3c000", "details": map[string]any{"family": "llama"}},
		}})
	}))
	defer srv.Close()
	for _, base := range []string{srv.URL, srv.URL + "/v1"} {
		list, err := ListModels(context.Background(), ProviderInfo{Name: "ollama", Kind: "ollama", BaseURL: base}, func(string) string { return "" }, nil)
		if err != nil || fmt.Sprint(list) != "[llama3:latest qwen3:8b]" || !Serves(list, "llama3") {
			t.Errorf("%s: %v %v", base, list, err)
		}
	}
	if _, err := ListModels(context.Background(), ProviderInfo{Kind: "ollama", BaseURL: srv.URL, KeyEnv: "K"}, func(string) string { return "k1" }, nil); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(auth) != "[  Bearer k1]" {
		t.Errorf("authorization %q", auth)
	}
}

// The fixtures are as Ollama writes them: one JSON object per line, every line ended.
func TestOllamaFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "streams", "ollama_native_*.ndjson"))
	if len(files) < 6 {
		t.Fatalf("%d fixtures", len(files))
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(data), "}\n") {
			t.Errorf("%s does not end with a full line", name)
		}
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if !json.Valid([]byte(line)) {
				t.Errorf("%s:%d is not JSON", name, i+1)
			}
		}
	}
}
