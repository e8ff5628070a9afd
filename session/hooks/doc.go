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
// Events: SubagentStart (the subagent starts to run: SubagentActive), SubagentStop,
// PermissionRequested, ConflictDetected, ConvergenceComplete, SessionEnded. A misspelt event,
// an entry without command, a bad matcher or timeout is refused with file:line (and the
// nearest event name).
//
// matcher is a regular expression (RE2) that must match the whole agent type or the whole
// agent name: "code-reviewer" matches that agent only, "explore|plan" either, ".*review.*"
// any name holding review; "" or "*" matches every agent. Events about no agent
// (ConflictDetected, ConvergenceComplete, SessionEnded) run only the hooks without a matcher.
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
// One JSON object, then a newline:
//
//	{"hook_event_name": "SubagentStop", "session_id": "s-…", "workspace": "/abs/ws",
//	 "cwd": "/abs/where/it/runs", "subagent_id": "sa-2", "agent_type": "code-reviewer",
//	 "agent_name": "code-reviewer", "worktree": "/abs/worktree",
//	 "event": {"v":1,"seq":41,"ts":"…","session_id":"s-…","type":"SubagentStop","subagent_id":"sa-2","data":{…}},
//	 "outcome": "success", "last_message": "…", "capsule_summary": "…",
//	 "stop_hook_active": false, "block_count": 0, "max_blocks": 3}
//
// event is the triggering event exactly as the recording holds it (session/record's wire
// format). The subagent fields are present for events about a subagent (worktree when it is
// isolated); outcome, last_message, capsule_summary, stop_hook_active, block_count and
// max_blocks only for SubagentStop. A SubagentStop hook that runs before the stop (below) gets
// the stop summit is about to record, with seq 0.
//
// # Exit codes (Claude Code's)
//
//	0        ok; stdout may hold {"decision":"block","reason":"…"} for a SubagentStop hook
//	2        block, for a SubagentStop hook: the reason is stderr (else stdout's reason)
//	other    the hook failed: recorded, and nothing else changes
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
// The user's hooks always run. A workspace's hooks (.summit/config.yaml) are part of the
// workspace's trust (session/trust): until the user trusts the workspace (the workbench's
// inbox item, summit trust, or --trust-workspace for one headless run) they are not even in
// the config a session gets, and SessionStarted.untrusted_ignored names them. The trust covers
// the content of every workspace file a hook's command names (./scripts/check.sh), so a
// changed script is asked about again. The hooks-only store of earlier versions
// (hooks-trust.json) is no longer read; session/trust's doc says why.
//
// # Replay
//
// Replays never run hooks: a recording's HookRan events are all there is of them. SessionEnded
// hooks run as the session ends: their stdin is the SessionEnded about to be recorded (with
// the seq it will have), and each HookRan (trigger_seq 0: the end that follows) is recorded
// just before it.
package hooks
