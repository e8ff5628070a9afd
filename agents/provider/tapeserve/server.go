// Package tapeserve serves script tapes (agents/provider, DESIGN §8) as a local model endpoint
// in the real wire formats, so that an external agent pointed at it through its base-URL
// setting (Claude Code, Gemini CLI, Codex, any SDK) runs offline and deterministically.
//
// # Endpoints
//
//   - Anthropic Messages: POST /v1/messages, streaming (stream: true) as server-sent events
//     message_start, ping, then per content block content_block_start, content_block_delta
//     (text_delta; thinking_delta closed by a signature_delta; input_json_delta for tool_use)
//     and content_block_stop, then message_delta (stop_reason, usage) and message_stop; or one
//     JSON message. POST /v1/messages/count_tokens answers {"input_tokens": n}.
//   - OpenAI Chat Completions: POST /v1/chat/completions, streaming as `data: {chunk}` lines
//     (delta.role, delta.content, delta.reasoning_content for thinking, delta.tool_calls with
//     index, id, function name and arguments; a last chunk with finish_reason; a usage chunk
//     with empty choices when stream_options.include_usage; `data: [DONE]`), or one
//     chat.completion.
//   - OpenAI Responses: POST /v1/responses, streaming as typed events: response.created,
//     response.in_progress; per output item response.output_item.added, then for a message
//     response.content_part.added, response.output_text.delta, response.output_text.done,
//     response.content_part.done; for a function_call (or a custom_tool_call, when the request
//     declared that tool as custom) response.function_call_arguments.delta and .done (or
//     response.custom_tool_call_input.delta and .done); for reasoning
//     response.reasoning_summary_part.added, response.reasoning_summary_text.delta and .done,
//     response.reasoning_summary_part.done; then response.output_item.done; last
//     response.completed with the output and usage. Every event has a sequence_number. Or one
//     response object. The server keeps nothing, so previous_response_id is refused: send the
//     whole conversation (store: false, as Codex does).
//   - Gemini: POST /v1beta/models/{model}:generateContent and :streamGenerateContent (alt=sse:
//     `data: {GenerateContentResponse}` events, CRLF-ended as Google sends them, the
//     finishReason and usageMetadata on the last), :countTokens; candidates[0].content.parts
//     hold text, thought text (thought: true) and functionCall {id, name, args}. /v1 and
//     /v1alpha work the same.
//   - GET /v1/models (and /v1/models/{id}) lists a model per tape agent, in a shape both the
//     Anthropic and the OpenAI SDKs read; GET /v1beta/models does the same for Gemini.
//
// The OpenAI paths also answer without the /v1 prefix, for a base URL set without it.
//
// # From a request to a tape
//
// Each request becomes a provider.Request and is played by the script provider, which keeps
// no state between requests: it walks the tape over the conversation it is given.
//
//   - System: Anthropic's system (and messages of role system in the conversation, where
//     Claude Code puts its environment section), OpenAI's system and developer messages, Responses'
//     instructions (and system/developer items), Gemini's systemInstruction.
//   - Messages: user text; an assistant turn with its thinking, text and tool calls (the
//     Responses API's reasoning, message and function_call items of one turn, and any run
//     of consecutive assistant messages, are one turn); one tool message per tool result
//     (Anthropic tool_result with is_error, OpenAI tool messages, function_call_output,
//     Gemini functionResponse, an error when its response has an "error" key). OpenAI's
//     formats have no error flag: a result there counts as an error only when it starts with
//     provider.DeniedPrefix, which summit's runtime writes for a denied call.
//   - Task: the text of the user messages before the first assistant turn, joined by blank
//     lines. The delegation prompt is there (with whatever context the agent puts before it:
//     Claude Code's system reminders, Codex's environment context), and it stays the same
//     while the conversation grows, so the tape that matched the first turn keeps matching
//     (a reply to an ask step does not move the conversation to another tape).
//   - Agent: the model name of the request (Gemini's from the path), so match.agent picks a
//     tape by model; AgentType is empty. Point an agent's side requests (Claude Code's small
//     fast model) at a model name of their own and give them a tape, or leave them to a tape
//     with no agent; Gemini CLI's side checks get a default answer (below) unless a tape
//     names their model.
//   - Turn: the number of assistant turns already in the conversation, which is what the
//     script provider counts: its turn k ends with the k-th assistant message, and the tool
//     results (or the user reply) after that message choose the branch the tape takes.
//   - Attempt: 1 + the number of identical requests (same API, model, system prompt and
//     messages) seen before, so a `fail` step with `times: n` fails the first n tries of a
//     request and lets the client's retry through.
//   - Tools: name, description and JSON Schema; the tape does not look at them.
//
// Before a turn is played, its tool steps are checked against the request: a tool the request
// does not declare (unless the step has an on_denied or on_error branch for the agent's refusal,
// or the request declares no tools at all), or a custom tool whose args are not {"input": TEXT}
// or plain text, fails the request with a 400 naming the tape, its file and the step's line:
// never a turn with the call left out or malformed.
//
// A Gemini request asking for JSON (generationConfig.responseMimeType application/json with a
// responseJsonSchema or responseSchema) is one of Gemini CLI's side checks (next speaker, loop
// detection, routing; they carry the main conversation, so they would match its tape). Unless a
// tape's match.agent is that request's model, it is answered with the schema's least committal
// value (an enum's first value, a number's minimum or 0, "", false, [], an object with every
// property), which Gemini CLI reads as "the user speaks next", "no loop", "the flash route".
//
// A request that no tape matches is answered 400 in that API's error format, naming every
// tape with its agent, task and file:line: a 404 would read as "model not found" to these
// clients, which then blame or switch the model. A request past a tape's last turn is a 400
// too, and a `fail` step is a 529 overloaded_error (Anthropic), a 503 (OpenAI, Gemini
// UNAVAILABLE) when transient, else a 400; once the stream has begun it is the API's own
// mid-stream error (an error event, an error chunk, response.failed).
//
// # Determinism
//
// The same request gets the same bytes. Ids are hashes of the conversation (API, model,
// system prompt and task) and the turn, never random; tool call ids are unique within a
// conversation. Timestamps (created, created_at) are a fixed instant, 2026-01-01T00:00:00Z.
// Token counts are estimates: input is a quarter of the request's text bytes (system prompt,
// messages, tool schemas), output the tape's count of streamed words.
//
// Tapes' waits (sleep steps, and the pause before each word at a `rate`) run on the wall
// clock, each capped at Options.MaxSleep (DefaultMaxSleep, 5s), so a tape paced for a demo
// shows pacing to a real client without leaving it idle past its timeouts; Options.NoSleep
// drops every wait and sends each turn at once (tests, CI).
//
// # Limits
//
// Request bodies over Options.MaxBody (32 MiB) are refused with 413 without being read
// further. The server never reads, stores or echoes the requests' keys and headers; it
// answers whatever key is sent. It binds where it is told: summit tapes serve defaults to
// 127.0.0.1.
package tapeserve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/summit-dev/summit/agents/provider"
)

