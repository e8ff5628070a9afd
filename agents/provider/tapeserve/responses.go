package tapeserve

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/summit-dev/summit/agents/provider"
)

// The OpenAI Responses API (https://platform.openai.com/docs/api-reference/responses-streaming),
// the only API Codex speaks.

type respRequest struct {
	Model              string          `json:"model"`
	Instructions       string          `json:"instructions"`
	Input              json.RawMessage `json:"input"` // a string or items
	Tools              []respTool      `json:"tools"`
	Stream             bool            `json:"stream"`
	PreviousResponseID string          `json:"previous_response_id"`
}

type respTool struct {
	Type        string         `json:"type"` // function, custom, and built-in tools (skipped)
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

type respItem struct {
	Type      string          `json:"type"` // "" with a role is a message
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`  // custom_tool_call
	Action    json.RawMessage `json:"action"` // local_shell_call
	Output    json.RawMessage `json:"output"` // a string or parts
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

func (s *server) responses(w http.ResponseWriter, r *http.Request) {
	var in respRequest
	if status, msg := s.readBody(w, r, &in); status != 0 {
		openaiError(w, status, msg)
		return
	}
	bad := func(msg string) {
		openaiError(w, http.StatusBadRequest, msg)
	}
	if in.Model == "" {
		bad("you must provide a model parameter")
		return
	}
	if in.PreviousResponseID != "" {
		bad("previous_response_id is not supported: tapeserve keeps no responses; send the whole conversation in input (store: false)")
		return
	}
	var items []respItem
	var text string
	if json.Unmarshal(in.Input, &text) == nil {
		items = []respItem{{Type: "message", Role: "user", Content: in.Input}}
	} else if err := json.Unmarshal(in.Input, &items); err != nil || in.Input == nil {
		bad("input: a string or a list of input items is required")
		return
	}
	sys := []string{in.Instructions}
	var v convo
	names := map[string]string{}
	for i, it := range items {
		switch it.Type {
		case "", "message":
			text, err := partsText(it.Content)
			if err != nil {
				bad("input[" + itoa(i) + "].content: a string or a list of content parts is expected: " + err.Error())
				return
			}
			switch it.Role {
			case "system", "developer":
				sys = append(sys, text)
			case "user":
				v.user(text)
			case "assistant":
				v.text(text)
			default:
				bad("input[" + itoa(i) + "].role: unexpected value " + quote(it.Role))
				return
			}
		case "reasoning":
			var parts []string
			for _, p := range it.Summary {
				parts = append(parts, p.Text)
			}
			v.thinking(strings.Join(parts, "\n"), "")
		case "function_call":
			names[it.CallID] = it.Name
			v.toolCall(it.CallID, it.Name, it.Arguments)
		case "custom_tool_call":
			names[it.CallID] = it.Name
			b, _ := marshal(map[string]string{"input": it.Input})
			v.toolCall(it.CallID, it.Name, string(b))
		case "local_shell_call":
			names[it.CallID] = "local_shell"
			v.toolCall(it.CallID, "local_shell", argsText(it.Action))
		case "function_call_output", "custom_tool_call_output":
			out, err := partsText(it.Output)
			if err != nil {
				bad("input[" + itoa(i) + "].output: a string or a list of content parts is expected: " + err.Error())
				return
			}
			v.result(it.CallID, names[it.CallID], out, deniedText(out))
		}
		// Other items (item_reference, built-in tools' calls) say nothing a tape reads.
	}
	var tools []provider.ToolSpec
	custom := map[string]bool{}
	for _, t := range in.Tools {
		switch t.Type {
		case "function", "custom":
			tools = append(tools, provider.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
			custom[t.Name] = t.Type == "custom"
		}
	}
	c := &call{api: "responses", model: in.Model, stream: in.Stream, custom: custom}
	s.finish(c, sys, v.msgs, tools)
	rs := &respStream{w: w, c: c}
	var wr writer = nopWriter{}
	if c.stream {
		wr = rs
	}
	o, err := s.play(r.Context(), c, wr)
	if rf, ok := err.(*refusal); ok {
		s.log("responses model %q: %d %s", c.model, rf.status, rf.msg)
		openaiError(w, rf.status, rf.msg)
		return
	}
	if c.stream || err != nil {
		return
	}
	writeJSON(w, http.StatusOK, rs.response("completed", o))
}

// respStream writes the Responses event stream; response and item build the objects both the
// stream and the non-streaming body hold.
type respStream struct {
	w   http.ResponseWriter
	c   *call
	e   *sse
	seq int
}

func (s *respStream) send(typ string, fields map[string]any) error {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	return s.e.event(typ, fields)
}

func (s *respStream) response(status string, o *out) map[string]any {
	output := []any{}
	var usage any
	if status != "in_progress" {
		for i := range o.blocks {
			output = append(output, s.item(o, i, true))
		}
		usage = map[string]any{"input_tokens": o.usage.Input, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": o.usage.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": o.usage.Input + o.usage.Output}
	}
	return map[string]any{"id": s.c.id("resp_", s.c.req.Turn), "object": "response", "created_at": created,
		"status": status, "model": s.c.model, "output": output, "usage": usage, "error": nil,
		"incomplete_details": nil, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		"store": false, "metadata": map[string]any{}}
}

// item is output item i: whole (done), or as response.output_item.added announces it.
func (s *respStream) item(o *out, i int, whole bool) map[string]any {
	b := o.blocks[i]
	status := "in_progress"
	if whole {
		status = "completed"
	}
	switch b.kind {
	case thinkingBlock:
		summary := []any{}
		if whole {
			summary = append(summary, map[string]any{"type": "summary_text", "text": b.text})
		}
		return map[string]any{"id": s.c.id("rs_", s.c.req.Turn, i), "type": "reasoning", "summary": summary}
	case toolBlock:
		if s.c.custom[b.name] {
			input := ""
			if whole {
				input = customInput(b.args)
			}
			return map[string]any{"id": s.c.id("ctc_", b.id), "type": "custom_tool_call", "status": status,
				"call_id": s.c.id("call_", b.id), "name": b.name, "input": input}
		}
		args := ""
		if whole {
			args = b.args
		}
		return map[string]any{"id": s.c.id("fc_", b.id), "type": "function_call", "status": status,
			"call_id": s.c.id("call_", b.id), "name": b.name, "arguments": args}
	}
	content := []any{}
	if whole {
		content = append(content, outputText(b.text))
	}
	return map[string]any{"id": s.c.id("msg_", s.c.req.Turn, i), "type": "message", "status": status,
		"role": "assistant", "content": content}
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
}

// customInput is a custom tool's input: the tape's {"input": "..."}, else its argument text.
func customInput(args string) string {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) == nil && len(obj) == 1 {
		if s, ok := obj["input"].(string); ok {
			return s
		}
	}
	return args
}

func (s *respStream) begin(o *out) error {
	s.e = startSSE(s.w, "\n")
	if err := s.send("response.created", map[string]any{"response": s.response("in_progress", o)}); err != nil {
		return err
	}
	return s.send("response.in_progress", map[string]any{"response": s.response("in_progress", o)})
}

func (s *respStream) open(o *out, i int) error {
	item := s.item(o, i, false)
	id := item["id"]
	if err := s.send("response.output_item.added", map[string]any{"output_index": i, "item": item}); err != nil {
		return err
	}
	b := o.blocks[i]
	switch {
	case b.kind == textBlock:
		return s.send("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
			"part": outputText("")})
	case b.kind == thinkingBlock:
		return s.send("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": i,
			"summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
	case s.c.custom[b.name]:
		for _, frag := range halves(customInput(b.args)) {
			if err := s.send("response.custom_tool_call_input.delta", map[string]any{"item_id": id, "output_index": i, "delta": frag}); err != nil {
				return err
			}
		}
	default:
		for _, frag := range halves(b.args) {
			if err := s.send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": frag}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *respStream) delta(o *out, i int, frag string) error {
	id := s.item(o, i, false)["id"]
	if o.blocks[i].kind == thinkingBlock {
		return s.send("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": i,
			"summary_index": 0, "delta": frag})
	}
	return s.send("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
		"delta": frag, "logprobs": []any{}})
}

func (s *respStream) close(o *out, i int) error {
	item := s.item(o, i, true)
	id := item["id"]
	b := o.blocks[i]
	var err error
	switch {
	case b.kind == textBlock:
		err = s.send("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
			"text": b.text, "logprobs": []any{}})
		if err == nil {
			err = s.send("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": outputText(b.text)})
		}
	case b.kind == thinkingBlock:
		err = s.send("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": i,
			"summary_index": 0, "text": b.text})
		if err == nil {
			err = s.send("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": i,
				"summary_index": 0, "part": map[string]any{"type": "summary_text", "text": b.text}})
		}
	case s.c.custom[b.name]:
		err = s.send("response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": i,
			"input": item["input"]})
	default:
		err = s.send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i,
			"name": b.name, "arguments": b.args})
	}
	if err != nil {
		return err
	}
	return s.send("response.output_item.done", map[string]any{"output_index": i, "item": item})
}

func (s *respStream) end(o *out) error {
	return s.send("response.completed", map[string]any{"response": s.response("completed", o)})
}

func (s *respStream) fail(o *out, pe *provider.Error) error {
	resp := s.response("failed", o)
	code := "invalid_request"
	if pe.Transient {
		code = "server_error"
	}
	resp["error"] = map[string]any{"code": code, "message": pe.Msg}
	return s.send("response.failed", map[string]any{"response": resp})
}
