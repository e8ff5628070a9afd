package agents

import (
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// field is one top-level key of a definition with its file line.
type field struct {
	key  string
	line int
	val  *yaml.Node
}

// metadataKeys are documented by some dialect but mean nothing to Summit:
// kept in Definition.Metadata without a warning, so that the warnings that
// remain point at real mistakes.
var metadataKeys = map[string]bool{
	"version": true, "author": true, "category": true, "tags": true, "type": true,
	"owner": true, "dependencies": true, "hidden": true, "license": true,
	"argument-hint": true, "mcpServers": true, "tools.gemini": true, "tools.claude": true,
	"inputs": true, "outputs": true, "sop_refs": true, "policies": true, "evals": true,
	"data_access": true, "constraints": true, "hand_off_rules": true, "governance_file": true,
	"flows_file": true, "entry_prompt_file": true, "resources": true, "interface": true,
	"apiVersion": true, "id": true, "permission": true, "permissions": true,
	"display_name": true, "displayName": true, "title": true, "handoffs": true,
	"endpoint": true, // an agent.yaml served elsewhere (session/live/remote.go)
}

// decode fills d from the top-level mapping. Every dialect's keys are
// accepted in every file: a Claude Code file that borrows `max_turns` from
// Gemini still means what it says.
func decode(d *Definition, root *yaml.Node, firstLine int, ps *problems) {
	fields := flatten(root, firstLine, ps)
	get := map[string]field{}
	for _, f := range fields {
		get[f.key] = f
		if _, dup := d.Source.Lines[f.key]; !dup {
			d.Source.Lines[f.key] = f.line
		}
	}
	first := func(keys ...string) (field, bool) {
		for _, k := range keys {
			if f, ok := get[k]; ok && !isNull(f.val) {
				return f, true
			}
		}
		return field{}, false
	}

	// Identity. `id` wins over `name` where both exist (opencode, the
	// registry): there `name` is a display title such as "SOP Compiler".
	name, _ := first("name")
	id, hasID := first("id")
	switch {
	case hasID:
		d.Name = scalarString(id, ps)
		if n := scalarString(name, ps); n != "" && n != d.Name {
			d.DisplayName = n
		}
		d.Source.Lines["name"] = id.line
	case name.val != nil:
		d.Name = strings.TrimSpace(scalarString(name, ps))
	}
	if f, ok := first("display_name", "displayName", "title"); ok && d.DisplayName == "" {
		d.DisplayName = scalarString(f, ps)
	}
	if f, ok := first("description"); ok {
		d.Description = strings.TrimSpace(scalarString(f, ps))
	}

	// Tools: `tools` first, then per-product variants.
	if f, ok := get["tools"]; ok {
		decodeTools(d, f, ps)
	} else if f, ok := first("tools.gemini", "allowed_tools", "allowedTools", "tools.claude"); ok {
		decodeTools(d, f, ps)
	}
	if f, ok := first("disallowedTools", "disallowed_tools", "disallowed-tools", "deniedTools"); ok {
		raw := stringList(f, ps)
		d.DisallowedTools = appendUnique(d.DisallowedTools, normaliseTools(raw)...)
	}
	if f, ok := first("permission", "permissions"); ok {
		d.DisallowedTools = appendUnique(d.DisallowedTools, deniedByPermission(f.val)...)
	}

	if f, ok := first("model", "models"); ok {
		d.Model = ParseModel(stringList(f, ps)...)
	}
	if f, ok := first("temperature"); ok {
		if v, ok := number(f, ps); ok {
			if v < 0 || v > 2 {
				ps.warnf(f.line, "temperature %v is outside 0..2; ignored", v)
			} else {
				d.Temperature = &v
			}
		}
	}
	if f, ok := first("max_turns", "maxTurns", "max-turns"); ok {
		d.MaxTurns = positiveInt(f, ps)
	}
	if f, ok := first("timeout_mins", "timeoutMins", "timeout"); ok {
		d.TimeoutMins = positiveInt(f, ps)
	}
	if f, ok := first("permissionMode", "permission_mode", "permission-mode"); ok {
		s := scalarString(f, ps)
		if m, err := ParseMode(s); err != nil {
			ps.errorf(f.line, "%v", err)
		} else {
			d.PermissionMode = m
		}
	}
	if f, ok := first("skills"); ok {
		d.Skills = stringList(f, ps)
	}
	if f, ok := first("color"); ok {
		d.Color = scalarString(f, ps)
	}
	if f, ok := first("kind"); ok {
		d.Kind = scalarString(f, ps)
	}
	if f, ok := first("mode"); ok && d.Kind == "" {
		d.Kind = scalarString(f, ps)
	}
	if f, ok := first("role"); ok {
		d.Role = scalarString(f, ps)
	}
	if f, ok := first("capabilities"); ok {
		// A scalar declares a tier (Maestro: read_only, read_shell, full);
		// a list names capabilities, which are skills in Summit's terms.
		if f.val.Kind == yaml.ScalarNode {
			d.Role = scalarString(f, ps)
		} else {
			d.Skills = appendUnique(d.Skills, stringList(f, ps)...)
		}
	}
	if f, ok := first("prompt", "system_prompt", "systemPrompt", "instructions"); ok && strings.TrimSpace(d.Body) == "" {
		d.Body = scalarString(f, ps)
	}
	if f, ok := get["hooks"]; ok {
		ps.warnf(f.line, "hooks are not run by Summit; a check the author relied on will not happen")
		keep(&d.Metadata, f)
	}

	handled := map[string]bool{
		"name": true, "description": true, "tools": true, "disallowedTools": true,
		"disallowed_tools": true, "disallowed-tools": true, "deniedTools": true, "allowed_tools": true,
		"allowedTools": true, "model": true, "models": true, "temperature": true,
		"max_turns": true, "maxTurns": true, "max-turns": true, "timeout_mins": true,
		"timeoutMins": true, "timeout": true, "permissionMode": true, "permission_mode": true,
		"permission-mode": true, "skills": true, "color": true, "kind": true, "mode": true,
		"role": true, "capabilities": true, "prompt": true, "system_prompt": true,
		"systemPrompt": true, "instructions": true, "hooks": true,
	}
	for _, f := range fields {
		switch {
		case handled[f.key]:
		case metadataKeys[f.key]:
			keep(&d.Metadata, f)
		case d.Kind == "acp" && (f.key == "command" || f.key == "args" || f.key == "env"):
			// An external agent over ACP (agents/acp reads these from the metadata).
			keep(&d.Metadata, f)
		case d.Kind == "acp" && f.key == "writable":
			// The agent process is confined to its worktree (agents/acp); a file that may come
			// with a repository cannot widen that, and agents/acp refuses to run it.
			keep(&d.Unknown, f)
			ps.errorf(f.line, "writable is read only from a config's acp_agents (an agent file may come with a repository); name the agent there")
		default:
			keep(&d.Unknown, f)
			ps.warnf(f.line, "unknown key %q kept but not used", f.key)
		}
	}
}

// flatten lists the top-level fields. A Summit ABI manifest nests them under
// `metadata` and `spec`; those are lifted to the top so one decoder serves.
func flatten(root *yaml.Node, firstLine int, ps *problems) []field {
	var out []field
	isManifest := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value == "apiVersion" {
			isManifest = true
		}
		out = append(out, field{k.Value, firstLine + k.Line - 1, v})
	}
	if !isManifest {
		return out
	}
	var lifted []field
	for _, f := range out {
		switch {
		case (f.key == "metadata" || f.key == "spec") && f.val.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(f.val.Content); i += 2 {
				k, v := f.val.Content[i], f.val.Content[i+1]
				lifted = append(lifted, field{k.Value, firstLine + k.Line - 1, v})
			}
		case f.key == "kind":
			if s := strings.TrimSpace(f.val.Value); s != "Agent" {
				ps.errorf(f.line, "manifest kind is %q; only `kind: Agent` describes an agent", s)
			}
		default:
			lifted = append(lifted, f)
		}
	}
	return lifted
}

