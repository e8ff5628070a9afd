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

// TestLoopOverAnthropic runs the loop against a server speaking the Messages API SSE format:
// turn 1 thinks (signed) and calls read_file; turn 2 must echo the signed thinking and carry
// the tool result, then ends with a capsule.
func TestLoopOverAnthropic(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n"), 0o644)
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		bodies = append(bodies, b)
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(typ, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data) }
		ev("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`)
		if len(bodies) == 1 {
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`)
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"need a.go"}}`)
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}`)
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
			ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}`)
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}`)
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.go\"}"}}`)
			ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}`)
		} else {
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done.\n`+"```json\\n"+`{\"summary\": \"read a.go\", \"confidence\": 0.8}\n`+"```"+`"}}`)
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}`)
		}
		ev("message_stop", `{"type":"message_stop"}`)
	}))
	defer srv.Close()
	prov, err := provider.NewAnthropic(provider.AnthropicConfig{BaseURL: srv.URL, Getenv: func(string) string { return "k" }})
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := tools.New(ws, tools.Options{})
	var kinds []string
	res := Run(context.Background(), Config{
		Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Sandbox: sb, System: "sys", Task: "read a.go",
		Policy: agents.Policy{Mode: agents.ModePlan, Tools: []string{"read_file"}},
		Clock:  realClock{}, Emit: func(d session.Data) error {
			if e, ok := d.(session.TranscriptEvent); ok {
				kinds = append(kinds, e.EventType)
			}
			return nil
		},
	})
	if res.Err != nil || res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != "read a.go" || res.ToolCalls != 1 {
		t.Fatalf("result %+v err %v", res, res.Err)
	}
	if res.Tokens.Input != 20 || res.Tokens.Output != 35 {
		t.Errorf("tokens %+v", res.Tokens)
	}
	if got := strings.Join(kinds, ","); got != "thinking,tool_call,tool_result,token" {
		t.Errorf("events %s", got)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	msgs, _ := json.Marshal(bodies[1]["messages"])
	for _, want := range []string{`"signature":"SIG"`, `"thinking":"need a.go"`, `"tool_use_id":"toolu_1"`, "package a", `"input":{"path":"a.go"}`} {
		if !strings.Contains(string(msgs), want) {
			t.Errorf("turn 2 lacks %s: %s", want, msgs)
		}
	}
}

// stuckProvider streams nothing until the context ends, then fails with its error.
type stuckProvider struct{}

func (stuckProvider) Name() string { return "stuck" }
func (stuckProvider) Stream(ctx context.Context, _ provider.Request) (provider.Stream, error) {
	return stuckStream{ctx}, nil
}

type stuckStream struct{ ctx context.Context }

func (s stuckStream) Next() (provider.Delta, error) {
	<-s.ctx.Done()
	return provider.Delta{}, s.ctx.Err()
}
func (stuckStream) Close() error { return nil }

// TestCancelWhileStreaming: cancelling a run whose model is silent ends it promptly under a
// real clock, whichever way the read-ahead goroutine sees the cancellation.
func TestCancelWhileStreaming(t *testing.T) {
	sb, _ := tools.New(t.TempDir(), tools.Options{})
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan Result, 1)
		go func() {
			done <- Run(ctx, Config{Agent: &agents.Definition{Name: "x"}, AgentType: "x", Provider: stuckProvider{}, Sandbox: sb,
				Task: "t", Clock: realClock{}, Emit: func(session.Data) error { return nil }})
		}()
		time.Sleep(time.Millisecond)
		cancel()
		select {
		case res := <-done:
			if res.Err == nil {
				t.Fatalf("run %d: a cancelled run reported no error: %+v", i, res)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("run %d: still running 5s after cancel", i)
		}
	}
}
