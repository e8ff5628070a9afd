package acp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	Inherit []string
	// Writable are where the agent process may write besides its worktree, its own temp dir
	// (TMPDIR) and the build caches a confined shell may fill: the agent's own state
	// (sessions, settings, credentials it refreshes). See WritablePaths for their form; Start
	// confines the process to them (Linux Landlock) whenever its sandbox confines writes.
	Writable []string
	// ConfinedModes are the agent modes to use, by permission mode, when Start confines the
	// process, in place of the usual match (see setMode): an agent whose own modes run its
	// commands in a sandbox that cannot start inside summit's (Codex's bubblewrap needs to
	// mount, which Landlock forbids) runs instead in its unsandboxed mode, summit's
	// confinement standing in for its own.
	ConfinedModes map[agents.PermissionMode]string
	// Unasked are the agent modes in which it runs commands without asking its client. Start
	// refuses a confined run whose ConfinedModes mode is one of them unless summit's policy
	// allows the shell without asking (bypassPermissions): summit, not the agent, decides.
	Unasked []string
	// MCPServers names servers of summit's mcp_servers config the agent gets in session/new
	// (see mcp.go): from acp_agents.mcp_servers, or an agent file's mcpServers.
	MCPServers  []string
	Description string
	Source      string // builtin:acp, the config file, or the agent file
	Install     string // how to install Command (built-ins); "" when unknown
	// Package is the npm package that provides Command (built-ins), Tested the version of it
	// summit's CI runs (.ci/run installs exactly that), MinVersion the oldest version summit
	// supports; summit doctor checks the installed one against them.
	Package, Tested, MinVersion string
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
			Install:     "npm install -g @agentclientprotocol/claude-agent-acp@0.101.0 (it runs Claude Code; needs Node 22 or newer; set ANTHROPIC_API_KEY)",
			Package:     "@agentclientprotocol/claude-agent-acp", Tested: "0.101.0", MinVersion: "0.49.0",
			Inherit: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
				"ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_CUSTOM_HEADERS", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK",
				"CLAUDE_CODE_USE_VERTEX", "AWS_REGION", "AWS_PROFILE", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION"},
			Writable: []string{"${CLAUDE_CONFIG_DIR:-~/.claude}/"},
		},
		{
			Name: "codex", Command: "codex-acp",
			Description: "OpenAI Codex, an external agent over ACP (codex-acp)",
			Source:      "builtin:acp",
			Install:     "npm install -g @agentclientprotocol/codex-acp@2.6.0 (set OPENAI_API_KEY or CODEX_API_KEY)",
			Package:     "@agentclientprotocol/codex-acp", Tested: "2.6.0", MinVersion: "2.6.0",
			Inherit:  []string{"OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"},
			Writable: []string{"${CODEX_HOME:-~/.codex}/"},
			// Its agent and read-only modes run every command under bubblewrap, which
			// cannot start inside Landlock: each fails with "error building bubblewrap
			// command: Permission denied (os error 13)", and the failure reaches the model,
			// not summit (no escalation request, under on-request or on-failure alike). Its
			// legacy Landlock sandbox (features.use_legacy_landlock) panics: "filesystem-
			// restricted execution requires bubblewrap to isolate app-server sockets"
			// (codex linux-sandbox/src/linux_run_main.rs:385); codex-acp offers no
			// external-sandbox mode. Unsandboxed, Codex 0.166 cannot be made to ask: its
			// full-access mode sends approval "never" with each turn, a permission profile's
			// mode takes config's approval_policy, and the one policy that asks before every
			// command is refused ("approval_policy = \"untrusted\" is no longer supported");
			// a PreToolUse hook cannot answer "ask" either. So confined it runs in full
			// access only where summit runs the shell unasked too (bypassPermissions, see
			// Unasked); acceptEdits, which asks, is refused; plan keeps read-only, where its
			// commands fail and its edits ask (and are refused).
			ConfinedModes: map[agents.PermissionMode]string{agents.ModeAcceptEdits: "agent-full-access", agents.ModeBypass: "agent-full-access"},
			Unasked:       []string{"agent-full-access"},
		},
		{
			// --acp since Gemini CLI 0.33 (March 2026); older versions take --experimental-acp,
			// which newer ones still accept as deprecated (an acp_agents entry can say so).
			Name: "gemini-cli", Command: "gemini", Args: []string{"--acp"},
			Description: "Gemini CLI, an external agent over ACP (gemini --acp)",
			Source:      "builtin:acp",
			Install:     "npm install -g @google/gemini-cli@0.61.0 (set GEMINI_API_KEY)",
			Package:     "@google/gemini-cli", Tested: "0.61.0", MinVersion: "0.33.0",
			Inherit: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_MODEL",
				"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS",
				"GEMINI_CLI_HOME"},
			Writable: []string{"${GEMINI_CLI_HOME:-~}/.gemini/"},
			// Gemini CLI runs an untrusted folder in a restricted mode: it refuses
			// allow_always, so it asks for every edit even in acceptEdits, and prints its
			// "untrusted folder" notice on every run. Its folder here is always summit's own
			// worktree for the subagent (the process's cwd, confined to it), never the user's
			// checkout, so summit trusts that folder and only it: GEMINI_CLI_TRUST_WORKSPACE
			// trusts the current workspace for this process and writes nothing to the user's
			// trustedFolders.json. (Claude Code's adapter asks no project trust over ACP.)
			Env: map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"},
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
		a := Agent{Name: name, Command: c.Command, Args: c.Args, Env: c.Env, Source: c.File,
			Description: "external agent over ACP: " + strings.Join(append([]string{c.Command}, c.Args...), " ")}
		a.likeBuiltin(filepath.Base(c.Command))
		a.Writable = append(a.Writable, c.Writable...)
		a.MCPServers = c.MCPServers
		s.byName[name] = a
	}
	return s
}

