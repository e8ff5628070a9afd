// Command gen writes a generated session recording of about N MB for measuring the readers
// (inspect, replay --print, the decoders). It is a main package under testdata, so `go test
// ./...` and `go build ./...` skip it; run it with
//
//	go run ./testdata/perf/gen.go -mb 512 -o /tmp/rec-512.jsonl
//
// The mix mirrors what `summit run` records (see a recording of `summit run --script` on the
// demo tapes): subagents are delegated by /delegate commands and run a few at a time; each
// streams its thinking and its answer as short deltas of a word or a few (the bulk of every
// recording), calls tools whose results are files and command output (with newlines, tabs,
// quotes and <, >, & that the encoder writes as \u escapes), asks for permission before shell
// commands (granted or denied), retries an occasional provider error, and stops with tokens,
// a cost and a capsule; builders work in their own worktree and report their changes with a
// diff. A monitor handoff and a convergence with a conflict come near the end. The output is
// deterministic for a given -seed and -mb, and every line is what the Recorder writes
// (record.AppendLine), so it is a valid recording that folds without error.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

func main() {
	mb := flag.Float64("mb", 128, "approximate size in MB (10^6 bytes)")
	out := flag.String("o", "", "output file (default stdout)")
	subagents := flag.Int("subagents", 200, "number of subagents")
	parallel := flag.Int("parallel", 8, "subagents running at once")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	g := newGen(bw, *seed, int64(*mb*1e6), *subagents, *parallel)
	g.run()
	if err := bw.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "gen: %d events, %d bytes, %d subagents\n", g.seq, g.size, *subagents)
}

const sessionID = "s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA"

type gen struct {
	w         *bufio.Writer
	rng       *rand.Rand
	ts        time.Time
	seq       uint64
	size      int64
	target    int64
	subagents int
	parallel  int
	line      []byte
	perm      int
	calls     int
}

func newGen(w *bufio.Writer, seed uint64, target int64, subagents, parallel int) *gen {
	return &gen{w: w, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), ts: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		target: target, subagents: subagents, parallel: parallel}
}

func (g *gen) emit(sub string, d session.Data) {
	g.seq++
	g.ts = g.ts.Add(time.Duration(200+g.rng.IntN(40000)) * time.Microsecond)
	e := session.New(sub, d)
	e.Seq, e.TS, e.SessionID = g.seq, g.ts, sessionID
	var err error
	g.line, err = record.AppendLine(g.line[:0], e)
	if err != nil {
		panic(err)
	}
	g.size += int64(len(g.line))
	g.w.Write(g.line)
}

var agentTypes = []struct {
	name, mode string
	tools      []string
}{
	{"explore", "plan", []string{"read_file", "glob", "search_file_content"}},
	{"builder", "acceptEdits", []string{"read_file", "glob", "search_file_content", "write_file", "replace", "run_shell_command"}},
	{"reviewer", "plan", []string{"read_file", "glob", "search_file_content"}},
	{"analyzer", "plan", []string{"read_file", "search_file_content", "run_shell_command"}},
	{"tester", "acceptEdits", []string{"read_file", "run_shell_command"}},
}

var tasks = []string{"map the checkout flow", "fix rounding in cart totals", "review the payment handler",
	"find why the cart test is flaky", "add a test for refunds", "explain the order state machine",
	"rename Money to Amount across the package", "check the error paths of the charge call"}

var words = strings.Fields(`I'll start by reading the checkout handlers and the cart totals . The
function Total rounds each line before summing , so large carts drift by a cent or more . Let me
check the tests first , then the callers of round ( ) in pay.go and refund.go . This looks like the
place where the money is converted to cents ; the conversion truncates instead of rounding , which
explains the off-by-one in the failing case . I will change it to sum first and round once , then
run go test ./... to confirm nothing else depends on the old behaviour . Done : totals now round
once after summing , and the new test covers a cart of 10 000 lines with prices ending in .005 .`)

var thoughts = strings.Fields(`Sum first , then round once . The tests compare against hand-computed
totals so they should still pass ; the flaky one depends on map order in the discount rules , not
on rounding . Check whether refunds reuse Total — if they do , the fix covers both paths .`)

