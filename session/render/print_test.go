package render

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// oddTexts are pieces of model text that exercise Sanitize and the indentation: escapes,
// bidi controls, invalid UTF-8, multi-byte runes, runs of newlines.
var oddTexts = []string{
	"plain words ", "line\nbreak", "\n\n", "tail\n", "\x1b[2J", "\u202e reversed", "zero\u200bwidth",
	"\xff\xfe invalid", "é", "中文", "😀", "\r\n", "\t", "C1 \u0085", "\x7f", "a \\x1b kept", "\xe2\x80", "\xae",
}

func oddText(rng *rand.Rand, max int) string {
	var b strings.Builder
	for n := rng.IntN(max); b.Len() < n; {
		b.WriteString(oddTexts[rng.IntN(len(oddTexts))])
	}
	return b.String()
}

// genSession is a random valid session: subagents spawned and stopped at random, streaming
// odd text in tokens and thinking, tool calls and results, policy denials, notes to a
// subagent, monitor handoffs (whose items the log mirrors), errors and permissions.
func genSession(seed uint64, n int) []session.Event {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := sessiontest.NewBuilder()
	b.Add("", session.SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script"})
	var live []string
	monitored := map[string]bool{}
	next, perm := 0, 0
	for range n {
		if len(live) == 0 || len(live) < 6 && rng.IntN(40) == 0 {
			next++
			id := fmt.Sprintf("sa-%d", next)
			b.Add(id, session.SubagentSpawned{AgentType: "builder", AgentName: "builder", TaskDescription: oddText(rng, 30), Tools: []string{"read_file"}, TimeoutS: 60})
			b.Add(id, session.SubagentActive{InitialState: "running"})
			live = append(live, id)
			continue
		}
		k := rng.IntN(len(live))
		id := live[k]
		switch r := rng.IntN(100); {
		case r < 45:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptToken, Text: oddText(rng, 20)})
		case r < 60:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptThinking, Text: oddText(rng, 20)})
		case r < 66:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: fmt.Sprintf("c-%d", r), Tool: "read_file", Args: map[string]any{"path": oddText(rng, 10)}})
		case r < 72:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: fmt.Sprintf("c-%d", r), Tool: "read_file", Result: oddText(rng, 300), IsError: r%2 == 0})
		case r < 74:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptPolicyDenied, Tool: "write_file", Reason: oddText(rng, 40)})
		case r < 76:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: oddText(rng, 80), Tool: "plan", Args: map[string]any{"step": "one"}})
		case r < 78:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptError, Text: oddText(rng, 40)})
		case r < 80:
			b.Add(id, session.UserNote{Text: oddText(rng, 40)})
		case r < 82:
			if !monitored[id] {
				monitored[id] = true
				b.Add(id, session.HandoffInitiated{HandoffMode: session.HandoffMonitor, TimeoutS: 60, OnFailure: "escalate"})
			}
		case r < 84:
			perm++
			req := fmt.Sprintf("pr-%d", perm)
			b.Add(id, session.PermissionRequested{RequestID: req, Tool: "run_shell_command", Args: map[string]any{"command": oddText(rng, 20)}})
			b.Add(id, session.PermissionGranted{RequestID: req, Scope: "once", By: "user"})
		case r < 85:
			b.Add(id, session.SubagentError{Error: oddText(rng, 30), Retryable: true, Attempt: 1})
		case r < 88:
			b.Add(id, session.TranscriptEvent{EventType: session.TranscriptToken, Text: strings.Repeat("long run é中😀\n", 1+rng.IntN(3000))})
		default:
			if rng.IntN(4) == 0 {
				tok := session.Tokens{}
				if rng.IntN(2) == 0 {
					tok = session.Tokens{Input: 100, Output: int64(rng.IntN(5000))}
				}
				b.Add(id, session.SubagentStop{Outcome: session.OutcomeSuccess, DurationMS: 1000, Tokens: tok})
				if monitored[id] {
					b.Add(id, session.HandoffComplete{Outcome: session.OutcomeSuccess})
				}
				live = append(live[:k], live[k+1:]...)
			}
		}
	}
	b.Add("", session.SessionEnded{Reason: "quit"})
	return b.Evs
}

func fold(t *testing.T, evs []session.Event) *session.State {
	return sessiontest.Fold(t, evs)
}

// TestPrintMatchesOld: the streaming printer writes what the printer that built one string
// wrote, byte for byte, on the fixture session, the recordings and random sessions full of
// text Sanitize changes, with output buffers from tiny to the default.
func TestPrintMatchesOld(t *testing.T) {
	states := map[string]*session.State{"full session": fold(t, sessiontest.FullSession()), "empty": {}}
	for seed := range uint64(12) {
		states[fmt.Sprintf("random %d", seed)] = fold(t, genSession(seed, 800))
	}
	defer func(n int) { outputBuffer = n }(outputBuffer)
	for _, buf := range []int{1, 7, 300, 64 << 10} {
		outputBuffer = buf
		for name, st := range states {
			want := oldRender(st)
			if got := Render(st); got != want {
				t.Fatalf("%s, buffer %d:\n%s", name, buf, firstDiff(got, want))
			}
		}
	}
}

