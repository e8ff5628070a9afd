package protocols

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The examples of seed 002, verbatim.
const seedManifest = `apiVersion: summit.io/v1
kind: Agent
metadata:
  name: "deep-researcher"
  version: "0.1.0"
  description: "Autonomous OSINT investigator with deep web retrieval capabilities."
spec:
  role: "researcher" # researcher, critic, writer, router
  capabilities:
    - "search:google"
    - "browser:headless"
  resources:
    memory: "high" # context window hint
  interface:
    inputSchema: # JSON Schema for inputs
      type: object
      required: ["query"]
      properties:
        query: { type: string }
        depth: { type: integer, default: 2 }
    outputSchema: # JSON Schema for outputs
      type: object
      properties:
        summary: { type: string }
        sources: { type: array, items: { type: string } }
        confidence: { type: number }
`

const seedRequest = `{
  "jsonrpc": "2.0",
  "method": "agent.invoke",
  "params": {
    "agentId": "deep-researcher",
    "inputs": {
      "query": "status of quantum computing in 2026"
    },
    "runId": "run-12345",
    "context": {
      "traceId": "trace-abc",
      "budget": { "usd": 0.50 }
    }
  },
  "id": 1
}`

const seedResponse = `{
  "jsonrpc": "2.0",
  "result": {
    "status": "completed",
    "output": {
      "summary": "...",
      "sources": ["..."],
      "confidence": 0.85
    },
    "metrics": {
      "tokens": 4500,
      "latency_ms": 12000,
      "cost_usd": 0.04
    },
    "provenance": {
      "model": "gpt-4o",
      "timestamp": "2026-01-05T12:00:00Z"
    },
    "verification": {
      "status": "passed",
      "score": 0.9,
      "checks": [
        { "name": "hallucination-check", "passed": true },
        { "name": "safety-policy", "passed": true }
      ]
    }
  },
  "id": 1
}`

// sameJSON compares two documents as decoded values.
func sameJSON(t *testing.T, a, b []byte) {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x, y) {
		t.Errorf("round trip differs:\n%s\n---\n%s", a, b)
	}
}

func TestABIRoundTrip(t *testing.T) {
	req, err := DecodeRequest([]byte(seedRequest))
	if err != nil {
		t.Fatal(err)
	}
	var p InvokeParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatal(err)
	}
	if p.AgentID != "deep-researcher" || p.RunID != "run-12345" || p.Context.Budget["usd"] != 0.5 {
		t.Errorf("params %+v", p)
	}
	again, _ := json.Marshal(Request{JSONRPC: req.JSONRPC, Method: req.Method, Params: mustJSON(t, p), ID: req.ID})
	sameJSON(t, []byte(seedRequest), again)

	var resp Response
	if err := json.Unmarshal([]byte(seedResponse), &resp); err != nil {
		t.Fatal(err)
	}
	var res InvokeResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.Metrics.Tokens != 4500 || res.Provenance.Model != "gpt-4o" || res.Verification.Status != "passed" ||
		*res.Verification.Score != 0.9 || len(res.Verification.Checks) != 2 {
		t.Errorf("result %+v", res)
	}
	again, _ = json.Marshal(Response{JSONRPC: "2.0", Result: mustJSON(t, res), ID: resp.ID})
	sameJSON(t, []byte(seedResponse), again)

	var m Manifest
	if err := yaml.Unmarshal([]byte(seedManifest), &m); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if m.Metadata.Name != "deep-researcher" || m.Spec.Role != "researcher" || len(m.Spec.Capabilities) != 2 || m.Spec.Resources["memory"] != "high" {
		t.Errorf("manifest %+v", m)
	}
	if err := m.ValidateInputs(p.Inputs); err != nil {
		t.Errorf("the seed's own inputs fail validation: %v", err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateInputs(t *testing.T) {
	var m Manifest
	if err := yaml.Unmarshal([]byte(seedManifest), &m); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		inputs map[string]any
		want   string
	}{
		{map[string]any{"query": "x", "depth": 3}, ""},
		{map[string]any{}, `inputs: required: missing properties: ["query"]`},
		{map[string]any{"query": 7}, `inputs/query: type: 7 has type "integer", want "string"`},
		{map[string]any{"query": "x", "depth": 2.5}, `inputs/depth: type: 2.5 has type "number", want "integer"`},
	}
	for _, c := range cases {
		err := m.ValidateInputs(c.inputs)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.inputs, err)
			}
			continue
		}
		var rpc *RPCError
		if !errors.As(err, &rpc) || rpc.Code != CodeInvalidParams || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want invalid params containing %q", c.inputs, err, c.want)
		}
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	cases := map[string]int{
		`{"jsonrpc":"1.0","method":"agent.invoke","id":1}`:              CodeInvalidRequest,
		`{"jsonrpc":"2.0","method":"agent.run","id":1}`:                 CodeMethodNotFound,
		`{"jsonrpc":"2.0","method":"agent.status","params":[1],"id":1}`: CodeInvalidParams,
		`{"jsonrpc":`: CodeParseError,
	}
	for in, code := range cases {
		_, err := DecodeRequest([]byte(in))
		var rpc *RPCError
		if !errors.As(err, &rpc) || rpc.Code != code {
			t.Errorf("%s: got %v, want code %d", in, err, code)
		}
	}
	m := Manifest{APIVersion: "summit.io/v2", Kind: "Tool"}
	if err := m.Check(); err == nil || !strings.Contains(err.Error(), "apiVersion must be summit.io/v1") || !strings.Contains(err.Error(), "metadata.name is required") {
		t.Errorf("Check: %v", err)
	}
}

