package agents

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds an agent file (1 MiB), and the entry_prompt_file it names. A
// system prompt larger than this would not fit any model's context next to the
// protocols, and reading it whole would let one stray file stall the catalogue:
// ParseFile reads one byte past the cap at most.
const MaxFileSize = 1 << 20

// lineError is a failure at a known line of the file.
type lineError struct {
	line int
	msg  string
}

// document is a file split into its YAML part and its body.
type document struct {
	yaml     string // the YAML text (frontmatter, or the whole file for .yaml)
	yamlLine int    // file line of the first YAML line
	body     string
	bodyLine int
	hasFM    bool // a Markdown frontmatter was found
}

// checkBytes rejects what no YAML reader should see: oversized files and
// bytes that are not UTF-8 (named by line, so the author can find them).
func checkBytes(data []byte) *lineError {
	if len(data) > MaxFileSize {
		return &lineError{1, fmt.Sprintf("file is larger than %d MiB, the cap on an agent definition", MaxFileSize>>20)}
	}
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return &lineError{1, "file is UTF-16; agent definitions must be UTF-8"}
	}
	if !utf8.Valid(data) {
		line := 1
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return &lineError{line, fmt.Sprintf("invalid UTF-8 byte 0x%02X; agent definitions must be UTF-8", data[i])}
			}
			if r == '\n' {
				line++
			}
			i += size
		}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return &lineError{1 + bytes.Count(data[:i], []byte("\n")), "NUL byte: this is a binary file, not an agent definition"}
	}
	return nil
}

// splitMarkdown finds the `---` frontmatter of a Markdown file. The text is
// already UTF-8 with LF line ends.
func splitMarkdown(text string) (document, *lineError) {
	text = strings.TrimPrefix(text, "\uFEFF")
	lines := strings.SplitAfter(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t\n") != "---" {
		return document{}, &lineError{1, "no YAML frontmatter: an agent definition starts with a line `---`"}
	}
	for i := 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\n")
		if l == "---" || l == "..." {
			return document{
				yaml:     strings.Join(lines[1:i], ""),
				yamlLine: 2,
				body:     strings.Join(lines[i+1:], ""),
				bodyLine: i + 2,
				hasFM:    true,
			}, nil
		}
	}
	return document{}, &lineError{1, "frontmatter opened with `---` is never closed (no closing `---` line)"}
}

