package session

import (
	"fmt"
	"time"

	"github.com/summit-dev/summit/protocols"
)

// SchemaVersion is the JSONL schema version this build writes and the highest it reads.
const SchemaVersion = 1

// TimeLayout is the envelope's ts format: RFC 3339, UTC, microseconds.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Type names an event. The set is closed per schema version: see Types.
type Type string

// The event types of schema v1. Names come from the slash-command specification; add more
// where needed, never rename one.
const (
	TypeSessionStarted  Type = "SessionStarted"
	TypeSessionForked   Type = "SessionForked"
	TypeSessionEnded    Type = "SessionEnded"
	TypeCommandIssued   Type = "CommandIssued"
	TypeCommandRejected Type = "CommandRejected"
	TypeUserNote        Type = "UserNote"

	TypeSubagentSpawned   Type = "SubagentSpawned"
	TypeSubagentActive    Type = "SubagentActive"
	TypeSubagentStop      Type = "SubagentStop"
	TypeSubagentError     Type = "SubagentError"
	TypeSubagentTimeout   Type = "SubagentTimeout"
	TypeSubagentCancelled Type = "SubagentCancelled"

	TypeTranscriptEvent Type = "TranscriptEvent"

	TypePermissionRequested Type = "PermissionRequested"
	TypePermissionGranted   Type = "PermissionGranted"
	TypePermissionDenied    Type = "PermissionDenied"

	TypeHandoffInitiated Type = "HandoffInitiated"
	TypeHandoffComplete  Type = "HandoffComplete"
	TypeHandoffResolved  Type = "HandoffResolved"

	TypeConvergenceInitiated  Type = "ConvergenceInitiated"
	TypeConflictDetected      Type = "ConflictDetected"
	TypeConflictReviewRequest Type = "ConflictReviewRequest"
	TypeManualReviewRequired  Type = "ManualReviewRequired"
	TypeConflictResolved      Type = "ConflictResolved"
	TypeConvergenceComplete   Type = "ConvergenceComplete"
	TypeConvergedResult       Type = "ConvergedResult"
	TypeDeltaBatch            Type = "DeltaBatch"
	TypeDeltaBatchApplied     Type = "DeltaBatchApplied"

	TypeSubagentIsolated  Type = "SubagentIsolated"
	TypeSubagentChanges   Type = "SubagentChanges"
	TypeChangesApplied    Type = "ChangesApplied"
	TypeApplyUndone       Type = "ApplyUndone"
	TypeWorktreeDiscarded Type = "WorktreeDiscarded"
	TypeChangesRebased    Type = "ChangesRebased"

	TypeModelRouted   Type = "ModelRouted"
	TypeModelSwitched Type = "ModelSwitched"
	TypeModelTurn     Type = "ModelTurn"

	TypeHookRan Type = "HookRan"

	TypeVerifyRan        Type = "VerifyRan"
	TypeWorkspaceTrusted Type = "WorkspaceTrusted"

	TypeRunnerCursor Type = "RunnerCursor"
)

// Types is the closed set of event types of schema v1, in documentation order.
var Types = []Type{
	TypeSessionStarted, TypeSessionForked, TypeSessionEnded, TypeCommandIssued, TypeCommandRejected, TypeUserNote,
	TypeSubagentSpawned, TypeSubagentActive, TypeSubagentStop, TypeSubagentError,
	TypeSubagentTimeout, TypeSubagentCancelled,
	TypeTranscriptEvent,
	TypePermissionRequested, TypePermissionGranted, TypePermissionDenied,
	TypeHandoffInitiated, TypeHandoffComplete, TypeHandoffResolved,
	TypeConvergenceInitiated, TypeConflictDetected, TypeConflictReviewRequest,
	TypeManualReviewRequired, TypeConflictResolved, TypeConvergenceComplete,
	TypeConvergedResult, TypeDeltaBatch, TypeDeltaBatchApplied,
	TypeSubagentIsolated, TypeSubagentChanges, TypeChangesApplied, TypeApplyUndone,
	TypeWorktreeDiscarded, TypeChangesRebased,
	TypeModelRouted, TypeModelSwitched, TypeModelTurn,
	TypeHookRan,
	TypeVerifyRan,
	TypeWorkspaceTrusted,
	TypeRunnerCursor,
}

// Known reports whether t is a type of schema v1.
func (t Type) Known() bool { _, ok := Decoders[t]; return ok }

// Event is one line of a session recording.
//
// Invariant: Data.Type() == Type. Data is a value of the payload type named by Type, or
// Unknown for a type this build does not know (kept so a reader can skip it with a warning and
// a re-writer can keep it).
type Event struct {
	V          int
	Seq        uint64
	TS         time.Time
	SessionID  string
	Type       Type
	SubagentID string
	Data       Data
}

// Data is an event payload (the "data" object).
type Data interface{ Type() Type }

// New builds an event whose Type is taken from its payload. Seq, TS and SessionID are set by
// whoever serialises events (the orchestrator); V is always SchemaVersion.
func New(subagentID string, d Data) Event {
	return Event{V: SchemaVersion, Type: d.Type(), SubagentID: subagentID, Data: d}
}

func (e Event) String() string {
	if e.SubagentID != "" {
		return fmt.Sprintf("#%d %s %s", e.Seq, e.Type, e.SubagentID)
	}
	return fmt.Sprintf("#%d %s", e.Seq, e.Type)
}

