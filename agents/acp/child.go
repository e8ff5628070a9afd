package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/session"
)

// Child sessions (ACP subagents, unstable in the protocol and not typed by this SDK version).
//
// Summit declares clientCapabilities.subagents = {} in initialize (capsWriter adds it to the
// request the SDK writes). An agent that runs subagents of its own then announces each one
// with a subagent_update on its immediate parent session and sends the child's updates under
// the child's session id:
//
//	{"sessionUpdate":"subagent_update","sessionId":"<child>","title":"…","description":"…",
//	 "capabilities":{"cancel":{}},"state":{"state":"running"}}
//	{"sessionUpdate":"session_message","messageId":"…","senderSessionId":"<parent>",
//	 "recipientSessionId":"<child>","content":[{"type":"text","text":"…"}]}
//
// Fields are an upsert: omitted keeps, a value replaces. state is running, idle (with a
// stopReason end_turn, cancelled or error, and an error), requires_action or unknown; idle
// ends a piece of work, not the child (its parent may message it again). The earlier draft's
// shape (subagentSessionId, name, task, capabilities.cancel a boolean, state a string with
// completed, failed, cancelled or disconnected) is read too.
//
// The SDK cannot decode these two updates, so lineGuard hands them over inside a
// session_info_update's _meta (childMetaKey), which the SDK delivers in the agent's order,
// interleaved with every other update. Config.Child turns an announced child into a summit
// subagent under the run's (or under its own parent child's); its updates, permission
// requests, file reads and writes and terminals are recorded on it. A child that never
// reported how its work ended when its parent's run ends is "disconnected".

// childMetaKey is where lineGuard puts an update the SDK cannot decode.
const childMetaKey = "summit.dev/child-update"

// ChildInfo is a subagent the agent announced: one of its own sessions.
type ChildInfo struct {
	SessionID string
	// Parent is summit's id of the subagent it runs under: "" for the run's own subagent,
	// else the ID of the ChildSink of another child.
	Parent string
	Name   string // the agent's title for it
	Role   string // its description (Claude Code: the subagent_type)
	// Cancel asks the agent to cancel the child's current work (session/cancel with its id),
	// when Cancellable says the agent lets a client do that (its capabilities.cancel, which
	// the agent may change at any time).
	Cancel      func()
	Cancellable func() bool
}

// ChildSink is where a child's events go, from Config.Child.
type ChildSink struct {
	ID      string // summit's id for the child
	Emit    func(session.Data) error
	Approve func(ctx context.Context, tool string, args map[string]any, reason string) (Grant, error)
	// End records how the child ended, once: outcome is a session outcome (success, failure,
	// cancelled or disconnected), why the error or reason, text its last message.
	End func(outcome, why, text string, toolCalls int)
}

// capsWriter declares the subagents client capability in the first initialize request the SDK
// writes (one JSON-RPC message per Write, under the SDK's write lock).
type capsWriter struct {
	w    io.Writer
	done bool
}

func (cw *capsWriter) Write(b []byte) (int, error) {
	if !cw.done && bytes.Contains(b, []byte(`"method":"initialize"`)) {
		cw.done = true
		if nb, ok := withSubagentsCap(b); ok {
			if _, err := cw.w.Write(nb); err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	return cw.w.Write(b)
}

// withSubagentsCap is the initialize request with clientCapabilities.subagents = {}.
func withSubagentsCap(line []byte) ([]byte, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return nil, false
	}
	caps := map[string]json.RawMessage{}
	if raw, ok := params["clientCapabilities"]; ok && json.Unmarshal(raw, &caps) != nil {
		return nil, false
	}
	caps["subagents"] = json.RawMessage(`{}`)
	var err error
	if params["clientCapabilities"], err = json.Marshal(caps); err != nil {
		return nil, false
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, false
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}

// childUpdateKinds are the session updates lineGuard wraps.
var childUpdateKinds = map[string]bool{"subagent_update": true, "session_message": true,
	"subagent_spawned": true, "subagent_state_update": true}

// wrapChildUpdate is a session/update line whose update the SDK cannot decode (a child
// session's announcement or a message between sessions) as a session_info_update carrying it
// in _meta; nil for any other line.
func wrapChildUpdate(line []byte) []byte {
	if !bytes.Contains(line, []byte(`"subagent_`)) && !bytes.Contains(line, []byte(`"session_message"`)) {
		return nil
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &env) != nil || env.ID != nil || env.Method != sdk.ClientMethodSessionUpdate {
		return nil
	}
	var kind struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	if json.Unmarshal(env.Params.Update, &kind) != nil || !childUpdateKinds[kind.SessionUpdate] {
		return nil
	}
	out, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": sdk.ClientMethodSessionUpdate,
		"params": map[string]any{"sessionId": env.Params.SessionID, "update": map[string]any{
			"sessionUpdate": "session_info_update", "_meta": map[string]any{childMetaKey: env.Params.Update}}}})
	if err != nil {
		return nil
	}
	return append(out, '\n')
}

