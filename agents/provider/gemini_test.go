package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGemini speaks the Gemini API's streaming wire format (see GeminiConfig) and checks each
// request the way the real API does where summit depends on it:
//
//   - the path, ?alt=sse and the x-goog-api-key header;
//   - every content has parts, and every part exactly one data field (an empty text part has
//     none);
//   - a user content with functionResponse parts follows a model content with as many
//     functionCall parts, and each response names one of those calls;
//   - Gemini 3's rule: in the current turn (after the last user text), the first functionCall
//     of each model content carries a thought signature. A signature the server issued must
//     come back unchanged on the same kind of part; Google's stand-in signature passes for
//     calls the server never made.
//
// Errors use Google's body: {"error":{"code","message","status"}}.
type fakeGemini struct {
	t       *testing.T
	key     string
	framing string // between events; Google sends CRLF CRLF
	tiny    bool   // write the stream 2 bytes at a time
	lenient bool   // Gemini 2.5: unsigned function calls pass

	mu      sync.Mutex
	replies []geminiReply
	bodies  []map[string]any
	paths   []string
	issued  map[string]string // signature -> the part it was issued on: "call:<name>", "text", "thought"
}

type geminiReply struct {
	status  int               // an HTTP error with body; 0 = a stream
	body    string            // the error body
	header  map[string]string // extra response headers
	chunks  []string          // GenerateContentResponse JSON, one event each
	raw     string            // written as is after the chunks (a mid-stream error event)
	hangup  bool              // drop the connection after the chunks
	waitFor chan struct{}     // block after the chunks until closed
}

