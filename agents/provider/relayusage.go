package provider

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"
)

// The usage of a relayed call (an ACP agent's model call that the session makes for a runner,
// Forward): the session passes the response's bytes through unchanged and reads its usage on
// the way (UsageReader), as the API the path names reports it:
//
//   - Anthropic Messages (v1/messages): server-sent events, message_start's message.usage
//     (input, cache read and cache creation tokens: all input) and model, message_delta's
//     usage.output_tokens and delta.stop_reason; or one JSON message with usage.
//   - OpenAI Responses (responses): the response.completed (or .incomplete, .failed) event's
//     response.usage, model and status; or the JSON response.
//   - OpenAI Chat Completions (chat/completions): a chunk's usage (the last chunk, when the
//     request asked for stream_options.include_usage), model and finish_reason; or the JSON
//     completion's.
//   - Gemini (…:generateContent, …:streamGenerateContent): usageMetadata, the last one wins
//     (it is cumulative), modelVersion and finishReason; as SSE data lines (alt=sse), one JSON
//     response, or a JSON array of them.
//
// A body that starts with '{' or '[' is JSON: it is kept up to MaxUsageBody and read at its
// end (a larger one passes without its usage). Any other is read as server-sent events, line
// by line; a line longer than MaxUsageLine is skipped (no usage event is that long). An event
// that does not parse is ignored. Counting calls (count_tokens, countTokens) bill nothing and
// are not metered (Metered).

// CallUsage is what one relayed model call used, as its response said.
type CallUsage struct {
	Usage Usage
	// Reported: the response carried a usage (else Usage is zero: unknown).
	Reported bool
	// Model is the model the response named ("" when it named none).
	Model string
	// Stop is how the reply stopped: StopEnd, StopToolUse, StopMaxTokens, or "error" for an
	// error event or a failed response; "" when the response never said.
	Stop string
	// Complete: the body was read to its end (not closed before).
	Complete bool
}

// Limits of UsageReader's memory.
const (
	MaxUsageLine = 1 << 20
	MaxUsageBody = 4 << 20
)

var countCall = regexp.MustCompile(`(^|/)count_tokens$|:countTokens$`)

// Metered reports whether a call of kind on path (Forward's, without its query) is a model
// turn whose response reports its usage: not a token count.
func Metered(kind, path string) bool {
	path, _, _ = strings.Cut(path, "?")
	switch kind {
	case "anthropic", "openai", "gemini":
		return forwardKinds[kind].MatchString(path) && !countCall.MatchString(path)
	}
	return false
}

// UsageReader reads as body does, byte for byte and as soon as body yields them, and calls
// done once, with the call's usage, when it reaches its end or is closed (whichever comes
// first). kind and path are the call's (Metered).
func UsageReader(kind, path string, body io.ReadCloser, done func(CallUsage)) io.ReadCloser {
	path, _, _ = strings.Cut(path, "?")
	api := kind
	if kind == "openai" && strings.HasSuffix(path, "responses") {
		api = "responses"
	}
	return &usageReader{body: body, api: api, done: done}
}

type usageReader struct {
	body io.ReadCloser
	api  string // anthropic, openai (chat completions), responses, gemini
	done func(CallUsage)

	mu   sync.Mutex // Read and Close may come from two goroutines (a transport closing)
	once sync.Once
	mode byte   // 0: undecided (only whitespace so far), 's': server-sent events, 'j': JSON
	buf  []byte // the current line (SSE) or the body so far (JSON)
	skip bool   // the current line (SSE) or the body (JSON) is over its limit
	u    CallUsage
	tool bool // Gemini: the reply called a function
}

func (r *usageReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	r.mu.Lock()
	r.scan(p[:n])
	r.mu.Unlock()
	if err == io.EOF {
		r.finish(true)
	}
	return n, err
}

func (r *usageReader) Close() error {
	err := r.body.Close()
	r.finish(false)
	return err
}

func (r *usageReader) finish(complete bool) {
	r.once.Do(func() {
		r.mu.Lock()
		switch {
		case r.mode == 's' && !r.skip && len(r.buf) > 0:
			r.line(r.buf) // a last line without its newline
		case r.mode == 'j' && !r.skip:
			r.json(r.buf)
		}
		r.buf = nil
		u := r.u
		r.mu.Unlock()
		u.Complete = complete
		if r.done != nil {
			r.done(u)
		}
	})
}

// scan takes the next bytes of the body.
func (r *usageReader) scan(b []byte) {
	if r.mode == 0 {
		b = bytes.TrimLeft(b, " \t\r\n")
		if len(b) == 0 {
			return
		}
		r.mode = 's'
		if b[0] == '{' || b[0] == '[' {
			r.mode = 'j'
		}
	}
	if r.mode == 'j' {
		if !r.skip && len(r.buf)+len(b) > MaxUsageBody {
			r.skip, r.buf = true, nil
		}
		if !r.skip {
			r.buf = append(r.buf, b...)
		}
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if !r.skip && len(r.buf)+len(part) > MaxUsageLine {
			r.skip, r.buf = true, r.buf[:0]
		}
		if !r.skip {
			r.buf = append(r.buf, part...)
		}
		if i < 0 {
			return
		}
		if !r.skip {
			r.line(r.buf)
		}
		r.skip, r.buf = false, r.buf[:0]
		b = b[i+1:]
	}
}

// line reads one SSE line: only data lines carry JSON.
func (r *usageReader) line(l []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r"), []byte("data:"))
	if !ok {
		return
	}
	r.event(bytes.TrimSpace(data))
}

