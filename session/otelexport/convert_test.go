package otelexport

import (
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/summit-dev/summit/session"
)

// script builds a session's events: seq from 1, ts advancing by the given steps.
type script struct {
	evs []session.Event
	t   time.Time
}

func newScript() *script {
	return &script{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

// at adds an event dt after the previous one.
func (s *script) at(dt time.Duration, sa string, d session.Data) {
	s.t = s.t.Add(dt)
	e := session.New(sa, d)
	e.Seq, e.TS, e.SessionID = uint64(len(s.evs)+1), s.t, "s-TEST"
	s.evs = append(s.evs, e)
}

func tok(text string) session.TranscriptEvent {
	return session.TranscriptEvent{EventType: session.TranscriptToken, Text: text}
}

func call(id, tool string) session.TranscriptEvent {
	return session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: id, Tool: tool, Args: map[string]any{"path": "a.go"}}
}

func result(id, tool, out string) session.TranscriptEvent {
	return session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: id, Tool: tool, Result: out}
}

const ms = time.Millisecond

// richSession has a routed subagent with two model calls, a permission wait inside a tool call,
// a failed attempt that is retried, an external agent's child, a handoff whose failure starts a
// retry, and a convergence with a conflict.
func richSession() []session.Event {
	s := newScript()
	s.at(0, "", session.SessionStarted{Schema: 1, Provider: "anthropic", PermissionMode: "acceptEdits"})
	s.at(ms, "sa-1", session.SubagentSpawned{AgentType: "builder", AgentName: "builder", TaskDescription: "fix it"}) // 2
	s.at(ms, "sa-1", session.ModelRouted{Provider: "anthropic", Model: "claude-x", Why: "config"})                   // 3
	s.at(ms, "sa-1", session.SubagentActive{InitialState: "running"})                                                // 4
	s.at(300*ms, "sa-1", tok("Reading"))                                                                             // 5: call 1 opens
	s.at(100*ms, "sa-1", call("c1", "read_file"))                                                                    // 6: call 1 ends
	s.at(5*ms, "sa-1", result("c1", "read_file", "package a"))                                                       // 7
	s.at(1*ms, "sa-1", call("c2", "run_shell_command"))                                                              // 8: same reply (1 ms after)
	s.at(1*ms, "sa-1", session.PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command"})                    // 9
	s.at(2000*ms, "sa-1", session.PermissionGranted{RequestID: "pr-1", Scope: "once", By: "user"})                   // 10
	s.at(50*ms, "sa-1", result("c2", "run_shell_command", "ok"))                                                     // 11
	s.at(400*ms, "sa-1", session.TranscriptEvent{EventType: session.TranscriptError, Text: "overloaded"})            // 12
	will := true
	s.at(0, "sa-1", session.SubagentError{Error: "overloaded", Retryable: true, Attempt: 1, WillRetry: &will, Context: "provider anthropic, turn 2"}) // 13: a failed call
	s.at(600*ms, "sa-1", call("c3", "replace"))                                                                                                       // 14: a reply of tool calls only
	s.at(2*ms, "sa-1", result("c3", "replace", "replaced"))                                                                                           // 15
	s.at(300*ms, "sa-1", tok("Done"))                                                                                                                 // 16: call 4
	s.at(100*ms, "sa-1", tok("."))                                                                                                                    // 17
	s.at(10*ms, "sa-1", session.SubagentStop{Outcome: "success", Tokens: session.Tokens{Input: 1200, Output: 80}, ToolInvocationCount: 3})            // 18
	// An external agent's subagent and its child.
	s.at(ms, "sa-2", session.SubagentSpawned{AgentType: "gemini", AgentName: "gemini"})                           // 19
	s.at(ms, "sa-3", session.SubagentSpawned{AgentType: "gemini", AgentName: "helper", ParentSubagentID: "sa-2"}) // 20
	s.at(ms, "sa-3", tok("thinking aloud"))                                                                       // 21
	s.at(ms, "sa-3", session.SubagentStop{Outcome: session.OutcomeDisconnected})                                  // 22
	s.at(ms, "sa-2", session.SubagentStop{Outcome: "failure", Tokens: session.Tokens{Input: 5, Output: 6}})       // 23
	// A handoff that fails and retries under a new subagent.
	s.at(ms, "sa-4", session.SubagentSpawned{AgentType: "builder", AgentName: "builder"})                   // 24
	s.at(ms, "sa-4", session.HandoffInitiated{HandoffMode: "monitor", TimeoutS: 5, OnFailure: "retry"})     // 25
	s.at(ms, "sa-4", session.SubagentStop{Outcome: "timeout"})                                              // 26
	s.at(ms, "sa-4", session.HandoffComplete{Outcome: "timeout"})                                           // 27
	s.at(ms, "sa-5", session.SubagentSpawned{AgentType: "builder", AgentName: "builder"})                   // 28: the retry
	s.at(ms, "sa-4", session.HandoffResolved{Outcome: "timeout", Action: "retry", RetrySubagentID: "sa-5"}) // 29
	s.at(ms, "sa-5", session.SubagentStop{Outcome: "success"})                                              // 30
	// A convergence of sa-1 and sa-5 with one conflict.
	s.at(ms, "", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1", "sa-5"}, Strategy: "merge"}) // 31
	s.at(ms, "", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk", File: "a.go",
		Sides: []session.ConflictSide{{SubagentID: "sa-1"}, {SubagentID: "sa-5"}}}) // 32
	s.at(3*time.Second, "", session.ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Method: "manual", Choice: "sa-1"}) // 33
	s.at(ms, "", session.ConvergenceComplete{ConvergenceID: "cv-1", Outcome: "success", ConflictCount: 1, ResolutionCount: 1})     // 34
	s.at(ms, "", session.SessionEnded{Reason: "quit"})                                                                             // 35
	return s.evs
}

