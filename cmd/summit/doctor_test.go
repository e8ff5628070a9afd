package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// doctor asks each provider for its model list the way the real APIs answer (OpenAI's
// {"data":[{"id"}]}, Anthropic's paginated has_more/last_id with dated ids, Gemini's
// models/… names with nextPageToken), and reports a refused key and a model not listed.
func TestDoctor(t *testing.T) {
	oai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: bad. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[{"id":"small-model","object":"model","created":1,"owned_by":"me"}]}`)
	}))
	defer oai.Close()
	ant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "ant-key" || r.Header.Get("anthropic-version") == "" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		if r.URL.Query().Get("after_id") == "" {
			fmt.Fprint(w, `{"data":[{"type":"model","id":"claude-sonnet-4-5-20250929","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":true,"first_id":"claude-sonnet-4-5-20250929","last_id":"claude-sonnet-4-5-20250929"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"type":"model","id":"claude-haiku-4-5-20251001","display_name":"Claude Haiku 4.5","created_at":"2025-10-01T00:00:00Z"}],"has_more":false,"first_id":"claude-haiku-4-5-20251001","last_id":"claude-haiku-4-5-20251001"}`)
	}))
	defer ant.Close()
	gem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-goog-api-key") != "gem-key" {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`)
			return
		}
		if r.URL.Query().Get("pageToken") == "" {
			fmt.Fprint(w, `{"models":[{"name":"models/gemini-3-pro-preview","displayName":"Gemini 3 Pro Preview"},{"name":"models/gemini-3-flash-preview"}],"nextPageToken":"p2"}`)
			return
		}
		fmt.Fprint(w, `{"models":[{"name":"models/gemini-2.5-pro"}]}`)
	}))
	defer gem.Close()
	t.Setenv("T_OAI", "bad")
	t.Setenv("T_ANT", "ant-key")
	t.Setenv("T_GEM", "gem-key")
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o700)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(`providers:
  oai: {kind: openai, base_url: `+oai.URL+`/v1, key_env: T_OAI}
  claude: {kind: anthropic, base_url: `+ant.URL+`, key_env: T_ANT}
  gem: {kind: gemini, base_url: `+gem.URL+`, key_env: T_GEM}
models:
  fast: {provider: oai, model: small-model}
  default: {provider: claude, model: claude-sonnet-4-5, fallbacks: [gem/gemini-2.5-pro]}
  deep: {provider: claude, model: claude-opus-9}
default_provider: claude
`), 0o600)
	trustWS(t, ws)
	code, out, errOut := summit(t, "doctor", "--workspace", ws)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`(?m)^✓ claude \(anthropic at http://[^)]+\), key T_ANT accepted: 2 models listed$`,
		`(?m)^    ✓ claude-sonnet-4-5, for analyzer, builder, general, tester$`,
		`(?m)^    ✗ claude-opus-9 is not in its model list, for plan$`,
		`(?m)^✓ gem \(gemini at http://[^)]+\), key T_GEM accepted: 3 models listed$`,
		`(?m)^    ✓ gemini-3-pro-preview, for api-designer, architect, `,
		`(?m)^    ✓ gemini-2.5-pro, for analyzer \(fallback\), `,
		`(?m)^✗ oai \(openai at http://[^)]+/v1\): the key was refused \(HTTP 401: Incorrect API key provided: bad\.`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("doctor lacks %s:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`summit: 2 problems found`).MatchString(errOut) {
		t.Errorf("stderr: %s", errOut)
	}
	// External ACP agents: a configured one whose command is missing is a problem; a missing
	// built-in says how to install it.
	if !regexp.MustCompile(`(?m)^· gemini-cli: gemini is not on PATH; install it with npm install -g @google/gemini-cli`).MatchString(out) && !regexp.MustCompile(`(?m)^✓ gemini-cli:`).MatchString(out) {
		t.Errorf("doctor does not report the built-in ACP agents:\n%s", out)
	}
	// A key that is not set is named.
	t.Setenv("T_ANT", "")
	if _, out, _ = summit(t, "doctor", "--workspace", ws); !regexp.MustCompile(`(?m)^✗ claude \(anthropic at [^)]+\): no key: set T_ANT$`).MatchString(out) {
		t.Errorf("missing key:\n%s", out)
	}
}

// A configured ACP agent whose command is not on PATH is a problem.
func TestDoctorACPAgents(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o700)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("acp_agents:\n  mine: {command: no-such-acp-agent-cmd}\n"), 0o600)
	trustWS(t, ws)
	code, out, _ := summit(t, "doctor", "--workspace", ws)
	if code != 1 || !regexp.MustCompile(`(?m)^✗ acp_agents.mine: no-such-acp-agent-cmd is not on PATH$`).MatchString(out) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
