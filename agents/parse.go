package agents

import (
	"fmt"
	"github.com/summit-dev/summit/session/record"
	"io"
	"path/filepath"
	"strings"
)

// ParseFile reads and parses one agent file. See Parse.
func ParseFile(path string) (*Definition, []Problem) {
	ps := &problems{file: path}
	f, err := record.OpenRegular(path) // a FIFO named x.md must not hang the catalogue
	if err != nil {
		ps.errorf(0, "cannot read: %v", err)
		return nil, ps.list
	}
	defer f.Close()
	// Read one byte past the limit so an oversized file is named as such
	// without reading all of it.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		ps.errorf(0, "cannot read: %v", err)
		return nil, ps.list
	}
	d, list := Parse(path, data)
	if d != nil && d.Body == "" {
		list = append(list, loadEntryPrompt(d)...)
	}
	return d, list
}

// loadEntryPrompt reads the body a runtime-spec names in entry_prompt_file.
func loadEntryPrompt(d *Definition) []Problem {
	ref, _ := d.Metadata["entry_prompt_file"].(string)
	if ref == "" {
		return nil
	}
	ps := &problems{file: d.Source.Path}
	dir := filepath.Dir(d.Source.Path)
	p, err := insideDir(dir, filepath.FromSlash(ref))
	if err != nil {
		// An agent file from a cloned repository must not turn ~/.ssh/id_rsa into a system
		// prompt that is sent to a model provider.
		ps.warnf(d.Source.Line("entry_prompt_file"), "entry_prompt_file %q %v; it must name a file in the agent file's folder or below it; the agent has no system prompt", ref, err)
		return ps.list
	}
	b, err := record.ReadRegular(p, MaxFileSize+1)
	switch {
	case err != nil:
		ps.warnf(d.Source.Line("entry_prompt_file"), "entry_prompt_file %q cannot be read (%v); the agent has no system prompt", ref, err)
	case len(b) > MaxFileSize:
		ps.warnf(d.Source.Line("entry_prompt_file"), "entry_prompt_file %q is larger than %d MiB, the cap on an agent definition; ignored", ref, MaxFileSize>>20)
	default:
		d.Body = string(b)
	}
	return ps.list
}

// insideDir returns dir/rel when it stays inside dir, symbolic links followed; an error says
// how it leaves.
func insideDir(dir, rel string) (string, error) {
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("leaves the agent file's folder")
	}
	p := filepath.Join(dir, rel)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p, nil // missing: ReadRegular reports it
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(base, real); err != nil || !filepath.IsLocal(r) {
		return "", fmt.Errorf("is a link to %s, outside the agent file's folder", real)
	}
	return real, nil
}

