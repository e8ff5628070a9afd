package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

const tapeFile = `tapes:
  - name: todo
    match: {agent: analyzer, task: "(?i)todo"}
    rate: 10
    steps:
      - think: "look first"
      - say: "Scanning for markers."
      - tool: search_file_content
        args: {pattern: TODO}
      - tool: read_file
        raw_args: '{"path": '
      - sleep: 2s
      - fail: overloaded
        transient: true
        times: 1
      - say: done
      - capsule: {summary: "2 markers", confidence: 0.5}
  - name: any
    steps:
      - ask: "Which one?"
      - text: "plain final"
`

// collect plays one turn and returns its deltas, the time slept and the error that ended it.
func collect(t *testing.T, p Provider, req Request) ([]Delta, time.Duration, error) {
	t.Helper()
	st, err := p.Stream(context.Background(), req)
	if err != nil {
		return nil, 0, err
	}
	defer st.Close()
	var out []Delta
	for {
		d, err := st.Next()
		if err == io.EOF {
			return out, 0, nil
		}
		if err != nil {
			return out, 0, err
		}
		out = append(out, d)
	}
}

func TestScriptTurns(t *testing.T) {
	tapes, err := ParseTapes([]byte(tapeFile), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var slept time.Duration
	// A fake clock: the sleeps advance it, nothing else does.
	var now time.Time
	p := NewScript(ScriptConfig{Tapes: tapes, Sleep: func(_ context.Context, d time.Duration) error { slept += d; now = now.Add(d); return nil },
		Now: func() time.Time { return now }})
	req := Request{Agent: "analyzer", AgentType: "analyzer", Task: "find TODO markers", Attempt: 1}

	// Turn 1: thinking and text streamed word by word at 10 words/s, then both tool calls.
	ds, _, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	var text, think strings.Builder
	var calls []ToolCall
	stop := ""
	for _, d := range ds {
		switch d.Kind {
		case DeltaText:
			text.WriteString(d.Text)
		case DeltaThinking:
			think.WriteString(d.Text)
		case DeltaToolCall:
			calls = append(calls, d.ToolCall)
		case DeltaStop:
			stop = d.StopReason
		}
	}
	if text.String() != "Scanning for markers." || think.String() != "look first" {
		t.Errorf("text %q thinking %q", text.String(), think.String())
	}
	if len(calls) != 2 || calls[0].Name != "search_file_content" || calls[0].Args != `{"pattern":"TODO"}` || calls[1].Args != `{"path": ` {
		t.Errorf("calls = %+v", calls)
	}
	if calls[0].ID == calls[1].ID {
		t.Errorf("call ids repeat: %q", calls[0].ID)
	}
	if stop != StopToolUse {
		t.Errorf("stop = %q", stop)
	}
	if slept != 500*time.Millisecond { // 5 words at 10/s
		t.Errorf("slept %v, want 500ms", slept)
	}

	// Turn 2, attempt 1: sleeps 2s, then the transient failure.
	slept = 0
	req.Turn = 1
	_, _, err = collect(t, p, req)
	if !IsTransient(err) || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("attempt 1: %v", err)
	}
	if slept != 2*time.Second {
		t.Errorf("slept %v", slept)
	}
	// Attempt 2 passes the failure (times: 1) and ends with the capsule as fenced JSON.
	req.Attempt = 2
	ds, _, err = collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	for _, d := range ds {
		if d.Kind == DeltaText {
			text.WriteString(d.Text)
		}
		if d.Kind == DeltaStop && d.StopReason != StopEnd {
			t.Errorf("final stop %q", d.StopReason)
		}
	}
	if !strings.Contains(text.String(), "```json") || !strings.Contains(text.String(), `"summary": "2 markers"`) {
		t.Errorf("final text %q", text.String())
	}
	// There is no third turn.
	req.Turn = 2
	if _, _, err = collect(t, p, req); err == nil || IsTransient(err) || !strings.Contains(err.Error(), "has 2 turns") {
		t.Errorf("turn 3: %v", err)
	}
}