const goFile = "package checkout\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\n// Total sums the lines of a cart and rounds once.\nfunc Total(lines []Line) (Money, error) {\n\tvar t Money\n\tfor i, l := range lines {\n\t\tif l.Qty <= 0 && l.Price != 0 {\n\t\t\treturn 0, fmt.Errorf(\"line %d: quantity %d <= 0\", i, l.Qty)\n\t\t}\n\t\tt += l.Price * Money(l.Qty)\n\t}\n\tif t < 0 || t > maxTotal {\n\t\treturn 0, errors.New(\"total out of range: \\\"negative\\\" or > max\")\n\t}\n\treturn round(t), nil\n}\n\nfunc round(m Money) Money { return (m + 50) / 100 * 100 }\n"

const testOut = "=== RUN   TestTotal\n--- PASS: TestTotal (0.00s)\n=== RUN   TestTotalLarge\n--- PASS: TestTotalLarge (0.02s)\n=== RUN   TestRefund\n    refund_test.go:41: got 1999, want 2000 (rounding & truncation differ)\n--- FAIL: TestRefund (0.00s)\nFAIL\nexit status 1\nFAIL\tshop/internal/checkout\t0.031s\n"

const diff = "--- a/internal/checkout/cart.go\n+++ b/internal/checkout/cart.go\n@@ -12,9 +12,10 @@ func Total(lines []Line) (Money, error) {\n \tvar t Money\n \tfor i, l := range lines {\n-\t\tt += round(l.Price * Money(l.Qty))\n+\t\tt += l.Price * Money(l.Qty)\n \t}\n-\treturn t, nil\n+\treturn round(t), nil\n }\n"

// sa is one running subagent: its remaining byte budget and where it is in its turn.
type sa struct {
	id, typ  string
	idx      int
	budget   int64
	phase    int // 0 thinking, 1 answer, 2 tool
	left     int // deltas left in the phase
	calls    int
	isolated bool
}

func (g *gen) run() {
	g.emit("", session.SessionStarted{Schema: 1, ProgramVersion: "0.1.0", Workspace: "/home/dev/shop", PermissionMode: "acceptEdits",
		AllowedTools: []string{"read_file", "glob", "search_file_content", "write_file", "replace", "run_shell_command"},
		Provider:     "openai", AgentsDigest: "sha256:9f2c41d07be3a1c5", Config: map[string]any{"model": "default", "parallel": float64(g.parallel)}})
	// Two of the subagents are the handoff's and the convergence's at the end (see tail).
	main := max(g.subagents-2, 1)
	per := max(g.target/int64(main), 4096)
	var running []*sa
	next := 0
	for len(running) > 0 || next < main {
		for len(running) < g.parallel && next < main {
			next++
			running = append(running, g.spawn(next, per))
		}
		i := g.rng.IntN(len(running))
		s := running[i]
		start := g.size
		g.step(s)
		s.budget -= g.size - start
		if s.budget <= 0 {
			g.stop(s)
			running = append(running[:i], running[i+1:]...)
		}
	}
	g.tail(main)
	g.emit("", session.SessionEnded{Reason: "script_end", DurationMS: g.ts.Sub(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)).Milliseconds()})
}

func (g *gen) spawn(n int, budget int64) *sa {
	at := agentTypes[g.rng.IntN(len(agentTypes))]
	task := tasks[g.rng.IntN(len(tasks))]
	id := fmt.Sprintf("sa-%d", n)
	g.emit("", session.CommandIssued{Line: fmt.Sprintf("/delegate %q --agent-type %s", task, at.name), Command: "delegate",
		Args: map[string]any{"agent_type": at.name, "inherit_context": true, "task": task, "timeout": float64(300)}})
	g.emit(id, session.SubagentSpawned{AgentType: at.name, AgentName: at.name, ParentSessionID: sessionID, ParentSessionRef: sessionID,
		PermissionMode: at.mode, Tools: at.tools, TaskDescription: task, TimeoutS: 300, InheritContext: true, SubagentSessionID: sessionID + "/" + id})
	s := &sa{id: id, typ: at.name, idx: n, budget: budget}
	if at.name == "builder" {
		s.isolated = true
		g.emit(id, session.SubagentIsolated{Base: "base-1", BaseCommit: "035d9a14272ce4a46ad5e80a614c47e60079ac8d",
			Worktree: "/home/dev/.cache/summit/worktrees/" + sessionID + "/" + id})
	}
	g.emit(id, session.ModelRouted{Provider: "openai", Model: "gpt-5-mini", Why: "config route for " + at.name, Fallbacks: []string{"anthropic/claude-sonnet-4-5"}})
	g.emit(id, session.SubagentActive{InitialState: "running"})
	g.emit(id, session.TranscriptEvent{EventType: session.TranscriptStart, Text: task})
	s.phase, s.left = 0, 3+g.rng.IntN(25)
	return s
}

