package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// captured is one request a test server saw.
type captured struct {
	path, query string
	header      http.Header
	body        map[string]any
}

func openaiDone(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// A provider's headers, query parameters, body fields and key header reach the server as the
// service needs them: Azure OpenAI's api-key header and api-version query (no bearer token),
// OpenRouter's attribution headers and provider preferences; a route's reasoning effort is
// sent as reasoning_effort.
func TestProviderExtras(t *testing.T) {
	var got []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		got = append(got, captured{r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-4o-deploy"}]}`)
			return
		}
		openaiDone(w)
	}))
	defer srv.Close()
	env := map[string]string{"AZ_KEY": "az-secret", "SITE": "https://summit.dev"}
	getenv := func(k string) string { return env[k] }
	c := Config{Providers: map[string]ProviderConfig{
		"azure": {Kind: "openai", BaseURL: srv.URL + "/openai/deployments/gpt-4o-deploy", KeyEnv: "AZ_KEY", KeyHeader: "api-key",
			Query: map[string]string{"api-version": "2024-10-21"}},
		"openrouter": {Kind: "openai", BaseURL: srv.URL + "/api/v1", Headers: map[string]string{"HTTP-Referer": "${SITE}", "X-Title": "summit"},
			Body: map[string]any{"provider": map[string]any{"order": []any{"anthropic", "openai"}, "allow_fallbacks": false}}},
	}, Models: map[string]Route{
		"default": {Provider: "azure", Model: "gpt-4o-deploy"},
		"deep":    {Provider: "openrouter", Model: "openai/o3", ReasoningEffort: "high"},
	}}
	r := NewRouter(c, nil, getenv)
	for _, m := range []string{"default", "deep"} {
		p, model, err := r.Resolve(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drain(t, p, Request{Model: model, Messages: []Message{{Role: RoleUser, Text: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	az := got[0]
	if az.path != "/openai/deployments/gpt-4o-deploy/chat/completions" || az.query != "api-version=2024-10-21" ||
		az.header.Get("api-key") != "az-secret" || az.header.Get("Authorization") != "" {
		t.Errorf("azure request: %s?%s api-key=%q authorization=%q", az.path, az.query, az.header.Get("api-key"), az.header.Get("Authorization"))
	}
	or := got[1]
	prov, _ := or.body["provider"].(map[string]any)
	if or.header.Get("HTTP-Referer") != "https://summit.dev" || or.header.Get("X-Title") != "summit" ||
		prov["allow_fallbacks"] != false || or.body["reasoning_effort"] != "high" || or.body["model"] != "openai/o3" || or.body["messages"] == nil {
		t.Errorf("openrouter request: headers %v body %v", or.header, or.body)
	}
	// doctor's model list goes through the same extras.
	list, err := ListModels(context.Background(), r.Info("azure"), getenv, r.HTTPClient("azure", nil))
	if err != nil || len(list) != 1 || got[2].header.Get("api-key") != "az-secret" || got[2].query != "api-version=2024-10-21" {
		t.Errorf("model list: %v %v %+v", list, err, got[len(got)-1])
	}
}

// A route's thinking budget overrides the provider's (Anthropic), and one below the API's
// minimum is refused before any request.
func TestRouteThinkingBudget(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&body)
		anthropicSSE(w, msgStart,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
			`{"type":"message_stop"}`)
	}))
	defer srv.Close()
	big, small := 16000, 100
	c := Config{Providers: map[string]ProviderConfig{"claude": {Kind: "anthropic", BaseURL: srv.URL, KeyEnv: "K", ThinkingBudget: 2048}},
		Models: map[string]Route{"deep": {Provider: "claude", Model: "claude-opus-4-1", ThinkingBudget: &big},
			"fast": {Provider: "claude", Model: "claude-haiku-4-5", ThinkingBudget: &small}}}
	r := NewRouter(c, nil, func(string) string { return "k" })
	p, model, _ := r.Resolve("deep")
	if _, err := drain(t, p, Request{Model: model, Messages: []Message{{Role: RoleUser, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if th, _ := body["thinking"].(map[string]any); th["budget_tokens"] != 16000.0 {
		t.Errorf("thinking %v", body["thinking"])
	}
	p, model, _ = r.Resolve("fast")
	if _, err := p.Stream(context.Background(), Request{Model: model}); err == nil || !strings.Contains(err.Error(), "below the API's minimum of 1024") {
		t.Errorf("a budget below the minimum: %v", err)
	}
}
