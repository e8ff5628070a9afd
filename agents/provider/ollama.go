package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// OllamaConfig configures Ollama's native chat API, the one API of Ollama that takes the
// context size per request: the OpenAI-compatible /v1/chat/completions ignores num_ctx, so a
// model there runs with the server's default context (2048 or 4096 tokens on many installs)
// and Ollama truncates a longer prompt without saying so.
//
// The wire format, as the adapter relies on it (Ollama's api/types.go, server/routes.go and
// docs/api/{streaming,errors,usage}.mdx):
//
//   - Request: POST {base_url}/api/chat, a JSON body {model, messages, tools, stream: true,
//     options: {num_ctx, temperature, num_predict}, think}. messages[] have role system, user,
//     assistant or tool and a string content; an assistant message carries tool_calls
//     [{id?, function: {name, arguments}}] whose arguments is a JSON object (Ollama decodes
//     it as one and answers 400 to the whole request when it is a string); a tool result
//     carries tool_name (and tool_call_id, which newer servers read and older ones ignore).
//     tools are [{type: "function", function: {name, description, parameters}}]. think is
//     left out unless the route sets reasoning_effort: Ollama turns thinking on by default
//     for models that can think and answers 400 "does not support thinking" to think: true
//     on a model that cannot, so leaving it out gets thinking wherever there is some.
//   - Response: NDJSON (application/x-ndjson), one object per line: {model, created_at,
//     message: {role, content, thinking, tool_calls}, done: false}, each line a fragment of
//     text or thinking, or whole tool calls (one or several per line, over one or several
//     lines). The last line has done: true, done_reason ("stop", or "length" at num_predict
//     or the end of the context) and the counts prompt_eval_count (input tokens) and
//     eval_count (output). A turn with tool calls still ends with "stop". Servers since
//     late 2025 give each call an id ("call_…"); older ones give none, and the adapter makes
//     up ollama_call_<turn>_<n>, which it never sends back. Before Ollama separated thinking
//     (0.9), a thinking model's content opened with <think>…</think>, which becomes thinking
//     here too.
//   - Errors: a status and {"error": "text"}: 404 "model 'x' not found" (wraps
//     ErrModelUnavailable, so a route's fallbacks take over), 400 for a malformed request or
//     a model without tool support, 429, 500, 502 (a cloud model out of reach), 503 (the
//     queue is full). An error after the stream began arrives as a line {"error": "text"}
//     with the status already sent as 200.
type OllamaConfig struct {
	Name string // recorded in the session; default "ollama"
	// BaseURL is the server's root, default http://localhost:11434. A trailing /v1 (a base_url
	// written for the OpenAI-compatible endpoint) is dropped.
	BaseURL string
	Model   string // used when Request.Model is "" or an alias
	// KeyEnv names the variable holding a key, sent as a bearer token (a hosted or proxied
	// Ollama); "" = no key, which a local Ollama needs.
	KeyEnv string
	Getenv func(string) string
	// NumCtx is sent as options.num_ctx on every request when > 0.
	NumCtx     int
	HTTPClient *http.Client
}

// DefaultOllamaBaseURL is where Ollama listens unless told otherwise.
const DefaultOllamaBaseURL = "http://localhost:11434"

// ollamaRoot is the server root a base_url names: without a trailing slash or the /v1 of the
// OpenAI-compatible endpoint; "" is DefaultOllamaBaseURL.
func ollamaRoot(base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		return DefaultOllamaBaseURL
	}
	return strings.TrimRight(strings.TrimSuffix(base, "/v1"), "/")
}

type ollamaProvider struct {
	c    OllamaConfig
	root string
}

// NewOllama returns a provider for Ollama's native chat API.
func NewOllama(c OllamaConfig) (Provider, error) {
	if c.Name == "" {
		c.Name = "ollama"
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.HTTPClient == nil {
		c.HTTPClient = http.DefaultClient
	}
	if c.NumCtx < 0 {
		return nil, fmt.Errorf("%s: num_ctx %d is negative (0 = the server's default)", c.Name, c.NumCtx)
	}
	root := ollamaRoot(c.BaseURL)
	if u, err := url.Parse(root); err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("%s: base_url %q is not an absolute URL (Ollama's is %s)", c.Name, c.BaseURL, DefaultOllamaBaseURL)
	}
	return &ollamaProvider{c: c, root: root}, nil
}

func init() {
	factories["ollama"] = func(name string, c ProviderConfig, getenv func(string) string) (Provider, error) {
		return NewOllama(OllamaConfig{Name: name, BaseURL: c.BaseURL, Model: c.Model, KeyEnv: c.KeyEnv,
			Getenv: getenv, NumCtx: c.NumCtx, HTTPClient: clientFor(c, getenv, nil)})
	}
}