// Every violation is named by the JSON pointer of the value that breaks it, at any depth, in
// key order, and the path of the first is the error's data.
func TestValidateNamesEveryViolation(t *testing.T) {
	m := Manifest{Metadata: ManifestMetadata{Name: "deep"}, Spec: ManifestSpec{Interface: Interface{InputSchema: map[string]any{
		"type":     "object",
		"required": []any{"items"},
		"properties": map[string]any{
			"items": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "required": []any{"id"}, "additionalProperties": false,
				"properties": map[string]any{"id": map[string]any{"type": "integer", "minimum": 1}, "tag": map[string]any{"enum": []any{"a", "b"}}},
			}},
			"a/b": map[string]any{"type": "string"},
		},
	}}}}
	err := m.ValidateInputs(map[string]any{
		"a/b":   false,
		"items": []any{map[string]any{"id": 1}, map[string]any{"id": 0, "tag": "c"}, map[string]any{"tag": "a", "extra": true}},
	})
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != CodeInvalidParams {
		t.Fatalf("got %v, want invalid params", err)
	}
	want := []string{
		`inputs/a~1b: type: false has type "boolean", want "string"`,
		`inputs/items/1/id: minimum: 0 is less than 1`,
		`inputs/items/1/tag: enum: c does not equal any of: [a b]`,
		`inputs/items/2/extra: not allowed (no such property)`,
		`inputs/items/2: required: missing properties: ["id"]`,
	}
	if got := strings.Split(rpc.Message, "; "); !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p := rpc.Data.(map[string]any)["path"]; p != "inputs/a~1b" {
		t.Errorf("data path %v", p)
	}
	// A value that passes has no error; a model sending a million wrong items gets a bounded
	// report.
	if err := m.ValidateInputs(map[string]any{"items": []any{map[string]any{"id": 3, "tag": "b"}}}); err != nil {
		t.Errorf("valid inputs: %v", err)
	}
	many := make([]any, 100000)
	for i := range many {
		many[i] = map[string]any{"id": "x"}
	}
	err = m.ValidateInputs(map[string]any{"items": many})
	if !errors.As(err, &rpc) || strings.Count(rpc.Message, "; ")+1 != maxViolations {
		t.Errorf("a huge array reported %d violations, want %d", strings.Count(rpc.Message, "; ")+1, maxViolations)
	}
}

// A violation inside a $ref'd definition cannot be placed deeper than the property that
// refers to it; it is still reported, with the validator's own words. Draft-07 schemas work.
func TestValidateRefsAndDraft7(t *testing.T) {
	m := Manifest{Metadata: ManifestMetadata{Name: "refs"}, Spec: ManifestSpec{Interface: Interface{InputSchema: map[string]any{
		"$schema":     "http://json-schema.org/draft-07/schema#",
		"definitions": map[string]any{"pos": map[string]any{"type": "integer", "minimum": 0}},
		"type":        "object",
		"properties":  map[string]any{"at": map[string]any{"$ref": "#/definitions/pos"}},
	}}}}
	err := m.ValidateInputs(map[string]any{"at": -2})
	if err == nil || !strings.Contains(err.Error(), "minimum: -2 is less than 0") || !strings.Contains(err.Error(), "inputs") {
		t.Fatalf("got %v", err)
	}
	if err := m.ValidateInputs(map[string]any{"at": 4}); err != nil {
		t.Errorf("valid: %v", err)
	}
	bad := Manifest{Metadata: ManifestMetadata{Name: "bad"}, Spec: ManifestSpec{Interface: Interface{InputSchema: map[string]any{"type": 7}}}}
	if err := bad.ValidateInputs(map[string]any{}); err == nil || !strings.Contains(err.Error(), "inputSchema does not compile") {
		t.Errorf("a schema that does not compile: %v", err)
	}
}
