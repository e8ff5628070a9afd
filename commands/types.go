package commands

import (
	"slices"
	"strconv"
	"strings"
)

// Command is a parsed slash command. The concrete types are the value types below (Delegate,
// Handoff, ...); switch on them by value.
type Command interface {
	// Name is the command's name without "/", e.g. "delegate": the CommandIssued "command".
	Name() string
	// Args is every parsed value with defaults applied, keyed by the snake_case names in the
	// specs (Arg.Key, Flag.Key): the CommandIssued "args". Values are string, int, bool or
	// []string; optional values that are unset (an empty note, no --tools, no
	// --permission-mode) are left out. The map is fresh on every call.
	Args() map[string]any
	// String is the canonical command line: Parse(c.String()) returns a value equal to c, and
	// String is a fixpoint. Flags at their default are left out. Defined for values Parse
	// returned; a hand-built value with out-of-range fields may not parse back.
	String() string
}

// Delegate is /delegate: start a subagent on a task.
type Delegate struct {
	Task           string
	AgentType      string   // a built-in type or an agent name; existence is checked elsewhere
	InheritContext bool     // default true
	PermissionMode string   // "" = unset: the agent type's default, capped by the session ceiling
	Timeout        int      // seconds, default DefaultDelegateTimeout
	Tools          []string // nil = no restriction; never empty when set
	// Inputs are a remote ABI agent's structured inputs, a JSON object ("" = none); the task
	// goes in its task or query field.
	Inputs string
	// On places the subagent on a remote runner (session/runners): a runner's name,
	// LABEL=VALUE or "any" ("" = here). Retry places it again on another runner when its
	// runner dies.
	On    string
	Retry bool
}

// Handoff is /handoff: follow one subagent until it stops.
type Handoff struct {
	SubagentID      string
	TransferControl bool   // false = monitor mode
	Timeout         int    // seconds, default DefaultHandoffTimeout
	OnFailure       string // OnFailure*, default escalate
}

// Converge is /converge: combine the results of two or more subagents.
type Converge struct {
	SubagentIDs        []string // 2 or more, distinct, in the order given
	Strategy           string   // Strategy*
	ConflictResolution string   // Resolution*, default manual
	OutputFormat       string   // Format*, default delta_batch
}

// Resolve is /resolve: settle a conflict.
type Resolve struct {
	ConflictID string
	Choose     string // a subagent id, ChooseBoth, ChooseNone or ChooseEdit
	Note       string
	Content    string // ChooseEdit: the reviewer's text for the conflicted lines
	// WholeFile takes the chosen side's whole version of the conflict's file (every hunk of
	// the other sides in that file is dropped), not only the conflicted region.
	WholeFile bool
}

// Approve is /approve: grant a permission request.
type Approve struct {
	RequestID string
	Scope     string // Scope*, default once
}

// Deny is /deny: refuse a permission request.
type Deny struct {
	RequestID string
	Reason    string
}

// Apply is /apply: land a subagent's real changes (SubagentID) or a convergence's DeltaBatch
// (ConvergenceID); exactly one is set. DryRun shows what would land and changes nothing;
// Verify is a shell command checked against the merged result first; Force lands it although
// that check failed.
type Apply struct {
	SubagentID, ConvergenceID string
	DryRun                    bool
	Verify                    string
	Force                     bool
}

// ID is the subagent or convergence to apply.
func (c Apply) ID() string { return c.SubagentID + c.ConvergenceID }

// Diff is /diff: the real changes of a subagent or a convergence, all files or Path.
type Diff struct{ ID, Path string }

// Undo is /undo: take back the last /apply.
type Undo struct{}

// Discard is /discard: drop a subagent's worktree.
type Discard struct{ SubagentID string }

func (Diff) Name() string    { return "diff" }
func (Undo) Name() string    { return "undo" }
func (Discard) Name() string { return "discard" }