func (p *ollamaProvider) Name() string { return p.c.Name }

// The request body of /api/chat.
type (
	ollamaRequest struct {
		Model    string          `json:"model"`
		Messages []ollamaMessage `json:"messages"`
		Tools    []ollamaTool    `json:"tools,omitempty"`
		Stream   bool            `json:"stream"`
		Options  map[string]any  `json:"options,omitempty"`
		Think    string          `json:"think,omitempty"`
	}
	ollamaMessage struct {
		Role       string           `json:"role"`
		Content    string           `json:"content"`
		ToolCalls  []ollamaToolCall `json:"tool_calls,omitempty"`
		ToolName   string           `json:"tool_name,omitempty"`
		ToolCallID string           `json:"tool_call_id,omitempty"`
	}
	ollamaToolCall struct {
		ID       string `json:"id,omitempty"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	ollamaTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	}
)

// ollamaCallPrefix starts the ids the adapter makes up for calls that came without one.
const ollamaCallPrefix = "ollama_call_"

func (p *ollamaProvider) Stream(ctx context.Context, req Request) (Stream, error) {
	key := ""
	if p.c.KeyEnv != "" {
		if key = strings.TrimSpace(p.c.Getenv(p.c.KeyEnv)); key == "" {
			return nil, &Error{Provider: p.c.Name, Msg: fmt.Sprintf("no API key: set the environment variable %s (a local Ollama needs none: drop key_env)", p.c.KeyEnv)}
		}
	}
	model := req.Model
	if model == "" || isAlias(model) {
		model = p.c.Model
	}
	if model == "" {
		return nil, &Error{Provider: p.c.Name, Msg: "no model: set providers." + p.c.Name + ".model or route one under models:"}
	}
	body := ollamaRequest{Model: model, Messages: ollamaMessages(req), Stream: true, Think: ollamaThink(req.ReasoningEffort)}
	opts := map[string]any{}
	if p.c.NumCtx > 0 {
		opts["num_ctx"] = p.c.NumCtx
	}
	if req.Temperature != nil {
		opts["temperature"] = *req.Temperature
	}
	if req.MaxTokens > 0 {
		opts["num_predict"] = req.MaxTokens
	}
	if len(opts) > 0 {
		body.Options = opts
	}
	for _, t := range req.Tools {
		var tool ollamaTool
		tool.Type = "function"
		tool.Function.Name, tool.Function.Description, tool.Function.Parameters = t.Name, t.Description, t.Parameters
		if tool.Function.Parameters == nil {
			tool.Function.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		body.Tools = append(body.Tools, tool)
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, &Error{Provider: p.c.Name, Msg: "encoding the request: " + err.Error()}
	}
	endpoint := p.root + "/api/chat"
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(data))
	if err != nil {
		return nil, &Error{Provider: p.c.Name, Msg: err.Error()}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/x-ndjson")
	if key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := p.c.HTTPClient.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Error{Provider: p.c.Name, Transient: true, Err: err,
			Msg: fmt.Sprintf("cannot reach Ollama at %s (is `ollama serve` running?): %v", p.root, err)}
	}
	if res.StatusCode != http.StatusOK {
		errBody, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		res.Body.Close()
		return nil, p.httpError(res, errBody, endpoint)
	}
	return &ollamaStream{p: p, ctx: ctx, body: res.Body, br: bufio.NewReaderSize(res.Body, 64<<10), turn: req.Turn}, nil
}

// ollamaThink maps a route's reasoning_effort onto think's levels; "" leaves think out.
func ollamaThink(effort string) string {
	switch effort {
	case "":
		return ""
	case "minimal":
		return "low"
	}
	return effort
}

// httpError reads an error answer. A 404 that is not Ollama's {"error": …} means no Ollama
// API answers at base_url; a missing model, or one that cannot chat or call tools, wraps
// ErrModelUnavailable so a route's fallbacks can take over.
func (p *ollamaProvider) httpError(res *http.Response, body []byte, endpoint string) *Error {
	e := httpError(p.c.Name, res, body)
	_, ollamaShaped := parseServerError(body)
	msg := strings.ToLower(e.Msg)
	switch {
	case res.StatusCode == http.StatusNotFound && !ollamaShaped:
		e.Msg = fmt.Sprintf("no Ollama API at %s (%s): is base_url the server's root, like %s?", endpoint, e.Msg, DefaultOllamaBaseURL)
	case res.StatusCode == http.StatusNotFound && strings.Contains(msg, "not found"):
		e.Err = ErrModelUnavailable // Error() shows Msg; errors.Is finds this
		if !strings.Contains(msg, "pull") {
			e.Msg += " (ollama pull it, or pick one of `ollama list`)"
		}
	case res.StatusCode == http.StatusBadRequest && (strings.Contains(msg, "does not support tools") || strings.Contains(msg, "does not support chat")):
		e.Err = ErrModelUnavailable
	}
	return e
}

// ollamaMessages maps the conversation onto messages. Thinking is not sent back: Ollama
// reads it only for some model families, and summit keeps no signature to tell which.
func ollamaMessages(req Request) []ollamaMessage {
	var out []ollamaMessage
	if req.System != "" {
		out = append(out, ollamaMessage{Role: "system", Content: req.System})
	}
	names := map[string]string{} // call id -> tool name, for results without ToolName
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			out = append(out, ollamaMessage{Role: "user", Content: m.Text})
		case RoleAssistant:
			a := ollamaMessage{Role: "assistant", Content: m.Text}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				var tc ollamaToolCall
				tc.ID = ollamaID(c.ID)
				tc.Function.Name, tc.Function.Arguments = c.Name, ollamaArgs(c.Args)
				a.ToolCalls = append(a.ToolCalls, tc)
			}
			out = append(out, a)
		case RoleTool:
			name := m.ToolName
			if name == "" {
				name = names[m.ToolCallID]
			}
			out = append(out, ollamaMessage{Role: "tool", Content: m.Text, ToolName: name, ToolCallID: ollamaID(m.ToolCallID)})
		}
	}
	return out
}

// ollamaID is a call id as sent back: the server's own and other backends' ids go as they
// came; ids the adapter made up stay summit's.
func ollamaID(id string) string {
	if strings.HasPrefix(id, ollamaCallPrefix) {
		return ""
	}
	return id
}

// ollamaArgs is a call's arguments as the JSON object Ollama requires, key order kept.
// Empty arguments go as {}; malformed ones, which the model was told about in a tool error,
// as {"_raw": text}.
func ollamaArgs(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	var buf bytes.Buffer
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil && json.Compact(&buf, []byte(args)) == nil {
		return buf.Bytes()
	}
	b, _ := json.Marshal(map[string]string{"_raw": args})
	return b
}

// ollamaChunk is one line of the stream.
type ollamaChunk struct {
	Message *struct {
		Content   string           `json:"content"`
		Thinking  string           `json:"thinking"`
		ToolCalls []ollamaToolCall `json:"tool_calls"`
	} `json:"message"`
	Done            bool            `json:"done"`
	DoneReason      string          `json:"done_reason"`
	PromptEvalCount int64           `json:"prompt_eval_count"`
	EvalCount       int64           `json:"eval_count"`
	Error           json.RawMessage `json:"error"`
	Status          any             `json:"status"` // a proxy's; Ollama's own error lines have none
}

// maxOllamaLine bounds one line of the stream (a tool call writing a big file is one line).
const maxOllamaLine = 32 << 20

// ollamaStream turns the NDJSON lines into deltas: text and thinking as they come, each tool
// call whole as soon as its line arrives, and on the done line the usage and the stop.
type ollamaStream struct {
	p       *ollamaProvider
	ctx     context.Context
	body    io.ReadCloser
	br      *bufio.Reader
	turn    int
	lines   int // lines read
	calls   int
	think   thinkSplitter
	pending []Delta
	err     error // returned once pending is drained
	done    bool
}

func (s *ollamaStream) Close() error { return s.body.Close() }

func (s *ollamaStream) Next() (Delta, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return Delta{}, s.err
		}
		if s.done {
			return Delta{}, io.EOF
		}
		s.step()
	}
	d := s.pending[0]
	s.pending = s.pending[1:]
	return d, nil
}

// step reads and handles one line.
func (s *ollamaStream) step() {
	line, complete, err := s.readLine()
	if len(bytes.TrimSpace(line)) > 0 {
		s.lines++
		var c ollamaChunk
		if jerr := json.Unmarshal(line, &c); jerr != nil {
			s.fail(s.malformed(line, complete))
			return
		}
		s.chunk(c, line)
		if s.err != nil || s.done {
			return
		}
	}
	switch {
	case err == nil:
	case s.ctx.Err() != nil:
		s.fail(s.ctx.Err())
	case errors.Is(err, io.EOF):
		s.fail(&Error{Provider: s.p.c.Name, Transient: true, Msg: "stream ended mid-message (no line with done: true)"})
	case errors.Is(err, bufio.ErrBufferFull):
		s.fail(&Error{Provider: s.p.c.Name, Msg: fmt.Sprintf("a line of the stream is over %d MiB", maxOllamaLine>>20)})
	default:
		s.fail(&Error{Provider: s.p.c.Name, Transient: true, Msg: "transport: " + err.Error(), Err: err})
	}
}

func (s *ollamaStream) fail(err error) {
	s.err = err
	s.body.Close()
}

// readLine reads up to and including the next newline. complete is false for a last line the
// body ended without ending; err is bufio.ErrBufferFull for a line over maxOllamaLine.
func (s *ollamaStream) readLine() ([]byte, bool, error) {
	var line []byte
	for {
		part, err := s.br.ReadSlice('\n')
		line = append(line, part...)
		switch {
		case err == nil:
			return line, true, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return line, false, err
		case len(line) > maxOllamaLine:
			return nil, false, err
		}
	}
}

// malformed explains a line that is not JSON: on the first line, the server is not Ollama
// (a proxy's page, another API); a last line cut short is a stream cut, worth a retry.
func (s *ollamaStream) malformed(line []byte, complete bool) error {
	switch {
	case !complete:
		return &Error{Provider: s.p.c.Name, Transient: true, Msg: "stream cut in the middle of a line"}
	case s.lines == 1:
		return &Error{Provider: s.p.c.Name, Msg: fmt.Sprintf("the answer of %s/api/chat is not Ollama's stream (%s): is base_url the Ollama server's root?", s.p.root, firstBytes(line))}
	}
	return &Error{Provider: s.p.c.Name, Transient: true, Msg: "malformed line in the stream: " + firstBytes(line)}
}

func (s *ollamaStream) chunk(c ollamaChunk, line []byte) {
	if len(c.Error) > 0 && string(c.Error) != "null" {
		se, ok := parseServerError(line)
		msg := se.text()
		if !ok || msg == "" {
			msg = "error in the stream: " + clip(string(line), 300)
		}
		status, _ := c.Status.(float64)
		s.fail(&Error{Provider: s.p.c.Name, Status: int(status), Transient: transientError(int(status), se, true), Msg: msg})
		return
	}
	if c.Message == nil && !c.Done {
		if s.lines == 1 {
			s.fail(&Error{Provider: s.p.c.Name, Msg: fmt.Sprintf("the answer of %s/api/chat is not Ollama's stream (%s): is base_url the Ollama server's root?", s.p.root, firstBytes(line))})
		}
		return
	}
	if m := c.Message; m != nil {
		if m.Thinking != "" {
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Text: m.Thinking})
		}
		if m.Content != "" {
			s.pending = append(s.pending, s.think.feed(m.Content)...)
		}
		for _, tc := range m.ToolCalls {
			s.toolCall(tc)
		}
	}
	if c.Done {
		s.end(c)
	}
}

func (s *ollamaStream) toolCall(tc ollamaToolCall) {
	id := tc.ID
	if id == "" {
		// Deterministic, so a replayed turn gets the same ids; unique within the loop.
		id = fmt.Sprintf("%s%d_%d", ollamaCallPrefix, s.turn, s.calls)
	}
	s.calls++
	args := "{}"
	if raw := bytes.TrimSpace(tc.Function.Arguments); len(raw) > 0 && string(raw) != "null" {
		var text string
		var buf bytes.Buffer
		switch {
		case raw[0] == '"' && json.Unmarshal(raw, &text) == nil: // a proxy that sends OpenAI's string
			args = text
		case json.Compact(&buf, raw) == nil:
			args = buf.String()
		}
	}
	s.pending = append(s.pending, Delta{Kind: DeltaToolCall, ToolCall: ToolCall{ID: id, Name: tc.Function.Name, Args: args}})
}

// end handles the done line: what the splitter held back, the usage, the stop.
func (s *ollamaStream) end(c ollamaChunk) {
	s.pending = append(s.pending, s.think.flush()...)
	if c.PromptEvalCount > 0 || c.EvalCount > 0 {
		s.pending = append(s.pending, Delta{Kind: DeltaUsage, Usage: Usage{Input: c.PromptEvalCount, Output: c.EvalCount}})
	}
	stop := Delta{Kind: DeltaStop, StopReason: StopEnd, StopDetail: fmt.Sprintf("done_reason %q", c.DoneReason)}
	if c.DoneReason == "" {
		stop.StopDetail = "done, with no done_reason" // servers before May 2024
	}
	switch {
	case c.DoneReason == "length":
		stop.StopReason = StopMaxTokens
		stop.StopDetail += ": the reply reached num_predict or filled the context (num_ctx)"
	case s.calls > 0:
		stop.StopReason = StopToolUse
	}
	s.pending = append(s.pending, stop)
	s.done = true
	s.body.Close()
}