func convert(evs []session.Event, opts Options) []Span {
	c := NewConverter(opts)
	var out []Span
	for _, e := range evs {
		out = append(out, c.Observe(e)...)
	}
	return append(out, c.Finish()...)
}

func attr(s Span, k string) (attribute.Value, bool) {
	for _, kv := range s.Attrs {
		if string(kv.Key) == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func bySeq(spans []Span, kind string, seq uint64) Span {
	id := SpanID("s-TEST", seq, kind)
	for _, s := range spans {
		if s.ID == id {
			return s
		}
	}
	return Span{}
}

func TestConverterSpanTree(t *testing.T) {
	evs := richSession()
	spans := convert(evs, Options{})
	ts := func(seq int) time.Time { return evs[seq-1].TS }
	root := bySeq(spans, kindSession, 1)
	sa1, sa2, sa3 := bySeq(spans, kindSubagent, 2), bySeq(spans, kindSubagent, 19), bySeq(spans, kindSubagent, 20)
	sa4, sa5 := bySeq(spans, kindSubagent, 24), bySeq(spans, kindSubagent, 28)
	handoff, cv, cf := bySeq(spans, kindHandoff, 25), bySeq(spans, kindConvergence, 31), bySeq(spans, kindConflict, 32)
	tool1, tool2, tool3 := bySeq(spans, kindTool, 6), bySeq(spans, kindTool, 8), bySeq(spans, kindTool, 14)
	perm := bySeq(spans, kindPermission, 9)
	// The model calls: asked at activation, streaming from seq 5 to the tool call at 6; the
	// failed attempt (13) asked after the last result; the reply of tool calls only (14);
	// the last reply (16-17).
	call1, failed, call3, call4 := bySeq(spans, kindChat, 5), bySeq(spans, kindChat, 13), bySeq(spans, kindChat, 14), bySeq(spans, kindChat, 16)
	type want struct {
		name       string
		s          Span
		parent     Span
		start, end int // seqs whose ts they take
	}
	for _, w := range []want{
		{"invoke_agent builder", sa1, root, 2, 18},
		{"chat claude-x", call1, sa1, 4, 6},
		{"execute_tool read_file", tool1, sa1, 6, 7},
		{"execute_tool run_shell_command", tool2, sa1, 8, 11},
		{"permission run_shell_command", perm, tool2, 9, 10},
		{"chat claude-x", failed, sa1, 11, 13},
		{"chat claude-x", call3, sa1, 13, 14},
		{"execute_tool replace", tool3, sa1, 14, 15},
		{"chat claude-x", call4, sa1, 15, 17},
		{"invoke_agent gemini", sa2, root, 19, 23},
		{"invoke_agent helper", sa3, sa2, 20, 22},
		{"invoke_agent builder", sa4, root, 24, 26},
		{"handoff sa-4", handoff, sa4, 25, 29},
		{"invoke_agent builder", sa5, handoff, 28, 30},
		{"converge cv-1", cv, root, 31, 34},
		{"conflict cf-1", cf, cv, 32, 33},
		{"summit session", root, Span{}, 1, 35},
	} {
		if w.s.Name != w.name || w.s.Parent != w.parent.ID || !w.s.Start.Equal(ts(w.start)) || !w.s.End.Equal(ts(w.end)) {
			t.Errorf("%s: got %q parent %s %s..%s, want parent %s (%s) seq %d..%d", w.name, w.s.Name, w.s.Parent,
				w.s.Start.Format("05.000"), w.s.End.Format("05.000"), w.parent.ID, w.parent.Name, w.start, w.end)
		}
		if w.s.Trace != TraceID("s-TEST") {
			t.Errorf("%s: trace %s", w.name, w.s.Trace)
		}
	}
	// 17 spans above plus the model call of the child (21): nothing else.
	if len(spans) != 18 {
		t.Errorf("%d spans, want 18", len(spans))
	}
	for i, c := range []Span{call1, failed, call3, call4} {
		if v, _ := attr(c, "summit.turn"); v.AsInt64() != int64(i+1) {
			t.Errorf("call %d: turn %v", i+1, v.AsInt64())
		}
		if v, _ := attr(c, "gen_ai.provider.name"); v.AsString() != "anthropic" {
			t.Errorf("call %d: provider %q", i+1, v.AsString())
		}
		if v, _ := attr(c, "gen_ai.request.model"); v.AsString() != "claude-x" {
			t.Errorf("call %d: model %q", i+1, v.AsString())
		}
	}
	if failed.Status != codes.Error || failed.Desc != "overloaded" || call1.Status != codes.Unset {
		t.Errorf("failed attempt status %v %q, call 1 %v", failed.Status, failed.Desc, call1.Status)
	}
	for _, tc := range []struct {
		s    Span
		call Span
		turn int64
	}{{tool1, call1, 1}, {tool2, call1, 1}, {tool3, call3, 3}} {
		if v, _ := attr(tc.s, "summit.turn"); v.AsInt64() != tc.turn || len(tc.s.Links) != 1 || tc.s.Links[0] != tc.call.ID {
			t.Errorf("%s: turn %d links %v, want turn %d linked to %s", tc.s.Name, v.AsInt64(), tc.s.Links, tc.turn, tc.call.ID)
		}
	}
	if v, _ := attr(sa1, "gen_ai.usage.input_tokens"); v.AsInt64() != 1200 {
		t.Errorf("input tokens %v", v.AsInt64())
	}
	if v, _ := attr(sa1, "gen_ai.usage.output_tokens"); v.AsInt64() != 80 {
		t.Errorf("output tokens %v", v.AsInt64())
	}
	if sa1.Status != codes.Ok || sa2.Status != codes.Error || sa3.Status != codes.Unset || sa4.Status != codes.Error {
		t.Errorf("statuses %v %v %v %v", sa1.Status, sa2.Status, sa3.Status, sa4.Status)
	}
	if v, _ := attr(perm, "summit.permission.decision"); v.AsString() != "granted" {
		t.Errorf("permission decision %q", v.AsString())
	}
	if len(cv.Links) != 2 || cv.Links[0] != sa1.ID || cv.Links[1] != sa5.ID {
		t.Errorf("convergence links %v", cv.Links)
	}
	// Without Content no text of the recording is in the spans.
	for _, s := range spans {
		for _, k := range []string{"summit.task", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
			if _, ok := attr(s, k); ok {
				t.Errorf("%s has %s without Content", s.Name, k)
			}
		}
	}
	// With Content the tool calls carry what the recording holds, as recorded.
	withText := convert(evs, Options{Content: true})
	if v, _ := attr(bySeq(withText, kindTool, 6), "gen_ai.tool.call.result"); v.AsString() != "package a" {
		t.Errorf("result %q", v.AsString())
	}
	if v, _ := attr(bySeq(withText, kindTool, 6), "gen_ai.tool.call.arguments"); v.AsString() != `{"path":"a.go"}` {
		t.Errorf("arguments %q", v.AsString())
	}
	if v, _ := attr(bySeq(withText, kindSubagent, 2), "summit.task"); v.AsString() != "fix it" {
		t.Errorf("task %q", v.AsString())
	}
}

// TestConverterDeterministic: the same events give the same spans, ids and all; the ids
// depend on the session id and seq only.
func TestConverterDeterministic(t *testing.T) {
	a, b := convert(richSession(), Options{}), convert(richSession(), Options{})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two conversions differ")
	}
	seen := map[trace.SpanID]bool{}
	for _, s := range a {
		if seen[s.ID] || !s.ID.IsValid() {
			t.Errorf("span id %s repeated or invalid", s.ID)
		}
		seen[s.ID] = true
	}
	if TraceID("s-A") == TraceID("s-B") || SpanID("s-A", 1, kindTool) == SpanID("s-A", 2, kindTool) ||
		SpanID("s-A", 1, kindTool) == SpanID("s-B", 1, kindTool) || SpanID("s-A", 1, kindTool) == SpanID("s-A", 1, kindChat) {
		t.Error("ids collide")
	}
}

// TestConverterUnfinished: a recording cut short (a crash) ends what is open at its last
// event's time, marked unfinished, children before the root, which comes last.
func TestConverterUnfinished(t *testing.T) {
	evs := richSession()[:9] // up to the permission request, inside tool call c2
	spans := convert(evs, Options{})
	last := evs[len(evs)-1].TS
	if len(spans) != 6 || spans[len(spans)-1].Name != "summit session" {
		t.Fatalf("%d spans, last %q", len(spans), spans[len(spans)-1].Name)
	}
	for _, s := range spans[2:] { // call 1 and read_file ended normally
		if v, _ := attr(s, "summit.unfinished"); !v.AsBool() || s.Status != codes.Error || !s.End.Equal(last) {
			t.Errorf("%s: unfinished %v status %v end %v", s.Name, v.AsBool(), s.Status, s.End)
		}
	}
	c := NewConverter(Options{})
	for _, e := range richSession() {
		c.Observe(e)
	}
	if got := c.Finish(); len(got) != 0 {
		t.Errorf("a session that ended leaves %d spans open", len(got))
	}
	// Events after the end, repeated or from another session are not folded.
	e := evs[4]
	if c.Observe(e) != nil || c.Ignored != 1 {
		t.Errorf("ignored %d", c.Ignored)
	}
}

// A move to a fallback model mid-run (a second ModelRouted naming the model it leaves) is a
// model_switched event on the subagent's span, and the model calls after it name the new model.
func TestConverterModelRoutedMidRun(t *testing.T) {
	s := newScript()
	s.at(0, "", session.SessionStarted{Schema: 1, Provider: "gemini"})
	s.at(ms, "sa-1", session.SubagentSpawned{AgentType: "builder", AgentName: "builder"})                   // 2
	s.at(ms, "sa-1", session.ModelRouted{Provider: "gemini", Model: "gemini-3-pro-preview", Why: "config"}) // 3
	s.at(ms, "sa-1", session.SubagentActive{InitialState: "running"})                                       // 4
	s.at(ms, "sa-1", session.ModelRouted{Provider: "gemini", Model: "gemini-2.5-pro",
		Why: "overloaded (HTTP 503) after 3 attempts", From: "gemini/gemini-3-pro-preview"}) // 5
	s.at(100*ms, "sa-1", tok("answer"))                        // 6
	s.at(ms, "sa-1", session.SubagentStop{Outcome: "success"}) // 7
	s.at(ms, "", session.SessionEnded{Reason: "quit"})
	spans := convert(s.evs, Options{})
	sa := bySeq(spans, kindSubagent, 2)
	var got *Event
	for i := range sa.Events {
		if sa.Events[i].Name == "model_switched" {
			got = &sa.Events[i]
		}
	}
	if got == nil {
		t.Fatalf("no model_switched event on the subagent span: %+v", sa.Events)
	}
	want := map[string]string{"from": "gemini/gemini-3-pro-preview", "to": "gemini/gemini-2.5-pro", "reason": "overloaded (HTTP 503) after 3 attempts"}
	for _, kv := range got.Attrs {
		if w, ok := want[string(kv.Key)]; ok && kv.Value.AsString() != w {
			t.Errorf("model_switched %s = %q, want %q", kv.Key, kv.Value.AsString(), w)
		}
		delete(want, string(kv.Key))
	}
	if len(want) != 0 || !got.Time.Equal(s.evs[4].TS) {
		t.Errorf("model_switched lacks %v or has time %v, want %v", want, got.Time, s.evs[4].TS)
	}
	for _, sp := range spans {
		if sp.Name == "chat gemini-3-pro-preview" {
			t.Errorf("a model call after the move names the model it left: %+v", sp)
		}
	}
	// A first route (no From) is not a switch: exactly one event.
	n := 0
	for _, e := range sa.Events {
		if e.Name == "model_switched" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d model_switched events, want 1", n)
	}
}
