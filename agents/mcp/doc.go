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
// # Jails
//
// Manager.Confine(dir, jail) makes the stdio servers run in dir start through jail, a
// JailFunc (summit gives agents/tools.Sandbox.ConfinedCommandNet of the subagent that works in
// dir), with a temp dir of their own as TMPDIR, removed when the process exits. Such a server
// is confined as that subagent's shell is (agents/tools, "Process confinement"): it writes
// only below the worktree, its temp dir and the subagent's private caches (GOCACHE,
// GOMODCACHE, npm, pip, XDG_CACHE_HOME), never the main workspace, HOME or the shared caches;
// it reads everything but the hidden paths (every workspace's .summit/, summit's config and
// data dirs, other worktrees); it runs in PID, mount and IPC namespaces, so it cannot see or
// signal summit nor read its environment; and it has no network, loopback included, unless
// the server's config says network: true (provider.MCPServer.Network) or the subagent's jail
// has the network (an agent that may web_fetch). The choice: most MCP servers work on local
// files and need no network; one that calls an API says so in the user's config, where a
// workspace's servers are trust-gated; and an agent that may fetch already reaches the
// network, so its servers gain nothing it lacks.
//
// Confine("", jail) does the same for the session's own instances, which every subagent
// shares (read-only grants, and each server's tool list). summit gives them a read-only jail
// (session/live: a Sandbox rooted at the server's own temp dir, its private caches inside
// it): it writes only there, reads as above, and has the network only with network: true.
// A readOnlyHint is the server's word; the jail makes a server that lies about it fail
// instead of changing the workspace behind the subagent's recorded changes. A session run
// without isolation (--no-isolation) calls the shared instance's writing tools in the
// workspace, as the user chose, so there the shared servers keep the terminal guard only.
//
// The costs: a server that writes its own state under HOME (logs, a config it creates) fails
// there; `npx -y pkg` of a package that is not installed needs network: true to download it
// into its private npm cache (a shared server's cache goes with its temp dir, so once per
// start; a jailed subagent's lasts as long as the subagent); without
// Landlock the jail's file rules do not hold (the namespaces and seccomp filter still do, and
// the subagent's transcript says so); and a server that is only a client of something outside (docker run, an SSH command) is
// as confined as that something, not more. Servers started without a jail (summit doctor,
// and any Manager nobody called Confine on) get Options.Command, the terminal guard.
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
// A stdio server starts through its jail (see "Jails") or else Options.Command (default
// agents/tools.GuardedCommand); either way in a
// session of its own with no controlling terminal, no terminal device and TIOCSTI refused,
// its stdin and stdout our pipes; its environment is the allow-list (agents/tools.AllowEnv,
// with Options.PassEnv) plus its own env.
package mcp
