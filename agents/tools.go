package agents

import (
	"sort"
	"strings"
)

// Canonical tool names (DESIGN §5). Every dialect's spelling is mapped onto
// these so that policy compares like with like.
const (
	ToolReadFile  = "read_file"
	ToolGlob      = "glob"
	ToolSearch    = "search_file_content"
	ToolWriteFile = "write_file"
	ToolReplace   = "replace"
	ToolShell     = "run_shell_command"
	ToolWebFetch  = "web_fetch"
	ToolWebSearch = "web_search"
	ToolTask      = "task"
)

// ToolClass groups tools by what they can do to the world; permission modes
// decide per class (see Decide).
type ToolClass string

const (
	ClassRead    ToolClass = "read"    // observe the workspace
	ClassWrite   ToolClass = "write"   // change files in the workspace
	ClassShell   ToolClass = "shell"   // run arbitrary commands
	ClassNetwork ToolClass = "network" // read from the outside world
	ClassMCP     ToolClass = "mcp"     // a tool served by an MCP server: effects unknown
	ClassTask    ToolClass = "task"    // spawn a subagent: never granted to a subagent
	ClassUnknown ToolClass = "unknown" // a name Summit cannot execute
)

var toolClasses = map[string]ToolClass{
	ToolReadFile:  ClassRead,
	ToolGlob:      ClassRead,
	ToolSearch:    ClassRead,
	ToolWriteFile: ClassWrite,
	ToolReplace:   ClassWrite,
	ToolShell:     ClassShell,
	ToolWebFetch:  ClassNetwork,
	ToolWebSearch: ClassNetwork,
	ToolTask:      ClassTask,
}

// toolAliases maps a lower-cased product spelling to its canonical name.
//
// Decisions worth knowing:
//   - Directory listings (LS, list, list_directory) map to glob: a listing is
//     a glob of dir/*, and a separate tool would add a policy row for no gain.
//   - read_many_files is read_file applied many times.
//   - Web search is its own canonical tool, web_search (WebSearch,
//     google_web_search): searching sends the query to a third party while
//     fetching reads a URL, so granting one must not silently grant the other.
//     Both are in the network class and are treated alike by permission modes.
//   - Agent is Claude Code's newer name for Task (spawn a subagent).
//   - Claude Code's TaskCreate/TaskList/... manage a to-do list, not
//     subagents; they are unknown to Summit, not aliases of task.
var toolAliases = map[string]string{
	"read_file": ToolReadFile, "read": ToolReadFile, "view": ToolReadFile,
	"read_many_files": ToolReadFile, "readfile": ToolReadFile, "notebookread": ToolReadFile,

	"glob": ToolGlob, "list": ToolGlob, "ls": ToolGlob, "list_directory": ToolGlob,

	"search_file_content": ToolSearch, "grep": ToolSearch, "grep_search": ToolSearch,
	"search": ToolSearch, "codebase": ToolSearch,

	"write_file": ToolWriteFile, "write": ToolWriteFile,

	"replace": ToolReplace, "edit": ToolReplace, "multiedit": ToolReplace,
	"patch": ToolReplace, "editfiles": ToolReplace, "notebookedit": ToolReplace,

	"run_shell_command": ToolShell, "bash": ToolShell, "shell": ToolShell,
	"runcommands": ToolShell, "runinterminal": ToolShell,

	"web_fetch": ToolWebFetch, "webfetch": ToolWebFetch, "fetch": ToolWebFetch,

	"web_search": ToolWebSearch, "websearch": ToolWebSearch, "google_web_search": ToolWebSearch,

	"task": ToolTask, "agent": ToolTask,
}

// CanonicalTool maps one tool name from any dialect to Summit's name.
// Qualified names (MCP tools `mcp__server__tool`, `server/*`, `server:tool`)
// are returned as given; ok is false for a name Summit does not know.
func CanonicalTool(name string) (canonical string, ok bool) {
	name = strings.TrimSpace(name)
	if c, found := toolAliases[strings.ToLower(name)]; found {
		return c, true
	}
	if IsQualifiedTool(name) {
		return name, true
	}
	return name, false
}

// IsQualifiedTool reports whether name addresses a tool of an external
// server (MCP). Such names are kept verbatim: their spelling is the server's.
func IsQualifiedTool(name string) bool {
	return strings.HasPrefix(name, "mcp__") || strings.ContainsAny(name, "/:")
}

// ClassOf returns the class of a canonical or qualified tool name.
func ClassOf(tool string) ToolClass {
	if c, ok := toolClasses[tool]; ok {
		return c
	}
	if IsQualifiedTool(tool) {
		return ClassMCP
	}
	return ClassUnknown
}

// CanonicalTools lists Summit's own tools in a stable order.
func CanonicalTools() []string {
	out := make([]string, 0, len(toolClasses))
	for t := range toolClasses {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// normaliseTools maps names, dropping blanks and duplicates but keeping the
// author's order; unknown names are kept (validation flags them).
func normaliseTools(names []string) []string {
	out := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		c, _ := CanonicalTool(n)
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}
