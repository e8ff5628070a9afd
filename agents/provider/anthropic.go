package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// AnthropicConfig configures the Anthropic Messages API backend.
type AnthropicConfig struct {
	Name    string // recorded in the session; default "anthropic"
	BaseURL string // "" = the SDK's default (https://api.anthropic.com)
	Model   string // used when Request.Model is "" or an alias; default DefaultAnthropicModel
	KeyEnv  string // default ANTHROPIC_API_KEY
	Getenv  func(string) string
	// ThinkingBudget > 0 enables extended thinking with that many tokens. The API then
	// requires the default temperature, so Request.Temperature is not sent.
	ThinkingBudget int
	HTTPClient     *http.Client
}

// DefaultAnthropicModel is used when neither the request nor the configuration names one.
const DefaultAnthropicModel = string(anthropic.ModelClaudeSonnet4_5)

// defaultMaxTokens is sent when the request leaves MaxTokens at 0: the Messages API requires
// max_tokens, unlike Chat Completions.
const defaultMaxTokens = 8192

type anthropicProvider struct{ c AnthropicConfig }

// NewAnthropic returns a provider for the Anthropic Messages API.
func NewAnthropic(c AnthropicConfig) (Provider, error) {
	if c.Name == "" {
		c.Name = "anthropic"
	}
	if c.KeyEnv == "" {
		c.KeyEnv = "ANTHROPIC_API_KEY"
	}
	if c.Model == "" {
		c.Model = DefaultAnthropicModel
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.ThinkingBudget < 0 {
		return nil, fmt.Errorf("%s: thinking_budget %d is negative", c.Name, c.ThinkingBudget)
	}
	if c.ThinkingBudget > 0 && c.ThinkingBudget < 1024 {
		return nil, fmt.Errorf("%s: thinking_budget %d is below the API's minimum of 1024", c.Name, c.ThinkingBudget)
	}
	return &anthropicProvider{c}, nil
}

func init() {
	factories["anthropic"] = func(name string, c ProviderConfig, getenv func(string) string) (Provider, error) {
		return NewAnthropic(AnthropicConfig{Name: name, BaseURL: c.BaseURL, Model: c.Model, KeyEnv: c.KeyEnv,
			Getenv: getenv, ThinkingBudget: c.ThinkingBudget, HTTPClient: clientFor(c, getenv, nil)})
	}
}

func (p *anthropicProvider) Name() string { return p.c.Name }

func (p *anthropicProvider) Stream(ctx context.Context, req Request) (Stream, error) {
	key := p.c.Getenv(p.c.KeyEnv)
	if key == "" {
		return nil, &Error{Provider: p.c.Name, Msg: fmt.Sprintf("no API key: set the environment variable %s", p.c.KeyEnv)}
	}
	opts := []option.RequestOption{option.WithAPIKey(key),
		option.WithMaxRetries(0), // the runtime retries, so each attempt is recorded
		option.WithMiddleware(checkResponse(p.c.Name))}
	if p.c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(p.c.BaseURL))
	}
	if p.c.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(p.c.HTTPClient))
	}
	client := anthropic.NewClient(opts...)
	model := req.Model
	if model == "" || isAlias(model) {
		model = p.c.Model
	}
	msgs, err := anthropicMessages(req.Messages)
	if err != nil {
		return nil, &Error{Provider: p.c.Name, Msg: err.Error()}
	}
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), Messages: msgs, MaxTokens: maxTokens}
	if req.System != "" {
		// Prompt caching: the system prompt, the tools (below) and the conversation so far
		// are marked as cache breakpoints, so each turn re-reads ~9 KB of prompt and tools
		// from the cache instead of paying for them again (the API allows four).
		params.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	cacheLastBlock(msgs)
	budget := p.c.ThinkingBudget
	if req.ThinkingBudget != nil {
		budget = *req.ThinkingBudget // the route's
		if budget > 0 && budget < 1024 {
			return nil, &Error{Provider: p.c.Name, Msg: fmt.Sprintf("thinking_budget %d is below the API's minimum of 1024", budget)}
		}
	}
	if b := int64(budget); b > 0 {
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(b)
		// max_tokens counts thinking too and must exceed the budget.
		params.MaxTokens = max(maxTokens, b+defaultMaxTokens)
	} else if req.Temperature != nil {
		params.Temperature = anthropic.Float(*req.Temperature)
	}
	for _, t := range req.Tools {
		schema := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range t.Parameters {
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				schema.Required = toStrings(v)
			default:
				schema.ExtraFields[k] = v
			}
		}
		tool := anthropic.ToolUnionParamOfTool(schema, t.Name)
		if t.Description != "" {
			tool.OfTool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, tool)
	}
	if n := len(params.Tools); n > 0 && params.Tools[n-1].OfTool != nil {
		params.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	st := client.Messages.NewStreaming(ctx, params)
	return &anthropicStream{p: p, ctx: ctx, st: st, blocks: map[int64]*block{}}, nil
}

