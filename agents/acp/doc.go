// Package acp runs external agents that speak the Agent Client Protocol (ACP,
// agentclientprotocol.com) as summit subagents: Gemini CLI (gemini --acp), Claude Code
// (claude-agent-acp), Codex (codex-acp), or any command named in a config's acp_agents or an
// agent file of kind acp. It uses github.com/coder/acp-go-sdk for JSON-RPC.
//
// A Run is one agent process in one subagent's worktree: its own process group, an
// environment of the config's env plus a minimal inherited one (PATH, HOME, locale, proxies;
// a built-in also its provider's keys and endpoints), stdin/stdout the ACP connection, stderr
// kept as a bounded tail. In a worktree the process is confined as an isolated subagent's
// shell is (Linux Landlock, tools.Sandbox.ConfinedCommand), because Claude Code and Codex
// write files and run commands themselves, not over fs/* and terminal/*: it and everything
// it starts write only in the worktree, a temp dir of its own (TMPDIR, removed when the run
// ends), /dev, the build caches and Agent.Writable, the agent's own state (a built-in's:
// Claude Code ${CLAUDE_CONFIG_DIR:-~/.claude}, not ~/.claude.json, which it only fails to
// update; Codex ${CODEX_HOME:-~/.codex}; Gemini CLI ${GEMINI_CLI_HOME:-~}/.gemini; a config
// entry running a built-in's program gets its built-in's, plus its own writable; an agent
// file cannot widen it), and read everywhere but the workspace's .summit/ and summit's own
// directories; the network stays open. Codex runs in its unsandboxed agent-full-access mode
// there for bypassPermissions (Agent.ConfinedModes): its bubblewrap cannot start inside
// Landlock, so its sandboxed modes run no command (in plan, its read-only mode stays, its
// commands fail and its edits ask). Unsandboxed, this Codex (codex-acp 2.6.0, Codex 0.166)
// cannot be made to ask before a command (agent.go says why), so Start refuses it, before any
// process runs, in acceptEdits, where summit asks: a mode the agent would run unasked
// (Agent.Unasked) is used only where summit's policy allows the shell unasked too. The error
// names the alternatives (--permission-mode bypassPermissions or plan, an agent that asks).
// On a kernel without Landlock the agent runs unconfined, and a transcript message says so. Start sends initialize (fs read/write and terminal capabilities),
// session/new (cwd the worktree, no MCP servers), authenticate when the agent asks for it
// (see auth.go), and puts the agent in its most restrictive mode, where it asks before every
// change and command (Claude Code's and Gemini CLI's default, Codex's read-only; Codex's
// confined bypassPermissions aside), whatever the subagent's permission mode: summit's policy decides
// each request, and an agent that switches itself to another mode is set back. Claude Code is
// told (session/new _meta) to read only the user's settings, not the worktree's
// .claude/settings.json, whose permission rules come with the repository. Prompt sends the delegation prompt as session/prompt and returns its stop reason;
// its context ending sends session/cancel and, after a grace period, kills the group. Close
// always kills the group and reaps the process: no agent outlives its subagent. Every kill
// also kills each process whose environment holds the run's SUMMIT_ACP_RUN mark (RunMarkVar),
// which the agent's processes inherit: what it started in a session of its own (Claude Code's
// Bash commands) goes too.
//
// What the agent does becomes the subagent's events, through Config.Emit, in the agent's
// order (session/update notifications are handled in order; a request waits until the updates
// sent before it are recorded):
//
//	agent_message_chunk   TranscriptEvent token (also the turn's text, the capsule's source);
//	                      from codex-acp, a whole text that is a provider error body
//	                      {"error": {"message": …}} (Codex's model request failed for good, a
//	                      400) is TranscriptEvent error "the agent reports an error: …", and the
//	                      turn fails naming it although its stop reason is end_turn
//	agent_thought_chunk   TranscriptEvent thinking
//	tool_call             TranscriptEvent tool_call: call_id the toolCallId, tool the summit
//	                      tool for its kind (read → read_file, edit → replace, delete and
//	                      move → write_file, search → search_file_content, execute →
//	                      run_shell_command, fetch → web_fetch; think, switch_mode, other as
//	                      they are; an MCP tool, whatever its kind, as mcp__server__tool, read
//	                      from Claude Code's title or _meta.claudeCode.toolName, Codex's
//	                      title mcp.server.tool and Gemini CLI's toolCallId (mcp_<server>_<tool>__…,
//	                      the server one summit gave it), so the policy, the request and "allow for
//	                      sa-N" are about that one tool), args {title, kind, locations, input}
//	session_info_update   with codex-acp's _meta.codex.error {message, willRetry}: TranscriptEvent
//	                      error "the agent reports an error: …" ("(it retries)" when willRetry)
//	stderr                each line a TranscriptEvent message "stderr: …", sanitised (at most
//	                      200 a run, 400 characters each; the session redacts secrets)
//	tool_call_update      completed or failed: TranscriptEvent tool_result (text content,
//	                      diffs as unified hunks, a terminal's command, output and exit:
//	                      summit's own, or a command the agent ran itself and reported in
//	                      _meta terminal_info / terminal_output(_delta) / terminal_exit, as
//	                      codex-acp does; see agentRun in toolcall.go)
//	plan                  TranscriptEvent message, tool "plan", args.step the step in
//	                      progress (session.Subagent.PlanStep)
//	current_mode_update   TranscriptEvent message
//	request_permission    the subagent's policy: denied (policy_denied), allowed, or a summit
//	                      permission request (Config.Approve); the answer is the agent's own
//	                      allow_once / allow_always / reject_once option; in plan a command
//	                      (execute) is refused like an edit: it could change files
//	fs/read_text_file     the sandbox's read_file (line, limit applied); a missing file is
//	                      error -32002 "Resource not found: ENOENT …"
//	fs/write_text_file    the sandbox's write_file (parent directories created), after the
//	                      policy (plan refuses); the paths become the subagent's artifacts
//	terminal/*            the sandbox's run_shell_command (see terminal.go), after the policy
//	                      (plan refuses)
//
// Failures never hang a run: a line on stdout that is not a JSON object, or one longer than
// MaxLine, stops the stream (BadOutput); the process exiting ends the pending request at once;
// a hang is ended by the caller's context (the subagent's timeout), except when the agent's last
// word was an error (a Codex error notice, a stderr line that says error) and it then did
// nothing, with no call or request open, for Config.Quiet (40 s; Config.QuietFinal, 10 s, after
// an error it said it will not retry): the turn then fails, naming that error. Each error says
// what happened; Stderr has the agent's last words.
//
// Child sessions (the agent's own subagents, ACP's unstable subagents: subagent_update and
// session_message, which this SDK version does not type) are handled in child.go: summit
// declares the capability, and each child the agent announces becomes a summit subagent
// under the run's (Config.Child), with its own transcript, permission requests, file
// requests and terminals. Updates for a session nobody announced are dropped.
package acp
