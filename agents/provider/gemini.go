package provider

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"
)

// GeminiConfig configures the Gemini API backend (Google AI Studio keys), through
// google.golang.org/genai.
//
// The wire format, as the adapter relies on it:
//
//   - Request: POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse with the key
//     in x-goog-api-key. contents[] alternate role "user" and "model"; tool results are
//     functionResponse parts {name, response: {"output"|"error": text}} of a user content,
//     one content for all the results of a turn (the API wants as many functionResponse parts
//     as the model turn had functionCall parts, in one content). Tools are
//     functionDeclarations with parametersJsonSchema (plain JSON Schema). thinkingConfig asks
//     for thought summaries (includeThoughts), so thinking is shown.
//   - Response: Server-Sent Events, each `data: {GenerateContentResponse}` ended by a blank
//     line (Google sends CRLF line ends; the SDK reads both). No [DONE]: the stream ends with
//     the connection, after a chunk whose candidate has finishReason. Each chunk's
//     candidates[0].content.parts[] holds text, thought text (thought: true), or a whole
//     functionCall {name, args object, id only on some models}; usageMetadata is cumulative
//     (candidatesTokenCount excludes thoughtsTokenCount, which is billed as output too). A
//     turn with function calls still ends with finishReason STOP.
//   - Thought signatures: any part may carry thoughtSignature (opaque bytes, base64 on the
//     wire), which must go back on the same part in later requests. Gemini 3 puts one on the
//     first functionCall of every model turn and answers 400 INVALID_ARGUMENT when a function
//     call of the current turn comes back without it; a text reply signs its last part, often
//     an empty text part of the final chunk. The adapter keeps each signature as a Thinking
//     block whose Signature says which part carried it (see geminiSigPrefix), so the runtime
//     stores it with no Gemini-specific field, and rebuilds the part on the next turn.
//   - Errors: {"error":{"code","message","status","details"}}, as the HTTP body or as a data
//     event mid-stream. status is the gRPC code name (RESOURCE_EXHAUSTED, UNAVAILABLE,
//     NOT_FOUND, INVALID_ARGUMENT, ...); a google.rpc.RetryInfo detail carries retryDelay.
//
// The SDK's own retries and its automatic stream continuation are switched off, so the
// runtime is the one place a request is repeated.
type GeminiConfig struct {
	Name    string // recorded in the session; default "gemini"
	BaseURL string // "" = https://generativelanguage.googleapis.com/ (a trailing /v1beta is read as the API version)
	Model   string // used when Request.Model is "" or an alias; default DefaultGeminiModel
	// KeyEnv names the variable holding the key. "" (or GEMINI_API_KEY) reads GEMINI_API_KEY,
	// then GOOGLE_API_KEY, the two names Google documents.
	KeyEnv string
	Getenv func(string) string
	// ThinkingBudget, when not 0, caps thinking tokens (-1 = the model decides). 0 leaves the
	// model's default; thought summaries are requested either way.
	ThinkingBudget int
	HTTPClient     *http.Client
}

// DefaultGeminiModel is used when neither the request nor the configuration names one: Google's
// alias for its current Flash model, which outlives any one version.
const DefaultGeminiModel = "gemini-flash-latest"

const defaultGeminiBaseURL = "https://generativelanguage.googleapis.com/"

// ErrModelUnavailable is wrapped by errors saying that the requested model does not exist or is
// not served to this key (Gemini's 404 NOT_FOUND "models/x is not found for API version
// v1beta, or is not supported for generateContent"). A fallback chain moves on to another
// model; retrying the same one cannot help.
var ErrModelUnavailable = errors.New("model not available")

// IsModelUnavailable reports whether err (or an error it wraps) is ErrModelUnavailable.
func IsModelUnavailable(err error) bool { return errors.Is(err, ErrModelUnavailable) }

type geminiProvider struct {
	c GeminiConfig

	mu     sync.Mutex
	key    string // the key client was built with
	client *genai.Client
}