// cacheLastBlock marks the last cacheable block of the conversation as a cache breakpoint:
// the next turn, which repeats this conversation and adds to it, reads it from the cache.
func cacheLastBlock(msgs []anthropic.MessageParam) {
	if len(msgs) == 0 {
		return
	}
	blocks := msgs[len(msgs)-1].Content
	for i := len(blocks) - 1; i >= 0; i-- {
		if cc := blocks[i].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
			return
		}
	}
}

func toStrings(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// anthropicMessages maps the conversation onto the Messages API. Tool results become
// tool_result blocks of a user message; consecutive tool results (and a user text following
// them) share one user message, since the API wants every result of a turn's tool calls in
// the single user message after it. Thinking blocks are echoed back only when signed (or
// redacted): the API rejects unsigned thinking, and thinking from another backend has none.
//
// The API rejects an empty text block anywhere ("text content blocks must be non-empty"), so
// none is ever sent: a tool that printed nothing reports noOutput, an empty user message is
// dropped (or, alone, sent as a placeholder), an assistant turn with only white space sends
// no text block.
func anthropicMessages(in []Message) ([]anthropic.MessageParam, error) {
	var out []anthropic.MessageParam
	appendUser := func(b anthropic.ContentBlockParamUnion) {
		if n := len(out); n > 0 && out[n-1].Role == anthropic.MessageParamRoleUser {
			out[n-1].Content = append(out[n-1].Content, b)
			return
		}
		out = append(out, anthropic.NewUserMessage(b))
	}
	for i, m := range in {
		switch m.Role {
		case RoleUser:
			text := m.Text
			if strings.TrimSpace(text) == "" {
				if n := len(out); n > 0 && out[n-1].Role == anthropic.MessageParamRoleUser {
					continue
				}
				text = "(empty message)"
			}
			appendUser(anthropic.NewTextBlock(text))
		case RoleTool:
			text := m.Text
			if strings.TrimSpace(text) == "" {
				text = noOutput
			}
			appendUser(anthropic.NewToolResultBlock(m.ToolCallID, text, m.IsError))
		case RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			for _, t := range m.Thinking {
				switch {
				case t.Redacted != "":
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(t.Redacted))
				case t.Signature != "" && t.Signature != SignatureReasoningContent && !IsGeminiSignature(t.Signature):
					// Only Anthropic's own signatures: another backend's (after a fallback)
					// would be rejected.
					blocks = append(blocks, anthropic.NewThinkingBlock(t.Signature, t.Text))
				}
			}
			if strings.TrimSpace(m.Text) != "" {
				text := m.Text
				if i == len(in)-1 {
					// The last message is the assistant's after a pause_turn, which the model
					// continues; the API refuses final assistant content ending in white space.
					text = strings.TrimRight(text, " \t\r\n")
				}
				blocks = append(blocks, anthropic.NewTextBlock(text))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, toolInput(c.Args), c.Name))
			}
			if len(blocks) == 0 {
				continue // an empty assistant turn is rejected by the API and says nothing
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// noOutput stands for the result of a tool that printed nothing. The API takes a tool_result
// without content but refuses an empty text block; a placeholder serves successes and errors
// alike, and tells the model the command ran and printed nothing.
const noOutput = "(no output)"

// toolInput is the tool_use input to echo back. The API needs an object; a call whose
// arguments were malformed (the model was told so by a tool error) is sent as {"_raw": text}.
func toolInput(args string) any {
	if strings.TrimSpace(args) == "" {
		return map[string]any{}
	}
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	return map[string]any{"_raw": args}
}

// block is a content block being streamed.
type block struct {
	kind string // text | thinking | redacted_thinking | tool_use
	id   string
	name string
	args strings.Builder
}

// anthropicStream turns Messages API events into deltas. A tool_use block is emitted whole
// at its content_block_stop, with the input_json_delta fragments joined.
type anthropicStream struct {
	p       *anthropicProvider
	ctx     context.Context
	st      *ssestream.Stream[anthropic.MessageStreamEventUnion]
	pending []Delta
	blocks  map[int64]*block
	usage   Usage
	stop    string
	done    bool
}

func (s *anthropicStream) Close() error { return s.st.Close() }

func (s *anthropicStream) Next() (Delta, error) {
	for len(s.pending) == 0 {
		if s.done {
			return Delta{}, io.EOF
		}
		if !s.st.Next() {
			if err := s.st.Err(); err != nil {
				return Delta{}, s.wrap(err)
			}
			return Delta{}, &Error{Provider: s.p.c.Name, Transient: true, Msg: "stream ended mid-message"}
		}
		s.event(s.st.Current())
	}
	d := s.pending[0]
	s.pending = s.pending[1:]
	return d, nil
}

func (s *anthropicStream) event(e anthropic.MessageStreamEventUnion) {
	switch e.Type {
	case "message_start":
		s.usage.Input = anthropicInput(e.Message.Usage)
		s.usage.Output = e.Message.Usage.OutputTokens
		// Reported now, not only at message_stop, so an attempt that fails mid-stream still
		// counts the input it was billed for.
		s.pending = append(s.pending, Delta{Kind: DeltaUsage, Usage: s.usage})
	case "content_block_start":
		cb := e.ContentBlock
		b := &block{kind: cb.Type, id: cb.ID, name: cb.Name}
		s.blocks[e.Index] = b
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				s.pending = append(s.pending, Delta{Kind: DeltaText, Text: cb.Text})
			}
		case "thinking":
			if cb.Thinking != "" {
				s.pending = append(s.pending, Delta{Kind: DeltaThinking, Text: cb.Thinking})
			}
		case "redacted_thinking":
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Redacted: cb.Data})
		}
	case "content_block_delta":
		b := s.blocks[e.Index]
		switch e.Delta.Type {
		case "text_delta":
			s.pending = append(s.pending, Delta{Kind: DeltaText, Text: e.Delta.Text})
		case "thinking_delta":
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Text: e.Delta.Thinking})
		case "signature_delta":
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Signature: e.Delta.Signature})
		case "input_json_delta":
			if b != nil {
				b.args.WriteString(e.Delta.PartialJSON)
			}
		}
	case "content_block_stop":
		b := s.blocks[e.Index]
		delete(s.blocks, e.Index)
		if b != nil && b.kind == "tool_use" {
			args := b.args.String()
			if args == "" {
				args = "{}" // a tool without parameters streams no input fragments
			}
			s.pending = append(s.pending, Delta{Kind: DeltaToolCall, ToolCall: ToolCall{ID: b.id, Name: b.name, Args: args}})
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			s.stop = string(e.Delta.StopReason)
		}
		// message_delta usage is cumulative for the message.
		if e.Usage.OutputTokens > 0 {
			s.usage.Output = e.Usage.OutputTokens
		}
		if in := e.Usage.InputTokens + e.Usage.CacheReadInputTokens + e.Usage.CacheCreationInputTokens; in > 0 {
			s.usage.Input = in
		}
		s.pending = append(s.pending, Delta{Kind: DeltaUsage, Usage: s.usage})
	case "message_stop":
		s.done = true
		s.pending = append(s.pending, Delta{Kind: DeltaStop, StopReason: mapStopReason(s.stop), StopDetail: fmt.Sprintf("stop_reason %q", s.stop)})
	}
}

