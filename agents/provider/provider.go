// Package provider puts every model backend behind one streaming interface (DESIGN §8).
//
// A Provider turns a Request (system prompt, conversation, tool specs) into a Stream of Deltas:
// text, thinking, tool calls, usage and a final stop reason. Backends:
//
//   - script: replays YAML tapes (script.go). The default when no model is configured, so the
//     workbench runs offline and tests are deterministic.
//   - openai: the OpenAI-compatible Chat Completions streaming API (OpenAI, Ollama, vLLM,
//     llama.cpp server, LM Studio, OpenRouter) through github.com/openai/openai-go/v3.
//   - anthropic: the Messages API with streaming, tool use and thinking through
//     github.com/anthropics/anthropic-sdk-go.
//
// Providers never retry on their own (SDK retries are switched off): the runtime retries
// transient failures at most twice with backoff, so every attempt is a recorded SubagentError.
// An error that a retry may cure (timeout, 429, 5xx, a stream cut mid-message) is returned as
// or wraps an *Error with Transient set; see IsTransient.
//
// API keys are read from environment variables named in configuration, only when a request is
// made, and never appear in a Request, a Delta or an error message.
package provider

import (
	"context"
	"errors"
	"fmt"
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

// Thinking is one block of model reasoning. Signature is opaque backend data (Anthropic's
// signature) that must be sent back unchanged.
type Thinking struct {
	Text      string
	Signature string
	// Redacted is the opaque data of a block the backend encrypted (Anthropic's
	// redacted_thinking); Text and Signature are then empty.
	Redacted string
}

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
	// DeltaStop: StopReason is set; the turn is over.
	DeltaStop
)

// Stop reasons.
const (
	StopEnd       = "end_turn"   // the model finished its message
	StopToolUse   = "tool_use"   // the model wants tool results
	StopMaxTokens = "max_tokens" // cut at the token limit
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
	Msg       string
	Err       error
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

// TransientStatus reports whether an HTTP status is worth retrying: 408, 409, 425, 429, 5xx.
func TransientStatus(code int) bool {
	return code == 408 || code == 409 || code == 425 || code == 429 || code >= 500
}