// NewGemini returns a provider for the Gemini API.
func NewGemini(c GeminiConfig) (Provider, error) {
	if c.Name == "" {
		c.Name = "gemini"
	}
	if c.Model == "" {
		c.Model = DefaultGeminiModel
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.ThinkingBudget < -1 {
		return nil, fmt.Errorf("%s: thinking_budget %d is negative (-1 lets the model decide)", c.Name, c.ThinkingBudget)
	}
	if c.BaseURL != "" {
		if u, err := url.Parse(c.BaseURL); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%s: base_url %q is not an absolute URL", c.Name, c.BaseURL)
		}
	}
	return &geminiProvider{c: c}, nil
}

func init() {
	factories["gemini"] = func(name string, c ProviderConfig, getenv func(string) string) (Provider, error) {
		return NewGemini(GeminiConfig{Name: name, BaseURL: c.BaseURL, Model: c.Model, KeyEnv: c.KeyEnv,
			Getenv: getenv, ThinkingBudget: c.ThinkingBudget, HTTPClient: clientFor(c, getenv, nil)})
	}
}

func (p *geminiProvider) Name() string { return p.c.Name }

// apiKey reads the key when a request is made, never earlier.
func (p *geminiProvider) apiKey() (string, error) {
	names := []string{p.c.KeyEnv}
	if p.c.KeyEnv == "" || p.c.KeyEnv == "GEMINI_API_KEY" {
		names = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}
	}
	for _, n := range names {
		if k := strings.TrimSpace(p.c.Getenv(n)); k != "" {
			return k, nil
		}
	}
	return "", &Error{Provider: p.c.Name, Msg: "no API key: set the environment variable " + strings.Join(names, " or ")}
}

