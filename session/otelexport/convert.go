package otelexport

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/summit-dev/summit/session"
)

// Span is one span the Converter built, complete: its ids, its parent's, its times (from the
// recording's ts), its attributes, events, links and status. It is what the SDK is told to
// make (see Pipeline) or what a test compares.
type Span struct {
	Trace  trace.TraceID
	Name   string
	Kind   trace.SpanKind
	ID     trace.SpanID
	Parent trace.SpanID // zero for the session's root span
	Start  time.Time
	End    time.Time
	Attrs  []attribute.KeyValue
	Events []Event
	Links  []trace.SpanID
	Status codes.Code
	Desc   string // the status description (an error's)
}

// Event is a span event.
type Event struct {
	Name  string
	Time  time.Time
	Attrs []attribute.KeyValue
}

// Options are what a Converter includes beyond the structure of the session.
type Options struct {
	// Content adds what the recording holds of messages and tool calls: the task, tool
	// arguments and results, the user's notes, permission arguments. It is text as recorded,
	// so redacted as recorded; without Content no such text is exported.
	Content bool
}

// TurnGap is how long after a tool result a tool call must come to be the request of a new
// model call rather than the next call of the same one, when no model output lies between
// them: the calls one model reply asks for run one after another with nothing recorded
// between a result and the next call, while a new model call is a round trip to the model.
const TurnGap = 50 * time.Millisecond

// Names of the kinds of span (also mixed into span ids).
const (
	kindSession     = "session"
	kindSubagent    = "subagent"
	kindChat        = "chat"
	kindTool        = "tool"
	kindPermission  = "permission"
	kindHandoff     = "handoff"
	kindConvergence = "convergence"
	kindConflict    = "conflict"
)

// summit's own attributes.
const (
	attrSeq          = attribute.Key("summit.seq")
	attrSessionID    = attribute.Key("summit.session.id")
	attrSubagentID   = attribute.Key("summit.subagent.id")
	attrAgentType    = attribute.Key("summit.agent_type")
	attrOutcome      = attribute.Key("summit.outcome")
	attrUnfinished   = attribute.Key("summit.unfinished")
	attrTurn         = attribute.Key("summit.turn")
	attrFailed       = attribute.Key("summit.failed_attempt")
	attrToolError    = attribute.Key("summit.tool.is_error")
	attrToolDenied   = attribute.Key("summit.tool.denied")
	attrParentSA     = attribute.Key("summit.parent_subagent_id")
	attrQueued       = attribute.Key("summit.queued")
	attrPermMode     = attribute.Key("summit.permission_mode")
	attrCostUSD      = attribute.Key("summit.cost_usd")
	attrToolCount    = attribute.Key("summit.tool_invocation_count")
	attrTask         = attribute.Key("summit.task")
	attrProvider     = attribute.Key("summit.provider")
	attrEndReason    = attribute.Key("summit.end_reason")
	attrWorkspace    = attribute.Key("summit.workspace")
	attrRequestID    = attribute.Key("summit.permission.request_id")
	attrPermTool     = attribute.Key("summit.permission.tool")
	attrPermReason   = attribute.Key("summit.permission.reason")
	attrPermArgs     = attribute.Key("summit.permission.args")
	attrDecision     = attribute.Key("summit.permission.decision")
	attrScope        = attribute.Key("summit.permission.scope")
	attrBy           = attribute.Key("summit.permission.by")
	attrHandoffMode  = attribute.Key("summit.handoff.mode")
	attrTimeoutS     = attribute.Key("summit.timeout_s")
	attrOnFailure    = attribute.Key("summit.handoff.on_failure")
	attrAction       = attribute.Key("summit.handoff.action")
	attrRetry        = attribute.Key("summit.handoff.retry_subagent_id")
	attrConvID       = attribute.Key("summit.convergence.id")
	attrMembers      = attribute.Key("summit.convergence.subagent_ids")
	attrStrategy     = attribute.Key("summit.convergence.strategy")
	attrResolution   = attribute.Key("summit.convergence.conflict_resolution")
	attrOutputFormat = attribute.Key("summit.convergence.output_format")
	attrConflicts    = attribute.Key("summit.convergence.conflict_count")
	attrResolutions  = attribute.Key("summit.convergence.resolution_count")
	attrConflictID   = attribute.Key("summit.conflict.id")
	attrConflictKind = attribute.Key("summit.conflict.kind")
	attrFile         = attribute.Key("summit.conflict.file")
	attrSides        = attribute.Key("summit.conflict.sides")
	attrMethod       = attribute.Key("summit.conflict.method")
	attrChoice       = attribute.Key("summit.conflict.choice")
	attrText         = attribute.Key("summit.text")
	attrError        = attribute.Key("summit.error")
	// gen_ai.system is the older name of gen_ai.provider.name, which backends still read.
	attrGenAISystem = attribute.Key("gen_ai.system")
)

