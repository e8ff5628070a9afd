package protocols

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The Summit Agent ABI (seed 002): agents are services with a manifest and three JSON-RPC 2.0
// methods. These types round-trip the seed's examples; remote invocation over HTTP is the
// runtime's business.
const (
	MethodInvoke = "agent.invoke"
	MethodStatus = "agent.status"
	MethodSchema = "agent.schema"
	// MethodCancel is summit's addition: it stops a run (a client's /cancel of a remote
	// subagent).
	MethodCancel = "agent.cancel"

	ManifestAPIVersion = "summit.io/v1"
	ManifestKind       = "Agent"
)

// Manifest is an agent.yaml.
type Manifest struct {
	APIVersion string           `json:"apiVersion" yaml:"apiVersion"`
	Kind       string           `json:"kind" yaml:"kind"`
	Metadata   ManifestMetadata `json:"metadata" yaml:"metadata"`
	Spec       ManifestSpec     `json:"spec" yaml:"spec"`
}

type ManifestMetadata struct {
	Name        string `json:"name" yaml:"name"`
	Version     string `json:"version,omitempty" yaml:"version,omitempty"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
}

type ManifestSpec struct {
	Role         string            `json:"role,omitempty" yaml:"role,omitempty"` // researcher, critic, writer, router
	Capabilities []string          `json:"capabilities,omitempty" yaml:"capabilities,omitempty"`
	Resources    map[string]string `json:"resources,omitempty" yaml:"resources,omitempty"`
	Interface    Interface         `json:"interface" yaml:"interface"`
}

// Interface holds the JSON Schemas of an agent's inputs and outputs, as decoded JSON values.
type Interface struct {
	InputSchema  map[string]any `json:"inputSchema,omitempty" yaml:"inputSchema,omitempty"`
	OutputSchema map[string]any `json:"outputSchema,omitempty" yaml:"outputSchema,omitempty"`
}

// Request is a JSON-RPC 2.0 request. ID is a number or a string, kept as raw JSON so it
// round-trips exactly.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// Response is a JSON-RPC 2.0 response: exactly one of Result and Error is set.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

// RPCError is a JSON-RPC 2.0 error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// InvokeParams are the params of agent.invoke.
type InvokeParams struct {
	AgentID string         `json:"agentId"`
	Inputs  map[string]any `json:"inputs"`
	RunID   string         `json:"runId,omitempty"`
	Context *InvokeContext `json:"context,omitempty"`
	// Wait is summit's addition: false returns at once with status running (follow the run's
	// events, ask agent.status); absent or true waits for the end, as the seed's call does.
	Wait *bool `json:"wait,omitempty"`
}

type InvokeContext struct {
	TraceID string             `json:"traceId,omitempty"`
	Budget  map[string]float64 `json:"budget,omitempty"`
}

// InvokeResult is the result of agent.invoke (and of agent.status for a finished run).
type InvokeResult struct {
	Status       string         `json:"status"` // queued | running | completed | failed
	Output       map[string]any `json:"output,omitempty"`
	Metrics      *RunMetrics    `json:"metrics,omitempty"`
	Provenance   *Provenance    `json:"provenance,omitempty"`
	Verification *Verification  `json:"verification,omitempty"`
	// Summit's additions: the run's id, why it failed, and where it is recorded.
	RunID     string `json:"runId,omitempty"`
	Error     string `json:"error,omitempty"`
	Recording string `json:"recording,omitempty"`
}

// Run statuses of InvokeResult.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

type RunMetrics struct {
	Tokens    int64   `json:"tokens,omitempty"`
	LatencyMS int64   `json:"latency_ms,omitempty"`
	CostUSD   float64 `json:"cost_usd,omitempty"`
}

type Provenance struct {
	Model     string `json:"model,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
}

// StatusParams are the params of agent.status.
type StatusParams struct {
	RunID string `json:"runId"`
}

// SchemaParams are the params of agent.schema; the result is the manifest's Interface.
type SchemaParams struct {
	AgentID string `json:"agentId"`
}

// NewRequest builds a request with params marshalled and a numeric id.
func NewRequest(method string, params any, id int64) (Request, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return Request{}, err
	}
	return Request{JSONRPC: "2.0", Method: method, Params: p, ID: json.RawMessage(fmt.Sprint(id))}, nil
}

// DecodeRequest parses and checks a request envelope: version 2.0, a known method, params an
// object. The error is an *RPCError ready to send back.
func DecodeRequest(raw []byte) (Request, error) {
	var r Request
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&r); err != nil {
		return r, &RPCError{Code: CodeParseError, Message: "parse error: " + err.Error()}
	}
	switch {
	case r.JSONRPC != "2.0":
		return r, &RPCError{Code: CodeInvalidRequest, Message: fmt.Sprintf(`"jsonrpc" must be "2.0", got %q`, r.JSONRPC)}
	case r.Method != MethodInvoke && r.Method != MethodStatus && r.Method != MethodSchema && r.Method != MethodCancel:
		return r, &RPCError{Code: CodeMethodNotFound, Message: fmt.Sprintf("unknown method %q (agent.invoke, agent.status, agent.schema, agent.cancel)", r.Method)}
	case len(r.Params) > 0 && bytes.TrimSpace(r.Params)[0] != '{':
		return r, &RPCError{Code: CodeInvalidParams, Message: "params must be an object"}
	}
	return r, nil
}

// ValidateInputs checks invoke inputs against the manifest's inputSchema. A manifest without
// an inputSchema accepts any object. The error is an *RPCError (invalid params) whose message
// names the JSON pointer of each violation and whose data.path is the first.
func (m Manifest) ValidateInputs(inputs map[string]any) error {
	return m.validate(m.Spec.Interface.InputSchema, "input", inputs, "inputs")
}

// ValidateOutput checks a run's output against the manifest's outputSchema, like
// ValidateInputs.
func (m Manifest) ValidateOutput(output map[string]any) error {
	return m.validate(m.Spec.Interface.OutputSchema, "output", output, "output")
}

func (m Manifest) validate(schema map[string]any, which string, value map[string]any, prefix string) error {
	if len(schema) == 0 {
		return nil
	}
	// Round-trip through JSON so YAML-decoded schemas (ints, nested maps) and Go values reach
	// the validator in its own representation.
	schemaJSON, err := json.Marshal(schema)
	if err != nil {
		return fmt.Errorf("manifest %s: %sSchema: %w", m.Metadata.Name, which, err)
	}
	v, err := compileSchema(schemaJSON)
	if err != nil {
		return fmt.Errorf("manifest %s: %sSchema does not compile: %w", m.Metadata.Name, which, err)
	}
	inJSON, err := json.Marshal(value)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(inJSON, &doc); err != nil {
		return err
	}
	if msgs := v.violations(doc, prefix); len(msgs) > 0 {
		path := prefix
		if first, _, ok := strings.Cut(msgs[0], ": "); ok {
			path = first
		}
		return &RPCError{Code: CodeInvalidParams, Message: strings.Join(msgs, "; "), Data: map[string]any{"path": path}}
	}
	return nil
}

// Check reports what makes a manifest unusable: wrong apiVersion or kind, no name.
func (m Manifest) Check() error {
	var errs []string
	if m.APIVersion != ManifestAPIVersion {
		errs = append(errs, fmt.Sprintf("apiVersion must be %s, got %q", ManifestAPIVersion, m.APIVersion))
	}
	if m.Kind != ManifestKind {
		errs = append(errs, fmt.Sprintf("kind must be %s, got %q", ManifestKind, m.Kind))
	}
	if m.Metadata.Name == "" {
		errs = append(errs, "metadata.name is required")
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
