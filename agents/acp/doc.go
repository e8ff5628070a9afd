// Package acp runs external agents that speak the Agent Client Protocol (ACP,
// agentclientprotocol.com) as summit subagents: Gemini CLI (gemini --acp), Claude Code
// (claude-agent-acp), Codex (codex-acp), or any command named in a config's acp_agents or an
// agent file of kind acp. It uses github.com/coder/acp-go-sdk for JSON-RPC.
//
// A Run is one agent process in one subagent's worktree: its own process group, an
// environment of the config's env plus a minimal inherited one (PATH, HOME, locale, proxies;
// a built-in also its provider's keys and endpoints), stdin/stdout the ACP connection, stderr
// kept as a bounded tail. Start sends initialize (fs read/write and terminal capabilities),
// session/new (cwd the worktree, no MCP servers), authenticate when the agent asks for it
// (see auth.go), and sets the agent's mode to match the subagent's permission mode where it
// has one. Prompt sends the delegation prompt as session/prompt and returns its stop reason;
// its context ending sends session/cancel and, after a grace period, kills the group. Close
// always kills the group and reaps the process: no agent outlives its subagent.
//
// What the agent does becomes the subagent's events, through Config.Emit, in the agent's
// order (session/update notifications are handled in order; a request waits until the updates
// sent before it are recorded):
//
//	agent_message_chunk   TranscriptEvent token (also the turn's text, the capsule's source)
//	agent_thought_chunk   TranscriptEvent thinking
//	tool_call             TranscriptEvent tool_call: call_id the toolCallId, tool the summit
//	                      tool for its kind (read → read_file, edit → replace, delete and
//	                      move → write_file, search → search_file_content, execute →
//	                      run_shell_command, fetch → web_fetch; think, switch_mode, other as
//	                      they are), args {title, kind, locations, input}
//	tool_call_update      completed or failed: TranscriptEvent tool_result (text content,
//	                      diffs as unified hunks, a terminal's command and output)
//	plan                  TranscriptEvent message, tool "plan", args.step the step in
//	                      progress (session.Subagent.PlanStep)
//	current_mode_update   TranscriptEvent message
//	request_permission    the subagent's policy: denied (policy_denied), allowed, or a summit
//	                      permission request (Config.Approve); the answer is the agent's own
//	                      allow_once / allow_always / reject_once option
//	fs/read_text_file     the sandbox's read_file (line, limit applied); a missing file is
//	                      error -32002 "Resource not found: ENOENT …"
//	fs/write_text_file    the sandbox's write_file (parent directories created), after the
//	                      policy (plan refuses); the paths become the subagent's artifacts
//	terminal/*            the sandbox's run_shell_command (see terminal.go), after the policy
//
// Failures never hang a run: a line on stdout that is not a JSON object, or one longer than
// MaxLine, stops the stream (BadOutput); the process exiting ends the pending request at once;
// a hang is ended by the caller's context (the subagent's timeout). Each error says what
// happened; Stderr has the agent's last words.
//
// This SDK version (v0.13.0) has no child sessions: updates for another session id are
// ignored.
package acp
