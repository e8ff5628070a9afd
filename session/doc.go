// Package session is summit's pure core: the event schema, the fold that turns events into
// state, and the JSONL recording those events live in.
//
// # The one idea
//
// Every observable fact of a session is an Event. The recording is the source of truth; the
// session state (subagent tree, transcripts, handoffs, convergences, permissions, playbook,
// metric counters) is the fold Apply(state, event) over it. Live sessions and replays run the
// same fold, so a replay is the live session, frame for frame. Apply reads no clock, file or
// randomness; the only times it knows are the events' ts.
//
// # Wire format (schema v1)
//
// A recording is UTF-8 JSONL: one JSON object per line, each line ending in "\n":
//
//	{"v":1,"seq":17,"ts":"2026-11-22T10:00:00.123456Z","session_id":"s-01J…","type":"SubagentSpawned","subagent_id":"sa-2","data":{…}}
//
// The envelope keys always come first and in this order: v (schema version), seq (from 1, no
// gaps), ts (RFC 3339 UTC with microseconds), session_id, type, subagent_id (omitted when
// empty), then data (the typed payload, snake_case keys). Because the order is fixed, an index
// reads (offset, seq, type, subagent_id) from the line prefix without decoding the rest.
//
// subagent_id is set on every event about one subagent (its lifecycle, transcript,
// permissions, handoffs) and empty on session and convergence events, which carry their
// convergence_id in data. Ids are deterministic and short: sa-1, sa-2, … in spawn order; cv-N
// for convergences, cf-N for conflicts, pr-N for permission requests.
//
// Line 1 is SessionStarted; the last line of a cleanly closed session is SessionEnded.
//
// One line, one event, holds at most MaxEventLine = 16 MiB (16,777,216 bytes) before its
// newline. Readers stop at the cap: a longer line is the error "line N: an event line longer
// than 16 MiB (the cap)" (skipped with Lenient), never a read of the whole line, so a damaged
// or hostile file costs memory in proportion to the cap, not to its longest line. A writer
// never produces a longer line: the Recorder cuts an event that would be longer (its longest
// string values halved until it fits, each ending "… [cut by summit: N bytes, over the line
// cap]") and returns the event as cut, which is what the caller folds and shows.
//
// The closed set of types in v1 (see Types; payload fields are the struct tags in event.go):
//
//	session      SessionStarted SessionEnded CommandIssued CommandRejected UserNote
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
//	model        ModelRouted ModelSwitched
//
// Fields are added freely and never renamed or dropped. A type this build does not know is
// decoded as Unknown, kept, and skipped by the fold (it still takes its seq). A line with
// v > 1 is refused.
//
// # Lifecycle of a subagent
//
// SubagentSpawned (status queued) → SubagentActive (active) → transcript events → exactly one
// SubagentStop, whose outcome is success, failure, timeout or cancelled and which carries what
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
// fallbacks, and the parameters not sent. ModelSwitched records a move to a fallback when the
// model was not found or not available. SubagentStop.cost_usd is its cost when every model
// that ran has a price in the config (absent: unknown, not zero). Script tapes record neither.
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
//
// # Durability and secrets
//
// The Recorder writes each event to the kernel before it is shown, fsyncs every 100 ms and at
// once on lifecycle events, and redacts secrets (API key shapes, bearer tokens, the values of
// *_API_KEY, *_TOKEN, *_SECRET and *_PASSWORD variables) before anything reaches the disk. The
// event it returns is the event as recorded, and that is what the caller folds. It holds the
// file open for the whole session and checks, after each sync tick with writes and at Close,
// that the path still names it: a recording replaced or removed during the session fails it
// with ErrRecordingReplaced instead of being silently trusted.
//
// A secret split across streamed token or thinking deltas is redacted whole: the orchestrator
// passes each subagent's deltas through a StreamRedactor, which holds back only a tail that
// could still become a secret ("sk", "Bearer ", the start of a secret value) until the next
// delta or the subagent's next event decides it. So a delta may be recorded shorter or later
// than the model sent it, never with a piece of a secret.
//
// SessionStarted.changed_files names the agent and config files that are new, changed or
// removed since the last session in the workspace began (each with "during": that session's
// id when the file changed while it ran); summit reads those files once per session, so a
// file written during a session takes effect, named, in the next (see session/inventory).
//
// # Reading
//
// The Reader streams. A torn last line (a crash mid-write) is reported and skipped; a
// malformed line elsewhere is an error naming its line number, or with Lenient skipped and
// counted. The Index is built from line prefixes so a viewer can seek and decode only what it
// shows.
package session
