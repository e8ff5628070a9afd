package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Forward makes a runner's call on the session's endpoint with the session's key and the
// provider's extras; anything but a model endpoint, or a provider the session lacks, is refused.
func TestForward(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.String()+" auth="+r.Header.Get("Authorization")+" x="+r.Header.Get("X-Title")+" v="+r.Header.Get("Anthropic-Version")+" key="+r.Header.Get("X-Api-Key"))
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	env := map[string]string{"K": "sk-laptop", "A": "sk-ant"}
	r := NewRouter(Config{Providers: map[string]ProviderConfig{
		"laptop": {Kind: "openai", BaseURL: srv.URL + "/v1", KeyEnv: "K", Headers: map[string]string{"X-Title": "summit"}},
		"claude": {Kind: "anthropic", BaseURL: srv.URL, KeyEnv: "A"},
		"tapes":  {Kind: "script"},
	}}, nil, func(k string) string { return env[k] })
	ctx := context.Background()
	h := http.Header{"Anthropic-Version": {"2023-06-01"}}
	for _, c := range []struct{ prov, path string }{{"laptop", "chat/completions"}, {"claude", "v1/messages?beta=true"}} {
		res, err := r.Forward(ctx, c.prov, "POST", c.path, h, []byte("{}"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	want := []string{
		"POST /v1/chat/completions auth=Bearer sk-laptop x=summit v=2023-06-01 key=",
		"POST /v1/messages?beta=true auth= x= v=2023-06-01 key=sk-ant",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []struct{ prov, method, path, err string }{
		{"laptop", "POST", "files", "not a model call"},
		{"laptop", "GET", "chat/completions", "not a model call"},
		{"laptop", "POST", "../admin/chat/completions", "not a model call"},
		{"tapes", "POST", "chat/completions", "not configured"},
		{"nowhere", "POST", "chat/completions", "not configured"},
	} {
		if _, err := r.Forward(ctx, c.prov, c.method, c.path, nil, nil); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %s %s: %v, want %q", c.prov, c.method, c.path, err, c.err)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("a refused call reached the server: %v", seen)
	}
	// An unreachable endpoint is named by its host: a configured query value stays here.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	r2 := NewRouter(Config{Providers: map[string]ProviderConfig{
		"q": {Kind: "openai", BaseURL: closed.URL + "/v1", KeyEnv: "K", Query: map[string]string{"key": "$K"}},
	}}, nil, func(k string) string { return env[k] })
	if _, err := r2.Forward(ctx, "q", "POST", "chat/completions", nil, nil); err == nil || strings.Contains(err.Error(), "sk-laptop") {
		t.Fatalf("an unreachable endpoint: %v", err)
	}
	delete(env, "K")
	if _, err := r.Forward(ctx, "laptop", "POST", "chat/completions", nil, nil); err == nil || !strings.Contains(err.Error(), "no API key in the session") {
		t.Fatalf("no key: %v", err)
	}
}

// A JobRoute carries no endpoint or key, and routes on the runner as on the session.
func TestJobRouteRunnerConfig(t *testing.T) {
	budget := 2048
	r := NewRouter(Config{Providers: map[string]ProviderConfig{
		"laptop": {Kind: "openai", BaseURL: "https://secret.example/v1", KeyEnv: "K", Headers: map[string]string{"X-Key": "$K"}},
	}, Models: map[string]Route{
		"default": {Provider: "laptop", Model: "big", Fallbacks: []string{"small"}, Price: &Price{Input: 2, Output: 8}},
		"other":   {Provider: "laptop", Model: "small", ThinkingBudget: &budget},
	}}, nil, nil)
	res, err := r.Route("default")
	if err != nil {
		t.Fatal(err)
	}
	jr, err := r.JobRoute(res)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jr.RunnerConfig()
	if err != nil {
		t.Fatal(err)
	}
	if pc := cfg.Providers["laptop"]; pc.BaseURL != SessionBase("laptop") || pc.KeyEnv != SessionKeyEnv || len(pc.Headers) != 0 {
		t.Fatalf("runner's provider: %+v", pc)
	}
	rr, err := NewRouter(cfg, nil, nil).Route(JobModel)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Link != res.Link || len(rr.Fallbacks) != 1 || rr.Fallbacks[0] != (Link{"laptop", "small"}) ||
		rr.Prices[res.Link] != (Price{2, 8}) || rr.Params[Link{"laptop", "small"}].ThinkingBudget == nil {
		t.Fatalf("the runner routes %+v; the session %+v", rr, res)
	}
}

// An ACP agent's relay route names, for each API an ACP agent speaks, the provider of the
// session that serves it; the relay tells the API from the request's path.
func TestRelayRoute(t *testing.T) {
	r := NewRouter(Config{Providers: map[string]ProviderConfig{
		"laptop": {Kind: "anthropic", BaseURL: "http://x", KeyEnv: "K"},
		"zz-oai": {Kind: "openai", BaseURL: "http://y/v1"},
		"aa-oai": {Kind: "openai", BaseURL: "http://z/v1"},
	}}, nil, func(string) string { return "" })
	jr, err := r.RelayRoute()
	if err != nil || len(jr.Chain) != 0 || len(jr.Providers) != 3 || jr.Providers["laptop"].Kind != "anthropic" ||
		jr.Providers["aa-oai"].Kind != "openai" || jr.Providers["gemini"].Kind != "gemini" {
		t.Fatalf("relay route %+v, %v", jr, err)
	}
	if _, err := NewRouter(Config{}, nil, nil).RelayRoute(); err == nil {
		t.Fatal("a session on script tapes relays model calls")
	}
	for path, want := range map[string]string{
		"/v1/messages":                       "anthropic v1/messages",
		"v1/messages/count_tokens":           "anthropic v1/messages/count_tokens",
		"/v1/responses":                      "openai responses",
		"/v1/chat/completions":               "openai chat/completions",
		"/v1beta/models/g-2:generateContent": "gemini v1beta/models/g-2:generateContent",
		"/v1/models/g:streamGenerateContent": "gemini v1/models/g:streamGenerateContent",
		"/responses":                         "",
		"/v1/models":                         "",
		"/v1/messages/../x":                  "",
		"/api/chat":                          "", // Ollama's: no ACP agent speaks it
	} {
		kind, rest, ok := RelayPath(path)
		if got := strings.TrimSpace(kind + " " + rest); ok != (want != "") || got != want {
			t.Errorf("RelayPath(%q) = %q %v, want %q", path, got, ok, want)
		}
	}
}
