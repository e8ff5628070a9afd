package agents

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Options says where to look for agents. Every field is optional.
type Options struct {
	// UserConfigDir is the user's summit config directory; its agents/
	// subdirectory is searched (e.g. ~/.config/summit).
	UserConfigDir string
	// Workspace is the project root; resources/agents, .claude/agents,
	// .gemini/agents and .summit/agents under it are searched.
	Workspace string
	// Dirs are --agents directories, searched last (they win).
	Dirs []string
	// Env supplies overrides and SUMMIT_DISABLED_AGENTS; nil means none.
	Env Env
	// NoBuiltins leaves out the embedded agents (for `agents validate PATH`).
	NoBuiltins bool
	// GateWorkspace leaves out the workspace's agent files that would start a command or
	// reach an endpoint (Gated): set while the workspace is not trusted (session/trust).
	// They are listed by Gated either way, so what trusting would enable can be shown.
	GateWorkspace bool
}

// Layer is one directory of the search path.
type Layer struct {
	Name string // builtin, user, workspace, claude, gemini, summit, flag
	Dir  string
}

// SearchPath lists the layers in precedence order, lowest first: a later
// layer's agent replaces an earlier one of the same name (DESIGN §5).
func SearchPath(o Options) []Layer {
	var ls []Layer
	if !o.NoBuiltins {
		ls = append(ls, Layer{"builtin", "builtin"})
	}
	if o.UserConfigDir != "" {
		ls = append(ls, Layer{"user", filepath.Join(o.UserConfigDir, "agents")})
	}
	if o.Workspace != "" {
		for _, l := range []Layer{
			{"workspace", "resources/agents"},
			{"claude", ".claude/agents"},
			{"gemini", ".gemini/agents"},
			{"summit", ".summit/agents"},
		} {
			ls = append(ls, Layer{l.Name, filepath.Join(o.Workspace, filepath.FromSlash(l.Dir))})
		}
	}
	for _, d := range o.Dirs {
		ls = append(ls, Layer{"flag", d})
	}
	return ls
}

// Shadow records that a later layer replaced an agent of the same name.
type Shadow struct {
	Name   string `json:"name"`
	Winner string `json:"winner"` // path of the definition in use
	Loser  string `json:"loser"`  // path of the one it replaced
}

func (s Shadow) String() string {
	return fmt.Sprintf("agent %q from %s shadows %s", s.Name, s.Winner, s.Loser)
}

// Catalogue is the set of agents in effect, with everything found on the way.
type Catalogue struct {
	defs     map[string]*Definition
	problems []Problem
	shadows  []Shadow
	disabled []string
	files    int
	gated    []GatedFile
	gate     bool
}

// GatedFile is a workspace agent file that starts a command or reaches an endpoint: it has
// effect only once the workspace is trusted.
type GatedFile struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Why     string `json:"why"`     // kind: acp, endpoint, mcpServers
	Ignored bool   `json:"ignored"` // left out of the catalogue (GateWorkspace)
}

// IsWorkspaceLayer reports whether a search-path layer is part of the workspace (files that
// come with a repository), as opposed to the built-ins, the user's directory and --agents.
func IsWorkspaceLayer(layer string) bool {
	switch layer {
	case "workspace", "claude", "gemini", "summit":
		return true
	}
	return false
}