// DefaultMaxSleep caps each wait a tape asks for, unless Options.MaxSleep says otherwise.
const DefaultMaxSleep = 5 * time.Second

// DefaultMaxBody is the largest request body read (32 MiB), unless Options.MaxBody says
// otherwise.
const DefaultMaxBody = 32 << 20

// created is the fixed timestamp of every response (2026-01-01T00:00:00Z), so the same request
// always gets the same bytes.
const created = 1767225600

// Options configure the server. The zero value serves with DefaultMaxSleep and DefaultMaxBody.
type Options struct {
	// MaxSleep caps each wait of a tape (a sleep step, the pause before a word at a rate).
	MaxSleep time.Duration
	// NoSleep drops every wait: each turn is sent at once.
	NoSleep bool
	// MaxBody is the largest request body read; a bigger one gets 413.
	MaxBody int64
	// Log, when set, gets one line per model request: the API, model, tape, turn and status.
	// The line quotes the model name as sent: a caller printing it to a terminal sanitises it.
	Log func(line string)
}

// matcher is the script provider's tape matcher (provider.NewScript's value has it).
type matcher interface {
	Match(agent, agentType, task string) *provider.Tape
}

type server struct {
	tapes  []*provider.Tape
	script provider.Provider
	opts   Options
	mux    *http.ServeMux

	mu       sync.Mutex
	attempts map[[32]byte]int
}