var (
	// topKey matches a top-level `key:` line; group 2 is the value, if any.
	topKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*))?$`) })
	// yamlLineRe finds the line number yaml.v3 puts in its messages.
	yamlLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+):? ?`) })
	openTag    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[A-Za-z][A-Za-z0-9_-]*>`) })
	closeTag   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`</[A-Za-z][A-Za-z0-9_-]*>`) })
)

// precheck finds mistakes yaml.v3 reports vaguely: tab indentation and
// template syntax (a template is not a definition until it is rendered; the
// tolerant pass must not turn `{{ .Name }}` into a string and carry on).
func precheck(src string, firstLine int) *lineError {
	for i, l := range strings.Split(src, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(l, " "), "\t") {
			return &lineError{firstLine + i, "tab character in indentation; YAML indents with spaces only"}
		}
		t := strings.TrimSpace(l)
		val := t
		if m := topKey().FindStringSubmatch(l); m != nil {
			val = m[2]
		} else if _, v, ok := strings.Cut(t, ": "); ok {
			val = strings.TrimSpace(v)
		}
		val = strings.TrimLeft(val, "- ")
		if strings.HasPrefix(val, "{{") || strings.HasPrefix(val, "{%") || strings.HasPrefix(t, "{{") || strings.HasPrefix(t, "{%") {
			return &lineError{firstLine + i, "template syntax (`{{ ... }}` or `{% ... %}`): render the template before loading it as an agent"}
		}
	}
	return nil
}

// parseYAML parses src strictly into its top-level mapping. firstLine maps
// YAML line 1 to the file's line numbering.
func parseYAML(src string, firstLine int) (root *yaml.Node, lerr *lineError) {
	defer func() {
		// yaml.v3 has panicked on hostile input in the past; one bad file
		// must never take the catalogue down.
		if r := recover(); r != nil {
			root, lerr = nil, &lineError{firstLine, fmt.Sprintf("YAML parser failed: %v", r)}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, yamlError(err, firstLine)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Line: 1}, nil // empty frontmatter
	}
	n := doc.Content[0]
	if n.Kind != yaml.MappingNode {
		return nil, &lineError{firstLine + n.Line - 1, fmt.Sprintf("frontmatter must be a mapping of `key: value` lines, found %s", nodeKind(n))}
	}
	if le := checkDuplicates(n, firstLine); le != nil {
		return nil, le
	}
	// After the duplicate check, which must see the keys as written, not the merged ones.
	if err := ExpandAliases(n); err != nil {
		ae := &AliasError{Line: 1, Msg: err.Error()}
		errors.As(err, &ae)
		return nil, &lineError{firstLine + ae.Line - 1, ae.Msg}
	}
	return n, nil
}

// yamlError turns a yaml.v3 error into file coordinates.
func yamlError(err error, firstLine int) *lineError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	msg = strings.TrimSpace(msg)
	line := firstLine
	if m := yamlLineRe().FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		msg = msg[:m[0]] + msg[m[1]:]
		if isParserError(msg) {
			n++ // yaml.v3 prints parser (not scanner) error lines 0-based
		}
		line = firstLine + n - 1
	}
	return &lineError{line, "invalid YAML: " + strings.TrimSpace(msg)}
}

// parserErrors are the yaml.v3 messages raised by its parser rather than its
// scanner; for those it reports a 0-based line (yaml.v3 fail()).
var parserErrors = []string{
	"did not find expected <", "did not find expected node", "did not find expected key",
	"did not find expected '-'", "did not find expected ','", "found duplicate", "found incompatible",
}

func isParserError(msg string) bool {
	for _, p := range parserErrors {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// checkDuplicates reports the second spelling of a key in any mapping:
// yaml.v3 checks this only when decoding into Go maps, and silently taking
// the last `tools:` of two would be a policy decision made by accident.
func checkDuplicates(n *yaml.Node, firstLine int) *lineError {
	if n.Kind == yaml.MappingNode {
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if prev, ok := seen[k.Value]; ok && k.Kind == yaml.ScalarNode {
				return &lineError{firstLine + k.Line - 1, fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, firstLine+prev-1)}
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if le := checkDuplicates(c, firstLine); le != nil {
			return le
		}
	}
	return nil
}

// repairYAML is the tolerant second pass. Real files write descriptions as
// plain scalars that contain `: ` and run on over unindented lines (often
// `<example>` blocks with `user: ...` lines inside). For each top-level
// plain value that cannot be valid YAML, it quotes the value (with its
// continuation lines) onto the key's line and blanks the continuation lines,
// so every other key keeps its line number. It returns the YAML lines
// (1-based, relative to src) that it rewrote.
func repairYAML(src string) (string, []int) {
	lines := strings.Split(src, "\n")
	var fixed []int
	for i := 0; i < len(lines); {
		m := topKey().FindStringSubmatch(lines[i])
		if m == nil || strings.TrimSpace(m[2]) == "" || strings.ContainsRune(`"'[{|>&*!#`, rune(m[2][0])) {
			i++
			continue
		}
		val := strings.TrimRight(m[2], " ")
		depth := tagDepth(val)
		j, end := i+1, i+1 // end: one past the last continuation line taken
		odd := false       // a continuation line plain YAML could not hold
		for ; j < len(lines); j++ {
			l := lines[j]
			if depth <= 0 && topKey().MatchString(l) {
				break
			}
			if strings.TrimSpace(l) != "" {
				if !strings.HasPrefix(l, " ") || strings.Contains(l, ": ") || depth > 0 {
					odd = true
				}
				end = j + 1
			}
			depth += tagDepth(l)
		}
		needs := odd || strings.Contains(val, ": ") || strings.HasSuffix(val, ":") ||
			strings.ContainsRune("@`%", rune(val[0]))
		if !needs {
			i = end
			continue
		}
		parts := []string{val}
		for k := i + 1; k < end; k++ {
			parts = append(parts, strings.TrimRight(lines[k], " "))
			lines[k] = ""
		}
		lines[i] = m[1] + ": " + quoteYAML(strings.Join(parts, "\n"))
		fixed = append(fixed, i+1)
		i = end
	}
	return strings.Join(lines, "\n"), fixed
}

// tagDepth counts XML-ish tags opened minus closed on a line, so lines inside
// an `<example>` block stay with the value even when they look like keys.
func tagDepth(s string) int {
	return len(openTag().FindAllStringIndex(s, -1)) - len(closeTag().FindAllStringIndex(s, -1))
}

// quoteYAML writes s as a YAML double-quoted scalar. Only JSON-compatible
// escapes are used, which YAML 1.2 double-quoted strings accept.
func quoteYAML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		}
		return "a string"
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// MaxAliasNodes bounds what YAML aliases may add to a document: the nodes reached through
// them, counted every time an alias is used. Aliases and merge keys are legitimate YAML and
// real files use them to repeat a block; a "billion laughs" document, where each anchor uses
// the one before ten times, would otherwise expand a few hundred bytes into billions of nodes.
const MaxAliasNodes = 100_000

// AliasError is an alias or merge key that ExpandAliases refuses. Line is 1-based in the YAML
// text the nodes were parsed from.
type AliasError struct {
	Line int
	Msg  string
}