// open is a span begun and not yet ended.
type open struct {
	span Span
	seq  uint64 // the event that opened it
}

func (o *open) set(kv ...attribute.KeyValue) { o.span.Attrs = append(o.span.Attrs, kv...) }

func (o *open) event(name string, ts time.Time, kv ...attribute.KeyValue) {
	o.span.Events = append(o.span.Events, Event{Name: name, Time: ts, Attrs: kv})
}

// Phases of a subagent's stream: where the next event falls in its model calls.
const (
	phaseIdle      = iota // nothing since the last boundary: the next output opens a model call
	phaseStreaming        // a model call is open, its output streaming
	phaseTools            // the calls a model reply asked for are running
)

// subagent is what the converter keeps of one subagent.
type subagent struct {
	span     *open        // nil once it stopped
	spanID   trace.SpanID // its span's id, kept after it stopped
	provider string
	model    string
	lastTS   time.Time // its previous event's ts: when a model call that starts now was asked
	phase    int
	call     *open        // the model call streaming (phaseStreaming)
	lastCall trace.SpanID // the model call the running tools came from
	turn     int
	resultTS time.Time // the last tool result's ts
	tools    []*open   // its tool calls without a result, in order
	// exact is set once the subagent's recording has ModelTurn events: each ends a model
	// call, with its tokens, and the inference from the stream (TurnGap) is not needed.
	exact bool
}

// convergence is an open convergence and its open conflicts.
type convergence struct {
	span      *open
	conflicts map[string]*open
}

// Converter turns a session's events, fed in seq order, into spans. It is a fold with no I/O
// and no clock: the same events give the same spans, ids and times, whether they come from
// a recording or from a live session. Observe returns the spans the event ended; Finish ends
// what is still open. A Converter is not safe for concurrent use.
type Converter struct {
	opts      Options
	sessionID string
	traceID   trace.TraceID
	provider  string // SessionStarted.provider
	lastSeq   uint64
	lastTS    time.Time
	root      *open
	subagents map[string]*subagent
	perms     map[string]*open // by request id
	handoffs  map[string]*open // by subagent id
	convs     map[string]*convergence
	// retryUnder maps a subagent a handoff's on_failure retry started to that handoff's span:
	// its parent, known only when the handoff resolves, which is after the retry's spawn and
	// before its span ends (spans are built when they end).
	retryUnder map[string]trace.SpanID
	ended      bool // SessionEnded, or Finish, ended the root
	out        []Span
	// Ignored counts events that were not folded: not after the previous one (a seq not
	// above the last), from another session, or after the session ended.
	Ignored int
}

// NewConverter returns a converter for one session.
func NewConverter(opts Options) *Converter {
	return &Converter{opts: opts, subagents: map[string]*subagent{}, perms: map[string]*open{},
		handoffs: map[string]*open{}, convs: map[string]*convergence{}, retryUnder: map[string]trace.SpanID{}}
}

// TraceID is the trace the spans belong to; zero before the first event.
func (c *Converter) TraceID() trace.TraceID { return c.traceID }

// Observe folds one event and returns the spans it ended, in the order they ended (children
// before their parents). The slice is the caller's.
func (c *Converter) Observe(e session.Event) []Span {
	if c.root == nil {
		c.start(e)
	} else if c.ended || e.Seq <= c.lastSeq || e.SessionID != c.sessionID {
		c.Ignored++
		return nil
	}
	c.lastSeq, c.lastTS = e.Seq, e.TS
	c.out = nil
	c.fold(e)
	if sa := c.subagents[e.SubagentID]; sa != nil && !isErrorText(e) {
		// The error text of a failed model call comes before its SubagentError, which
		// places the failed call: that call was asked at the event before the text.
		sa.lastTS = e.TS
	}
	return c.out
}