// likeBuiltin gives a the state directories and confined modes of the built-in whose command
// is program, if any: whoever runs that program runs the same agent, with the same state and
// the same sandbox of its own.
func (a *Agent) likeBuiltin(program string) {
	for _, b := range Builtins() {
		if b.Command == program {
			a.Writable, a.ConfinedModes, a.Unasked = slices.Clone(b.Writable), b.ConfinedModes, b.Unasked
		}
	}
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
	// mcpServers names servers of the config (a list of names, or Claude Code's map of name
	// to server, whose definitions count only where the config has the same name: an agent
	// file never starts a command of its own).
	switch v := get("mcpServers").(type) {
	case nil:
	case []any:
		for _, x := range v {
			s, ok := x.(string)
			if !ok || !provider.MCPServerName().MatchString(s) {
				return a, true, fmt.Errorf("agent %s: mcpServers entry %v is not a server name", d.Name, x)
			}
			a.MCPServers = append(a.MCPServers, s)
		}
	case map[string]any:
		for k := range v {
			if !provider.MCPServerName().MatchString(k) {
				return a, true, fmt.Errorf("agent %s: mcpServers key %q is not a server name", d.Name, k)
			}
			a.MCPServers = append(a.MCPServers, k)
		}
		slices.Sort(a.MCPServers)
	default:
		return a, true, fmt.Errorf("agent %s: mcpServers must be a list of server names (of the config's mcp_servers)", d.Name)
	}
	// An agent file can come with a cloned repository, and its process is confined so that
	// it cannot write outside its worktree: the file cannot widen that. Only a built-in's
	// program found on PATH (a bare name, not a file of the repository) gets the built-in's
	// state directories; anything more is named in the user's acp_agents.
	if get("writable") != nil {
		return a, true, fmt.Errorf("agent %s: writable is read only from a config's acp_agents (an agent file may come with a repository); name the agent there", d.Name)
	}
	if !strings.ContainsRune(a.Command, '/') {
		a.likeBuiltin(a.Command)
	}
	return a, true, nil
}

// WritablePaths are a.Writable resolved in env (the agent's environment, as Environ makes
// it): $VAR and ${VAR} read env, ${VAR:-WORD} is WORD when VAR is unset or empty, and a
// leading ~ (of the entry, or of WORD) is env's HOME. An entry that does not resolve to an
// absolute path (it needs a variable that is unset) is left out: it would name a place
// relative to wherever the agent starts. dirs are the entries written with a trailing /
// (directories, to create when missing); other are the rest, files or directories as they
// are.
func (a Agent) WritablePaths(env []string) (dirs, other []string) {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	for _, w := range a.Writable {
		// An unset variable (HOME for ~) leaves the entry out: "$UNSET/x" is not "/x".
		missing := false
		get := func(k string) string {
			v := vars[k]
			if v == "" {
				missing = true
			}
			return v
		}
		home := func(p string) string {
			if p == "~" || strings.HasPrefix(p, "~/") {
				return get("HOME") + p[1:]
			}
			return p
		}
		p := home(os.Expand(w, func(name string) string {
			if k, word, ok := strings.Cut(name, ":-"); ok {
				if v := vars[k]; v != "" {
					return v
				}
				return home(word)
			}
			return get(name)
		}))
		if missing || !filepath.IsAbs(p) {
			continue
		}
		if strings.HasSuffix(w, "/") {
			dirs = append(dirs, filepath.Clean(p))
		} else {
			other = append(other, filepath.Clean(p))
		}
	}
	return dirs, other
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
