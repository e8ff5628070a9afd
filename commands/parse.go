package commands

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// IsCommand reports whether line is a slash command (its first non-whitespace character is
// "/"). Anything else is a note, or a message to the subagent during a transfer-control handoff.
func IsCommand(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, spaceChars), "/")
}

// MaxLine bounds a command line, so that a runaway paste costs a clear error instead of
// hundreds of megabytes of words. A task longer than this belongs in a file.
const MaxLine = 1 << 20

// Parse reads one command line. It returns one of the command types of this package (as a
// value, e.g. Delegate, not *Delegate) with every default applied, or a *ParseError. A
// rejected line is rejected whole: nothing is half-parsed.
func Parse(line string) (Command, error) {
	c, err := parse(line)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func parse(line string) (Command, *ParseError) {
	trimmed := strings.TrimLeft(line, spaceChars)
	if !strings.HasPrefix(trimmed, "/") {
		return nil, &ParseError{Msg: "not a command: commands start with /", Column: -1}
	}
	if len(line) > MaxLine {
		return nil, &ParseError{
			Msg:    "line too long: " + strconv.Itoa(len(line)) + " bytes, at most " + strconv.Itoa(MaxLine),
			Column: MaxLine,
		}
	}
	toks, perr := scan(line, false)
	if perr != nil {
		// Name the command when its word is readable, so the error carries its usage.
		word := trimmed
		if i := strings.IndexAny(word, spaceChars); i >= 0 {
			word = word[:i]
		}
		if s := lookup(word); s != nil {
			perr.Command, perr.Usage = s.Name, s.Usage
		}
		return nil, perr
	}
	// The first non-space byte is a bare "/", so the first word exists and starts with it.
	head := toks[0]
	name := head.Text[1:]
	if name == "" {
		return nil, &ParseError{Msg: "missing command name after /; /help lists the commands", Column: head.Start}
	}
	spec := lookup(name)
	if spec == nil {
		e := &ParseError{Msg: "unknown command " + shown(head.Text), Column: head.Start}
		if s := nearest(name, commandNames()); s != "" {
			e.Suggestion = "/" + s
		} else {
			e.Msg += "; /help lists the commands"
		}
		return nil, e
	}
	p := parser{spec: spec, vals: values{}, given: map[string]bool{}, named: map[string]bool{}}
	return p.run(toks[1:])
}

// values holds parsed arguments and flag values by their Args key, defaults applied. The
// value types are string, int, bool and []string.
type values map[string]any

func (v values) str(k string) string    { s, _ := v[k].(string); return s }
func (v values) int(k string) int       { n, _ := v[k].(int); return n }
func (v values) bool(k string) bool     { b, _ := v[k].(bool); return b }
func (v values) list(k string) []string { l, _ := v[k].([]string); return l }

type parser struct {
	spec  *Spec
	vals  values
	given map[string]bool // flag names seen, to reject a flag given twice
	named map[string]bool // ids of a variadic id argument, to reject one named twice
	words []Token         // the words of a variadic text argument (the task)
	npos  int             // positional words seen
}

func (p *parser) fail(col int, suggestion, format string, args ...any) *ParseError {
	return &ParseError{
		Command:    p.spec.Name,
		Msg:        fmt.Sprintf(format, args...),
		Usage:      p.spec.Usage,
		Suggestion: suggestion,
		Column:     col,
	}
}

// run reads the words after the command name left to right, so the first problem in the line
// is the one reported. Positional words may come before, between or after flags.
func (p *parser) run(toks []Token) (Command, *ParseError) {
	endFlags := false
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case !endFlags && t.EndsFlags():
			endFlags = true
		case !endFlags && t.IsFlag():
			n, err := p.flag(t, toks[i+1:])
			if err != nil {
				return nil, err
			}
			i += n
		default:
			if err := p.positional(t); err != nil {
				return nil, err
			}
		}
	}
	return p.finish()
}