// Finish ends every span still open at the last event's time, marked summit.unfinished, and
// returns them, the session's root last. A converter that saw no event, or whose session
// ended (SessionEnded ends everything), returns nothing.
func (c *Converter) Finish() []Span {
	if c.root == nil || c.ended {
		return nil
	}
	c.out = nil
	c.endOpen(c.lastTS)
	c.ended = true
	c.unfinished(c.root, c.lastTS)
	return c.out
}

// endOpen ends, as unfinished, every span open but the root: convergences, handoffs and
// permission waits, then each subagent's model call, tool calls and span, in spawn order.
func (c *Converter) endOpen(ts time.Time) {
	for _, id := range sortedKeys(c.convs) {
		c.endConvergence(id, ts, true)
	}
	for _, id := range sortedKeys(c.handoffs) {
		c.unfinished(c.handoffs[id], ts)
		delete(c.handoffs, id)
	}
	for _, id := range sortedKeys(c.perms) {
		c.unfinished(c.perms[id], ts)
		delete(c.perms, id)
	}
	var running []*subagent
	for _, sa := range c.subagents {
		if sa.span != nil {
			running = append(running, sa)
		}
	}
	slices.SortFunc(running, func(a, b *subagent) int { return cmpSeq(a.span, b.span) })
	for _, sa := range running {
		c.closeCall(sa, ts, true)
		c.endTools(sa, ts)
		c.unfinished(sa.span, ts)
		sa.span = nil
	}
}

// cmpSeq orders spans by the seq of the event that opened them.
func cmpSeq(a, b *open) int {
	return cmp.Compare(a.seq, b.seq)
}

func (c *Converter) start(e session.Event) {
	c.sessionID = e.SessionID
	c.traceID = TraceID(e.SessionID)
	c.root = &open{seq: e.Seq, span: Span{Trace: c.traceID, Name: "summit session", Kind: trace.SpanKindInternal,
		ID: SpanID(e.SessionID, e.Seq, kindSession), Start: e.TS,
		Attrs: []attribute.KeyValue{attrSessionID.String(e.SessionID), attrSeq.Int64(int64(e.Seq)),
			semconv.GenAIConversationID(e.SessionID)}}}
}

// begin opens a span of kind, opened by event e, under parent.
func (c *Converter) begin(kind, name string, sk trace.SpanKind, e session.Event, start time.Time, parent trace.SpanID) *open {
	return &open{seq: e.Seq, span: Span{Trace: c.traceID, Name: name, Kind: sk, ID: SpanID(c.sessionID, e.Seq, kind),
		Parent: parent, Start: start, Attrs: []attribute.KeyValue{attrSeq.Int64(int64(e.Seq))}}}
}

// end ends o at ts and hands it out.
func (c *Converter) end(o *open, ts time.Time) {
	if ts.Before(o.span.Start) {
		ts = o.span.Start
	}
	o.span.End = ts
	c.out = append(c.out, o.span)
}

func (c *Converter) unfinished(o *open, ts time.Time) {
	o.set(attrUnfinished.Bool(true))
	o.span.Status, o.span.Desc = codes.Error, "not finished when the recording ends"
	c.end(o, ts)
}

// parentOf is the span what concerns subagent id hangs under: its span (ended or not), else
// the session's.
func (c *Converter) parentOf(id string) trace.SpanID {
	if sa := c.subagents[id]; sa != nil {
		return sa.spanID
	}
	return c.root.span.ID
}

