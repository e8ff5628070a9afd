// Package trust is the workspace trust boundary (DESIGN §13): what a workspace's own files
// may make summit do before the user trusts that workspace, and the store that remembers the
// user's answer.
//
// # What is gated
//
// Three sources configure a session: summit's built-ins, the user's (~/.config/summit, --agents
// directories named on the command line) and the workspace's (.summit/config.yaml, agent files
// under resources/agents, .claude/agents, .gemini/agents and .summit/agents, and the hook
// scripts its config names). The first two are trusted. The workspace's are data until the
// user trusts the workspace:
//
//   - .summit/config.yaml as a whole (agents/provider.LoadConfigGated): its mcp_servers and
//     acp_agents start commands, its providers (base_url, key_env, headers), models and
//     default_provider choose where a key is sent, its remotes send a token, its hooks run
//     commands and its web_allow_hosts reopen private addresses to web_fetch. The file is
//     still read and checked, so a broken one is reported either way.
//   - workspace agent files with kind: acp, an endpoint or an inline mcpServers map
//     (agents.RunsOutside): they are left out of the catalogue and listed as ignored.
//
// Untrusted, summit still runs: the built-in and user agents, and workspace agent files that
// use only summit's own tools (prompts are data). A workspace agent file that takes a built-in
// or user agent's name is said to shadow it wherever agents are listed, trusted or not.
//
// # Covered and asked again
//
// Assess lists what trusting would enable and a digest of what it covers: the bytes of
// .summit/config.yaml, of every gated agent file, and of every file a workspace hook's
// command names (its words that are paths, resolved in the workspace). A recorded answer
// holds for that digest only: when any of those files changes, the workspace is untrusted
// again and summit asks again, as direnv does for .envrc.
//
// # The store
//
// $XDG_DATA_HOME/summit/trust/workspaces.json (else ~/.local/share/summit/trust/...), the
// directory 0700, the file 0600, replaced atomically (session/internal/atomicfile):
//
//	{"version": 1, "workspaces": {"/abs/resolved/ws": {"digest": "sha256:…", "at": "…", "covered": ["mcp_servers.fs: runs ./fs.sh", …]}}}
//
// Keys are absolute, symlink-resolved workspace paths. Only trust is stored: revoking
// (summit trust --revoke) deletes the entry. The hooks-only store of earlier versions
// (hooks-trust.json) is not read: its answer covered the hooks alone, and carrying it over
// would enable MCP servers, providers and agents the user was never shown.
//
// # Asking
//
// The workbench shows an inbox item that lists exactly what would be enabled; it is answered
// by selecting it and confirming, never by one key. summit trust [DIR] prints the same list and
// records the answer. Headless runs (summit run, summit serve) take --trust-workspace for that
// run only, or run untrusted and say on stderr what was ignored; SessionStarted records
// workspace_trust and untrusted_ignored either way.
package trust
