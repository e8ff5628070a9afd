package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBrokenFiles: each hand-written broken file fails with one precise
// error at the right line, never a panic.
func TestBrokenFiles(t *testing.T) {
	cases := []struct {
		file string
		line int
		msg  string
	}{
		{"no-end.md", 1, "never closed"},
		{"tabs.md", 5, "tab character in indentation"},
		{"duplicate-keys.md", 5, `duplicate key "description" (first at line 3)`},
		{"non-utf8.md", 3, "invalid UTF-8 byte 0xE9"},
		{"tools-number.md", 4, "tools must be a list, a comma-separated string or a map of booleans, found a number"},
		{"templated.md", 2, "template syntax"},
		{"templated.yaml", 4, "template syntax"},
		{"no-frontmatter.md", 1, "no YAML frontmatter"},
		{"wrong-kind.yaml", 2, "only `kind: Agent`"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p := filepath.Join("testdata", "broken", c.file)
			d, ps := ParseFile(p)
			if d != nil {
				t.Fatalf("loaded a broken file: %+v", d)
			}
			if len(ps) == 0 || ps[0].Level != LevelError || ps[0].Line != c.line || !strings.Contains(ps[0].Message, c.msg) {
				t.Fatalf("got %v, want %s:%d: error: ...%s...", ps, p, c.line, c.msg)
			}
			if want := p + ":"; !strings.HasPrefix(ps[0].String(), want) {
				t.Errorf("%q does not start with %q", ps[0], want)
			}
		})
	}
}

func TestHugeBody(t *testing.T) {
	data := []byte("---\nname: huge\ndescription: big\n---\n" + strings.Repeat("x", 2<<20))
	d, ps := Parse("huge.md", data)
	if d != nil || len(ps) != 1 || ps[0].Line != 1 || !strings.Contains(ps[0].Message, "larger than") {
		t.Fatalf("got %v %v", d, ps)
	}
}

func TestTolerantPass(t *testing.T) {
	d, ps := ParseFile("testdata/tolerant-example.md")
	if d == nil {
		t.Fatalf("did not load: %v", ps)
	}
	if len(ps) != 1 || ps[0].Level != LevelWarning || ps[0].Line != 3 {
		t.Errorf("want one warning at line 3, got %v", ps)
	}
	if !strings.Contains(d.Description, "Examples:\n<example>") || !strings.Contains(d.Description, `user: "Please review my change"`) {
		t.Errorf("description lost its example: %q", d.Description)
	}
	if !slices.Equal(d.Tools, []string{ToolReadFile, ToolSearch, ToolShell}) {
		t.Errorf("tools %v", d.Tools)
	}
	if d.Source.Line("tools") != 9 || d.Source.Line("model") != 10 {
		t.Errorf("key lines moved: %v", d.Source.Lines)
	}
	if !d.Model.Alias || d.Model.Name != "sonnet" || d.Source.Dialect != DialectClaudeCode {
		t.Errorf("model %+v dialect %s", d.Model, d.Source.Dialect)
	}
}

func TestOpencodeMap(t *testing.T) {
	d, ps := ParseFile("testdata/opencode-map.md")
	if d == nil {
		t.Fatalf("did not load: %v", ps)
	}
	if d.Name != "opencode-map" {
		t.Errorf("name %q, want the file name", d.Name)
	}
	if !slices.Equal(d.Tools, []string{ToolReadFile, ToolSearch}) {
		t.Errorf("tools %v", d.Tools)
	}
	if !slices.Equal(sorted(d.DisallowedTools), sorted([]string{ToolShell, ToolReplace})) {
		t.Errorf("disallowed %v", d.DisallowedTools)
	}
	if d.Temperature == nil || *d.Temperature != 0 || d.MaxTurns != 12 || d.Kind != "subagent" {
		t.Errorf("temp %v turns %d kind %q", d.Temperature, d.MaxTurns, d.Kind)
	}
	if d.Model.Name != "anthropic/claude-sonnet-4" || d.Model.Provider != "anthropic" || !slices.Equal(d.Model.Fallbacks, []string{"openai/gpt-5"}) {
		t.Errorf("model %+v", d.Model)
	}
	if _, ok := d.Unknown["mystery"]; !ok || len(ps) != 1 || ps[0].Line != 16 {
		t.Errorf("unknown key not kept and warned: %v %v", d.Unknown, ps)
	}
	if d.Source.Dialect != DialectOpencode {
		t.Errorf("dialect %s", d.Source.Dialect)
	}
}