// json reads a whole JSON body: one object, or (Gemini) an array of them.
func (r *usageReader) json(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var items []json.RawMessage
		if json.Unmarshal(b, &items) != nil {
			return
		}
		for _, it := range items {
			r.event(it)
		}
		return
	}
	r.event(b)
}

// event reads one JSON value of the API: an event, chunk or whole response. One that does not
// parse changes nothing.
func (r *usageReader) event(b []byte) {
	if len(b) == 0 || b[0] != '{' {
		return // [DONE], a comment
	}
	switch r.api {
	case "anthropic":
		r.anthropic(b)
	case "responses":
		r.responses(b)
	case "openai":
		var c struct {
			Model   string `json:"model"`
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage *openai.CompletionUsage `json:"usage"`
		}
		if json.Unmarshal(b, &c) != nil {
			return
		}
		if c.Model != "" {
			r.u.Model = c.Model
		}
		for _, ch := range c.Choices {
			if ch.FinishReason != "" {
				r.u.Stop = mapFinish(ch.FinishReason)
			}
		}
		if c.Usage != nil && (c.Usage.PromptTokens > 0 || c.Usage.CompletionTokens > 0) {
			r.u.Usage, r.u.Reported = Usage{Input: c.Usage.PromptTokens, Output: c.Usage.CompletionTokens}, true
		}
	case "gemini":
		var g genai.GenerateContentResponse
		if json.Unmarshal(b, &g) != nil {
			return
		}
		if g.ModelVersion != "" {
			r.u.Model = g.ModelVersion
		}
		if g.UsageMetadata != nil {
			r.u.Usage, r.u.Reported = geminiUsage(g.UsageMetadata), true
		}
		for _, c := range g.Candidates {
			if c == nil {
				continue
			}
			if c.Content != nil {
				for _, p := range c.Content.Parts {
					if p != nil && p.FunctionCall != nil {
						r.tool = true
					}
				}
			}
			switch c.FinishReason {
			case "", genai.FinishReasonUnspecified:
			case genai.FinishReasonStop:
				r.u.Stop = StopEnd
				if r.tool {
					r.u.Stop = StopToolUse
				}
			case genai.FinishReasonMaxTokens:
				r.u.Stop = StopMaxTokens
			default:
				r.u.Stop = "error"
			}
		}
	}
}

// anthropic reads a Messages event (its stream's message_start, message_delta, error) or a
// whole message; content events are not decoded (they carry no usage).
func (r *usageReader) anthropic(b []byte) {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &head) != nil {
		return
	}
	switch head.Type {
	case "message_start", "message_delta":
		// The stream's own reader (anthropicStream.event) keeps the running usage and stop.
		var e anthropic.MessageStreamEventUnion
		if json.Unmarshal(b, &e) != nil {
			return
		}
		if e.Type == "message_start" {
			if !e.Message.JSON.Usage.Valid() {
				return
			}
			r.u.Model = string(e.Message.Model)
			r.u.Usage, r.u.Reported = Usage{Input: anthropicInput(e.Message.Usage), Output: e.Message.Usage.OutputTokens}, true
			return
		}
		if e.Delta.StopReason != "" {
			r.u.Stop = mapStopReason(string(e.Delta.StopReason))
		}
		if e.Usage.OutputTokens > 0 { // cumulative for the message
			r.u.Usage.Output, r.u.Reported = e.Usage.OutputTokens, true
		}
		if in := e.Usage.InputTokens + e.Usage.CacheReadInputTokens + e.Usage.CacheCreationInputTokens; in > 0 {
			r.u.Usage.Input = in
		}
	case "message":
		var m anthropic.Message
		if json.Unmarshal(b, &m) != nil || !m.JSON.Usage.Valid() {
			return
		}
		r.u.Model = string(m.Model)
		r.u.Usage, r.u.Reported = Usage{Input: anthropicInput(m.Usage), Output: m.Usage.OutputTokens}, true
		if m.StopReason != "" {
			r.u.Stop = mapStopReason(string(m.StopReason))
		}
	case "error":
		r.u.Stop = "error"
	}
}

// responses reads a Responses stream event (response.created, .completed, .incomplete,
// .failed carry the response) or a whole response.
func (r *usageReader) responses(b []byte) {
	type response struct {
		Model  string                   `json:"model"`
		Status string                   `json:"status"`
		Usage  *responses.ResponseUsage `json:"usage"`
		Output []struct {
			Type string `json:"type"`
		} `json:"output"`
	}
	var e struct {
		Type     string    `json:"type"`
		Object   string    `json:"object"`
		Response *response `json:"response"`
		response
	}
	if json.Unmarshal(b, &e) != nil {
		return
	}
	resp := e.Response
	switch {
	case e.Object == "response":
		resp = &e.response
	case e.Type == "error":
		r.u.Stop = "error"
		return
	case resp == nil:
		return
	}
	if resp.Model != "" {
		r.u.Model = resp.Model
	}
	if resp.Usage != nil {
		r.u.Usage, r.u.Reported = Usage{Input: resp.Usage.InputTokens, Output: resp.Usage.OutputTokens}, true
	}
	switch resp.Status {
	case "completed":
		r.u.Stop = StopEnd
		for _, o := range resp.Output {
			if o.Type == "function_call" || o.Type == "custom_tool_call" || o.Type == "local_shell_call" {
				r.u.Stop = StopToolUse
			}
		}
	case "incomplete":
		r.u.Stop = StopMaxTokens
	case "failed":
		r.u.Stop = "error"
	}
}

// PriceOf is the configured price of l (a models: route naming its provider and model, with a
// price), for a relayed call, whose model the agent chose.
func (r *Router) PriceOf(l Link) (Price, bool) {
	res := Resolution{Link: l}
	r.price(&res)
	p, ok := res.Prices[l]
	return p, ok
}