// decodeTools reads `tools` in its three shapes: "Read, Grep" (Claude Code),
// a list (Gemini, Summit), or a map of booleans with an optional "*"
// (opencode). A null value means "not restricted".
func decodeTools(d *Definition, f field, ps *problems) {
	switch f.val.Kind {
	case yaml.ScalarNode:
		if isNull(f.val) {
			return
		}
		if f.val.Tag != "!!str" {
			ps.errorf(f.line, "tools must be a list, a comma-separated string or a map of booleans, found %s", nodeKind(f.val))
			return
		}
		d.Source.toolsForm = "string"
		d.RawTools = splitNames(f.val.Value)
	case yaml.SequenceNode:
		d.Source.toolsForm = "list"
		for _, c := range f.val.Content {
			if c.Kind != yaml.ScalarNode || c.Tag == "!!null" {
				ps.errorf(f.line+0, "tools list entry at line %d must be a tool name, found %s", c.Line, nodeKind(c))
				continue
			}
			d.RawTools = append(d.RawTools, c.Value)
		}
	case yaml.MappingNode:
		d.Source.toolsForm = "map"
		decodeToolMap(d, f, ps)
		return
	default:
		ps.errorf(f.line, "tools must be a list, a comma-separated string or a map of booleans, found %s", nodeKind(f.val))
		return
	}
	d.Tools = normaliseTools(d.RawTools)
}

