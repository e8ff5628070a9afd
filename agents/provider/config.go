package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/summit-dev/summit/commands"
)

// Configuration: .summit/config.yaml in the workspace and config.yaml in the user config dir
// (~/.config/summit); the workspace file wins key by key, once the workspace is trusted: until
// then none of the workspace file takes effect (LoadConfigGated, session/trust).
//
//	providers:
//	  openai: {kind: openai, base_url: https://api.openai.com/v1, key_env: OPENAI_API_KEY}
//	  ollama: {kind: ollama, base_url: http://localhost:11434, num_ctx: 32768}  # native API; num_ctx: the context size
//	  claude: {kind: anthropic, key_env: ANTHROPIC_API_KEY, thinking_budget: 4096}  # budget: 0 = no thinking
//	  gemini: {kind: gemini}    # key: GEMINI_API_KEY, else GOOGLE_API_KEY; thinking_budget: 0 = the model's default
//	models:                     # routing: alias or concrete name -> provider + model
//	  fast:    {provider: claude, model: claude-haiku-4-5}
//	  default: {provider: claude, model: claude-sonnet-4-5}
//	  deep:    {provider: claude, model: claude-opus-4-1}
//	default_provider: claude    # for concrete model names not listed under models
//
// Keys are never written in configuration: key_env names the environment variable that holds
// one, read when a request is made.
//
// Hooks (session/hooks runs them): per event, a list of commands; the user file's and the
// workspace file's entries both apply, user entries first. A workspace file's hooks run only
// once the user has trusted the workspace (see session/trust).
//
//	hooks:
//	  SubagentStop:               # SubagentStart SubagentStop PermissionRequested
//	    - matcher: code-reviewer  #   ConflictDetected ConvergenceComplete SessionEnded
//	      command: ./scripts/check.sh
//	      timeout: 120            # seconds; default 60
//	  SessionEnded:
//	    - command: notify-send "summit session ended"
//	  max_blocks: 3               # SubagentStop blocks per subagent (default 3, at most 20)
//
// Claude Code's shape is read too, so its hooks settings can be pasted as they are: an entry
// {matcher, hooks: [{type: command, command, timeout}, ...]} runs each command with the matcher.
//
// matcher (optional) is a regular expression that must match the whole agent type or the
// whole agent name ("" or "*" = every agent; a plain name matches exactly that agent).
//
// A config file is at most MaxConfigFile (1 MiB); a bigger one is refused, naming it, without
// being read past the cap. Anchors, aliases and merge keys work; a file whose aliases expand
// past agents.MaxAliasNodes nodes is refused as an alias bomb, at the alias's file:line.

// MaxConfigFile is the largest config file read (1 MiB).
const MaxConfigFile = 1 << 20

// Config is the merged configuration.
type Config struct {
	Providers       map[string]ProviderConfig `yaml:"providers"`
	Models          map[string]Route          `yaml:"models"`
	DefaultProvider string                    `yaml:"default_provider"`
	// WebAllowHosts are hosts web_fetch may reach although they resolve to a private or
	// loopback address (web_fetch reaches public addresses only otherwise), and the only
	// hosts a subagent in plan mode fetches without asking.
	WebAllowHosts []string `yaml:"web_allow_hosts"`
	// EnvPassthrough names environment variables that subagents' shells, hooks and MCP
	// servers get besides the allow-list (tools.AllowEnv). summit reads it from the user's
	// own config only: a repository's must not choose which secrets leave.
	EnvPassthrough []string `yaml:"env_passthrough"`
	// MCPServers are the MCP servers whose tools summit's own subagents may call (agents/mcp),
	// by name; the workspace file's entry replaces the user file's of the same name.
	MCPServers map[string]MCPServer `yaml:"mcp_servers"`
	// ACPAgents are external agents speaking the Agent Client Protocol (agents/acp), by the
	// name /delegate --agent-type uses; the workspace file's entry replaces the user file's.
	ACPAgents map[string]ACPAgent `yaml:"acp_agents"`
	// Remotes are agents that live elsewhere, served over the Summit Agent ABI (summit serve
	// or any server of it), by the name /delegate --agent-type uses.
	Remotes map[string]Remote `yaml:"remotes"`
	// Hooks are the user's commands run on session events (session/hooks).
	Hooks Hooks `yaml:"hooks"`
	// Verify is the check /apply runs on a merged result before it lands (issue 27).
	Verify Verify `yaml:"verify"`
	// Runners is where remote runners are reached (session/runners); --nats overrides it.
	Runners Runners `yaml:"runners"`
}

// Runners is the runners: section: the NATS server through which the session reaches remote
// runners (`summit runner`) for /delegate --on, and the credentials it uses. --nats and
// --creds override it. A workspace's section counts only when the workspace is trusted (it
// sends the session's tasks and code to a server). creds is a file path: ~/ is the home
// directory, and a relative path is relative to the config file that names it.
//
//	runners:
//	  nats: nats://nats.internal:4222
//	  creds: ~/.config/summit/runner.creds
//	  # insecure: true          # no credentials: loopback only
type Runners struct {
	NATS  string `yaml:"nats"`
	Creds string `yaml:"creds"`
	// Insecure allows a server without credentials, on loopback only (as --insecure).
	Insecure bool `yaml:"insecure"`
	// File is the config file the section came from.
	File string `yaml:"-"`
}

