package otelexport

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/summit-dev/summit/session"
)

// FuzzConverter feeds event sequences in any order the alphabet allows (stops before spawns,
// results without calls, decisions without requests, a second SessionStarted, …): the
// converter never panics, every span it ends is ended once, after it starts, in the session's
// trace, under a parent it handed out (or, for a span whose parent is still open, one it hands
// out by Finish), and the root comes last.
func FuzzConverter(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
	f.Add([]byte{1, 3, 3, 5, 4, 4, 9, 8, 2, 2, 17})
	f.Add([]byte{14, 15, 16, 12, 13, 6, 7, 10, 11, 19, 1})
	f.Fuzz(func(t *testing.T, alphabet []byte) {
		if len(alphabet) > 400 {
			return
		}
		s := newScript()
		s.at(0, "", session.SessionStarted{Schema: 1})
		for _, b := range alphabet {
			sa := []string{"sa-1", "sa-2"}[b>>7]
			dt := time.Duration(b&0x30) * time.Millisecond
			switch b % 20 {
			case 0:
				s.at(dt, sa, session.SubagentSpawned{AgentName: "a"})
			case 1:
				s.at(dt, "sa-2", session.SubagentSpawned{AgentName: "child", ParentSubagentID: "sa-1"})
			case 2:
				s.at(dt, sa, tok("x"))
			case 3:
				s.at(dt, sa, call("c1", "read_file"))
			case 4:
				s.at(dt, sa, result("c1", "read_file", "r"))
			case 5:
				s.at(dt, sa, call("c2", "run_shell_command"))
			case 6:
				s.at(dt, sa, session.PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command"})
			case 7:
				s.at(dt, sa, session.PermissionGranted{RequestID: "pr-1"})
			case 8:
				s.at(dt, sa, session.SubagentStop{Outcome: "success"})
			case 9:
				s.at(dt, sa, session.SubagentError{Error: "e", Context: "provider p, turn 1"})
			case 10:
				s.at(dt, sa, session.HandoffInitiated{OnFailure: "retry"})
			case 11:
				s.at(dt, sa, session.HandoffResolved{Outcome: "failure", Action: "retry", RetrySubagentID: "sa-2"})
			case 12:
				s.at(dt, "", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-1", "sa-2"}})
			case 13:
				s.at(dt, "", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1"})
			case 14:
				s.at(dt, "", session.ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1"})
			case 15:
				s.at(dt, "", session.ConvergenceComplete{ConvergenceID: "cv-1", Outcome: "failure"})
			case 16:
				s.at(dt, sa, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "waiting for a user message"})
			case 17:
				s.at(dt, sa, session.TranscriptEvent{EventType: session.TranscriptPolicyDenied, Tool: "run_shell_command"})
			case 18:
				s.at(dt, sa, session.ModelRouted{Provider: "p", Model: "m"})
			case 19:
				s.at(dt, "", session.SessionEnded{Reason: "quit"})
			}
		}
		spans := convert(s.evs, Options{Content: true})
		if len(spans) == 0 || spans[len(spans)-1].Name != "summit session" || spans[len(spans)-1].Parent.IsValid() {
			t.Fatalf("the root is not last: %d spans", len(spans))
		}
		ids := map[trace.SpanID]bool{}
		for _, sp := range spans {
			if ids[sp.ID] {
				t.Fatalf("%s ended twice", sp.Name)
			}
			ids[sp.ID] = true
			if sp.End.Before(sp.Start) || sp.Trace != TraceID("s-TEST") || !sp.ID.IsValid() {
				t.Fatalf("%s: %v..%v trace %s", sp.Name, sp.Start, sp.End, sp.Trace)
			}
		}
		for _, sp := range spans {
			if sp.Parent.IsValid() && !ids[sp.Parent] {
				t.Fatalf("%s: parent %s was never exported", sp.Name, sp.Parent)
			}
		}
	})
}
