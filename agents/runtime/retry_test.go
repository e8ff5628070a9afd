package runtime_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/live"
)

// TestRetryAfterIsHonoured runs the loop on the session's simulated clock against a server
// that rate-limits for 20 s of that clock and says so in its headers; it refuses every request
// before the 20 s are up, so the old retries at +0.5 s and +1.5 s failed the subagent. The
// wait costs no wall time. With less than 20 s left before the deadline the loop does not
// wait at all and says why.
func TestRetryAfterIsHonoured(t *testing.T) {
	final, err := os.ReadFile(filepath.Join("..", "provider", "testdata", "streams", "ollama_final.sse"))
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]map[string]string{
		"Retry-After":                {"Retry-After": "20"},
		"retry-after-ms":             {"retry-after-ms": "20000"},
		"x-ratelimit-reset-requests": {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20s", "x-ratelimit-remaining-tokens": "39000", "x-ratelimit-reset-tokens": "2ms"},
	}
	for name, hdr := range headers {
		for _, left := range []time.Duration{5 * time.Minute, 10 * time.Second} {
			t.Run(fmt.Sprintf("%s/%s left", name, left), func(t *testing.T) {
				start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
				clock := live.NewSimClock(start)
				var mu sync.Mutex
				var limitedAt time.Time
				var requests atomic.Int32
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					requests.Add(1)
					mu.Lock()
					now := clock.Now()
					if limitedAt.IsZero() {
						limitedAt = now
					}
					limited := now.Before(limitedAt.Add(20 * time.Second))
					mu.Unlock()
					if limited {
						for k, v := range hdr {
							w.Header().Set(k, v)
						}
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusTooManyRequests)
						fmt.Fprint(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					w.Write(final)
				}))
				defer srv.Close()
				prov, _ := provider.NewOpenAI(provider.OpenAIConfig{Name: "openai", BaseURL: srv.URL, Model: "gpt-4.1"})
				sb, _ := tools.New(t.TempDir(), tools.Options{})
				var errs []session.SubagentError
				res := runtime.Run(context.Background(), runtime.Config{
					Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Sandbox: sb, Task: "do it",
					Policy: agents.Policy{Mode: agents.ModePlan}, Clock: clock, Deadline: start.Add(left),
					Emit: func(d session.Data) error {
						if se, ok := d.(session.SubagentError); ok {
							errs = append(errs, se)
						}
						return nil
					},
				})
				elapsed := clock.Now().Sub(start)
				clock.Done()
				if left > 20*time.Second {
					if res.Outcome != session.OutcomeSuccess || requests.Load() != 2 || len(errs) != 1 || !errs[0].Retrying() ||
						!strings.Contains(errs[0].Error, "retrying in 20s, as the server asked") {
						t.Fatalf("outcome %s (%v), %d requests, errors %+v", res.Outcome, res.Err, requests.Load(), errs)
					}
					if elapsed < 20*time.Second || elapsed > 21*time.Second {
						t.Errorf("the retry came after %s of session time", elapsed)
					}
					return
				}
				if res.Outcome != session.OutcomeFailure || requests.Load() != 1 || len(errs) != 1 || errs[0].Retrying() || !errs[0].Retryable ||
					!strings.Contains(errs[0].Error, "the server asks to wait 20s before retrying, and the subagent's time runs out in 10s") {
					t.Fatalf("outcome %s (%v), %d requests, errors %+v", res.Outcome, res.Err, requests.Load(), errs)
				}
				if elapsed > time.Second {
					t.Errorf("waited %s for a retry that could not come in time", elapsed)
				}
			})
		}
	}
}

// TestRetryBackoffWithoutServerWait: a 503 without Retry-After is retried after the backoff,
// and the record says so.
func TestRetryBackoffWithoutServerWait(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := live.NewSimClock(start)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`)
	}))
	defer srv.Close()
	prov, _ := provider.NewOpenAI(provider.OpenAIConfig{Name: "openai", BaseURL: srv.URL, Model: "gpt-4.1"})
	sb, _ := tools.New(t.TempDir(), tools.Options{})
	var texts []string
	res := runtime.Run(context.Background(), runtime.Config{
		Agent: &agents.Definition{Name: "analyzer"}, AgentType: "analyzer", Provider: prov, Sandbox: sb, Task: "do it",
		Policy: agents.Policy{Mode: agents.ModePlan}, Clock: clock, Deadline: start.Add(time.Minute),
		Emit: func(d session.Data) error {
			if se, ok := d.(session.SubagentError); ok {
				texts = append(texts, se.Error)
			}
			return nil
		},
	})
	elapsed := clock.Now().Sub(start)
	clock.Done()
	if res.Outcome != session.OutcomeFailure || requests.Load() != 3 || len(texts) != 3 ||
		!strings.HasSuffix(texts[0], "(attempt 1; retrying in 500ms)") || !strings.HasSuffix(texts[1], "(attempt 2; retrying in 1s)") ||
		!strings.HasSuffix(texts[2], "overloaded, please try again later") {
		t.Fatalf("outcome %s, %d requests, errors %q", res.Outcome, requests.Load(), texts)
	}
	if elapsed != 1500*time.Millisecond {
		t.Errorf("retries took %s of session time", elapsed)
	}
}
