package agents

import "strings"

// Model is a normalised model choice. Files write a routing alias
// (`fast`, `sonnet`, `inherit`), a concrete id (`gemini-3-pro-preview`), a
// `provider/model` string, or a list whose first entry is preferred and the
// rest are fallbacks tried in order.
type Model struct {
	Name      string   `json:"name,omitempty"`      // as written, alias lower-cased
	Provider  string   `json:"provider,omitempty"`  // the part before "/" in provider/model
	Alias     bool     `json:"alias,omitempty"`     // Name is a routing alias, resolved by the provider layer
	Fallbacks []string `json:"fallbacks,omitempty"` // further candidates, in order
}

// IsZero reports whether no model was chosen (the session default applies).
func (m Model) IsZero() bool { return m.Name == "" }

// Inherit reports whether the subagent runs on its parent's model.
func (m Model) Inherit() bool { return m.Name == "inherit" }

func (m Model) String() string {
	if len(m.Fallbacks) == 0 {
		return m.Name
	}
	return m.Name + " (fallbacks: " + strings.Join(m.Fallbacks, ", ") + ")"
}

// modelAliases are names that select a model class rather than a model:
// Summit's tiers, Claude Code's family names, and inherit/auto.
var modelAliases = map[string]bool{
	"fast": true, "default": true, "deep": true,
	"sonnet": true, "opus": true, "haiku": true,
	"inherit": true, "auto": true,
}

// ParseModel normalises one or more model strings.
func ParseModel(names ...string) Model {
	var clean []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			clean = append(clean, n)
		}
	}
	if len(clean) == 0 {
		return Model{}
	}
	m := Model{Name: clean[0], Fallbacks: clean[1:]}
	if low := strings.ToLower(m.Name); modelAliases[low] {
		m.Name, m.Alias = low, true
	} else if p, _, ok := strings.Cut(m.Name, "/"); ok && p != "" {
		m.Provider = p
	}
	if len(m.Fallbacks) == 0 {
		m.Fallbacks = nil
	}
	return m
}