func TestScriptAskAndMatch(t *testing.T) {
	tapes, err := ParseTapes([]byte(tapeFile), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := NewScript(ScriptConfig{Tapes: tapes})
	// A builder does not match the analyzer tape; the catch-all asks, then ends plainly.
	ds, _, err := collect(t, p, Request{Agent: "builder", AgentType: "builder", Task: "x", Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if last := ds[len(ds)-1]; last.Kind != DeltaStop || last.StopReason != StopAwaitUser {
		t.Errorf("ask ends with %+v", last)
	}
	ds, _, _ = collect(t, p, Request{Agent: "builder", Task: "x", Turn: 1, Attempt: 1})
	if ds[0].Text != "plain final" {
		t.Errorf("turn 2 = %+v", ds)
	}

	only := NewScript(ScriptConfig{Tapes: tapes[:1]})
	_, err = only.Stream(context.Background(), Request{Agent: "builder", AgentType: "builder", Task: "add a flag"})
	var pe *Error
	if !errors.As(err, &pe) || pe.Transient || !strings.Contains(err.Error(), `agent "builder"`) ||
		!strings.Contains(err.Error(), `"add a flag"`) || !strings.Contains(err.Error(), "--provider") {
		t.Errorf("no match: %v", err)
	}
}

func TestScriptCancel(t *testing.T) {
	tapes, _ := ParseTapes([]byte(tapeFile), "t.yaml")
	p := NewScript(ScriptConfig{Tapes: tapes}) // real timers
	ctx, cancel := context.WithCancel(context.Background())
	st, err := p.Stream(ctx, Request{Agent: "analyzer", Task: "todo", Turn: 1, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err = st.Next() // the 2 s sleep, cut short
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("err %v after %v", err, time.Since(start))
	}
}

func TestParseTapesErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"not a list", "tapes: 3\n", "t.yaml:1: a tape file is a mapping with a tapes: list"},
		{"unknown key", "tapes:\n  - name: a\n    mtach: {}\n    steps: [{say: hi}]\n", `t.yaml:3: unknown key "mtach"`},
		{"no name", "tapes:\n  - steps: [{say: hi}]\n", "t.yaml:2: tape has no name"},
		{"no steps", "tapes:\n  - name: a\n", "t.yaml:2: tape a has no steps"},
		{"bad regexp", "tapes:\n  - name: a\n    match: {task: \"(\"}\n    steps: [{say: hi}]\n", "t.yaml:3: match.task: error parsing regexp"},
		{"two actions", "tapes:\n  - name: a\n    steps:\n      - {say: hi, think: x}\n", "t.yaml:4: a step has exactly one of"},
		{"bad sleep", "tapes:\n  - name: a\n    steps:\n      - sleep: soon\n", `t.yaml:4: sleep "soon" is not a duration`},
		{"args without tool", "tapes:\n  - name: a\n    steps:\n      - {say: hi, args: {}}\n", "t.yaml:4: args belongs to a tool step"},
		{"bad step key", "tapes:\n  - name: a\n    steps:\n      - {sya: hi}\n", `t.yaml:4: unknown key "sya"`},
		{"negative rate", "tapes:\n  - name: a\n    rate: -1\n    steps: [{say: hi}]\n", "t.yaml:3: rate is words per second"},
		{"yaml syntax", "tapes:\n  - name: [\n", "t.yaml:3: did not find expected node content"},
	}
	for _, c := range cases {
		_, err := ParseTapes([]byte(c.src), "t.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestDemoTapesLoad(t *testing.T) {
	tapes, err := DemoTapes()
	if err != nil {
		t.Fatal(err)
	}
	p := NewScript(ScriptConfig{Tapes: tapes}).(*script)
	for _, agent := range []string{"explore", "builder", "tester", "analyzer", "retriever"} {
		if p.Match(agent, agent, "anything at all") == nil {
			t.Errorf("no demo tape answers %s", agent)
		}
	}
}

const branchTapes = `tapes:
  - name: shell
    match: {agent: tester}
    steps:
      - say: "running"
      - tool: glob
        args: {pattern: "*"}
      - tool: run_shell_command
        args: {command: "go test"}
        on_denied:
          - say: "denied branch"
          - capsule: {summary: "could not run the tests"}
        on_error:
          - fail: "the tests could not run"
        on_exit:
          127:
            - say: "no go branch"
      - say: "main line"
  - name: ask
    match: {agent: builder}
    steps:
      - ask: "Usage or Testing?"
        answers:
          - match: "usage"
            steps:
              - say: "usage branch"
          - match: "^test(ing)?$"
            steps:
              - tool: replace
                args: {path: README.md, new_string: "## Testing for {{answer}}"}
              - ask: "Which runner for {{answer}}?"
                answers:
                  - match: "gotest"
                    steps:
                      - say: "runner {{answer}}"
              - say: "nested main line"
        otherwise:
          - say: "you said {{answer}}"
          - tool: write_file
            args: {path: "notes.md", content: "{{answer}}", n: 3}
          - capsule: {summary: "noted: {{answer}}"}
      - say: "no branch taken"
`

// turnText plays one turn and returns its text, its tool calls and the error that ended it.
func turnText(t *testing.T, p Provider, req Request) (string, []ToolCall, error) {
	t.Helper()
	ds, _, err := collect(t, p, req)
	var b strings.Builder
	var calls []ToolCall
	for _, d := range ds {
		switch d.Kind {
		case DeltaText:
			b.WriteString(d.Text)
		case DeltaToolCall:
			calls = append(calls, d.ToolCall)
		}
	}
	return b.String(), calls, err
}

func branchProvider(t *testing.T) Provider {
	t.Helper()
	tapes, err := ParseTapes([]byte(branchTapes), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return NewScript(ScriptConfig{Tapes: tapes})
}

// toolTurn is the conversation after the tester tape's first turn, with the shell result given.
func toolTurn(calls []ToolCall, shell string, isErr bool) []Message {
	return []Message{
		{Role: RoleUser, Text: "run the tests"},
		{Role: RoleAssistant, Text: "running", ToolCalls: calls},
		{Role: RoleTool, ToolCallID: calls[0].ID, ToolName: calls[0].Name, Text: "a.go"},
		{Role: RoleTool, ToolCallID: calls[1].ID, ToolName: calls[1].Name, Text: shell, IsError: isErr},
	}
}

// TestScriptBranchOnToolResult: on_denied is taken for a denial, on_error for any other
// error, and neither for a result that is not an error (nor when the conversation does not
// carry the result).
func TestScriptBranchOnToolResult(t *testing.T) {
	p := branchProvider(t)
	req := Request{Agent: "tester", AgentType: "tester", Task: "run the tests", Attempt: 1}
	_, calls, err := turnText(t, p, req)
	if err != nil || len(calls) != 2 || calls[1].Name != "run_shell_command" {
		t.Fatalf("turn 1: %v %+v", err, calls)
	}
	req.Turn = 1
	for _, c := range []struct {
		name, result string
		isErr        bool
		want         string
		wantErr      string
	}{
		{"user denial", DeniedPrefix + "denied by the user", true, "denied branch", ""},
		{"denial with a message", DeniedPrefix + "use make test instead", true, "denied branch", ""},
		{"policy denial", DeniedPrefix + "run_shell_command is not among this agent's tools", true, "denied branch", ""},
		{"error", "run_shell_command: exit status 1", true, "", "the tests could not run"},
		{"exit code with a branch", "go is not on PATH\n[exit code 127]", true, "no go branch", ""},
		{"exit code without one", "FAIL\n[exit code 1]", true, "", "the tests could not run"},
		{"success", "ok", false, "main line", ""},
		{"not an error though it says denied", DeniedPrefix + "x", false, "main line", ""},
	} {
		req.Messages = toolTurn(calls, c.result, c.isErr)
		text, _, err := turnText(t, p, req)
		switch {
		case c.wantErr != "":
			if err == nil || IsTransient(err) || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.wantErr)
			}
		case err != nil || !strings.Contains(text, c.want):
			t.Errorf("%s: text %q err %v, want %q", c.name, text, err, c.want)
		}
	}
	// The denied branch's capsule ends the tape: there is no turn after it.
	req.Messages = append(toolTurn(calls, DeniedPrefix+"no", true), Message{Role: RoleAssistant, Text: "denied branch"})
	req.Turn = 2
	if _, _, err := turnText(t, p, req); err == nil || !strings.Contains(err.Error(), "has 2 turns") {
		t.Errorf("turn 3 after the branch: %v", err)
	}
	// Without the results in the conversation the tape goes on as written.
	req.Messages, req.Turn = nil, 1
	if text, _, _ := turnText(t, p, req); text != "main line" {
		t.Errorf("no conversation: %q", text)
	}
}

// askTurn is the conversation after the builder tape's ask, answered with reply.
func askTurn(reply string) []Message {
	return []Message{
		{Role: RoleUser, Text: "pair on the README"},
		{Role: RoleAssistant, Text: "Usage or Testing?"},
		{Role: RoleUser, Text: reply},
	}
}

// TestScriptBranchOnAnswer: the first answer whose regexp finds the reply (case-insensitive)
// is taken, otherwise the otherwise branch; {{answer}} is the reply, as plain text, and
// JSON-escaped inside tool arguments and capsules.
func TestScriptBranchOnAnswer(t *testing.T) {
	p := branchProvider(t)
	req := Request{Agent: "builder", AgentType: "builder", Task: "pair on the README", Attempt: 1}
	text, _, err := turnText(t, p, req)
	if err != nil || text != "Usage or Testing?" {
		t.Fatalf("turn 1: %q %v", text, err)
	}
	req.Turn = 1
	req.Messages = askTurn("The USAGE section please")
	if text, _, _ := turnText(t, p, req); text != "usage branch" {
		t.Errorf("usage: %q", text)
	}
	req.Messages = askTurn("  Testing \n")
	text, calls, _ := turnText(t, p, req)
	if text != "" || len(calls) != 1 || calls[0].Args != `{"new_string":"## Testing for Testing","path":"README.md"}` {
		t.Errorf("testing: %q %+v", text, calls)
	}
	// A reply that no answer matches takes otherwise: plain text in say, JSON-escaped where
	// it lands in tool arguments and the capsule.
	reply := "say \"hi\" <b> \\ \x1b[2J\ttab"
	req.Messages = askTurn(reply)
	text, calls, _ = turnText(t, p, req)
	plain := `say "hi" <b> \ [2J tab`
	if text != "you said "+plain {
		t.Errorf("otherwise text %q", text)
	}
	if len(calls) != 1 {
		t.Fatalf("otherwise calls %+v", calls)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(calls[0].Args), &args); err != nil || args["content"] != plain || args["n"] != 3.0 {
		t.Errorf("otherwise args %s: %v %v", calls[0].Args, args, err)
	}
	req.Messages = append(askTurn(reply), Message{Role: RoleAssistant, Text: "you said", ToolCalls: calls},
		Message{Role: RoleTool, ToolCallID: calls[0].ID, Text: "wrote notes.md"})
	req.Turn = 2
	text, _, err = turnText(t, p, req)
	var capsule struct{ Summary string }
	body := strings.TrimSuffix(strings.TrimPrefix(text, "\n```json\n"), "\n```\n")
	if err != nil || json.Unmarshal([]byte(body), &capsule) != nil || capsule.Summary != "noted: "+plain {
		t.Errorf("otherwise capsule %q: %v", text, err)
	}

	// An ask without answers or otherwise, or a reply missing from the conversation, goes on.
	req.Messages, req.Turn = nil, 1
	if text, _, _ := turnText(t, p, req); text != "no branch taken" {
		t.Errorf("no reply: %q", text)
	}
}

// TestScriptBranchNested: a branch's own ask picks a nested branch by its own reply, and the
// outer {{answer}} is substituted in the nested ask's question.
func TestScriptBranchNested(t *testing.T) {
	p := branchProvider(t)
	base := append(askTurn("testing"), Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call-2-1", Name: "replace"}}},
		Message{Role: RoleTool, ToolCallID: "call-2-1", Text: "replaced"})
	req := Request{Agent: "builder", AgentType: "builder", Task: "pair on the README", Attempt: 1, Turn: 2, Messages: base}
	if text, _, _ := turnText(t, p, req); text != "Which runner for testing?" {
		t.Errorf("nested ask: %q", text)
	}
	req.Turn = 3
	req.Messages = append(slices.Clone(base), Message{Role: RoleAssistant, Text: "Which runner for testing?"}, Message{Role: RoleUser, Text: "GoTest"})
	if text, _, _ := turnText(t, p, req); text != "runner GoTest" {
		t.Errorf("nested answer: %q", text)
	}
	req.Messages = append(slices.Clone(base), Message{Role: RoleAssistant, Text: "Which runner for testing?"}, Message{Role: RoleUser, Text: "make"})
	if text, _, _ := turnText(t, p, req); text != "nested main line" {
		t.Errorf("nested no match: %q", text)
	}
}

func TestParseTapeBranchErrors(t *testing.T) {
	head := "tapes:\n  - name: a\n    steps:\n"
	cases := []struct{ name, src, want string }{
		{"on_denied on say", "      - say: hi\n        on_denied: [{say: x}]\n", "b.yaml:4: on_denied belongs to a tool step"},
		{"on_error on ask", "      - ask: hi\n        on_error: [{say: x}]\n", "b.yaml:4: on_error belongs to a tool step"},
		{"answers on tool", "      - tool: glob\n        answers: [{match: x, steps: [{say: y}]}]\n", "b.yaml:4: answers belongs to an ask step"},
		{"otherwise on say", "      - say: hi\n        otherwise: [{say: x}]\n", "b.yaml:4: otherwise belongs to an ask step"},
		{"empty on_denied", "      - tool: glob\n        on_denied: []\n", "b.yaml:5: on_denied is a non-empty list of steps"},
		{"on_error not a list", "      - tool: glob\n        on_error: {say: x}\n", "b.yaml:5: on_error is a non-empty list of steps"},
		{"on_exit on say", "      - say: hi\n        on_exit: {1: [{say: x}]}\n", "b.yaml:4: on_exit belongs to a tool step"},
		{"on_exit bad code", "      - tool: glob\n        on_exit: {zero: [{say: x}]}\n", "on_exit: \"zero\" is not an exit code from 1 to 255"},
		{"empty otherwise", "      - ask: hi\n        otherwise: []\n", "b.yaml:5: otherwise is a non-empty list of steps"},
		{"empty answers", "      - ask: hi\n        answers: []\n", "b.yaml:5: answers is a non-empty list"},
		{"bad regexp", "      - ask: hi\n        answers:\n          - match: \"(\"\n            steps: [{say: x}]\n", "b.yaml:6: answers.match: error parsing regexp"},
		{"no match", "      - ask: hi\n        answers:\n          - steps: [{say: x}]\n", "b.yaml:6: an answer needs match"},
		{"no steps", "      - ask: hi\n        answers:\n          - match: x\n", "b.yaml:6: an answer needs steps"},
		{"empty steps", "      - ask: hi\n        answers:\n          - match: x\n            steps: []\n", "b.yaml:7: an answer's steps is a non-empty list"},
		{"unknown answer key", "      - ask: hi\n        answers:\n          - match: x\n            stpes: [{say: x}]\n", `b.yaml:7: unknown key "stpes": did you mean steps?`},
		{"bad nested step", "      - tool: glob\n        on_denied:\n          - say: x\n          - sya: y\n", `b.yaml:7: unknown key "sya"`},
		{"nested misplaced", "      - tool: glob\n        on_denied:\n          - say: x\n            answers: [{match: x, steps: [{say: y}]}]\n", "b.yaml:6: answers belongs to an ask step"},
	}
	for _, c := range cases {
		_, err := ParseTapes([]byte(head+c.src), "b.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// Words are paced against deadlines: a sleep that overshoots (a loaded machine) is made up on
// the next word, so a long reply keeps its tape's rate instead of adding every overshoot.
func TestScriptPaceKeepsRate(t *testing.T) {
	tapes, err := ParseTapes([]byte("tapes:\n  - name: long\n    match: {agent: a}\n    rate: 10\n    steps:\n      - say: \"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty\"\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	p := NewScript(ScriptConfig{Tapes: tapes, Now: func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error { now = now.Add(d + 20*time.Millisecond); return nil }}) // 20 ms late each time
	st, err := p.Stream(context.Background(), Request{Agent: "a", Task: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := st.Next(); err != nil {
			break
		}
	}
	// 20 words at 10/s: 2 s of tape; at most one overshoot (20 ms) on top, not 20 of them.
	if got := now.Sub(time.Time{}); got < 2*time.Second || got > 2*time.Second+25*time.Millisecond {
		t.Errorf("the reply took %v of clock, want 2s (plus one overshoot)", got)
	}
}

// An end_turn step ends a turn with end_turn; the steps after it are the next turn, played
// when the conversation goes on after the final message.
func TestScriptEndTurn(t *testing.T) {
	tapes, err := ParseTapes([]byte("tapes:\n  - name: a\n    steps:\n      - say: first\n      - end_turn: true\n      - say: second\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := NewScript(ScriptConfig{Tapes: tapes})
	text := func(ds []Delta) (string, string) {
		var b strings.Builder
		stop := ""
		for _, d := range ds {
			if d.Kind == DeltaText {
				b.WriteString(d.Text)
			}
			if d.Kind == DeltaStop {
				stop = d.StopReason
			}
		}
		return b.String(), stop
	}
	msgs := []Message{{Role: RoleUser, Text: "task"}}
	ds, _, err := collect(t, p, Request{Agent: "x", Task: "task", Messages: msgs})
	if got, stop := text(ds); err != nil || got != "first" || stop != StopEnd {
		t.Fatalf("turn 1: %q %q %v", got, stop, err)
	}
	msgs = append(msgs, Message{Role: RoleAssistant, Text: "first"}, Message{Role: RoleUser, Text: "go on"})
	ds, _, err = collect(t, p, Request{Agent: "x", Task: "task", Messages: msgs, Turn: 1})
	if got, stop := text(ds); err != nil || got != "second" || stop != StopEnd {
		t.Fatalf("turn 2: %q %q %v", got, stop, err)
	}
	if _, err := ParseTapes([]byte("tapes:\n  - name: a\n    steps:\n      - end_turn: false\n"), "t.yaml"); err == nil || !strings.Contains(err.Error(), "t.yaml:4: end_turn takes true") {
		t.Errorf("end_turn: false: %v", err)
	}
}

// TestScriptLongSayStreamsLazily: a say of a million words streams word by word, the words
// (spaces kept) joining back to the text exactly, without splitting the whole text up front:
// the first delta allocates next to nothing (a delta per word up front was ~150 MB here, and
// 200 such streams at once took a session past 20 GB).
func TestScriptLongSayStreamsLazily(t *testing.T) {
	var b strings.Builder
	for i := range 1_000_000 {
		if i%12 == 11 {
			fmt.Fprintf(&b, "w%d\\n", i)
		} else {
			fmt.Fprintf(&b, "w%d ", i)
		}
	}
	say := "  " + b.String() + "end"
	tape := "tapes:\n  - name: long\n    match: {agent: long}\n    rate: 1000000\n    steps:\n      - say: \"" + say + "\"\n"
	tapes, err := ParseTapes([]byte(tape), "long.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := NewScript(ScriptConfig{Tapes: tapes, Sleep: func(context.Context, time.Duration) error { return nil }})
	st, err := p.Stream(context.Background(), Request{Agent: "long", AgentType: "long", Task: "x", Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	first, err := st.Next()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("the first delta of a long say allocated %d bytes", grew)
	}
	var got strings.Builder
	got.WriteString(first.Text)
	n := 1
	for {
		d, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind == DeltaText {
			got.WriteString(d.Text)
			n++
		}
	}
	want := strings.ReplaceAll(say, `\n`, "\n")
	if got.String() != want || n != 1_000_001 || first.Text != "  w0" {
		t.Errorf("%d deltas, first %q; the text joins back: %v", n, first.Text, got.String() == want)
	}
}