// RunsOutside says why a definition would start a command or reach an endpoint ("" when it
// uses only summit's own tools): kind: acp runs its command, endpoint sends tasks (and a
// token) to a URL, and an inline mcpServers map starts servers. A list of server names only
// picks servers of the user's config and is not gated.
func RunsOutside(d *Definition) string {
	var why []string
	if d.Kind == "acp" {
		why = append(why, "kind: acp (runs "+metaString(d, "command")+")")
	}
	if ep := metaString(d, "endpoint"); ep != "" {
		why = append(why, "endpoint "+ep)
	}
	// Inline servers: a map of name → server, or a list holding one-key maps among names.
	var names []string
	switch v := d.Metadata["mcpServers"].(type) {
	case map[string]any:
		for k := range v {
			names = append(names, k)
		}
	case []any:
		for _, it := range v {
			if m, ok := it.(map[string]any); ok {
				for k := range m {
					names = append(names, k)
				}
			}
		}
	}
	if len(names) > 0 {
		sort.Strings(names)
		why = append(why, "inline mcpServers ("+strings.Join(names, ", ")+")")
	}
	return strings.Join(why, ", ")
}

func metaString(d *Definition, key string) string {
	if v, ok := d.Metadata[key].(string); ok {
		return v
	}
	v, _ := d.Unknown[key].(string)
	return v
}

// Load reads every layer of the search path. It never fails as a whole: a
// file that cannot be read becomes a Problem and the rest still load. Only
// a missing --agents directory is an error problem; the standard layers are
// allowed not to exist.
func Load(o Options) *Catalogue {
	c := &Catalogue{defs: map[string]*Definition{}, gate: o.GateWorkspace}
	for _, l := range SearchPath(o) {
		if l.Name == "builtin" {
			for _, d := range Builtins() {
				c.add(d, o.Env)
			}
			continue
		}
		st, err := os.Stat(l.Dir)
		if err != nil || !st.IsDir() {
			if l.Name == "flag" {
				c.problems = append(c.problems, Problem{File: l.Dir, Level: LevelError, Message: "--agents directory cannot be read"})
			}
			continue
		}
		c.loadDir(l, o.Env)
	}
	disabled := DisabledAgents(envOrEmpty(o.Env))
	for name := range disabled {
		if _, ok := c.defs[name]; ok {
			delete(c.defs, name)
			c.disabled = append(c.disabled, name)
		}
	}
	sort.Strings(c.disabled)
	SortProblems(c.problems)
	return c
}

// LoadPaths reads the given files and directories only (no built-ins, no
// search path), for `summit agents validate PATH...`. Later paths win by
// name, as on the search path.
func LoadPaths(env Env, paths ...string) *Catalogue {
	c := &Catalogue{defs: map[string]*Definition{}}
	for _, p := range paths {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			c.problems = append(c.problems, Problem{File: p, Level: LevelError, Message: fmt.Sprintf("cannot read: %v", err)})
		case st.IsDir():
			c.loadDir(Layer{"path", p}, env)
		default:
			c.loadFile(Layer{"path", filepath.Dir(p)}, p, env)
		}
	}
	SortProblems(c.problems)
	return c
}

func envOrEmpty(e Env) Env {
	if e == nil {
		return func(string) string { return "" }
	}
	return e
}

// loadDir walks a layer recursively (plugins nest agents a level or two
// down) in lexical order, so results do not depend on the file system.
func (c *Catalogue) loadDir(l Layer, env Env) {
	filepath.WalkDir(l.Dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			c.problems = append(c.problems, Problem{File: p, Level: LevelError, Message: fmt.Sprintf("cannot read: %v", err)})
			return nil
		}
		if e.IsDir() {
			if p != l.Dir && strings.HasPrefix(e.Name(), ".") && !isAgentDotDir(e.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if isAgentFile(p) {
			c.loadFile(l, p, env)
		}
		return nil
	})
}

// isAgentDotDir keeps the product directories that hold agents reachable
// when a whole repository is walked.
func isAgentDotDir(n string) bool {
	switch n {
	case ".claude", ".gemini", ".summit", ".opencode", ".qwen", ".github":
		return true
	}
	return false
}

func (c *Catalogue) loadFile(l Layer, p string, env Env) {
	c.files++
	d, ps := ParseFile(p)
	c.problems = append(c.problems, ps...)
	if d == nil {
		return
	}
	d.Source.Layer = l.Name
	if IsWorkspaceLayer(l.Name) {
		if why := RunsOutside(d); why != "" {
			c.gated = append(c.gated, GatedFile{Name: d.Name, Path: p, Why: why, Ignored: c.gate})
			if c.gate {
				return
			}
		}
	}
	c.add(d, env)
}

