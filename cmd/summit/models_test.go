package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// modelServer answers like an OpenAI-compatible server that has every model but "big": that one
// is a 404 model_not_found, as OpenAI sends it. It remembers each request's model and whether
// it carried a temperature.
func modelServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		model, _ := body["model"].(string)
		_, temp := body["temperature"]
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s temperature=%v", model, temp))
		mu.Unlock()
		if model == "big" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":{"message":"The model `+"`big`"+` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", model, delta, finish)
		}
		chunk(`{"role":"assistant","content":"Done.\n`+"```json\\n"+`{\"summary\": \"ran on `+model+`\", \"confidence\": 0.9}\n`+"```"+`"}`, "null")
		chunk(`{}`, `"stop"`)
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":500,\"total_tokens\":1500}}\n\n", model)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// A route's fallback takes over when its model does not exist, and the switch is recorded; a
// reasoning model gets no temperature, and the drop is recorded; summit models says all of it.
func TestModelRoutingEndToEnd(t *testing.T) {
	t.Setenv("SUMMIT_TEST_KEY", "k-test")
	srv, seen := modelServer(t)
	ws := runWorkspace(t)
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o700)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(`providers:
  local: {kind: openai, base_url: `+srv.URL+`/v1, key_env: SUMMIT_TEST_KEY}
models:
  default: {provider: local, model: big, fallbacks: [small]}
  deep: {provider: local, model: o3, price: {input: 2, output: 8}}
default_provider: local
`), 0o600)
	trustWS(t, ws)
	os.MkdirAll(filepath.Join(ws, ".claude", "agents"), 0o755)
	os.WriteFile(filepath.Join(ws, ".claude", "agents", "thinker.md"), []byte("---\nname: thinker\ndescription: Thinks hard.\nmodel: deep\ntemperature: 0.2\ntools: [read_file]\n---\nThink.\n"), 0o644)

	sf := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(sf, []byte("/delegate one --agent-type general\n/wait sa-1\n/delegate two --agent-type thinker\n/wait sa-2\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", sf, "--workspace", ws, "--record", rec)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, errOut, out)
	}
	if got := strings.Join(seen(), "; "); got != "big temperature=false; small temperature=false; o3 temperature=false" {
		t.Errorf("requests: %s", got)
	}
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var routed []session.ModelRouted
	var switched []session.ModelSwitched
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.ModelRouted:
			routed = append(routed, d)
		case session.ModelSwitched:
			switched = append(switched, d)
		}
	}
	if len(routed) != 2 || routed[0].Model != "big" || routed[0].Why != "models.default in the config" || len(routed[0].Fallbacks) != 1 ||
		routed[1].Model != "o3" || len(routed[1].Dropped) != 1 || !strings.Contains(routed[1].Dropped[0], "temperature: o3 is a reasoning model") {
		t.Errorf("ModelRouted: %+v", routed)
	}
	if len(switched) != 1 || switched[0].ToModel != "small" || !strings.Contains(switched[0].Reason, "does not exist") {
		t.Errorf("ModelSwitched: %+v", switched)
	}
	var costs []string
	for _, e := range evs {
		if d, ok := e.Data.(session.SubagentStop); ok {
			if d.CostUSD == nil {
				costs = append(costs, e.SubagentID+" unknown")
			} else {
				costs = append(costs, fmt.Sprintf("%s $%.4f", e.SubagentID, *d.CostUSD))
			}
		}
	}
	if got := strings.Join(costs, ", "); got != "sa-1 unknown, sa-2 $0.0060" {
		t.Errorf("costs: %s", got)
	}
	if _, insp, _ := summit(t, "inspect", rec); !strings.Contains(insp, "cost                         $0.0060 for 1 priced (1 on models with no price: unknown)") {
		t.Errorf("inspect:\n%s", insp)
	}
	if !strings.Contains(errOut, "  sa-1 model switched: local/big → local/small: ") {
		t.Errorf("summit run's progress does not show the switch:\n%s", errOut)
	}
	if !strings.Contains(out, "sa-1 switched to local/small") || !strings.Contains(out, "ran on small") {
		t.Errorf("the printed session does not show the switch:\n%s", out)
	}

	code, out, errOut = summit(t, "models", "--workspace", ws)
	if code != 0 {
		t.Fatalf("models: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`(?m)^general +default → local/big\n +models.default in the config\n +fallbacks: local/small$`,
		`(?m)^thinker +deep → local/o3\n +models.deep in the config\n +not sent: temperature: o3 is a reasoning model, which rejects temperature$`,
		`(?m)^code-reviewer +gemini-3-pro-preview → local/big\n +gemini-3-pro-preview is a gemini model, which local does not serve \(no provider of its family is configured\); as a default-tier model it maps to big \(models.default in the config\)\n +fallbacks: local/small$`,
		`(?m)^technical-writer +gemini-3-flash-preview → local/big\n.*no models.fast: models.default in the config`,
		`(?m)^  local: kind openai, ` + regexp.QuoteMeta(srv.URL) + `/v1, tiers not mapped \(a compatible server names its models its own way: set models: or model:\), key SUMMIT_TEST_KEY is set$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("summit models lacks %s:\n%s", want, out)
		}
	}
}

// With no config, the keys in the environment choose the providers: GEMINI_API_KEY alone runs
// the built-in agents' Gemini 3 models as written; with ANTHROPIC_API_KEY too, a claude model
// goes to Anthropic, and the tiers still go to Gemini.
func TestModelsFromEnvironment(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GEMINI_API_KEY", "g-key")
	_, out, _ := summit(t, "models", "--workspace", ws)
	for _, want := range []string{
		`(?m)^coder +gemini-3-pro-preview → gemini/gemini-3-pro-preview\n +default_provider gemini serves it\n +fallbacks: gemini/gemini-2.5-pro$`,
		`(?m)^technical-writer +gemini-3-flash-preview → gemini/gemini-3-flash-preview$`,
		`(?m)^plan +deep → gemini/gemini-3-pro-preview$`,
		`(?m)^  gemini: kind gemini, tiers mapped \(fast, default, deep: gemini-3-flash-preview, gemini-3-pro-preview, gemini-3-pro-preview\), key GEMINI_API_KEY is set$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("models with GEMINI_API_KEY lacks %s:\n%s", want, out)
		}
	}
	t.Setenv("ANTHROPIC_API_KEY", "a-key")
	os.MkdirAll(filepath.Join(ws, ".claude", "agents"), 0o755)
	os.WriteFile(filepath.Join(ws, ".claude", "agents", "c.md"), []byte("---\nname: c\ndescription: C.\nmodel: claude-opus-4-1\n---\nx\n"), 0o644)
	_, out, _ = summit(t, "models", "--workspace", ws)
	if !regexp.MustCompile(`(?m)^c +claude-opus-4-1 → anthropic/claude-opus-4-1$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^analyzer +default → gemini/gemini-3-pro-preview$`).MatchString(out) {
		t.Errorf("models with two keys:\n%s", out)
	}
}