// maxAttempts bounds the memory of requests seen (for Attempt); past it, the count restarts.
const maxAttempts = 1 << 16

// New returns a handler serving tapes (see the package doc).
func New(tapes []*provider.Tape, opts Options) http.Handler {
	if opts.MaxSleep <= 0 {
		opts.MaxSleep = DefaultMaxSleep
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	s := &server{tapes: tapes, opts: opts, attempts: map[[32]byte]int{}}
	s.script = provider.NewScript(provider.ScriptConfig{Tapes: tapes, Sleep: s.sleep})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.anthropicCountTokens)
	for _, p := range []string{"/v1", ""} {
		mux.HandleFunc("POST "+p+"/chat/completions", s.chatCompletions)
		mux.HandleFunc("POST "+p+"/responses", s.responses)
		mux.HandleFunc("GET "+p+"/models", s.listModels)
		mux.HandleFunc("GET "+p+"/models/{id}", s.getModel)
	}
	for _, v := range []string{"v1", "v1beta", "v1alpha"} {
		mux.HandleFunc("POST /"+v+"/models/{call}", s.gemini)
		if v != "v1" {
			mux.HandleFunc("GET /"+v+"/models", s.geminiListModels)
			mux.HandleFunc("GET /"+v+"/models/{id}", s.geminiGetModel)
		}
	}
	mux.HandleFunc("/", s.notFound)
	s.mux = mux
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// A bug in a converter: net/http would log it and drop the connection, which clients
		// retry as a network error; a 500 in the generic error shape says what happened.
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log("panic serving %s %s: %v", r.Method, r.URL.Path, v)
			writeJSON(w, http.StatusInternalServerError, genericError(http.StatusInternalServerError, "api_error", fmt.Sprintf("tapeserve: internal error: %v", v)))
		}
	}()
	s.mux.ServeHTTP(w, r)
}

// sleep waits d on the wall clock, capped at MaxSleep, or not at all with NoSleep.
func (s *server) sleep(ctx context.Context, d time.Duration) error {
	if s.opts.NoSleep || d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(min(d, s.opts.MaxSleep))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *server) log(format string, args ...any) {
	if s.opts.Log != nil {
		s.opts.Log(fmt.Sprintf(format, args...))
	}
}

// readBody reads a JSON request body into v. It returns the status and message of a refusal:
// 413 past MaxBody, 400 for a body that is not the JSON expected.
func (s *server) readBody(w http.ResponseWriter, r *http.Request, v any) (int, string) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes, the cap of this server", mbe.Limit)
	case err != nil:
		return http.StatusBadRequest, "reading the request body: " + err.Error()
	}
	if err := json.Unmarshal(b, v); err != nil {
		return http.StatusBadRequest, "the request body is not valid JSON for this endpoint: " + err.Error()
	}
	return 0, ""
}

// call is one model request, converted.
type call struct {
	api    string // anthropic, chat, responses, gemini: names the API in logs and ids
	model  string
	stream bool
	req    provider.Request
	input  int64    // estimated input tokens
	conv   [32]byte // the conversation: ids derive from it
	custom map[string]bool
}

