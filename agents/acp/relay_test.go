package acp

import (
	"slices"
	"testing"
)

// An agent on a relay has each relayed API's base URL pointed at it with the placeholder key,
// and none of its own keys, endpoints or cloud backends, whatever it inherited.
func TestRelayEnv(t *testing.T) {
	r := Relay{URL: "http://127.0.0.1:9/tok", Kinds: []string{"anthropic", "openai"}, Key: "placeholder"}
	got := r.Env([]string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-own", "ANTHROPIC_BASE_URL=http://own", "CLAUDE_CODE_USE_BEDROCK=1",
		"CODEX_API_KEY=c", "GEMINI_API_KEY=g", "GOOGLE_GEMINI_BASE_URL=http://g", GatewayVar + "=http://gw", "HOME=/h"})
	want := []string{"ANTHROPIC_API_KEY=placeholder", "ANTHROPIC_BASE_URL=http://127.0.0.1:9/tok", "HOME=/h",
		"OPENAI_API_KEY=placeholder", "OPENAI_BASE_URL=http://127.0.0.1:9/tok/v1", "PATH=/bin"}
	if !slices.Equal(got, want) {
		t.Fatalf("relay env:\n got %q\nwant %q", got, want)
	}
	// Through Config: the agent's inherited variables and env entries, then the relay.
	c := Config{Agent: Agent{Name: "a", Inherit: []string{"GEMINI_API_KEY"}, Env: map[string]string{"ANTHROPIC_API_KEY": "$MINE"}},
		Environ: []string{"GEMINI_API_KEY=g", "MINE=sk-mine", "PATH=/bin"}, Relay: &Relay{URL: "http://127.0.0.1:9/t", Kinds: []string{"gemini"}, Key: "p"}}
	env := c.agentEnv()
	if !slices.Contains(env, "GEMINI_API_KEY=p") || !slices.Contains(env, "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9/t") ||
		slices.ContainsFunc(env, func(kv string) bool { return kv == "ANTHROPIC_API_KEY=sk-mine" || kv == "GEMINI_API_KEY=g" }) {
		t.Fatalf("agent env on a relay: %q", env)
	}
}