func (e *AliasError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ExpandAliases rewrites the tree under n so that code walking it never meets an alias: every
// alias node is replaced by the node its anchor marks, and every merge key (`<<: *base`, or
// `<<: [*a, *b]`) by the keys it merges; the mapping's own keys win over merged ones, and of
// several merged mappings the first wins, as in YAML's merge-key type. The tree becomes a
// graph that shares the aliased nodes, so expanding costs no copies, and nodes keep the line of
// their source (an aliased step reports its anchor's line).
//
// It refuses, with an *AliasError at the alias's line, a document whose aliases reach more than
// MaxAliasNodes nodes in all (an alias bomb), an alias inside the node it refers to (yaml.v3
// builds such a cycle for `&a [*a]`), and a merge key whose value is not a mapping or a list of
// mappings. It runs in time linear in the document, whatever the aliases expand to, and code
// walking the result visits at most MaxAliasNodes more nodes than the document holds.
func ExpandAliases(n *yaml.Node) error {
	x := &aliasExpander{done: map[*yaml.Node]aliasCounts{}, busy: map[*yaml.Node]bool{}}
	_, err := x.expand(n)
	return err
}

// aliasCounts are the sizes of an expanded node: all the nodes under it and itself, and the
// part of those reached through aliases. Both saturate, so a bomb cannot overflow them.
type aliasCounts struct{ size, viaAlias int }

const aliasSaturate = 1 << 40

type aliasExpander struct {
	done map[*yaml.Node]aliasCounts
	busy map[*yaml.Node]bool // being expanded: an alias to one of them is a cycle
}

func (x *aliasExpander) expand(n *yaml.Node) (aliasCounts, error) {
	if c, ok := x.done[n]; ok {
		return c, nil
	}
	x.busy[n] = true
	c := aliasCounts{size: 1}
	for i, child := range n.Content {
		if child.Kind == yaml.AliasNode {
			t := child.Alias
			switch {
			case t == nil:
				return c, &AliasError{child.Line, fmt.Sprintf("alias *%s has no anchor", child.Value)}
			case x.busy[t]:
				return c, &AliasError{child.Line, fmt.Sprintf("alias *%s is inside the node its anchor marks (a cycle)", child.Value)}
			}
			tc, err := x.expand(t)
			if err != nil {
				return c, err
			}
			c.size = min(c.size+tc.size, aliasSaturate)
			if c.viaAlias = min(c.viaAlias+tc.size, aliasSaturate); c.viaAlias > MaxAliasNodes {
				return c, &AliasError{child.Line, fmt.Sprintf("alias *%s: YAML aliases expand this document past %d nodes; refused as an alias bomb", child.Value, MaxAliasNodes)}
			}
			n.Content[i] = t
			continue
		}
		cc, err := x.expand(child)
		if err != nil {
			return c, err
		}
		c.size = min(c.size+cc.size, aliasSaturate)
		if c.viaAlias = min(c.viaAlias+cc.viaAlias, aliasSaturate); c.viaAlias > MaxAliasNodes {
			return c, &AliasError{child.Line, fmt.Sprintf("YAML aliases expand this document past %d nodes; refused as an alias bomb", MaxAliasNodes)}
		}
	}
	if n.Kind == yaml.MappingNode {
		if err := mergeKeys(n); err != nil {
			return c, err
		}
	}
	delete(x.busy, n)
	x.done[n] = c
	return c, nil
}

// mergeKeys replaces the merge keys of the mapping n (whose aliases are already expanded) by
// the keys they bring that n does not have.
func mergeKeys(n *yaml.Node) error {
	var own, sources []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!merge" {
			own = append(own, k, v)
			continue
		}
		switch v.Kind {
		case yaml.MappingNode:
			sources = append(sources, v)
		case yaml.SequenceNode:
			for _, s := range v.Content {
				if s.Kind != yaml.MappingNode {
					return &AliasError{s.Line, fmt.Sprintf("a merge key (<<) takes a mapping or a list of mappings; this item is %s", nodeKind(s))}
				}
				sources = append(sources, s)
			}
		default:
			return &AliasError{k.Line, fmt.Sprintf("a merge key (<<) takes a mapping or a list of mappings, found %s", nodeKind(v))}
		}
	}
	if sources == nil && len(own) == len(n.Content) {
		return nil
	}
	seen := map[string]bool{}
	for i := 0; i < len(own); i += 2 {
		if own[i].Kind == yaml.ScalarNode {
			seen[own[i].Value] = true
		}
	}
	for _, s := range sources {
		for i := 0; i+1 < len(s.Content); i += 2 {
			k := s.Content[i]
			if k.Kind == yaml.ScalarNode {
				if seen[k.Value] {
					continue
				}
				seen[k.Value] = true
			}
			own = append(own, k, s.Content[i+1])
		}
	}
	n.Content = own
	return nil
}