// Check validates the section: a NATS URL (nats, tls, ws or wss, with a host) and creds only
// beside it.
func (r Runners) Check() error {
	if r.NATS == "" {
		if r.Creds != "" || r.Insecure {
			return errors.New("no nats: name the NATS server (nats: nats://HOST:4222)")
		}
		return nil
	}
	for _, u := range strings.Split(r.NATS, ",") { // NATS takes a comma-separated server list
		p, err := url.Parse(strings.TrimSpace(u))
		if err != nil || p.Host == "" || !slices.Contains([]string{"nats", "tls", "ws", "wss"}, p.Scheme) {
			return fmt.Errorf("nats: %q is not a NATS URL (nats://HOST:4222, tls://, ws:// or wss://)", u)
		}
	}
	return nil
}

// CredsPath is creds resolved: ~/ from home, a relative path from the config file's folder.
func (r Runners) CredsPath(home string) string {
	switch {
	case r.Creds == "" || filepath.IsAbs(r.Creds):
		return r.Creds
	case strings.HasPrefix(r.Creds, "~/"):
		return filepath.Join(home, r.Creds[2:])
	case r.File != "":
		return filepath.Join(filepath.Dir(r.File), r.Creds)
	}
	return r.Creds
}

// Verify is the verify: section: a shell command /apply runs on the merged result in a scratch
// worktree before anything lands (a failure refuses the apply unless --force), its timeout,
// and optional commands by agent type or name for /apply sa-N of that agent. /apply --verify
// CMD overrides it. The workspace file's section replaces the user file's; it runs only in a
// trusted workspace (an untrusted one starts no process).
//
//	verify:
//	  command: go test ./...
//	  timeout: 300              # seconds; default 300, at most 600
//	  agents:                   # by agent type or name (optional)
//	    tester: go vet ./...
type Verify struct {
	Command string            `yaml:"command"`
	Timeout int               `yaml:"timeout"`
	Agents  map[string]string `yaml:"agents"`
	// Workspace is set when the section came from the workspace's .summit/config.yaml.
	Workspace bool `yaml:"-"`
}

// DefaultVerifyTimeout and MaxVerifyTimeout bound a verify command (seconds); the confined
// shell never runs longer than MaxVerifyTimeout.
const (
	DefaultVerifyTimeout = 300
	MaxVerifyTimeout     = 600
)

// Check reports what is wrong with a verify: section.
func (v Verify) Check() error {
	switch {
	case v.Timeout < 0 || v.Timeout > MaxVerifyTimeout:
		return fmt.Errorf("timeout %d: want seconds from 1 to %d (0 = the default, %d)", v.Timeout, MaxVerifyTimeout, DefaultVerifyTimeout)
	case v.Command == "" && len(v.Agents) == 0 && v.Timeout != 0:
		return errors.New("a timeout without a command: add command: (e.g. go test ./...)")
	}
	if strings.ContainsRune(v.Command, 0) {
		return errors.New("command holds a NUL byte")
	}
	for _, name := range sortedKeys(v.Agents) {
		if strings.TrimSpace(v.Agents[name]) == "" || strings.ContainsRune(v.Agents[name], 0) {
			return fmt.Errorf("agents.%s: want a shell command", name)
		}
	}
	return nil
}

// CommandFor is the verify command for an agent (its name first, then its type; "" for
// none), falling back to Command.
func (v Verify) CommandFor(agentName, agentType string) string {
	for _, k := range []string{agentName, agentType} {
		if c := v.Agents[k]; k != "" && c != "" {
			return c
		}
	}
	return v.Command
}

// TimeoutOr is the timeout in seconds, the default when unset.
func (v Verify) TimeoutOr() int {
	if v.Timeout <= 0 {
		return DefaultVerifyTimeout
	}
	return v.Timeout
}

// Empty reports whether no verify command is configured.
func (v Verify) Empty() bool { return v.Command == "" && len(v.Agents) == 0 }

