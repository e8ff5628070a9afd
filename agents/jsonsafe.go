package agents

import "fmt"

// JSONSafe returns v with every map[any]any (which YAML produces for nested maps with
// non-string keys) turned into map[string]any, so kept Metadata and Unknown values can be
// written as JSON by `summit agents list --json`.
func JSONSafe(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[fmt.Sprint(k)] = JSONSafe(val)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[k] = JSONSafe(val)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = JSONSafe(val)
		}
		return out
	}
	return v
}