func newFakeGemini(t *testing.T, replies ...geminiReply) (*fakeGemini, *httptest.Server) {
	f := &fakeGemini{t: t, key: "AIza-test", framing: "\r\n\r\n", replies: replies, issued: map[string]string{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

var geminiPath = regexp.MustCompile(`^/v1beta/models/([^/:]+):streamGenerateContent$`)

func googleError(code int, status, msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
	return string(b)
}

func (f *fakeGemini) fail(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	io.WriteString(w, googleError(code, status, msg))
}

func (f *fakeGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := geminiPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil || r.URL.Query().Get("alt") != "sse" {
		f.fail(w, 404, "NOT_FOUND", "unexpected "+r.Method+" "+r.URL.String())
		return
	}
	if r.Header.Get("x-goog-api-key") != f.key {
		f.fail(w, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.fail(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.paths = append(f.paths, r.URL.Path)
	msg := f.validate(body)
	var rep geminiReply
	if msg == "" {
		if len(f.replies) == 0 {
			f.mu.Unlock()
			f.t.Errorf("unexpected request %d", len(f.bodies))
			f.fail(w, 500, "INTERNAL", "no reply scripted")
			return
		}
		rep, f.replies = f.replies[0], f.replies[1:]
		for _, c := range rep.chunks {
			f.issue(c)
		}
	}
	f.mu.Unlock()
	if msg != "" {
		f.fail(w, 400, "INVALID_ARGUMENT", msg)
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status != 0 {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var out strings.Builder
	for _, c := range rep.chunks {
		out.WriteString("data: " + c + f.framing)
	}
	out.WriteString(rep.raw)
	write := func(s string) {
		w.Write([]byte(s))
		w.(http.Flusher).Flush()
	}
	if s := out.String(); f.tiny {
		for i := 0; i < len(s); i += 2 {
			write(s[i:min(i+2, len(s))])
		}
	} else {
		write(s)
	}
	if rep.waitFor != nil {
		<-rep.waitFor
	}
	if rep.hangup {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

// issue records the signatures a reply hands out.
func (f *fakeGemini) issue(chunk string) {
	var r struct {
		Candidates []struct {
			Content struct {
				Parts []map[string]any `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(chunk), &r); err != nil {
		f.t.Fatalf("bad test chunk %s: %v", chunk, err)
	}
	for _, c := range r.Candidates {
		for _, p := range c.Content.Parts {
			if sig, _ := p["thoughtSignature"].(string); sig != "" {
				f.issued[sig] = partKind(p)
			}
		}
	}
}

func partKind(p map[string]any) string {
	if fc, ok := p["functionCall"].(map[string]any); ok {
		return "call:" + fmt.Sprint(fc["name"])
	}
	if p["thought"] == true {
		return "thought"
	}
	return "text"
}

var foreignSig = base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))

// validate returns the API's complaint about a request, or "".
func (f *fakeGemini) validate(body map[string]any) string {
	contents, _ := body["contents"].([]any)
	if len(contents) == 0 {
		return "* GenerateContentRequest.contents: contents is not specified"
	}
	type content struct {
		role  string
		parts []map[string]any
	}
	var cs []content
	current := 0 // the first content of the current turn
	for i, c := range contents {
		cm, _ := c.(map[string]any)
		role, _ := cm["role"].(string)
		if role != "user" && role != "model" {
			return fmt.Sprintf("Please use a valid role: user, model. (contents[%d] has %q)", i, role)
		}
		raw, _ := cm["parts"].([]any)
		if len(raw) == 0 {
			return fmt.Sprintf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i)
		}
		var parts []map[string]any
		for j, p := range raw {
			pm, _ := p.(map[string]any)
			n := 0
			for _, k := range []string{"text", "functionCall", "functionResponse", "inlineData", "fileData", "executableCode", "codeExecutionResult"} {
				if _, ok := pm[k]; ok {
					n++
				}
			}
			if n != 1 {
				return fmt.Sprintf("* GenerateContentRequest.contents[%d].parts[%d].data: required oneof field 'data' must have one initialized field", i, j)
			}
			if sig, ok := pm["thoughtSignature"].(string); ok {
				kind, issued := f.issued[sig]
				if sig == foreignSig {
					// Stricter than Google: the stand-in passes only for calls the server never signed.
					for _, k := range f.issued {
						issued = issued || k == partKind(pm)
					}
					kind = "none"
				}
				if issued && kind != partKind(pm) || !issued && sig != foreignSig {
					return fmt.Sprintf("Corrupted thought signature in contents[%d].parts[%d].", i, j)
				}
			}
			if _, ok := pm["text"]; ok && role == "user" {
				current = i
			}
			parts = append(parts, pm)
		}
		cs = append(cs, content{role, parts})
	}
	calls := func(c content) []string {
		var names []string
		for _, p := range c.parts {
			if fc, ok := p["functionCall"].(map[string]any); ok {
				names = append(names, fmt.Sprint(fc["name"]))
			}
		}
		return names
	}
	for i, c := range cs {
		var responses []string
		for _, p := range c.parts {
			if fr, ok := p["functionResponse"].(map[string]any); ok {
				responses = append(responses, fmt.Sprint(fr["name"]))
			}
		}
		if len(responses) == 0 {
			continue
		}
		if i == 0 || cs[i-1].role != "model" || len(calls(cs[i-1])) == 0 {
			return "Please ensure that function response turn comes immediately after a function call turn."
		}
		prev := calls(cs[i-1])
		if len(prev) != len(responses) {
			return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
		}
		for _, name := range responses {
			if !strings.Contains(","+strings.Join(prev, ",")+",", ","+name+",") {
				return fmt.Sprintf("Function response `%s` in contents[%d] does not match any function call of the previous turn (%s).", name, i, strings.Join(prev, ", "))
			}
		}
	}
	for i := current; i < len(cs) && !f.lenient; i++ {
		if cs[i].role != "model" {
			continue
		}
		for _, p := range cs[i].parts {
			fc, ok := p["functionCall"].(map[string]any)
			if !ok {
				continue
			}
			if _, signed := p["thoughtSignature"]; !signed {
				return fmt.Sprintf("Function call `%s` in the `%d.` content block is missing a `thought_signature`. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", fc["name"], i+1)
			}
			break // only the first call of a step is signed
		}
	}
	return ""
}

func (f *fakeGemini) body(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		f.t.Fatalf("no request %d (%d made)", i+1, len(f.bodies))
	}
	return f.bodies[i]
}

func (f *fakeGemini) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// gchunk is one streamGenerateContent chunk, formatted the way Google formats them.
func gchunk(parts, finish, usage string) string {
	s := `{"candidates": [{"content": {"parts": [` + parts + `],"role": "model"},`
	if finish != "" {
		s += `"finishReason": "` + finish + `",`
	}
	s += `"index": 0}]`
	if usage != "" {
		s += `,"usageMetadata": ` + usage
	}
	return s + `,"modelVersion": "gemini-2.5-flash","responseId": "qpc2afWVFJK4vr0Pq6WiyAU"}`
}

func gusage(prompt, candidates, thoughts int) string {
	return fmt.Sprintf(`{"promptTokenCount": %d,"candidatesTokenCount": %d,"totalTokenCount": %d,"promptTokensDetails": [{"modality": "TEXT","tokenCount": %d}],"thoughtsTokenCount": %d}`,
		prompt, candidates, prompt+candidates+thoughts, prompt, thoughts)
}

func sig(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func geminiFor(t *testing.T, url string, env map[string]string) Provider {
	t.Helper()
	p, err := NewGemini(GeminiConfig{BaseURL: url, Model: "gemini-test", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var geminiKey = map[string]string{"GEMINI_API_KEY": "AIza-test"}

// geminiFold builds the assistant message from a turn's deltas the way the runtime does:
// thinking accumulates until a delta with a signature closes a block.
func geminiFold(ds []Delta) (Message, string, Usage) {
	m := Message{Role: RoleAssistant}
	var think, text strings.Builder
	var stop string
	var usage Usage
	for _, d := range ds {
		switch d.Kind {
		case DeltaText:
			text.WriteString(d.Text)
		case DeltaThinking:
			think.WriteString(d.Text)
			if d.Signature != "" {
				m.Thinking = append(m.Thinking, Thinking{Text: think.String(), Signature: d.Signature})
				think.Reset()
			}
		case DeltaToolCall:
			m.ToolCalls = append(m.ToolCalls, d.ToolCall)
		case DeltaUsage:
			usage = d.Usage
		case DeltaStop:
			stop = d.StopReason
		}
	}
	if think.Len() > 0 {
		m.Thinking = append(m.Thinking, Thinking{Text: think.String()})
	}
	m.Text = text.String()
	return m, stop, usage
}

func thinkingText(m Message) string {
	var b strings.Builder
	for _, t := range m.Thinking {
		b.WriteString(t.Text)
	}
	return b.String()
}

// jsonAt marshals a value found in a request body, for substring checks.
func jsonAt(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var readFileTool = ToolSpec{Name: "read_file", Description: "Read a file", Parameters: map[string]any{"type": "object",
	"properties": map[string]any{"path": map[string]any{"type": "string", "description": "the file"}},
	"required":   []string{"path"}, "additionalProperties": false}}

// TestGeminiToolConversation: turn 1 thinks and calls two tools in parallel, the first call
// signed; turn 2 must send the call back with its signature and both results by name, and
// answers with text whose signature comes on an empty final part; turn 3 sends that back on
// the text. Each framing is Google's CRLF, plain LF (proxies), and CRLF written 2 bytes at a
// time.
func TestGeminiToolConversation(t *testing.T) {
	sigCall, sigText := sig("signature for read_file"), sig("signature for the answer")
	for _, framing := range []struct {
		name, sep string
		tiny      bool
	}{{"crlf", "\r\n\r\n", false}, {"lf", "\n\n", false}, {"crlf-2-bytes", "\r\n\r\n", true}} {
		t.Run(framing.name, func(t *testing.T) {
			f, srv := newFakeGemini(t,
				geminiReply{chunks: []string{
					gchunk(`{"text": "The user wants a.go. ","thought": true}`, "", gusage(40, 0, 20)),
					gchunk(`{"text": "I'll read it and list the rest.","thought": true}`, "", gusage(40, 0, 64)),
					`{"candidates": [{"content": {"parts": [{"functionCall": {"name": "read_file","args": {"path": "a.go"}},"thoughtSignature": "` + sigCall + `"},{"functionCall": {"name": "glob","args": {"pattern": "*.go"}}}],"role": "model"},"finishReason": "STOP","index": 0,"finishMessage": "Model generated function call(s)."}],"usageMetadata": ` + gusage(40, 14, 64) + `,"modelVersion": "gemini-2.5-flash","responseId": "qpc2afWVFJK4vr0Pq6WiyAU"}`,
				}},
				geminiReply{chunks: []string{
					gchunk(`{"text": "a.go is "}`, "", gusage(90, 3, 0)),
					gchunk(`{"text": "package a."}`, "", gusage(90, 6, 0)),
					gchunk(`{"text": "","thoughtSignature": "`+sigText+`"}`, "STOP", gusage(90, 6, 0)),
				}},
				geminiReply{chunks: []string{gchunk(`{"text": "You're welcome."}`, "STOP", gusage(100, 4, 0))}},
			)
			f.framing, f.tiny = framing.sep, framing.tiny
			p := geminiFor(t, srv.URL, geminiKey)
			temp := 0.2
			req := Request{System: "sys", Temperature: &temp, MaxTokens: 1000, Tools: []ToolSpec{readFileTool, {Name: "glob", Description: "Find files"}},
				Messages: []Message{{Role: RoleUser, Text: "read a.go"}}}
			ds, err := drain(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			turn1, stop, usage := geminiFold(ds)
			if stop != StopToolUse || usage != (Usage{Input: 40, Output: 78}) || turn1.Text != "" {
				t.Errorf("stop %q usage %+v text %q", stop, usage, turn1.Text)
			}
			if got := thinkingText(turn1); got != "The user wants a.go. I'll read it and list the rest." {
				t.Errorf("thinking %q", got)
			}
			want := []ToolCall{{ID: "gemini_call_0_0", Name: "read_file", Args: `{"path":"a.go"}`}, {ID: "gemini_call_0_1", Name: "glob", Args: `{"pattern":"*.go"}`}}
			if len(turn1.ToolCalls) != 2 || turn1.ToolCalls[0] != want[0] || turn1.ToolCalls[1] != want[1] {
				t.Errorf("calls %+v", turn1.ToolCalls)
			}
			if last := ds[len(ds)-1]; last.Kind != DeltaStop || last.StopDetail != `finishReason "STOP"` {
				t.Errorf("last delta %+v", last)
			}

			// Request 1: the shape the API documents.
			b := f.body(0)
			if f.paths[0] != "/v1beta/models/gemini-test:streamGenerateContent" {
				t.Errorf("path %s", f.paths[0])
			}
			if got := jsonAt(b["systemInstruction"]); got != `{"parts":[{"text":"sys"}],"role":"user"}` {
				t.Errorf("systemInstruction %s", got)
			}
			gc := jsonAt(b["generationConfig"])
			for _, w := range []string{`"temperature":0.2`, `"maxOutputTokens":1000`, `"thinkingConfig":{"includeThoughts":true}`} {
				if !strings.Contains(gc, w) {
					t.Errorf("generationConfig lacks %s: %s", w, gc)
				}
			}
			tools := jsonAt(b["tools"])
			for _, w := range []string{`"name":"read_file"`, `"description":"Read a file"`, `"parametersJsonSchema":{"additionalProperties":false,"properties":{"path":{"description":"the file","type":"string"}},"required":["path"],"type":"object"}`, `{"description":"Find files","name":"glob"}`} {
				if !strings.Contains(tools, w) {
					t.Errorf("tools lack %s: %s", w, tools)
				}
			}

			// Turn 2: the fake rejects the request unless the signature and the names come back.
			req.Messages = append(req.Messages, turn1,
				Message{Role: RoleTool, ToolCallID: "gemini_call_0_0", ToolName: "read_file", Text: "package a\n"},
				Message{Role: RoleTool, ToolCallID: "gemini_call_0_1", ToolName: "glob", Text: "no such pattern", IsError: true})
			req.Turn = 1
			ds, err = drain(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			turn2, stop, usage := geminiFold(ds)
			if turn2.Text != "a.go is package a." || stop != StopEnd || usage != (Usage{Input: 90, Output: 6}) {
				t.Errorf("turn 2: text %q stop %q usage %+v", turn2.Text, stop, usage)
			}
			contents := jsonAt(f.body(1)["contents"])
			wantContents := `[{"parts":[{"text":"read a.go"}],"role":"user"},` +
				`{"parts":[{"functionCall":{"args":{"path":"a.go"},"name":"read_file"},"thoughtSignature":"` + sigCall + `"},{"functionCall":{"args":{"pattern":"*.go"},"name":"glob"}}],"role":"model"},` +
				`{"parts":[{"functionResponse":{"name":"read_file","response":{"output":"package a\n"}}},{"functionResponse":{"name":"glob","response":{"error":"no such pattern"}}}],"role":"user"}]`
			if contents != wantContents {
				t.Errorf("turn 2 contents\n got %s\nwant %s", contents, wantContents)
			}

			// Turn 3: the answer's signature goes back on its text.
			req.Messages = append(req.Messages, turn2, Message{Role: RoleUser, Text: "thanks"})
			if _, err := drain(t, p, req); err != nil {
				t.Fatal(err)
			}
			contents = jsonAt(f.body(2)["contents"])
			if !strings.Contains(contents, `{"parts":[{"text":"a.go is package a.","thoughtSignature":"`+sigText+`"}],"role":"model"},{"parts":[{"text":"thanks"}],"role":"user"}`) {
				t.Errorf("turn 3 contents %s", contents)
			}
		})
	}
}

// TestGeminiSignedThoughtsAndServerIDs: a signed thought part (Gemini 2.5 may sign the first
// part, whatever it is) goes back as a thought part with its text; a call id the server gave
// is kept and sent back on the call and its result.
func TestGeminiSignedThoughtsAndServerIDs(t *testing.T) {
	sigThought := sig("thought signature")
	f, srv := newFakeGemini(t,
		geminiReply{chunks: []string{
			gchunk(`{"text": "Plan: read.","thought": true,"thoughtSignature": "`+sigThought+`"}`, "", ""),
			gchunk(`{"functionCall": {"id": "fc-77","name": "read_file","args": {"path": "a.go"}}}`, "STOP", gusage(10, 5, 5)),
		}},
		geminiReply{chunks: []string{gchunk(`{"text": "ok"}`, "STOP", "")}},
	)
	f.lenient = true
	p := geminiFor(t, srv.URL, geminiKey)
	req := Request{Messages: []Message{{Role: RoleUser, Text: "go"}}, Tools: []ToolSpec{readFileTool}}
	ds, err := drain(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	turn1, stop, _ := geminiFold(ds)
	if stop != StopToolUse || len(turn1.ToolCalls) != 1 || turn1.ToolCalls[0].ID != "fc-77" {
		t.Fatalf("turn 1 %+v stop %s", turn1, stop)
	}
	// The call has no signature of its own, and none is made up: the first part carried it.
	req.Messages = append(req.Messages, turn1, Message{Role: RoleTool, ToolCallID: "fc-77", Text: "package a"})
	if _, err := drain(t, p, req); err != nil {
		t.Fatal(err)
	}
	want := `{"parts":[{"text":"Plan: read.","thought":true,"thoughtSignature":"` + sigThought + `"},{"functionCall":{"args":{"path":"a.go"},"id":"fc-77","name":"read_file"}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"id":"fc-77","name":"read_file","response":{"output":"package a"}}}],"role":"user"}`
	if got := jsonAt(f.body(1)["contents"]); !strings.Contains(got, want) {
		t.Errorf("turn 2 contents\n got %s\nwant …%s", got, want)
	}
}

// TestGeminiForeignHistory: tool calls another backend made (after a fallback) carry no Gemini
// signature: the first call of each turn gets Google's stand-in, Anthropic's signed thinking
// is not sent, and a result without a tool name takes its call's name.
func TestGeminiForeignHistory(t *testing.T) {
	f, srv := newFakeGemini(t, geminiReply{chunks: []string{gchunk(`{"text": "ok"}`, "STOP", "")}})
	p := geminiFor(t, srv.URL, geminiKey)
	_, err := drain(t, p, Request{Messages: []Message{
		{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, Text: "Looking.", Thinking: []Thinking{{Text: "claude thinks", Signature: "EqQBCkYIARgCIkD"}, {Redacted: "RED"}},
			ToolCalls: []ToolCall{{ID: "toolu_1", Name: "read_file", Args: `{"path":"a.go"}`}, {ID: "toolu_2", Name: "glob", Args: `{"pattern":`}}},
		{Role: RoleTool, ToolCallID: "toolu_1", Text: ""},
		{Role: RoleTool, ToolCallID: "toolu_2", Text: "bad arguments", IsError: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"parts":[{"text":"Looking."},{"functionCall":{"args":{"path":"a.go"},"id":"toolu_1","name":"read_file"},"thoughtSignature":"` + foreignSig + `"},{"functionCall":{"args":{"_raw":"{\"pattern\":"},"id":"toolu_2","name":"glob"}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"id":"toolu_1","name":"read_file","response":{"output":"(no output)"}}},{"functionResponse":{"id":"toolu_2","name":"glob","response":{"error":"bad arguments"}}}],"role":"user"}]`
	if got := jsonAt(f.body(0)["contents"]); !strings.HasSuffix(got, want) {
		t.Errorf("contents\n got %s\nwant …%s", got, want)
	}
}

// TestGeminiRejections: what the API refuses, summit reports as final with the server's words:
// a call sent back without the signature the server gave it, and a result for a call that was
// not made.
func TestGeminiRejections(t *testing.T) {
	sigCall := sig("issued")
	f, srv := newFakeGemini(t)
	f.issued[sigCall] = "call:read_file"
	p := geminiFor(t, srv.URL, geminiKey)
	history := func(name string, sig string) []Message {
		return []Message{{Role: RoleUser, Text: "go"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "gemini_call_0_0", Name: "read_file", Args: `{}`}}, Thinking: []Thinking{{Signature: sig}}},
			{Role: RoleTool, ToolCallID: "gemini_call_0_0", ToolName: name, Text: "x"}}
	}
	// A signature that is not the server's (here: the stand-in, for a call it made).
	_, err := drain(t, p, Request{Messages: history("read_file", "")})
	var pe *Error
	if !errors.As(err, &pe) || pe.Transient || pe.Status != 400 || !strings.Contains(err.Error(), "Corrupted thought signature") {
		t.Errorf("lost signature: %v", err)
	}
	// The signature is right, the result names another function.
	_, err = drain(t, p, Request{Messages: history("glob", geminiSig("call:gemini_call_0_0:", []byte("issued")))})
	if !errors.As(err, &pe) || pe.Transient || !strings.Contains(err.Error(), "INVALID_ARGUMENT: Function response `glob` in contents[2] does not match") {
		t.Errorf("wrong name: %v", err)
	}
	// No signature at all (a request built by hand: the adapter always sends one), for the
	// fake's sake.
	body := `{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"read_file"}}]}]}`
	hreq, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", strings.NewReader(body))
	hreq.Header.Set("x-goog-api-key", f.key)
	res, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if got, _ := io.ReadAll(res.Body); res.StatusCode != 400 || !strings.Contains(string(got), "is missing a `thought_signature`") {
		t.Errorf("the fake accepted an unsigned call: %d %s", res.StatusCode, got)
	}
}

func TestGeminiStops(t *testing.T) {
	cases := []struct {
		name      string
		chunks    []string
		stop      string
		err       string
		transient bool
	}{
		{name: "max tokens", chunks: []string{gchunk(`{"text": "a long"}`, "", ""), gchunk(`{"text": " answer"}`, "MAX_TOKENS", gusage(10, 100, 0))},
			stop: StopMaxTokens},
		{name: "safety", chunks: []string{`{"candidates": [{"content": {"parts": [{"text": "I"}],"role": "model"},"finishReason": "SAFETY","index": 0,"safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT","probability": "HIGH","blocked": true}]}]}`},
			err: "the reply was blocked by the safety filters (finishReason SAFETY)"},
		{name: "recitation", chunks: []string{gchunk(`{"text": "It was the best"}`, "RECITATION", "")},
			err: "finishReason RECITATION"},
		{name: "malformed call", chunks: []string{`{"candidates": [{"content": {"parts": [],"role": "model"},"finishReason": "MALFORMED_FUNCTION_CALL","index": 0,"finishMessage": "Malformed function call: print(default_api.read_file(path=)"}]}`},
			err: "malformed function call (finishReason MALFORMED_FUNCTION_CALL)", transient: true}, // the SDK drops finishMessage
		{name: "prompt blocked", chunks: []string{`{"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},"usageMetadata": {"promptTokenCount": 7,"totalTokenCount": 7},"modelVersion": "gemini-2.5-flash"}`},
			err: "the prompt was blocked (blockReason PROHIBITED_CONTENT)"},
		{name: "cut", chunks: []string{gchunk(`{"text": "half"}`, "", "")},
			err: "stream ended mid-message", transient: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, srv := newFakeGemini(t, geminiReply{chunks: c.chunks})
			ds, err := drain(t, geminiFor(t, srv.URL, geminiKey), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
			if c.err == "" {
				_, stop, _ := geminiFold(ds)
				if err != nil || stop != c.stop || ds[len(ds)-1].StopDetail != `finishReason "MAX_TOKENS"` {
					t.Fatalf("stop %q err %v deltas %+v", stop, err, ds)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || IsTransient(err) != c.transient {
				t.Fatalf("err %v (transient %v), want %q (transient %v)", err, IsTransient(err), c.err, c.transient)
			}
		})
	}
}

func TestGeminiErrors(t *testing.T) {
	quota := `{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
      {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}
    ]
  }
}
`
	cases := []struct {
		name      string
		rep       geminiReply
		status    int
		transient bool
		missing   bool
		wait      time.Duration
		msg       string
	}{
		{"rate limited", geminiReply{status: 429, body: quota}, 429, true, false, 37 * time.Second,
			"gemini: HTTP 429: RESOURCE_EXHAUSTED: You exceeded your current quota"},
		{"overloaded", geminiReply{status: 503, body: googleError(503, "UNAVAILABLE", "The model is overloaded. Please try again later."), header: map[string]string{"Retry-After": "2"}},
			503, true, false, 2 * time.Second, "UNAVAILABLE: The model is overloaded."},
		{"internal", geminiReply{status: 500, body: googleError(500, "INTERNAL", "An internal error has occurred.")}, 500, true, false, 0, "INTERNAL: An internal error"},
		{"bad request", geminiReply{status: 400, body: googleError(400, "INVALID_ARGUMENT", "* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be positive.")},
			400, false, false, 0, "max_output_tokens must be positive"},
		{"forbidden", geminiReply{status: 403, body: googleError(403, "PERMISSION_DENIED", "Your API key was reported as leaked. Please use another API key.")},
			403, false, false, 0, "PERMISSION_DENIED: Your API key was reported as leaked"},
		{"model not found", geminiReply{status: 404, body: googleError(404, "NOT_FOUND", "models/gemini-9-ultra is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.")},
			404, false, true, 0, "NOT_FOUND: models/gemini-9-ultra is not found for API version v1beta"},
		{"html from a proxy", geminiReply{status: 502, body: "<html><body>Bad Gateway</body></html>"}, 502, true, false, 0, "gemini: HTTP 502: Bad Gateway"},
		{"error event mid-stream", geminiReply{chunks: []string{gchunk(`{"text": "par"}`, "", gusage(5, 1, 0))},
			raw: "data: " + googleError(503, "UNAVAILABLE", "The model is overloaded. Please try again later.") + "\r\n\r\n"}, 503, true, false, 0, "UNAVAILABLE: The model is overloaded"},
		{"json instead of a stream", geminiReply{status: 200, body: `[{"candidates": []}]`}, 0, false, false, 0, "instead of an event stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, srv := newFakeGemini(t, c.rep)
			ds, err := drain(t, geminiFor(t, srv.URL, geminiKey), Request{Model: "gemini-9-ultra", Messages: []Message{{Role: RoleUser, Text: "hi"}}})
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err %v (%T), deltas %+v", err, err, ds)
			}
			if pe.Status != c.status || pe.Transient != c.transient || IsModelUnavailable(err) != c.missing || pe.RetryAfter != c.wait || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("got %q status %d transient %v missing %v wait %s", err, pe.Status, pe.Transient, IsModelUnavailable(err), pe.RetryAfter)
			}
			if n := f.requests(); n != 1 {
				t.Errorf("%d requests: the SDK retried", n)
			}
		})
	}
}

func TestGeminiKeys(t *testing.T) {
	f, srv := newFakeGemini(t, geminiReply{chunks: []string{gchunk(`{"text": "hi"}`, "STOP", "")}})
	req := Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}
	_, err := drain(t, geminiFor(t, srv.URL, nil), req)
	if err == nil || err.Error() != "gemini: no API key: set the environment variable GEMINI_API_KEY or GOOGLE_API_KEY" || IsTransient(err) {
		t.Errorf("no key: %v", err)
	}
	if f.requests() != 0 {
		t.Error("a request was made without a key")
	}
	if _, err := drain(t, geminiFor(t, srv.URL, map[string]string{"GOOGLE_API_KEY": "AIza-test"}), req); err != nil {
		t.Errorf("GOOGLE_API_KEY: %v", err)
	}
	p, _ := NewGemini(GeminiConfig{BaseURL: srv.URL, KeyEnv: "TEAM_GEMINI_KEY", Getenv: func(k string) string { return geminiKey[k] }})
	if _, err := drain(t, p, req); err == nil || !strings.HasSuffix(err.Error(), "set the environment variable TEAM_GEMINI_KEY") {
		t.Errorf("key_env: %v", err)
	}
}

// TestGeminiTransport: a base_url that ends in the API version is not doubled; a dropped
// connection and a cancelled context end the stream with the right error, and the SDK prints
// nothing to the standard logger (that would land on the terminal).
func TestGeminiTransport(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)

	release := make(chan struct{})
	f, srv := newFakeGemini(t,
		geminiReply{chunks: []string{gchunk(`{"text": "hi"}`, "STOP", "")}},
		geminiReply{chunks: []string{gchunk(`{"text": "par"}`, "", "")}, hangup: true},
		geminiReply{chunks: []string{gchunk(`{"text": "par"}`, "", "")}, waitFor: release},
	)
	defer close(release)
	req := Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}
	if _, err := drain(t, geminiFor(t, srv.URL+"/v1beta", geminiKey), req); err != nil || f.paths[0] != "/v1beta/models/gemini-test:streamGenerateContent" {
		t.Errorf("base_url with version: %v %v", err, f.paths)
	}
	ds, err := drain(t, geminiFor(t, srv.URL, geminiKey), req)
	if len(ds) != 1 || ds[0].Text != "par" || !IsTransient(err) {
		t.Errorf("hang-up: %+v %v", ds, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := geminiFor(t, srv.URL, geminiKey).Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := st.Next(); err != nil || d.Text != "par" {
		t.Fatalf("first delta %+v %v", d, err)
	}
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := st.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
	st.Close()
	if logged.Len() > 0 {
		t.Errorf("the SDK logged: %s", logged.String())
	}
}

// TestGeminiConfigured: kind gemini in a config file routes to the API at base_url, and
// --provider gemini works without any configuration.
func TestGeminiConfigured(t *testing.T) {
	f, srv := newFakeGemini(t, geminiReply{chunks: []string{gchunk(`{"text": "hi"}`, "STOP", "")}})
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	cfg := "providers:\n  g: {kind: gemini, base_url: " + srv.URL + "}\nmodels:\n  default: {provider: g, model: gemini-test}\n"
	if err := os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(ws, "")
	if err != nil {
		t.Fatal(err)
	}
	r := NewRouter(c, nil, func(k string) string { return geminiKey[k] })
	p, model, err := r.Resolve("default")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, p, Request{Model: model, Messages: []Message{{Role: RoleUser, Text: "hi"}}}); err != nil || f.paths[0] != "/v1beta/models/gemini-test:streamGenerateContent" {
		t.Errorf("routed: %v %v", err, f.paths)
	}
	forced := NewRouter(Config{}, nil, func(k string) string { return geminiKey[k] })
	if err := forced.Force("gemini"); err != nil {
		t.Errorf("--provider gemini: %v", err)
	}
}