// Unknown is the payload of an event whose type this build does not know. Raw is the "data"
// object exactly as read.
type Unknown struct {
	Name Type
	Raw  []byte
}

func (u Unknown) Type() Type { return u.Name }

// Session events.

type SessionStarted struct {
	Schema         int            `json:"schema"`
	ProgramVersion string         `json:"program_version"`
	Workspace      string         `json:"workspace"`
	PermissionMode string         `json:"permission_mode"`
	AllowedTools   []string       `json:"allowed_tools"`
	Provider       string         `json:"provider"`
	AgentsDigest   string         `json:"agents_digest"`
	Config         map[string]any `json:"config,omitempty"`
	// ChangedFiles are the agent definitions and config files that are new, changed or
	// removed since the last session in this workspace started (see session/inventory): a
	// file written during a session takes effect only in the next one, which names it here.
	ChangedFiles []AgentFileChange `json:"changed_files,omitempty"`
	// UnconfinedShell: subagents' shells run unconfined (no Landlock on this system, and the
	// user opted in with --allow-unconfined-shell): they can write wherever the user can.
	UnconfinedShell bool `json:"unconfined_shell,omitempty"`
	// WorkspaceTrust is "trusted", "untrusted" or "none" (the workspace configures nothing that
	// needs trust; see session/trust); "" in recordings made before it existed.
	WorkspaceTrust string `json:"workspace_trust,omitempty"`
	// UntrustedIgnored names what of an untrusted workspace was ignored: config sections
	// ("mcp_servers.fs", "hooks", "web_allow_hosts") and agent files ("agent file
	// .summit/agents/general.md").
	UntrustedIgnored []string `json:"untrusted_ignored,omitempty"`
	// TrustItems lists what trusting the workspace would enable, one line each (while it is
	// untrusted): the workbench's trust inbox item shows them.
	TrustItems []string `json:"trust_items,omitempty"`
}

// SessionForked starts a session that continues another from one of its events (summit fork).
// It takes SessionStarted's place as seq 1: Started is this session's own start (its workspace
// is the fork's rebuilt copy, never the parent's). The parent's events 2..Parent.Seq follow,
// verbatim but for the envelope's session_id and with the parent's seqs and times, so folding
// this file alone gives the parent's state at that event: the recording replays without its
// parent. After them come the fork's own events, first those that close what was still open at
// the fork point (running subagents stop as interrupted; pending permission requests are
// denied).
type SessionForked struct {
	Parent  ForkParent     `json:"parent"`
	Started SessionStarted `json:"started"`
	// ParentStarted is the parent's own SessionStarted, as it recorded it.
	ParentStarted SessionStarted `json:"parent_started"`
	// Restored says where the fork's workspace came from: "snapshot <commit> (<event>)" when a
	// recorded workspace snapshot was written out, or why the parent's workspace was copied as
	// it is now instead.
	Restored string `json:"restored"`
	// Notes record what the fork could not carry over (e.g. a worktree whose snapshot is gone).
	Notes []string `json:"notes,omitempty"`
}

// ForkParent names the recording a fork continues, and where.
type ForkParent struct {
	Path      string `json:"path"`
	SessionID string `json:"session_id"`
	Seq       uint64 `json:"seq"`
	// SHA256 is the hex sha256 of the parent recording's bytes up to and including the line of
	// Seq: a check that the parent file still holds what the fork was made from.
	SHA256 string `json:"sha256"`
	// Lineage is the parent's own lineage (its parent first), when the parent is a fork too.
	Lineage []ForkParent `json:"lineage,omitempty"`
}

// AgentFileChange is one agent or config file that differs from what the last session found.
type AgentFileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"` // new | changed | removed
	// During is the id of the last session when the file changed while it ran.
	During string `json:"during,omitempty"`
}

// AgentFileChange.Change values.
const (
	FileNew     = "new"
	FileChanged = "changed"
	FileRemoved = "removed"
)

type SessionEnded struct {
	Reason     string `json:"reason"` // quit | script_end | error | signal (SIGHUP, SIGTERM, SIGINT, SIGQUIT: a closed terminal)
	DurationMS int64  `json:"duration_ms"`
}

type CommandIssued struct {
	Line    string         `json:"line"`
	Command string         `json:"command"`
	Args    map[string]any `json:"args"`
}

type CommandRejected struct {
	Line  string `json:"line"`
	Error string `json:"error"`
	Usage string `json:"usage,omitempty"` // the command's usage line, for a syntax error only ("" for a refusal of a well-formed line)
}

// UserNote is plain text typed by the user. With the envelope's subagent_id set it is a message
// to that subagent (during a transfer-control handoff); otherwise a note in the session.
type UserNote struct {
	Text string `json:"text"`
}

// Lifecycle events.