func TestManifest(t *testing.T) {
	d, ps := ParseFile("testdata/manifest.yaml")
	if d == nil || len(ps) != 0 {
		t.Fatalf("%v %v", d, ps)
	}
	if d.Name != "deep-researcher" || d.Role != "researcher" || d.Source.Dialect != DialectManifest ||
		!strings.HasPrefix(d.Description, "Autonomous") || !slices.Equal(d.Skills, []string{"search:google"}) {
		t.Errorf("%+v", d)
	}
}

func TestNormalisation(t *testing.T) {
	cases := []struct {
		src   string
		check func(*Definition) bool
	}{
		{"tools: Read, Grep, mcp__gh__search, context7/*", func(d *Definition) bool {
			return slices.Equal(d.Tools, []string{ToolReadFile, ToolSearch, "mcp__gh__search", "context7/*"})
		}},
		{"tools: []", func(d *Definition) bool { return d.Tools != nil && len(d.Tools) == 0 }},
		{"tools:", func(d *Definition) bool { return d.Tools == nil }},
		{"temperature: 1", func(d *Definition) bool { return *d.Temperature == 1 }},
		{"max_turns: 7", func(d *Definition) bool { return d.MaxTurns == 7 }},
		{"maxTurns: 8", func(d *Definition) bool { return d.MaxTurns == 8 }},
		{"model: Inherit", func(d *Definition) bool { return d.Model.Inherit() }},
		{"model: gemini-3-pro-preview", func(d *Definition) bool { return !d.Model.Alias && d.Model.Provider == "" }},
		{"permissionMode: accept-edits", func(d *Definition) bool { return d.PermissionMode == ModeAcceptEdits }},
		{"tools: [WebFetch, WebSearch, google_web_search, Task]", func(d *Definition) bool {
			return slices.Equal(d.Tools, []string{ToolWebFetch, ToolWebSearch, ToolTask})
		}},
	}
	for _, c := range cases {
		d, ps := Parse("x.md", []byte("---\nname: x\ndescription: d\n"+c.src+"\n---\n"))
		if d == nil || !c.check(d) {
			t.Errorf("%q: %+v %v", c.src, d, ps)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b: c\n<example>\nuser: x\n</example>\ntools: Read\n---\nbody"))
	f.Add([]byte("---\ntools:\n  \"*\": false\n  read: true\n---\n"))
	f.Add([]byte("apiVersion: summit.io/v1\nkind: Agent\nmetadata: {name: x}\n"))
	f.Add([]byte("---\nname: &a [*a]\n---\n"))
	f.Add([]byte("---\nname: {{ .X }}\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []string{"f.md", "f.yaml"} {
			d, ps := Parse(p, data)
			if d == nil && !HasErrors(ps) {
				t.Fatalf("nil definition without an error")
			}
			if d != nil {
				Validate(d)
			}
		}
	})
}

// TestFileCap: an agent file over MaxFileSize is refused at line 1, naming the cap, having
// read no more than one byte past it; one of exactly the cap loads.
func TestFileCap(t *testing.T) {
	head := "---\nname: big\ndescription: big\n---\n"
	dir := t.TempDir()
	p := filepath.Join(dir, "big.md")
	if err := os.WriteFile(p, []byte(head+strings.Repeat("x", MaxFileSize-len(head)+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	d, ps := ParseFile(p)
	if want := p + ":1: error: file is larger than 1 MiB, the cap on an agent definition"; d != nil || len(ps) != 1 || ps[0].String() != want {
		t.Errorf("over the cap: %v %v, want %s", d, ps, want)
	}
	if err := os.Truncate(p, MaxFileSize); err != nil {
		t.Fatal(err)
	}
	if d, ps := ParseFile(p); d == nil || HasErrors(ps) || len(d.Body) != MaxFileSize-len(head) {
		t.Errorf("at the cap: %v", ps)
	}
}

// TestFrontmatterAliases: anchors, aliases and merge keys work in frontmatter; an alias bomb
// and an alias cycle are refused at the alias's file line, at once.
func TestFrontmatterAliases(t *testing.T) {
	src := "---\nname: aliased\ndescription: &d \"Reads code.\"\ntools: &t [Read, Grep]\ndisallowedTools: *t\nmetadata: &m {team: core}\nspec: {<<: *m, tier: 2}\n---\nbody\n"
	d, ps := Parse("a.md", []byte(src))
	if d == nil || HasErrors(ps) {
		t.Fatalf("did not load: %v", ps)
	}
	if !slices.Equal(d.DisallowedTools, d.Tools) || len(d.Tools) != 2 || d.Description != "Reads code." {
		t.Errorf("aliases: tools %v, disallowed %v, description %q", d.Tools, d.DisallowedTools, d.Description)
	}
	if spec, _ := d.Unknown["spec"].(map[string]any); spec["team"] != "core" || spec["tier"] != 2 {
		t.Errorf("merge key: %#v", d.Unknown["spec"])
	}

	var bomb strings.Builder
	bomb.WriteString("---\nname: bomb\nl0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&bomb, "l%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	bomb.WriteString("---\n")
	start := time.Now()
	for _, c := range []struct{ src, want string }{
		{bomb.String(), "b.md:7: error: alias *a3: YAML aliases expand this document past 100000 nodes; refused as an alias bomb"},
		{"---\nname: cyc\ntools: &t [Read, *t]\n---\n", "b.md:3: error: alias *t is inside the node its anchor marks (a cycle)"},
	} {
		d, ps := Parse("b.md", []byte(c.src))
		if d != nil || len(ps) != 1 || ps[0].String() != c.want {
			t.Errorf("got %v, want %s", ps, c.want)
		}
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("refusing took %v", el)
	}
}

// entry_prompt_file names a file beside the agent file or below it; one that leaves the
// folder (.., an absolute path, a symbolic link out) is not read: an agent file from a cloned
// repository must not make ~/.ssh/id_rsa a system prompt sent to a provider.
func TestEntryPromptFileStaysInside(t *testing.T) {
	dir := t.TempDir()
	agentsDir := filepath.Join(dir, "agents")
	os.MkdirAll(filepath.Join(agentsDir, "prompts"), 0o755)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("SECRET KEY"), 0o600)
	os.WriteFile(filepath.Join(agentsDir, "prompts", "p.md"), []byte("You review code."), 0o644)
	os.Symlink(filepath.Join(dir, "secret.txt"), filepath.Join(agentsDir, "prompts", "link.md"))
	for _, c := range []struct{ ref, body, warn string }{
		{"prompts/p.md", "You review code.", ""},
		{"../secret.txt", "", "leaves the agent file's folder"},
		{filepath.Join(dir, "secret.txt"), "", "leaves the agent file's folder"},
		{"prompts/link.md", "", "is a link to " + filepath.Join(dir, "secret.txt")},
	} {
		f := filepath.Join(agentsDir, "a.md")
		os.WriteFile(f, []byte("---\nname: a\ndescription: An agent.\nentry_prompt_file: "+c.ref+"\n---\n"), 0o644)
		d, ps := ParseFile(f)
		if d == nil {
			t.Fatalf("%s: %v", c.ref, ps)
		}
		if strings.Contains(d.Body, "SECRET") || d.Body != c.body {
			t.Errorf("%s: body %q", c.ref, d.Body)
		}
		if c.warn != "" && (len(ps) != 1 || !strings.Contains(ps[0].Message, c.warn)) {
			t.Errorf("%s: problems %v", c.ref, ps)
		}
	}
}

// An external agent file (kind: acp) names its command, args and env without warnings; they
// are kept for agents/acp.
func TestACPAgentFileKeys(t *testing.T) {
	d, ps := Parse("ext.md", []byte("---\nname: ext\ndescription: An external agent.\nkind: acp\ncommand: my-agent\nargs: [--acp]\nenv: {A: b}\n---\n"))
	if d == nil || len(ps) != 0 || d.Metadata["command"] != "my-agent" || d.Metadata["env"] == nil || d.Metadata["args"] == nil {
		t.Errorf("%+v %v", d, ps)
	}
	if _, ps := Parse("x.md", []byte("---\nname: x\ndescription: X.\ncommand: my-agent\n---\n")); len(ps) != 1 || !strings.Contains(ps[0].Message, `unknown key "command"`) {
		t.Errorf("command outside kind acp: %v", ps)
	}
}
