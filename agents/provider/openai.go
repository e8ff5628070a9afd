package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAIConfig configures an OpenAI-compatible Chat Completions backend (OpenAI, Ollama, vLLM,
// llama.cpp server, LM Studio, OpenRouter).
type OpenAIConfig struct {
	Name       string // recorded in the session, e.g. "openai", "ollama"
	BaseURL    string // e.g. https://api.openai.com/v1, http://localhost:11434/v1
	Model      string // used when Request.Model is ""
	KeyEnv     string // the variable holding the key; "" = no key (Ollama, llama.cpp)
	Getenv     func(string) string
	HTTPClient *http.Client
}

type openaiProvider struct{ c OpenAIConfig }

// NewOpenAI returns an OpenAI-compatible provider.
func NewOpenAI(c OpenAIConfig) (Provider, error) {
	if c.BaseURL == "" {
		return nil, errors.New("openai: base_url is required")
	}
	if c.Name == "" {
		c.Name = "openai"
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	return &openaiProvider{c}, nil
}

func init() {
	factories["openai"] = func(name string, c ProviderConfig, getenv func(string) string) (Provider, error) {
		return NewOpenAI(OpenAIConfig{Name: name, BaseURL: c.BaseURL, Model: c.Model, KeyEnv: c.KeyEnv, Getenv: getenv})
	}
}

func (p *openaiProvider) Name() string { return p.c.Name }

func (p *openaiProvider) Stream(ctx context.Context, req Request) (Stream, error) {
	key := "none" // the SDK insists on some key; local servers ignore it
	if p.c.KeyEnv != "" {
		if key = p.c.Getenv(p.c.KeyEnv); key == "" {
			return nil, &Error{Provider: p.c.Name, Msg: fmt.Sprintf("no API key: set the environment variable %s", p.c.KeyEnv)}
		}
	}
	opts := []option.RequestOption{option.WithBaseURL(p.c.BaseURL), option.WithAPIKey(key),
		option.WithMaxRetries(0)} // the runtime retries, so each attempt is recorded
	if p.c.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(p.c.HTTPClient))
	}
	client := openai.NewClient(opts...)
	model := req.Model
	if model == "" || isAlias(model) {
		model = p.c.Model
	}
	params := openai.ChatCompletionNewParams{Model: model, Messages: openaiMessages(req)}
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		// max_tokens rather than max_completion_tokens: every compatible server reads it.
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(t.Parameters)}))
	}
	st := client.Chat.Completions.NewStreaming(ctx, params)
	return &openaiStream{p: p, ctx: ctx, st: st, calls: map[int64]*ToolCall{}}, nil
}

func openaiMessages(req Request) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			out = append(out, openai.UserMessage(m.Text))
		case RoleTool:
			out = append(out, openai.ToolMessage(m.Text, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Text != "" {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Args}}})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}

// openaiStream turns chunks into deltas. Tool-call fragments are assembled by index and
// emitted whole, in index order, when the choice finishes.
type openaiStream struct {
	p       *openaiProvider
	ctx     context.Context
	st      *ssestream.Stream[openai.ChatCompletionChunk]
	pending []Delta
	calls   map[int64]*ToolCall
	finish  string
	done    bool
}

func (s *openaiStream) Close() error { return s.st.Close() }

func (s *openaiStream) Next() (Delta, error) {
	for len(s.pending) == 0 {
		if s.done {
			return Delta{}, io.EOF
		}
		if !s.st.Next() {
			if err := s.st.Err(); err != nil {
				return Delta{}, s.wrap(err)
			}
			if s.finish == "" {
				return Delta{}, &Error{Provider: s.p.c.Name, Transient: true, Msg: "stream ended mid-message"}
			}
			s.done = true
			s.flushCalls()
			s.pending = append(s.pending, Delta{Kind: DeltaStop, StopReason: mapFinish(s.finish)})
			continue
		}
		s.chunk(s.st.Current())
	}
	d := s.pending[0]
	s.pending = s.pending[1:]
	return d, nil
}

func (s *openaiStream) chunk(c openai.ChatCompletionChunk) {
	if c.Usage.TotalTokens > 0 || c.Usage.PromptTokens > 0 {
		s.pending = append(s.pending, Delta{Kind: DeltaUsage, Usage: Usage{Input: c.Usage.PromptTokens, Output: c.Usage.CompletionTokens}})
	}
	for _, ch := range c.Choices {
		var extra struct {
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		}
		if raw := ch.Delta.RawJSON(); raw != "" {
			_ = json.Unmarshal([]byte(raw), &extra)
		}
		if t := extra.ReasoningContent + extra.Reasoning; t != "" {
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Text: t})
		}
		if ch.Delta.Content != "" {
			s.pending = append(s.pending, Delta{Kind: DeltaText, Text: ch.Delta.Content})
		}
		for _, tc := range ch.Delta.ToolCalls {
			call := s.calls[tc.Index]
			if call == nil {
				call = &ToolCall{}
				s.calls[tc.Index] = call
			}
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Function.Name != "" {
				call.Name = tc.Function.Name
			}
			call.Args += tc.Function.Arguments
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
}

func (s *openaiStream) flushCalls() {
	idx := make([]int64, 0, len(s.calls))
	for i := range s.calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		c := *s.calls[i]
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i)
		}
		s.pending = append(s.pending, Delta{Kind: DeltaToolCall, ToolCall: c})
	}
	s.calls = map[int64]*ToolCall{}
}

func mapFinish(f string) string {
	switch f {
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopMaxTokens
	}
	return StopEnd
}

// wrap turns SDK and transport errors into *Error (context errors pass through).
func (s *openaiStream) wrap(err error) error {
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		return &Error{Provider: s.p.c.Name, Status: apiErr.StatusCode, Transient: TransientStatus(apiErr.StatusCode), Msg: msg}
	}
	return &Error{Provider: s.p.c.Name, Transient: true, Msg: "transport: " + err.Error(), Err: err}
}
