package session

import (
	"time"

	"github.com/summit-dev/summit/protocols"
)

// State is everything a session has shown: the subagent tree, transcripts, handoffs,
// convergences and their conflicts, permission requests, the playbook and metric counters.
// It is built only by Apply, from the empty State, one event at a time; live sessions and
// replays build it the same way, so equal logs give equal states.
//
// The zero value is the state before SessionStarted.
type State struct {
	SessionID string
	Info      SessionStarted // the SessionStarted payload (a fork's own start: SessionForked.Started)
	// Trusted is set when the user trusted the workspace during the session (WorkspaceTrusted).
	Trusted *TrustedNow
	// Fork is the SessionForked of a session that continues another (nil otherwise): the
	// lineage inspect and the tree show.
	Fork      *SessionForked
	Started   bool
	StartedAt time.Time
	Ended     bool
	EndedAt   time.Time
	EndReason string
	LastSeq   uint64
	LastTS    time.Time

	// Subagents in spawn order.
	Subagents []*Subagent
	// Log is the parent session's own transcript: notes, commands, rejections, handoff and
	// convergence markers, and the items mirrored from monitored subagents.
	Log []LogItem
	// Handoffs in initiation order.
	Handoffs []*Handoff
	// Control is the subagent holding control in a transfer-control handoff ("" = the parent).
	Control string
	// Convergences in initiation order; each holds its conflicts.
	Convergences []*Convergence
	// Permissions in request order.
	Permissions []*Permission
	// Playbook entries in insertion order.
	Playbook []PlaybookEntry
	// Applies are the /apply of real changes in order; /undo marks one undone.
	Applies  []*Applied
	Counters Counters

	subagents    map[string]*Subagent
	convergences map[string]*Convergence
	conflicts    map[string]*Conflict
	permissions  map[string]*Permission

	// text, when set, keeps transcript text in the recording (see SetTextStore); at is where
	// the event being folded lies (ApplyAt).
	text *TextStore
	at   Loc
	// countOnly: see SetCountOnly; countItems: see SetCountItems.
	countOnly, countItems bool
	// forgetDecided: see SetForgetDecided.
	forgetDecided bool
	// recent caches indexes in Subagents of recently seen ids (see lookup).
	recent [16]uint32
}

// Subagent statuses.
const (
	StatusQueued    = "queued"
	StatusActive    = "active"
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusTimeout   = "timeout"
	StatusCancelled = "cancelled"
	// StatusDisconnected is a child whose outcome its agent never reported.
	StatusDisconnected = "disconnected"
	// StatusInterrupted is a subagent that was running at a fork's fork point.
	StatusInterrupted = "interrupted"
)

// PlanTool is the tool of a TranscriptEvent message that carries an external agent's plan
// (agents/acp): its text lists the entries, args.step names the step in progress.
const PlanTool = "plan"

// AgentStateTool is the tool of a TranscriptEvent message that carries the state an external
// agent reports for one of its own subagents (a child): args.state is running, idle,
// requires_action or unknown, which the fold keeps as Subagent.AgentState for the tree.
const AgentStateTool = "agent_state"

// Subagent is one node of the tree.
// ModelInUse is the provider/model a subagent's turns go to now ("" before it is routed or on
// script tapes).
func (sa *Subagent) ModelInUse() string {
	prov, model := "", ""
	if sa.Route != nil {
		prov, model = sa.Route.Provider, sa.Route.Model
	}
	if n := len(sa.Switches); n > 0 {
		prov, model = sa.Switches[n-1].ToProvider, sa.Switches[n-1].ToModel
	}
	return Link(prov, model)
}

