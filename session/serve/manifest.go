package serve

import (
	"fmt"
	"maps"
	"slices"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/protocols"
)

// DefaultInputSchema is what an agent without an interface takes: the task, as text.
func DefaultInputSchema() map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"task"},
		"properties": map[string]any{
			"task": map[string]any{"type": "string", "minLength": 1, "description": "what the agent is asked to do"},
		},
	}
}

// DefaultOutputSchema is the result capsule's shape, what every summit agent ends with.
func DefaultOutputSchema() map[string]any {
	str := map[string]any{"type": "string"}
	return map[string]any{
		"type":     "object",
		"required": []any{"summary"},
		"properties": map[string]any{
			"summary":    str,
			"status":     map[string]any{"type": "string", "enum": []any{"success", "partial", "failure"}},
			"confidence": map[string]any{"type": "number", "minimum": 0, "maximum": 1},
			"findings": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []any{"summary"},
				"properties": map[string]any{"summary": str, "severity": str}}},
			"verification":       map[string]any{"type": "object"},
			"task_report":        str,
			"downstream_context": str,
		},
	}
}

// ManifestOf is an agent definition as a Summit Agent ABI manifest: its name, description,
// version and role, and its interface — the one an agent.yaml declares (spec.interface), else
// the default (a task in, the result capsule out).
func ManifestOf(d *agents.Definition) protocols.Manifest {
	m := protocols.Manifest{APIVersion: protocols.ManifestAPIVersion, Kind: protocols.ManifestKind,
		Metadata: protocols.ManifestMetadata{Name: d.Name, Description: d.Description},
		Spec:     protocols.ManifestSpec{Role: d.Role}}
	if v, ok := d.Metadata["version"].(string); ok {
		m.Metadata.Version = v
	}
	if d.Source.Dialect == agents.DialectManifest {
		// A manifest's capabilities list is read as skills (agents/decode.go).
		m.Spec.Capabilities = slices.Clone(d.Skills)
	}
	if res, ok := d.Metadata["resources"].(map[string]any); ok {
		m.Spec.Resources = map[string]string{}
		for k, v := range res {
			m.Spec.Resources[k] = fmt.Sprint(v)
		}
	}
	iface, _ := d.Metadata["interface"].(map[string]any)
	if iface == nil {
		iface, _ = d.Unknown["interface"].(map[string]any)
	}
	if in, ok := iface["inputSchema"].(map[string]any); ok {
		m.Spec.Interface.InputSchema = maps.Clone(in)
	} else {
		m.Spec.Interface.InputSchema = DefaultInputSchema()
	}
	if out, ok := iface["outputSchema"].(map[string]any); ok {
		m.Spec.Interface.OutputSchema = maps.Clone(out)
	} else {
		m.Spec.Interface.OutputSchema = DefaultOutputSchema()
	}
	return m
}