// flag reads one flag and, for a value flag written "--flag value", its value; it returns how
// many of the following words it consumed.
func (p *parser) flag(t Token, rest []Token) (int, *ParseError) {
	name, val, hasVal := t.flagParts()
	f := p.spec.flag(name)
	if f == nil {
		return 0, p.unknownFlag(t, name)
	}
	if p.given[f.Name] {
		return 0, p.fail(t.Start, "", "--%s given twice", f.Name)
	}
	p.given[f.Name] = true
	col := t.Start + len(name) + 3 // just after "--name="; the "=" is bare, so offsets agree
	consumed := 0
	if !hasVal {
		if f.Kind == KindBool {
			// A bare bool flag never takes the next word. A bare true/false right after it is
			// almost surely meant as its value, and silently making it a task word would be
			// worse than asking for the "=" form.
			if len(rest) > 0 && !rest[0].Quoted && (rest[0].Text == "true" || rest[0].Text == "false") {
				return 0, p.fail(rest[0].Start, "--"+f.Name+"="+rest[0].Text,
					"--%s takes its value after =, not as a separate word", f.Name)
			}
			p.vals[f.Key] = true
			return 0, nil
		}
		if len(rest) == 0 || rest[0].IsFlag() || rest[0].EndsFlags() {
			return 0, p.fail(t.End, "", "--%s needs a value: %s", f.Name, valueHint(f))
		}
		val, col, consumed = rest[0].Text, rest[0].Start, 1
	}
	v, msg, sugg := parseFlagValue(f, val)
	if msg != "" {
		return 0, p.fail(col, sugg, "%s", msg)
	}
	p.vals[f.Key] = v
	return consumed, nil
}

func (p *parser) unknownFlag(t Token, name string) *ParseError {
	switch {
	case len(p.spec.Flags) == 0:
		return p.fail(t.Start, "", "unknown flag %s: /%s takes no flags", shown("--"+name), p.spec.Name)
	case name == "help":
		return p.fail(t.Start, "", "unknown flag --help; /help %s explains the flags", p.spec.Name)
	}
	names := make([]string, len(p.spec.Flags))
	for i, f := range p.spec.Flags {
		names[i] = f.Name
	}
	sugg := ""
	if s := nearest(name, names); s != "" {
		sugg = "--" + s
	}
	return p.fail(t.Start, sugg, "unknown flag %s", shown("--"+name))
}

func (p *parser) positional(t Token) *ParseError {
	a := p.spec.argAt(p.npos)
	if a == nil {
		if len(p.spec.Args) == 0 {
			return p.fail(t.Start, "", "unexpected argument %s: /%s takes no arguments", quoted(t.Text), p.spec.Name)
		}
		return p.fail(t.Start, "", "unexpected argument %s", quoted(t.Text))
	}
	p.npos++
	switch a.Kind {
	case KindText:
		if !a.Variadic { // one word (a path)
			p.vals[a.Key] = t.Text
			return nil
		}
		p.words = append(p.words, t)
	case KindID:
		if !idOf(t.Text, a.IDKinds) {
			return p.fail(t.Start, suggestID(t.Text, a.IDKinds), "expected %s, got %s",
				expectedIDs(a.IDKinds, nil), quoted(t.Text))
		}
		if !a.Variadic {
			p.vals[a.Key] = t.Text
			return nil
		}
		if p.named[t.Text] {
			return p.fail(t.Start, "", "%s is named twice", t.Text)
		}
		p.named[t.Text] = true
		p.vals[a.Key] = append(p.vals.list(a.Key), t.Text)
	case KindCommand:
		name := strings.TrimPrefix(t.Text, "/")
		if lookup(name) == nil {
			return p.fail(t.Start, nearest(name, commandNames()), "no command named %s", quoted(t.Text))
		}
		p.vals[a.Key] = name
	}
	return nil
}

// finish checks what must be present and applies defaults.
func (p *parser) finish() (Command, *ParseError) {
	for i := range p.spec.Args {
		a := &p.spec.Args[i]
		switch {
		case a.Kind == KindText && a.Variadic:
			if len(p.words) == 0 {
				return nil, p.fail(-1, "", "missing %s", a.Placeholder)
			}
			texts := make([]string, len(p.words))
			for j, w := range p.words {
				texts[j] = w.Text
			}
			text := strings.Join(texts, " ")
			if strings.TrimLeft(text, spaceChars) == "" {
				return nil, p.fail(p.words[0].Start, "", "empty %s", a.Name)
			}
			p.vals[a.Key] = text
		case a.Variadic:
			n := len(p.vals.list(a.Key))
			if n == 0 && a.Required {
				return nil, p.fail(-1, "", "missing %s", a.Placeholder)
			}
			if n < a.Min {
				return nil, p.fail(-1, "", "needs at least %d %s, got %d", a.Min, a.Noun, n)
			}
		case a.Required && p.vals[a.Key] == nil:
			return nil, p.fail(-1, "", "missing %s", a.Placeholder)
		}
	}
	for i := range p.spec.Flags {
		f := &p.spec.Flags[i]
		if p.given[f.Name] {
			continue
		}
		if f.Required {
			return nil, p.fail(-1, "", "missing required flag --%s", f.Name)
		}
		if f.def != nil {
			p.vals[f.Key] = f.def // defaults are immutable scalars, safe to share
		}
	}
	return p.spec.build(p.vals), nil
}