func (g *gen) phrase(from []string) string {
	var b strings.Builder
	for range 1 + g.rng.IntN(3) {
		if b.Len() > 0 || g.rng.IntN(3) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(from[g.rng.IntN(len(from))])
	}
	return b.String()
}

// step emits the subagent's next event: a thinking or answer delta, or a tool call with its
// result (and a permission request before a shell command).
func (g *gen) step(s *sa) {
	switch s.phase {
	case 0:
		g.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptThinking, Text: g.phrase(thoughts)})
		if s.left--; s.left <= 0 {
			s.phase, s.left = 1, 10+g.rng.IntN(80)
		}
	case 1:
		g.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptToken, Text: g.phrase(words)})
		if s.left--; s.left <= 0 {
			s.phase = 2
		}
	default:
		g.tool(s)
		switch k := g.rng.IntN(10); {
		case k < 3:
			s.phase, s.left = 0, 3+g.rng.IntN(25)
		case k < 9:
			s.phase, s.left = 1, 10+g.rng.IntN(80)
		}
	}
}

func (g *gen) tool(s *sa) {
	g.calls++
	s.calls++
	call := fmt.Sprintf("call-%d-%d", s.idx, s.calls)
	var tool, result string
	var args map[string]any
	switch k := g.rng.IntN(10); {
	case k < 4:
		tool, args = "read_file", map[string]any{"path": "internal/checkout/cart.go"}
		result = strings.Repeat(goFile, 1+g.rng.IntN(6))
	case k < 6:
		tool, args = "search_file_content", map[string]any{"pattern": "round\\(", "path": "internal"}
		result = "internal/checkout/cart.go:22:\treturn round(t), nil\ninternal/checkout/refund.go:9:\treturn round(r.Amount)\n"
	case k < 7:
		tool, args = "glob", map[string]any{"pattern": "internal/**/*.go"}
		result = "internal/checkout/cart.go\ninternal/checkout/pay.go\ninternal/checkout/refund.go\ninternal/checkout/cart_test.go"
	case k < 9 || s.typ == "explore" || s.typ == "reviewer":
		tool, args = "replace", map[string]any{"path": "internal/checkout/cart.go", "old": "t += round(l.Price * Money(l.Qty))", "new": "t += l.Price * Money(l.Qty)"}
		result = "replaced 1 occurrence in internal/checkout/cart.go"
	default:
		tool, args = "run_shell_command", map[string]any{"command": "go test ./internal/checkout/..."}
		g.perm++
		req := fmt.Sprintf("pr-%d", g.perm)
		g.emit(s.id, session.PermissionRequested{RequestID: req, Tool: tool, Args: args, Reason: "run_shell_command asks each time in " + "acceptEdits"})
		if g.rng.IntN(5) == 0 {
			g.emit(s.id, session.PermissionDenied{RequestID: req, Reason: "not now", By: "user"})
			g.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptPolicyDenied, Tool: tool, Reason: "denied by the user: not now"})
			return
		}
		g.emit(s.id, session.PermissionGranted{RequestID: req, Scope: "once", By: "user"})
		result = testOut
	}
	g.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: call, Tool: tool, Args: args})
	if g.rng.IntN(200) == 0 {
		retry := true
		g.emit(s.id, session.SubagentError{Error: "openai: 529 overloaded", Retryable: true, Attempt: 1, WillRetry: &retry, Context: "provider openai, turn 3"})
	}
	g.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: call, Tool: tool, Result: result, IsError: tool == "run_shell_command" && g.rng.IntN(3) == 0})
}