// finish completes a converted request: Task, Turn, the token estimate and the conversation
// hash.
func (s *server) finish(c *call, sys []string, msgs []provider.Message, tools []provider.ToolSpec) {
	c.req.Model = c.model
	c.req.Agent = c.model
	c.req.System = strings.Join(nonEmpty(sys), "\n\n")
	c.req.Messages = msgs
	c.req.Tools = tools
	var task []string
	for _, m := range msgs {
		switch m.Role {
		case provider.RoleAssistant:
			c.req.Turn++
		case provider.RoleUser:
			if c.req.Turn == 0 {
				task = append(task, m.Text)
			}
		}
	}
	c.req.Task = strings.Join(nonEmpty(task), "\n\n")
	size := len(c.req.System)
	for _, m := range msgs {
		size += len(m.Text)
		for _, t := range m.Thinking {
			size += len(t.Text)
		}
		for _, tc := range m.ToolCalls {
			size += len(tc.Name) + len(tc.Args)
		}
	}
	for _, t := range tools {
		b, _ := json.Marshal(t.Parameters)
		size += len(t.Name) + len(t.Description) + len(b)
	}
	c.input = max(int64(size/4), 1)
	c.conv = hashOf(c.api, c.model, c.req.System, c.req.Task)
}

// attempt counts c among the identical requests (same API, model, system prompt and messages)
// and sets its Attempt: 1 the first time.
func (s *server) attempt(c *call) {
	key, _ := json.Marshal(struct {
		API, Model, System string
		Messages           []provider.Message
	}{c.api, c.model, c.req.System, c.req.Messages})
	sum := sha256.Sum256(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.attempts) >= maxAttempts {
		clear(s.attempts)
	}
	s.attempts[sum]++
	c.req.Attempt = s.attempts[sum]
}

func nonEmpty(ss []string) []string {
	return slices.DeleteFunc(slices.Clone(ss), func(s string) bool { return strings.TrimSpace(s) == "" })
}

func hashOf(parts ...string) [32]byte {
	return sha256.Sum256([]byte(strings.Join(parts, "\x00")))
}

// id is a deterministic id: prefix and 24 hex digits of the conversation's hash with what.
func (c *call) id(prefix string, what ...any) string {
	h := sha256.New()
	h.Write(c.conv[:])
	fmt.Fprint(h, what...)
	return prefix + hex.EncodeToString(h.Sum(nil))[:24]
}

// convo builds the conversation of a request. Consecutive assistant pieces make one turn.
type convo struct{ msgs []provider.Message }

func (v *convo) user(text string) {
	v.msgs = append(v.msgs, provider.Message{Role: provider.RoleUser, Text: text})
}

func (v *convo) assistant() *provider.Message {
	if n := len(v.msgs); n > 0 && v.msgs[n-1].Role == provider.RoleAssistant {
		return &v.msgs[n-1]
	}
	v.msgs = append(v.msgs, provider.Message{Role: provider.RoleAssistant})
	return &v.msgs[len(v.msgs)-1]
}

func (v *convo) text(s string) {
	a := v.assistant()
	a.Text += s
}

func (v *convo) thinking(s, sig string) {
	a := v.assistant()
	a.Thinking = append(a.Thinking, provider.Thinking{Text: s, Signature: sig})
}

func (v *convo) toolCall(id, name, args string) {
	a := v.assistant()
	a.ToolCalls = append(a.ToolCalls, provider.ToolCall{ID: id, Name: name, Args: args})
}

func (v *convo) result(id, name, text string, isErr bool) {
	v.msgs = append(v.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: id, ToolName: name, Text: text, IsError: isErr})
}

// block is one piece of a turn's output.
type block struct {
	kind blockKind
	text string // text and thinking
	// tool calls: the wire id, the name and the argument text as the tape has it
	id, name, args string
}

type blockKind int

const (
	textBlock blockKind = iota + 1
	thinkingBlock
	toolBlock
)

// out is a turn's output as it is played.
type out struct {
	blocks []*block
	stop   string // provider.Stop*; "" until the tape's turn ended
	usage  provider.Usage
}

// calls reports whether the turn has a tool call.
func (o *out) calls() bool {
	return slices.ContainsFunc(o.blocks, func(b *block) bool { return b.kind == toolBlock })
}