func (c Diff) Args() map[string]any {
	m := map[string]any{"id": c.ID}
	if c.Path != "" {
		m["path"] = c.Path
	}
	return m
}
func (Undo) Args() map[string]any      { return map[string]any{} }
func (c Discard) Args() map[string]any { return map[string]any{"subagent_id": c.SubagentID} }

func (c Diff) String() string {
	l := newLine("diff").word(c.ID)
	if c.Path != "" {
		l = l.word(c.Path)
	}
	return l.String()
}
func (Undo) String() string      { return "/undo" }
func (c Discard) String() string { return newLine("discard").word(c.SubagentID).String() }

// Retry is /retry: delegate a stopped subagent's task again, with its agent or AgentType.
type Retry struct{ SubagentID, AgentType string }

func (Retry) Name() string { return "retry" }
func (c Retry) Args() map[string]any {
	m := map[string]any{"subagent_id": c.SubagentID}
	if c.AgentType != "" {
		m["agent_type"] = c.AgentType
	}
	return m
}
func (c Retry) String() string {
	return newLine("retry").word(c.SubagentID).flagIf("agent-type", c.AgentType, "").String()
}

// Cancel is /cancel: stop a subagent.
type Cancel struct{ SubagentID string }

// Status is /status: ID is "", a subagent id or a convergence id.
type Status struct{ ID string }

// Agents is /agents: list the agent catalogue.
type Agents struct{}

// Runners is /runners: the registered remote runners.
type Runners struct{}

// Inbox is /inbox: the pending permission requests and conflict reviews of the whole tree,
// oldest first. The workbench opens its approvals inbox; headless, the list is printed.
type Inbox struct{}

// Help is /help: Topic is "" for the overview or a command name without "/".
type Help struct{ Topic string }

// Quit is /quit.
type Quit struct{}

// Wait is /wait: subagent and convergence ids, distinct, in the order given.
type Wait struct{ IDs []string }

func (Delegate) Name() string { return "delegate" }
func (Handoff) Name() string  { return "handoff" }
func (Converge) Name() string { return "converge" }
func (Resolve) Name() string  { return "resolve" }
func (Approve) Name() string  { return "approve" }
func (Deny) Name() string     { return "deny" }
func (Apply) Name() string    { return "apply" }
func (Cancel) Name() string   { return "cancel" }
func (Status) Name() string   { return "status" }
func (Agents) Name() string   { return "agents" }
func (Runners) Name() string  { return "runners" }
func (Inbox) Name() string    { return "inbox" }
func (Help) Name() string     { return "help" }
func (Quit) Name() string     { return "quit" }
func (Wait) Name() string     { return "wait" }

func (c Delegate) Args() map[string]any {
	m := map[string]any{
		"task":            c.Task,
		"agent_type":      c.AgentType,
		"inherit_context": c.InheritContext,
		"timeout":         c.Timeout,
	}
	if c.PermissionMode != "" {
		m["permission_mode"] = c.PermissionMode
	}
	if c.Tools != nil {
		m["tools"] = slices.Clone(c.Tools)
	}
	if c.Inputs != "" {
		m["inputs"] = c.Inputs
	}
	if c.On != "" {
		m["on"] = c.On
	}
	if c.Retry { // absent when false: the recorded args of a local /delegate stay as they were
		m["retry"] = true
	}
	return m
}

func (c Handoff) Args() map[string]any {
	return map[string]any{
		"subagent_id":      c.SubagentID,
		"transfer_control": c.TransferControl,
		"timeout":          c.Timeout,
		"on_failure":       c.OnFailure,
	}
}

func (c Converge) Args() map[string]any {
	return map[string]any{
		"subagent_ids":        slices.Clone(c.SubagentIDs),
		"strategy":            c.Strategy,
		"conflict_resolution": c.ConflictResolution,
		"output_format":       c.OutputFormat,
	}
}