// HookEvents are the events a hook may name that run, in documentation order: summit's own
// six, then Claude Code's with a counterpart in summit (session/hooks' doc says where each
// runs; SessionEnd is SessionEnded under Claude Code's name).
var HookEvents = []string{"SubagentStart", "SubagentStop", "PermissionRequested", "ConflictDetected",
	"ConvergenceComplete", "SessionEnded",
	"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "Notification", "SessionEnd"}

// InertHookEvents are Claude Code's hook events summit has no counterpart for (no main agent
// whose context is compacted, no slash-command expansion, no teammates...). A pasted settings
// block that names them loads: their entries are checked as any other, then left out with a
// warning (Hooks.Warnings) that names them as having no effect.
var InertHookEvents = []string{"PermissionRequest", "PermissionDenied", "PostToolBatch", "UserPromptExpansion",
	"StopFailure", "PreCompact", "PostCompact", "SessionStart", "Setup", "Elicitation", "ElicitationResult",
	"TeammateIdle", "TaskCreated", "TaskCompleted", "InstructionsLoaded", "CwdChanged", "FileChanged",
	"ConfigChange", "WorktreeCreate", "WorktreeRemove", "PreModelSwitch", "PostModelSwitch", "MessageDisplay",
	"DirectoryAdded"}

// DefaultHookTimeout is a hook's timeout when its entry gives none (seconds), MaxHookTimeout
// the largest one accepted; DefaultHookMaxBlocks bounds the SubagentStop blocks of one
// subagent when max_blocks is not set, MaxHookMaxBlocks when it is.
const (
	DefaultHookTimeout   = 60
	MaxHookTimeout       = 3600
	DefaultHookMaxBlocks = 3
	MaxHookMaxBlocks     = 20
)

// Hooks is the hooks: section. Its keys are event names (Events) and max_blocks.
type Hooks struct {
	MaxBlocks int               `yaml:"max_blocks"`
	Events    map[string][]Hook `yaml:",inline"`
	// Warnings name, with file:line, what loads but has no effect: entries of InertHookEvents
	// and hooks of a type summit does not run (prompt, http, agent).
	Warnings []string `yaml:"-"`
}

// Hook is one configured command.
type Hook struct {
	Matcher string `yaml:"matcher"`
	Command string `yaml:"command"`
	// Timeout in seconds (0 = DefaultHookTimeout).
	Timeout int `yaml:"timeout"`
	// Type and Hooks read Claude Code's shape, so its settings can be pasted as they are:
	// {matcher, hooks: [{type: command, command, timeout}, ...]} is one entry per command, each
	// with the outer matcher. command is the only type summit runs.
	Type  string `yaml:"type"`
	Hooks []Hook `yaml:"hooks"`
	// Claude Code's other fields, read so its settings paste as they are: statusMessage, once
	// and async change nothing in summit (its hooks never print a status line, and a hook
	// that decides nothing already runs off the session's path); prompt, model, url, headers
	// and allowedEnvVars belong to the hook types summit does not run (a warning says so).
	StatusMessage  string            `yaml:"statusMessage"`
	Once           bool              `yaml:"once"`
	Async          bool              `yaml:"async"`
	Prompt         string            `yaml:"prompt"`
	Model          string            `yaml:"model"`
	URL            string            `yaml:"url"`
	Headers        map[string]string `yaml:"headers"`
	AllowedEnvVars []string          `yaml:"allowedEnvVars"`
	// File and Line are where the entry is (set by LoadConfig); Workspace is true for an entry
	// of the workspace's file, whose hooks need the user's trust.
	File      string `yaml:"-"`
	Line      int    `yaml:"-"`
	Workspace bool   `yaml:"-"`
}

// TimeoutOr is the entry's timeout in seconds, DefaultHookTimeout when it gives none.
func (h Hook) TimeoutOr() int {
	if h.Timeout <= 0 {
		return DefaultHookTimeout
	}
	return h.Timeout
}

// Check says what is wrong with the entry, or nil.
func (h Hook) Check() error {
	switch {
	case strings.TrimSpace(h.Command) == "":
		return errors.New("command is required: the shell command to run (bash -c)")
	case h.Timeout < 0 || h.Timeout > MaxHookTimeout:
		return fmt.Errorf("timeout %d: want seconds from 1 to %d (0 or absent = %d)", h.Timeout, MaxHookTimeout, DefaultHookTimeout)
	case strings.ContainsRune(h.Command, 0):
		return errors.New("command holds a NUL byte")
	}
	if _, err := CompileMatcher(h.Matcher); err != nil {
		return err
	}
	return nil
}

// CompileMatcher compiles a hook's matcher: nil (every agent) for "" and "*", else the
// expression anchored at both ends.
func CompileMatcher(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	re, err := regexp.Compile(`^(?:` + m + `)$`)
	if err != nil {
		return nil, fmt.Errorf("matcher %q is not a regular expression: %v", m, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// Empty reports whether no hook is configured.
func (h Hooks) Empty() bool {
	for _, l := range h.Events {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

// WorkspaceOnly is the part of h the workspace's file configured: the part that needs trust.
func (h Hooks) WorkspaceOnly() Hooks {
	out := Hooks{MaxBlocks: h.MaxBlocks}
	for ev, l := range h.Events {
		for _, e := range l {
			if e.Workspace {
				if out.Events == nil {
					out.Events = map[string][]Hook{}
				}
				out.Events[ev] = append(out.Events[ev], e)
			}
		}
	}
	return out
}

// ProviderConfig is one configured backend.
type ProviderConfig struct {
	Kind    string `yaml:"kind"` // openai | anthropic | gemini | ollama | script
	BaseURL string `yaml:"base_url"`
	KeyEnv  string `yaml:"key_env"`
	Model   string `yaml:"model"`
	// Headers are extra HTTP headers on every request (OpenRouter's HTTP-Referer and X-Title,
	// a proxy's). Query adds URL query parameters (Azure's api-version). Body sets top-level
	// fields of every request body (OpenRouter's provider preferences). KeyHeader carries the
	// key in that header instead of the kind's own (Azure OpenAI: api-key). Values may name
	// environment variables as $VAR or ${VAR}; they are read when a request is made and never
	// recorded.
	Headers   map[string]string `yaml:"headers"`
	Query     map[string]string `yaml:"query"`
	Body      map[string]any    `yaml:"body"`
	KeyHeader string            `yaml:"key_header"`
	// ThinkingBudget is the thinking token budget: for anthropic it enables extended thinking
	// (0 = off); for gemini it caps thinking (0 = the model's default, -1 = the model decides).
	ThinkingBudget int `yaml:"thinking_budget"`
	// NumCtx is the context size in tokens that kind ollama asks for on every request
	// (options.num_ctx; 0 = the server's default, often too small for an agent's prompt, which
	// Ollama then truncates without saying so).
	NumCtx int `yaml:"num_ctx"`
	// via is the router's transport, when it has one (Router.Via): clientFor uses it.
	via http.RoundTripper
}

// Route maps a model name to a provider and a concrete model.
type Route struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// Fallbacks are tried in order when the model is not found or not available: models on
	// the same provider, or provider/model.
	Fallbacks []string `yaml:"fallbacks"`
	// Price is what the model costs, in US dollars per million tokens; with it summit records
	// each subagent's cost.
	Price *Price `yaml:"price"`
	// ReasoningEffort (minimal, low, medium, high) is sent as reasoning_effort to an
	// OpenAI-compatible server and as the thinking level to Gemini. ThinkingBudget overrides
	// the provider's thinking_budget for this model (Anthropic, Gemini).
	ReasoningEffort string `yaml:"reasoning_effort"`
	ThinkingBudget  *int   `yaml:"thinking_budget"`
}

// Price is a model's price in US dollars per million input and output tokens.
type Price struct {
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
}

// Cost is what u costs at p, in US dollars.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output) / 1e6
}

// Kinds are the provider kinds a configuration may name.
var Kinds = []string{"openai", "anthropic", "gemini", "script", "ollama"}

// LoadConfig reads and merges the two files; missing files are fine. Errors name file:line.
// It takes the workspace's file as trusted: a caller that starts anything from the result
// must use LoadConfigGated with the workspace's trust (session/trust) instead.
func LoadConfig(workspace, userConfigDir string) (Config, error) {
	c, _, err := LoadConfigGated(workspace, userConfigDir, true)
	return c, err
}

// WorkspaceEntry is one entry of a workspace's .summit/config.yaml that has effect only once
// the user trusts the workspace: every section of that file can start a command, choose where
// a key is sent, widen the network or route models, so the whole file is gated.
type WorkspaceEntry struct {
	Section string // mcp_servers, acp_agents, providers, models, default_provider, remotes, hooks, web_allow_hosts, verify, runners
	Name    string // the entry's key ("" for a section without names)
	Detail  string // what it would do: the command, URL or key variable it names
}

func (e WorkspaceEntry) String() string {
	s := e.Section
	if e.Name != "" {
		s += "." + e.Name
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// LoadConfigGated is LoadConfig with the workspace's trust: when trusted is false the
// workspace's .summit/config.yaml is still read and checked (a broken file is an error either
// way) but none of it is merged, and its entries are returned as what was left out. Why the
// whole file and not only the dangerous keys: a provider entry without base_url still sends
// its headers (with $VAR values) somewhere, a models route can point a tier at another
// provider, and a section added later is gated by default instead of open by default.
func LoadConfigGated(workspace, userConfigDir string, trusted bool) (Config, []WorkspaceEntry, error) {
	var merged Config
	var ignored []WorkspaceEntry
	wsFile := ""
	if workspace != "" {
		wsFile = filepath.Join(workspace, ".summit", "config.yaml")
	}
	var files []string
	if userConfigDir != "" {
		files = append(files, filepath.Join(userConfigDir, "config.yaml"))
	}
	if workspace != "" {
		files = append(files, filepath.Join(workspace, ".summit", "config.yaml"))
	}
	for _, f := range files {
		data, err := readCapped(f, MaxConfigFile, "a config file")
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Config{}, nil, err
		}
		// yaml.v3 resolves aliases while it decodes, and refuses some bombs with a message
		// that names no line; check them first on the node tree, with the tapes' rule.
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) == nil {
			if err := expandAliases(&doc, f); err != nil {
				return Config{}, nil, err
			}
		}
		var c Config
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil && !errors.Is(err, errEOF(err)) {
			return Config{}, nil, fmt.Errorf("%s: %v", f, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		merged := &merged
		if f == wsFile && !trusted {
			// Checked as a trusted file would be (merged into a scratch config), so a broken
			// file is found now, not after trusting it; nothing of it reaches the result.
			merged = &Config{}
			ignored = workspaceEntries(c)
		}
		for name, p := range c.Providers {
			if !contains(Kinds, p.Kind) {
				return Config{}, nil, fmt.Errorf("%s:%d: provider %s: kind %q is not one of %s", f, keyLine(data, name), name, p.Kind, strings.Join(Kinds, ", "))
			}
			if merged.Providers == nil {
				merged.Providers = map[string]ProviderConfig{}
			}
			merged.Providers[name] = p
		}
		for name, r := range c.Models {
			if merged.Models == nil {
				merged.Models = map[string]Route{}
			}
			merged.Models[name] = r
		}
		merged.WebAllowHosts = append(merged.WebAllowHosts, c.WebAllowHosts...)
		merged.EnvPassthrough = append(merged.EnvPassthrough, c.EnvPassthrough...)
		for name, m := range c.MCPServers { // MCP servers: checked here, merged by name
			if err := m.Check(name); err != nil {
				return Config{}, nil, fmt.Errorf("%s:%d: mcp_servers.%s: %v", f, sectionKeyLine(&doc, "mcp_servers", name), name, err)
			}
			if merged.MCPServers == nil {
				merged.MCPServers = map[string]MCPServer{}
			}
			merged.MCPServers[name] = m
		}
		for name, a := range c.ACPAgents { // ACP agents: checked here, merged by name
			if err := a.Check(name); err != nil {
				return Config{}, nil, fmt.Errorf("%s:%d: acp_agents.%s: %v", f, sectionKeyLine(&doc, "acp_agents", name), name, err)
			}
			if merged.ACPAgents == nil {
				merged.ACPAgents = map[string]ACPAgent{}
			}
			a.File = f
			merged.ACPAgents[name] = a
		}
		for name, r := range c.Remotes { // remote ABI agents: checked here, merged by name
			if err := r.Check(name); err != nil {
				return Config{}, nil, fmt.Errorf("%s:%d: remotes.%s: %v", f, sectionKeyLine(&doc, "remotes", name), name, err)
			}
			if merged.Remotes == nil {
				merged.Remotes = map[string]Remote{}
			}
			r.File = f
			merged.Remotes[name] = r
		}
		if c.Runners.NATS != "" || c.Runners.Creds != "" || c.Runners.Insecure {
			if err := c.Runners.Check(); err != nil {
				return Config{}, nil, fmt.Errorf("%s:%d: runners: %v", f, keyLine(data, "runners"), err)
			}
			c.Runners.File = f
			merged.Runners = c.Runners
		}
		if err := mergeHooks(&merged.Hooks, c.Hooks, f, &doc, f == wsFile); err != nil {
			return Config{}, nil, err
		}
		if c.DefaultProvider != "" {
			merged.DefaultProvider = c.DefaultProvider
		}
		if !c.Verify.Empty() || c.Verify.Timeout != 0 {
			if err := c.Verify.Check(); err != nil {
				return Config{}, nil, fmt.Errorf("%s:%d: verify: %v", f, keyLine(data, "verify"), err)
			}
			c.Verify.Workspace = f == wsFile
			merged.Verify = c.Verify
		}
	}
	for name, r := range merged.Models {
		if p := r.Price; p != nil && (p.Input < 0 || p.Output < 0 || p.Input != p.Input || p.Output != p.Output) {
			return Config{}, nil, fmt.Errorf("models.%s.price: input and output are US dollars per million tokens, numbers ≥ 0", name)
		}
		switch r.ReasoningEffort {
		case "", "minimal", "low", "medium", "high":
		default:
			return Config{}, nil, fmt.Errorf("models.%s.reasoning_effort %q: want minimal, low, medium or high", name, r.ReasoningEffort)
		}
		if b := r.ThinkingBudget; b != nil && *b < -1 {
			return Config{}, nil, fmt.Errorf("models.%s.thinking_budget %d: want a number of tokens (0 = off, -1 = the model decides on Gemini)", name, *b)
		}
		if _, ok := merged.Providers[r.Provider]; !ok && r.Provider != "script" {
			return Config{}, nil, fmt.Errorf("models.%s routes to provider %q, which is not configured (configured: %s)", name, r.Provider, strings.Join(sortedKeys(merged.Providers), ", "))
		}
	}
	if d := merged.DefaultProvider; d != "" && d != "script" {
		if _, ok := merged.Providers[d]; !ok {
			return Config{}, nil, fmt.Errorf("default_provider %q is not configured", d)
		}
	}
	return merged, ignored, nil
}

// workspaceEntries lists what a workspace file configures, section by section, for the
// question that trusts it and the notice that says it was ignored.
func workspaceEntries(c Config) []WorkspaceEntry {
	var out []WorkspaceEntry
	for _, n := range sortedKeys(c.MCPServers) {
		m := c.MCPServers[n]
		d := "url " + m.URL
		if m.Command != "" {
			d = "runs " + strings.TrimSpace(m.Command+" "+strings.Join(m.Args, " "))
		}
		out = append(out, WorkspaceEntry{"mcp_servers", n, d})
	}
	for _, n := range sortedKeys(c.ACPAgents) {
		a := c.ACPAgents[n]
		out = append(out, WorkspaceEntry{"acp_agents", n, "runs " + strings.TrimSpace(a.Command+" "+strings.Join(a.Args, " "))})
	}
	for _, n := range sortedKeys(c.Providers) {
		p := c.Providers[n]
		d := "kind " + p.Kind
		if p.BaseURL != "" {
			d += ", base_url " + p.BaseURL
		}
		if p.KeyEnv != "" {
			d += ", key from $" + p.KeyEnv
		}
		out = append(out, WorkspaceEntry{"providers", n, d})
	}
	for _, n := range sortedKeys(c.Models) {
		r := c.Models[n]
		out = append(out, WorkspaceEntry{"models", n, "routes to " + r.Provider + " " + r.Model})
	}
	if c.DefaultProvider != "" {
		out = append(out, WorkspaceEntry{"default_provider", "", c.DefaultProvider})
	}
	for _, n := range sortedKeys(c.Remotes) {
		r := c.Remotes[n]
		d := "url " + r.URL
		if r.TokenEnv != "" {
			d += ", token from $" + r.TokenEnv
		}
		out = append(out, WorkspaceEntry{"remotes", n, d})
	}
	for _, ev := range HookEvents {
		for _, h := range c.Hooks.Events[ev] {
			for _, n := range append([]Hook{h}, h.Hooks...) {
				if n.Command != "" {
					out = append(out, WorkspaceEntry{"hooks", ev, "runs " + n.Command})
				}
			}
		}
	}
	if c.Runners.NATS != "" {
		out = append(out, WorkspaceEntry{"runners", "", "sends /delegate --on tasks and code through " + c.Runners.NATS})
	}
	if len(c.WebAllowHosts) > 0 {
		out = append(out, WorkspaceEntry{"web_allow_hosts", "", "web_fetch may reach " + strings.Join(c.WebAllowHosts, ", ")})
	}
	if c.Verify.Command != "" {
		out = append(out, WorkspaceEntry{"verify", "", "/apply runs " + c.Verify.Command})
	}
	for _, n := range sortedKeys(c.Verify.Agents) {
		out = append(out, WorkspaceEntry{"verify", n, "/apply sa-N of " + n + " runs " + c.Verify.Agents[n]})
	}
	return out
}

// errEOF lets an empty file pass: yaml.v3 reports io.EOF for it.
func errEOF(err error) error {
	if err != nil && err.Error() == "EOF" {
		return err
	}
	return errors.New("not EOF")
}

func keyLine(data []byte, key string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), key+":") {
			return i + 1
		}
	}
	return 1
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Empty reports whether nothing is configured.
func (c Config) Empty() bool {
	return len(c.Providers) == 0 && len(c.Models) == 0 && c.DefaultProvider == ""
}

// Router resolves model names to providers.
type Router struct {
	c      Config
	script Provider
	getenv func(string) string
	forced string
	built  map[string]Provider
	// via carries every provider's requests (a runner's transport to the session; forward.go).
	via http.RoundTripper
}

// NewRouter routes with c; script is the script provider.
func NewRouter(c Config, script Provider, getenv func(string) string) *Router {
	if getenv == nil {
		getenv = os.Getenv
	}
	return &Router{c: c, script: script, getenv: getenv, built: map[string]Provider{}}
}

// builtins are the providers --provider may name without configuration.
var builtins = map[string]ProviderConfig{
	"openai":    {Kind: "openai", BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY"},
	"anthropic": {Kind: "anthropic", KeyEnv: "ANTHROPIC_API_KEY"},
	"gemini":    {Kind: "gemini", KeyEnv: "GEMINI_API_KEY"},
	// 8192 tokens of context: Ollama's own default (2048 or 4096, by version) is smaller than an
	// agent's system prompt, tools and first results, and Ollama truncates without saying so.
	"ollama": {Kind: "ollama", BaseURL: "http://localhost:11434", NumCtx: 8192},
}

// Forcible lists the providers --provider may name without configuration: script and the
// built-in ones, sorted. The flag's help is built from it, so it names every one Force accepts.
func Forcible() []string { return append([]string{"script"}, sortedKeys(builtins)...) }

// Force sends every request to one provider (--provider).
func (r *Router) Force(name string) error {
	if name == "script" {
		r.forced = name
		return nil
	}
	if _, ok := r.c.Providers[name]; !ok {
		if _, ok := builtins[name]; !ok {
			known := append(Forcible(), sortedKeys(r.c.Providers)...)
			return fmt.Errorf("unknown provider %q (known: %s)", name, strings.Join(known, ", "))
		}
	}
	if _, err := r.provider(name); err != nil {
		return err
	}
	r.forced = name
	return nil
}

// Describe names the routing for SessionStarted.provider.
func (r *Router) Describe() string {
	switch {
	case r.forced != "":
		return r.forced
	case r.c.Empty():
		return "script"
	case r.c.DefaultProvider != "":
		return r.c.DefaultProvider
	}
	return strings.Join(sortedKeys(r.c.Providers), ",")
}

func isAlias(m string) bool { return m == "fast" || m == "default" || m == "deep" }

func isAliasOr(m string) string {
	if isAlias(m) {
		return ""
	}
	return m
}

// factories build providers by kind; openai.go and anthropic.go register theirs.
var factories = map[string]func(name string, c ProviderConfig, getenv func(string) string) (Provider, error){}

func (r *Router) provider(name string) (Provider, error) {
	if name == "script" {
		return r.script, nil
	}
	if p, ok := r.built[name]; ok {
		return p, nil
	}
	c, ok := r.c.Providers[name]
	if !ok {
		c = builtins[name]
	}
	if c.Kind == "script" {
		return r.script, nil
	}
	c.via = r.via
	f, ok := factories[c.Kind]
	if !ok {
		return nil, fmt.Errorf("provider %s: kind %q is not available in this build", name, c.Kind)
	}
	p, err := f(name, c, r.getenv)
	if err != nil {
		return nil, err
	}
	r.built[name] = p
	return p, nil
}

// DetectOllama reports whether an Ollama server answers GET baseURL/api/tags before ctx ends
// (the caller gives it 300 ms).
func DetectOllama(ctx context.Context, baseURL string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(baseURL, "/")+"/api/tags", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// MCP servers (agents/mcp runs them). In a config file:
//
//	mcp_servers:
//	  everything: {command: node, args: [server/dist/index.js, stdio], env: {K: V}}
//	  docs: {url: "http://127.0.0.1:9000/mcp", headers: {Authorization: "Bearer ${DOCS_TOKEN}"}, allow: [search]}
//
// Claude Code agent files write the same shape under `mcpServers` (type: stdio, http or sse).

// MCPServer is one MCP server: a command speaking MCP on stdin/stdout, or the URL of a
// streamable HTTP (or legacy SSE) endpoint. Env, url and header values may name environment
// variables as $VAR or ${VAR}, command and args as ${VAR}; they are read when the server
// starts and never recorded.
type MCPServer struct {
	Type    string            `yaml:"type"` // stdio | http | sse; "" = stdio with command, http with url
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// Allow names the server's tools (its own names; * patterns work) that run without asking;
	// the others ask like the shell.
	Allow []string `yaml:"allow"`
	// TimeoutS bounds one call of a tool, in seconds (default 120).
	TimeoutS int `yaml:"timeout_s"`
	// Network gives the server the network when it runs jailed for one subagent (a server
	// with a tool that may write, see agents/mcp); without it that server has none, loopback
	// included, unless the subagent may web_fetch. A server started through npx that is not
	// installed yet needs it to download itself.
	Network bool `yaml:"network" json:",omitempty"`
}

// MCPServerName is what a server name may be: it becomes part of the tool names
// mcp__<server>__<tool>, which model APIs restrict to these characters.
var MCPServerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// Check says what is wrong with the server named name, or nil.
func (s MCPServer) Check(name string) error {
	switch {
	case !MCPServerName().MatchString(name):
		return fmt.Errorf("the name %q may hold only letters, digits, _ and -", name)
	case (s.Command == "") == (s.URL == ""):
		return errors.New("give exactly one of command (a stdio server) and url (an HTTP server)")
	case s.TimeoutS < 0:
		return fmt.Errorf("timeout_s %d: want a number of seconds", s.TimeoutS)
	}
	switch s.Type {
	case "", "stdio", "http", "sse", "streamable-http", "streamableHttp":
	default:
		return fmt.Errorf("type %q: want stdio, http or sse", s.Type)
	}
	if (s.Type == "stdio") != (s.Command != "") && s.Type != "" {
		return fmt.Errorf("type %s does not go with %s", s.Type, map[bool]string{true: "command", false: "url"}[s.Command != ""])
	}
	if s.Command == "" && (len(s.Args) > 0 || len(s.Env) > 0) {
		return errors.New("args and env are for a command; an HTTP server takes url and headers")
	}
	if s.URL == "" && len(s.Headers) > 0 {
		return errors.New("headers are for an HTTP server (url)")
	}
	return nil
}

// ACP agents (agents/acp runs them). In a config file:
//
//	acp_agents:
//	  gemini-cli: {command: gemini, args: [--acp], env: {GEMINI_API_KEY: $GEMINI_API_KEY}}
//	  my-agent:   {command: /opt/agent/bin/agent, args: [acp]}
//
// The key is the name /delegate --agent-type takes. Env values may name summit's environment
// variables as $VAR or ${VAR}; they are read when the agent starts and never recorded.
//
// The agent process is confined like an isolated subagent's shell: it writes only in its
// worktree, a temp dir of its own, /dev and the build caches (Linux Landlock). writable adds
// where else it may write, its own state: paths starting with /, ~ or a variable ($VAR,
// ${VAR}, ${VAR:-default}, read from the agent's environment); one ending in / is a
// directory, created when missing; none may reach the workspace's .summit/ or summit's own
// directories (the agent then does not start):
//
//	acp_agents:
//	  my-agent: {command: my-agent, writable: ["${MY_AGENT_HOME:-~/.my-agent}/"]}
//
// mcp_servers names servers of the config's mcp_servers that the agent gets in its session
// (agents/acp starts none itself; the agent does, confined as it is):
//
//	acp_agents:
//	  claude-code: {command: claude-agent-acp, mcp_servers: [everything]}
//
// An entry whose command is a built-in's program (claude-agent-acp, codex-acp, gemini) gets
// that built-in's state directories too (agents/acp).

// ACPAgent is one external agent: a command speaking ACP on stdin/stdout.
type ACPAgent struct {
	Command  string            `yaml:"command"`
	Args     []string          `yaml:"args"`
	Env      map[string]string `yaml:"env"`
	Writable []string          `yaml:"writable"`
	// MCPServers names servers of mcp_servers the agent gets in its session/new (it runs
	// them itself, confined as it is): its own MCP tools, asked about like any tool of it.
	MCPServers []string `yaml:"mcp_servers"`
	// File is the config file that defined it (set by LoadConfig).
	File string `yaml:"-"`
}

var (
	acpAgentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })
	envVarName   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// Check says what is wrong with the ACP agent named name, or nil.
func (a ACPAgent) Check(name string) error {
	switch {
	case !acpAgentName().MatchString(name):
		return fmt.Errorf("the name %q is not kebab-case (lower-case words joined by hyphens), as agent names are", name)
	case strings.TrimSpace(a.Command) == "":
		return errors.New("command is required: the program that speaks ACP on stdin/stdout")
	}
	for k := range a.Env {
		if !envVarName().MatchString(k) {
			return fmt.Errorf("env %q is not a variable name", k)
		}
	}
	for _, s := range a.MCPServers {
		if !MCPServerName().MatchString(s) {
			return fmt.Errorf("mcp_servers: %q is not a server name (a key of mcp_servers)", s)
		}
	}
	for _, w := range a.Writable {
		// A relative path would be relative to whatever directory the agent starts in.
		if !strings.HasPrefix(w, "/") && w != "~" && !strings.HasPrefix(w, "~/") && !strings.HasPrefix(w, "$") {
			return fmt.Errorf("writable %q is not an absolute path (start it with /, ~ or $VAR)", w)
		}
	}
	return nil
}

// sectionKeyLine is the line of <section>.<name> in a parsed config file (the section's line
// when the name is not found, 1 when neither is).
func sectionKeyLine(doc *yaml.Node, section, name string) int {
	if doc == nil || len(doc.Content) == 0 {
		return 1
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != section {
			continue
		}
		m := top.Content[i+1]
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == name {
				return m.Content[j].Line
			}
		}
		return top.Content[i].Line
	}
	return 1
}

// Remote ABI agents (agents/remote reaches them). In a config file:
//
//	remotes:
//	  researcher: {url: "https://agents.example.com:8787", agent: deep-researcher, token_env: RESEARCH_TOKEN}
//
// The key is the name /delegate --agent-type takes; agent is the agentId on the server
// (default: the key); token_env names the variable holding its bearer token (read when a
// delegation starts, never recorded).

// Remote is one agent served elsewhere over the Summit Agent ABI.
type Remote struct {
	URL      string `yaml:"url"`
	Agent    string `yaml:"agent"`
	TokenEnv string `yaml:"token_env"`
	// File is the config file that defined it (set by LoadConfig).
	File string `yaml:"-"`
}

// Check says what is wrong with the remote agent named name, or nil.
func (r Remote) Check(name string) error {
	switch {
	case !acpAgentName().MatchString(name):
		return fmt.Errorf("the name %q is not kebab-case (lower-case words joined by hyphens), as agent names are", name)
	case r.URL == "":
		return errors.New("url is required: the server's address, such as http://127.0.0.1:8787")
	case !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://"):
		return fmt.Errorf("url %q: want http:// or https://", r.URL)
	case r.TokenEnv != "" && !envVarName().MatchString(r.TokenEnv):
		return fmt.Errorf("token_env %q is not a variable name", r.TokenEnv)
	}
	return nil
}

// mergeHooks checks one file's hooks: section and appends its entries to merged (both files'
// entries apply). Errors name file:line and, for an unknown event, the nearest event name.
// Entries of InertHookEvents and hooks of another type than command are checked, then left
// out with a warning.
func mergeHooks(merged *Hooks, c Hooks, f string, doc *yaml.Node, workspace bool) error {
	for _, ev := range sortedKeys(c.Events) {
		inert := contains(InertHookEvents, ev)
		if !contains(HookEvents, ev) && !inert {
			hint := ""
			all := append(append([]string{}, HookEvents...), InertHookEvents...)
			if n := commands.Nearest(ev, all); n != "" {
				hint = fmt.Sprintf(" (did you mean %s?)", n)
			}
			return fmt.Errorf("%s:%d: hooks.%s: not a hook event%s; events: %s, and max_blocks", f, sectionKeyLine(doc, "hooks", ev), ev, hint, strings.Join(HookEvents, ", "))
		}
		lines := hookEntryLines(doc, ev)
		for i, h := range c.Events[ev] {
			h.File, h.Workspace = f, workspace
			if i < len(lines) {
				h.Line = lines[i]
			} else {
				h.Line = sectionKeyLine(doc, "hooks", ev)
			}
			list := []Hook{h}
			if len(h.Hooks) > 0 { // Claude Code's shape: its commands, each with the matcher
				if h.Command != "" {
					return fmt.Errorf("%s:%d: hooks.%s[%d]: an entry has a command or a hooks: list (Claude Code's shape), not both", f, h.Line, ev, i)
				}
				list = nil
				for _, n := range h.Hooks {
					if len(n.Hooks) > 0 || n.Matcher != "" {
						return fmt.Errorf("%s:%d: hooks.%s[%d].hooks: an inner entry takes type, command and timeout only", f, h.Line, ev, i)
					}
					n.Matcher, n.File, n.Line, n.Workspace = h.Matcher, h.File, h.Line, h.Workspace
					list = append(list, n)
				}
			}
			for _, h := range list {
				switch h.Type {
				case "", "command":
				case "prompt", "http", "agent", "mcp_tool":
					merged.Warnings = append(merged.Warnings, fmt.Sprintf("%s:%d: hooks.%s[%d]: a %s hook has no effect: summit runs command hooks only", f, h.Line, ev, i, h.Type))
					continue
				default:
					return fmt.Errorf("%s:%d: hooks.%s[%d]: type %q: summit runs command hooks only", f, h.Line, ev, i, h.Type)
				}
				if err := h.Check(); err != nil {
					return fmt.Errorf("%s:%d: hooks.%s[%d]: %v", f, h.Line, ev, i, err)
				}
				if inert {
					merged.Warnings = append(merged.Warnings, fmt.Sprintf("%s:%d: hooks.%s: Claude Code's %s has no counterpart in summit: this hook has no effect", f, h.Line, ev, ev))
					continue
				}
				h.Type, h.Hooks = "", nil
				if merged.Events == nil {
					merged.Events = map[string][]Hook{}
				}
				merged.Events[ev] = append(merged.Events[ev], h)
			}
		}
	}
	if c.MaxBlocks < 0 || c.MaxBlocks > MaxHookMaxBlocks {
		return fmt.Errorf("%s:%d: hooks.max_blocks %d: want 1 to %d (absent = %d)", f, sectionKeyLine(doc, "hooks", "max_blocks"), c.MaxBlocks, MaxHookMaxBlocks, DefaultHookMaxBlocks)
	}
	if c.MaxBlocks > 0 {
		merged.MaxBlocks = c.MaxBlocks
	}
	return nil
}

// hookEntryLines are the lines of the entries of hooks.<event> in a parsed config file.
func hookEntryLines(doc *yaml.Node, event string) []int {
	if doc == nil || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "hooks" {
			continue
		}
		m := top.Content[i+1]
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value != event {
				continue
			}
			var out []int
			for _, n := range m.Content[j+1].Content {
				out = append(out, n.Line)
			}
			return out
		}
	}
	return nil
}
