package tapeserve

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
)

const playableTapes = `tapes:
  - name: patcher
    match: {task: "(?i)add notes"}
    steps:
      - say: "Adding notes.md."
      - tool: apply_patch
        args: {input: "*** Begin Patch\n*** Add File: notes.md\n+hi\n*** End Patch\n"}
      - say: "Done."
  - name: bad-args
    match: {task: "(?i)json patch"}
    steps:
      - tool: apply_patch
        args: {path: notes.md, content: hi}
  - name: gemini-main
    match: {agent: gemini-2.5-pro, task: "(?i)write hello"}
    steps:
      - say: "Writing hello.txt."
`

func playableServer(t *testing.T) string {
	t.Helper()
	tapes, err := provider.ParseTapes([]byte(playableTapes), "play.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(tapes, Options{NoSleep: true}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// codexRequest is a Responses request shaped as Codex 0.166 (codex-acp 2.6.0, model gpt-5.5)
// sends it: instructions, the task as a user message, exec_command as a function tool and
// apply_patch as a custom (freeform) tool with a grammar format.
func codexRequest(task string, stream bool, custom bool) string {
	tools := []any{map[string]any{"type": "function", "name": "exec_command", "description": "Runs a command",
		"strict": false, "parameters": map[string]any{"type": "object", "properties": map[string]any{"cmd": map[string]any{"type": "string"}}, "required": []string{"cmd"}}}}
	if custom {
		tools = append(tools, map[string]any{"type": "custom", "name": "apply_patch", "description": "Use the `apply_patch` tool to edit files.",
			"format": map[string]any{"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"}})
	}
	return js(map[string]any{"model": "gpt-5.5", "instructions": "You are Codex.", "stream": stream, "store": false,
		"tool_choice": "auto", "parallel_tool_calls": false, "tools": tools, "include": []string{"reasoning.encrypted_content"},
		"input": []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": task}}}}})
}

// TestTapesCustomToolCall: a step calling a tool the request declares as custom is played as
// a custom_tool_call whose input is the patch text, in the stream (the .delta events add up
// to the .done input) and in a whole response.
func TestTapesCustomToolCall(t *testing.T) {
	url := playableServer(t)
	const patch = "*** Begin Patch\n*** Add File: notes.md\n+hi\n*** End Patch\n"
	status, body := post(t, url, "/v1/responses", codexRequest("add notes.md", false, true))
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	call, _ := dig(body, "output", 1).(map[string]any)
	if call["type"] != "custom_tool_call" || call["name"] != "apply_patch" || call["input"] != patch || !strings.HasPrefix(str(call["call_id"]), "call_") {
		t.Errorf("output item: %v", call)
	}
	status, body = post(t, url, "/v1/responses", codexRequest("add notes.md", true, true))
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var deltas, done string
	var added, itemDone map[string]any
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		switch ev["type"] {
		case "response.custom_tool_call_input.delta":
			deltas += str(ev["delta"])
		case "response.custom_tool_call_input.done":
			done = str(ev["input"])
		case "response.output_item.added":
			if it, _ := ev["item"].(map[string]any); it["type"] == "custom_tool_call" {
				added = it
			}
		case "response.output_item.done":
			if it, _ := ev["item"].(map[string]any); it["type"] == "custom_tool_call" {
				itemDone = it
			}
		case "response.function_call_arguments.delta", "response.function_call_arguments.done":
			t.Errorf("a custom tool streamed as a function call: %s", data)
		}
	}
	if deltas != patch || done != patch || added == nil || added["input"] != "" || itemDone["input"] != patch || itemDone["status"] != "completed" {
		t.Errorf("stream: deltas %q done %q added %v done %v", deltas, done, added, itemDone)
	}
}

// TestTapesUnplayableStep: a step the request cannot take fails the request before anything
// is sent, with a message naming the tape, its file and the step's line, in each API's error
// shape, streaming or not; never a turn with the call left out.
func TestTapesUnplayableStep(t *testing.T) {
	url := playableServer(t)
	for _, stream := range []bool{false, true} {
		status, body := post(t, url, "/v1/responses", codexRequest("add notes.md", stream, false))
		msg := openaiErrMsg(body)
		for _, want := range []string{"tape patcher (play.yaml:2)", "step at play.yaml:6", `calls tool "apply_patch"`, "does not declare", "exec_command"} {
			if status != 400 || !strings.Contains(msg, want) {
				t.Errorf("undeclared tool (stream %v): %d %s, want %q", stream, status, body, want)
			}
		}
		if strings.Contains(body, "Adding notes.md.") {
			t.Errorf("the turn was played without its call: %s", body)
		}
	}
	status, body := post(t, url, "/v1/responses", codexRequest("a json patch", true, true))
	if msg := openaiErrMsg(body); status != 400 || !strings.Contains(msg, "tape bad-args (play.yaml:9), step at play.yaml:12") || !strings.Contains(msg, "{input: TEXT}") {
		t.Errorf("custom tool with JSON args: %d %s", status, body)
	}
	// The same check holds for the other APIs: Anthropic declaring only read_file.
	status, body = post(t, url, "/v1/messages", js(map[string]any{"model": "claude", "max_tokens": 100,
		"tools":    []any{map[string]any{"name": "read_file", "input_schema": map[string]any{"type": "object"}}},
		"messages": []any{map[string]any{"role": "user", "content": "add notes.md"}}}))
	if msg := str(dig(body, "error", "message")); status != 400 || !strings.Contains(msg, "step at play.yaml:6") || !strings.Contains(msg, "(it declares read_file)") {
		t.Errorf("anthropic: %d %s", status, body)
	}
}

// geminiNextSpeaker is the request Gemini CLI 0.61.0's next-speaker check sends
// (packages/core/src/utils/nextSpeakerChecker.ts in its bundle): the conversation so far, its
// CHECK_PROMPT as a last user turn, and generateJson's responseJsonSchema with
// responseMimeType application/json, to the next-speaker-checker model (gemini-3-flash-preview).
func geminiNextSpeaker() string {
	return js(map[string]any{
		"contents": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "write hello.txt"}}},
			map[string]any{"role": "model", "parts": []any{map[string]any{"text": "Writing hello.txt."}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Analyze *only* the content and structure of your immediately preceding response (your last turn in the conversation history). Based *strictly* on that response, determine who should logically speak next: the 'user' or the 'model' (you)."}}},
		},
		"generationConfig": map[string]any{"temperature": 0, "topP": 1, "thinkingConfig": map[string]any{"thinkingLevel": "LOW"},
			"responseMimeType": "application/json",
			"responseJsonSchema": map[string]any{"type": "object", "properties": map[string]any{
				"reasoning":    map[string]any{"type": "string", "description": "Brief explanation justifying the 'next_speaker' choice"},
				"next_speaker": map[string]any{"type": "string", "enum": []string{"user", "model"}, "description": "Who should speak next"},
			}, "required": []string{"reasoning", "next_speaker"}}},
	})
}

// TestTapesGeminiSideCheck: Gemini CLI's side checks, which no tape names, get a default
// answer that is valid JSON for their schema (the user speaks next; no loop; the flash
// route), streaming or not; a tape that names the model still answers it.
func TestTapesGeminiSideCheck(t *testing.T) {
	url := playableServer(t)
	status, body := post(t, url, "/v1beta/models/gemini-3-flash-preview:generateContent", geminiNextSpeaker())
	var got map[string]any
	if status != 200 || json.Unmarshal([]byte(str(dig(body, "candidates", 0, "content", "parts", 0, "text"))), &got) != nil ||
		got["next_speaker"] != "user" || got["reasoning"] != "" || len(got) != 2 {
		t.Errorf("next speaker: %d %s", status, body)
	}
	status, body = post(t, url, "/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse", geminiNextSpeaker())
	text := ""
	for _, line := range strings.Split(body, "\n") {
		if data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), "data: "); ok {
			text += str(dig(data, "candidates", 0, "content", "parts", 0, "text"))
		}
	}
	if status != 200 || text != `{"next_speaker":"user","reasoning":""}` || !strings.Contains(body, `"finishReason":"STOP"`) {
		t.Errorf("streamed next speaker: %d %q\n%s", status, text, body)
	}
	// The loop detector (Gemini's upper-case Type names in the router's schema too).
	loop := js(map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "write hello.txt"}}}},
		"generationConfig": map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{"type": "OBJECT",
			"properties": map[string]any{"unproductive_state_analysis": map[string]any{"type": "STRING"},
				"unproductive_state_confidence": map[string]any{"type": "NUMBER"}, "complexity_score": map[string]any{"type": "INTEGER", "minimum": 1}}}}})
	status, body = post(t, url, "/v1beta/models/gemini-2.5-flash:generateContent", loop)
	if status != 200 || str(dig(body, "candidates", 0, "content", "parts", 0, "text")) != `{"complexity_score":1,"unproductive_state_analysis":"","unproductive_state_confidence":0}` {
		t.Errorf("loop detection: %d %s", status, body)
	}
	// A tape that names the model answers its JSON requests itself.
	status, body = post(t, url, "/v1beta/models/gemini-2.5-pro:generateContent", js(map[string]any{
		"contents":         []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "write hello.txt"}}}},
		"generationConfig": map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{"type": "object"}}}))
	if status != 200 || str(dig(body, "candidates", 0, "content", "parts", 0, "text")) != "Writing hello.txt." {
		t.Errorf("a tape naming the model: %d %s", status, body)
	}
}
