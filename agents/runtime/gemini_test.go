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

// TestLoopOverGemini runs the loop against a server speaking the Gemini API's streaming format
// (data: events ended by CRLF CRLF): the first request is refused as overloaded (503
// UNAVAILABLE, retried by the loop, not by the SDK); then the model thinks and calls read_file,
// the call signed; the next request must carry the call back with its thought signature and
// the result as a functionResponse named read_file, as Gemini 3 requires, and gets the capsule.
func TestLoopOverGemini(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n"), 0o644)
	const sig = "c2lnbmVkIGNhbGw=" // base64, as thoughtSignature is on the wire
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies = append(bodies, b)
		n := len(bodies)
		mu.Unlock()
		if r.URL.Path != "/v1beta/models/gemini-test:streamGenerateContent" || r.URL.RawQuery != "alt=sse" || r.Header.Get("x-goog-api-key") != "AIza-k" {
			http.Error(w, `{"error":{"code":404,"message":"unexpected request","status":"NOT_FOUND"}}`, 404)
			return
		}
		fail := func(code int, status, msg string) {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"status":%q}}`, code, msg, status)
		}
		send := func(chunks ...string) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, c := range chunks {
				fmt.Fprintf(w, "data: %s\r\n\r\n", c)
			}
		}
		switch n {
		case 1:
			fail(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
		case 2:
			send(`{"candidates": [{"content": {"parts": [{"text": "need a.go","thought": true}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 10,"totalTokenCount": 14,"thoughtsTokenCount": 4}}`,
				`{"candidates": [{"content": {"parts": [{"functionCall": {"name": "read_file","args": {"path": "a.go"}},"thoughtSignature": "`+sig+`"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 10,"candidatesTokenCount": 8,"totalTokenCount": 22,"thoughtsTokenCount": 4}}`)
		default:
			contents, _ := json.Marshal(b["contents"])
			switch {
			case !strings.Contains(string(contents), `{"functionCall":{"args":{"path":"a.go"},"name":"read_file"},"thoughtSignature":"`+sig+`"}`):
				fail(400, "INVALID_ARGUMENT", "Function call `read_file` in the `2.` content block is missing a `thought_signature`.")
			case !strings.Contains(string(contents), `{"functionResponse":{"name":"read_file","response":{"output":"`):
				fail(400, "INVALID_ARGUMENT", "Please ensure that function response turn comes immediately after a function call turn.")
			default:
				send(`{"candidates": [{"content": {"parts": [{"text": "Done.\n`+"```json\\n"+`{\"summary\": \"read a.go\", \"confidence\": 0.8}\n`+"```"+`"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 30,"candidatesTokenCount": 10,"totalTokenCount": 40}}`,
					`{"candidates": [{"content": {"parts": [{"text": "","thoughtSignature": "dGV4dA=="}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 30,"candidatesTokenCount": 15,"totalTokenCount": 45}}`)
			}
		}
	}))
	defer srv.Close()
	prov, err := provider.NewGemini(provider.GeminiConfig{BaseURL: srv.URL, Model: "gemini-test", Getenv: func(k string) string {
		if k == "GEMINI_API_KEY" {
			return "AIza-k"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := tools.New(ws, tools.Options{})
	var kinds []string
	var errs []session.SubagentError
	res := Run(context.Background(), Config{
		Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Sandbox: sb, System: "sys", Task: "read a.go",
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
	if res.Err != nil || res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != "read a.go" || res.ToolCalls != 1 {
		t.Fatalf("result %+v err %v", res, res.Err)
	}
	if res.Tokens.Input != 40 || res.Tokens.Output != 27 {
		t.Errorf("tokens %+v", res.Tokens)
	}
	if got := strings.Join(kinds, ","); got != "error,thinking,tool_call,tool_result,token" {
		t.Errorf("events %s", got)
	}
	if len(errs) != 1 || !errs[0].Retryable || !strings.Contains(errs[0].Error, "UNAVAILABLE: The model is overloaded") {
		t.Errorf("subagent errors %+v", errs)
	}
	if len(bodies) != 3 {
		t.Fatalf("%d requests", len(bodies))
	}
	contents, _ := json.Marshal(bodies[2]["contents"])
	if !strings.Contains(string(contents), `"response":{"output":"`) || !strings.Contains(string(contents), "package a") {
		t.Errorf("turn 2 lacks the result: %s", contents)
	}
}