type Subagent struct {
	ID        string
	AgentType string
	AgentName string
	// AgentShadows is SubagentSpawned.agent_shadows: which definition runs, when it replaced
	// another of its name.
	AgentShadows string
	// Runner is SubagentSpawned.runner: the remote runner it was placed on; empty is local.
	Runner string
	// RunnerOn and RunnerRetry are SubagentSpawned's runner_on and runner_retry: its --on
	// and --retry.
	RunnerOn    string
	RunnerRetry bool
	// RunnerJob and RunnerSeq are the last RunnerCursor: the job it runs as on its runner and
	// the job stream's sequence folded so far (where a resumed session reads on).
	RunnerJob      string
	RunnerSeq      uint64
	PermissionMode string
	Tools          []string
	Task           string
	TimeoutS       int
	InheritContext bool
	SessionID      string // the subagent's own session id
	ParentRef      string
	// Parent is the subagent a child runs under (SubagentSpawned.parent_subagent_id): an
	// external agent's own subagent. "" for a subagent the user delegated.
	Parent         string
	AgentSessionID string // a child's session id in its agent

	Status    string
	SpawnedAt time.Time
	ActiveAt  time.Time
	EndedAt   time.Time
	// Stopped is set by SubagentStop, the one terminal event; Status may already be terminal
	// before it (a timeout or cancellation recorded as the cause).
	Stopped bool
	StopSeq uint64 // seq of the SubagentStop: the completion order convergences use

	Tokens         Tokens   // the provider's count: the sum of its ModelTurns so far, SubagentStop's at the end
	ModelCalls     int      // ModelTurn events: model calls (attempts) that ended
	CostUSD        *float64 // what its model turns cost, when priced (see SubagentStop)
	StreamedBytes  int      // assistant text streamed so far
	ToolCalls      int
	CurrentTool    string // the tool running now, "" when none
	currentCallID  string
	Outcome        string
	Capsule        *protocols.Capsule
	ArtifactPaths  []string
	DurationMS     int64
	Retries        int
	Errors         int
	LastError      string
	PolicyDenials  int
	PendingRequest string // a permission request waiting for a decision

	// Isolation is set for a subagent that works in its own worktree; Changes is what it
	// really changed there (at its stop); Discarded is set once /discard dropped the worktree.
	Isolation *SubagentIsolated
	Changes   *SubagentChanges
	Discarded bool
	// Rebased is its changes brought onto a newer base for a convergence (the last one).
	Rebased *ChangesRebased
	// Verify is summit's last measurement of its changes (VerifyRan): never its capsule's
	// claimed verification.
	Verify *VerifyRan

	// Route is where its model requests go (nil on script tapes); Switches are the moves to
	// fallback models, in order (ModelSwitched, and a ModelRouted with From recorded mid-run).
	// The model in use is the last switch's, else the route's.
	Route    *ModelRouted
	Switches []ModelSwitched

	// ACP (agents/acp) ---
	// PlanStep is the step an external agent's plan has in progress (else its first pending
	// one): the last plan message's args.step; "" when it reported no plan.
	PlanStep string
	// AgentState is the state a child's agent last reported for it (AgentStateTool): idle is
	// a child waiting for more work, not one that ended.
	AgentState string
	// --- ACP

	Transcript *Transcript
	index      int // in State.Subagents
}

// Applied is one /apply of real changes into the main workspace.
type Applied struct {
	ChangesApplied
	Seq    uint64
	Undone bool
}

// FindApply returns the apply with the id, or nil.
func (s *State) FindApply(id string) *Applied {
	for _, a := range s.Applies {
		if a.ApplyID == id {
			return a
		}
	}
	return nil
}

// Elapsed is the subagent's running time as of now (the state's last event time while it runs).
func (s *Subagent) Elapsed(now time.Time) time.Duration {
	start := s.ActiveAt
	if start.IsZero() {
		start = s.SpawnedAt
	}
	end := s.EndedAt
	if end.IsZero() {
		end = now
	}
	if end.Before(start) {
		return 0
	}
	return end.Sub(start)
}

// Terminal reports whether the subagent has finished, whatever the outcome.
func (s *Subagent) Terminal() bool {
	switch s.Status {
	case StatusDone, StatusFailed, StatusTimeout, StatusCancelled, StatusDisconnected, StatusInterrupted:
		return true
	}
	return s.Stopped
}

// TreeNode is a subagent in tree order, with its depth: 0 for a delegated subagent, 1 for an
// external agent's child of it, and so on.
type TreeNode struct {
	*Subagent
	Depth int
}

// Tree lists the subagents in tree order: spawn order, each child right after its parent and
// that parent's earlier children (depth first). A child whose parent is unknown (a fold never
// leaves one) is listed at depth 0.
func (s *State) Tree() []TreeNode {
	kids := map[string][]*Subagent{}
	var roots []*Subagent
	for _, sa := range s.Subagents {
		if sa.Parent != "" && s.subagents[sa.Parent] != nil && sa.Parent != sa.ID {
			kids[sa.Parent] = append(kids[sa.Parent], sa)
		} else {
			roots = append(roots, sa)
		}
	}
	if len(kids) == 0 {
		out := make([]TreeNode, len(roots))
		for i, sa := range roots {
			out[i] = TreeNode{sa, 0}
		}
		return out
	}
	out := make([]TreeNode, 0, len(s.Subagents))
	var walk func(sa *Subagent, depth int)
	walk = func(sa *Subagent, depth int) {
		out = append(out, TreeNode{sa, depth})
		for _, k := range kids[sa.ID] {
			walk(k, depth+1)
		}
	}
	for _, sa := range roots {
		walk(sa, 0)
	}
	return out
}

