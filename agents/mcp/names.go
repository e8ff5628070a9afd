package mcp

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
)

const prefix = "mcp__"

// Qualify is the name a server's tool goes by: mcp__<server>__<tool>.
func Qualify(server, tool string) string { return prefix + server + "__" + tool }

// modelName is what model APIs accept as a tool name (OpenAI's rule, the strictest).
var modelName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// entry is one MCP entry of an agent's tools: a server and a pattern on its tools' names.
type entry struct {
	raw     string
	server  string
	pattern string // "*" for all of them
}

// parseEntry reads an MCP entry (mcp__S__T, mcp__S, S/T, S:T; T may hold * patterns). known
// are the server names that count: the longest one that fits wins, so a server named a__b
// is read whole.
func parseEntry(raw string, known []string) (entry, bool) {
	e := entry{raw: raw}
	switch {
	case strings.HasPrefix(raw, prefix):
		rest := raw[len(prefix):]
		best := ""
		for _, k := range known {
			if (rest == k || strings.HasPrefix(rest, k+"__")) && len(k) > len(best) {
				best = k
			}
		}
		if best != "" {
			e.server, e.pattern = best, strings.TrimPrefix(strings.TrimPrefix(rest, best), "__")
		} else if i := strings.Index(rest, "__"); i >= 0 {
			e.server, e.pattern = rest[:i], rest[i+2:]
		} else {
			e.server = rest
		}
	case strings.ContainsAny(raw, "/:"):
		i := strings.IndexAny(raw, "/:")
		e.server, e.pattern = raw[:i], raw[i+1:]
	default:
		return e, false
	}
	if e.pattern == "" {
		e.pattern = "*"
	}
	return e, e.server != ""
}

// matches reports whether the server's tool named tool is one the entry names.
func (e entry) matches(server, tool string) bool {
	return e.server == server && matchName(e.pattern, tool)
}

func matchName(pattern, name string) bool {
	if ok, err := path.Match(pattern, name); err == nil {
		return ok
	}
	return pattern == name
}

func matchAny(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matchName(p, name) })
}

// agentServers reads a definition's `mcpServers` (Claude Code): a map of name → server, or a
// list of names (servers of the config) and one-key maps (inline servers). What cannot be
// used is said in notes.
func agentServers(def *agents.Definition) (inline map[string]provider.MCPServer, refs []string, notes []string) {
	v, ok := def.Metadata["mcpServers"]
	if !ok || v == nil {
		return nil, nil, nil
	}
	inline = map[string]provider.MCPServer{}
	add := func(name string, val any) {
		if s, ok := val.(string); ok || val == nil {
			if s == "" {
				s = name
			}
			refs = append(refs, s)
			return
		}
		b, err := yaml.Marshal(val)
		var c provider.MCPServer
		if err == nil {
			err = yaml.Unmarshal(b, &c)
		}
		if err == nil {
			err = c.Check(name)
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("mcpServers.%s ignored: %v", name, oneLine(err.Error())))
			return
		}
		inline[name] = c
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			add(k, v[k])
		}
	case []any:
		for _, it := range v {
			switch it := it.(type) {
			case string:
				refs = append(refs, it)
			case map[string]any:
				for _, k := range sortedKeys(it) {
					add(k, it[k])
				}
			default:
				notes = append(notes, fmt.Sprintf("mcpServers entry %v ignored: want a server name or name: {command or url}", it))
			}
		}
	default:
		notes = append(notes, "mcpServers ignored: want a map of name: {command or url}, or a list of server names")
	}
	return inline, refs, notes
}

// agentAllows reads the MCP tools an agent lets run without asking, from an opencode-style
// `permission: {mcp__gh__*: allow}` or a `permissions: {allow: [mcp__gh__search]}`.
func agentAllows(def *agents.Definition) []string {
	var out []string
	for _, key := range []string{"permission", "permissions"} {
		m, ok := def.Metadata[key].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			switch {
			case k == "allow":
				if list, ok := v.([]any); ok {
					for _, it := range list {
						if s, ok := it.(string); ok {
							out = append(out, s)
						}
					}
				}
			case v == "allow":
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