func (c *Converter) fold(e session.Event) {
	switch d := e.Data.(type) {
	case session.SessionStarted:
		c.provider = d.Provider
		c.root.set(attrProvider.String(d.Provider), attrPermMode.String(d.PermissionMode),
			attrWorkspace.String(d.Workspace))
	case session.SessionForked:
		// A fork (session/fork) starts with its own start and names its parent, whose trace
		// is TraceID(parent session id): the parent's spans up to the fork point follow,
		// in this trace, as this session's recording holds them.
		c.provider = d.Started.Provider
		c.root.set(attrProvider.String(d.Started.Provider), attrPermMode.String(d.Started.PermissionMode),
			attrWorkspace.String(d.Started.Workspace),
			attribute.String("summit.fork.parent_session_id", d.Parent.SessionID),
			attribute.Int64("summit.fork.parent_seq", int64(d.Parent.Seq)),
			attribute.String("summit.fork.parent_trace_id", TraceID(d.Parent.SessionID).String()))
	case session.SessionEnded:
		c.root.set(attrEndReason.String(d.Reason))
		// Whatever is still open ends with the session, before its root.
		c.endOpen(e.TS)
		c.ended = true
		c.end(c.root, e.TS)
	case session.UserNote:
		if c.opts.Content {
			c.spanFor(e.SubagentID).event("user_note", e.TS, attrText.String(d.Text))
		}
	case session.CommandRejected:
		c.root.event("command_rejected", e.TS, attrError.String(d.Error))
	case session.SubagentSpawned:
		c.spawned(e, d)
	case session.SubagentActive:
		if sa := c.subagents[e.SubagentID]; sa != nil && sa.span != nil {
			sa.span.event("active", e.TS)
		}
	case session.TranscriptEvent:
		if sa := c.subagents[e.SubagentID]; sa != nil && sa.span != nil {
			c.transcript(sa, e, d)
		}
	case session.ModelRouted:
		if sa := c.subagents[e.SubagentID]; sa != nil {
			sa.provider, sa.model = d.Provider, d.Model
			if d.From != "" && sa.span != nil { // a move to a fallback mid-run
				sa.span.event("model_switched", e.TS, attribute.String("from", d.From),
					attribute.String("to", d.Provider+"/"+d.Model), attribute.String("reason", d.Why))
			}
		}
	case session.ModelSwitched:
		if sa := c.subagents[e.SubagentID]; sa != nil && sa.span != nil {
			sa.provider, sa.model = d.ToProvider, d.ToModel
			sa.span.event("model_switched", e.TS, attribute.String("from", d.FromProvider+"/"+d.FromModel),
				attribute.String("to", d.ToProvider+"/"+d.ToModel), attribute.String("reason", d.Reason))
		}
	case session.ModelTurn:
		if sa := c.subagents[e.SubagentID]; sa != nil && sa.span != nil {
			c.modelTurn(sa, e, d)
		}
	case session.SubagentError:
		if sa := c.subagents[e.SubagentID]; sa != nil && sa.span != nil {
			c.subagentError(sa, e, d)
		}
	case session.SubagentTimeout:
		c.spanFor(e.SubagentID).event("timeout", e.TS, attrTimeoutS.Int(d.TimeoutS))
	case session.SubagentCancelled:
		c.spanFor(e.SubagentID).event("cancelled", e.TS, attribute.String("reason", d.Reason))
	case session.SubagentStop:
		if sa := c.subagents[e.SubagentID]; sa != nil && sa.span != nil {
			c.stopped(sa, e, d)
		}
	case session.PermissionRequested:
		c.permissionRequested(e, d)
	case session.PermissionGranted:
		if o := c.perms[d.RequestID]; o != nil {
			o.set(attrDecision.String("granted"), attrScope.String(d.Scope), attrBy.String(d.By))
			delete(c.perms, d.RequestID)
			c.end(o, e.TS)
		}
	case session.PermissionDenied:
		if o := c.perms[d.RequestID]; o != nil {
			o.set(attrDecision.String("denied"), attrPermReason.String(d.Reason), attrBy.String(d.By))
			delete(c.perms, d.RequestID)
			c.end(o, e.TS)
		}
	case session.HandoffInitiated:
		if old := c.handoffs[e.SubagentID]; old != nil {
			c.unfinished(old, e.TS)
		}
		o := c.begin(kindHandoff, "handoff "+e.SubagentID, trace.SpanKindInternal, e, e.TS, c.parentOf(e.SubagentID))
		o.set(attrSubagentID.String(e.SubagentID), attrHandoffMode.String(d.HandoffMode),
			attrTimeoutS.Int(d.TimeoutS), attrOnFailure.String(d.OnFailure))
		c.handoffs[e.SubagentID] = o
	case session.HandoffComplete:
		if o := c.handoffs[e.SubagentID]; o != nil {
			o.event("complete", e.TS, attrOutcome.String(d.Outcome))
		}
	case session.HandoffResolved:
		if o := c.handoffs[e.SubagentID]; o != nil {
			delete(c.handoffs, e.SubagentID)
			o.set(attrOutcome.String(d.Outcome), attrAction.String(d.Action))
			if d.RetrySubagentID != "" {
				o.set(attrRetry.String(d.RetrySubagentID))
				c.retryUnder[d.RetrySubagentID] = o.span.ID
			}
			if d.Outcome != session.OutcomeSuccess {
				o.span.Status, o.span.Desc = codes.Error, "handoff "+d.Outcome
			}
			c.end(o, e.TS)
		}
	case session.ConvergenceInitiated:
		o := c.begin(kindConvergence, "converge "+d.ConvergenceID, trace.SpanKindInternal, e, e.TS, c.root.span.ID)
		o.set(attrConvID.String(d.ConvergenceID), attrMembers.StringSlice(d.SubagentIDs),
			attrStrategy.String(d.Strategy), attrResolution.String(d.ConflictResolution),
			attrOutputFormat.String(d.OutputFormat))
		for _, id := range d.SubagentIDs {
			if sa := c.subagents[id]; sa != nil {
				o.span.Links = append(o.span.Links, sa.spanID)
			}
		}
		if old := c.convs[d.ConvergenceID]; old != nil {
			c.endConvergence(d.ConvergenceID, e.TS, true)
		}
		c.convs[d.ConvergenceID] = &convergence{span: o, conflicts: map[string]*open{}}
	case session.ConflictDetected:
		if cv := c.convs[d.ConvergenceID]; cv != nil {
			o := c.begin(kindConflict, "conflict "+d.ConflictID, trace.SpanKindInternal, e, e.TS, cv.span.span.ID)
			sides := make([]string, 0, len(d.Sides))
			for _, s := range d.Sides {
				sides = append(sides, s.SubagentID)
			}
			o.set(attrConflictID.String(d.ConflictID), attrConflictKind.String(d.Kind), attrSides.StringSlice(sides))
			if d.File != "" {
				o.set(attrFile.String(d.File))
			}
			cv.conflicts[d.ConflictID] = o
		}
	case session.ConflictReviewRequest:
		if o := c.conflict(d.ConvergenceID, d.ConflictID); o != nil {
			o.event("review_requested", e.TS, attribute.String("reason", d.Reason))
		}
	case session.ManualReviewRequired:
		if cv := c.convs[d.ConvergenceID]; cv != nil {
			cv.span.event("manual_review_required", e.TS, attribute.StringSlice("conflict_ids", d.ConflictIDs))
		}
	case session.ConflictResolved:
		if cv := c.convs[d.ConvergenceID]; cv != nil {
			if o := cv.conflicts[d.ConflictID]; o != nil {
				delete(cv.conflicts, d.ConflictID)
				o.set(attrMethod.String(d.Method), attrChoice.String(d.Choice))
				c.end(o, e.TS)
			}
		}
	case session.ConvergenceComplete:
		if cv := c.convs[d.ConvergenceID]; cv != nil {
			cv.span.set(attrOutcome.String(d.Outcome), attrConflicts.Int(d.ConflictCount),
				attrResolutions.Int(d.ResolutionCount))
			if d.Outcome == session.OutcomeFailure { // partial still produced an output
				cv.span.span.Status, cv.span.span.Desc = codes.Error, "convergence "+d.Outcome
			}
			c.endConvergence(d.ConvergenceID, e.TS, false)
		}
	case session.ChangesApplied:
		c.root.event("changes_applied", e.TS, attribute.String("apply_id", d.ApplyID),
			attribute.String("source", d.Source), attribute.Int("files", len(d.Files)))
	case session.ApplyUndone:
		c.root.event("apply_undone", e.TS, attribute.String("apply_id", d.ApplyID))
	}
	// CommandIssued (the user's typed line: content, and each command's effect has its own
	// events), ConvergedResult, DeltaBatch, DeltaBatchApplied, the workspace events and
	// types this build does not know add nothing to the trace.
}