// childUpdate is a subagent_update or session_message, in either shape (see above).
type childUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	// subagent_update
	SessionID         string          `json:"sessionId"`
	SubagentSessionID string          `json:"subagentSessionId"`
	Title             *string         `json:"title"`
	Name              *string         `json:"name"`
	Description       *string         `json:"description"`
	Task              *string         `json:"task"`
	Capabilities      json.RawMessage `json:"capabilities"`
	State             json.RawMessage `json:"state"`
	// session_message
	SenderSessionID    string            `json:"senderSessionId"`
	RecipientSessionID string            `json:"recipientSessionId"`
	Content            []json.RawMessage `json:"content"`
}

// childState is a reported state: running, idle (stopReason, error), requires_action,
// unknown, or the earlier draft's completed, failed, cancelled, disconnected.
type childState struct {
	State      string `json:"state"`
	StopReason string `json:"stopReason"`
	Error      *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (u childUpdate) child() string {
	if u.SessionID != "" {
		return u.SessionID
	}
	return u.SubagentSessionID
}

func firstOf(ps ...*string) *string {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// state decodes the state: an object, or the earlier draft's string; nil when absent.
func (u childUpdate) state() *childState {
	if len(u.State) == 0 || string(u.State) == "null" {
		return nil
	}
	var st childState
	if json.Unmarshal(u.State, &st) == nil && st.State != "" {
		return &st
	}
	var s string
	if json.Unmarshal(u.State, &s) == nil && s != "" {
		return &childState{State: s}
	}
	return nil
}

// canCancel reads capabilities.cancel: an object ({} allows) or the earlier draft's boolean.
func (u childUpdate) canCancel() (allowed, said bool) {
	if len(u.Capabilities) == 0 {
		return false, false
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(u.Capabilities, &caps) != nil {
		return false, true // null clears them
	}
	c := strings.TrimSpace(string(caps["cancel"]))
	return c != "" && c != "null" && c != "false", true
}

// lane is what summit holds about one child.
type childLane struct {
	cl        *client // the child's own client: its transcript, calls, permission answers
	sink      ChildSink
	parent    sdk.SessionId
	last      *childState // the state last reported
	canCancel bool
	ended     bool
}

// childUpdateLocked handles a wrapped update that arrived on session sid (the immediate
// parent of an announced child, or the session a message is in). The root's mu is held.
func (c *client) childUpdateLocked(sid sdk.SessionId, raw any) {
	b, err := json.Marshal(raw)
	var u childUpdate
	if err == nil {
		err = json.Unmarshal(b, &u)
	}
	if err != nil {
		return
	}
	switch u.SessionUpdate {
	case "session_message":
		c.sessionMessageLocked(sid, u)
		return
	case "subagent_update", "subagent_spawned", "subagent_state_update":
	default:
		return
	}
	id := sdk.SessionId(u.child())
	if id == "" || id == c.sid || c.r.c.Child == nil {
		return
	}
	ch := c.children[id]
	if ch == nil {
		parent, ok := c.laneOf(sid)
		if !ok {
			return // its parent is not a session summit knows: the protocol forbids it
		}
		ch = c.openChildLocked(id, sid, parent, u)
		if ch == nil {
			return
		}
	}
	if ok, said := u.canCancel(); said {
		ch.canCancel = ok
	}
	if st := u.state(); st != nil && !ch.ended {
		ch.last = st
		ch.cl.mu.Lock()
		ch.cl.emitLocked(session.TranscriptEvent{EventType: session.TranscriptMessage, Tool: session.AgentStateTool,
			Text: "the agent reports: " + st.describe(), Args: map[string]any{"state": st.State}})
		ch.cl.mu.Unlock()
		switch st.State { // the earlier draft's terminal states end the child at once
		case "completed", "failed", "cancelled", "disconnected":
			c.endChildLocked(ch)
		}
	}
}

// laneOf is the client of session sid (the root's or a child's) and summit's id for it ("" for
// the root).
func (c *client) laneOf(sid sdk.SessionId) (string, bool) {
	if sid == c.sid {
		return "", true
	}
	if ch := c.children[sid]; ch != nil && !ch.ended {
		return ch.sink.ID, true
	}
	return "", false
}

// openChildLocked records a new child through Config.Child; nil when summit could not.
func (c *client) openChildLocked(id, parentSID sdk.SessionId, parentID string, u childUpdate) *childLane {
	info := ChildInfo{SessionID: string(id), Parent: parentID}
	if p := firstOf(u.Title, u.Name); p != nil {
		info.Name = *p
	}
	if p := firstOf(u.Description, u.Task); p != nil {
		info.Role = *p
	}
	ch := &childLane{parent: parentSID}
	info.Cancellable = func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return ch.canCancel && !ch.ended
	}
	info.Cancel = func() {
		if info.Cancellable() {
			_ = c.r.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: id})
		}
	}
	c.flushLocked() // what the parent said before it is recorded first
	sink, err := c.r.c.Child(info)
	if err != nil {
		c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptError,
			Text: fmt.Sprintf("the agent started a subagent summit could not record: %v", err)})
		return nil
	}
	ch.sink = sink
	ch.cl = newClient(c.r)
	ch.cl.sid, ch.cl.emit, ch.cl.approve, ch.cl.top = id, sink.Emit, sink.Approve, c
	if c.children == nil {
		c.children = map[sdk.SessionId]*childLane{}
	}
	c.children[id] = ch
	return ch
}

