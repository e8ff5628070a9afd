package tapeserve

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/summit-dev/summit/agents/provider"
)

// OpenAI Chat Completions (https://platform.openai.com/docs/api-reference/chat-streaming).

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"` // a string, null or parts
		Name      string          `json:"name"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID       string `json:"tool_call_id"`
		ReasoningContent string `json:"reasoning_content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Stream        bool `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// partsText reads content that is a string, null, or a list of parts with text ({"type":
// "text"|"input_text"|"output_text", "text": ...}); other parts (images, audio) are skipped.
func partsText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var out []string
	for _, p := range parts {
		switch p.Type {
		case "text", "input_text", "output_text":
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n"), nil
}

func (s *server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var in chatRequest
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
	if len(in.Messages) == 0 {
		bad("messages: at least one message is required")
		return
	}
	var sys []string
	var v convo
	names := map[string]string{}
	for i, m := range in.Messages {
		text, err := partsText(m.Content)
		if err != nil {
			bad("messages[" + itoa(i) + "].content: a string or a list of content parts is expected: " + err.Error())
			return
		}
		switch m.Role {
		case "system", "developer":
			sys = append(sys, text)
		case "user":
			v.user(text)
		case "assistant":
			v.assistant()
			if m.ReasoningContent != "" {
				v.thinking(m.ReasoningContent, provider.SignatureReasoningContent)
			}
			v.text(text)
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Function.Name
				v.toolCall(tc.ID, tc.Function.Name, tc.Function.Arguments)
			}
		case "tool":
			v.result(m.ToolCallID, names[m.ToolCallID], text, deniedText(text))
		case "function": // the deprecated function-calling role: no id, the function's name
			v.result("", m.Name, text, deniedText(text))
		default:
			bad("messages[" + itoa(i) + "].role: unexpected value " + quote(m.Role))
			return
		}
	}
	var tools []provider.ToolSpec
	for _, t := range in.Tools {
		if t.Function.Name != "" {
			tools = append(tools, provider.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
		}
	}
	c := &call{api: "chat", model: in.Model, stream: in.Stream}
	s.finish(c, sys, v.msgs, tools)
	var wr writer = nopWriter{}
	if c.stream {
		wr = &chatStream{w: w, c: c, usage: in.StreamOptions.IncludeUsage}
	}
	o, err := s.play(r.Context(), c, wr)
	if rf, ok := err.(*refusal); ok {
		s.log("chat model %q: %d %s", c.model, rf.status, rf.msg)
		openaiError(w, rf.status, rf.msg)
		return
	}
	if c.stream || err != nil {
		return
	}
	var text, thinking strings.Builder
	var calls []any
	for _, b := range o.blocks {
		switch b.kind {
		case textBlock:
			text.WriteString(b.text)
		case thinkingBlock:
			thinking.WriteString(b.text)
		case toolBlock:
			calls = append(calls, map[string]any{"id": c.id("call_", b.id), "type": "function",
				"function": map[string]any{"name": b.name, "arguments": b.args}})
		}
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if text.Len() > 0 || len(calls) == 0 {
		msg["content"] = text.String()
	}
	if thinking.Len() > 0 {
		msg["reasoning_content"] = thinking.String()
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": c.id("chatcmpl-", c.req.Turn), "object": "chat.completion", "created": created, "model": c.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": chatFinish(o.stop)}},
		"usage":   chatUsage(o.usage),
	})
}

func chatFinish(stop string) string {
	switch stop {
	case provider.StopToolUse:
		return "tool_calls"
	case provider.StopMaxTokens:
		return "length"
	}
	return "stop"
}

func chatUsage(u provider.Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output}
}

// openaiError writes an error in OpenAI's shape (Chat Completions and Responses).
func openaiError(w http.ResponseWriter, status int, msg string) {
	kind, code := "invalid_request_error", any(nil)
	switch status {
	case http.StatusRequestEntityTooLarge:
		code = "request_too_large"
	case http.StatusServiceUnavailable:
		kind, code = "server_error", "server_is_overloaded"
	case http.StatusNotFound:
		code = "not_found"
	case http.StatusInternalServerError:
		kind = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": kind, "param": nil, "code": code}})
}

// chatStream writes chat.completion.chunk events.
type chatStream struct {
	w     http.ResponseWriter
	c     *call
	e     *sse
	usage bool // stream_options.include_usage: every chunk has "usage", null but the last
	calls int  // tool calls so far: the index of the next
}

func (s *chatStream) chunk(delta map[string]any, finish any) error {
	ch := map[string]any{"id": s.c.id("chatcmpl-", s.c.req.Turn), "object": "chat.completion.chunk", "created": created,
		"model": s.c.model, "choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	if s.usage {
		ch["usage"] = nil
	}
	return s.e.event("", ch)
}

func (s *chatStream) begin(*out) error {
	s.e = startSSE(s.w, "\n")
	return s.chunk(map[string]any{"role": "assistant", "content": ""}, nil)
}

func (s *chatStream) open(o *out, i int) error {
	b := o.blocks[i]
	if b.kind != toolBlock {
		return nil
	}
	k := s.calls
	s.calls++
	if err := s.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": k, "id": s.c.id("call_", b.id), "type": "function",
		"function": map[string]any{"name": b.name, "arguments": ""}}}}, nil); err != nil {
		return err
	}
	for _, frag := range halves(b.args) {
		if err := s.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": k, "function": map[string]any{"arguments": frag}}}}, nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *chatStream) delta(o *out, i int, frag string) error {
	if o.blocks[i].kind == thinkingBlock {
		// DeepSeek's field: clients that know it show it as reasoning, the others skip it.
		return s.chunk(map[string]any{"reasoning_content": frag}, nil)
	}
	return s.chunk(map[string]any{"content": frag}, nil)
}

func (s *chatStream) close(*out, int) error { return nil }

func (s *chatStream) end(o *out) error {
	if err := s.chunk(map[string]any{}, chatFinish(o.stop)); err != nil {
		return err
	}
	if s.usage {
		if err := s.e.event("", map[string]any{"id": s.c.id("chatcmpl-", s.c.req.Turn), "object": "chat.completion.chunk",
			"created": created, "model": s.c.model, "choices": []any{}, "usage": chatUsage(o.usage)}); err != nil {
			return err
		}
	}
	return s.e.event("", "[DONE]")
}

func (s *chatStream) fail(o *out, pe *provider.Error) error {
	kind, code := "invalid_request_error", any(nil)
	if pe.Transient {
		kind, code = "server_error", "server_is_overloaded"
	}
	return s.e.event("", map[string]any{"error": map[string]any{"message": pe.Msg, "type": kind, "param": nil, "code": code}})
}
