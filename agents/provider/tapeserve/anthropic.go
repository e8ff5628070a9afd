package tapeserve

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/summit-dev/summit/agents/provider"
)

// The Anthropic Messages API (https://docs.anthropic.com/en/api/messages-streaming).

type anthRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"` // a string or text blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or blocks
	} `json:"messages"`
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

type anthBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or blocks
	IsError   bool            `json:"is_error"`
}

// anthBlocks reads content that is a string or a list of blocks.
func anthBlocks(raw json.RawMessage) ([]anthBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anthBlock
	err := json.Unmarshal(raw, &bs)
	return bs, err
}

// anthText joins the text blocks of content.
func anthText(raw json.RawMessage) (string, error) {
	bs, err := anthBlocks(raw)
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), err
}

// anthCall converts a Messages request.
func (s *server) anthCall(w http.ResponseWriter, r *http.Request) (*call, bool) {
	var in anthRequest
	if status, msg := s.readBody(w, r, &in); status != 0 {
		anthError(w, status, msg)
		return nil, false
	}
	bad := func(msg string) (*call, bool) {
		anthError(w, http.StatusBadRequest, msg)
		return nil, false
	}
	if in.Model == "" {
		return bad("model: Field required")
	}
	if in.Messages == nil {
		return bad("messages: Field required")
	}
	sys, err := anthText(in.System)
	if err != nil {
		return bad("system: a string or a list of text blocks is expected: " + err.Error())
	}
	var v convo
	for i, m := range in.Messages {
		bs, err := anthBlocks(m.Content)
		if err != nil {
			return bad("messages." + itoa(i) + ".content: a string or a list of content blocks is expected: " + err.Error())
		}
		switch m.Role {
		case "user":
			var text []string
			flush := func() {
				if len(text) > 0 {
					v.user(strings.Join(text, "\n"))
					text = nil
				}
			}
			for _, b := range bs {
				switch b.Type {
				case "text":
					text = append(text, b.Text)
				case "tool_result":
					flush()
					out, err := anthText(b.Content)
					if err != nil {
						return bad("messages." + itoa(i) + ": tool_result content: " + err.Error())
					}
					v.result(b.ToolUseID, "", out, b.IsError)
				}
			}
			flush()
		case "assistant":
			v.assistant() // a turn even when none of its blocks is one summit reads
			for _, b := range bs {
				switch b.Type {
				case "text":
					v.text(b.Text)
				case "thinking":
					v.thinking(b.Thinking, b.Signature)
				case "tool_use":
					v.toolCall(b.ID, b.Name, argsText(b.Input))
				}
			}
		case "system":
			// Claude Code sends its environment section (working directory, platform) as a
			// system message in the conversation. It joins the system prompt: it is neither the
			// task nor a turn.
			for _, b := range bs {
				if b.Type == "text" && b.Text != "" {
					sys = strings.TrimLeft(sys+"\n\n"+b.Text, "\n")
				}
			}
		default:
			return bad("messages." + itoa(i) + ".role: unexpected value " + quote(m.Role) + " (user, assistant or system)")
		}
	}
	var tools []provider.ToolSpec
	for _, t := range in.Tools {
		tools = append(tools, provider.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	c := &call{api: "anthropic", model: in.Model, stream: in.Stream}
	s.finish(c, []string{sys}, v.msgs, tools)
	return c, true
}

func (s *server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	c, ok := s.anthCall(w, r)
	if !ok {
		return
	}
	var wr writer = nopWriter{}
	if c.stream {
		wr = &anthStream{w: w, c: c}
	}
	o, err := s.play(r.Context(), c, wr)
	if rf, ok := err.(*refusal); ok {
		s.log("anthropic model %q: %d %s", c.model, rf.status, rf.msg)
		anthError(w, rf.status, rf.msg)
		return
	}
	if c.stream || err != nil {
		return
	}
	content := []any{}
	for _, b := range o.blocks {
		content = append(content, anthContent(c, b, true))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": c.id("msg_", "message", c.req.Turn), "type": "message", "role": "assistant", "model": c.model,
		"content": content, "stop_reason": anthStop(o.stop), "stop_sequence": nil, "usage": anthUsage(o.usage),
	})
}

func (s *server) anthropicCountTokens(w http.ResponseWriter, r *http.Request) {
	c, ok := s.anthCall(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": c.input})
}

// anthContent is block b as a content block; whole says whether it is complete (the
// non-streaming body) or as content_block_start announces it.
func anthContent(c *call, b *block, whole bool) map[string]any {
	switch b.kind {
	case thinkingBlock:
		if !whole {
			return map[string]any{"type": "thinking", "thinking": "", "signature": ""}
		}
		return map[string]any{"type": "thinking", "thinking": b.text, "signature": signature(b.text)}
	case toolBlock:
		input := json.RawMessage("{}")
		if whole {
			input = toolInput(b.args)
		}
		return map[string]any{"type": "tool_use", "id": c.id("toolu_", b.id), "name": b.name, "input": input}
	}
	text := ""
	if whole {
		text = b.text
	}
	return map[string]any{"type": "text", "text": text}
}

// signature is a thinking block's signature: the API's is opaque, and clients send it back
// unchanged; this one is a hash of the text, so it is the same every time.
func signature(text string) string {
	sum := sha256.Sum256([]byte("tapeserve thinking\x00" + text))
	return base64.StdEncoding.EncodeToString(sum[:])
}

func anthStop(stop string) string {
	switch stop {
	case provider.StopToolUse:
		return "tool_use"
	case provider.StopMaxTokens:
		return "max_tokens"
	}
	return "end_turn" // also an ask step's await_user: the client shows the question and waits
}

func anthUsage(u provider.Usage) map[string]any {
	return map[string]any{"input_tokens": u.Input, "output_tokens": u.Output,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

// anthError writes an error in the API's shape. A tape's transient failure is 529
// overloaded_error, as the API says it.
func anthError(w http.ResponseWriter, status int, msg string) {
	kind := "invalid_request_error"
	switch status {
	case http.StatusRequestEntityTooLarge:
		kind = "request_too_large"
	case http.StatusNotFound:
		kind = "not_found_error"
	case http.StatusServiceUnavailable:
		status, kind = 529, "overloaded_error"
	case http.StatusInternalServerError:
		kind = "api_error"
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}})
}

// anthStream writes the Messages event stream.
type anthStream struct {
	w http.ResponseWriter
	c *call
	e *sse
}

func (a *anthStream) begin(o *out) error {
	a.e = startSSE(a.w, "\n")
	usage := anthUsage(o.usage)
	usage["output_tokens"] = 1 // what the API reports before the first token
	if err := a.e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": a.c.id("msg_", "message", a.c.req.Turn), "type": "message", "role": "assistant", "model": a.c.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}}); err != nil {
		return err
	}
	return a.e.event("ping", map[string]any{"type": "ping"})
}

func (a *anthStream) open(o *out, i int) error {
	b := o.blocks[i]
	if err := a.e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
		"content_block": anthContent(a.c, b, false)}); err != nil {
		return err
	}
	if b.kind != toolBlock {
		return nil
	}
	// The input streams as fragments of JSON text, the tape's argument text as written
	// (raw_args may be malformed on purpose).
	for _, frag := range halves(b.args) {
		if err := a.delta1(i, map[string]any{"type": "input_json_delta", "partial_json": frag}); err != nil {
			return err
		}
	}
	return nil
}