// The replay server answers the first model with Gemini's real 503 body three times; the
// built-in chain's gemini-2.5-pro answers. The recording says why the model changed, and
// summit run's progress prints it.
func TestOverloadFallbackEndToEnd(t *testing.T) {
	t.Setenv("SUMMIT_TEST_KEY", "AIza-test")
	unavailable, err := os.ReadFile(filepath.Join("..", "..", "agents", "provider", "testdata", "errors", "gemini_503_unavailable.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":streamGenerateContent")
		mu.Lock()
		asked = append(asked, model)
		mu.Unlock()
		if model == "gemini-3-pro-preview" {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write(unavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Done.\\n```json\\n{\\\"summary\\\": \\\"answered by "+model+"\\\", \\\"confidence\\\": 0.8}\\n```\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 40,\"candidatesTokenCount\": 20,\"totalTokenCount\": 60},\"modelVersion\": \""+model+"\",\"responseId\": \"r1\"}\r\n\r\n")
	}))
	defer srv.Close()
	ws := runWorkspace(t)
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o700)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(`providers:
  gemini: {kind: gemini, base_url: `+srv.URL+`, key_env: SUMMIT_TEST_KEY}
default_provider: gemini
`), 0o600)
	trustWS(t, ws)
	sf := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(sf, []byte("/delegate review it --agent-type code-reviewer\n/wait sa-1\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", sf, "--workspace", ws, "--record", rec)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, errOut, out)
	}
	mu.Lock()
	got := strings.Join(asked, ", ")
	mu.Unlock()
	if got != "gemini-3-pro-preview, gemini-3-pro-preview, gemini-3-pro-preview, gemini-2.5-pro" {
		t.Errorf("models asked: %s", got)
	}
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var routed []session.ModelRouted
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.ModelRouted:
			routed = append(routed, d)
		case session.ModelSwitched:
			t.Errorf("the overload move is a ModelSwitched: %+v", d)
		}
	}
	const why = "overloaded (HTTP 503) after 3 attempts: gemini: HTTP 503: UNAVAILABLE: The model is overloaded. Please try again later."
	if len(routed) != 2 || routed[0].From != "" || routed[0].Model != "gemini-3-pro-preview" ||
		routed[1].From != "gemini/gemini-3-pro-preview" || routed[1].Model != "gemini-2.5-pro" || routed[1].Why != why {
		t.Errorf("ModelRouted: %+v", routed)
	}
	// The replay folds the move as a switch: the model in use is the fallback, with why.
	if code, out, errOut := summit(t, "replay", "--print", rec); code != 0 ||
		!strings.Contains(out, "model: gemini/gemini-2.5-pro (") || !strings.Contains(out, "; switched from gemini/gemini-3-pro-preview: "+why) {
		t.Errorf("replay: exit %d\n%s\n%s", code, errOut, out)
	}
	if !strings.Contains(errOut, "  sa-1 model switched: gemini/gemini-3-pro-preview → gemini/gemini-2.5-pro: "+why) {
		t.Errorf("progress:\n%s", errOut)
	}
	if !strings.Contains(out, "answered by gemini-2.5-pro") {
		t.Errorf("output:\n%s", out)
	}
}