// spanFor is the open span events about subagent id go on: its span, else the session's.
func (c *Converter) spanFor(id string) *open {
	if sa := c.subagents[id]; sa != nil && sa.span != nil {
		return sa.span
	}
	return c.root
}

func (c *Converter) conflict(cvID, cfID string) *open {
	if cv := c.convs[cvID]; cv != nil {
		return cv.conflicts[cfID]
	}
	return nil
}

func (c *Converter) endConvergence(id string, ts time.Time, unfinished bool) {
	cv := c.convs[id]
	delete(c.convs, id)
	for _, cf := range sortedKeys(cv.conflicts) {
		c.unfinished(cv.conflicts[cf], ts)
	}
	if unfinished {
		c.unfinished(cv.span, ts)
		return
	}
	c.end(cv.span, ts)
}

func (c *Converter) spawned(e session.Event, d session.SubagentSpawned) {
	if old := c.subagents[e.SubagentID]; old != nil && old.span != nil {
		c.closeCall(old, e.TS, true)
		c.endTools(old, e.TS)
		c.unfinished(old.span, e.TS)
	}
	parent := c.root.span.ID
	if d.ParentSubagentID != "" {
		parent = c.parentOf(d.ParentSubagentID)
	}
	o := c.begin(kindSubagent, "invoke_agent "+d.AgentName, trace.SpanKindInternal, e, e.TS, parent)
	o.set(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(d.AgentName),
		semconv.GenAIAgentID(e.SubagentID), attrSubagentID.String(e.SubagentID),
		attrAgentType.String(d.AgentType), attrPermMode.String(d.PermissionMode))
	if d.ParentSubagentID != "" {
		o.set(attrParentSA.String(d.ParentSubagentID))
	}
	if d.Queued {
		o.set(attrQueued.Bool(true))
	}
	if c.opts.Content {
		o.set(attrTask.String(d.TaskDescription))
	}
	c.subagents[e.SubagentID] = &subagent{span: o, spanID: o.span.ID, lastTS: e.TS}
}

