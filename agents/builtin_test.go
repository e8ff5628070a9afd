package agents

import (
	"slices"
	"strings"
	"testing"
)

// roster is seed 001's "Complete Agent Roster" table, row by row, with the
// tier tool lists of its "Four Permission Tiers" section (architect alone
// adds google_web_search). Names are as the seed writes them; tester is
// shipped as maestro-tester because /delegate owns `tester`.
var roster = []struct {
	agent, tier, model string
	temp               float64
	turns, timeout     int
}{
	{"architect", "Read-only", "gemini-3-pro-preview", 0.3, 15, 5},
	{"api-designer", "Read-only", "gemini-3-pro-preview", 0.3, 15, 5},
	{"code-reviewer", "Read-only", "gemini-3-pro-preview", 0.2, 15, 5},
	{"coder", "Full access", "gemini-3-pro-preview", 0.2, 25, 10},
	{"data-engineer", "Full access", "gemini-3-pro-preview", 0.2, 20, 8},
	{"debugger", "Read + shell", "gemini-3-pro-preview", 0.2, 20, 8},
	{"devops-engineer", "Full access", "gemini-3-pro-preview", 0.2, 20, 8},
	{"performance-engineer", "Read + shell", "gemini-3-pro-preview", 0.2, 20, 8},
	{"refactor", "Read + write", "gemini-3-pro-preview", 0.2, 25, 10},
	{"security-engineer", "Read + shell", "gemini-3-pro-preview", 0.2, 20, 8},
	{"technical-writer", "Read + write", "gemini-3-flash-preview", 0.3, 15, 5},
	{"tester", "Full access", "gemini-3-pro-preview", 0.2, 25, 10},
}

var tierTools = map[string][]string{
	"Read-only":    {"read_file", "glob", "search_file_content"},
	"Read + shell": {"read_file", "glob", "search_file_content", "run_shell_command"},
	"Read + write": {"read_file", "glob", "search_file_content", "write_file", "replace"},
	"Full access":  {"read_file", "glob", "search_file_content", "write_file", "replace", "run_shell_command"},
}

func builtinMap(t *testing.T) map[string]*Definition {
	t.Helper()
	m := map[string]*Definition{}
	for _, d := range Builtins() {
		m[d.Name] = d
	}
	return m
}

func TestBuiltinRoster(t *testing.T) {
	b := builtinMap(t)
	for _, r := range roster {
		name := r.agent
		if name == "tester" {
			name = "maestro-tester"
		}
		d, ok := b[name]
		if !ok {
			t.Errorf("%s: missing built-in", name)
			continue
		}
		want := append([]string(nil), tierTools[r.tier]...)
		if r.agent == "architect" {
			want = append(want, "google_web_search")
		}
		want = normaliseTools(want)
		if !slices.Equal(sorted(d.Tools), sorted(want)) {
			t.Errorf("%s: tools %v, want %v (%s)", name, d.Tools, want, r.tier)
		}
		if d.Model.Name != r.model {
			t.Errorf("%s: model %q, want %q", name, d.Model.Name, r.model)
		}
		if d.Temperature == nil || *d.Temperature != r.temp {
			t.Errorf("%s: temperature %v, want %v", name, d.Temperature, r.temp)
		}
		if d.MaxTurns != r.turns || d.TimeoutMins != r.timeout {
			t.Errorf("%s: turns/timeout %d/%d, want %d/%d", name, d.MaxTurns, d.TimeoutMins, r.turns, r.timeout)
		}
		if d.Kind != "local" {
			t.Errorf("%s: kind %q, want local", name, d.Kind)
		}
		if n := len(strings.Fields(d.Body)); n < 150 {
			t.Errorf("%s: persona body has %d words; want a real persona", name, n)
		}
	}
}

// TestBuiltinDelegateTypes checks seed 004's defaults for the four
// /delegate agent types and the four seed 000 built-ins.
func TestBuiltinDelegateTypes(t *testing.T) {
	b := builtinMap(t)
	cases := []struct {
		name   string
		mode   PermissionMode
		must   []string
		mustNo []ToolClass
	}{
		{"builder", ModeAcceptEdits, []string{ToolReadFile, ToolWriteFile, ToolReplace, ToolShell}, nil},
		{"tester", ModePlan, []string{ToolReadFile, ToolShell}, []ToolClass{ClassWrite}},
		{"analyzer", ModePlan, []string{ToolSearch, ToolReadFile}, []ToolClass{ClassWrite, ClassShell}},
		{"retriever", ModePlan, []string{ToolWebFetch, ToolReadFile}, []ToolClass{ClassWrite, ClassShell}},
		{"explore", ModePlan, []string{ToolReadFile, ToolGlob, ToolSearch}, []ToolClass{ClassWrite, ClassShell}},
		{"plan", ModePlan, []string{ToolReadFile}, []ToolClass{ClassWrite, ClassShell}},
		{"bash", ModePlan, []string{ToolShell}, []ToolClass{ClassWrite}},
		{"general", ModeAcceptEdits, []string{ToolReadFile, ToolWriteFile}, nil},
	}
	for _, c := range cases {
		d, ok := b[c.name]
		if !ok {
			t.Errorf("%s: missing", c.name)
			continue
		}
		if d.PermissionMode != c.mode {
			t.Errorf("%s: mode %q, want %q", c.name, d.PermissionMode, c.mode)
		}
		for _, tool := range c.must {
			if !d.HasTool(tool) {
				t.Errorf("%s: lacks %s", c.name, tool)
			}
		}
		for _, tool := range d.Tools {
			if slices.Contains(c.mustNo, ClassOf(tool)) {
				t.Errorf("%s: must not hold %s", c.name, tool)
			}
		}
	}
	if len(b) != 20 {
		t.Errorf("%d built-ins, want 20", len(b))
	}
}

func TestBuiltinsValidateClean(t *testing.T) {
	for _, d := range Builtins() {
		for _, p := range Validate(d) {
			t.Errorf("%s", p)
		}
		if d.HasTool(ToolTask) {
			t.Errorf("%s grants task", d.Name)
		}
	}
}

func sorted(s []string) []string {
	c := append([]string(nil), s...)
	slices.Sort(c)
	return c
}