// Parse reads one agent definition from data. path names the file in
// problems, supplies the name when the file has none, and chooses between
// Markdown-with-frontmatter (.md) and a YAML manifest (.yaml, .yml).
//
// The definition is nil when an error-level problem prevents loading; it is
// never nil otherwise. Parse never panics, whatever data holds.
func Parse(path string, data []byte) (*Definition, []Problem) {
	ps := &problems{file: path}
	if le := checkBytes(data); le != nil {
		ps.errorf(le.line, "%s", le.msg)
		return nil, ps.list
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")

	var doc document
	if isYAMLFile(path) {
		doc = document{yaml: strings.TrimPrefix(text, "\uFEFF"), yamlLine: 1}
	} else {
		var le *lineError
		if doc, le = splitMarkdown(text); le != nil {
			ps.errorf(le.line, "%s", le.msg)
			return nil, ps.list
		}
	}
	if le := precheck(doc.yaml, doc.yamlLine); le != nil {
		ps.errorf(le.line, "%s", le.msg)
		return nil, ps.list
	}

	root, strictErr := parseYAML(doc.yaml, doc.yamlLine)
	repaired := false
	if strictErr != nil {
		fixedSrc, fixedLines := repairYAML(doc.yaml)
		if len(fixedLines) == 0 {
			ps.errorf(strictErr.line, "%s", strictErr.msg)
			return nil, ps.list
		}
		r, err2 := parseYAML(fixedSrc, doc.yamlLine)
		if err2 != nil {
			ps.errorf(strictErr.line, "%s (the tolerant second pass failed too: line %d: %s)", strictErr.msg, err2.line, err2.msg)
			return nil, ps.list
		}
		root, repaired = r, true
		for _, l := range fixedLines {
			ps.warnf(doc.yamlLine+l-1, "value is not valid YAML (unquoted `: ` or unindented continuation lines); read as literal text: quote it or use a `|` block")
		}
	}

	d := &Definition{
		Body: strings.TrimLeft(doc.body, "\n"),
		Source: Source{
			Path:     path,
			Lines:    map[string]int{},
			BodyLine: doc.bodyLine,
			Repaired: repaired,
		},
	}
	decode(d, root, doc.yamlLine, ps)
	if d.Name == "" {
		d.Name = nameFromPath(path)
	}
	d.Source.Dialect = detectDialect(path, d)
	if HasErrors(ps.list) {
		return nil, ps.list
	}
	return d, ps.list
}

func isYAMLFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// genericBases are file names that say nothing about the agent; the
// directory holding them carries the name (agents/codex/runtime-spec.yaml).
var genericBases = map[string]bool{"agent": true, "runtime-spec": true, "manifest": true, "index": true}

// nameFromPath is the name a file without `name` gets: its base name without
// .md, .agent.md, .chatmode.md, .yaml or .yml.
func nameFromPath(path string) string {
	base := filepath.Base(path)
	low := strings.ToLower(base)
	for _, ext := range []string{".agent.md", ".chatmode.md", ".md", ".markdown", ".yaml", ".yml"} {
		if strings.HasSuffix(low, ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	if genericBases[strings.ToLower(base)] {
		if dir := filepath.Base(filepath.Dir(path)); dir != "." && dir != string(filepath.Separator) {
			return dir
		}
	}
	return base
}

// detectDialect labels a definition by path conventions first (they are
// unambiguous), then by the keys it uses.
func detectDialect(path string, d *Definition) Dialect {
	p := filepath.ToSlash(strings.ToLower(path))
	_, hasGeminiTools := d.Metadata["tools.gemini"]
	_, hasRuntime := d.Metadata["entry_prompt_file"]
	_, hasRegistry := d.Metadata["sop_refs"]
	switch {
	case strings.HasSuffix(p, ".agent.md") || strings.HasSuffix(p, ".chatmode.md"):
		return DialectCopilot
	case d.Metadata["apiVersion"] != nil:
		return DialectManifest
	case isYAMLFile(path) && (hasRuntime || strings.HasSuffix(p, "runtime-spec.yaml")):
		return DialectRuntimeSpec
	case isYAMLFile(path) && (hasRegistry || d.Metadata["id"] != nil || strings.Contains(p, "/registry/")):
		return DialectRegistry
	case hasGeminiTools:
		return DialectMaestro
	case strings.Contains(p, "/.qwen/") || strings.Contains(p, "/qwen/"):
		return DialectQwen
	case strings.Contains(p, "/.opencode/") || strings.Contains(p, "/opencode/"):
		return DialectOpencode
	case d.Kind == "local" || strings.Contains(p, "/.gemini/"):
		return DialectGemini
	case strings.Contains(p, "/.claude/") || d.Source.Lines["color"] > 0 && d.Kind == "":
		return DialectClaudeCode
	case d.Kind == "primary" || d.Kind == "subagent" || d.Kind == "all":
		return DialectOpencode
	case strings.Contains(p, "/.summit/") || strings.Contains(p, "resources/agents/"):
		return DialectSummit
	case d.Source.toolsForm == "string":
		return DialectClaudeCode
	}
	return DialectSummit
}
