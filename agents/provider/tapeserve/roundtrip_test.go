package tapeserve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// wallClock is the runtime's clock on the wall clock.
type wallClock struct{}

func (wallClock) Now() time.Time  { return time.Now() }
func (wallClock) Simulated() bool { return false }
func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestTapesRoundTripThroughSummit runs tapes through summit's own adapters and agent loop
// pointed at the server: the tape's tool call runs for real in a workspace, its result goes
// back over the wire, and the tape's next turn comes back as the subagent's capsule. A denial
// by policy (run_shell_command is not among the agent's tools) takes the tape's on_denied
// branch over every API, OpenAI's included, where the "denied: " text is the only sign.
func TestTapesRoundTripThroughSummit(t *testing.T) {
	srv := testServer(t, Options{})
	key := func(string) string { return "test-key" }
	adapters := map[string]func() (provider.Provider, error){
		"openai": func() (provider.Provider, error) {
			return provider.NewOpenAI(provider.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "gpt-test", KeyEnv: "K", Getenv: key})
		},
		"anthropic": func() (provider.Provider, error) {
			return provider.NewAnthropic(provider.AnthropicConfig{BaseURL: srv.URL, Getenv: key})
		},
		"gemini": func() (provider.Provider, error) {
			return provider.NewGemini(provider.GeminiConfig{BaseURL: srv.URL, Getenv: key})
		},
	}
	for name, mk := range adapters {
		for _, c := range []struct{ task, summary, result string }{
			{"Read a.go and say what it is.", "a.go is package a", "package a"},
			{"Run the tests.", "Not allowed to run the tests.", "denied: run_shell_command is not among this agent's tools"},
		} {
			t.Run(name+"/"+c.task, func(t *testing.T) {
				prov, err := mk()
				if err != nil {
					t.Fatal(err)
				}
				ws := t.TempDir()
				if err := os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				sb, err := tools.New(ws, tools.Options{})
				if err != nil {
					t.Fatal(err)
				}
				var mu sync.Mutex
				var results []string
				res := runtime.Run(context.Background(), runtime.Config{
					Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Sandbox: sb,
					System: "You are the analyzer.", Task: c.task, Clock: wallClock{},
					Policy: agents.Policy{Mode: agents.ModePlan, Tools: []string{"read_file"}},
					Emit: func(d session.Data) error {
						if te, ok := d.(session.TranscriptEvent); ok && te.EventType == session.TranscriptToolResult {
							mu.Lock()
							results = append(results, te.Result)
							mu.Unlock()
						}
						return nil
					},
				})
				if res.Err != nil || res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != c.summary || res.ToolCalls != 1 {
					t.Fatalf("outcome %s, err %v, capsule %+v, %d tool calls", res.Outcome, res.Err, res.Capsule, res.ToolCalls)
				}
				if len(results) != 1 || !strings.Contains(results[0], c.result) {
					t.Errorf("tool results %q, want one with %q", results, c.result)
				}
				if res.Tokens.Input <= 0 || res.Tokens.Output <= 0 {
					t.Errorf("tokens %+v", res.Tokens)
				}
			})
		}
	}
}