// describe is a state in words.
func (st *childState) describe() string {
	s := st.State
	switch {
	case st.State == "idle" && st.StopReason != "":
		s += " (" + st.StopReason + ")"
	case st.State == "requires_action":
		s = "waiting for an answer"
	}
	if st.Error != nil && st.Error.Message != "" {
		s += ": " + st.Error.Message
	}
	return s
}

// outcome is how a child whose last state was st ended: idle after a whole piece of work is
// its stop reason's outcome; anything else (still running, waiting, unknown, never said) is
// disconnected.
func (st *childState) outcome() (outcome, why string) {
	if st == nil {
		return session.OutcomeDisconnected, "its agent never reported its state"
	}
	msg := ""
	if st.Error != nil {
		msg = st.Error.Message
	}
	switch {
	case st.State == "completed", st.State == "idle" && st.StopReason == "end_turn":
		return session.OutcomeSuccess, ""
	case st.State == "cancelled", st.State == "idle" && st.StopReason == "cancelled":
		return session.OutcomeCancelled, "its agent cancelled it"
	case st.State == "failed", st.State == "idle" && st.StopReason == "error":
		if msg == "" {
			msg = "its agent reports that it failed"
		}
		return session.OutcomeFailure, msg
	case st.State == "idle":
		return session.OutcomeDisconnected, "its agent did not say how its work ended"
	}
	return session.OutcomeDisconnected, fmt.Sprintf("its agent stopped reporting on it while it was %s", st.describe())
}

// endChildLocked ends a child: its pending deltas and open calls recorded, then End. Its
// descendants end first.
func (c *client) endChildLocked(ch *childLane) {
	if ch.ended {
		return
	}
	for _, k := range c.childrenOf(ch.cl.sid) {
		c.endChildLocked(k)
	}
	ch.ended = true
	outcome, why := ch.last.outcome()
	turn := ch.cl.endTurn(outcome != session.OutcomeSuccess)
	ch.cl.mu.Lock()
	calls := ch.cl.toolCalls
	ch.cl.mu.Unlock()
	ch.sink.End(outcome, why, turn.Text, calls)
}

// childrenOf lists the children announced on session sid, newest first (so the last started
// ends first), deterministic.
func (c *client) childrenOf(sid sdk.SessionId) []*childLane {
	var out []*childLane
	for _, ch := range c.children {
		if ch.parent == sid && !ch.ended {
			out = append(out, ch)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].sink.ID > out[j].sink.ID })
	return out
}

// endChildrenLocked ends every child still open, when the run's turn or the run ends.
func (c *client) endChildrenLocked() {
	for _, ch := range c.childrenOf(c.sid) {
		c.endChildLocked(ch)
	}
}

// sessionMessageLocked records a message between sessions on the session it arrived on: to
// the child, its task; from it, its report.
func (c *client) sessionMessageLocked(sid sdk.SessionId, u childUpdate) {
	var parts []string
	for _, raw := range u.Content {
		var b sdk.ContentBlock
		if json.Unmarshal(raw, &b) == nil {
			parts = append(parts, blockText(b))
		}
	}
	text := strings.Join(parts, "")
	if strings.TrimSpace(text) == "" {
		return
	}
	name := func(s string) string {
		if s == "" {
			return "?"
		}
		if id, ok := c.laneOf(sdk.SessionId(s)); ok {
			if id == "" {
				return "its parent"
			}
			return id
		}
		return "session " + s
	}
	var line string
	if u.RecipientSessionID == string(sid) {
		line = "message from " + name(u.SenderSessionID) + ":\n" + text
	} else {
		line = "message to " + name(u.RecipientSessionID) + ":\n" + text
	}
	l := c
	if sid != c.sid {
		ch := c.children[sid]
		if ch == nil || ch.ended {
			return
		}
		l = ch.cl
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	l.emitLocked(session.TranscriptEvent{EventType: session.TranscriptMessage, Text: line})
}

// route is the client that answers a request about session sid: a child's, else the root.
func (c *client) route(sid sdk.SessionId) *client {
	if sid == "" || sid == c.sid {
		return c
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.children[sid]; ch != nil && !ch.ended {
		return ch.cl
	}
	return c
}