type SubagentSpawned struct {
	AgentType        string   `json:"agent_type"`
	AgentName        string   `json:"agent_name"`
	ParentSessionID  string   `json:"parent_session_id"`
	ParentSessionRef string   `json:"parent_session_ref"`
	PermissionMode   string   `json:"permission_mode"`
	Tools            []string `json:"tools"`
	TaskDescription  string   `json:"task_description"`
	TimeoutS         int      `json:"timeout_s"`
	InheritContext   bool     `json:"inherit_context"`
	// SubagentSessionID is the subagent's own isolated session id (seed 004).
	SubagentSessionID string `json:"subagent_session_id,omitempty"`
	// Queued is true when the parallel cap made the subagent wait; SubagentActive starts it.
	Queued bool `json:"queued,omitempty"`
	// RequestedPermissionMode is the mode asked for (--permission-mode, else the agent's
	// default) when it differs from permission_mode: capped by the session ceiling, or
	// bypassPermissions waiting for its approval.
	RequestedPermissionMode string `json:"requested_permission_mode,omitempty"`
	// ParentSubagentID is set on a child: a subagent an external agent started itself (an
	// ACP agent's own subagent session, announced by its subagent_update) under the summit
	// subagent it runs as, or under another such child. It shares its parent's worktree and
	// policy; it has no run of its own in summit, so it is never queued.
	ParentSubagentID string `json:"parent_subagent_id,omitempty"`
	// AgentSessionID is the external agent's own id for a child's session.
	AgentSessionID string `json:"agent_session_id,omitempty"`
	// AgentShadows says which definition runs when it replaced another of its name (a
	// workspace file over a built-in or the user's: "workspace .summit/agents/general.md,
	// shadows built-in"); empty when the agent shadows none. The tree marks such a subagent.
	AgentShadows string `json:"agent_shadows,omitempty"`
	// Runner names the remote runner (`summit runner --name`) the subagent was placed on by
	// `/delegate … --on`; empty for a subagent that runs on this machine.
	Runner string `json:"runner,omitempty"`
	// RunnerOn is the placement /delegate --on asked for (NAME, LABEL=VALUE or any) and
	// RunnerRetry its --retry: a session resumed on the recording re-places a reattached
	// subagent whose runner dies as the first session would have. Absent in older files: a
	// reattached subagent then stays on Runner and is not re-placed.
	RunnerOn    string `json:"runner_on,omitempty"`
	RunnerRetry bool   `json:"runner_retry,omitempty"`
}

type SubagentActive struct {
	InitialState string `json:"initial_state"`
}

// Outcomes of SubagentStop.
const (
	OutcomeSuccess   = "success"
	OutcomeFailure   = "failure"
	OutcomeTimeout   = "timeout"
	OutcomeCancelled = "cancelled"
	// OutcomeDisconnected is a child (parent_subagent_id) whose agent stopped reporting on it
	// before it said how it ended: its outcome is unknown, which is neither a failure nor a
	// cancellation (ACP's "disconnected" subagent state).
	OutcomeDisconnected = "disconnected"
	// OutcomeInterrupted is a subagent that was still running at the event a session was
	// forked from: the fork has its state up to there but not its run (/retry runs it again).
	// Only a forked session records it.
	OutcomeInterrupted = "interrupted"
)