func (c *Catalogue) add(d *Definition, env Env) {
	d, ps := ApplyEnv(d, env)
	c.problems = append(c.problems, ps...)
	if prev, ok := c.defs[d.Name]; ok {
		c.shadows = append(c.shadows, Shadow{Name: d.Name, Winner: d.Source.Path, Loser: prev.Source.Path})
	}
	c.defs[d.Name] = d
}

// Get returns the agent called name.
func (c *Catalogue) Get(name string) (*Definition, bool) {
	d, ok := c.defs[name]
	return d, ok
}

// List returns the agents sorted by name.
func (c *Catalogue) List() []*Definition {
	out := make([]*Definition, 0, len(c.defs))
	for _, d := range c.defs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Problems returns the load problems (not validation; see Validate).
func (c *Catalogue) Problems() []Problem { return append([]Problem(nil), c.problems...) }

// Shadows returns the replacements made by later layers, in load order.
func (c *Catalogue) Shadows() []Shadow { return append([]Shadow(nil), c.shadows...) }

// Gated returns the workspace agent files that start a command or reach an endpoint, in load
// order; with Options.GateWorkspace they are not in the catalogue.
func (c *Catalogue) Gated() []GatedFile { return append([]GatedFile(nil), c.gated...) }

// ShadowOf says which definition a name's agent replaced ("" when it replaced none): the
// path, or "built-in" for an embedded agent.
func (c *Catalogue) ShadowOf(name string) string {
	for i := len(c.shadows) - 1; i >= 0; i-- {
		if s := c.shadows[i]; s.Name == name && c.defs[name] != nil && s.Winner == c.defs[name].Source.Path {
			return s.Loser
		}
	}
	return ""
}

// Shadowing says, for an agent that replaced another of its name, which definition runs and
// which it shadows ("workspace .summit/agents/general.md, shadows built-in"); "" when the
// agent shadows none. Paths inside root are shown relative to it.
func (c *Catalogue) Shadowing(name, root string) string {
	loser := c.ShadowOf(name)
	d := c.defs[name]
	if loser == "" || d == nil {
		return ""
	}
	show := func(p string) string {
		if strings.HasPrefix(p, "builtin:") {
			return "built-in"
		}
		if r, err := filepath.Rel(root, p); root != "" && err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return p
	}
	layer := d.Source.Layer
	if IsWorkspaceLayer(layer) {
		layer = "workspace"
	}
	return fmt.Sprintf("%s %s, shadows %s", layer, show(d.Source.Path), show(loser))
}

// Disabled returns the agents removed by SUMMIT_DISABLED_AGENTS.
func (c *Catalogue) Disabled() []string { return append([]string(nil), c.disabled...) }

// Files returns how many candidate files were read from disk.
func (c *Catalogue) Files() int { return c.files }

// Validate runs Validate over every agent in the catalogue and returns the
// load problems followed by the validation problems, sorted.
func (c *Catalogue) Validate() []Problem {
	out := c.Problems()
	for _, d := range c.List() {
		out = append(out, Validate(d)...)
	}
	SortProblems(out)
	return out
}

// isAgentFile says which files in an agents directory are candidates.
// READMEs and changelogs live beside agents but are not agents.
func isAgentFile(p string) bool {
	base := strings.ToLower(filepath.Base(p))
	if strings.HasPrefix(base, "readme") || strings.HasPrefix(base, "changelog") ||
		strings.HasPrefix(base, "license") || strings.HasPrefix(base, ".") {
		return false
	}
	switch filepath.Ext(base) {
	case ".md", ".yaml", ".yml":
		return true
	}
	return false
}