// valueHint says what a value flag expects, for "--flag needs a value: ...".
func valueHint(f *Flag) string {
	if f.Kind == KindEnum {
		return strings.Join(valueNames(f.Values), "|")
	}
	return strings.TrimPrefix(flagUsage(f), "--"+f.Name+" ")
}

var (
	agentNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]*$`) })
	toolNameRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.:-]*$`) })
	// runnerNameRE is session/runners' ValidName: a runner's name on the wire.
	runnerNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
)

const (
	maxAgentName = 64
	maxToolName  = 128
)

// parseFlagValue converts the text of a flag's value. On failure msg says what is wrong
// (starting with the flag) and sugg is the nearest valid value, if any.
func parseFlagValue(f *Flag, s string) (v any, msg, sugg string) {
	switch f.Kind {
	case KindText:
		return s, "", ""
	case KindInt:
		n, ok := wholeNumber(s)
		if !ok || n < f.Min || n > f.Max {
			return nil, fmt.Sprintf("--%s takes %s, %d to %d: got %s", f.Name, f.Unit, f.Min, f.Max, quoted(s)), ""
		}
		return n, "", ""
	case KindBool:
		switch s {
		case "true":
			return true, "", ""
		case "false":
			return false, "", ""
		}
		return nil, fmt.Sprintf("--%s takes true or false: got %s", f.Name, quoted(s)),
			nearest(s, []string{"true", "false"})
	case KindEnum:
		names := valueNames(f.Values)
		for _, n := range names {
			if s == n {
				return s, "", ""
			}
		}
		return nil, fmt.Sprintf("--%s takes %s: got %s", f.Name, orList(names), quoted(s)), nearest(s, names)
	case KindList:
		return parseList(f, s)
	case KindName:
		if len(s) <= maxAgentName && agentNameRE().MatchString(s) {
			return s, "", ""
		}
		sugg := strings.ToLower(s)
		if len(sugg) > maxAgentName || !agentNameRE().MatchString(sugg) {
			sugg = nearest(s, valueNames(f.Values))
		}
		return nil, fmt.Sprintf("--%s takes an agent name like builder (lowercase letters, digits, - and _): got %s",
			f.Name, quoted(s)), sugg
	case KindID:
		names := valueNames(f.Values)
		for _, n := range names {
			if s == n {
				return s, "", ""
			}
		}
		if idOf(s, f.IDKinds) {
			return s, "", ""
		}
		sugg := suggestID(s, f.IDKinds)
		if sugg == "" {
			sugg = nearest(s, names)
		}
		return nil, fmt.Sprintf("--%s takes %s: got %s", f.Name, expectedIDs(f.IDKinds, f.Values), quoted(s)), sugg
	}
	return nil, fmt.Sprintf("--%s: unsupported kind %s", f.Name, f.Kind), ""
}

// parseList splits a comma-separated list of tool names. Spaces around names are dropped,
// duplicates are dropped (first one kept), empty names are an error.
func parseList(f *Flag, s string) (any, string, string) {
	bad := func(what string) (any, string, string) {
		return nil, fmt.Sprintf("--%s takes comma-separated tool names like read_file,glob: %s", f.Name, what), ""
	}
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name := strings.Trim(part, spaceChars)
		switch {
		case name == "":
			return bad("got an empty name in " + quoted(s))
		case len(name) > maxToolName || !toolNameRE().MatchString(name):
			return bad(quoted(name) + " is not a tool name")
		case !seen[name]:
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, "", ""
}

// wholeNumber accepts decimal digits only: no sign, no unit, no fraction.
func wholeNumber(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	digits := strings.TrimLeft(s, "0")
	if len(digits) > 9 { // beyond any range here, and well within int
		return 0, false
	}
	if digits == "" {
		return 0, true
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}