func (g *gen) stop(s *sa) {
	g.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "Totals now round once, after summing. Tests pass."})
	if s.isolated {
		g.emit(s.id, session.SubagentChanges{Base: "base-1", BaseCommit: "035d9a14272ce4a46ad5e80a614c47e60079ac8d",
			ResultCommit: "d4121748eec3d2f70334a4ba2973328087ca11c7", Added: 2, Removed: 2,
			Files: []session.FileChange{{Path: "internal/checkout/cart.go", Kind: session.ChangeModified, Added: 2, Removed: 2, Diff: diff}}})
	}
	outcome := session.OutcomeSuccess
	switch g.rng.IntN(20) {
	case 0:
		outcome = session.OutcomeFailure
		g.emit(s.id, session.SubagentError{Error: "openai: context length exceeded", Attempt: 1, Context: "provider openai, turn 9"})
	case 1:
		outcome = session.OutcomeTimeout
		g.emit(s.id, session.SubagentTimeout{TimeoutS: 300})
	}
	conf := 0.7 + float64(g.rng.IntN(30))/100
	cost := float64(g.rng.IntN(5000)) / 10000
	g.emit(s.id, session.SubagentStop{Outcome: outcome, ToolInvocationCount: s.calls, ArtifactPaths: []string{}, DurationMS: int64(20000 + g.rng.IntN(200000)),
		Tokens: session.Tokens{Input: int64(3000 + g.rng.IntN(90000)), Output: int64(200 + g.rng.IntN(9000))}, CostUSD: &cost,
		Capsule: &protocols.Capsule{AgentName: s.typ, Summary: "Totals round once after summing; refunds share the path.", Confidence: &conf,
			Findings: []protocols.Finding{{Severity: "medium", Summary: "Total rounded each line, not the sum", FileRefs: []string{"internal/checkout/cart.go:13"}}}}})
}

// tail adds what a session ends with now and then: a monitor handoff to a new subagent and a
// convergence of two builders with one conflict, reviewed and resolved.
func (g *gen) tail(n int) {
	ids := []string{}
	for _, k := range []int{1, 2} {
		id := fmt.Sprintf("sa-%d", n+k)
		ids = append(ids, id)
		s := g.spawn(n+k, 0)
		if k == 1 {
			g.emit("", session.CommandIssued{Line: "/handoff " + id + " --mode monitor", Command: "handoff", Args: map[string]any{"id": id, "mode": "monitor"}})
			g.emit(id, session.HandoffInitiated{ParentSessionID: sessionID, HandoffMode: session.HandoffMonitor, TimeoutS: 300, OnFailure: "escalate"})
		}
		for range 30 {
			g.step(s)
		}
		g.stop(s)
		if k == 1 {
			g.emit(id, session.HandoffComplete{Outcome: "success"})
			g.emit(id, session.HandoffResolved{Outcome: "success", Action: "none", Artifacts: []string{}})
		}
	}
	g.emit("", session.CommandIssued{Line: "/converge " + strings.Join(ids, " ") + " --strategy merge", Command: "converge", Args: map[string]any{"ids": ids, "strategy": "merge"}})
	g.emit("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: ids, Strategy: "merge", ConflictResolution: "manual", OutputFormat: "unified_diff"})
	g.emit("", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk", File: "internal/checkout/cart.go", Lines: &session.LineRange{Start: 12, End: 18},
		Sides: []session.ConflictSide{{SubagentID: ids[0], Value: "t += l.Price * Money(l.Qty)"}, {SubagentID: ids[1], Value: "t = t.Add(l.Price.Mul(l.Qty))"}}, Choices: []string{ids[0], ids[1], "none"}})
	g.emit("", session.ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1"}})
	g.emit("", session.ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Method: "manual", Choice: ids[0], Overridden: []string{ids[1]}})
	g.emit("", session.ConvergenceComplete{ConvergenceID: "cv-1", Outcome: "success", ConflictCount: 1, ResolutionCount: 1, OutputSize: len(diff)})
	g.emit("", session.ConvergedResult{ConvergenceID: "cv-1", Format: "unified_diff", Output: diff})
}