// LogItem is one entry of the parent session's log. Kind is "note", "command", "rejected",
// "handoff", "convergence", "permission", "end" or "mirror"; a mirror item refers to item
// Ref of SubagentID's transcript.
type LogItem struct {
	Seq        uint64
	Kind       string
	Text       string
	Detail     string
	SubagentID string
	Ref        int
}

// Handoff statuses.
const (
	HandoffActive  = "active"
	HandoffDone    = "complete"
	HandoffSettled = "resolved"
)

// Handoff is one /handoff.
type Handoff struct {
	SubagentID string
	Mode       string
	TimeoutS   int
	OnFailure  string
	Seq        uint64
	Status     string
	Outcome    string
	Action     string
	Artifacts  []string
}

// Convergence statuses.
const (
	ConvergenceRunning = "running"
	ConvergenceReview  = "review"
	ConvergenceDone    = "complete"
)

// Convergence is one /converge.
type Convergence struct {
	ID                 string
	Members            []string
	Strategy           string
	ConflictResolution string
	OutputFormat       string
	Seq                uint64
	Status             string
	Conflicts          []*Conflict
	Outcome            string
	ConflictCount      int
	ResolutionCount    int
	OutputSize         int
	ResultFormat       string
	Result             string
	Batch              *DeltaBatch
	Applied            bool
	AppliedFiles       []string
	AppliedSeq         uint64          // seq of its DeltaBatchApplied
	PlaybookBefore     []PlaybookEntry // the playbook before its operations (for /undo)
	Notes              []string        // the convergence's decisions, from ConvergenceComplete
	Verify             *VerifyRan      // summit's last measurement of its result (VerifyRan)
}

// Conflict is one disagreement inside a convergence.
type Conflict struct {
	ID              string
	ConvergenceID   string
	Kind            string
	File            string
	Lines           LineRange
	Sides           []ConflictSide
	Context         string          // the file around the lines when it was detected
	Choices         []string        // valid /resolve --choose values
	EditTemplate    string          // choice edit: the region with conflict markers
	Review          *ConflictReview // what each choice lands (nil: older recordings, other kinds)
	ReviewRequested bool
	ReviewReason    string
	// ReviewSeq and ReviewAt are when the review was first asked for: the approvals inbox
	// lists permission requests and reviews together, oldest first.
	ReviewSeq  uint64
	ReviewAt   time.Time
	Resolution *ConflictResolved // nil while unresolved
}

// Permission decisions.
const (
	DecisionPending = "pending"
	DecisionGranted = "granted"
	DecisionDenied  = "denied"
)

// Permission is one permission request and its decision.
type Permission struct {
	ID         string
	SubagentID string
	Tool       string
	Args       map[string]any
	Reason     string
	Seq        uint64
	At         time.Time // when it was asked
	Decision   string
	Scope      string
	DenyReason string
	By         string
}

// PlaybookEntry is one entry of the session playbook, the shared context that --inherit-context
// passes to new subagents. Source names the convergence whose DeltaBatch wrote it last.
type PlaybookEntry struct {
	ID      string
	Section string
	Content string
	Source  string
	Tags    map[string]int // TAG counters, e.g. helpful / harmful
}

// Counters are the raw counts behind the metrics (see render.Metrics).
type Counters struct {
	Events                    map[Type]int
	Unknown                   int
	Gaps                      int // seqs lost to lines a lenient read skipped
	Commands                  int
	Rejected                  int
	Notes                     int
	Spawns                    int
	Outcomes                  map[string]int
	Errors                    int
	Retries                   int
	Timeouts                  int
	Cancellations             int
	PermissionRequests        int // every request is an escalation past the subagent's mode
	Granted                   int
	Denied                    int
	PolicyDenials             int
	ToolCalls                 int
	Handoffs                  int
	Convergences              int
	ConvergencesWithConflicts int
	Conflicts                 int
	Resolutions               int
	DeltaBatchesApplied       int
	// Hooks counts the user's hooks that ran, HooksBlocked those that sent a subagent back to
	// work, HooksFailed those that failed, timed out or could not start.
	Hooks        int
	HooksBlocked int
	HooksFailed  int
	// Verifies counts summit's verify runs (VerifyRan), VerifiesFailed those that did not pass.
	Verifies       int
	VerifiesFailed int
	ByAgentType    map[string]*TypeCounters
	// CostUSD sums the priced subagents' costs; Priced counts them, Unpriced the stopped
	// subagents whose models have no price in the config.
	CostUSD  float64
	Priced   int
	Unpriced int
}

