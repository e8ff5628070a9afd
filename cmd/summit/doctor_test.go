package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/acp"
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
		fmt.Fprint(w, `{"models":[{"name":"models/gemini-2.5-pro"},{"name":"models/gemini-2.5-flash"}]}`)
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
		`(?m)^✓ gem \(gemini at http://[^)]+\), key T_GEM accepted: 4 models listed$`,
		`(?m)^    ✓ gemini-3-pro-preview, for api-designer, architect, `,
		`(?m)^    ✓ gemini-2.5-pro, for analyzer \(fallback\), `,
		// The built-in chain keeps a model's kind: a Gemini 3 flash falls back to 2.5 flash.
		`(?m)^    ✓ gemini-2.5-flash, for [^\n]*technical-writer \(fallback\)`,
		`(?m)^✗ oai \(openai at http://[^)]+/v1\): the key was refused \(HTTP 401: Incorrect API key provided: bad\.`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("doctor lacks %s:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`summit: 2 problems found`).MatchString(errOut) {
		t.Errorf("stderr: %s\n%s", errOut, out)
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

// doctor checks the programs summit starts: an MCP server command that does not exist is a
// problem named by its server (exit 1); a real npm agent and MCP server (installed by
// .ci/run) show their package versions, read from the install, and the Node they need; the
// built-ins' install lines name the versions CI installs.
func TestDoctorPrograms(t *testing.T) {
	codex, _ := filepath.Abs("../../session/live/testdata/npm/node_modules/.bin/codex-acp")
	everything, _ := filepath.Abs("../../agents/mcp/testdata/npm/node_modules/.bin/mcp-server-everything")
	for _, p := range []string{codex, everything} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("SUMMIT_E2E") == "1" {
				t.Fatalf("%s is not installed (.ci/run installs it)", p)
			}
			t.Skipf("%s is not installed (.ci/run installs it)", p)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH (.ci/run installs it)")
	}
	// PATH has node only: the built-ins are missing, and say how to install them.
	bin := t.TempDir()
	if err := os.Symlink(node, filepath.Join(bin, "node")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o700)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(`acp_agents:
  cx: {command: `+codex+`}
mcp_servers:
  gone: {command: no-such-mcp-server-cmd}
  everything: {command: `+everything+`}
`), 0o600)
	trustWS(t, ws)
	code, out, errOut := summit(t, "doctor", "--workspace", ws)
	if code != 1 || !regexp.MustCompile(`summit: 1 problem found`).MatchString(errOut) {
		t.Errorf("exit %d, want 1 for one problem:\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`(?m)^✗ mcp_servers.gone: no-such-mcp-server-cmd is not on PATH$`,
		`(?m)^✓ mcp_servers.everything: \S+mcp-server-everything is @modelcontextprotocol/server-everything 2026\.8\.31`,
		`(?m)^✓ acp_agents.cx: \S+codex-acp is @agentclientprotocol/codex-acp 2\.6\.0; the version summit is tested with$`,
		`(?m)^· claude-code: claude-agent-acp is not on PATH; install it with npm install -g @agentclientprotocol/claude-agent-acp@0\.101\.0 \(it runs Claude Code; needs Node 22 or newer`,
		`(?m)^· gemini-cli: gemini is not on PATH; install it with npm install -g @google/gemini-cli@0\.61\.0 `,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("doctor lacks %s:\n%s", want, out)
		}
	}
	// The pinned versions are the ones CI installs and tests.
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acp.Builtins() {
		if !strings.Contains(string(ci), " "+a.Package+"@"+a.Tested) || !strings.Contains(a.Install, a.Package+"@"+a.Tested) {
			t.Errorf("%s: its install line %q does not name %s@%s, which .ci/run installs", a.Name, a.Install, a.Package, a.Tested)
		}
	}
}

// The Node a package needs is checked against the node on PATH where its range says a floor.
func TestDoctorNodeCheck(t *testing.T) {
	for _, c := range []struct {
		need, have string
		ok         bool
		msg        string
	}{
		{">=22", "v20.20.2", false, "needs Node >=22, node on PATH is v20.20.2"},
		{">=22", "v22.1.0", true, "Node >=22 (node v22.1.0)"},
		{">= 20.19.0", "v20.18.9", false, "needs Node >= 20.19.0, node on PATH is v20.18.9"},
		{"^20.19.0 || >=22.12", "v21.0.0", true, "needs Node ^20.19.0 || >=22.12 (node v21.0.0)"},
		{">=20", "", false, "needs Node >=20, and node is not on PATH"},
		{"", "v20.0.0", true, ""},
	} {
		if msg, ok := checkNode(c.need, c.have); ok != c.ok || msg != c.msg {
			t.Errorf("checkNode(%q, %q) = %q, %v; want %q, %v", c.need, c.have, msg, ok, c.msg, c.ok)
		}
	}
}
