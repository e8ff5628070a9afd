package agents

import (
	"slices"
	"testing"
)

// A GitHub Copilot custom agent (.github/agents/NAME.agent.md): description, a tools list in
// Copilot's own names, a model; the name comes from the file name without .agent.md.
func TestCopilotDialect(t *testing.T) {
	src := "---\ndescription: 'Plans features without editing code'\ntools: ['read', 'search', 'fetch']\nmodel: Claude Sonnet 4\n---\nYou plan. You never edit.\n"
	d, probs := Parse(".github/agents/planner.agent.md", []byte(src))
	if d == nil || HasErrors(probs) {
		t.Fatalf("did not load: %v", probs)
	}
	if d.Name != "planner" || d.Source.Dialect != DialectCopilot || d.Description != "Plans features without editing code" {
		t.Errorf("definition %+v (dialect %s)", d, d.Source.Dialect)
	}
	if !slices.Contains(d.Tools, ToolReadFile) {
		t.Errorf("tools %v lack read_file", d.Tools)
	}
	if d.Body != "You plan. You never edit.\n" && d.Body != "You plan. You never edit." {
		t.Errorf("body %q", d.Body)
	}
}
