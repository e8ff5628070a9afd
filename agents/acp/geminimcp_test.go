package acp

import "testing"

// Gemini CLI 0.61.0 names an MCP call only in its toolCallId: `${name}__${rawId}` where name is
// mcp_<server>_<tool> (see geminiMCPTool). The ids below are the shapes its core makes: the
// default `${name}_${Date.now()}_${n}` raw id, a model's own id, a synthetic one.
func TestGeminiMCPToolFromCallID(t *testing.T) {
	servers := []string{"everything", "my_docs", "web.search"}
	for id, want := range map[string]string{
		"mcp_everything_echo__mcp_everything_echo_1764400000000_0": "mcp__everything__echo",
		"mcp_everything_get-sum__fc-1a2b3c":                        "mcp__everything__get-sum",
		"mcp_everything_echo__synth_p1_1764400000000_3":            "mcp__everything__echo",
		// a server name with _, which Gemini CLI's own split gets wrong: the known server wins
		"mcp_my_docs_search__mcp_my_docs_search_1764400000000_2": "mcp__my_docs__search",
		// a tool name with __: the separator is the one the raw id repeats the name after
		"mcp_everything_a__b__mcp_everything_a__b_1764400000000_1": "mcp__everything__a__b",
		// a server name with a character Gemini CLI keeps
		"mcp_web.search_query__mcp_web.search_query_1764400000000_4": "mcp__web.search__query",
		// a server summit did not give it: split as Gemini CLI splits it
		"mcp_github_create_issue__mcp_github_create_issue_1764400000000_5": "mcp__github__create_issue",
		// not MCP calls
		"write_file__write_file_1764400000000_0":       "",
		"run_shell_command__run_shell_command_17644_1": "",
		"toolu_01ABC":    "",
		"call_abc":       "",
		"mcp_everything": "",
	} {
		if got := geminiMCPTool(id, servers); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if got := geminiMCPTool("mcp_everything_echo__x", nil); got != "mcp__everything__echo" {
		t.Errorf("without known servers: %q", got)
	}
}