// SubagentStop is the one terminal event of every subagent, whatever the outcome; a
// SubagentError, SubagentTimeout or SubagentCancelled before it records the cause. It carries
// what the subagent had, so partial results survive a failure.
type SubagentStop struct {
	Outcome             string             `json:"outcome"`
	Capsule             *protocols.Capsule `json:"capsule,omitempty"`
	ToolInvocationCount int                `json:"tool_invocation_count"`
	ArtifactPaths       []string           `json:"artifact_paths"`
	DurationMS          int64              `json:"duration_ms"`
	Tokens              Tokens             `json:"tokens"`
	// CostUSD is what its model turns cost, in US dollars, when every model that ran has a
	// price in the config (absent otherwise: unknown is not zero).
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// SubagentError records a failure. Retryable says the failure was transient; WillRetry says the
// orchestrator is retrying it (absent in older files: then it equals Retryable).
type SubagentError struct {
	Error     string `json:"error"`
	Retryable bool   `json:"retryable"`
	Attempt   int    `json:"attempt"`
	WillRetry *bool  `json:"will_retry,omitempty"`
	Stderr    string `json:"stderr,omitempty"`
	Context   string `json:"context,omitempty"`
}

// Retrying reports whether the subagent goes on after this error.
func (d SubagentError) Retrying() bool {
	if d.WillRetry != nil {
		return *d.WillRetry
	}
	return d.Retryable
}

type SubagentTimeout struct {
	TimeoutS int `json:"timeout_s"`
}

type SubagentCancelled struct {
	Reason string `json:"reason"`
}

// Transcript events.

// Transcript event_type values.
const (
	TranscriptStart        = "subagent_start"
	TranscriptToken        = "token"
	TranscriptThinking     = "thinking"
	TranscriptMessage      = "message"
	TranscriptToolCall     = "tool_call"
	TranscriptToolResult   = "tool_result"
	TranscriptPolicyDenied = "policy_denied"
	TranscriptError        = "error"
)

// TranscriptEvents lists the event_type values of schema v1.
var TranscriptEvents = []string{TranscriptStart, TranscriptToken, TranscriptThinking,
	TranscriptMessage, TranscriptToolCall, TranscriptToolResult, TranscriptPolicyDenied,
	TranscriptError}

// TranscriptEvent is one item of a subagent's stream. Which fields are set depends on
// EventType: Text for subagent_start, token, thinking, message and error; CallID, Tool, Args
// for tool_call; CallID, Tool, Result, IsError for tool_result (and Args when an external agent
// told the call's real title and input only after announcing it); Tool, Reason for
// policy_denied.
// Token and thinking events are deltas: consecutive ones form one message.
type TranscriptEvent struct {
	EventType string         `json:"event_type"`
	Text      string         `json:"text,omitempty"`
	CallID    string         `json:"call_id,omitempty"`
	Tool      string         `json:"tool,omitempty"`
	Args      map[string]any `json:"args,omitempty"`
	Result    string         `json:"result,omitempty"`
	IsError   bool           `json:"is_error,omitempty"`
	Reason    string         `json:"reason,omitempty"`
}

// Permission events.

type PermissionRequested struct {
	RequestID string         `json:"request_id"`
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args,omitempty"`
	// Reason says why approval is needed (e.g. "run_shell_command asks each time in plan").
	Reason string `json:"reason,omitempty"`
}

// ToolBypassPermissions is the "tool" of the request a delegation in bypassPermissions makes
// before it runs; granting it raises the subagent's mode to bypassPermissions.
const ToolBypassPermissions = "bypassPermissions"

type PermissionGranted struct {
	RequestID string `json:"request_id"`
	Scope     string `json:"scope"` // once | subagent
	// By says who decided: "user", or "--approve" in headless runs.
	By string `json:"by,omitempty"`
}

type PermissionDenied struct {
	RequestID string `json:"request_id"`
	Reason    string `json:"reason"`
	By        string `json:"by,omitempty"`
}

// Handoff events.

const (
	HandoffMonitor         = "monitor"
	HandoffTransferControl = "transfer_control"
)

type HandoffInitiated struct {
	ParentSessionID string `json:"parent_session_id"`
	HandoffMode     string `json:"handoff_mode"`
	TimeoutS        int    `json:"timeout_s"`
	OnFailure       string `json:"on_failure"`
}

type HandoffComplete struct {
	Outcome string `json:"outcome"`
}

type HandoffResolved struct {
	Outcome   string   `json:"outcome"`
	Artifacts []string `json:"artifacts"`
	Action    string   `json:"action"` // none | retry | abort | escalate
	// RetrySubagentID names the subagent that re-runs the task when Action is retry.
	RetrySubagentID string `json:"retry_subagent_id,omitempty"`
}

// Convergence events. The convergence id travels in data; the envelope's subagent_id is empty.

type ConvergenceInitiated struct {
	ConvergenceID      string   `json:"convergence_id"`
	SubagentIDs        []string `json:"subagent_ids"`
	Strategy           string   `json:"strategy"`
	ConflictResolution string   `json:"conflict_resolution"`
	OutputFormat       string   `json:"output_format"`
}

type ConflictDetected struct {
	ConvergenceID string         `json:"convergence_id"`
	ConflictID    string         `json:"conflict_id"`
	Kind          string         `json:"kind"` // hunk | finding | vote | consensus
	File          string         `json:"file,omitempty"`
	Lines         *LineRange     `json:"lines,omitempty"`
	Sides         []ConflictSide `json:"sides"`
	// Context is the current file around the lines, numbered, for the reviewer (or the
	// playbook entry a playbook conflict edits).
	Context string `json:"context,omitempty"`
	// Choices are the valid /resolve --choose values (edit: the reviewer writes the lines): the sides' subagent ids, "both" where
	// the sides can be applied together, and "none".
	Choices []string `json:"choices,omitempty"`
	// EditTemplate is the conflicted region with conflict markers (git's diff3 style, the
	// sides labelled by subagent id) for choice edit: what the reviewer's editor opens.
	EditTemplate string `json:"edit_template,omitempty"`
	// Review is everything each choice of a hunk or file conflict lands (what the reviewer
	// sees before enter confirms); nil for other kinds and older recordings.
	Review *ConflictReview `json:"review,omitempty"`
}

// ConflictReview is the whole picture of a conflict's file: each side's whole change to it
// (every hunk, those in a conflict marked) and, per choice, the file's resulting change and
// the hunks of other sides that still land with it or are dropped.
type ConflictReview struct {
	File     string          `json:"file"`
	Changes  []SideChange    `json:"changes"`
	Outcomes []ChoiceOutcome `json:"outcomes"`
}

// SideChange is one member's whole change to the conflict's file.
type SideChange struct {
	SubagentID string       `json:"subagent_id"`
	Hunks      []ReviewHunk `json:"hunks"`
}

// ReviewHunk is one hunk of one member's change (its @@ header and lines). Conflict names
// the conflict it is part of ("" = it lands whatever a region choice decides).
type ReviewHunk struct {
	SubagentID string `json:"subagent_id,omitempty"`
	File       string `json:"file,omitempty"`
	Text       string `json:"text"`
	Conflict   string `json:"conflict,omitempty"`
}

// ChoiceOutcome is what one /resolve choice makes of the conflict's file. WholeFile is the
// --whole-file form (the side's whole version of the file). Diff is the file's change as the
// choice leaves it (against the base); other conflicts of the file still open (Pending) are
// left out of it. AlsoLands lists other sides' hunks in the file that land with the choice;
// Drops the hunks it leaves out.
type ChoiceOutcome struct {
	Choice    string       `json:"choice"`
	WholeFile bool         `json:"whole_file,omitempty"`
	Diff      string       `json:"diff"`
	AlsoLands []ReviewHunk `json:"also_lands,omitempty"`
	Drops     []ReviewHunk `json:"drops,omitempty"`
	Pending   []string     `json:"pending,omitempty"`
	// PlaybookLands and PlaybookDrops are the playbook operations (from the Downstream
	// Context) of the members with a change to the file that land or are dropped with the
	// choice: a member's operations land only with its whole change (session/converge).
	PlaybookLands []ReviewOp `json:"playbook_lands,omitempty"`
	PlaybookDrops []ReviewOp `json:"playbook_drops,omitempty"`
}

// ReviewOp is one playbook operation as a review or a resolution lists it: whose it is and
// the operation as the reviewer reads it ("ADD patterns_established: ...", "REMOVE ctx-3").
type ReviewOp struct {
	SubagentID string `json:"subagent_id"`
	Text       string `json:"text"`
}

// ConflictSide is one subagent's position in a conflict. Value is any JSON value (a hunk's
// text, a finding, a vote).
type ConflictSide struct {
	SubagentID string   `json:"subagent_id"`
	Value      any      `json:"value"`
	Confidence *float64 `json:"confidence,omitempty"`
	// Reason says why this side disagrees (vote and consensus), and Diff is the member's
	// whole change set as diffs (its recorded changes, else its proposed patches), so the
	// reviewer reads results rather than raw values.
	Reason string `json:"reason,omitempty"`
	Diff   string `json:"diff,omitempty"`
}

type ConflictReviewRequest struct {
	ConvergenceID string `json:"convergence_id"`
	ConflictID    string `json:"conflict_id"`
	// Reason says why a person must decide when the method would have decided itself
	// (prefer_higher_confidence with a side lacking confidence, or a tie).
	Reason string `json:"reason,omitempty"`
}

type ManualReviewRequired struct {
	ConvergenceID string   `json:"convergence_id"`
	ConflictIDs   []string `json:"conflict_ids"`
}

type ConflictResolved struct {
	ConvergenceID string   `json:"convergence_id"`
	ConflictID    string   `json:"conflict_id"`
	Method        string   `json:"method"`
	Choice        string   `json:"choice"` // a subagent id, both, none, or edit
	Note          string   `json:"note,omitempty"`
	Overridden    []string `json:"overridden"`
	// Content is the reviewer's own text for the conflicted lines (choice edit): what the
	// result holds there instead of either side, recorded so a replay has it.
	Content string `json:"content,omitempty"`
	// WholeFile: the choice takes the side's whole version of the conflict's file (every
	// other member's hunk in that file is dropped), not only the conflicted region.
	WholeFile bool `json:"whole_file,omitempty"`
	// Kept and Dropped are the hunks the choice kept and dropped (the conflict's own, and
	// with WholeFile every hunk of the file), so an automatic choice is on record with its
	// consequences.
	Kept    []ReviewHunk `json:"kept,omitempty"`
	Dropped []ReviewHunk `json:"dropped,omitempty"`
	// AlsoLands are the other sides' hunks in the same file that land with a region choice
	// (what the review showed before enter); an automatic method records them too.
	AlsoLands []ReviewHunk `json:"also_lands,omitempty"`
	// PlaybookKept and PlaybookDropped are the playbook operations the choice lands and
	// drops: a member's operations land only with its whole change; a vote or consensus
	// choice lands the chosen member's alone.
	PlaybookKept    []ReviewOp `json:"playbook_kept,omitempty"`
	PlaybookDropped []ReviewOp `json:"playbook_dropped,omitempty"`
}

type ConvergenceComplete struct {
	ConvergenceID   string `json:"convergence_id"`
	Outcome         string `json:"outcome"`
	ConflictCount   int    `json:"conflict_count"`
	ResolutionCount int    `json:"resolution_count"`
	OutputSize      int    `json:"output_size"`
	// Notes record the convergence's decisions: members that failed or were ignored,
	// votes, fallbacks, patches left out.
	Notes []string `json:"notes,omitempty"`
}

type ConvergedResult struct {
	ConvergenceID string `json:"convergence_id"`
	Format        string `json:"format"`
	Output        string `json:"output"`
}

// DeltaBatch is the delta_batch output of a convergence: file patches and playbook deltas,
// applied together by /apply (DeltaBatchApplied) or not at all.
type DeltaBatch struct {
	ConvergenceID string       `json:"convergence_id"`
	Reasoning     string       `json:"reasoning"`
	Operations    []PlaybookOp `json:"operations"`
	Patches       []Patch      `json:"patches"`
}

// PlaybookOp is one playbook delta, in the shape of ACE's DeltaBatch operations: Type is ADD,
// UPDATE, TAG or REMOVE; BulletID names the entry (a new one for ADD). TAG adds Metadata's
// numeric counters (e.g. {"helpful": 1}) to the entry's tags.
type PlaybookOp struct {
	Type     string         `json:"type"`
	Section  string         `json:"section,omitempty"`
	Content  string         `json:"content,omitempty"`
	BulletID string         `json:"bullet_id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Playbook operation types.
const (
	OpAdd    = "ADD"
	OpUpdate = "UPDATE"
	OpTag    = "TAG"
	OpRemove = "REMOVE"
)

// Patch is a unified diff for one file.
type Patch struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
}

type DeltaBatchApplied struct {
	ConvergenceID string   `json:"convergence_id"`
	Files         []string `json:"files"`
}

// SubagentIsolated: a subagent that can change files works in its own git worktree of the
// workspace, on a detached HEAD at a base snapshot (DESIGN §11). It follows SubagentSpawned.
type SubagentIsolated struct {
	Base       string `json:"base"`        // base-N: subagents delegated while the workspace did not change share one
	BaseCommit string `json:"base_commit"` // the snapshot commit (refs/summit/<session>/base-N)
	Worktree   string `json:"worktree"`    // where it works, outside the workspace
	Private    bool   `json:"private,omitempty"`
}

// File change kinds of a FileChange.
const (
	ChangeAdded    = "added"
	ChangeModified = "modified"
	ChangeDeleted  = "deleted"
	ChangeRenamed  = "renamed"
	ChangeMode     = "mode"
)

// FileChange is one file a subagent really changed.
type FileChange struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"` // renames
	Kind    string `json:"kind"`               // added, modified, deleted, renamed, mode
	Binary  bool   `json:"binary,omitempty"`
	Added   int    `json:"added"` // lines; 0 for a binary file
	Removed int    `json:"removed"`
	OldMode string `json:"old_mode,omitempty"` // git modes: 100644, 100755, 120000
	NewMode string `json:"new_mode,omitempty"`
	// Diff is the file's unified diff (text files), cut past a size with a marker line and
	// Truncated set; the result commit keeps the whole change.
	Diff      string `json:"diff,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// SubagentChanges is what an isolated subagent really changed, computed by summit against its
// base when it stops, whatever the outcome (shell edits included). It comes just before
// SubagentStop. Replay, /diff, /converge and --print read it; none needs the worktree.
type SubagentChanges struct {
	Base         string       `json:"base"`
	BaseCommit   string       `json:"base_commit"`
	ResultCommit string       `json:"result_commit"` // refs/summit/<session>/<sa-N>/result
	Files        []FileChange `json:"files"`
	Added        int          `json:"added"`
	Removed      int          `json:"removed"`
	Truncated    bool         `json:"truncated,omitempty"`
	Outside      []string     `json:"outside,omitempty"` // changed outside the workspace's subtree; never applied
	Error        string       `json:"error,omitempty"`   // the changes could not be computed
}

// ChangesApplied: /apply landed a subagent's or a convergence's changes in the main workspace
// with a three-way merge against the workspace as it was, all files or none.
type ChangesApplied struct {
	ApplyID    string   `json:"apply_id"` // apply-N
	Source     string   `json:"source"`   // sa-N or cv-N
	Files      []string `json:"files"`
	PreCommit  string   `json:"pre_commit"`  // the workspace just before (refs/summit/<session>/apply-N-pre)
	PostCommit string   `json:"post_commit"` // and just after: /undo restores pre while the files still match post
	// ConvergenceID names the convergence whose DeltaBatch lands with these files: its
	// DeltaBatchApplied follows, and /undo takes its playbook operations back too.
	ConvergenceID string `json:"convergence_id,omitempty"`
}

// ApplyUndone: /undo restored the files of an apply to their state before it.
type ApplyUndone struct {
	ApplyID string   `json:"apply_id"`
	Files   []string `json:"files"`
}

// ChangesRebased: for a /converge whose members started from different bases, a member's
// changes brought onto the newest base with git's merge machinery (the change set against
// that base). A member that cannot be rebased gets none: its convergence reports a base
// conflict instead.
type ChangesRebased struct {
	ConvergenceID string `json:"convergence_id"`
	SubagentChanges
}

// WorktreeDiscarded: /discard dropped a subagent's worktree; its recorded changes stay.
type WorktreeDiscarded struct {
	Reason string `json:"reason,omitempty"`
}

// Model events.

// ModelRouted: which provider and model run a subagent, and why — the agent's own choice, a
// config route, or a mapping (a model name its provider does not serve becomes the target's
// model of the same tier). Recorded before its first model turn; not recorded for script tapes.
// Recorded again mid-run, with From set, when the model stayed out of capacity after its
// retries (a 429 rate limit past its Retry-After budget, a 503, a 529, an "overloaded"
// error) and the next model of its fallback chain runs the rest of the subagent: Why is the
// reason, for example "overloaded (HTTP 529) after 3 attempts: anthropic: HTTP 529:
// overloaded_error: Overloaded". `summit run` prints it in its progress.
type ModelRouted struct {
	Requested string   `json:"requested,omitempty"` // the agent's model as written
	Provider  string   `json:"provider"`
	Model     string   `json:"model,omitempty"` // "" = the provider's configured model
	Why       string   `json:"why"`
	Fallbacks []string `json:"fallbacks,omitempty"` // provider/model, tried in order
	// Dropped names the parameters not sent, each with why ("temperature: o3 is a reasoning
	// model, which rejects temperature").
	Dropped []string `json:"dropped,omitempty"`
	// From is the provider/model the subagent ran on before this route ("": its first route).
	// Set on a move to a fallback mid-run; the fold then counts it as a switch.
	From string `json:"from,omitempty"`
}

// ModelSwitched: the model was not found or not available; the next of its fallbacks runs the
// rest of the subagent. Reason says why. `summit run` prints it in its progress. (Recordings
// made before moves on overload became a ModelRouted with From also hold those here; they
// read the same.)
type ModelSwitched struct {
	FromProvider string `json:"from_provider"`
	FromModel    string `json:"from_model,omitempty"`
	ToProvider   string `json:"to_provider"`
	ToModel      string `json:"to_model,omitempty"`
	Reason       string `json:"reason"`
}

// Hook events.

// HookRan outcomes.
const (
	HookOK      = "ok"      // exit code 0
	HookBlocked = "blocked" // exit code 2 (or a block/deny decision) where it can block: BlockingHookEvents
	HookFailed  = "failed"  // any other exit code; nothing else changes
	HookTimeout = "timeout" // killed, with its process group, at its timeout
	HookError   = "error"   // it could not start
)

// HookRan records one run of a user's hook (session/hooks): which event ran it, the command
// as configured, how it ended. subagent_id is the subagent the event is about, if any. A
// SubagentStop hook that runs before the stop (a subagent that ended its turn, which the hook
// may send back to work) has no trigger_seq: the stop is not recorded yet; nor has a
// SessionEnded hook, whose HookRan comes just before the SessionEnded it ran for. A block is
// followed by the reason as a UserNote to the subagent, then its next turn.
type HookRan struct {
	HookEvent string `json:"hook_event"`
	Command   string `json:"command"`
	// Source is "user" (the user's config) or "workspace" (.summit/config.yaml, trusted).
	Source     string `json:"source"`
	TriggerSeq uint64 `json:"trigger_seq,omitempty"`
	ExitCode   int    `json:"exit_code"` // -1 when it did not exit by itself (timeout, error)
	Outcome    string `json:"outcome"`   // ok | blocked | failed | timeout | error
	DurationMS int64  `json:"duration_ms"`
	// Reason is a block's reason, or why a hook failed, timed out or could not start.
	Reason string `json:"reason,omitempty"`
	// Stderr is the end of what it wrote to stderr (bounded; redacted like every event).
	Stderr string `json:"stderr,omitempty"`
	// Tool is the tool call a PreToolUse or PostToolUse hook ran for (its canonical name).
	Tool string `json:"tool,omitempty"`
	// Decision is what a hook decided, when it did: a PreToolUse hook's allow, deny or ask
	// (deny is outcome blocked; neither allow nor ask can widen what the policy allows), a
	// UserPromptSubmit hook's block, or "context" when a PostToolUse or UserPromptSubmit hook
	// added a note for the model (Reason holds it).
	Decision string `json:"decision,omitempty"`
}

// BlockingHookEvents are the hook events whose HookRan may be blocked (about a subagent):
// the stop ones send the subagent back to work, PreToolUse denies a tool call,
// UserPromptSubmit withholds a user message, PostToolUse feeds its reason to the model.
// A UserPromptSubmit block may also be about no subagent: it rejected a /delegate's task
// before the subagent existed (the CommandRejected follows).
var BlockingHookEvents = []string{"SubagentStop", "Stop", "PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"}

func (HookRan) Type() Type { return TypeHookRan }

// Verification events.

// VerifyRan outcomes.
const (
	VerifyPassed  = "passed"  // exit code 0
	VerifyFailed  = "failed"  // any other exit code
	VerifyTimeout = "timeout" // killed, with its process group, at its timeout
	VerifyError   = "error"   // it could not run (no scratch worktree, no shell)
)

// VerifyRan is summit's own measurement of a result before it lands: a verify command
// (/apply --verify CMD, or the config's verify:) run on the merged result (what /apply would
// leave in the workspace) checked out in a scratch worktree, never in the workspace, with the
// shell a subagent gets (confined writes, secrets scrubbed). It is never an agent's claim: a
// capsule's verification is what an agent says; a VerifyRan is what summit measured. Target is
// what was checked (sa-N or cv-N; the envelope's subagent_id is set for a subagent). A failed
// check refuses the apply (CommandRejected follows) unless --force: then Forced is set and the
// apply follows.
type VerifyRan struct {
	Target  string `json:"target"`
	Command string `json:"command"`
	// Source is "flag" (/apply --verify) or "config" (verify: in the config).
	Source     string `json:"source"`
	ExitCode   int    `json:"exit_code"` // -1 when it did not exit by itself (timeout, error)
	Outcome    string `json:"outcome"`   // passed | failed | timeout | error
	DurationMS int64  `json:"duration_ms"`
	// Output is the end of what it printed (stdout and stderr, bounded; redacted like every
	// event).
	Output string `json:"output,omitempty"`
	// Files are the files the merged result changes in the workspace (what would land).
	Files []string `json:"files,omitempty"`
	// DryRun: the check of an /apply --dry-run; nothing was to land.
	DryRun bool `json:"dry_run,omitempty"`
	// Forced: the check failed and the apply went ahead anyway (--force).
	Forced bool `json:"forced,omitempty"`
}

func (VerifyRan) Type() Type { return TypeVerifyRan }

// Claimed is an agent's own verification block in one line: "claims: passed". It is what
// the agent says, never a measurement; VerifyRan.Measured is summit's.
func Claimed(v *protocols.Verification) string {
	if v == nil {
		return ""
	}
	s := "claims: " + Sanitize(orText(v.Status, "no status"))
	if v.Score != nil {
		s += fmt.Sprintf(" (score %.2f)", *v.Score)
	}
	return s
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// Passed reports whether the command exited 0.
func (v VerifyRan) Passed() bool { return v.Outcome == VerifyPassed }

// Measured is the measurement in one line: "measured: ✓ go test ./... exit 0 in 3.1s".
func (v VerifyRan) Measured() string {
	mark := "✗"
	if v.Passed() {
		mark = "✓"
	}
	cmd := Sanitize(oneLineHook(v.Command))
	how := fmt.Sprintf("exit %d", v.ExitCode)
	switch v.Outcome {
	case VerifyTimeout:
		how = "timed out"
	case VerifyError:
		how = "could not run"
	}
	s := fmt.Sprintf("measured: %s %s %s in %.1fs", mark, cmd, how, float64(v.DurationMS)/1000)
	if v.Forced {
		s += " (forced)"
	}
	return s
}

// WorkspaceTrusted: the user trusted the workspace during the session (the workbench's trust
// inbox item; see session/trust). Items are what it enabled, as SessionStarted.trust_items
// listed them; Applied says whether they took effect in this session (else from the next
// one, Note saying why).
type WorkspaceTrusted struct {
	Workspace string   `json:"workspace"`
	Items     []string `json:"items,omitempty"`
	Applied   bool     `json:"applied"`
	Note      string   `json:"note,omitempty"`
}

func (WorkspaceTrusted) Type() Type { return TypeWorkspaceTrusted }

// ModelTurn: one model call of a subagent summit runs itself (agents/runtime) ended, after its
// streamed text and before the tool calls it asked for: the turn (from 1) and attempt (from 1;
// a retried call is a new attempt), the tokens the provider reported for it, and how it
// stopped (end_turn, tool_use, …; "error" when the attempt failed, whose tokens were billed
// too). The fold adds its tokens to the subagent's, so they show while it runs; SubagentStop's
// tokens are the sum. Exports (session/otelexport) end a model call's span here.
type ModelTurn struct {
	Turn    int    `json:"turn"`
	Attempt int    `json:"attempt"`
	Tokens  Tokens `json:"tokens"`
	Stop    string `json:"stop,omitempty"`
	Model   string `json:"model,omitempty"`
}

func (ModelRouted) Type() Type   { return TypeModelRouted }
func (ModelTurn) Type() Type     { return TypeModelTurn }
func (ModelSwitched) Type() Type { return TypeModelSwitched }

// RunnerCursor is how far a placed subagent's job stream (session/runners) is folded: job Job
// on runner Runner, up to the stream sequence Seq. It is recorded when the job is placed (Seq
// 0) and, for each event folded from the job's stream, in the same write as that event (one
// write call: a kill leaves both or neither), so a session resumed on its recording (`summit
// resume`) reads the stream again from Seq+1 and folds every event exactly once. The fold
// keeps it on the subagent (RunnerJob, RunnerSeq, and Runner: a --retry's runner) and logs
// nothing, so a replay shows what it showed without it.
type RunnerCursor struct {
	Job    string `json:"job"`
	Runner string `json:"runner"`
	Seq    uint64 `json:"seq"`
}

func (RunnerCursor) Type() Type { return TypeRunnerCursor }

func (SubagentIsolated) Type() Type  { return TypeSubagentIsolated }
func (SubagentChanges) Type() Type   { return TypeSubagentChanges }
func (ChangesApplied) Type() Type    { return TypeChangesApplied }
func (ApplyUndone) Type() Type       { return TypeApplyUndone }
func (WorktreeDiscarded) Type() Type { return TypeWorktreeDiscarded }
func (ChangesRebased) Type() Type    { return TypeChangesRebased }

func (SessionStarted) Type() Type        { return TypeSessionStarted }
func (SessionEnded) Type() Type          { return TypeSessionEnded }
func (SessionForked) Type() Type         { return TypeSessionForked }
func (CommandIssued) Type() Type         { return TypeCommandIssued }
func (CommandRejected) Type() Type       { return TypeCommandRejected }
func (UserNote) Type() Type              { return TypeUserNote }
func (SubagentSpawned) Type() Type       { return TypeSubagentSpawned }
func (SubagentActive) Type() Type        { return TypeSubagentActive }
func (SubagentStop) Type() Type          { return TypeSubagentStop }
func (SubagentError) Type() Type         { return TypeSubagentError }
func (SubagentTimeout) Type() Type       { return TypeSubagentTimeout }
func (SubagentCancelled) Type() Type     { return TypeSubagentCancelled }
func (TranscriptEvent) Type() Type       { return TypeTranscriptEvent }
func (PermissionRequested) Type() Type   { return TypePermissionRequested }
func (PermissionGranted) Type() Type     { return TypePermissionGranted }
func (PermissionDenied) Type() Type      { return TypePermissionDenied }
func (HandoffInitiated) Type() Type      { return TypeHandoffInitiated }
func (HandoffComplete) Type() Type       { return TypeHandoffComplete }
func (HandoffResolved) Type() Type       { return TypeHandoffResolved }
func (ConvergenceInitiated) Type() Type  { return TypeConvergenceInitiated }
func (ConflictDetected) Type() Type      { return TypeConflictDetected }
func (ConflictReviewRequest) Type() Type { return TypeConflictReviewRequest }
func (ManualReviewRequired) Type() Type  { return TypeManualReviewRequired }
func (ConflictResolved) Type() Type      { return TypeConflictResolved }
func (ConvergenceComplete) Type() Type   { return TypeConvergenceComplete }
func (ConvergedResult) Type() Type       { return TypeConvergedResult }
func (DeltaBatch) Type() Type            { return TypeDeltaBatch }
func (DeltaBatchApplied) Type() Type     { return TypeDeltaBatchApplied }
