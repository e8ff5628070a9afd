package runners

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents/provider"
)

// An ACP agent's loopback relay: requests under its token on a model endpoint of a relayed API
// reach the session as the route's provider of that API, without the placeholder key (header
// or Gemini's key parameter); anything else is answered on the runner and never sent; more
// than the session's limit of calls at once wait for a slot instead of failing.
func TestModelRelay(t *testing.T) {
	url := startNATS(t)
	key := newKey(t)
	c, err := NewClient(context.Background(), dial(t, url), key)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls []ModelCall
	var inFlight, most atomic.Int32
	release := make(chan struct{})
	stop, err := c.ServeModels("JOBR", func(ctx context.Context, call ModelCall) (*http.Response, error) {
		mu.Lock()
		calls = append(calls, call)
		mu.Unlock()
		if strings.Contains(string(call.Body), "hold") {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader("data: answer to " + call.Provider + "\n\n"))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rt := &ModelTransport{NC: dial(t, url), Job: "JOBR", Signer: pub(t, key), Wait: -1}
	r, err := StartModelRelay(rt, &provider.JobRoute{Providers: map[string]provider.JobProvider{
		"laptop": {Kind: "anthropic"}, "g": {Kind: "gemini"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !strings.HasPrefix(r.URL, "http://127.0.0.1:") {
		t.Fatalf("the relay listens at %s, not on loopback", r.URL)
	}
	post := func(method, u, body string, h http.Header) (int, string) {
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		for k, v := range h {
			req.Header[k] = v
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	code, body := post("POST", r.URL+"/v1/messages?beta=true", "{}", http.Header{"X-Api-Key": {RelayKey}, "Anthropic-Version": {"2023-06-01"}})
	if code != 200 || body != "data: answer to laptop\n\n" {
		t.Fatalf("Anthropic's messages: %d %q", code, body)
	}
	code, body = post("POST", r.URL+"/v1beta/models/m:streamGenerateContent?alt=sse&key="+RelayKey, "{}", http.Header{"X-Goog-Api-Key": {RelayKey}})
	if code != 200 || body != "data: answer to g\n\n" {
		t.Fatalf("Gemini's streamGenerateContent: %d %q", code, body)
	}
	mu.Lock()
	got := append([]ModelCall(nil), calls...)
	mu.Unlock()
	if len(got) != 2 || got[0].Provider != "laptop" || got[0].Path != "v1/messages?beta=true" || got[0].Header.Get("X-Api-Key") != "" ||
		got[0].Header.Get("Anthropic-Version") != "2023-06-01" || got[1].Provider != "g" ||
		got[1].Path != "v1beta/models/m:streamGenerateContent?alt=sse" || got[1].Header.Get("X-Goog-Api-Key") != "" {
		t.Fatalf("the session got %+v", got)
	}
	root := strings.TrimSuffix(r.URL, r.URL[strings.LastIndex(r.URL, "/"):])
	for _, tc := range []struct {
		method, url string
		code        int
	}{
		{"POST", root + "/v1/messages", 404},                     // no token: another local process
		{"POST", root + "/0123456789abcdef/v1/messages", 404},    // a wrong one
		{"GET", r.URL + "/v1/messages", 405},                     // not a model call
		{"POST", r.URL + "/v1/models", 404},                      // not a model endpoint
		{"POST", r.URL + "/v1/responses", 404},                   // OpenAI's: no provider of it in the route
		{"POST", r.URL + "/v1beta/models/m:listThings", 404},     // not a model endpoint of Gemini's
		{"POST", r.URL + "/v1/messages/../../admin", 404},        // dot segments: not a model path
		{"POST", r.URL + "/v1/messages/count_tokens/extra", 404}, // not the endpoint
	} {
		if code, body := post(tc.method, tc.url, "{}", nil); code != tc.code {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.url, code, body, tc.code)
		}
	}
	mu.Lock()
	n := len(calls)
	mu.Unlock()
	if n != 2 {
		t.Fatalf("refused requests reached the session: %d calls", n)
	}

	// 20 calls at once: 16 are made, 4 wait on the runner, all succeed.
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _ := post("POST", r.URL+"/v1/messages", `{"hold":true}`, nil); code != 200 {
				failed.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for inFlight.Load() < maxModelCalls && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	close(release)
	wg.Wait()
	if most.Load() != maxModelCalls || failed.Load() != 0 {
		t.Fatalf("at most %d calls at once (want %d), %d failed", most.Load(), maxModelCalls, failed.Load())
	}

	// Closed with the job: nothing listens any more.
	r.Close()
	if _, err := http.Post(r.URL+"/v1/messages", "application/json", strings.NewReader("{}")); err == nil {
		t.Fatal("the relay still answers after Close")
	}
}
