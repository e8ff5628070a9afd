package recordgen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// Generate writes a well-formed recording of about size bytes: up to 8 subagents at a
// time, each streaming thinking and token deltas (a few words each), tool calls with results
// of 0.2–6 KB, an occasional permission request, a message, then a stop; new subagents
// spawn as old ones stop. The replay benchmarks (ui) and testdata/perf/seekbench use it.
func Generate(w io.Writer, size int64, seed uint64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	g := &perfGen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b9)), ts: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	var line []byte
	var written int64
	emit := func(sub string, d session.Data) error {
		g.seq++
		g.ts = g.ts.Add(time.Duration(1+g.rng.IntN(20000)) * time.Microsecond)
		var err error
		line, err = record.AppendLine(line[:0], session.Event{V: 1, Seq: g.seq, TS: g.ts, SessionID: "s-perf", Type: d.Type(), SubagentID: sub, Data: d})
		if err != nil {
			return err
		}
		written += int64(len(line))
		_, err = bw.Write(line)
		return err
	}
	return g.run(emit, func() bool { return written >= size }, bw.Flush)
}

type perfGen struct {
	rng *rand.Rand
	seq uint64
	ts  time.Time
}

type perfSub struct {
	id     string
	rounds int
	step   int // within a round
	left   int // deltas left in the current run
	call   string
	pr     string
}

var perfWords = strings.Fields("the cart total rounds once after summing every line so the tests pass and a " +
	"refund never drifts by a cent when taxes apply to discounted items in the checkout package func return if err nil")

func (g *perfGen) words(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(perfWords[g.rng.IntN(len(perfWords))])
		b.WriteByte(' ')
	}
	return b.String()
}

func (g *perfGen) code(n int) string {
	var b strings.Builder
	for b.Len() < n {
		fmt.Fprintf(&b, "func f%d(x int) int {\n\treturn x * %d // %s\n}\n", g.rng.IntN(1000), g.rng.IntN(100), g.words(3))
	}
	return b.String()
}

func (g *perfGen) run(emit func(string, session.Data) error, full func() bool, flush func() error) error {
	if err := emit("", session.SessionStarted{Schema: 1, ProgramVersion: "perf", Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script", AllowedTools: []string{}}); err != nil {
		return err
	}
	var subs []*perfSub
	next, prn := 0, 0
	for !full() {
		for len(subs) < 8 {
			next++
			s := &perfSub{id: "sa-" + strconv.Itoa(next), rounds: 5 + g.rng.IntN(40)}
			subs = append(subs, s)
			task := "fix " + g.words(6)
			for _, d := range []session.Data{
				session.SubagentSpawned{AgentType: "builder", ParentSessionID: "s-perf", ParentSessionRef: "s-perf", PermissionMode: "acceptEdits", Tools: []string{"read_file", "replace"}, TaskDescription: task, TimeoutS: 300, InheritContext: true},
				session.TranscriptEvent{EventType: session.TranscriptStart, Text: task},
				session.SubagentActive{InitialState: "running"},
			} {
				if err := emit(s.id, d); err != nil {
					return err
				}
			}
		}
		k := g.rng.IntN(len(subs))
		s := subs[k]
		var d session.Data
		switch s.step {
		case 0: // thinking run
			if s.left == 0 {
				s.left = 3 + g.rng.IntN(20)
			}
			d = session.TranscriptEvent{EventType: session.TranscriptThinking, Text: g.words(2 + g.rng.IntN(5))}
			if s.left--; s.left == 0 {
				s.step++
			}
		case 1: // token run
			if s.left == 0 {
				s.left = 10 + g.rng.IntN(200)
			}
			d = session.TranscriptEvent{EventType: session.TranscriptToken, Text: g.words(1 + g.rng.IntN(4))}
			if s.left--; s.left == 0 {
				s.step++
			}
		case 2:
			s.call = "call-" + strconv.FormatUint(g.seq, 10)
			d = session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: s.call, Tool: "read_file", Args: map[string]any{"path": "internal/checkout/f" + strconv.Itoa(g.rng.IntN(100)) + ".go"}}
			s.step++
			if g.rng.IntN(20) == 0 {
				prn++
				s.pr = "pr-" + strconv.Itoa(prn)
				s.step = 10
			}
		case 10:
			d = session.PermissionRequested{RequestID: s.pr, Tool: "run_shell_command", Args: map[string]any{"command": "go test ./..."}, Reason: "run the tests"}
			s.step = 11
		case 11:
			d = session.PermissionGranted{RequestID: s.pr, Scope: "once", By: "user"}
			s.step = 3
		case 3:
			d = session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: s.call, Tool: "read_file", Result: g.code(200 + g.rng.IntN(6000))}
			s.step = 0
			if s.rounds--; s.rounds == 0 {
				s.step = 4
			}
		case 4:
			d = session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "Done: " + g.words(30)}
			s.step++
		default:
			d = session.SubagentStop{Outcome: session.OutcomeSuccess, ToolInvocationCount: 3, ArtifactPaths: []string{}, DurationMS: 8461, Tokens: session.Tokens{Input: 5210, Output: 640}}
			subs = append(subs[:k], subs[k+1:]...)
		}
		if err := emit(s.id, d); err != nil {
			return err
		}
	}
	for _, s := range subs {
		if err := emit(s.id, session.SubagentStop{Outcome: session.OutcomeCancelled, ArtifactPaths: []string{}}); err != nil {
			return err
		}
	}
	if err := emit("", session.SessionEnded{Reason: "done"}); err != nil {
		return err
	}
	return flush()
}

// Run drives emit with generated events (each a subagent id and a payload; the caller numbers
// and times them) until full says so, then calls flush: a live session's recorder can be fed
// the same mix Generate writes.
func Run(seed uint64, emit func(sub string, d session.Data) error, full func() bool, flush func() error) error {
	g := &perfGen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b9)), ts: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	return g.run(emit, full, flush)
}
