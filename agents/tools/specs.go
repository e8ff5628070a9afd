package tools

import (
	"context"
	"slices"
)

// Spec describes a tool to a model: a name, a one-paragraph description, and a JSON Schema
// object for the arguments.
type Spec struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// tool is one registry entry.
type tool struct {
	desc   string
	params []param
	run    func(context.Context, *Sandbox, args) Result
	// capped: run caps its own output while reading and appends markers after the cap, so
	// Call must not cut again.
	capped bool
}

var registry = map[string]tool{
	"read_file": {
		desc: "Read a text file of the workspace. Without offset and limit the whole file is returned " +
			"(files over the read limit are refused: read them in ranges). offset is the first line " +
			"(0-based) and limit the number of lines; a range comes with a header line giving the " +
			"lines shown and the file's line count. Binary files and directories are refused.",
		params: []param{
			{"path", "string", "file path, relative to the workspace root", true},
			{"offset", "integer", "first line to return, 0-based", false},
			{"limit", "integer", "number of lines to return", false},
		},
		run: readFile, capped: true,
	},
	"glob": {
		desc: "List the workspace files whose path matches a glob pattern, sorted. The pattern is " +
			"relative to path: * matches within one directory, ** across directories, {a,b} either, " +
			"e.g. **/*.go. Files excluded by .gitignore, the .git directory and symlinks are skipped.",
		params: []param{
			{"pattern", "string", "glob pattern relative to path, e.g. **/*_test.go", true},
			{"path", "string", "directory to search under, relative to the workspace root; default the root", false},
		},
		run: globTool,
	},
	"search_file_content": {
		desc: "Search the contents of workspace files with a regular expression (RE2 syntax, one line " +
			"at a time) and print each matching line as path:line: text. path may be a directory or " +
			"one file; include filters file names with a glob (*.go matches in every directory, " +
			"src/**/*.ts is relative to path). Ignored files (.gitignore), .git and binary files are skipped.",
		params: []param{
			{"pattern", "string", "RE2 regular expression, e.g. func\\s+main", true},
			{"path", "string", "directory or file to search, relative to the workspace root; default the root", false},
			{"include", "string", "glob filter on file paths, e.g. *.go or cmd/**/*.go", false},
		},
		run: searchTool,
	},
	"write_file": {
		desc: "Create or overwrite a workspace file with the given content (the whole file). Missing " +
			"parent directories are created; an existing file keeps its permissions. The write is " +
			"atomic: readers see the old or the new content, never a mix.",
		params: []param{
			{"path", "string", "file path, relative to the workspace root", true},
			{"content", "string", "the complete new content of the file", true},
		},
		run: writeFile,
	},
	"replace": {
		desc: "Replace exact text in a workspace file. old_string must match the file exactly, " +
			"whitespace and indentation included, and occur expected_replacements times (default 1); " +
			"otherwise nothing changes and the error says how many occurrences were found. Include " +
			"enough surrounding lines to make old_string unique. Read the file first.",
		params: []param{
			{"path", "string", "file path, relative to the workspace root", true},
			{"old_string", "string", "the exact text to replace", true},
			{"new_string", "string", "the text to put in its place", true},
			{"expected_replacements", "integer", "how many occurrences to replace; default 1", false},
		},
		run: replaceTool,
	},
	"run_shell_command": {
		desc: "Run a command with bash -c in the workspace root, stdin empty. Returns stdout and " +
			"stderr combined (capped), and the exit code when it is not 0. The command and every " +
			"process it starts are killed at the timeout or when it finishes, so nothing keeps " +
			"running in the background. Secret environment variables are not passed.",
		params: []param{
			{"command", "string", "the bash command line", true},
			{"timeout_s", "integer", "seconds before the command is killed; can only lower the configured timeout", false},
			{"description", "string", "one line saying what the command is for, shown to the user", false},
		},
		run: shellTool, capped: true,
	},
	"web_fetch": {
		desc: "Fetch an http or https URL with GET and return the body as text (HTML as it is, capped). " +
			"A status other than 2xx or a binary body is an error.",
		params: []param{
			{"url", "string", "absolute http or https URL", true},
		},
		run: webFetch, capped: true,
	},
	"web_search": {
		desc: "Search the web for a query. No search backend is configured, so every call fails " +
			"with an error; fetch a known URL with web_fetch instead.",
		params: []param{{"query", "string", "search terms", true}},
		run:    webSearch,
	},
}

// Specs returns the specs of the named tools in the given order, skipping names it does not
// know. Each call builds fresh maps, so callers may change them.
func Specs(names []string) []Spec {
	var out []Spec
	for _, n := range names {
		t, ok := registry[n]
		if !ok {
			continue
		}
		props := map[string]any{}
		required := []string{}
		for _, p := range t.params {
			props[p.name] = map[string]any{"type": p.typ, "description": p.desc}
			if p.required {
				required = append(required, p.name)
			}
		}
		out = append(out, Spec{Name: n, Description: t.desc, Parameters: map[string]any{
			"type": "object", "properties": props, "required": required, "additionalProperties": false,
		}})
	}
	return out
}

// Known reports whether name is a tool this package implements.
func Known(name string) bool { _, ok := registry[name]; return ok }

// names lists the tools, sorted.
func names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