// TestSpoolPrintMatchesPrint: a state folded through a TextSpool (the text kept in memory, in
// the file, or both, read back in blocks of any size) prints what the state folded with its
// text prints.
func TestSpoolPrintMatchesPrint(t *testing.T) {
	defer func(n int64, m int) { spoolBlock, memBlock = n, m }(spoolBlock, memBlock)
	for seed := range uint64(5) {
		evs := genSession(100+seed, 1000)
		want := oldRender(fold(t, evs))
		for _, c := range []struct {
			memory   int
			block    int64
			memBlock int
		}{{1, 1, 3}, {1, 5, 64}, {100, 3, 7}, {5000, 64, 100}, {0, 256 << 10, 32 << 10}, {1 << 20, 100, 7}} {
			if c.block == 1 && seed > 0 {
				continue // slow: one read a byte
			}
			spoolBlock, memBlock = c.block, c.memBlock
			sp := NewTextSpool(c.memory)
			st := &session.State{}
			for _, e := range evs {
				if err := sp.Apply(st, e); err != nil {
					t.Fatal(err)
				}
			}
			if !st.CountsItems() || len(st.Log) != 0 {
				t.Fatalf("the state keeps its transcripts' items (%t) or %d log items", !st.CountsItems(), len(st.Log))
			}
			var out strings.Builder
			if err := sp.Print(&out, st); err != nil {
				t.Fatal(err)
			}
			if c.memory > 0 && c.memory < 100 && sp.file == nil {
				t.Errorf("memory %d: nothing went to the file", c.memory)
			}
			if err := sp.Close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != want {
				t.Fatalf("seed %d, %+v:\n%s", seed, c, firstDiff(got, want))
			}
		}
	}
}

// TestSpoolRejectsLikeApply: an event the fold refuses is refused through the spool with the
// same error, and leaves nothing behind.
func TestSpoolRejectsLikeApply(t *testing.T) {
	evs := genSession(3, 200)
	sp := NewTextSpool(0)
	st := &session.State{}
	for _, e := range evs[:50] {
		if err := sp.Apply(st, e); err != nil {
			t.Fatal(err)
		}
	}
	bad := session.New("sa-404", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "x"})
	bad.Seq, bad.SessionID, bad.TS = st.LastSeq+1, st.SessionID, st.LastTS
	want := session.Apply(st.Clone(), bad)
	if err := sp.Apply(st, bad); err == nil || err.Error() != want.Error() {
		t.Fatalf("got %v, want %v", err, want)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestPrintWriteError: a failing writer's error is returned.
func TestPrintWriteError(t *testing.T) {
	st := fold(t, genSession(4, 3000))
	if err := Print(&failWriter{n: 100 << 10}, st); err == nil || err.Error() != "disk full" {
		t.Fatalf("got %v", err)
	}
}

// TestSpoolFileRemoved: the spool's temporary file has no name while it is open (on Unix) and
// is gone after Close.
func TestSpoolFileRemoved(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	sp := NewTextSpool(1)
	st := &session.State{}
	for _, e := range genSession(5, 300) {
		if err := sp.Apply(st, e); err != nil {
			t.Fatal(err)
		}
	}
	if sp.file == nil {
		t.Fatal("no file")
	}
	sp.Close()
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	_ = os.Remove
}

func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("differs at byte %d of %d (want %d)\n got …%q\nwant …%q", i, len(got), len(want), got[lo:min(len(got), i+200)], want[lo:min(len(want), i+200)])
}

// TestPrintConsensusSides: replay --print shows a consensus side as the workbench's review
// does, why it stands apart, its result and its change, and a finding field by field; never
// the raw JSON value ({"finished_seq": 53, ...}), as it did.
func TestPrintConsensusSides(t *testing.T) {
	evs := sessiontest.FullSession()
	end := evs[len(evs)-1]
	b := sessiontest.NewBuilder()
	for _, e := range evs[:len(evs)-1] {
		b.Add(e.SubagentID, e.Data)
	}
	b.Add("", session.ConvergenceInitiated{ConvergenceID: "cv-2", SubagentIDs: []string{"sa-2", "sa-3"}, Strategy: "consensus",
		ConflictResolution: "manual", OutputFormat: "markdown"})
	b.Add("", session.ConflictDetected{ConvergenceID: "cv-2", ConflictID: "cf-2", Kind: "consensus", Sides: []session.ConflictSide{
		{SubagentID: "sa-2", Value: map[string]any{"result": "1 hunk: use the helper", "finished_seq": 53.0}, Reason: "the only one to change a.go",
			Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"},
		{SubagentID: "sa-3", Value: map[string]any{"result": "no change", "finished_seq": 60.0}, Reason: "changed nothing"}}})
	b.Add("", session.ConflictDetected{ConvergenceID: "cv-2", ConflictID: "cf-3", Kind: "finding", Sides: []session.ConflictSide{
		{SubagentID: "sa-2", Value: map[string]any{"severity": "high", "summary": "loses cents", "file_refs": []any{"cart.go:12"}}},
		{SubagentID: "sa-3", Value: map[string]any{"severity": "low", "summary": "loses cents", "file_refs": []any{"cart.go:12"}}}}})
	b.Add(end.SubagentID, end.Data)
	got := Render(fold(t, b.Evs))
	if strings.Contains(got, "finished_seq") {
		t.Errorf("a side is printed as raw JSON:\n%s", got)
	}
	for _, want := range []string{
		"    sa-2: why: the only one to change a.go\n      1 hunk: use the helper\n      --- a/a.go\n",
		"    sa-3: why: changed nothing\n      no change\n",
		"    sa-2: file refs: cart.go:12\n      severity: high\n      summary: loses cents\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the print lacks %q:\n%s", want, got)
		}
	}
}
