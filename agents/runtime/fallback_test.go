package runtime_test

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
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/live"
)

// geminiFinal is a Gemini streamGenerateContent answer as the API streams it (data: events
// ended by CRLF CRLF): the capsule, then the usage.
const geminiFinal = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Done.\\n```json\\n{\\\"summary\\\": \\\"ran on the fallback\\\", \\\"confidence\\\": 0.8}\\n```\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 40,\"candidatesTokenCount\": 20,\"totalTokenCount\": 60},\"modelVersion\": \"gemini-2.5-pro\",\"responseId\": \"r1\"}\r\n\r\n" +
	"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 40,\"candidatesTokenCount\": 20,\"totalTokenCount\": 60},\"modelVersion\": \"gemini-2.5-pro\",\"responseId\": \"r1\"}\r\n\r\n"

// TestOverloadMovesToTheFallback: a model that stays out of capacity after its retries (the
// real error bodies of agents/provider/testdata/errors, as each service sends them: Gemini's
// 503 UNAVAILABLE and 429 RESOURCE_EXHAUSTED with its RetryInfo, Anthropic's 529
// overloaded_error and its overloaded error event mid-stream, OpenAI's 503 server_error and a
// 429 whose wait outlasts the subagent) hands the run to the next model of its chain — a
// configured one, or the built-in Gemini 3 → 2.5 one — which answers; the switch is recorded
// with why. Without a fallback the same errors fail the subagent as before. The loop runs on
// the session's simulated clock, so the waits cost no wall time.
func TestOverloadMovesToTheFallback(t *testing.T) {
	read := func(dir, name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "provider", "testdata", dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// headers reads a body's *.headers file (name: value lines), the headers the service sent.
	headers := func(name string) map[string]string {
		h := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(read("errors", name))), "\n") {
			k, v, _ := strings.Cut(line, ": ")
			h[k] = v
		}
		return h
	}
	anthropicFinal, openaiFinal := read("streams", "anthropic_final.sse"), read("streams", "ollama_final.sse")
	type reply struct {
		status int
		header map[string]string
		body   []byte
	}
	cases := []struct {
		name, kind, first string
		fallbacks         []string // the route's; none = the built-in chain
		fail              reply    // what the first model answers, every time
		ok                []byte   // what the fallback answers
		left              time.Duration
		second            string // the model that takes over
		requests          string // the models asked, in order
		why               string // in the move's ModelRouted.Why
		lastErr           string // the end of the last SubagentError
		final             bool   // a hard error: no retry, no fallback, the subagent fails
	}{
		{name: "gemini 503 UNAVAILABLE, built-in chain", kind: "gemini", first: "gemini-3-pro-preview",
			fail: reply{503, nil, read("errors", "gemini_503_unavailable.json")}, ok: []byte(geminiFinal), left: 5 * time.Minute,
			second: "gemini-2.5-pro", requests: "gemini-3-pro-preview ×3, gemini-2.5-pro",
			why:     "overloaded (HTTP 503) after 3 attempts: gemini: HTTP 503: UNAVAILABLE: The model is overloaded. Please try again later.",
			lastErr: "(attempt 3; gemini/gemini-2.5-pro takes over, the next model of its fallback chain)"},
		{name: "gemini 3 flash 503 high demand, built-in chain to 2.5 flash", kind: "gemini", first: "gemini-3-flash",
			fail: reply{503, nil, read("errors", "gemini_503_high_demand.json")}, ok: []byte(geminiFinal), left: 5 * time.Minute,
			second: "gemini-2.5-flash", requests: "gemini-3-flash ×3, gemini-2.5-flash",
			why:     "unavailable (HTTP 503) after 3 attempts: gemini: HTTP 503: UNAVAILABLE: This model is currently experiencing high demand.",
			lastErr: "(attempt 3; gemini/gemini-2.5-flash takes over, the next model of its fallback chain)"},
		{name: "gemini 429 RESOURCE_EXHAUSTED with RetryInfo", kind: "gemini", first: "gemini-3-pro-preview",
			fail: reply{429, nil, read("errors", "gemini_429_resource_exhausted.json")}, ok: []byte(geminiFinal), left: 5 * time.Minute,
			second: "gemini-2.5-pro", requests: "gemini-3-pro-preview ×3, gemini-2.5-pro",
			why:     "out of quota (HTTP 429) after 3 attempts: gemini: HTTP 429: RESOURCE_EXHAUSTED: You exceeded your current quota",
			lastErr: "(attempt 3; gemini/gemini-2.5-pro takes over, the next model of its fallback chain)"},
		{name: "gemini 429 whose retryDelay outlasts the subagent", kind: "gemini", first: "gemini-3-pro-preview",
			fail: reply{429, nil, read("errors", "gemini_429_resource_exhausted.json")}, ok: []byte(geminiFinal), left: 20 * time.Second,
			second: "gemini-2.5-pro", requests: "gemini-3-pro-preview ×1, gemini-2.5-pro",
			why:     "out of quota (HTTP 429) after 1 attempt (the server asks to wait 26s before retrying, and the subagent's time runs out in 20s)",
			lastErr: "not retried: the server asks to wait 26s before retrying, and the subagent's time runs out in 20s; gemini/gemini-2.5-pro takes over, the next model of its fallback chain)"},
		{name: "anthropic 529 overloaded_error", kind: "anthropic", first: "claude-opus-4-1", fallbacks: []string{"claude-sonnet-4-5"},
			fail: reply{529, headers("anthropic_529_overloaded.headers"), read("errors", "anthropic_529_overloaded.json")}, ok: anthropicFinal, left: 5 * time.Minute,
			second: "claude-sonnet-4-5", requests: "claude-opus-4-1 ×3, claude-sonnet-4-5",
			why:     "overloaded (HTTP 529) after 3 attempts: anthropic: HTTP 529: overloaded_error: Overloaded",
			lastErr: "(attempt 3; anthropic/claude-sonnet-4-5 takes over, the next model of its fallback chain)"},
		{name: "anthropic overloaded mid-stream", kind: "anthropic", first: "claude-opus-4-1", fallbacks: []string{"claude-sonnet-4-5"},
			fail: reply{200, nil, read("streams", "anthropic_overloaded_midstream.sse")}, ok: anthropicFinal, left: 5 * time.Minute,
			second: "claude-sonnet-4-5", requests: "claude-opus-4-1 ×3, claude-sonnet-4-5",
			why: "overloaded after 3 attempts: anthropic: overloaded_error: Overloaded"},
		{name: "openai 503 server_error", kind: "openai", first: "gpt-5", fallbacks: []string{"gpt-5-mini"},
			fail: reply{503, nil, read("errors", "openai_503_overloaded.json")}, ok: openaiFinal, left: 5 * time.Minute,
			second: "gpt-5-mini", requests: "gpt-5 ×3, gpt-5-mini",
			why: "overloaded (HTTP 503) after 3 attempts: openai: HTTP 503: server_error: That model is currently overloaded with other requests."},
		{name: "openai 429 beyond the deadline", kind: "openai", first: "gpt-5", fallbacks: []string{"gpt-5-mini"},
			fail: reply{429, map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1m40s"}, read("errors", "openai_429_rate_limit.json")},
			ok:   openaiFinal, left: time.Minute, second: "gpt-5-mini", requests: "gpt-5 ×1, gpt-5-mini",
			why: "rate limited (HTTP 429) after 1 attempt (the server asks to wait 1m40s before retrying, and the subagent's time runs out in 1m0s): openai: HTTP 429: tokens: Rate limit reached for o4-mini"},
		// Billing, not load: the account has no credit, so neither a retry nor another model
		// of the same account helps; the user must fix it.
		{name: "openai 429 insufficient_quota is final", kind: "openai", first: "gpt-5", fallbacks: []string{"gpt-5-mini"},
			fail: reply{429, nil, read("errors", "openai_429_insufficient_quota.json")}, ok: openaiFinal, left: 5 * time.Minute,
			requests: "gpt-5 ×1", final: true,
			lastErr: "openai: HTTP 429: insufficient_quota: You exceeded your current quota, please check your plan and billing details."},
	}
	for _, c := range cases {
		for _, withFallback := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fallback %v", c.name, withFallback), func(t *testing.T) {
				route := provider.Route{Provider: c.kind, Model: c.first, Fallbacks: c.fallbacks}
				if !withFallback {
					route.Fallbacks = nil
					if c.kind == "gemini" {
						route.Model = strings.Replace(c.first, "gemini-3", "gemini-2.5", 1) // no built-in chain
					}
				}
				var mu sync.Mutex
				var asked []string
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					var body struct {
						Model string `json:"model"`
					}
					json.NewDecoder(r.Body).Decode(&body)
					model := body.Model
					if c.kind == "gemini" { // models/<name>:streamGenerateContent
						model = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":streamGenerateContent")
					}
					mu.Lock()
					asked = append(asked, model)
					mu.Unlock()
					reply := c.fail
					if model != route.Model {
						reply = struct {
							status int
							header map[string]string
							body   []byte
						}{200, nil, c.ok}
					}
					for k, v := range reply.header {
						w.Header().Set(k, v)
					}
					if reply.status == 200 {
						w.Header().Set("Content-Type", "text/event-stream")
					} else {
						w.Header().Set("Content-Type", "application/json; charset=UTF-8")
					}
					w.WriteHeader(reply.status)
					w.Write(reply.body)
				}))
				defer srv.Close()
				base := srv.URL
				if c.kind == "openai" {
					base += "/v1"
				}
				r := provider.NewRouter(provider.Config{
					Providers:       map[string]provider.ProviderConfig{c.kind: {Kind: c.kind, BaseURL: base}},
					DefaultProvider: c.kind, Models: map[string]provider.Route{"default": route},
				}, nil, func(string) string { return "k-test" })
				prov, model, err := r.Resolve("default")
				if err != nil {
					t.Fatal(err)
				}
				start := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
				clock := live.NewSimClock(start)
				var events []session.Data
				emit := func(d session.Data) error { mu.Lock(); events = append(events, d); mu.Unlock(); return nil }
				ctx := provider.WithSwitchReporter(context.Background(), func(from, to provider.Link, cause error) {
					emit(live.SwitchEvent(from, to, cause)) // what the session records
				})
				sb, _ := tools.New(t.TempDir(), tools.Options{})
				res := runtime.Run(ctx, runtime.Config{
					Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Model: model, Sandbox: sb, Task: "do it",
					Policy: agents.Policy{Mode: agents.ModePlan}, Clock: clock, Deadline: start.Add(c.left), Emit: emit,
				})
				clock.Done()
				var switches []session.ModelRouted
				var errs []session.SubagentError
				var turns []string
				for _, d := range events {
					switch d := d.(type) {
					case session.ModelSwitched:
						t.Errorf("an overload move recorded as ModelSwitched: %+v", d)
					case session.ModelRouted:
						switches = append(switches, d)
					case session.SubagentError:
						errs = append(errs, d)
					case session.ModelTurn:
						turns = append(turns, fmt.Sprintf("%d/%d %s %s", d.Turn, d.Attempt, d.Model, d.Stop))
					}
				}
				if !withFallback || c.final {
					if res.Outcome != session.OutcomeFailure || len(switches) != 0 || len(errs) == 0 || errs[len(errs)-1].Retrying() {
						t.Fatalf("no fallback: outcome %s, switches %+v, errors %+v", res.Outcome, switches, errs)
					}
					if c.final && (strings.Join(asked, ",") != c.first || len(errs) != 1 || !strings.HasPrefix(errs[0].Error, c.lastErr)) {
						t.Errorf("a hard error: asked %q, errors %+v", asked, errs)
					}
					return
				}
				n := strings.Count(c.requests, "×3")*3 + strings.Count(c.requests, "×1")
				want := strings.TrimSuffix(strings.Repeat(c.first+",", n), ",") + "," + c.second
				if got := strings.Join(asked, ","); got != want {
					t.Errorf("models asked %s, want %s (%s)", got, want, c.requests)
				}
				if res.Outcome != session.OutcomeSuccess || res.Capsule == nil {
					t.Fatalf("outcome %s (%v), errors %+v", res.Outcome, res.Err, errs)
				}
				if len(switches) != 1 || switches[0].From != c.kind+"/"+c.first || switches[0].Provider != c.kind || switches[0].Model != c.second ||
					!strings.HasPrefix(switches[0].Why, c.why) {
					t.Fatalf("switches %+v\nwant reason %q", switches, c.why)
				}
				last := errs[len(errs)-1]
				if len(errs) != n || !last.Retrying() || !strings.HasSuffix(last.Error, c.lastErr) {
					t.Errorf("errors %+v", errs)
				}
				// The model calls after the switch are the fallback's, counted from attempt 1.
				if got := turns[len(turns)-1]; got != "1/1 "+c.second+" end_turn" {
					t.Errorf("model turns %q", turns)
				}
			})
		}
	}
}