func (a *anthStream) delta1(i int, d map[string]any) error {
	return a.e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
}

func (a *anthStream) delta(o *out, i int, frag string) error {
	if o.blocks[i].kind == thinkingBlock {
		return a.delta1(i, map[string]any{"type": "thinking_delta", "thinking": frag})
	}
	return a.delta1(i, map[string]any{"type": "text_delta", "text": frag})
}

func (a *anthStream) close(o *out, i int) error {
	if b := o.blocks[i]; b.kind == thinkingBlock {
		if err := a.delta1(i, map[string]any{"type": "signature_delta", "signature": signature(b.text)}); err != nil {
			return err
		}
	}
	return a.e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

func (a *anthStream) end(o *out) error {
	if err := a.e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthStop(o.stop), "stop_sequence": nil}, "usage": anthUsage(o.usage)}); err != nil {
		return err
	}
	return a.e.event("message_stop", map[string]any{"type": "message_stop"})
}

func (a *anthStream) fail(o *out, pe *provider.Error) error {
	kind := "invalid_request_error"
	if pe.Transient {
		kind = "overloaded_error"
	}
	return a.e.event("error", map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": pe.Msg}})
}

// halves splits s in two fragments (one when short), as APIs stream arguments in pieces; the
// cut never splits a UTF-8 sequence.
func halves(s string) []string {
	if len(s) < 8 {
		return []string{s}
	}
	cut := len(s) / 2
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return []string{s[:cut], s[cut:]}
}
