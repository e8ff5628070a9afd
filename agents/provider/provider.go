package provider

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Provider is one model backend.
type Provider interface {
	// Name is the configured provider name, recorded in SessionStarted ("script", "ollama",
	// "anthropic", ...).
	Name() string
	// Stream starts one model turn. The returned Stream must be closed. Cancelling ctx ends the
	// stream; Next then returns ctx's error.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream yields a model turn's deltas in order.
type Stream interface {
	// Next returns the next delta, or io.EOF after the last one (the last delta before io.EOF
	// is a DeltaStop). Any other error ends the stream; an *Error says whether it is transient.
	Next() (Delta, error)
	Close() error
}

// Request is one model turn.
type Request struct {
	// Model is the concrete model name for the backend ("" = the provider's default).
	Model       string
	System      string
	Messages    []Message
	Tools       []ToolSpec
	Temperature *float64
	MaxTokens   int // 0 = the provider's default

	// Agent, AgentType and Task identify the delegation; the script provider matches tapes on
	// them, model providers ignore them.
	Agent     string
	AgentType string
	Task      string
	// Turn is the 0-based index of this turn within the agent loop (script tapes use it to
	// resume after a tool call). Attempt is the 1-based try of this turn.
	Turn    int
	Attempt int

	// ReasoningEffort and ThinkingBudget come from the route (models: in the config), for the
	// backends that take them: reasoning_effort for OpenAI-compatible servers, a thinking level
	// for Gemini; a thinking budget for Anthropic and Gemini. Empty and nil leave the
	// provider's own setting.
	ReasoningEffort string
	ThinkingBudget  *int
}

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of the conversation.
//
//   - user: Text.
//   - assistant: Text, optional Thinking blocks (kept for backends that need them echoed back,
//     e.g. Anthropic's signed thinking), and ToolCalls.
//   - tool: the result of one tool call: ToolCallID, ToolName, Text, IsError.
type Message struct {
	Role       string
	Text       string
	Thinking   []Thinking
	ToolCalls  []ToolCall
	ToolCallID string
	ToolName   string
	IsError    bool
}

// Thinking is one block of model reasoning. Signature is opaque backend data that must be sent
// back unchanged: Anthropic's signature, or SignatureReasoningContent for reasoning an
// OpenAI-compatible server streamed as reasoning_content (DeepSeek), which must go back in that
// field. Thinking without a signature is shown but never sent back.
type Thinking struct {
	Text      string
	Signature string
	// Redacted is the opaque data of a block the backend encrypted (Anthropic's
	// redacted_thinking); Text and Signature are then empty.
	Redacted string
}

// SignatureReasoningContent marks a Thinking block that an OpenAI-compatible server streamed in
// the reasoning_content field. DeepSeek's thinking mode rejects a tool-calling assistant message
// without its reasoning_content, so the adapter sends such blocks back, and only those: other
// servers never see a field they did not send.
const SignatureReasoningContent = "openai:reasoning_content"

// ToolCall is one complete tool call. Args is the raw JSON object the model produced; it may be
// malformed, which the runtime reports to the model as a tool error.
type ToolCall struct {
	ID   string
	Name string
	Args string
}

// ToolSpec describes a tool to the model. Parameters is a JSON Schema object.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// DeltaKind says which fields of a Delta are set.
type DeltaKind int

const (
	// DeltaText: Text is a fragment of assistant text.
	DeltaText DeltaKind = iota + 1
	// DeltaThinking: Text is a fragment of thinking; Signature may be set on the block's last
	// delta. A delta with Redacted set is a whole redacted block.
	DeltaThinking
	// DeltaToolCall: ToolCall is a complete call (providers assemble argument fragments).
	DeltaToolCall
	// DeltaUsage: Usage holds token counts so far for this turn (later ones replace earlier).
	DeltaUsage
	// DeltaStop: StopReason is set, and StopDetail names the server's own reason
	// (finish_reason "length"); the turn is over.
	DeltaStop
)

// Stop reasons.
const (
	StopEnd       = "end_turn"   // the model finished its message
	StopToolUse   = "tool_use"   // the model wants tool results
	StopMaxTokens = "max_tokens" // cut at the token limit; the runtime fails the turn
	// StopPause: the server paused a long turn (Anthropic's pause_turn); the runtime sends
	// the assistant message back as it is, with no new user message, and the model goes on.
	StopPause = "pause_turn"
)

// Delta is one item of a Stream.
type Delta struct {
	Kind       DeltaKind
	Text       string
	Signature  string
	Redacted   string
	ToolCall   ToolCall
	Usage      Usage
	StopReason string
	StopDetail string // the stop reason as the server sent it, for messages
}

// Usage counts tokens of one turn.
type Usage struct {
	Input  int64
	Output int64
}

// Error is a provider failure. Transient failures (timeouts, 429, 5xx, a stream cut
// mid-message) may succeed on retry.
type Error struct {
	Provider  string
	Status    int // HTTP status, 0 when none
	Transient bool
	// RetryAfter is how long the server asked the client to wait before trying again
	// (Retry-After, retry-after-ms, or the reset header of an exhausted rate limit); 0 when it
	// did not say.
	RetryAfter time.Duration
	Msg        string
	Err        error
}

func (e *Error) Error() string {
	s := e.Provider + ": "
	if e.Status != 0 {
		s += fmt.Sprintf("HTTP %d: ", e.Status)
	}
	s += e.Msg
	if e.Err != nil && e.Msg == "" {
		s += e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// IsTransient reports whether err (or an error it wraps) is a transient *Error.
func IsTransient(err error) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Transient
}

// RetryAfterOf returns the wait the server asked for in err (or an error it wraps), 0 when none.
func RetryAfterOf(err error) time.Duration {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

// TransientStatus reports whether an HTTP status is worth retrying: 408, 409, 425, 429, 5xx
// (529 is Anthropic's "overloaded").
func TransientStatus(code int) bool {
	return code == 408 || code == 409 || code == 425 || code == 429 || code >= 500
}

// rateLimits pairs each rate-limit reset header with the header counting what is left of that
// limit. OpenAI sends durations ("1s", "6m0s"); Anthropic sends RFC 3339 times.
var rateLimits = [][2]string{
	{"x-ratelimit-reset-requests", "x-ratelimit-remaining-requests"},
	{"x-ratelimit-reset-tokens", "x-ratelimit-remaining-tokens"},
	{"anthropic-ratelimit-requests-reset", "anthropic-ratelimit-requests-remaining"},
	{"anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-tokens-remaining"},
	{"anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-input-tokens-remaining"},
	{"anthropic-ratelimit-output-tokens-reset", "anthropic-ratelimit-output-tokens-remaining"},
}

// retryAfter reads how long a response asks the client to wait: retry-after-ms, then
// Retry-After (seconds or an HTTP date), then, for a 429 only, the latest reset of the rate
// limits that are exhausted (or whose remaining count is not given). Reset headers come with
// every response, so on other statuses they say nothing about a retry. 0 = no wait asked.
func retryAfter(status int, h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			return max(time.Duration(s*float64(time.Second)), 0)
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	if status != http.StatusTooManyRequests {
		return 0
	}
	var wait time.Duration
	for _, rl := range rateLimits {
		d, ok := parseReset(h.Get(rl[0]), now)
		if !ok {
			continue
		}
		if left := strings.TrimSpace(h.Get(rl[1])); left == "" || left == "0" {
			wait = max(wait, d)
		}
	}
	return wait
}

// parseReset reads a rate-limit reset: a Go-style duration ("1s", "6m0s", "20ms"), plain
// seconds, or an RFC 3339 time.
func parseReset(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil {
		return max(d, 0), true
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return max(time.Duration(s*float64(time.Second)), 0), true
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// serverError is an error as a server reported it, from whichever body shape it used.
type serverError struct {
	Type    string // "rate_limit_error", "invalid_request_error", "BadRequestError", ...
	Code    string // a string code ("insufficient_quota"), or a numeric one as text
	Status  int    // a numeric code in the body (OpenRouter, vLLM, llama.cpp), else 0
	Message string
	Detail  string // OpenRouter's metadata.raw: the upstream provider's own words
}

// parseServerError reads an error body. ok is false when the body holds no error.
func parseServerError(body []byte) (se serverError, ok bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return se, false
	}
	errObj := top
	if raw, has := top["error"]; has {
		var text string
		if json.Unmarshal(raw, &text) == nil { // {"error":"..."} (LM Studio, Ollama)
			return serverError{Message: text}, text != ""
		}
		errObj = nil
		if json.Unmarshal(raw, &errObj) != nil || errObj == nil {
			return se, false
		}
	} else if str(top["object"]) != "error" && str(top["type"]) != "error" && str(top["detail"]) == "" {
		return se, false // not an error (vLLM's older bodies say "object":"error")
	}
	se.Message, se.Type = str(errObj["message"]), str(errObj["type"])
	if se.Message == "" {
		se.Message = str(top["detail"]) // FastAPI's {"detail": "Not Found"}
	}
	var code any
	if json.Unmarshal(errObj["code"], &code) == nil {
		switch c := code.(type) {
		case string:
			se.Code = c
			se.Status, _ = strconv.Atoi(c)
		case float64:
			se.Status = int(c)
			se.Code = strconv.Itoa(se.Status)
		}
	}
	var meta struct {
		Raw any `json:"raw"`
	}
	if json.Unmarshal(errObj["metadata"], &meta) == nil {
		switch r := meta.Raw.(type) {
		case string:
			se.Detail = r
		case nil:
		default:
			b, _ := json.Marshal(r)
			se.Detail = string(b)
		}
	}
	return se, se.Message != "" || se.Type != "" || se.Code != ""
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// text is the message to show: the server's words, prefixed by its error type.
func (se serverError) text() string {
	msg := se.Message
	if se.Type != "" && !strings.HasPrefix(msg, se.Type) {
		msg = strings.TrimSuffix(se.Type+": "+msg, ": ")
	}
	if se.Detail != "" && !strings.Contains(msg, se.Detail) {
		msg += " (" + clip(se.Detail, 300) + ")"
	}
	return clip(msg, 1000)
}

// Error types and codes that say whether a retry can help, whatever the status says.
var (
	retryableKinds = map[string]bool{"overloaded_error": true, "rate_limit_error": true, "api_error": true,
		"timeout_error": true, "server_error": true, "rate_limit_exceeded": true, "overloaded": true,
		"service_unavailable": true, "internal_error": true, "internal_server_error": true}
	finalKinds = map[string]bool{"invalid_request_error": true, "authentication_error": true,
		"permission_error": true, "not_found_error": true, "billing_error": true, "request_too_large": true,
		"insufficient_quota": true, "context_length_exceeded": true, "BadRequestError": true,
		"NotFoundError": true, "invalid_api_key": true, "model_not_found": true}
)

// contextOverflow reports whether a message says the prompt does not fit the model: a retry
// sends the same prompt, so it cannot help whatever status came with it.
func contextOverflow(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"context length", "context window", "context_length", "prompt is too long",
		"maximum context", "maximum model length", "too many tokens", "token limit", "reduce the length"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// transientError decides whether a retry may cure an error. A prompt over the context length
// or a final error type (an "insufficient_quota" 429) never is; then the HTTP status decides,
// or the status in the body; without one (an error event mid-stream) the error's type or code
// (overloaded_error, server_error), else dflt.
func transientError(status int, se serverError, dflt bool) bool {
	if contextOverflow(se.Message) || finalKinds[se.Type] || finalKinds[se.Code] {
		return false
	}
	if status == 0 || status == http.StatusOK {
		status = se.Status
	}
	if status >= 400 {
		return TransientStatus(status)
	}
	if retryableKinds[se.Type] || retryableKinds[se.Code] {
		return true
	}
	return dflt
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// httpError turns an HTTP error response into an *Error with the server's own message.
func httpError(provider string, res *http.Response, body []byte) *Error {
	e := &Error{Provider: provider, Status: res.StatusCode, RetryAfter: retryAfter(res.StatusCode, res.Header, time.Now())}
	se, ok := parseServerError(body)
	switch {
	case ok:
		e.Msg = se.text()
	case len(strings.TrimSpace(string(body))) > 0 && !strings.HasPrefix(strings.TrimSpace(string(body)), "<"):
		e.Msg = clip(firstLineOf(string(body)), 300) // a plain-text body; HTML pages say nothing useful
	default:
		e.Msg = http.StatusText(res.StatusCode)
	}
	e.Transient = transientError(res.StatusCode, se, false)
	return e
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// checkResponse is SDK middleware (both SDKs' Middleware type) that turns every response
// that is not an event stream into an *Error before the SDK sees it. An HTTP error keeps the
// server's message and its Retry-After. A 200 whose body is a JSON document rather than an
// event stream (an SSE body starts with a field name or a ':' comment, never '{') is an error
// too: LM Studio answers a wrong path with 200 and {"error":"Unexpected endpoint or method.
// ..."}, which the SSE decoder would read as an empty stream.
func checkResponse(provider string) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res == nil {
			return res, err
		}
		if res.StatusCode >= 400 {
			body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
			res.Body.Close()
			return nil, httpError(provider, res, body)
		}
		br := bufio.NewReader(res.Body)
		if c := firstNonSpace(br); c != '{' && c != '[' {
			res.Body = struct {
				io.Reader
				io.Closer
			}{br, res.Body}
			return res, nil
		}
		body, _ := io.ReadAll(io.LimitReader(br, maxErrorBody))
		res.Body.Close()
		e := &Error{Provider: provider, Msg: "the server answered with a JSON document instead of an event stream (is base_url right, and does the server stream?)"}
		if se, ok := parseServerError(body); ok {
			e.Msg = se.text() + " (the server answered with this instead of an event stream: check base_url)"
			e.Transient = transientError(0, se, false)
			e.RetryAfter = retryAfter(se.Status, res.Header, time.Now())
		}
		return nil, e
	}
}

// firstNonSpace peeks at the first byte of a body that is not white space (or a UTF-8 BOM),
// without consuming anything; 0 at the end of the body.
func firstNonSpace(br *bufio.Reader) byte {
	for n := 1; n <= 256; n++ {
		b, err := br.Peek(n)
		if len(b) < n || err != nil {
			return 0
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n', 0xEF, 0xBB, 0xBF:
		default:
			return c
		}
	}
	return 0
}