// anthropicInput is a message's input tokens as billed: the uncached ones and the cache's
// reads and writes (the API counts them apart).
func anthropicInput(u anthropic.Usage) int64 {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

func mapStopReason(r string) string {
	switch r {
	case "tool_use":
		return StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return StopMaxTokens
	case "pause_turn":
		return StopPause // not an answer: the turn goes on when the content is sent back
	}
	return StopEnd // end_turn, stop_sequence, refusal
}

// wrap turns SDK and transport errors into *Error (context errors pass through). HTTP errors
// arrive as *Error from checkResponse; an `event: error` inside a stream that began well comes
// as the SDK's error with status 200 and is classified by its type (overloaded_error is
// transient, invalid_request_error is not).
func (s *anthropicStream) wrap(err error) error {
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		body, _ := parseServerError([]byte(apiErr.RawJSON()))
		status := apiErr.StatusCode
		if status == http.StatusOK {
			status = 0 // an error event inside a stream that began well
		}
		msg := body.text()
		if msg == "" {
			msg = http.StatusText(status)
		}
		e := &Error{Provider: s.p.c.Name, Status: status, Transient: transientError(status, body, true), Msg: msg}
		if apiErr.Response != nil {
			e.RetryAfter = retryAfter(status, apiErr.Response.Header, time.Now())
		}
		return e
	}
	return &Error{Provider: s.p.c.Name, Transient: true, Msg: "transport: " + err.Error(), Err: err}
}