// transcript places one transcript event in the subagent's model calls and tool calls.
func (c *Converter) transcript(sa *subagent, e session.Event, d session.TranscriptEvent) {
	switch d.EventType {
	case session.TranscriptToken, session.TranscriptThinking:
		if sa.phase != phaseStreaming {
			c.openCall(sa, e, sa.lastTS)
		}
		sa.call.span.End = e.TS // the last output so far
	case session.TranscriptMessage:
		// A message without a tool is the runtime's word between turns ("waiting for a user
		// message"): the model's reply is over. Plan and agent-state messages are state an
		// agent reports while it works; they end nothing.
		if d.Tool == "" && sa.phase == phaseStreaming {
			c.closeCall(sa, sa.call.span.End, false)
			sa.phase = phaseIdle
		}
	case session.TranscriptToolCall:
		switch {
		case sa.exact:
			// Its model call ended at its ModelTurn, just before: the call asked for this.
		case sa.phase == phaseStreaming:
			sa.call.span.End = e.TS
			c.closeCall(sa, e.TS, false)
		case sa.phase == phaseIdle || e.TS.Sub(sa.resultTS) > TurnGap:
			// A reply that is only tool calls: the model was asked at the previous event.
			c.openCall(sa, e, sa.lastTS)
			c.closeCall(sa, e.TS, false)
		}
		sa.phase = phaseTools
		o := c.begin(kindTool, "execute_tool "+d.Tool, trace.SpanKindInternal, e, e.TS, sa.spanID)
		o.set(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(d.Tool),
			semconv.GenAIToolType("function"), attrSubagentID.String(e.SubagentID), attrTurn.Int(sa.turn))
		if d.CallID != "" {
			o.set(semconv.GenAIToolCallID(d.CallID))
		}
		if c.opts.Content && d.Args != nil {
			o.set(semconv.GenAIToolCallArgumentsKey.String(jsonText(d.Args)))
		}
		if sa.lastCall.IsValid() {
			o.span.Links = append(o.span.Links, sa.lastCall)
		}
		sa.tools = append(sa.tools, o)
	case session.TranscriptToolResult:
		sa.resultTS = e.TS
		if sa.phase == phaseStreaming { // a result with no call before it: the reply is over
			c.closeCall(sa, sa.call.span.End, false)
		}
		sa.phase = phaseTools
		i := slices.IndexFunc(sa.tools, func(o *open) bool { return callIDOf(o) == d.CallID })
		var o *open
		if i < 0 {
			// A result whose call was not recorded: a span of no length, so it still counts.
			o = c.begin(kindTool, "execute_tool "+d.Tool, trace.SpanKindInternal, e, e.TS, sa.spanID)
			o.set(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(d.Tool),
				semconv.GenAIToolType("function"), attrSubagentID.String(e.SubagentID), attrTurn.Int(sa.turn))
			if d.CallID != "" {
				o.set(semconv.GenAIToolCallID(d.CallID))
			}
		} else {
			o = sa.tools[i]
			sa.tools = slices.Delete(sa.tools, i, i+1)
		}
		if d.IsError {
			o.set(attrToolError.Bool(true))
			o.span.Status = codes.Error
		}
		if c.opts.Content {
			if d.Args != nil {
				o.set(semconv.GenAIToolCallArgumentsKey.String(jsonText(d.Args)))
			}
			o.set(semconv.GenAIToolCallResultKey.String(d.Result))
		}
		c.end(o, e.TS)
	case session.TranscriptPolicyDenied:
		target := sa.span
		for i := len(sa.tools) - 1; i >= 0; i-- {
			if toolOf(sa.tools[i]) == d.Tool {
				target = sa.tools[i]
				target.set(attrToolDenied.Bool(true))
				break
			}
		}
		target.event("policy_denied", e.TS, semconv.GenAIToolName(d.Tool), attribute.String("reason", d.Reason))
	case session.TranscriptStart:
		// The task is on the subagent span (with Content).
	case session.TranscriptError:
		// Its SubagentError follows and says what failed.
	}
}