// writer puts a turn on the wire as it is played. A streaming writer sends each event; the
// non-streaming one (nopWriter) sends nothing, and the handler writes the whole body after.
type writer interface {
	begin(o *out) error
	open(o *out, i int) error               // block i begins
	delta(o *out, i int, frag string) error // text or thinking appended to block i
	close(o *out, i int) error              // block i is complete
	end(o *out) error                       // the turn ended with o.stop
	fail(o *out, e *provider.Error) error   // the tape failed mid-stream
}

type nopWriter struct{}

func (nopWriter) begin(*out) error                      { return nil }
func (nopWriter) open(*out, int) error                  { return nil }
func (nopWriter) delta(*out, int, string) error         { return nil }
func (nopWriter) close(*out, int) error                 { return nil }
func (nopWriter) end(*out) error                        { return nil }
func (nopWriter) fail(_ *out, pe *provider.Error) error { return refuse(pe) } // a whole body or an error

// refusal is an answer before anything was written: an HTTP status and a message, which the
// handler writes in its API's error format. 503 is a tape's transient fail (a retry may cure
// it); 400 anything else.
type refusal struct {
	status int
	msg    string
}

func (r *refusal) Error() string { return r.msg }

// play plays the turn c asks for through w. An error before the first event (no tape, a turn
// past the tape's end, a fail step first) is a *refusal, and w was not called: the handler
// answers it with an HTTP error. Later, a tape's failure goes to w.fail, which a stream
// writes as the API's mid-stream error and nopWriter returns as a *refusal (nothing is
// written before the whole body); any other error is the client's (a write that failed, a
// cancelled request), and there is nobody left to answer.
func (s *server) play(ctx context.Context, c *call, w writer) (o *out, err error) {
	s.attempt(c)
	t := s.script.(matcher).Match(c.req.Agent, c.req.AgentType, c.req.Task)
	if t == nil {
		return nil, &refusal{status: http.StatusBadRequest, msg: s.noTape(c)}
	}
	if rf := unplayable(c, t); rf != nil {
		return nil, rf
	}
	st, err := s.script.Stream(ctx, c.req)
	if err != nil {
		return nil, refuse(err)
	}
	defer st.Close()
	o = &out{usage: provider.Usage{Input: c.input}}
	d, derr := st.Next()
	if derr != nil && derr != io.EOF {
		return nil, refuse(derr)
	}
	s.log("%s model %q: tape %s, turn %d, attempt %d", c.api, c.model, t.Name, c.req.Turn+1, c.req.Attempt)
	if err := w.begin(o); err != nil {
		return o, err
	}
	cur := -1
	closeCur := func() error {
		if cur < 0 {
			return nil
		}
		i := cur
		cur = -1
		return w.close(o, i)
	}
	for ; ; d, derr = st.Next() {
		if derr == io.EOF {
			if err := closeCur(); err != nil {
				return o, err
			}
			if o.stop == "" {
				o.stop = provider.StopEnd
			}
			return o, w.end(o)
		}
		if derr != nil {
			if ctx.Err() != nil {
				return o, ctx.Err()
			}
			var pe *provider.Error
			if !errors.As(derr, &pe) {
				pe = &provider.Error{Provider: "script", Msg: derr.Error()}
			}
			return o, w.fail(o, pe)
		}
		var err error
		switch d.Kind {
		case provider.DeltaText, provider.DeltaThinking:
			kind := textBlock
			if d.Kind == provider.DeltaThinking {
				kind = thinkingBlock
			}
			if d.Text == "" {
				continue
			}
			if cur < 0 || o.blocks[cur].kind != kind {
				if err = closeCur(); err != nil {
					return o, err
				}
				o.blocks = append(o.blocks, &block{kind: kind})
				cur = len(o.blocks) - 1
				if err = w.open(o, cur); err != nil {
					return o, err
				}
			}
			o.blocks[cur].text += d.Text
			err = w.delta(o, cur, d.Text)
		case provider.DeltaToolCall:
			if err = closeCur(); err != nil {
				return o, err
			}
			o.blocks = append(o.blocks, &block{kind: toolBlock, id: d.ToolCall.ID, name: d.ToolCall.Name, args: d.ToolCall.Args})
			i := len(o.blocks) - 1
			if err = w.open(o, i); err == nil {
				err = w.close(o, i)
			}
		case provider.DeltaUsage:
			o.usage.Output = d.Usage.Output
		case provider.DeltaStop:
			o.stop = d.StopReason
		}
		if err != nil {
			return o, err
		}
	}
}

