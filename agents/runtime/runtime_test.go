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

type realClock struct{}

func (realClock) Now() time.Time  { return time.Now() }
func (realClock) Simulated() bool { return false }
func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestLoopOverOpenAI runs the whole loop against a server speaking the Chat Completions SSE
// format: turn 1 calls read_file (allowed) and write_file (denied in plan mode), turn 2 sees
// both results and ends with a capsule; a 429 in between is retried.
func TestLoopOverOpenAI(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n"), 0o644)
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies = append(bodies, b)
		n := len(bodies)
		mu.Unlock()
		send := func(chunks ...string) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, c := range chunks {
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", c[0:strings.Index(c, "|")], c[strings.Index(c, "|")+1:])
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
		switch n {
		case 1:
			send(`{"content":"Reading."}|null`,
				`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}}]}|null`,
				`{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"b.go\",\"content\":\"x\"}"}}]}|null`,
				`{}|"tool_calls"`)
		case 2:
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"message":"rate limited"}}`)
		default:
			send("{\"content\":\"Done.\\n```json\\n{\\\"summary\\\": \\\"read a.go\\\", \\\"confidence\\\": 0.7}\\n```\"}|\"stop\"")
		}
	}))
	defer srv.Close()
	prov, _ := provider.NewOpenAI(provider.OpenAIConfig{BaseURL: srv.URL, Model: "m"})
	sb, _ := tools.New(ws, tools.Options{})
	var events []session.Data
	def := &agents.Definition{Name: "analyzer"}
	res := Run(context.Background(), Config{
		Agent: def, AgentType: "analyzer", Provider: prov, Sandbox: sb, System: "sys", Task: "read a.go",
		Policy: agents.Policy{Mode: agents.ModePlan, Tools: []string{"read_file", "write_file"}},
		Clock:  realClock{}, Emit: func(d session.Data) error { events = append(events, d); return nil },
		Backoff: func(int) time.Duration { return time.Millisecond },
	})
	if res.Err != nil || res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != "read a.go" || res.ToolCalls != 2 {
		t.Fatalf("result %+v err %v", res, res.Err)
	}
	if len(res.Capsule.PolicyNotes) != 1 || !strings.Contains(res.Capsule.PolicyNotes[0], "write_file") {
		t.Errorf("policy notes %v", res.Capsule.PolicyNotes)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.go")); err == nil {
		t.Errorf("a denied write happened")
	}
	var kinds []string
	retried := false
	for _, e := range events {
		switch d := e.(type) {
		case session.TranscriptEvent:
			kinds = append(kinds, d.EventType)
		case session.SubagentError:
			retried = d.Retrying() && d.Retryable && d.Attempt == 1
		}
	}
	got := strings.Join(kinds, ",")
	if got != "token,tool_call,tool_result,tool_call,policy_denied,tool_result,error,token" || !retried {
		t.Errorf("events %s, retried %v", got, retried)
	}
	// Turn 3 (after the retry) carried both tool results back to the model.
	msgs, _ := json.Marshal(bodies[2]["messages"])
	if !strings.Contains(string(msgs), `"tool_call_id":"c1"`) || !strings.Contains(string(msgs), "package a") || !strings.Contains(string(msgs), "denied") {
		t.Errorf("turn 3 messages: %s", msgs)
	}
	if res.Tokens.Input != 0 && res.Tokens.Output == 0 {
		t.Errorf("tokens %+v", res.Tokens)
	}
}
