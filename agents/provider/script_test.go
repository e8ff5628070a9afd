package provider

import (
	"context"
	"errors"
	"io"
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
	p := NewScript(ScriptConfig{Tapes: tapes, Sleep: func(_ context.Context, d time.Duration) error { slept += d; return nil }})
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
		{"yaml syntax", "tapes:\n  - name: [\n", "t.yaml: yaml:"},
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