// unplayable checks the tool steps of the turn t plays for c before anything is sent, and
// refuses the request (400) for a step the client could not run: a tool the request does not
// declare (the agent would drop or reject the call, and the tape would go on as if it ran) when
// the step has no on_denied/on_error branch for that refusal, or a
// custom tool (Responses API, freeform input) whose arguments are not {"input": TEXT} or plain
// text. The message names the tape, its file and the step's line. A request that declares no
// tools at all (a bare SDK call) is played as the tape says. A turn that cannot be walked
// is left to the script provider, whose error says why.
func unplayable(c *call, t *provider.Tape) *refusal {
	steps, err := t.TurnSteps(c.req)
	if err != nil {
		return nil
	}
	file := t.Source
	if i := strings.LastIndexByte(file, ':'); i > 0 {
		file = file[:i]
	}
	var declared []string
	for _, ts := range c.req.Tools {
		declared = append(declared, ts.Name)
	}
	for _, st := range steps {
		if st.Tool == "" {
			continue
		}
		at := fmt.Sprintf("tapeserve: tape %s (%s), step at %s:%d", t.Name, t.Source, file, st.Line)
		if len(declared) > 0 && !slices.Contains(declared, st.Tool) && st.OnDenied == nil && st.OnError == nil {
			return &refusal{status: http.StatusBadRequest, msg: fmt.Sprintf(
				"%s calls tool %q, which this %s request does not declare (it declares %s): the agent cannot run it; call a declared tool, or give the step on_denied/on_error for the agent's refusal",
				at, st.Tool, c.api, strings.Join(declared, ", "))}
		}
		if c.custom[st.Tool] && !freeform(st.Args) {
			return &refusal{status: http.StatusBadRequest, msg: fmt.Sprintf(
				"%s calls %q, which this request declares as a custom (freeform) tool: its args must be {input: TEXT}, the text the tool reads (for apply_patch, the *** Begin Patch … *** End Patch patch)", at, st.Tool)}
		}
	}
	return nil
}

// freeform reports whether a tape's argument text is a custom tool's input: {"input": TEXT},
// or text that is not a JSON object (raw_args).
func freeform(args string) bool {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil {
		return true
	}
	_, ok := obj["input"].(string)
	return ok && len(obj) == 1
}

// refuse turns an error from the script provider before the first event into a refusal: a
// tape's transient fail may be retried, anything else (a turn past the tape's end, a fail
// that is not transient) is the request's fault.
func refuse(err error) *refusal {
	var pe *provider.Error
	if errors.As(err, &pe) {
		if pe.Transient {
			return &refusal{status: http.StatusServiceUnavailable, msg: pe.Msg}
		}
		return &refusal{status: http.StatusBadRequest, msg: pe.Msg}
	}
	return &refusal{status: http.StatusBadRequest, msg: err.Error()}
}

