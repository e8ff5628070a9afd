package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConfigAndRouting(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	writeConfig(t, user, "providers:\n  ollama: {kind: openai, base_url: http://localhost:11434/v1}\nmodels:\n  fast: {provider: ollama, model: qwen-small}\n  default: {provider: ollama, model: qwen}\ndefault_provider: ollama\n")
	writeConfig(t, filepath.Join(ws, ".summit"), "providers:\n  oai: {kind: openai, base_url: https://api.openai.com/v1, key_env: OPENAI_API_KEY}\nmodels:\n  deep: {provider: oai, model: gpt-5}\n")
	c, err := LoadConfig(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	script := NewScript(ScriptConfig{})
	r := NewRouter(c, script, func(string) string { return "k" })
	for _, tc := range []struct{ model, provider, concrete string }{
		{"", "ollama", "qwen"}, {"inherit", "ollama", "qwen"}, {"fast", "ollama", "qwen-small"},
		{"deep", "oai", "gpt-5"}, {"oai/gpt-4o", "oai", "gpt-4o"}, {"llama3", "ollama", "llama3"},
	} {
		p, m, err := r.Resolve(tc.model)
		if err != nil || p.Name() != tc.provider || m != tc.concrete {
			t.Errorf("Resolve(%q) = %v %q %v, want %s %s", tc.model, p, m, err, tc.provider, tc.concrete)
		}
	}
	if err := r.Force("script"); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := r.Resolve("deep"); p != script || r.Describe() != "script" {
		t.Errorf("forced script")
	}
	if err := r.Force("nosuch"); err == nil || !strings.Contains(err.Error(), "known: script") {
		t.Errorf("Force(nosuch) = %v", err)
	}
	// Nothing configured: everything goes to the script provider.
	empty := NewRouter(Config{}, script, nil)
	if p, _, _ := empty.Resolve("deep"); p != script || empty.Describe() != "script" {
		t.Errorf("empty config does not route to script")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"providers:\n  x: {kind: openai, base_url: u, kee_env: K}\n", "field kee_env not found"},
		{"providers:\n  x: {kind: bedrock}\n", "config.yaml:2: provider x: kind \"bedrock\" is not one of openai, anthropic, gemini, script"},
		{"models:\n  fast: {provider: script, model: m, price: {input: -1, output: 2}}\n", "models.fast.price: input and output are US dollars per million tokens"},
		{"models:\n  fast: {provider: nowhere, model: m}\n", `routes to provider "nowhere"`},
		{"providers: [\n", "config.yaml"},
	} {
		ws := t.TempDir()
		writeConfig(t, filepath.Join(ws, ".summit"), c.text)
		if _, err := LoadConfig(ws, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
	if c, err := LoadConfig(t.TempDir(), t.TempDir()); err != nil || !c.Empty() {
		t.Errorf("no files: %+v %v", c, err)
	}
}

func TestDetectOllama(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/tags" {
			w.Write([]byte(`{"models":[]}`))
		}
	}))
	defer up.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Second) }))
	defer slow.Close()
	detect := func(url string) (bool, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		return DetectOllama(ctx, url), time.Since(start)
	}
	if ok, _ := detect(up.URL); !ok {
		t.Errorf("running server not detected")
	}
	if ok, d := detect(slow.URL); ok || d > 800*time.Millisecond {
		t.Errorf("slow server: %v after %v", ok, d)
	}
	if ok, _ := detect("http://127.0.0.1:1"); ok {
		t.Errorf("closed port detected")
	}
}

// web_allow_hosts from the user and the workspace config add up.
func TestConfigWebAllowHosts(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("web_allow_hosts: [docs.internal]\n"), 0o644)
	os.WriteFile(filepath.Join(user, "config.yaml"), []byte("web_allow_hosts: [wiki.corp]\n"), 0o644)
	c, err := LoadConfig(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.WebAllowHosts) != 2 {
		t.Errorf("allow hosts %v", c.WebAllowHosts)
	}
}

// TestConfigAliasesAndCaps: aliases and merge keys work in a config file; an alias bomb is
// refused at its line; a file over MaxConfigFile is refused, naming it, at any size.
func TestConfigAliasesAndCaps(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".summit")
	writeConfig(t, dir, "providers:\n  a: &p {kind: openai, base_url: http://a/v1}\n  b: {<<: *p, base_url: http://b/v1}\nmodels:\n  fast: &r {provider: a, model: m}\n  deep: {<<: *r, model: m2}\n")
	c, err := LoadConfig(ws, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Providers["b"], ProviderConfig{Kind: "openai", BaseURL: "http://b/v1"}) || !reflect.DeepEqual(c.Models["deep"], Route{Provider: "a", Model: "m2"}) {
		t.Errorf("aliases and merge keys: %+v", c)
	}
	path := filepath.Join(dir, "config.yaml")
	writeConfig(t, dir, billionLaughs("l", 9))
	if _, err := LoadConfig(ws, ""); err == nil || err.Error() != path+":5: alias *a3: YAML aliases expand this document past 100000 nodes; refused as an alias bomb" {
		t.Errorf("alias bomb: %v", err)
	}
	writeConfig(t, dir, "default_provider: script\n"+strings.Repeat("#", MaxConfigFile))
	if _, err := LoadConfig(ws, ""); err == nil || err.Error() != path+" is larger than 1 MiB, the cap on a config file" {
		t.Errorf("over the cap: %v", err)
	}
	writeConfig(t, dir, "default_provider: script\n"+strings.Repeat("#", MaxConfigFile-len("default_provider: script\n")))
	if c, err := LoadConfig(ws, ""); err != nil || c.DefaultProvider != "script" {
		t.Errorf("at the cap: %+v %v", c, err)
	}
}
