// Package mcp gives summit's own subagents the tools of MCP servers (the Model Context
// Protocol), through the official go-sdk's client side: stdio servers (a command speaking MCP
// on stdin/stdout) and streamable HTTP servers (legacy SSE too).
//
// # Where servers come from
//
// The config's mcp_servers (provider.Config.MCPServers) and an agent file's own `mcpServers`
// (Claude Code's frontmatter: a map of name → server, or a list of names of configured
// servers and one-key maps of inline ones). An inline server identical to a configured one of
// the same name is that server. An inline server that would start a command and is not in the
// config is ignored with a note: an agent file can come with a cloned repository, and
// delegating to it must not run a command the user never configured. An inline url server
// (streamable HTTP) runs on its own, one per distinct definition.
//
// # Naming
//
// A server's tool T appears to the model, in the policy and in the recording as
// mcp__<server>__T. An agent's tools may name one (mcp__gh__search, gh/search, gh:search) or
// all or some of a server's (mcp__gh__*, mcp__gh, gh/*, mcp__gh__get_*: * patterns on the
// tool's name). An agent that restricts no tools but brings mcpServers gets all their tools.
//
// # Two halves of a grant
//
//   - At delegation (Resolve, no server starts): the agent's MCP entries of known servers
//     join the session's tools so agents.Resolve keeps them (deny by default still applies:
//     --tools and disallowedTools cut them like any tool); an entry naming a server that is
//     not configured is dropped with a policy note.
//   - When the subagent starts (Manager.Toolset, in the subagent's own run): the servers its
//     grant names start (lazily, once per session), and each entry expands to the tools the
//     server really offers. A server that cannot start fails that subagent with an error
//     naming the server and the end of its stderr.
//
// # Policy
//
// MCP tools are ClassMCP: they ask like the shell (agents.Decide), and run without asking in
// bypassPermissions. A server's `allow` list (its own tool names, * patterns) lets those
// tools run without asking in every mode; an agent may allow its tools too (its inline
// server's allow, or an opencode-style `permission: {mcp__gh__*: allow}`), except in plan
// mode, where only the user's config can loosen the asking.
//
// # Isolation
//
// A tool whose server does not mark it readOnlyHint (its annotations) may change files:
// Manager.Writes lists those of a grant, and a subagent granted any works in a worktree, like
// one granted write_file. Manager.ToolsetIn then runs each server that grants it such a tool
// for that subagent alone (Manager.At): a process started in the worktree, offered it as its
// one MCP root (the roots capability: roots/list, or under protocol 2026-07-28 an input
// request), stopped by Release when the subagent stops. A url server is one process elsewhere
// and stays shared; read-only servers stay shared too.
//
// # Calls and results
//
// Arguments go to the server as the model wrote them. Text content is joined; images, audio,
// blobs and links are summarised ("[image: image/png, 1234 bytes]"); isError is kept. The
// output is capped at MaxResult bytes with the tools' truncation marker and made valid UTF-8.
// A call that the server does not answer within its timeout (timeout_s, default 120 s), a
// protocol error and a server that died are tool errors the model sees; a dead server is
// started again at its next use.
//
// # Lifecycle
//
// One client per server per session (Manager), started on first use; Close stops them all:
// the stdio server's stdin is closed, then its whole process group is killed, so nothing it
// started outlives the session.
//
// A stdio server starts through Options.Command (default agents/tools.GuardedCommand): in a
// session of its own with no controlling terminal, no terminal device and TIOCSTI refused,
// its stdin and stdout our pipes; its environment is the allow-list (agents/tools.AllowEnv,
// with Options.PassEnv) plus its own env.
package mcp