func (c Resolve) Args() map[string]any {
	m := map[string]any{"conflict_id": c.ConflictID, "choose": c.Choose}
	if c.Note != "" {
		m["note"] = c.Note
	}
	if c.Choose == ChooseEdit || c.Content != "" {
		m["content"] = c.Content
	}
	m["whole_file"] = c.WholeFile
	return m
}

func (c Approve) Args() map[string]any {
	return map[string]any{"request_id": c.RequestID, "scope": c.Scope}
}

func (c Deny) Args() map[string]any {
	m := map[string]any{"request_id": c.RequestID}
	if c.Reason != "" {
		m["reason"] = c.Reason
	}
	return m
}

// Args of /apply: recordings made before /apply sa-N name the key convergence_id; it is
// only shown, never read back.
func (c Apply) Args() map[string]any {
	m := map[string]any{"id": c.ID(), "dry_run": c.DryRun, "force": c.Force}
	if c.Verify != "" {
		m["verify"] = c.Verify
	}
	return m
}
func (c Cancel) Args() map[string]any { return map[string]any{"subagent_id": c.SubagentID} }
func (c Status) Args() map[string]any { return optional("id", c.ID) }
func (Agents) Args() map[string]any   { return map[string]any{} }
func (Runners) Args() map[string]any  { return map[string]any{} }
func (Inbox) Args() map[string]any    { return map[string]any{} }
func (c Help) Args() map[string]any   { return optional("topic", c.Topic) }
func (Quit) Args() map[string]any     { return map[string]any{} }
func (c Wait) Args() map[string]any   { return map[string]any{"ids": slices.Clone(c.IDs)} }

func optional(key, v string) map[string]any {
	if v == "" {
		return map[string]any{}
	}
	return map[string]any{key: v}
}

// line builds a canonical command line: positionals first, then flags in table order, values
// quoted only where Tokenize needs it.
type line struct{ b strings.Builder }

func newLine(name string) *line {
	l := &line{}
	l.b.WriteString("/" + name)
	return l
}

func (l *line) word(s string) *line {
	l.b.WriteString(" " + Quote(s))
	return l
}

func (l *line) words(ss []string) *line {
	for _, s := range ss {
		l.word(s)
	}
	return l
}

func (l *line) flag(name, v string) *line {
	l.b.WriteString(" --" + name + " " + Quote(v))
	return l
}

// flagIf writes a flag unless its value is the default (or, for optional text, empty).
func (l *line) flagIf(name, v, def string) *line {
	if v != def {
		l.flag(name, v)
	}
	return l
}

func (l *line) boolFlag(name string, v, def bool) *line {
	switch {
	case v == def:
	case v:
		l.b.WriteString(" --" + name)
	default:
		l.b.WriteString(" --" + name + "=false")
	}
	return l
}

func (l *line) String() string { return l.b.String() }

// taskText writes a task as bare words when splitting them again gives the same text, and as
// one quoted word otherwise (extra spaces, quotes, words that look like flags, ...).
func taskText(task string) string {
	words := strings.Split(task, " ")
	for _, w := range words {
		if w == "" || needsQuote(w) {
			return Quote(task)
		}
	}
	return task
}

func (c Delegate) String() string {
	l := newLine("delegate")
	l.b.WriteString(" " + taskText(c.Task))
	l.flag("agent-type", c.AgentType).
		boolFlag("inherit-context", c.InheritContext, true).
		flagIf("permission-mode", c.PermissionMode, "").
		flagIf("timeout", strconv.Itoa(c.Timeout), strconv.Itoa(DefaultDelegateTimeout))
	if c.Tools != nil {
		l.flag("tools", strings.Join(c.Tools, ","))
	}
	l.flagIf("inputs", c.Inputs, "")
	l.flagIf("on", c.On, "")
	l.boolFlag("retry", c.Retry, false)
	return l.String()
}

func (c Handoff) String() string {
	return newLine("handoff").word(c.SubagentID).
		boolFlag("transfer-control", c.TransferControl, false).
		flagIf("timeout", strconv.Itoa(c.Timeout), strconv.Itoa(DefaultHandoffTimeout)).
		flagIf("on-failure", c.OnFailure, OnFailureEscalate).
		String()
}

