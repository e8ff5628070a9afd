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
		return NewOpenAI(OpenAIConfig{Name: name, BaseURL: c.BaseURL, Model: c.Model, KeyEnv: c.KeyEnv, Getenv: getenv,
			HTTPClient: clientFor(c, getenv, nil)})
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
		option.WithMaxRetries(0), // the runtime retries, so each attempt is recorded
		option.WithMiddleware(checkResponse(p.c.Name))}
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
	if req.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.ReasoningEffort)
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
	return &openaiStream{p: p, ctx: ctx, st: st, byIndex: map[int64]int{}}, nil
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
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: echoArgs(c.Args)}}})
			}
			// DeepSeek's thinking mode wants a tool-calling turn's reasoning back, in the field it
			// came in; a server that did not send reasoning_content never gets it.
			if len(m.ToolCalls) > 0 {
				var rc strings.Builder
				for _, t := range m.Thinking {
					if t.Signature == SignatureReasoningContent {
						rc.WriteString(t.Text)
					}
				}
				if rc.Len() > 0 {
					a.SetExtraFields(map[string]any{"reasoning_content": rc.String()})
				}
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}

// echoArgs is a tool call's arguments as sent back. Servers that rebuild the call (Ollama
// parses them into an object) reject the whole request when one is not a JSON object, so
// empty arguments go back as {} and malformed ones, which the model was told about in a tool
// error, as {"_raw": text}.
func echoArgs(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return args
	}
	b, _ := json.Marshal(map[string]string{"_raw": args})
	return string(b)
}

// openaiStream turns chunks into deltas. Tool-call fragments are assembled and emitted whole,
// in the order the calls began, when the stream ends.
//
// Servers differ in how they frame a call: OpenAI streams fragments under a per-call index
// with the id on the first; Ollama's legacy parser sends every call whole with index 0, and
// older Ollama omits index. So a fragment with a name and an id other than its index's call
// starts a new call; one without index continues the latest call.
//
// Reasoning arrives as reasoning_content (DeepSeek, older vLLM), reasoning (Ollama,
// OpenRouter, newer vLLM; some send both with the same text, so one is read), typed thinking
// parts of an array content (Mistral's magistral), or <think>...</think> at the start of the
// content (DeepSeek R1 on Together and similar). All become thinking deltas; a reasoning_content
// block is closed with SignatureReasoningContent so it can be sent back.
type openaiStream struct {
	p       *openaiProvider
	ctx     context.Context
	st      *ssestream.Stream[openai.ChatCompletionChunk]
	pending []Delta
	err     error // returned once pending is drained
	calls   []*ToolCall
	byIndex map[int64]int // the latest call of each index
	think   thinkSplitter
	rcOpen  bool // a reasoning_content block is open
	finish  string
	done    bool
}

func (s *openaiStream) Close() error { return s.st.Close() }

func (s *openaiStream) Next() (Delta, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return Delta{}, s.err
		}
		if s.done {
			return Delta{}, io.EOF
		}
		if !s.st.Next() {
			s.end(s.st.Err())
			continue
		}
		if c := s.st.Current(); c.Object == "error" {
			// vLLM's error shape sent as a chunk of its own, without the "error" key the SDK
			// looks for.
			s.end(&ssestream.StreamError{Message: "error chunk", Event: ssestream.Event{Data: []byte(c.RawJSON())}})
		} else {
			s.chunk(c)
		}
	}
	d := s.pending[0]
	s.pending = s.pending[1:]
	return d, nil
}

// end handles the end of the event stream: an error (after any usage it reported), a cut,
// or the final tool calls and stop.
func (s *openaiStream) end(err error) {
	if err != nil {
		s.err = s.wrap(err)
		return
	}
	s.closeReasoning()
	s.emit(s.think.flush())
	switch s.finish {
	case "":
		s.err = &Error{Provider: s.p.c.Name, Transient: true, Msg: "stream ended mid-message"}
		return
	case "error": // OpenRouter's finish_reason when the upstream failed without an error field
		s.err = &Error{Provider: s.p.c.Name, Transient: true, Msg: `the server ended the reply with finish_reason "error"`}
		return
	}
	s.done = true
	for _, c := range s.calls {
		s.pending = append(s.pending, Delta{Kind: DeltaToolCall, ToolCall: *c})
	}
	s.pending = append(s.pending, Delta{Kind: DeltaStop, StopReason: mapFinish(s.finish), StopDetail: fmt.Sprintf("finish_reason %q", s.finish)})
}

func (s *openaiStream) emit(ds []Delta) { s.pending = append(s.pending, ds...) }

// closeReasoning ends an open reasoning_content block, marking it to be sent back.
func (s *openaiStream) closeReasoning() {
	if s.rcOpen {
		s.rcOpen = false
		s.pending = append(s.pending, Delta{Kind: DeltaThinking, Signature: SignatureReasoningContent})
	}
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
		switch {
		case extra.ReasoningContent != "":
			s.rcOpen = true
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Text: extra.ReasoningContent})
		case extra.Reasoning != "":
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Text: extra.Reasoning})
		}
		text, thinking := contentParts(ch.Delta.JSON.Content.Raw(), ch.Delta.Content)
		if thinking != "" {
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Text: thinking})
		}
		if text != "" || len(ch.Delta.ToolCalls) > 0 {
			s.closeReasoning()
		}
		if text != "" {
			s.emit(s.think.feed(text))
		}
		for _, tc := range ch.Delta.ToolCalls {
			s.toolCall(tc)
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
}

