package acp

import (
	"slices"
	"strings"
)

// Relay points an agent's model calls at a loopback relay instead of its provider: a runner
// does so for an ACP agent whose models come from the session that placed it (session/runners'
// ModelRelay), so the agent needs no key and the session makes each call with its own. The
// agent gets, for each relayed API, its base-URL variable pointed at the relay and its key
// variable set to a placeholder; every variable that would give it a key, an endpoint or a
// cloud backend of its own (RelayDropped) is taken out of its environment, whatever summit's
// environment or the agent's env entries hold.
type Relay struct {
	// URL is the relay's base (http://127.0.0.1:PORT/TOKEN); OpenAI's base URL is URL + "/v1".
	URL string
	// Kinds are the relayed APIs, as provider kinds: anthropic, openai, gemini.
	Kinds []string
	// Key is the placeholder key value (not a secret: the relay ignores it).
	Key string
}

// RelayDropped are the variables no agent on a relay keeps: keys, endpoints, and the switches
// and credentials of cloud backends (Bedrock, Vertex) that would take its calls elsewhere.
var RelayDropped = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_USE_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX", "ANTHROPIC_VERTEX_PROJECT_ID", "AWS_PROFILE", "AWS_ACCESS_KEY_ID",
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
	"OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL",
	"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI",
	"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS",
	GatewayVar,
}

// relayVars are each relayed API's base-URL and key variables, and the path its base takes.
var relayVars = map[string]struct{ base, key, suffix string }{
	"anthropic": {"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", ""},
	"openai":    {"OPENAI_BASE_URL", "OPENAI_API_KEY", "/v1"},
	"gemini":    {"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", ""},
}

// Env is env (an agent's, KEY=VALUE) pointed at the relay.
func (r Relay) Env(env []string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(RelayDropped, k)
	})
	for _, kind := range r.Kinds {
		if v, ok := relayVars[kind]; ok {
			out = append(out, v.base+"="+r.URL+v.suffix, v.key+"="+r.Key)
		}
	}
	slices.Sort(out)
	return out
}

// agentEnv is the agent's environment: what it inherits and its env entries, pointed at the
// relay when there is one.
func (c Config) agentEnv() []string {
	env := c.Agent.Environ(c.Environ)
	if c.Relay != nil {
		env = c.Relay.Env(env)
	}
	return env
}
