// Package session is summit's pure core: the event schema and the fold that turns events into
// state. Recording and reading the JSONL those events live in is package session/record;
// rendering a state for people, and its metrics, is package session/render.
//
// # The one idea
//
// Every observable fact of a session is an Event. The recording is the source of truth; the
// session state (subagent tree, transcripts, handoffs, convergences, permissions, playbook,
// metric counters) is the fold Apply(state, event) over it. Live sessions and replays run the
// same fold, so a replay is the live session, frame for frame. Apply reads no clock, file or
// randomness; the only times it knows are the events' ts.
//
// # Transcript text and checkpoints
//
// A State keeps transcript items as metadata (seq, kind, tool, call id, flags) in append-only
// chunked stores that clones share, so Clone costs O(1) per transcript and Checkpoint (the
// frozen copy replay keeps every few megabytes) costs only what changed since the previous
// checkpoint. Their text lives in memory by default. A state given a TextStore
// (SetTextStore) instead records, for each transcript event, where its line lies in the
// recording (ApplyAt passes the event's Loc: offset and length) and reads the text back
// through the store's TextSource, with a cache bounded by bytes, when Transcript.Text or
// Transcript.Item is called: a replay or a recorded live session then holds a few bytes per
// event, not the text. The fold itself still does no I/O: ApplyAt only notes the Loc, and the
// text source is the caller's (record.FileSource, record.PathSource). An event folded without
// a Loc keeps its text in memory, so both kinds mix in one transcript.
//
// A counting state (SetCountOnly, what `summit inspect` folds) runs the same Apply with the
// same rules and counters but keeps no transcript items (each transcript counts its items and
// bytes and remembers its last item's kind) and no log, so its memory depends on the numbers
// of subagents, handoffs, convergences and permission requests, not on the recording's length.
// SetCountItems counts the transcripts' items the same way and keeps the rest (the log, whose
// mirror items then name items the state does not hold, and the permission requests whole):
// it is for a reader that keeps each item itself as it is folded, and may empty the log
// between events (render.TextSpool, `replay --print`).
//
// # Schema v1
//
// The wire format (the JSONL envelope, the line cap) is described in session/record.
//
// subagent_id is set on every event about one subagent (its lifecycle, transcript,
// permissions, handoffs) and empty on session and convergence events, which carry their
// convergence_id in data. Ids are deterministic and short: sa-1, sa-2, … in spawn order; cv-N
// for convergences, cf-N for conflicts, pr-N for permission requests.
//
// Line 1 is SessionStarted (or SessionForked); the last line of a cleanly closed session is
// SessionEnded.
//
// The closed set of types in v1 (see Types; payload fields are the struct tags in event.go):
//
//	session      SessionStarted SessionForked SessionEnded CommandIssued CommandRejected
//	             UserNote
//	lifecycle    SubagentSpawned SubagentActive SubagentStop SubagentError SubagentTimeout
//	             SubagentCancelled
//	transcript   TranscriptEvent (event_type subagent_start token thinking message tool_call
//	             tool_result policy_denied error)
//	permissions  PermissionRequested PermissionGranted PermissionDenied
//	handoff      HandoffInitiated HandoffComplete HandoffResolved
//	convergence  ConvergenceInitiated ConflictDetected ConflictReviewRequest
//	             ManualReviewRequired ConflictResolved ConvergenceComplete ConvergedResult
//	             DeltaBatch DeltaBatchApplied
//	workspace    SubagentIsolated SubagentChanges ChangesApplied ApplyUndone
//	             WorktreeDiscarded ChangesRebased
//	model        ModelRouted ModelSwitched ModelTurn
//	hooks        HookRan
//	verification VerifyRan
//	trust        WorkspaceTrusted
//	runners      RunnerCursor
//
// Fields are added freely and never renamed or dropped. A type this build does not know is
// decoded as Unknown, kept, and skipped by the fold (it still takes its seq). A line with
// v > 1 is refused.
//
// SessionStarted.changed_files names the agent and config files that are new, changed or
// removed since the last session in the workspace began (each with "during": that session's
// id when the file changed while it ran); summit reads those files once per session, so a
// file written during a session takes effect, named, in the next (see session/inventory).
//
// SessionStarted.program_version names the summit that recorded the session: the release
// version set at build time, else the module version from the build info, else "devel" (an
// imported session names the importer). CommandRejected.usage is the command's usage line for a
// syntax error only; a refusal of a well-formed line (an unknown id, nothing to apply) has none.
//
// SessionStarted.unconfined_shell is true when subagents' shells run unconfined: the system has
// no Landlock and the user opted in with --allow-unconfined-shell (absent otherwise; without
// the opt-in such a shell is refused).
// SessionStarted.workspace_trust is "trusted", "untrusted" or "none" (the workspace
// configures nothing that needs trust; see session/trust). While untrusted,
// untrusted_ignored names what of the workspace was ignored (config sections such as
// "mcp_servers.fs", "hooks", "web_allow_hosts", and "agent file .summit/agents/x.md") and
// trust_items lists what trusting would enable, one line each. WorkspaceTrusted (workspace,
// items, applied, note) records that the user trusted it during the session: applied says the
// items took effect at once; otherwise note says why they apply from the next session.
//
// SubagentSpawned.agent_shadows, when set, says which definition runs because it took the
// name of another (a workspace file over a built-in or the user's: "workspace
// .summit/agents/general.md, shadows built-in"); the tree marks the subagent with its layer.
//
// # Forks
//
// A fork (summit fork, the replay's F) continues a recording live from one of its events. Its
// line 1 is SessionForked instead of SessionStarted: the parent (path, session id, seq, sha256
// of the parent's bytes through that event's line, and the parent's own lineage), the fork's
// own start (its workspace is a restored copy), the parent's start, and where the workspace
// came from. The parent's events 2..seq follow with their seqs and times but the fork's
// session_id, so the fork replays alone and its state at seq is the parent's. Then come the
// events that close what was open there, at the fork point's time: pending permission
// requests denied (by "fork"), running subagents stopped with outcome interrupted (status
// interrupted; only a fork records it), open handoffs resolved and unfinished convergences
// completed as interrupted. The fork's own events follow (times run back once, after line 1:
// readers clamp such gaps to zero). See session/fork.
//
// # Runner cursors
//
// RunnerCursor {job, runner, seq} is recorded for a subagent placed on a remote runner
// (session/runners) when its job is placed (seq 0) and, in the same write as each event folded
// from the job's stream, with that event's stream sequence. The fold keeps the last one on the
// subagent (RunnerJob, RunnerSeq; Runner follows a --retry's new runner), refuses one that goes
// back within a job, and logs nothing: a replay, --print and an export show the same as
// without it. `summit resume` reads the stream again after RunnerSeq (event-sourced: the
// recording alone says where to go on). SubagentSpawned's runner_on and runner_retry keep the
// /delegate's --on and --retry (RunnerOn, RunnerRetry), so a resumed session re-places a
// reattached subagent whose runner dies as the first session would have.
//
// # Lifecycle of a subagent
//
// SubagentSpawned (status queued) → SubagentActive (active) → transcript events → exactly one
// SubagentStop, whose outcome is success, failure, timeout or cancelled (disconnected for an
// external agent's child, interrupted in a fork) and which carries what
// the subagent had (capsule, tool count, artifacts, duration, tokens), so partial results
// survive a failure. SubagentError, SubagentTimeout and SubagentCancelled record the cause
// before the stop; a SubagentError whose will_retry (default: retryable) is true counts a
// retry and the subagent goes on. Token and thinking events are deltas and coalesce into one
// transcript item per run.
//
// # Models
//
// Before its first model turn a subagent on a real model gets ModelRouted: the provider and
// model its requests go to, the agent's own choice (requested), why (a config route, a tier
// mapping when the name's provider is not configured or --provider overrides it), its
// fallbacks, and the parameters not sent. A move to a fallback when the model stayed
// overloaded or rate-limited after its retries (429 past its Retry-After budget, 503, 529) is
// a second ModelRouted with from (the model it leaves) and why (the reason); the fold counts
// it as a switch (Subagent.Switches), so the model in use is the new one. ModelSwitched
// records a move when the model was not found or not available, with the reason (older
// recordings also hold overload moves there). SubagentStop.cost_usd is its cost when every model
// that ran has a price in the config (absent: unknown, not zero). Script tapes record neither.
// Every model call of a subagent summit runs itself ends with a ModelTurn (turn and attempt
// from 1, the tokens the provider reported for that call, how it stopped, "error" for a failed
// attempt), after its streamed text and before its tool calls; the fold adds its tokens to the
// subagent's as it runs, and SubagentStop's tokens are their sum. An ACP agent placed on a
// runner whose model calls the session makes (session/runners, the relay) gets a ModelTurn per
// call too, from the call's response: turn n, attempt 1, for its n-th call.
//
// # Hooks
//
// HookRan records one run of a user's hook command (session/hooks): hook_event, the command as
// configured, source (user or workspace), trigger_seq (the event that ran it), exit_code,
// outcome (ok, blocked, failed, timeout, error), duration_ms, reason, and the end of its
// stderr. Hooks run outside the fold: a HookRan is recorded when its hook finishes, so it may
// come well after its trigger (and never after SessionEnded: SessionEnded hooks run after the
// recording ends and are not recorded). A SubagentStop hook of a native subagent runs before
// the stop, without trigger_seq, and may block it: HookRan blocked, then the reason as a
// UserNote to the subagent, then its next turn; the fold counts it and logs it, nothing more.
// Replays never run hooks: they read HookRan like any event.
//
// # Conflict reviews
//
// A review shows everything that will land. ConflictDetected.review (hunk and file
// conflicts) holds the conflict's file, each member's whole change to it (changes[]: one
// SideChange per member, its hunks[] each with text and, when it is in a conflict, that
// conflict's id; a hunk without one lands whatever a region choice decides), and per choice
// an outcome: choice, whole_file (the --whole-file form: that side's whole version of the
// file, which drops every other member's hunk in it), diff (the file's change as the choice
// leaves it), also_lands (other sides' hunks that land with it), drops, and pending (other
// conflicts of the file, decided there). ConflictResolved.whole_file records a --whole-file
// choice (the file's other open conflicts are resolved with it, note "settled by cf-N"), and
// kept and dropped the hunks the choice kept and dropped, also_lands the other sides' hunks
// that still land in the file with a region choice, and playbook_kept and playbook_dropped
// (each {subagent_id, text}) the playbook operations it lands and drops: an automatic
// method's choice is on record with its consequences (a vote or consensus choice: the chosen
// member's whole result kept, one entry per file, the other sides' dropped). A member's
// playbook operations land only with its whole change (session/converge), so each outcome
// also lists playbook_lands and playbook_drops. An apply review's conflict (kind apply) records the
// conflicted regions, not whole files: lines (the first to the last region, in the
// workspace's file), each side's value as the region's change against the base, context as
// git merge-file --diff3 marks the regions with 3 lines around (numbered as in the
// workspace's file), edit_template the whole merged file, and choice edit (ConflictResolved
// content: the file's whole text as the reviewer wrote it). Older recordings have none of
// these fields and replay as before. A vote or consensus conflict's sides carry reason (why the
// side stands apart: a tie, a different result, a confidence outside the band) and diff (the
// member's whole change set), next to value.
//
// # Verification
//
// VerifyRan is summit's measurement of a result before it lands, never an agent's claim (a
// capsule's verification block is what the agent says it checked; UIs show it as "claims:",
// and a VerifyRan as "measured:"). /apply sa-N|cv-N --verify CMD, or the config's verify:
// command, builds the merged result /apply would leave in the workspace, checks it out in a
// scratch worktree outside the workspace, and runs CMD there with a subagent's confined shell.
// The event carries target (sa-N or cv-N; subagent_id is set for a subagent), command,
// source (flag or config), exit_code (-1 when it did not exit by itself), outcome (passed,
// failed, timeout, error), duration_ms, the end of its output (redacted), the files that
// would land, dry_run, and forced. It comes before the /apply's own record: a pass is followed
// by CommandIssued and the apply's events; a failure by CommandRejected (nothing lands) unless
// --force, when forced is set and the apply follows. The fold keeps the last one on its
// subagent or convergence (Verify) for the tree and the review.
//
// # External agents
//
// A subagent run by an external ACP agent (agents/acp: Gemini CLI, Claude Code, Codex, any
// acp_agents command) is recorded with the same events as a native one, so it replays with no
// agent process: its message and thought chunks are token and thinking events, its tool calls
// tool_call and tool_result events (tool: the summit tool for the ACP kind, args: title, kind,
// locations, input), its permission requests PermissionRequested/Granted/Denied, its refusals
// policy_denied, its changes SubagentChanges. Its plan is a message event whose tool is "plan"
// (PlanTool): the text lists the entries, args.step names the step in progress, which the fold
// keeps as Subagent.PlanStep for the tree. It records no ModelRouted (the agent picks its own
// model).
//
// An external agent's own subagents (ACP child sessions) are children in the tree: a
// SubagentSpawned with parent_subagent_id (the subagent it runs under) and agent_session_id
// (the agent's id for it), never queued, then SubagentActive, its transcript, and one
// SubagentStop when its parent's run ends. A child shares its parent's worktree and policy and
// has no changes of its own. The state its agent reports is a message event whose tool is
// "agent_state" (AgentStateTool; args.state running, idle, requires_action or unknown), kept
// as Subagent.AgentState. A child whose agent never said how it ended stops with outcome
// "disconnected" (status disconnected): unknown, neither a failure nor a cancellation; the
// fold accepts that outcome only for a child.
package session