// toolCall adds one tool-call fragment (see openaiStream for the framing rules).
func (s *openaiStream) toolCall(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	hasIndex := tc.JSON.Index.Valid()
	pos, known := -1, false
	if hasIndex {
		pos, known = s.byIndex[tc.Index]
	} else if len(s.calls) > 0 {
		pos, known = len(s.calls)-1, true
	}
	if known {
		if cur := s.calls[pos]; tc.ID != "" && cur.ID != "" && tc.ID != cur.ID && tc.Function.Name != "" {
			known = false // a new call that reuses the index (Ollama)
		}
	}
	if !known {
		s.calls = append(s.calls, &ToolCall{})
		pos = len(s.calls) - 1
		if hasIndex {
			s.byIndex[tc.Index] = pos
		}
	}
	call := s.calls[pos]
	if call.ID == "" {
		call.ID = tc.ID
		if call.ID == "" {
			call.ID = fmt.Sprintf("call_%d", pos)
		}
	}
	if tc.Function.Name != "" {
		call.Name = tc.Function.Name
	}
	call.Args += tc.Function.Arguments
}

// contentParts splits a delta's content into answer text and thinking. Content is usually a
// string; Mistral's magistral sends an array of typed parts:
// [{"type":"thinking","thinking":[{"type":"text","text":"..."}]},{"type":"text","text":"..."}].
func contentParts(raw, content string) (text, thinking string) {
	raw = strings.TrimSpace(raw)
	if !strings.HasPrefix(raw, "[") {
		return content, ""
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return content, ""
	}
	var tb, kb strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			tb.WriteString(p.Text)
		case "thinking":
			var s string
			if json.Unmarshal(p.Thinking, &s) == nil {
				kb.WriteString(s)
				continue
			}
			var inner []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(p.Thinking, &inner)
			for _, in := range inner {
				kb.WriteString(in.Text)
			}
		}
	}
	return tb.String(), kb.String()
}

// thinkSplitter moves a <think>...</think> block at the start of the content into thinking
// deltas. The tags may be split across chunks, so a tail that could still become a tag is
// held back. Only a block that opens the content counts: later tags are answer text (the
// model may be writing about them).
type thinkSplitter struct {
	state int // 0: nothing but white space yet, 1: inside <think>, 2: after </think>, 3: answer
	held  string
}

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

func (t *thinkSplitter) feed(s string) []Delta {
	var out []Delta
	s = t.held + s
	t.held = ""
	for s != "" {
		switch t.state {
		case 0:
			trimmed := strings.TrimLeft(s, " \t\r\n")
			switch {
			case strings.HasPrefix(trimmed, thinkOpen):
				t.state, s = 1, trimmed[len(thinkOpen):]
			case strings.HasPrefix(thinkOpen, trimmed): // "", "<", "<th", ...: wait for more
				t.held = s
				return out
			default:
				t.state = 3
			}
		case 1:
			if i := strings.Index(s, thinkClose); i >= 0 {
				if i > 0 {
					out = append(out, Delta{Kind: DeltaThinking, Text: s[:i]})
				}
				t.state, s = 2, s[i+len(thinkClose):]
				continue
			}
			keep := partialSuffix(s, thinkClose)
			if len(s) > keep {
				out = append(out, Delta{Kind: DeltaThinking, Text: s[:len(s)-keep]})
			}
			t.held = s[len(s)-keep:]
			return out
		case 2: // the white space between </think> and the answer is neither
			if s = strings.TrimLeft(s, " \t\r\n"); s != "" {
				t.state = 3
			}
		default:
			return append(out, Delta{Kind: DeltaText, Text: s})
		}
	}
	return out
}

// flush yields what is held back at the end of the content.
func (t *thinkSplitter) flush() []Delta {
	s := t.held
	t.held = ""
	switch {
	case s == "":
		return nil
	case t.state == 1:
		return []Delta{{Kind: DeltaThinking, Text: s}}
	case strings.TrimSpace(s) == "": // white space alone is no answer
		return nil
	}
	return []Delta{{Kind: DeltaText, Text: s}}
}

// partialSuffix is the length of the longest end of s that begins tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if s[len(s)-n:] == tag[:n] {
			return n
		}
	}
	return 0
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

// wrap turns SDK and transport errors into *Error (context errors pass through). An error
// chunk in the middle of a stream (OpenAI, vLLM, OpenRouter) is classified by its own code
// or type; without one it counts as transient, since the stream had begun well. Usage the
// chunk reports is emitted before the error, so the failed attempt's tokens are counted.
func (s *openaiStream) wrap(err error) error {
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		var chunk struct {
			Usage *openai.CompletionUsage `json:"usage"`
		}
		if json.Unmarshal(se.Event.Data, &chunk) == nil && chunk.Usage != nil && (chunk.Usage.PromptTokens > 0 || chunk.Usage.CompletionTokens > 0) {
			s.pending = append(s.pending, Delta{Kind: DeltaUsage, Usage: Usage{Input: chunk.Usage.PromptTokens, Output: chunk.Usage.CompletionTokens}})
		}
		body, ok := parseServerError(se.Event.Data)
		if !ok {
			return &Error{Provider: s.p.c.Name, Transient: true, Msg: "error in the stream: " + clip(string(se.Event.Data), 300)}
		}
		return &Error{Provider: s.p.c.Name, Transient: transientError(0, body, true), Msg: body.text()}
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) { // checkResponse turns HTTP errors into *Error first; kept for safety
		var body serverError
		if raw := apiErr.RawJSON(); raw != "" {
			body, _ = parseServerError([]byte(`{"error":` + raw + `}`))
		}
		msg := body.text()
		if msg == "" {
			msg = apiErr.Error()
		}
		return &Error{Provider: s.p.c.Name, Status: apiErr.StatusCode, Transient: transientError(apiErr.StatusCode, body, false), Msg: msg}
	}
	return &Error{Provider: s.p.c.Name, Transient: true, Msg: "transport: " + err.Error(), Err: err}
}