// openCall opens the subagent's next model call, asked at start, its first output e.
func (c *Converter) openCall(sa *subagent, e session.Event, start time.Time) {
	sa.turn++
	name := "chat"
	if sa.model != "" {
		name += " " + sa.model
	}
	o := c.begin(kindChat, name, trace.SpanKindClient, e, start, sa.spanID)
	o.set(semconv.GenAIOperationNameChat, attrSubagentID.String(e.SubagentID), attrTurn.Int(sa.turn))
	if p := c.providerOf(sa); p != "" {
		o.set(semconv.GenAIProviderNameKey.String(p), attrGenAISystem.String(p))
	}
	if sa.model != "" {
		o.set(semconv.GenAIRequestModel(sa.model))
	}
	o.span.End = e.TS
	sa.call, sa.phase, sa.lastCall = o, phaseStreaming, o.span.ID
}

// providerOf names who served a subagent's model calls: its routing, else the session's
// provider when it is the script tapes (which record no routing).
func (c *Converter) providerOf(sa *subagent) string {
	if sa.provider != "" {
		return sa.provider
	}
	if c.provider == "script" {
		return "script"
	}
	return ""
}

// closeCall ends the streaming model call, if any, at ts.
func (c *Converter) closeCall(sa *subagent, ts time.Time, unfinished bool) {
	if sa.call == nil {
		return
	}
	o := sa.call
	sa.call = nil
	if unfinished {
		c.unfinished(o, ts)
		return
	}
	c.end(o, ts)
}

func (c *Converter) endTools(sa *subagent, ts time.Time) {
	for _, o := range sa.tools {
		c.unfinished(o, ts)
	}
	sa.tools = nil
}

// subagentError: a failed model call (the runtime's "provider …, turn N" context) fails the
// call streaming, or makes a failed call of its own when nothing came back; any error is an
// event on the subagent.
func (c *Converter) subagentError(sa *subagent, e session.Event, d session.SubagentError) {
	sa.span.event("error", e.TS, attrError.String(d.Error), attribute.Bool("will_retry", d.Retrying()),
		attribute.Int("attempt", d.Attempt), attribute.String("context", d.Context))
	if !strings.HasPrefix(d.Context, "provider ") || sa.exact {
		return // (with ModelTurns, the failed call ended at its own, marked failed)
	}
	if sa.phase != phaseStreaming {
		c.openCall(sa, e, sa.lastTS)
	}
	o := sa.call
	o.set(attrFailed.Bool(true))
	o.span.Status, o.span.Desc = codes.Error, d.Error
	c.closeCall(sa, e.TS, false)
	sa.phase = phaseIdle
}

