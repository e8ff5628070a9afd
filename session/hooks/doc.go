// Package hooks runs the user's hooks: shell commands configured per session event, the way
// Claude Code and Gemini CLI users script notifications, checks and logging. Its one job is
// to decide which hooks run for an event, run them and report how each ended; session/live
// calls it and records the outcomes as HookRan events.
//
// # Configuration
//
// In the user's config.yaml (~/.config/summit) and the workspace's .summit/config.yaml
// (agents/provider), both applying, the user's entries first:
//
//	hooks:
//	  SubagentStop:
//	    - matcher: code-reviewer        # optional
//	      command: ./scripts/check.sh   # bash -c, in the main workspace
//	      timeout: 120                  # seconds; default 60, at most 3600
//	  SessionEnded:
//	    - command: notify-send "summit: session ended"
//	  max_blocks: 3                     # SubagentStop blocks per subagent; default 3, at most 20
//
// Events: summit's six, SubagentStart (the subagent starts to run: SubagentActive),
// SubagentStop, PermissionRequested, ConflictDetected, ConvergenceComplete, SessionEnded;
// and Claude Code's, where summit has a counterpart:
//
//	PreToolUse          before each tool call of a subagent summit runs (after its arguments
//	                    decode, before the policy's verdict is acted on), and before an ACP
//	                    agent's permission request is decided; may deny, ask or allow (below)
//	PostToolUse         after each call that ran (is_error says whether it failed); may add
//	                    a note for the model. An ACP agent's call too, when the agent reports
//	                    it completed or failed (tool_call_update): there the hook observes only
//	                    (an ACP agent cannot be given additionalContext mid-turn: it ran the
//	                    call itself), so exit code 2 is recorded as a failure; it runs after
//	                    the call's tool_result is recorded (trigger_seq), tool_name being the
//	                    tool of the call's kind or its mcp__server__tool, tool_input the
//	                    agent's raw input beside the call's title, kind and locations
//	PostToolUseFailure  after a call that ran and failed (besides PostToolUse)
//	UserPromptSubmit    a message the user sends to a subagent (plain text to the subagent
//	                    holding control); may withhold it or add context to it. A
//	                    /delegate's task is the subagent's first prompt: the hooks (matched
//	                    on the agent) run on it before the command is issued; a block rejects
//	                    the /delegate with the hook's reason (HookRan about no subagent, then
//	                    CommandRejected), context is added to the task it records and sends
//	Stop                a subagent the user delegated to (no parent subagent) ends its turn:
//	                    summit's user talks to those subagents as Claude Code's talks to its
//	                    main agent; blocks as SubagentStop does (both run for such a
//	                    subagent, SubagentStop's first; they share max_blocks)
//	Notification        something waits for the user: a permission request nobody has
//	                    decided (notification_type permission_prompt), a subagent waiting
//	                    for a message (idle_prompt), a conflict to review (review)
//	SessionEnd          Claude Code's name for SessionEnded (its hooks run after those)
//
// Claude Code's other events (PermissionRequest, PreCompact, PostCompact, SessionStart,
// StopFailure...: provider.InertHookEvents lists them) have no counterpart in summit:
// their entries are checked, then left out with a warning naming them as having no effect
// (summit run says it on stderr, summit hooks check too). So are hooks of type prompt, http,
// agent or mcp_tool: summit runs command hooks. A misspelt event, an entry without command,
// a bad matcher or timeout is refused with file:line (and the nearest event name).
//
// A Claude Code settings.json hooks block pastes as it is: YAML is a superset of JSON, so
// hooks: followed by the JSON object loads (line numbers and all), statusMessage, once and
// async are read (and change nothing), and summit hooks check FILE takes a config.yaml or a
// whole settings.json.
//
// matcher is a regular expression (RE2) that must match a whole name: "code-reviewer"
// matches that agent only, "explore|plan" either, ".*review.*" any name holding review; ""
// or "*" matches everything. For the tool events it matches the tool: summit's name
// (run_shell_command, replace, write_file, read_file, glob, search_file_content, web_fetch,
// web_search) or Claude Code's for it (Bash; Edit, MultiEdit, NotebookEdit; Write; Read;
// Glob, LS; Grep; WebFetch; WebSearch; Task, Agent), an MCP tool by mcp__server__tool as in
// Claude Code. For Notification it matches notification_type. Otherwise it matches the
// agent type or name, and events about no agent (ConflictDetected, ConvergenceComplete,
// SessionEnded, SessionEnd) run only the hooks without a matcher.
//
// # Running
//
// Each hook runs as bash -c COMMAND in a session and process group of its own (no controlling
// terminal, no terminal device, TIOCSTI refused: agents/tools.GuardedCommand), in the main
// workspace, also for the events of an isolated subagent: a relative command
// (./scripts/check.sh) or a Makefile it runs is the workspace's, never a copy the subagent could
// have rewritten in its worktree. A hook that checks the subagent's work reads "worktree" from
// its stdin. Its environment is an allow-list of summit's (agents/tools.AllowEnv, as the shell
// tool's: PATH, HOME, the locale, TERM, TMPDIR, the tool caches, plus Options.PassEnv, the
// user's env_passthrough). At its timeout the whole group is killed;
// when it exits, whatever it left running in its group is killed too (detach with setsid
// what must outlive it), and a child still holding its stdout delays nothing by more than a
// moment. The hooks of one event run one after another, in configuration order. Stdout and
// stderr are read bounded (64 KiB each); the recorded stderr excerpt (its last 2 KiB) and
// reason (4 KiB) are redacted as the recording is.
//
// # Stdin
//
// One JSON object, then a newline, with Claude Code's field names where it has the field:
// session_id, transcript_path (summit's recording, when it records), cwd (always the main
// workspace), hook_event_name, permission_mode, tool_name, tool_input, tool_use_id,
// tool_response, prompt, message, notification_type, stop_hook_active, reason. tool_name is
// summit's name and tool_alias Claude Code's (Bash); tool_input is the call's arguments as
// recorded plus Claude Code's absolute file_path when the call names a path. A SubagentStop
// hook gets:
//
//	{"hook_event_name": "SubagentStop", "session_id": "s-…", "workspace": "/abs/ws",
//	 "cwd": "/abs/where/it/runs", "subagent_id": "sa-2", "agent_type": "code-reviewer",
//	 "agent_name": "code-reviewer", "worktree": "/abs/worktree",
//	 "event": {"v":1,"seq":41,"ts":"…","session_id":"s-…","type":"SubagentStop","subagent_id":"sa-2","data":{…}},
//	 "outcome": "success", "last_message": "…", "capsule_summary": "…",
//	 "stop_hook_active": false, "block_count": 0, "max_blocks": 3}
//
// Per event (besides session_id, workspace, cwd, hook_event_name and, for a subagent's,
// subagent_id, agent_type, agent_name, worktree):
//
//	PreToolUse          {"hook_event_name":"PreToolUse","permission_mode":"acceptEdits",
//	                     "tool_name":"run_shell_command","tool_alias":"Bash",
//	                     "tool_input":{"command":"rm -rf build"},"tool_use_id":"call-1"}
//	PostToolUse         the same, plus "tool_response":{"output":"kept\n","is_error":false}
//	PostToolUseFailure  the same, plus "error": the failed call's output
//	UserPromptSubmit    {"hook_event_name":"UserPromptSubmit","prompt":"also fix the docs"}
//	Stop, SubagentStop  {"hook_event_name":"Stop","stop_hook_active":false,"last_message":"…",
//	                     "outcome":"success","block_count":0,"max_blocks":3,"event":{…}}
//	Notification        {"hook_event_name":"Notification","notification_type":"permission_prompt",
//	                     "message":"sa-1 needs your permission to use run_shell_command (pr-1)","event":{…}}
//	SessionEnd          {"hook_event_name":"SessionEnd","reason":"script_end","event":{…}}
//
// event is the triggering event exactly as the recording holds it (session/record's wire
// format). The subagent fields are present for events about a subagent (worktree when it is
// isolated); outcome, last_message, capsule_summary, stop_hook_active, block_count and
// max_blocks only for SubagentStop. A SubagentStop hook that runs before the stop (below) gets
// the stop summit is about to record, with seq 0.
//
// # Exit codes and output (Claude Code's)
//
//	0        ok; stdout may hold a JSON decision (below); other stdout is ignored, except
//	         a UserPromptSubmit hook's, which is context added to the message
//	2        block: the reason is stderr (stdout is not read), for SubagentStop, Stop,
//	         PreToolUse (deny), PostToolUse (the reason goes to the model: the call ran) and
//	         UserPromptSubmit (the message is withheld; the reason is a note to the user)
//	other    the hook failed: recorded, and nothing else changes
//
// JSON on stdout: {"decision":"block","reason":"…"} blocks as exit code 2 does;
// {"hookSpecificOutput":{"permissionDecision":"allow"|"deny"|"ask",
// "permissionDecisionReason":"…"}} and the older {"decision":"approve"|"block"} are a
// PreToolUse hook's decision; {"hookSpecificOutput":{"additionalContext":"…"}} is a note for
// the model from PostToolUse or UserPromptSubmit; "continue": false is read as a block.
//
// # PreToolUse never widens
//
// A PreToolUse decision is combined with the subagent's policy and permission mode, and can
// only narrow them: deny refuses the call (the reason is the tool's error the model reads,
// recorded as HookRan with outcome blocked, decision deny and the tool, then a
// PermissionRequested and its PermissionDenied by the hook, then the policy_denied
// transcript event); ask makes a call the policy allows go to the user's inbox (or
// --approve) as any ask; allow changes nothing: a call the policy denies stays denied, and
// one it asks about still asks. Unlike Claude Code, whose allow skips the permission prompt,
// summit's trust boundary says nothing from configuration widens what the user granted. The
// hooks of a call run one after another; the first deny ends the run. For an ACP agent the
// agent's own permission request is the call: a deny refuses it, allow and ask leave it to
// the user (or --approve).
//
// # Blocking a stop
//
// A subagent summit runs itself runs its SubagentStop hooks when its model ends with a final
// message, and an external (ACP) agent when its prompt turn ends (end_turn) with nothing more
// to say to it, before the stop is recorded. A block sends the reason to the subagent as a
// new user message (a UserNote to it; for an ACP agent, its next session/prompt) and the
// subagent takes another turn; stop_hook_active and block_count tell the hook it already
// blocked. After max_blocks blocks a further block is recorded as failed, saying why, and the
// subagent stops. A remote ABI agent's run (one invocation) and an ACP agent's own children
// stop where they are: their SubagentStop hooks, and every other event's, run after the event
// is recorded and cannot block: exit code 2 there is a failure.
//
// # Trust
//
// Trust is the workspace's, one answer for every session of it, as session/trust says:
// trusted once (the workbench's inbox item, or summit trust), a workspace's hooks run in
// the next workbench session and in summit run alike, until a file the trust covers
// changes; untrusted, they run in neither, and --trust-workspace (--trust-hooks) trusts it
// for one headless run without recording anything. The user's hooks always run. A workspace's hooks (.summit/config.yaml) are part of the
// workspace's trust (session/trust): until the user trusts the workspace (the workbench's
// inbox item, summit trust, or --trust-workspace for one headless run) they are not even in
// the config a session gets, and SessionStarted.untrusted_ignored names them. The trust covers
// the content of every workspace file a hook's command names (./scripts/check.sh), so a
// changed script is asked about again, also one named as "$CLAUDE_PROJECT_DIR"/path, as
// Claude Code's settings name them (CLAUDE_PROJECT_DIR is set to the workspace for hooks). The hooks-only store of earlier versions
// (hooks-trust.json) is no longer read; session/trust's doc says why.
//
// # Replay
//
// Replays never run hooks: a recording's HookRan events are all there is of them. SessionEnded
// hooks run as the session ends: their stdin is the SessionEnded about to be recorded (with
// the seq it will have), and each HookRan (trigger_seq 0: the end that follows) is recorded
// just before it.
package hooks
