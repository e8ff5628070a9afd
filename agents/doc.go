// Package agents loads, normalises, validates and polices agent definitions.
//
// # Files
//
// A definition is Markdown with YAML frontmatter (the body is the system
// prompt) or a YAML manifest. One decoder reads every dialect seen in
// practice and accepts every dialect's keys in every file: Summit, Claude
// Code (`tools: Read, Grep`), Gemini CLI / Maestro (`kind: local`,
// `max_turns`, `timeout_mins`, `tools.gemini`), opencode (`tools` as a map of
// booleans with "*", `mode`, `permission`), Qwen, Copilot (`.agent.md`,
// `.chatmode.md`), the Summit ABI manifest (`apiVersion: summit.io/v1`,
// `kind: Agent`, fields under `metadata` and `spec`), and Summit's registry
// (`id`, `role`, `allowed_tools`) and runtime-spec YAML (`entry_prompt_file`).
// A missing `name` is taken from the file name (or, for agent.yaml and
// runtime-spec.yaml, the directory name).
//
// Tolerant parsing: the frontmatter is parsed strictly first. If that fails,
// a line-oriented pass quotes each top-level plain value that cannot be YAML
// (an unquoted `: `, continuation lines at column 0, `<example>` blocks whose
// lines look like keys) and parsing is retried; the repair keeps every
// key's line number. Template syntax (`{{ }}`, `{% %}`), tab indentation,
// non-UTF-8 bytes and files over MaxFileSize (1 MiB, read no further than the
// cap) are refused before YAML is read. Anchors, aliases and merge keys
// (`<<: *base`) work as in any YAML (ExpandAliases); a file whose aliases
// expand past MaxAliasNodes (100,000) nodes is refused as an alias bomb, at
// the alias's line.
//
// Tools are mapped to canonical names (see CanonicalTool and its alias
// table); MCP and qualified names are kept verbatim.
//
// # Errors and warnings
//
// Load problems (Parse, Catalogue.Problems):
//
//	error    the file is not loaded: no or unclosed frontmatter, YAML that even
//	         the tolerant pass cannot read, duplicate keys, an alias bomb or
//	         cycle, tabs, templates, non-UTF-8 or NUL bytes, oversized file, a
//	         manifest whose kind is not Agent, and wrongly typed safety-relevant
//	         fields (tools, disallowedTools, permissionMode, text fields given
//	         a list/map)
//	warning  the file loads: a value repaired by the tolerant pass, unknown
//	         keys (kept in Definition.Unknown), badly typed tuning values
//	         (temperature, max_turns, timeout: ignored), hooks (not run),
//	         an unreadable entry_prompt_file, bad environment overrides
//
// Validation problems (Validate, after seed 001's validate-agent-permissions):
//
//	error    no name; a name that is not kebab-case (and not snake_case);
//	         no description; `task` granted; a tool class above the declared
//	         role (read_only/critic/researcher with write or shell,
//	         read_shell with write, read_write with shell); unknown mode
//	warning  snake_case name; name differs from the file name; unknown tool
//	         names (never granted); permissionMode plan with write tools
//
// Every problem prints as `file:line: level: message`.
//
// # Search path
//
// Lowest precedence first, later wins by name and the replacement is
// reported as a Shadow: embedded built-ins, <user config>/agents,
// <workspace>/resources/agents, .claude/agents, .gemini/agents,
// .summit/agents, then each --agents DIR. SUMMIT_DISABLED_AGENTS and
// MAESTRO_DISABLED_AGENTS remove agents; ApplyEnv documents the overrides.
//
// # Policy
//
// Resolve computes a subagent's effective tools and mode; Decide applies
// the per-call mode table. A subagent never gets `task`.
package agents