func (c Converge) String() string {
	return newLine("converge").words(c.SubagentIDs).
		flag("strategy", c.Strategy).
		flagIf("conflict-resolution", c.ConflictResolution, ResolutionManual).
		flagIf("output-format", c.OutputFormat, FormatDeltaBatch).
		String()
}

func (c Resolve) String() string {
	l := newLine("resolve").word(c.ConflictID).flag("choose", c.Choose).flagIf("note", c.Note, "")
	if c.Choose == ChooseEdit || c.Content != "" {
		l = l.flag("content", c.Content)
	}
	if c.WholeFile {
		l = l.boolFlag("whole-file", true, false)
	}
	return l.String()
}

func (c Approve) String() string {
	return newLine("approve").word(c.RequestID).flagIf("scope", c.Scope, ScopeOnce).String()
}

func (c Deny) String() string {
	return newLine("deny").word(c.RequestID).flagIf("reason", c.Reason, "").String()
}

func (c Apply) String() string {
	return newLine("apply").word(c.ID()).boolFlag("dry-run", c.DryRun, false).
		flagIf("verify", c.Verify, "").boolFlag("force", c.Force, false).String()
}
func (c Cancel) String() string { return newLine("cancel").word(c.SubagentID).String() }
func (Agents) String() string   { return "/agents" }
func (Runners) String() string  { return "/runners" }
func (Inbox) String() string    { return "/inbox" }
func (Quit) String() string     { return "/quit" }
func (c Wait) String() string   { return newLine("wait").words(c.IDs).String() }

func (c Status) String() string {
	if c.ID == "" {
		return "/status"
	}
	return newLine("status").word(c.ID).String()
}

func (c Help) String() string {
	if c.Topic == "" {
		return "/help"
	}
	return newLine("help").word(c.Topic).String()
}

func buildDelegate(v values) Command {
	return Delegate{
		Task:           v.str("task"),
		AgentType:      v.str("agent_type"),
		InheritContext: v.bool("inherit_context"),
		PermissionMode: v.str("permission_mode"),
		Timeout:        v.int("timeout"),
		Tools:          v.list("tools"),
		Inputs:         v.str("inputs"),
		On:             v.str("on"),
		Retry:          v.bool("retry"),
	}
}

func buildHandoff(v values) Command {
	return Handoff{
		SubagentID:      v.str("subagent_id"),
		TransferControl: v.bool("transfer_control"),
		Timeout:         v.int("timeout"),
		OnFailure:       v.str("on_failure"),
	}
}

func buildConverge(v values) Command {
	return Converge{
		SubagentIDs:        v.list("subagent_ids"),
		Strategy:           v.str("strategy"),
		ConflictResolution: v.str("conflict_resolution"),
		OutputFormat:       v.str("output_format"),
	}
}

func buildResolve(v values) Command {
	return Resolve{ConflictID: v.str("conflict_id"), Choose: v.str("choose"), Note: v.str("note"), Content: v.str("content"), WholeFile: v.bool("whole_file")}
}

func buildApprove(v values) Command {
	return Approve{RequestID: v.str("request_id"), Scope: v.str("scope")}
}

func buildDeny(v values) Command {
	return Deny{RequestID: v.str("request_id"), Reason: v.str("reason")}
}

func buildApply(v values) Command {
	id := v.str("id")
	a := Apply{ConvergenceID: id, DryRun: v.bool("dry_run"), Verify: v.str("verify"), Force: v.bool("force")}
	if k, _, _ := ParseID(id); k == IDSubagent {
		a.SubagentID, a.ConvergenceID = id, ""
	}
	return a
}
func buildCancel(v values) Command { return Cancel{SubagentID: v.str("subagent_id")} }
func buildStatus(v values) Command { return Status{ID: v.str("id")} }
func buildWait(v values) Command   { return Wait{IDs: v.list("ids")} }
