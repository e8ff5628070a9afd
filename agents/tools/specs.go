package tools

import (
	"context"
	"sort"
)

// Spec describes a tool to a model: a name, a description and a JSON Schema object.
type Spec struct {
	Name        string
	Description string
	Parameters  map[string]any
}

type tool struct {
	spec Spec
	run  func(ctx context.Context, s *Sandbox, a args) Result
}

func obj(required []string, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

var registry = map[string]tool{}

func init() {
	for _, t := range []tool{
		{Spec{"read_file", "Read a text file of the workspace. offset (0-based line) and limit (lines) read a range of a large file.",
			obj([]string{"path"}, map[string]any{"path": prop("string", "workspace-relative path"),
				"offset": prop("integer", "first line, 0-based"), "limit": prop("integer", "number of lines")})}, readFile},
		{Spec{"glob", "List workspace files matching a glob pattern (** matches directories), sorted; .gitignore is honoured.",
			obj([]string{"pattern"}, map[string]any{"pattern": prop("string", "e.g. **/*.go"),
				"path": prop("string", "directory to search under, default the workspace root")})}, globTool},
		{Spec{"search_file_content", "Search file contents with a regular expression (RE2); prints path:line: text. .gitignore is honoured.",
			obj([]string{"pattern"}, map[string]any{"pattern": prop("string", "RE2 regular expression"),
				"path":    prop("string", "directory or file to search, default the workspace root"),
				"include": prop("string", "glob filter on file paths, e.g. **/*.go")})}, searchTool},
		{Spec{"write_file", "Create or overwrite a workspace file with content.",
			obj([]string{"path", "content"}, map[string]any{"path": prop("string", "workspace-relative path"),
				"content": prop("string", "the whole new content")})}, writeFile},
		{Spec{"replace", "Replace exact text in a workspace file. old_string must match exactly (whitespace included) expected_replacements times (default 1).",
			obj([]string{"path", "old_string", "new_string"}, map[string]any{"path": prop("string", "workspace-relative path"),
				"old_string": prop("string", "the exact text to replace"), "new_string": prop("string", "the replacement"),
				"expected_replacements": prop("integer", "how many occurrences to replace, default 1")})}, replaceTool},
		{Spec{"run_shell_command", "Run a command with bash -c in the workspace root. Output (stdout and stderr) is capped.",
			obj([]string{"command"}, map[string]any{"command": prop("string", "the command line"),
				"timeout_s":   prop("integer", "seconds before the command is killed"),
				"description": prop("string", "what the command is for")})}, shellTool},
		{Spec{"web_fetch", "Fetch a URL (http or https) and return its body as text.",
			obj([]string{"url"}, map[string]any{"url": prop("string", "http or https URL")})}, webFetch},
		{Spec{"web_search", "Search the web.",
			obj([]string{"query"}, map[string]any{"query": prop("string", "search terms")})},
			func(context.Context, *Sandbox, args) Result {
				return errResult("web_search has no search backend configured")
			}},
	} {
		registry[t.spec.Name] = t
	}
}

// Specs returns the specs of the named tools in order, skipping names it does not know.
func Specs(names []string) []Spec {
	var out []Spec
	for _, n := range names {
		if t, ok := registry[n]; ok {
			out = append(out, t.spec)
		}
	}
	return out
}

// Known reports whether name is a tool this package implements.
func Known(name string) bool { _, ok := registry[name]; return ok }

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
