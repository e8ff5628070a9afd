package otelexport

import (
	"fmt"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// longSession is a session of n subagents, each streaming 40 token deltas and making 10 tool
// calls: about 60 events per subagent, the mix of a real recording (mostly deltas).
func longSession(n int) []session.Event {
	s := newScript()
	s.at(0, "", session.SessionStarted{Schema: 1, Provider: "script"})
	for i := 1; i <= n; i++ {
		sa := fmt.Sprintf("sa-%d", i)
		s.at(ms, sa, session.SubagentSpawned{AgentType: "builder", AgentName: "builder"})
		s.at(ms, sa, session.SubagentActive{InitialState: "running"})
		for turn := 0; turn < 10; turn++ {
			for k := 0; k < 4; k++ {
				s.at(ms, sa, tok("some words "))
			}
			id := fmt.Sprintf("call-%d-1", turn+1)
			s.at(ms, sa, call(id, "read_file"))
			s.at(ms, sa, result(id, "read_file", "package a"))
		}
		s.at(100*time.Millisecond, sa, session.SubagentStop{Outcome: "success", Tokens: session.Tokens{Input: 100, Output: 10}})
	}
	s.at(ms, "", session.SessionEnded{Reason: "quit"})
	return s.evs
}

// BenchmarkConverterObserve: what Live adds to each event on the session's path, per event.
// The reference is session.Apply on the same events, the fold the session runs on each
// event anyway.
func BenchmarkConverterObserve(b *testing.B) {
	evs := longSession(100)
	b.Run("observe", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			c := NewConverter(Options{})
			for _, e := range evs {
				c.Observe(e)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
	})
	b.Run("apply-reference", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			st := &session.State{}
			for _, e := range evs {
				if err := session.Apply(st, e); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
	})
}