// decodeToolMap reads opencode's `tools: {read: true, bash: false, "*": false}`.
// With `"*": false`, or when some tool is switched on, the true entries are
// an allowlist (that is what such files mean in practice: a reviewer turning
// read, grep and glob on). Entries set false always go to DisallowedTools.
// `"*": true` with only false entries leaves the tools unrestricted.
func decodeToolMap(d *Definition, f field, ps *problems) {
	star, hasStar := true, false
	var on []string
	for i := 0; i+1 < len(f.val.Content); i += 2 {
		k, v := f.val.Content[i], f.val.Content[i+1]
		b, err := strconv.ParseBool(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			ps.errorf(f.line, "tools map entry %q (line %d) must be true or false, found %s", k.Value, k.Line, nodeKind(v))
			continue
		}
		if k.Value == "*" {
			star, hasStar = b, true
			continue
		}
		if b {
			on = append(on, k.Value)
		} else {
			d.DisallowedTools = appendUnique(d.DisallowedTools, normaliseTools([]string{k.Value})...)
			if _, ok := d.Source.Lines["disallowedTools"]; !ok {
				d.Source.Lines["disallowedTools"] = f.line
			}
		}
	}
	d.RawTools = on
	if (hasStar && !star) || (len(on) > 0 && !(hasStar && star)) {
		d.Tools = normaliseTools(on)
	}
}

// deniedByPermission reads opencode's `permission` map: a tool whose value
// is "deny", or whose patterns all deny, is disallowed outright. Finer
// patterns (allow `git status`, ask the rest) are kept in Metadata only.
func deniedByPermission(n *yaml.Node) []string {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		denied := false
		switch v.Kind {
		case yaml.ScalarNode:
			denied = v.Value == "deny"
		case yaml.MappingNode:
			denied = len(v.Content) > 0
			for j := 1; j < len(v.Content); j += 2 {
				if v.Content[j].Value != "deny" {
					denied = false
				}
			}
		}
		if denied {
			out = append(out, normaliseTools([]string{k.Value})...)
		}
	}
	return out
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// scalarString reads a scalar; anything else is reported and read as "".
func scalarString(f field, ps *problems) string {
	if f.val == nil || isNull(f.val) {
		return ""
	}
	if f.val.Kind != yaml.ScalarNode {
		ps.errorf(f.line, "%s must be text, found %s", f.key, nodeKind(f.val))
		return ""
	}
	return f.val.Value
}

// stringList reads a list of names written as a YAML list or as one
// comma-separated string.
func stringList(f field, ps *problems) []string {
	switch f.val.Kind {
	case yaml.ScalarNode:
		if isNull(f.val) {
			return nil
		}
		return splitNames(f.val.Value)
	case yaml.SequenceNode:
		var out []string
		for _, c := range f.val.Content {
			if c.Kind != yaml.ScalarNode {
				ps.errorf(f.line, "%s entry at line %d must be text, found %s", f.key, c.Line, nodeKind(c))
				continue
			}
			if s := strings.TrimSpace(c.Value); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	ps.errorf(f.line, "%s must be a list or a comma-separated string, found %s", f.key, nodeKind(f.val))
	return nil
}

// splitNames splits "Read, Grep, Glob" (also "Read Grep Glob").
func splitNames(s string) []string {
	sep := func(r rune) bool { return r == ',' }
	if !strings.Contains(s, ",") {
		sep = func(r rune) bool { return r == ' ' || r == '\t' }
	}
	var out []string
	for _, p := range strings.FieldsFunc(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// number reads an int or a float (also a quoted one). Tuning values are
// not safety-relevant, so a bad one is a warning and is ignored.
func number(f field, ps *problems) (float64, bool) {
	if f.val.Kind == yaml.ScalarNode {
		if v, err := strconv.ParseFloat(strings.TrimSpace(f.val.Value), 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, true
		}
	}
	ps.warnf(f.line, "%s must be a number, found %s %q; ignored", f.key, nodeKind(f.val), f.val.Value)
	return 0, false
}

func positiveInt(f field, ps *problems) int {
	v, ok := number(f, ps)
	if !ok {
		return 0
	}
	if v <= 0 || v != math.Trunc(v) || v > 1e6 {
		ps.warnf(f.line, "%s must be a positive whole number, found %v; ignored", f.key, v)
		return 0
	}
	return int(v)
}

// keep stores a field's value as plain Go data.
func keep(m *map[string]any, f field) {
	if *m == nil {
		*m = map[string]any{}
	}
	var v any
	if err := f.val.Decode(&v); err != nil {
		v = f.val.Value
	}
	(*m)[f.key] = v
}

func appendUnique(dst []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, x := range dst {
			if x == it {
				found = true
				break
			}
		}
		if !found {
			dst = append(dst, it)
		}
	}
	return dst
}
