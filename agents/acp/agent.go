package acp

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
)

// Kind is the `kind:` of an agent file that names an external ACP agent; its frontmatter
// carries command, args and env.
const Kind = "acp"

// Agent is an external agent: a command that speaks ACP on its stdin and stdout.
type Agent struct {
	Name    string            // what /delegate --agent-type names
	Command string            // a program on PATH or a path
	Args    []string          // its arguments
	Env     map[string]string // added to the minimal environment; $VAR and ${VAR} read summit's
	// Inherit names variables of summit's environment the agent gets as they are: a built-in's
	// keys and endpoints. Config and file agents name theirs in Env ($VAR).
	Inherit     []string
	Description string
	Source      string // builtin:acp, the config file, or the agent file
	Install     string // how to install Command (built-ins); "" when unknown
}

// CommandLine is the command and its arguments as one line, for messages.
func (a Agent) CommandLine() string {
	return strings.Join(append([]string{a.Command}, a.Args...), " ")
}

// Builtins are the ACP agents summit knows by name; each is offered when its command is on
// PATH, and an acp_agents entry of the same name replaces it.
func Builtins() []Agent {
	return []Agent{
		{
			Name: "claude-code", Command: "claude-agent-acp",
			Description: "Claude Code, an external agent over ACP (claude-agent-acp)",
			Source:      "builtin:acp",
			Install:     "npm install -g @agentclientprotocol/claude-agent-acp (it runs Claude Code; set ANTHROPIC_API_KEY)",
			Inherit: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
				"ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_CUSTOM_HEADERS", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK",
				"CLAUDE_CODE_USE_VERTEX", "AWS_REGION", "AWS_PROFILE", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION"},
		},
		{
			Name: "codex", Command: "codex-acp",
			Description: "OpenAI Codex, an external agent over ACP (codex-acp)",
			Source:      "builtin:acp",
			Install:     "npm install -g @agentclientprotocol/codex-acp (set OPENAI_API_KEY or CODEX_API_KEY)",
			Inherit:     []string{"OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"},
		},
		{
			// --acp since Gemini CLI 0.33 (March 2026); older versions take --experimental-acp,
			// which newer ones still accept as deprecated (an acp_agents entry can say so).
			Name: "gemini-cli", Command: "gemini", Args: []string{"--acp"},
			Description: "Gemini CLI, an external agent over ACP (gemini --acp)",
			Source:      "builtin:acp",
			Install:     "npm install -g @google/gemini-cli (set GEMINI_API_KEY)",
			Inherit: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_MODEL",
				"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS"},
		},
	}
}

// Set is the ACP agents a session can delegate to, by name.
type Set struct {
	byName map[string]Agent
}

// NewSet is the built-ins whose command lookPath finds (nil: exec.LookPath), then config's
// acp_agents, which replace a built-in of the same name.
func NewSet(config map[string]provider.ACPAgent, lookPath func(string) (string, error)) Set {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	s := Set{byName: map[string]Agent{}}
	for _, a := range Builtins() {
		if _, err := lookPath(a.Command); err == nil {
			s.byName[a.Name] = a
		}
	}
	for name, c := range config {
		s.byName[name] = Agent{Name: name, Command: c.Command, Args: c.Args, Env: c.Env, Source: c.File,
			Description: "external agent over ACP: " + strings.Join(append([]string{c.Command}, c.Args...), " ")}
	}
	return s
}

// Get returns the agent called name.
func (s Set) Get(name string) (Agent, bool) {
	a, ok := s.byName[name]
	return a, ok
}

// List returns the agents sorted by name.
func (s Set) List() []Agent {
	out := make([]Agent, 0, len(s.byName))
	for _, a := range s.byName {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Definition is a as an agent definition, for the catalogue and the policy: no tool list (the
// session's tools apply), no permission mode (the session's ceiling applies), Kind acp.
func (a Agent) Definition() *agents.Definition {
	return &agents.Definition{Name: a.Name, Description: a.Description, Kind: Kind,
		Source: agents.Source{Path: a.Source, Layer: "acp"}}
}

// FromDefinition reads an agent file of kind acp: command (required), args (a list, or one
// string split at spaces) and env (a map of strings) in its frontmatter. ok is false for
// any other kind.
func FromDefinition(d *agents.Definition) (a Agent, ok bool, err error) {
	if d == nil || d.Kind != Kind {
		return Agent{}, false, nil
	}
	get := func(k string) any {
		if v, ok := d.Unknown[k]; ok {
			return v
		}
		return d.Metadata[k]
	}
	a = Agent{Name: d.Name, Description: d.Description, Source: d.Source.Path}
	a.Command, _ = get("command").(string)
	if strings.TrimSpace(a.Command) == "" {
		return a, true, fmt.Errorf("agent %s (kind: acp) has no command", d.Name)
	}
	switch v := get("args").(type) {
	case nil:
	case string:
		a.Args = strings.Fields(v)
	case []any:
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return a, true, fmt.Errorf("agent %s: args must be strings", d.Name)
			}
			a.Args = append(a.Args, s)
		}
	default:
		return a, true, fmt.Errorf("agent %s: args must be a list of strings", d.Name)
	}
	switch v := get("env").(type) {
	case nil:
	case map[string]any:
		a.Env = map[string]string{}
		for k, x := range v {
			s, ok := x.(string)
			if !ok {
				return a, true, fmt.Errorf("agent %s: env %s must be a string", d.Name, k)
			}
			a.Env[k] = s
		}
	default:
		return a, true, fmt.Errorf("agent %s: env must be a map of strings", d.Name)
	}
	return a, true, nil
}

// inherited are the variables every agent gets from summit's environment: where things are
// and how to reach the network, never keys (a built-in names its own in Inherit; others
// write them in env as $VAR).
var inherited = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL",
	"LC_CTYPE", "LC_MESSAGES", "TZ", "TMPDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
	"XDG_STATE_HOME", "XDG_RUNTIME_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"NODE_EXTRA_CA_CERTS", "NVM_DIR", "NVM_BIN", "VOLTA_HOME", "FNM_DIR", "BUN_INSTALL"}

// Environ is the agent's environment: the minimal inherited variables and a's Inherit from
// environ (summit's), NO_BROWSER=1 (no agent opens a login page from a subagent), then a.Env
// with $VAR and ${VAR} read from environ. Later entries win.
func (a Agent) Environ(environ []string) []string {
	from := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			from[k] = v
		}
	}
	out := map[string]string{"NO_BROWSER": "1"}
	for _, k := range append(append([]string{}, inherited...), a.Inherit...) {
		if v, ok := from[k]; ok {
			out[k] = v
		}
	}
	for k, v := range a.Env {
		out[k] = os.Expand(v, func(name string) string { return from[name] })
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+out[k])
	}
	return env
}
