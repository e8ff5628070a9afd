package agents

// Dialect names the product whose file format a definition was written in.
// It is informative (shown by `summit agents show`, used in messages); the
// decoder accepts every dialect's keys in every file.
type Dialect string

const (
	DialectSummit      Dialect = "summit"
	DialectClaudeCode  Dialect = "claude-code"
	DialectGemini      Dialect = "gemini-cli" // also Maestro's Gemini files
	DialectMaestro     Dialect = "maestro"    // Maestro canonical sources (tools.gemini / tools.claude)
	DialectOpencode    Dialect = "opencode"
	DialectQwen        Dialect = "qwen"
	DialectCopilot     Dialect = "copilot"
	DialectManifest    Dialect = "summit-manifest"     // agent.yaml, apiVersion summit.io/v1
	DialectRegistry    Dialect = "summit-registry"     // docs/agents/registry/*.yaml
	DialectRuntimeSpec Dialect = "summit-runtime-spec" // agents/<name>/runtime-spec.yaml
)

// Definition is one agent, normalised from whichever dialect it was written in.
type Definition struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name,omitempty"` // a human title when the file has one besides the id
	Description string `json:"description"`

	// Tools are canonical names (see CanonicalTool). nil means the file did
	// not restrict tools, so the type's defaults apply; an empty, non-nil
	// slice means "no tools at all".
	Tools           []string `json:"tools"`
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	// RawTools are the tool names exactly as written, for messages.
	RawTools []string `json:"-"`

	Model          Model          `json:"model,omitzero"`
	Temperature    *float64       `json:"temperature,omitempty"`
	MaxTurns       int            `json:"max_turns,omitempty"`
	TimeoutMins    int            `json:"timeout_mins,omitempty"`
	PermissionMode PermissionMode `json:"permission_mode,omitempty"`
	Skills         []string       `json:"skills,omitempty"`
	Color          string         `json:"color,omitempty"`
	Kind           string         `json:"kind,omitempty"` // Gemini `kind` (local) or opencode `mode` (primary, subagent)
	// Role is the declared capability role (`capabilities: read_only`,
	// registry/manifest `role`); validation checks the tools fit it.
	Role string `json:"role,omitempty"`

	Body string `json:"body"` // the system prompt

	Source Source `json:"source"`

	// Metadata holds keys that are documented by some dialect but carry no
	// meaning for Summit (version, author, tags, ...): kept, not warned.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Unknown holds keys no dialect documents: kept and warned about.
	Unknown map[string]any `json:"unknown,omitempty"`

	// Overrides records which environment variables changed this definition.
	Overrides []string `json:"overrides,omitempty"`
}

// Source says where a definition came from, for error messages.
type Source struct {
	Path    string  `json:"path"`
	Dialect Dialect `json:"dialect"`
	Layer   string  `json:"layer,omitempty"` // search-path layer: builtin, user, workspace, ...
	// Lines maps each top-level key to its 1-based line in the file.
	Lines map[string]int `json:"-"`
	// BodyLine is the line where the body starts (after the frontmatter).
	BodyLine int `json:"-"`
	// Repaired is set when the strict YAML parse failed and the tolerant
	// pass read the file.
	Repaired bool `json:"repaired,omitempty"`

	toolsForm string // how `tools` was written: string, list, map (dialect hint)
}

// Line returns the line of key, or 1 if the key was not written (so messages
// about a missing key point at the file's start).
func (s Source) Line(key string) int {
	if l, ok := s.Lines[key]; ok {
		return l
	}
	return 1
}

// HasTool reports whether the definition explicitly lists tool.
func (d *Definition) HasTool(tool string) bool {
	for _, t := range d.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// Clone returns a deep enough copy that overrides never touch the original.
func (d *Definition) Clone() *Definition {
	c := *d
	if d.Tools != nil {
		c.Tools = append([]string{}, d.Tools...)
	}
	c.DisallowedTools = append([]string(nil), d.DisallowedTools...)
	c.Skills = append([]string(nil), d.Skills...)
	c.Overrides = append([]string(nil), d.Overrides...)
	c.Model.Fallbacks = append([]string(nil), d.Model.Fallbacks...)
	if d.Temperature != nil {
		t := *d.Temperature
		c.Temperature = &t
	}
	return &c
}