// TypeCounters count one agent type's subagents.
type TypeCounters struct {
	Spawned         int
	Stopped         int
	Succeeded       int
	TotalDurationMS int64
	CostUSD         float64 // of its priced subagents
}

// Subagent returns the subagent with id, or nil.
func (s *State) Subagent(id string) *Subagent { return s.subagents[id] }

// Convergence returns the convergence with id, or nil.
func (s *State) Convergence(id string) *Convergence { return s.convergences[id] }

// Conflict returns the conflict with id, or nil.
func (s *State) Conflict(id string) *Conflict { return s.conflicts[id] }

// Permission returns the permission request with id, or nil.
func (s *State) Permission(id string) *Permission { return s.permissions[id] }

// Running counts subagents that are queued or active.
func (s *State) Running() int {
	n := 0
	for _, sa := range s.Subagents {
		if !sa.Terminal() {
			n++
		}
	}
	return n
}

// Clone returns a deep copy that later Apply calls on either side cannot affect. Transcripts
// share their append-only stores, so cloning one costs O(1), not O(items) or O(text): replay
// keeps clones as checkpoints. A clone shares the state's TextStore.
func (s *State) Clone() *State {
	c := *s
	c.Info.AllowedTools = append([]string(nil), s.Info.AllowedTools...)
	c.Log = append([]LogItem(nil), s.Log...)
	c.Playbook = append([]PlaybookEntry(nil), s.Playbook...)
	c.Counters = s.Counters.clone()
	c.subagents = make(map[string]*Subagent, len(s.subagents))
	c.Subagents = make([]*Subagent, len(s.Subagents))
	for i, sa := range s.Subagents {
		n := *sa
		n.Transcript = sa.Transcript.clone()
		n.Switches = append([]ModelSwitched(nil), sa.Switches...)
		c.Subagents[i] = &n
		c.subagents[n.ID] = &n
	}
	c.Handoffs = make([]*Handoff, len(s.Handoffs))
	for i, h := range s.Handoffs {
		n := *h
		c.Handoffs[i] = &n
	}
	c.convergences = make(map[string]*Convergence, len(s.convergences))
	c.conflicts = make(map[string]*Conflict, len(s.conflicts))
	c.Convergences = make([]*Convergence, len(s.Convergences))
	for i, cv := range s.Convergences {
		n := *cv
		n.Members = append([]string(nil), cv.Members...)
		n.Conflicts = make([]*Conflict, len(cv.Conflicts))
		for j, cf := range cv.Conflicts {
			m := *cf
			n.Conflicts[j] = &m
			c.conflicts[m.ID] = &m
		}
		c.Convergences[i] = &n
		c.convergences[n.ID] = &n
	}
	c.Applies = cloneApplies(s.Applies)
	c.permissions = make(map[string]*Permission, len(s.permissions))
	c.Permissions = make([]*Permission, len(s.Permissions))
	for i, p := range s.Permissions {
		n := *p
		c.Permissions[i] = &n
		c.permissions[n.ID] = &n
	}
	return &c
}

func (c Counters) clone() Counters {
	n := c
	n.Events = make(map[Type]int, len(c.Events))
	for k, v := range c.Events {
		n.Events[k] = v
	}
	n.Outcomes = make(map[string]int, len(c.Outcomes))
	for k, v := range c.Outcomes {
		n.Outcomes[k] = v
	}
	n.ByAgentType = make(map[string]*TypeCounters, len(c.ByAgentType))
	for k, v := range c.ByAgentType {
		t := *v
		n.ByAgentType[k] = &t
	}
	return n
}

// TrustedNow is a WorkspaceTrusted the session recorded: its seq, and whether it took effect
// in the session.
type TrustedNow struct {
	Seq     uint64
	Applied bool
	Note    string
}

// TrustItem is the id of the workbench's trust inbox item (see TrustPending).
const TrustItem = "trust"

// TrustPending reports whether the workspace is untrusted and the user has not trusted it
// during the session: the trust inbox item is open.
func (s *State) TrustPending() bool {
	return s.Info.WorkspaceTrust == "untrusted" && s.Trusted == nil && len(s.Info.TrustItems) > 0
}