// modelTurn ends the subagent's model call at its ModelTurn, with the tokens the provider
// reported for it and how it stopped; a call that streamed nothing (only tool calls, or a
// failure) was asked at the subagent's previous event.
func (c *Converter) modelTurn(sa *subagent, e session.Event, d session.ModelTurn) {
	sa.exact = true // from here its calls end at their ModelTurns (one inferred before ends here)
	if sa.phase != phaseStreaming || sa.call == nil {
		c.openCall(sa, e, sa.lastTS)
	}
	o := sa.call
	o.set(semconv.GenAIUsageInputTokens(int(d.Tokens.Input)), semconv.GenAIUsageOutputTokens(int(d.Tokens.Output)),
		attribute.Int("summit.attempt", d.Attempt))
	if d.Model != "" {
		o.set(semconv.GenAIResponseModel(d.Model))
	}
	if d.Stop != "" {
		o.set(semconv.GenAIResponseFinishReasons(d.Stop))
	}
	if d.Stop == "error" {
		o.set(attrFailed.Bool(true))
		o.span.Status = codes.Error
	}
	c.closeCall(sa, e.TS, false)
	sa.phase = phaseTools
}

func (c *Converter) stopped(sa *subagent, e session.Event, d session.SubagentStop) {
	if sa.call != nil {
		c.closeCall(sa, sa.call.span.End, false)
	}
	c.endTools(sa, e.TS)
	o := sa.span
	sa.span = nil
	if p, ok := c.retryUnder[e.SubagentID]; ok {
		o.span.Parent = p
		delete(c.retryUnder, e.SubagentID)
	}
	o.set(attrOutcome.String(d.Outcome), semconv.GenAIUsageInputTokens(int(d.Tokens.Input)),
		semconv.GenAIUsageOutputTokens(int(d.Tokens.Output)), attrToolCount.Int(d.ToolInvocationCount))
	if p := c.providerOf(sa); p != "" {
		o.set(semconv.GenAIProviderNameKey.String(p), attrGenAISystem.String(p))
	}
	if sa.model != "" {
		o.set(semconv.GenAIRequestModel(sa.model))
	}
	if d.CostUSD != nil {
		o.set(attrCostUSD.Float64(*d.CostUSD))
	}
	switch d.Outcome {
	case session.OutcomeSuccess:
		o.span.Status = codes.Ok
	case session.OutcomeFailure, session.OutcomeTimeout:
		o.span.Status, o.span.Desc = codes.Error, d.Outcome
	}
	c.end(o, e.TS)
}

func (c *Converter) permissionRequested(e session.Event, d session.PermissionRequested) {
	parent := c.parentOf(e.SubagentID)
	if sa := c.subagents[e.SubagentID]; sa != nil {
		// The wait belongs to the tool call it holds up, the latest of that tool's.
		for i := len(sa.tools) - 1; i >= 0; i-- {
			if toolOf(sa.tools[i]) == d.Tool {
				parent = sa.tools[i].span.ID
				break
			}
		}
	}
	o := c.begin(kindPermission, "permission "+d.Tool, trace.SpanKindInternal, e, e.TS, parent)
	o.set(attrRequestID.String(d.RequestID), attrPermTool.String(d.Tool), attrSubagentID.String(e.SubagentID))
	if d.Reason != "" {
		o.set(attrPermReason.String(d.Reason))
	}
	if c.opts.Content && d.Args != nil {
		o.set(attrPermArgs.String(jsonText(d.Args)))
	}
	if old := c.perms[d.RequestID]; old != nil {
		c.unfinished(old, e.TS)
	}
	c.perms[d.RequestID] = o
}

func attrOf(o *open, k attribute.Key) string {
	for _, kv := range o.span.Attrs {
		if kv.Key == k {
			return kv.Value.AsString()
		}
	}
	return ""
}

func callIDOf(o *open) string { return attrOf(o, semconv.GenAIToolCallIDKey) }
func toolOf(o *open) string   { return attrOf(o, semconv.GenAIToolNameKey) }

// jsonText is v as compact JSON, its keys sorted (encoding/json sorts map keys).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isErrorText(e session.Event) bool {
	te, ok := e.Data.(session.TranscriptEvent)
	return ok && te.EventType == session.TranscriptError
}