// apiVersionSuffix is an API version at the end of a base URL ("…/v1beta").
var apiVersionSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/(v\d+(?:alpha|beta)?\d*)/?$`) })

// clientFor returns the SDK client for key, built once per key. The SDK logs a warning with the
// standard logger whenever a client is built while both GEMINI_API_KEY and GOOGLE_API_KEY are
// set, so clients are not built per request.
func (p *geminiProvider) clientFor(ctx context.Context, key string) (*genai.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != nil && p.key == key {
		return p.client, nil
	}
	base, version := p.c.BaseURL, ""
	if base == "" {
		// Set explicitly so that GOOGLE_GEMINI_BASE_URL in the environment does not redirect
		// requests behind the configuration's back.
		base = defaultGeminiBaseURL
	} else if m := apiVersionSuffix().FindStringSubmatchIndex(base); m != nil {
		version, base = base[m[2]:m[3]], base[:m[0]]+"/"
	}
	hc := &http.Client{}
	if p.c.HTTPClient != nil {
		c := *p.c.HTTPClient
		hc = &c
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc.Transport = &geminiTransport{name: p.c.Name, next: rt}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:     key,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: version,
			// One attempt: the runtime retries, so each attempt is recorded.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)}},
	})
	if err != nil {
		return nil, &Error{Provider: p.c.Name, Msg: err.Error()}
	}
	p.client, p.key = client, key
	return client, nil
}

func (p *geminiProvider) Stream(ctx context.Context, req Request) (Stream, error) {
	key, err := p.apiKey()
	if err != nil {
		return nil, err
	}
	client, err := p.clientFor(ctx, key)
	if err != nil {
		return nil, err
	}
	model := req.Model
	if model == "" || isAlias(model) {
		model = p.c.Model
	}
	contents, err := geminiContents(req.Messages)
	if err != nil {
		return nil, &Error{Provider: p.c.Name, Msg: err.Error()}
	}
	cfg := &genai.GenerateContentConfig{
		// Continuation re-sends the request when a stream stops early; summit's loop decides.
		AutomaticContinuation: genai.Ptr(false),
		ThinkingConfig:        &genai.ThinkingConfig{IncludeThoughts: true},
	}
	budget := p.c.ThinkingBudget
	if req.ThinkingBudget != nil {
		budget = *req.ThinkingBudget // the route's
	}
	switch {
	case req.ThinkingBudget == nil && req.ReasoningEffort != "":
		// The route asks for an effort: Gemini 3's thinking level (a model takes a level or a
		// budget, not both).
		cfg.ThinkingConfig.ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(req.ReasoningEffort))
	case budget != 0:
		cfg.ThinkingConfig.ThinkingBudget = genai.Ptr(int32(budget))
	}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.Temperature != nil {
		cfg.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(req.MaxTokens)
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			fd := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Parameters) > 0 {
				fd.ParametersJsonSchema = t.Parameters
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, fd)
		}
		cfg.Tools = []*genai.Tool{tool}
	}
	body := &geminiBody{}
	seq := client.Models.GenerateContentStream(context.WithValue(ctx, geminiBodyKey{}, body), model, contents, cfg)
	next, stop := iter.Pull2(seq)
	return &geminiStream{p: p, ctx: ctx, next: next, stop: stop, body: body, turn: req.Turn}, nil
}

// Thought signatures travel in Thinking.Signature as geminiSigPrefix + where + base64, where
// is "thought:" (a signed thought part: Thinking.Text is its text), "text:" (the reply's text
// part) or "call:" + call id + ":" (that function call's part). Other backends must not send
// such blocks: the signature means nothing to them.
const geminiSigPrefix = "gemini:"

// IsGeminiSignature reports whether a Thinking signature holds a Gemini thought signature, which
// only the Gemini API can read.
func IsGeminiSignature(sig string) bool { return strings.HasPrefix(sig, geminiSigPrefix) }

func geminiSig(where string, sig []byte) string {
	return geminiSigPrefix + where + base64.StdEncoding.EncodeToString(sig)
}

// parseGeminiSig splits an encoded signature; ok is false for anything else.
func parseGeminiSig(s string) (kind, callID string, sig []byte, ok bool) {
	rest, found := strings.CutPrefix(s, geminiSigPrefix)
	if !found {
		return "", "", nil, false
	}
	kind, rest, found = strings.Cut(rest, ":")
	if !found {
		return "", "", nil, false
	}
	if kind == "call" {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			return "", "", nil, false
		}
		callID, rest = rest[:i], rest[i+1:]
	}
	sig, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(sig) == 0 || kind != "thought" && kind != "text" && kind != "call" {
		return "", "", nil, false
	}
	return kind, callID, sig, true
}

// geminiForeignSignature is Google's documented stand-in signature for function calls the model
// did not make itself (another backend's turns after a fallback): without any, Gemini 3
// refuses the request. Sent as these bytes, as the Go SDK's users do.
var geminiForeignSignature = []byte("skip_thought_signature_validator")

// geminiCallPrefix starts the ids the adapter makes up for calls that came without one. Those
// ids are summit's own and never sent back to the API.
const geminiCallPrefix = "gemini_call_"

// geminiContents maps the conversation onto contents. Consecutive tool results (and a user text
// following them) share one user content, which the API needs: a function-call turn must be
// answered by one content with a functionResponse for each call.
func geminiContents(in []Message) ([]*genai.Content, error) {
	var out []*genai.Content
	names := map[string]string{} // call id -> function name, for results without ToolName
	appendUser := func(p *genai.Part) {
		if n := len(out); n > 0 && out[n-1].Role == genai.RoleUser {
			out[n-1].Parts = append(out[n-1].Parts, p)
			return
		}
		out = append(out, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{p}})
	}
	for i, m := range in {
		switch m.Role {
		case RoleUser:
			text := m.Text
			if strings.TrimSpace(text) == "" {
				if n := len(out); n > 0 && out[n-1].Role == genai.RoleUser {
					continue
				}
				text = "(empty message)" // the API rejects a part without data
			}
			appendUser(&genai.Part{Text: text})
		case RoleTool:
			name := m.ToolName
			if name == "" {
				name = names[m.ToolCallID]
			}
			if name == "" {
				return nil, fmt.Errorf("message %d: the result of tool call %q names no tool, which Gemini requires", i, m.ToolCallID)
			}
			text := m.Text
			if strings.TrimSpace(text) == "" {
				text = noOutput
			}
			key := "output" // the keys the API documents for a function's result and its failure
			if m.IsError {
				key = "error"
			}
			fr := &genai.FunctionResponse{Name: name, Response: map[string]any{key: text}}
			if !strings.HasPrefix(m.ToolCallID, geminiCallPrefix) {
				fr.ID = m.ToolCallID
			}
			appendUser(&genai.Part{FunctionResponse: fr})
		case RoleAssistant:
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
			}
			if c := geminiModelContent(m); c != nil {
				out = append(out, c)
			}
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// geminiModelContent rebuilds a model turn: signed thought parts, the text, the function calls,
// each signature back on the part that carried it. Unsigned thinking is not sent: the API reads
// nothing from thought text without its signature, and thinking from other backends has none.
// A turn with calls but no Gemini signature at all (another backend made it) gets the stand-in
// signature on its first call; a text signature whose turn has no text goes on the first call.
// A Gemini turn whose calls came unsigned (Gemini 2.5 may sign only its first part) is sent
// as it came.
func geminiModelContent(m Message) *genai.Content {
	var parts []*genai.Part
	var textSig []byte
	callSig := map[string][]byte{}
	fromGemini := false
	for _, t := range m.Thinking {
		kind, id, sig, ok := parseGeminiSig(t.Signature)
		if !ok {
			continue
		}
		fromGemini = true
		switch kind {
		case "thought":
			parts = append(parts, &genai.Part{Thought: true, Text: t.Text, ThoughtSignature: sig})
		case "text":
			textSig = sig
		case "call":
			callSig[id] = sig
		}
	}
	if strings.TrimSpace(m.Text) != "" {
		parts = append(parts, &genai.Part{Text: m.Text, ThoughtSignature: textSig})
		textSig = nil
	}
	signed := false
	first := len(parts)
	for _, c := range m.ToolCalls {
		fc := &genai.FunctionCall{Name: c.Name, Args: geminiArgs(c.Args)}
		if !strings.HasPrefix(c.ID, geminiCallPrefix) {
			fc.ID = c.ID
		}
		p := &genai.Part{FunctionCall: fc}
		if sig, ok := callSig[c.ID]; ok {
			p.ThoughtSignature, signed = sig, true
		}
		parts = append(parts, p)
	}
	if len(m.ToolCalls) > 0 && !signed {
		switch {
		case textSig != nil:
			parts[first].ThoughtSignature = textSig
		case !fromGemini:
			parts[first].ThoughtSignature = geminiForeignSignature
		}
	}
	if len(parts) == 0 {
		return nil // an empty model turn says nothing, and a content needs a part
	}
	return &genai.Content{Role: genai.RoleModel, Parts: parts}
}

// geminiArgs is a call's arguments as the object the API wants. Malformed arguments (the model
// was told so by a tool error) go back as {"_raw": text}.
func geminiArgs(args string) map[string]any {
	if strings.TrimSpace(args) == "" {
		return map[string]any{}
	}
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return obj
	}
	return map[string]any{"_raw": args}
}

// geminiStream turns response chunks into deltas. Text and thought parts are emitted as they
// come; a function call arrives whole in one part and is emitted at once, after a thinking
// delta with its signature. The stop is decided when the stream ends: a function call makes
// STOP a tool_use.
type geminiStream struct {
	p       *geminiProvider
	ctx     context.Context
	next    func() (*genai.GenerateContentResponse, error, bool)
	stop    func()
	body    *geminiBody
	turn    int
	pending []Delta
	err     error // returned once pending is drained
	done    bool
	calls   int
	usage   Usage
	finish  genai.FinishReason
	message string // finishMessage; the SDK (v1.77.0) drops it for the Gemini API, so usually ""
}

func (s *geminiStream) Close() error {
	s.stop()
	return nil
}

func (s *geminiStream) Next() (Delta, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return Delta{}, s.err
		}
		if s.done {
			return Delta{}, io.EOF
		}
		resp, err, ok := s.next()
		switch {
		case !ok:
			s.end()
		case err != nil:
			s.err = s.wrap(err)
			s.stop()
		default:
			s.chunk(resp)
		}
	}
	d := s.pending[0]
	s.pending = s.pending[1:]
	return d, nil
}

func (s *geminiStream) chunk(r *genai.GenerateContentResponse) {
	if r == nil {
		return
	}
	if u := r.UsageMetadata; u != nil {
		usage := geminiUsage(u)
		if usage != s.usage {
			s.usage = usage
			s.pending = append(s.pending, Delta{Kind: DeltaUsage, Usage: usage})
		}
	}
	if f := r.PromptFeedback; f != nil && f.BlockReason != "" && len(r.Candidates) == 0 {
		msg := fmt.Sprintf("the prompt was blocked (blockReason %s)", f.BlockReason)
		if f.BlockReasonMessage != "" {
			msg += ": " + f.BlockReasonMessage
		}
		s.err = &Error{Provider: s.p.c.Name, Msg: msg}
		s.stop()
		return
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		return
	}
	c := r.Candidates[0] // one candidate is asked for
	if c.Content != nil {
		for _, part := range c.Content.Parts {
			s.part(part)
		}
	}
	if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
		s.finish, s.message = c.FinishReason, c.FinishMessage
	}
}

func (s *geminiStream) part(p *genai.Part) {
	if p == nil {
		return
	}
	sig := p.ThoughtSignature
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		id := fc.ID
		if id == "" {
			// Deterministic, so a replayed turn gets the same ids; unique within the loop.
			id = fmt.Sprintf("%s%d_%d", geminiCallPrefix, s.turn, s.calls)
		}
		s.calls++
		args := "{}"
		if len(fc.Args) > 0 {
			b, _ := json.Marshal(fc.Args)
			args = string(b)
		}
		if len(sig) > 0 {
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Signature: geminiSig("call:"+id+":", sig)})
		}
		s.pending = append(s.pending, Delta{Kind: DeltaToolCall, ToolCall: ToolCall{ID: id, Name: fc.Name, Args: args}})
	case p.Thought:
		d := Delta{Kind: DeltaThinking, Text: p.Text}
		if len(sig) > 0 {
			d.Signature = geminiSig("thought:", sig)
		}
		if d.Text != "" || d.Signature != "" {
			s.pending = append(s.pending, d)
		}
	default:
		if p.Text != "" {
			s.pending = append(s.pending, Delta{Kind: DeltaText, Text: p.Text})
		}
		if len(sig) > 0 {
			s.pending = append(s.pending, Delta{Kind: DeltaThinking, Signature: geminiSig("text:", sig)})
		}
	}
}

// geminiFinishes explains the finish reasons that end a reply without an answer. Those are not
// transient: the same request would be refused the same way.
var geminiFinishes = map[genai.FinishReason]string{
	genai.FinishReasonSafety:             "the reply was blocked by the safety filters",
	genai.FinishReasonRecitation:         "the reply was stopped for reciting training data",
	genai.FinishReasonLanguage:           "the reply was stopped: the language is not supported",
	genai.FinishReasonBlocklist:          "the reply was blocked for a forbidden term",
	genai.FinishReasonProhibitedContent:  "the reply was blocked for prohibited content",
	genai.FinishReasonSPII:               "the reply was blocked for sensitive personal information",
	genai.FinishReasonUnexpectedToolCall: "the model called a tool that was not declared",
	genai.FinishReasonTooManyToolCalls:   "the model made too many tool calls in a row",
}

// end handles the end of the event stream: the stop, or why there is none.
func (s *geminiStream) end() {
	s.stop()
	detail := fmt.Sprintf("finishReason %q", s.finish)
	why := func(text string) string {
		text = fmt.Sprintf("%s (finishReason %s)", text, s.finish)
		if m := strings.TrimSpace(s.message); m != "" {
			text += ": " + clip(m, 300)
		}
		return text
	}
	switch s.finish {
	case "":
		switch {
		case s.ctx.Err() != nil:
			s.err = s.ctx.Err()
		case s.body.failed() != nil:
			s.err = &Error{Provider: s.p.c.Name, Transient: true, Msg: "transport: " + s.body.failed().Error(), Err: s.body.failed()}
		default:
			s.err = &Error{Provider: s.p.c.Name, Transient: true, Msg: "stream ended mid-message (no finishReason)"}
		}
	case genai.FinishReasonStop:
		stop := StopEnd
		if s.calls > 0 {
			stop = StopToolUse
		}
		s.done = true
		s.pending = append(s.pending, Delta{Kind: DeltaStop, StopReason: stop, StopDetail: detail})
	case genai.FinishReasonMaxTokens:
		s.done = true // the runtime fails a turn cut at the limit, naming the detail
		s.pending = append(s.pending, Delta{Kind: DeltaStop, StopReason: StopMaxTokens, StopDetail: detail})
	case genai.FinishReasonMalformedFunctionCall:
		// The model wrote a call that does not parse; a new sample usually does better.
		s.err = &Error{Provider: s.p.c.Name, Transient: true, Msg: why("the model produced a malformed function call")}
	default:
		text, ok := geminiFinishes[s.finish]
		if !ok {
			text = "the reply ended without an answer"
		}
		s.err = &Error{Provider: s.p.c.Name, Msg: why(text)}
	}
}

// geminiUsage is a response's usageMetadata as Usage (cumulative over a stream): the prompt
// with its tool results, the reply with its thoughts.
func geminiUsage(u *genai.GenerateContentResponseUsageMetadata) Usage {
	return Usage{Input: int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount),
		Output: int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount)}
}

// wrap turns SDK and transport errors into *Error (context errors pass through). HTTP errors
// arrive as *Error from geminiTransport; an error event inside a stream that began well comes
// as the SDK's APIError; anything else (a cut connection, a malformed chunk) is transient.
func (s *geminiStream) wrap(err error) error {
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		return geminiAPIError(s.p.c.Name, ae)
	}
	var aep *genai.APIError
	if errors.As(err, &aep) && aep != nil {
		return geminiAPIError(s.p.c.Name, *aep)
	}
	if berr := s.body.failed(); berr != nil {
		err = berr
	}
	return &Error{Provider: s.p.c.Name, Transient: true, Msg: "transport: " + err.Error(), Err: err}
}

// geminiCodes says which gRPC status names a retry may cure.
var geminiCodes = map[string]bool{
	"RESOURCE_EXHAUSTED": true, "UNAVAILABLE": true, "INTERNAL": true, "DEADLINE_EXCEEDED": true,
	"ABORTED": true, "UNKNOWN": true,
	"INVALID_ARGUMENT": false, "FAILED_PRECONDITION": false, "PERMISSION_DENIED": false,
	"UNAUTHENTICATED": false, "NOT_FOUND": false, "OUT_OF_RANGE": false, "UNIMPLEMENTED": false,
	"ALREADY_EXISTS": false, "CANCELLED": false,
}

// geminiAPIError turns a Google error into an *Error with the server's own message: 429, 500 and
// 503 (UNAVAILABLE: "The model is overloaded") are transient, 400, 403 and 404 are not, and a
// 404 for the model wraps ErrModelUnavailable.
func geminiAPIError(name string, ae genai.APIError) *Error {
	status := strings.TrimSpace(ae.Status)
	msg := strings.TrimSpace(ae.Message)
	if msg == "" {
		msg = http.StatusText(ae.Code)
	}
	grpc := status != "" && strings.ToUpper(status) == status && !strings.ContainsAny(status, " 0123456789")
	if grpc && !strings.Contains(msg, status) {
		msg = status + ": " + msg
	}
	e := &Error{Provider: name, Status: ae.Code, Msg: clip(msg, 1000)}
	if t, known := geminiCodes[status]; grpc && known {
		e.Transient = t
	} else {
		e.Transient = TransientStatus(ae.Code) || ae.Code == 0
	}
	if contextOverflow(msg) {
		e.Transient = false
	}
	for _, d := range ae.Details {
		if typ, _ := d["@type"].(string); strings.HasSuffix(typ, "google.rpc.RetryInfo") {
			if v, _ := d["retryDelay"].(string); v != "" {
				if wait, err := time.ParseDuration(v); err == nil && wait > 0 {
					e.RetryAfter = wait
				}
			}
		}
	}
	if ae.Code == http.StatusNotFound && (status == "NOT_FOUND" || strings.Contains(strings.ToLower(msg), "model")) {
		e.Err = ErrModelUnavailable // Error() shows Msg; errors.Is finds this
	}
	return e
}

// geminiBody records, per request, why reading the response body failed. geminiTransport
// hands the SDK a body that ends cleanly instead of failing: the SDK prints read errors (a
// cancelled context, a reset connection) to the standard logger, which would land on the
// terminal; the stream reports them from here instead.
type geminiBody struct {
	mu  sync.Mutex
	err error
}

type geminiBodyKey struct{}

func (b *geminiBody) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *geminiBody) set(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
}

// geminiTransport turns every response that is not an event stream into an *Error before the
// SDK sees it: an HTTP error with Google's body (keeping the server's message, its status name,
// its RetryInfo and a Retry-After header, which the SDK's APIError would lose), or a 200 whose
// body is a JSON document (a base_url that points at something else).
type geminiTransport struct {
	name string
	next http.RoundTripper
}

func (t *geminiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err != nil || res == nil {
		return res, err
	}
	if res.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		res.Body.Close()
		e := geminiHTTPError(t.name, res.StatusCode, body)
		e.RetryAfter = max(e.RetryAfter, retryAfter(res.StatusCode, res.Header, time.Now()))
		return nil, e
	}
	br := bufio.NewReader(res.Body)
	if c := firstNonSpace(br); c == '{' || c == '[' {
		body, _ := io.ReadAll(io.LimitReader(br, maxErrorBody))
		res.Body.Close()
		e := &Error{Provider: t.name, Msg: "the server answered with a JSON document instead of an event stream (is base_url right?)"}
		if ge := geminiHTTPError(t.name, 0, body); ge.Msg != "" && ge.Status != 0 {
			e = ge
			e.Msg += " (the server answered with this instead of an event stream: check base_url)"
		}
		return nil, e
	}
	body, _ := req.Context().Value(geminiBodyKey{}).(*geminiBody)
	res.Body = &geminiBodyReader{r: br, c: res.Body, b: body}
	return res, nil
}

// geminiHTTPError reads an error body: Google's {"error":{...}}, else whatever text it holds.
func geminiHTTPError(name string, status int, body []byte) *Error {
	var wrapper struct {
		Error *genai.APIError `json:"error"`
	}
	if json.Unmarshal(body, &wrapper) == nil && wrapper.Error != nil {
		ae := *wrapper.Error
		if status >= 400 {
			ae.Code = status // the HTTP status, when there is one, over the body's copy of it
		}
		return geminiAPIError(name, ae)
	}
	if se, ok := parseServerError(body); ok { // a proxy's own error shape
		return geminiAPIError(name, genai.APIError{Code: max(status, se.Status), Message: se.text()})
	}
	text := strings.TrimSpace(string(body))
	if text == "" || strings.HasPrefix(text, "<") { // HTML pages say nothing useful
		text = ""
	}
	return geminiAPIError(name, genai.APIError{Code: status, Message: clip(firstLineOf(text), 300)})
}

// geminiBodyReader ends the body cleanly on a read error and records the error (see geminiBody).
type geminiBodyReader struct {
	r io.Reader
	c io.Closer
	b *geminiBody
}

func (r *geminiBodyReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.b != nil {
		r.b.set(err)
		err = io.EOF
	}
	return n, err
}

func (r *geminiBodyReader) Close() error { return r.c.Close() }