// noTape says why no tape answers c, listing the tapes.
func (s *server) noTape(c *call) string {
	task := strings.Join(strings.Fields(c.req.Task), " ")
	if len(task) > 300 {
		task = task[:300] + "…"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tapeserve: no tape matches model %q and task %q (the task is the user text before the first assistant turn). Tapes, first match wins:", c.model, task)
	for _, t := range s.tapes {
		agent, re := "any model", "any task"
		if t.Agent != "" {
			agent = fmt.Sprintf("agent %q", t.Agent)
		}
		if t.Task != nil {
			re = fmt.Sprintf("task %q", t.Task.String())
		}
		fmt.Fprintf(&b, " %s (%s, %s; %s);", t.Name, agent, re, t.Source)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// toolInput is a tape's argument text as the JSON object the Anthropic and Gemini formats
// need; malformed text (raw_args) goes as {"_raw": text}, as summit's adapters echo it.
func toolInput(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(map[string]string{"_raw": args})
	return b
}

// argsText is a JSON object from a request as argument text.
func argsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	return string(raw)
}

// deniedText reports whether a tool result says the call was denied the way summit's runtime
// writes it; the OpenAI formats carry no error flag, so this is how a denial shows there.
func deniedText(s string) bool { return strings.HasPrefix(s, provider.DeniedPrefix) }

// sse writes server-sent events and flushes each one.
type sse struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	eol string // "\n", or "\r\n" for Gemini
}

func startSSE(w http.ResponseWriter, eol string) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w), eol: eol}
}

// event writes one event: name (may be "") and data, a value marshalled as JSON or a raw
// string.
func (e *sse) event(name string, data any) error {
	var b []byte
	switch d := data.(type) {
	case string:
		b = []byte(d)
	default:
		var err error
		if b, err = marshal(d); err != nil {
			return err
		}
	}
	var sb strings.Builder
	if name != "" {
		sb.WriteString("event: " + name + e.eol)
	}
	sb.WriteString("data: ")
	sb.Write(b)
	sb.WriteString(e.eol + e.eol)
	if _, err := io.WriteString(e.w, sb.String()); err != nil {
		return err
	}
	return e.rc.Flush()
}

// marshal is json.Marshal without HTML escaping: a tape's text goes out as written.
func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"tapeserve: cannot encode the response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// genericError is an error body every client reads: Anthropic's {"type":"error","error":{type,
// message}}, OpenAI's {"error":{message,type,code}} and Google's {"error":{code,message,
// status}} at once. It answers paths no API has.
func genericError(status int, kind, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{
		"type": kind, "message": msg, "code": status, "status": grpcStatus(status)}}
}

func grpcStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	}
	return "INTERNAL"
}

func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, genericError(http.StatusNotFound, "not_found_error", fmt.Sprintf(
		"tapeserve has no %s %s; it answers POST /v1/messages, /v1/messages/count_tokens, /v1/chat/completions, /v1/responses, /v1beta/models/{model}:generateContent, :streamGenerateContent and :countTokens, and GET /v1/models",
		r.Method, r.URL.Path)))
}

// models names a model per distinct tape agent, and "tapes" for the tapes without one.
func (s *server) models() []string {
	var out []string
	for _, t := range s.tapes {
		if t.Agent != "" && !slices.Contains(out, t.Agent) {
			out = append(out, t.Agent)
		}
	}
	if !slices.Contains(out, "tapes") {
		out = append(out, "tapes")
	}
	return out
}

// modelObject is a model as both the Anthropic (type, display_name, created_at) and the
// OpenAI (object, created, owned_by) SDKs read it.
func modelObject(id string) map[string]any {
	return map[string]any{"id": id, "type": "model", "object": "model", "display_name": id,
		"created_at": time.Unix(created, 0).UTC().Format(time.RFC3339), "created": created, "owned_by": "summit-tapes"}
}

func (s *server) listModels(w http.ResponseWriter, r *http.Request) {
	ids := s.models()
	var data []map[string]any
	for _, id := range ids {
		data = append(data, modelObject(id))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": false,
		"first_id": ids[0], "last_id": ids[len(ids)-1]})
}

// getModel answers for any id: every model name is served (the tapes decide what it says).
func (s *server) getModel(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, modelObject(r.PathValue("id")))
}

func itoa(i int) string     { return strconv.Itoa(i) }
func quote(s string) string { return strconv.Quote(s) }
