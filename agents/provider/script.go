package provider

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session/record"
)

// expandAliases resolves the aliases of a parsed tape or config file (agents.ExpandAliases),
// naming file:line in its error.
func expandAliases(doc *yaml.Node, file string) error {
	err := agents.ExpandAliases(doc)
	if ae := (*agents.AliasError)(nil); errors.As(err, &ae) {
		return fmt.Errorf("%s:%d: %s", file, ae.Line, ae.Msg)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// DeniedPrefix starts the text of a tool result that was refused, by policy or by the user
// (the runtime writes it; on_denied branches read it).
const DeniedPrefix = "denied: "

// MaxTapeFile is the largest tape file read (16 MiB): a bigger one is an error naming it,
// found without reading past the cap.
const MaxTapeFile = 16 << 20

// StopAwaitUser ends a turn that waits for a user message (script tapes' ask step).
const StopAwaitUser = "await_user"

// Tape is one scripted model.
type Tape struct {
	Name   string
	Agent  string // agent type or name; "" matches any
	Task   *regexp.Regexp
	Rate   float64
	Steps  []Step
	Source string // file:line of the tape, for messages
}

// Step is one tape step; exactly one of the action fields is set.
type Step struct {
	Say, Think, Ask, Text string
	Tool                  string
	Args                  string // JSON object text of the call's arguments
	Sleep                 time.Duration
	Fail                  string
	Transient             bool
	Times                 int
	Capsule               string // the capsule as indented JSON
	// EndTurn ends the turn with end_turn although steps follow: they are the next turn, which
	// runs if the conversation goes on (a SubagentStop hook that blocked the stop).
	EndTurn bool
	Line    int

	// OnDenied and OnError (tool steps) replace the rest of the tape when the call was denied
	// or failed otherwise; nil = go on. OnExit, by a shell command's exit code, comes before
	// OnError (a test run can tell "no go on PATH", 127, from "the tests failed").
	OnDenied, OnError []Step
	OnExit            map[int][]Step
	// Answers and Otherwise (ask steps) replace the rest of the tape by the user's reply.
	Answers   []Answer
	Otherwise []Step
}

// Answer is one branch of an ask step: taken when Match finds the user's reply.
type Answer struct {
	Match *regexp.Regexp // compiled case-insensitive
	Steps []Step
	Line  int
}

//go:embed tapes/*.yaml
var demoTapes embed.FS

// DemoTapes returns the embedded demo tapes.
func DemoTapes() ([]*Tape, error) {
	sub, _ := fs.Sub(demoTapes, "tapes")
	return LoadTapesFS(sub, "embedded tapes")
}

// LoadTapes reads every *.yaml and *.yml under dir, in lexical path order, or the one tape
// file dir names. Each file must be a regular file of at most MaxTapeFile bytes.
func LoadTapes(dir string) ([]*Tape, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("tapes: %w", err)
	}
	if !st.IsDir() {
		data, err := readCapped(dir, MaxTapeFile, "a tape file")
		if err != nil {
			return nil, err
		}
		return ParseTapes(data, dir)
	}
	// Files on disk are opened non-blocking and checked on the descriptor (record.OpenRegular),
	// so a FIFO named x.yaml, or a file swapped for one, cannot hang the load.
	return loadTapes(os.DirFS(dir), dir, func(p string) ([]byte, error) {
		return readCapped(filepath.Join(dir, filepath.FromSlash(p)), MaxTapeFile, "a tape file")
	})
}

// LoadTapesFS reads every *.yaml and *.yml of fsys; root names it in messages.
func LoadTapesFS(fsys fs.FS, root string) ([]*Tape, error) {
	return loadTapes(fsys, root, func(p string) ([]byte, error) {
		name := filepath.Join(root, filepath.FromSlash(p))
		// A FIFO (or a link to one) named x.yaml must not hang the load: regular files only,
		// checked before the open (which would block on a FIFO) and on the open file.
		if st, err := fs.Stat(fsys, p); err != nil {
			return nil, err
		} else if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", name)
		}
		f, err := fsys.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", name)
		}
		return readAtMost(f, name, MaxTapeFile, "a tape file")
	})
}

// CheckTapes reads what --tapes path would read (the tape file path, or every *.yaml and *.yml
// under the directory path, in lexical order) and goes on past a file with mistakes: it returns
// the tapes of the files without any, the number of tape files read, and every mistake found
// (TapeErrors), each at file:line or naming the file. A path that is neither a directory nor a
// regular file (a FIFO, a device) is refused from its type, before any open, so it cannot hang.
func CheckTapes(path string) (tapes []*Tape, files int, err error) {
	var errs TapeErrors
	check := func(name string) {
		st, err := os.Stat(name)
		if err != nil {
			errs.add(statError(name, err))
			return
		}
		if !st.Mode().IsRegular() {
			errs.add(fmt.Errorf("%s is %s, not a regular file: a tape file is a YAML text file", name, record.FileKind(st.Mode())))
			return
		}
		files++
		data, err := readCapped(name, MaxTapeFile, "a tape file") // non-blocking, checked again on the descriptor
		if err != nil {
			errs.add(err)
			return
		}
		got, err := ParseTapes(data, name)
		errs.add(err)
		tapes = append(tapes, got...)
	}
	st, serr := os.Stat(path)
	switch {
	case serr != nil:
		errs.add(statError(path, serr))
	case !st.IsDir():
		check(path)
	default:
		werr := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				errs.add(statError(p, err))
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.IsDir() && (filepath.Ext(p) == ".yaml" || filepath.Ext(p) == ".yml") {
				check(p)
			}
			return nil
		})
		errs.add(werr)
		if files == 0 && len(errs) == 0 {
			errs.add(fmt.Errorf("%s: no tape files (*.yaml, *.yml) under it", path))
		}
	}
	if len(errs) > 0 {
		return tapes, files, errs
	}
	return tapes, files, nil
}

// statError names path and what went wrong, without Go's "stat" or "open" prefix.
func statError(path string, err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", path, pe.Err)
	}
	return fmt.Errorf("%s: %v", path, err)
}

// Unreachable names each tape that can never be chosen, because an earlier one matches every
// agent and task it does (first match wins): an earlier tape for any agent or the same one,
// with no task regexp or the same one. Each message is "file:line: tape X is never chosen: ...".
func Unreachable(tapes []*Tape) []string {
	var out []string
	for i, t := range tapes {
		for _, e := range tapes[:i] {
			sameAgent := e.Agent == "" || e.Agent == t.Agent
			sameTask := e.Task == nil || t.Task != nil && e.Task.String() == t.Task.String()
			if sameAgent && sameTask {
				out = append(out, fmt.Sprintf("%s: tape %s is never chosen: tape %s (%s) comes first and matches every agent and task it does",
					t.Source, t.Name, e.Name, e.Source))
				break
			}
		}
	}
	return out
}

// loadTapes parses every *.yaml and *.yml of fsys, in lexical path order, read with read.
func loadTapes(fsys fs.FS, root string, read func(p string) ([]byte, error)) ([]*Tape, error) {
	var all []*Tape
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || (path.Ext(p) != ".yaml" && path.Ext(p) != ".yml") {
			return nil
		}
		data, err := read(p)
		if err != nil {
			return err
		}
		tapes, err := ParseTapes(data, filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		all = append(all, tapes...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no tapes (*.yaml files with a tapes: list)", root)
	}
	return all, nil
}

// readCapped reads the regular file at path (see record.OpenRegular) of at most max bytes;
// what names the kind of file in the error.
func readCapped(path string, max int64, what string) ([]byte, error) {
	f, err := record.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, path, max, what)
}

// readAtMost reads r to its end if that is at most max bytes. It reads one byte past max at
// most, so a bigger file is refused without being read: "NAME is larger than 16 MiB, the cap
// on a tape file".
func readAtMost(r io.Reader, name string, max int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d MiB, the cap on %s", name, max>>20, what)
	}
	return b, nil
}

// ParseTapes parses one tape file. Every mistake found is reported, each at file:line, in a
// TapeErrors (one mistake per step, the first found there; every unknown key, with the nearest
// known one). Anchors, aliases and merge keys work as in any YAML (see agents.ExpandAliases); a
// document whose aliases expand past agents.MaxAliasNodes nodes is refused as an alias bomb.
func ParseTapes(data []byte, file string) ([]*Tape, error) {
	if err := checkText(data, file); err != nil {
		return nil, TapeErrors{err}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, TapeErrors{yamlError(file, err)}
	}
	if len(doc.Content) == 0 {
		return nil, TapeErrors{fmt.Errorf("%s:1: empty tape file", file)}
	}
	if err := expandAliases(&doc, file); err != nil {
		return nil, TapeErrors{err}
	}
	root := doc.Content[0]
	errAt := func(n *yaml.Node, format string, args ...any) error {
		return &TapeError{File: file, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
	}
	list := mapValue(root, "tapes")
	if root.Kind != yaml.MappingNode || list == nil || list.Kind != yaml.SequenceNode {
		// A misspelt tapes: is named as such; a YAML file of another kind (a CI workflow found
		// in a directory) is one mistake, not one per key.
		if root.Kind == yaml.MappingNode && list == nil {
			var keys []string
			for i := 0; i+1 < len(root.Content); i += 2 {
				if k := root.Content[i]; commands.Nearest(k.Value, []string{"tapes"}) != "" {
					return nil, TapeErrors{errAt(k, "unknown key %q: did you mean tapes? (a tape file has one key, tapes)", k.Value)}
				}
				keys = append(keys, root.Content[i].Value)
			}
			return nil, TapeErrors{errAt(root, "not a tape file: a tape file is a mapping with a tapes: list, and this one has %s", strings.Join(keys, ", "))}
		}
		return nil, TapeErrors{errAt(root, "a tape file is a mapping with a tapes: list")}
	}
	var errs TapeErrors
	errs.add(onlyKeys(root, errAt, "tapes"))
	var out []*Tape
	for _, n := range list.Content {
		t, err := parseTape(n, file, errAt)
		errs.add(err)
		if t != nil {
			out = append(out, t)
		}
	}
	if len(errs) > 0 {
		// In line order: a tape's unknown keys are found before its other mistakes.
		slices.SortStableFunc(errs, func(a, b error) int { return cmp.Compare(errLine(a), errLine(b)) })
		return nil, errs
	}
	return out, nil
}

// TapeError is one mistake in a tape file, at File:Line.
type TapeError struct {
	File string
	Line int
	Msg  string
}

func (e *TapeError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// errLine is the line of a *TapeError, else 0.
func errLine(err error) int {
	if te := (*TapeError)(nil); errors.As(err, &te) {
		return te.Line
	}
	return 0
}

// parseTape parses one entry of the tapes: list; a nil tape comes with its errors.
func parseTape(n *yaml.Node, file string, errAt errAtFunc) (*Tape, error) {
	if n.Kind != yaml.MappingNode {
		return nil, errAt(n, "a tape is a mapping (name, match, rate, steps)")
	}
	var errs TapeErrors
	unknown := onlyKeys(n, errAt, "name", "match", "rate", "steps")
	errs.add(unknown)
	t := &Tape{Source: fmt.Sprintf("%s:%d", file, n.Line)}
	if v := mapValue(n, "name"); v != nil {
		t.Name = v.Value
	}
	// A missing name or steps is not reported beside an unknown key: it is most likely the
	// misspelt key, which the unknown key's message names.
	if t.Name == "" && (unknown == nil || mapValue(n, "name") != nil) {
		errs.add(errAt(n, "tape has no name"))
	}
	if m := mapValue(n, "match"); m != nil {
		if m.Kind != yaml.MappingNode {
			errs.add(errAt(m, "match is a mapping {agent: NAME, task: RE2}"))
		} else {
			errs.add(onlyKeys(m, errAt, "agent", "task"))
		}
		if v := mapValue(m, "agent"); v != nil {
			t.Agent = v.Value
		}
		if v := mapValue(m, "task"); v != nil {
			re, err := regexp.Compile(v.Value)
			if err != nil {
				errs.add(errAt(v, "match.task: %v", err))
			}
			t.Task = re
		}
	}
	if v := mapValue(n, "rate"); v != nil {
		if err := v.Decode(&t.Rate); err != nil || t.Rate < 0 {
			errs.add(errAt(v, "rate is words per second, a number ≥ 0"))
		}
	}
	steps := mapValue(n, "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
		if unknown == nil || steps != nil {
			errs.add(errAt(n, "tape %s has no steps", t.Name))
		}
	} else {
		var err error
		t.Steps, err = parseSteps(steps, errAt)
		errs.add(err)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return t, nil
}

// TapeErrors is every mistake found in tape files, each "file:line: what", in the order
// found (file order, but for aliases, which report at the anchored node).
type TapeErrors []error

func (e TapeErrors) Error() string {
	lines := make([]string, len(e))
	for i, err := range e {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

func (e TapeErrors) Unwrap() []error { return e }

// add appends err, flattening TapeErrors, and drops a message already there (an aliased step
// is checked once per alias, at the same line).
func (e *TapeErrors) add(err error) {
	if err == nil {
		return
	}
	if more, ok := err.(TapeErrors); ok {
		for _, m := range more {
			e.add(m)
		}
		return
	}
	for _, have := range *e {
		if have.Error() == err.Error() {
			return
		}
	}
	*e = append(*e, err)
}

// checkText refuses what is not UTF-8 text before YAML reads it, at the line of the first
// offending byte: a binary file would otherwise give the YAML decoder's less helpful message.
func checkText(data []byte, file string) error {
	line := func(i int) int { return bytes.Count(data[:i], []byte{'\n'}) + 1 }
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Errorf("%s:%d: a NUL byte: this is not a text file (a tape file is UTF-8 YAML)", file, line(i))
	}
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return fmt.Errorf("%s:%d: byte 0x%02x is not UTF-8 (a tape file is UTF-8 YAML)", file, line(i), data[i])
			}
			i += size
		}
	}
	return nil
}

// yamlLineRE is how yaml.v3 places a syntax error: "yaml: line N: what".
var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) }) // on first use

// yamlParserProblems are yaml.v3's parser errors (parserc.go), which it places by a mark
// counted from 0, where its scanner errors count from 1.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive",
	"found duplicate %YAML directive", "found incompatible YAML document",
	"found undefined tag handle",
}

// yamlError is a YAML syntax error as "file:line: what", the line counted from 1 (a parser
// error's line is where the construct it could not finish starts).
func yamlError(file string, err error) error {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
	if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if slices.Contains(yamlParserProblems, msg) {
		line++
	}
	if line == 0 {
		return fmt.Errorf("%s: %s", file, msg)
	}
	return fmt.Errorf("%s:%d: %s", file, line, msg)
}

var stepActions = []string{"say", "think", "ask", "text", "tool", "sleep", "fail", "capsule", "end_turn"}

// stepKeys is every key a step may have: one action and what goes with it.
var stepKeys = append(slices.Clone(stepActions), "args", "raw_args", "transient", "times",
	"on_denied", "on_error", "on_exit", "answers", "otherwise")

type errAtFunc = func(*yaml.Node, string, ...any) error

// parseSteps parses a list of steps (a tape's steps or a branch).
func parseSteps(n *yaml.Node, errAt errAtFunc) ([]Step, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, errAt(n, "a list of steps is expected")
	}
	var out []Step
	var errs TapeErrors
	for _, sn := range n.Content {
		s, err := parseStep(sn, errAt)
		errs.add(err)
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// parseBranch parses the steps of a branch (on_denied, on_error, otherwise, an answer's steps).
func parseBranch(n *yaml.Node, key string, errAt errAtFunc) ([]Step, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, errAt(n, "%s is a non-empty list of steps", key)
	}
	return parseSteps(n, errAt)
}

func parseAnswers(n *yaml.Node, errAt errAtFunc) ([]Answer, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, errAt(n, "answers is a non-empty list of {match, steps}")
	}
	var out []Answer
	var errs TapeErrors
	for _, an := range n.Content {
		a, err := parseAnswer(an, errAt)
		errs.add(err)
		out = append(out, a)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func parseAnswer(an *yaml.Node, errAt errAtFunc) (Answer, error) {
	a := Answer{Line: an.Line}
	if an.Kind != yaml.MappingNode {
		return a, errAt(an, "an answer is a mapping {match: RE2, steps: [...]}")
	}
	if err := onlyKeys(an, errAt, "match", "steps"); err != nil {
		return a, err
	}
	m := mapValue(an, "match")
	if m == nil || m.Kind != yaml.ScalarNode || m.Value == "" {
		return a, errAt(an, "an answer needs match: a regexp for the reply")
	}
	re, err := regexp.Compile("(?i)" + m.Value)
	if err != nil {
		return a, errAt(m, "answers.match: %v", err)
	}
	a.Match = re
	st := mapValue(an, "steps")
	if st == nil {
		return a, errAt(an, "an answer needs steps")
	}
	a.Steps, err = parseBranch(st, "an answer's steps", errAt)
	return a, err
}

func parseStep(n *yaml.Node, errAt errAtFunc) (Step, error) {
	s := Step{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return s, errAt(n, "a step is a mapping with one of %s", strings.Join(stepActions, ", "))
	}
	unknown := onlyKeys(n, errAt, stepKeys...)
	var actions []string
	for i := 0; i < len(n.Content); i += 2 {
		if slices.Contains(stepActions, n.Content[i].Value) {
			actions = append(actions, n.Content[i].Value)
		}
	}
	if len(actions) != 1 {
		if unknown != nil && len(actions) == 0 { // the action is most likely the misspelt key
			return s, unknown
		}
		errs := TapeErrors{}
		errs.add(unknown)
		errs.add(errAt(n, "a step has exactly one of %s (found %d)", strings.Join(stepActions, ", "), len(actions)))
		return s, errs
	}
	if unknown != nil {
		return s, unknown
	}
	v := mapValue(n, actions[0])
	str := func() (string, error) {
		if v.Kind != yaml.ScalarNode {
			return "", errAt(v, "%s takes a string", actions[0])
		}
		return v.Value, nil
	}
	var err error
	switch actions[0] {
	case "say":
		s.Say, err = str()
	case "think":
		s.Think, err = str()
	case "ask":
		s.Ask, err = str()
	case "text":
		s.Text, err = str()
	case "fail":
		s.Fail, err = str()
		if b := mapValue(n, "transient"); b != nil {
			if b.Decode(&s.Transient) != nil {
				return s, errAt(b, "transient is true or false")
			}
		}
		if c := mapValue(n, "times"); c != nil {
			if c.Decode(&s.Times) != nil || s.Times < 0 {
				return s, errAt(c, "times is a count ≥ 0")
			}
		}
	case "sleep":
		var d string
		if d, err = str(); err == nil {
			if s.Sleep, err = time.ParseDuration(d); err != nil || s.Sleep < 0 {
				return s, errAt(v, "sleep %q is not a duration like 500ms or 2s", d)
			}
		}
	case "tool":
		if s.Tool, err = str(); err != nil {
			return s, err
		}
		if s.Tool == "" {
			return s, errAt(v, "tool names a tool")
		}
		a, raw := mapValue(n, "args"), mapValue(n, "raw_args")
		switch {
		case a != nil && raw != nil:
			return s, errAt(a, "give args or raw_args, not both")
		case raw != nil:
			s.Args = raw.Value
		case a != nil:
			var m map[string]any
			if a.Decode(&m) != nil {
				return s, errAt(a, "args is a mapping")
			}
			b, jerr := marshalPlain(m)
			if jerr != nil {
				return s, errAt(a, "args: %v", jerr)
			}
			s.Args = b
		default:
			s.Args = "{}"
		}
	case "end_turn":
		if v.Decode(&s.EndTurn) != nil || !s.EndTurn {
			return s, errAt(v, "end_turn takes true")
		}
	case "capsule":
		var m map[string]any
		if v.Decode(&m) != nil || m == nil {
			return s, errAt(v, "capsule is a mapping (summary, findings, patch_suggestions, ...)")
		}
		b, jerr := json.MarshalIndent(m, "", "  ")
		if jerr != nil {
			return s, errAt(v, "capsule: %v", jerr)
		}
		s.Capsule = string(b)
	}
	for _, k := range []string{"args", "raw_args"} {
		if mapValue(n, k) != nil && s.Tool == "" {
			return s, errAt(n, "%s belongs to a tool step", k)
		}
	}
	for _, k := range []string{"transient", "times"} {
		if mapValue(n, k) != nil && s.Fail == "" {
			return s, errAt(n, "%s belongs to a fail step", k)
		}
	}
	if err != nil {
		return s, err
	}
	// The branches are all checked, so the mistakes of each are listed.
	var errs TapeErrors
	for _, k := range []string{"on_denied", "on_error"} {
		b := mapValue(n, k)
		if b == nil {
			continue
		}
		if s.Tool == "" {
			return s, errAt(n, "%s belongs to a tool step", k)
		}
		steps, err := parseBranch(b, k, errAt)
		if err != nil {
			errs.add(err)
			continue
		}
		if k == "on_denied" {
			s.OnDenied = steps
		} else {
			s.OnError = steps
		}
	}
	if b := mapValue(n, "on_exit"); b != nil {
		if s.Tool == "" {
			return s, errAt(n, "on_exit belongs to a tool step")
		}
		if b.Kind != yaml.MappingNode || len(b.Content) == 0 {
			return s, errAt(b, "on_exit maps exit codes to lists of steps, e.g. {127: [...]}")
		}
		s.OnExit = map[int][]Step{}
		for i := 0; i+1 < len(b.Content); i += 2 {
			code, cerr := strconv.Atoi(b.Content[i].Value)
			if cerr != nil || code < 1 || code > 255 {
				errs.add(errAt(b.Content[i], "on_exit: %q is not an exit code from 1 to 255", b.Content[i].Value))
				continue
			}
			steps, err := parseBranch(b.Content[i+1], "on_exit", errAt)
			errs.add(err)
			s.OnExit[code] = steps
		}
	}
	for _, k := range []string{"answers", "otherwise"} {
		if mapValue(n, k) != nil && s.Ask == "" {
			errs.add(errAt(n, "%s belongs to an ask step", k))
			return s, errs
		}
	}
	if a := mapValue(n, "answers"); a != nil {
		s.Answers, err = parseAnswers(a, errAt)
		errs.add(err)
	}
	if o := mapValue(n, "otherwise"); o != nil {
		s.Otherwise, err = parseBranch(o, "otherwise", errAt)
		errs.add(err)
	}
	if len(errs) > 0 {
		return s, errs
	}
	return s, nil
}

// nextTurn cuts the first turn off steps: after a run of tool steps, after an ask, or at the
// end.
func nextTurn(steps []Step) (turn, rest []Step) {
	for i, s := range steps {
		next := i + 1
		if s.Ask != "" || s.EndTurn || s.Tool != "" && (next == len(steps) || steps[next].Tool == "") {
			return steps[:next], steps[next:]
		}
	}
	return steps, nil
}

// turn returns the steps of turn req.Turn: it walks the tape from the start, and after each
// earlier turn takes the branch that the conversation chose (the tool results or the reply
// that followed that turn's assistant message in req.Messages).
func (t *Tape) turn(req Request) ([]Step, error) {
	var assistant []int // indexes of the assistant messages: one per finished turn
	for i, m := range req.Messages {
		if m.Role == RoleAssistant {
			assistant = append(assistant, i)
		}
	}
	rest := t.Steps
	for k := 0; ; k++ {
		if len(rest) == 0 {
			return nil, &Error{Provider: "script", Msg: fmt.Sprintf("tape %s (%s) has %d turns; the agent asked for turn %d", t.Name, t.Source, k, req.Turn+1)}
		}
		turn, after := nextTurn(rest)
		if k == req.Turn {
			return turn, nil
		}
		rest = after
		if k < len(assistant) {
			if b := chooseBranch(turn, req.Messages, assistant[k]); b != nil {
				rest = b
			}
		}
	}
}

// TurnSteps returns the steps the tape plays for req's turn (the branch the conversation
// chose), as Stream would play them, so a caller can check them before anything is played.
func (t *Tape) TurnSteps(req Request) ([]Step, error) { return t.turn(req) }

// chooseBranch returns the branch a finished turn takes, or nil to go on: msgs[at] is the
// turn's assistant message; the tool results and the user's reply follow it.
func chooseBranch(turn []Step, msgs []Message, at int) []Step {
	following := msgs[at+1:]
	for i, m := range following {
		if m.Role == RoleAssistant {
			following = following[:i]
			break
		}
	}
	if last := turn[len(turn)-1]; last.Ask != "" {
		if len(last.Answers) == 0 && last.Otherwise == nil {
			return nil
		}
		for _, m := range following {
			if m.Role != RoleUser {
				continue
			}
			reply := plainText(m.Text)
			for _, a := range last.Answers {
				if a.Match.MatchString(reply) {
					return withAnswer(a.Steps, reply)
				}
			}
			if last.Otherwise != nil {
				return withAnswer(last.Otherwise, reply)
			}
			return nil
		}
		return nil
	}
	calls := msgs[at].ToolCalls
	n := 0
	for _, s := range turn {
		if s.Tool == "" {
			continue
		}
		call := n
		n++
		if call >= len(calls) || s.OnDenied == nil && s.OnError == nil && s.OnExit == nil {
			continue
		}
		for _, m := range following {
			if m.Role != RoleTool || m.ToolCallID != calls[call].ID || !m.IsError {
				continue
			}
			denied := strings.HasPrefix(m.Text, DeniedPrefix)
			if b := s.OnExit[exitCode(m.Text)]; !denied && b != nil {
				return b
			}
			switch {
			case denied && s.OnDenied != nil:
				return s.OnDenied
			case !denied && s.OnError != nil:
				return s.OnError
			}
			break
		}
	}
	return nil
}

// exitCodeRe is how the shell tool ends the result of a command that failed.
// Compiled on first use: no initialiser runs for a command that never reads a tape.
var exitCodeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[exit code (\d+)\]\s*$`) })

// exitCode is the exit code a failed shell result ends with; 0 when it names none.
func exitCode(text string) int {
	m := exitCodeRe().FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// plainText is a user's reply as plain text: one line, control characters removed, trimmed.
func plainText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// answerMark stands for the user's reply in an ask's branch.
const answerMark = "{{answer}}"

// withAnswer copies steps with {{answer}} replaced by reply (see the package doc); a nested
// ask's own branches are left for that ask's reply.
func withAnswer(steps []Step, reply string) []Step {
	esc := jsonEscape(reply)
	var sub func([]Step) []Step
	sub = func(steps []Step) []Step {
		if steps == nil {
			return nil
		}
		out := make([]Step, len(steps))
		for i, s := range steps {
			s.Say = strings.ReplaceAll(s.Say, answerMark, reply)
			s.Think = strings.ReplaceAll(s.Think, answerMark, reply)
			s.Ask = strings.ReplaceAll(s.Ask, answerMark, reply)
			s.Text = strings.ReplaceAll(s.Text, answerMark, reply)
			s.Capsule = strings.ReplaceAll(s.Capsule, answerMark, esc)
			s.Args = strings.ReplaceAll(s.Args, answerMark, esc)
			s.OnDenied = sub(s.OnDenied)
			s.OnError = sub(s.OnError)
			if s.OnExit != nil {
				ex := make(map[int][]Step, len(s.OnExit))
				for k, v := range s.OnExit {
					ex[k] = sub(v)
				}
				s.OnExit = ex
			}
			out[i] = s
		}
		return out
	}
	return sub(steps)
}

// marshalPlain is json.Marshal without HTML escaping, so arguments read as written (">" is
// not "\u003e").
func marshalPlain(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// jsonEscape is s as the inside of a JSON string (without the quotes).
func jsonEscape(s string) string {
	out, _ := marshalPlain(s)
	return out[1 : len(out)-1]
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// onlyKeys reports every key of the mapping m that is not one of keys, each at its line, with
// the nearest known key when one is close ("did you mean"), else the known keys.
func onlyKeys(m *yaml.Node, errAt func(*yaml.Node, string, ...any) error, keys ...string) error {
	var errs TapeErrors
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if slices.Contains(keys, k.Value) {
			continue
		}
		if near := commands.Nearest(k.Value, keys); near != "" {
			errs.add(errAt(k, "unknown key %q: did you mean %s?", k.Value, near))
		} else {
			errs.add(errAt(k, "unknown key %q (known: %s)", k.Value, strings.Join(keys, ", ")))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// ScriptConfig configures the script provider.
type ScriptConfig struct {
	Tapes []*Tape
	// Sleep waits d or until ctx ends; default a real timer. The headless runner passes its
	// simulated clock, so tapes with sleeps and streaming rates run instantly and in the same
	// order every time.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock Sleep waits on (time.Now for the default Sleep): words are paced
	// against deadlines on it, so the time each sleep overshoots is not added up over a long
	// reply (a stream keeps its tape's rate). Without it a custom Sleep is taken as exact.
	Now func() time.Time
}

type script struct{ c ScriptConfig }

// NewScript returns the script provider over tapes.
func NewScript(c ScriptConfig) Provider {
	if c.Sleep == nil {
		if c.Now == nil {
			c.Now = time.Now // the clock the default Sleep waits on
		}
		c.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return &script{c}
}

func (*script) Name() string { return "script" }

// Match returns the first tape matching the agent (type or name) and task, or nil.
func (p *script) Match(agent, agentType, task string) *Tape {
	for _, t := range p.c.Tapes {
		if t.Agent != "" && t.Agent != agent && t.Agent != agentType {
			continue
		}
		if t.Task != nil && !t.Task.MatchString(task) {
			continue
		}
		return t
	}
	return nil
}

func (p *script) Stream(ctx context.Context, req Request) (Stream, error) {
	t := p.Match(req.Agent, req.AgentType, req.Task)
	if t == nil {
		return nil, &Error{Provider: "script", Msg: fmt.Sprintf(
			"no tape matches agent %q (type %q) and task %q; add a tape (summit run --tapes DIR) or configure a model provider in .summit/config.yaml (or --provider openai|anthropic|ollama)",
			req.Agent, req.AgentType, req.Task)}
	}
	steps, err := t.turn(req)
	if err != nil {
		return nil, err
	}
	return &scriptStream{ctx: ctx, p: p, tape: t, req: req, steps: steps}, nil
}

// scriptStream plays one turn. It expands steps into deltas lazily, sleeping between words at
// the tape's rate.
type scriptStream struct {
	ctx     context.Context
	p       *script
	tape    *Tape
	req     Request
	steps   []Step
	pending []Delta
	// text is a say, think or ask step's text still to stream, from textPos, a word a delta
	// (one delta when the tape has no rate): split as it streams, so a long step costs its
	// text, not a delta per word up front. pending follows it.
	text     string
	textKind DeltaKind
	textPos  int
	wait     time.Duration // before each text delta
	next     time.Time     // when the next paced delta is due (zero: at the first one)
	slept    time.Duration // what this stream slept: its clock when the config has no Now
	calls    int
	out      int64
	done     bool
}

func (s *scriptStream) Close() error { return nil }

func (s *scriptStream) Next() (Delta, error) {
	for {
		if err := s.ctx.Err(); err != nil {
			return Delta{}, err
		}
		var d Delta
		ok := false
		if s.textPos < len(s.text) {
			d, ok = s.nextText(), true
		} else if len(s.pending) > 0 {
			d, ok = s.pending[0], true
			s.pending = s.pending[1:]
		}
		if ok {
			if s.wait > 0 && (d.Kind == DeltaText || d.Kind == DeltaThinking) {
				now := time.Time{}.Add(s.slept)
				if s.p.c.Now != nil {
					now = s.p.c.Now()
				}
				if s.next.IsZero() {
					s.next = now
				}
				s.next = s.next.Add(s.wait)
				if d := s.next.Sub(now); d > 0 {
					if err := s.p.c.Sleep(s.ctx, d); err != nil {
						return Delta{}, err
					}
					s.slept += d
				}
			}
			if d.Kind == DeltaText {
				s.out += int64(len(strings.Fields(d.Text)))
			}
			return d, nil
		}
		if s.done {
			return Delta{}, io.EOF
		}
		if len(s.steps) == 0 {
			s.done = true
			stop := StopEnd
			if s.calls > 0 {
				stop = StopToolUse
			}
			s.pending = []Delta{{Kind: DeltaUsage, Usage: Usage{Input: int64(len(s.req.System)+len(s.req.Task)) / 4, Output: s.out}}, {Kind: DeltaStop, StopReason: stop}}
			continue
		}
		st := s.steps[0]
		s.steps = s.steps[1:]
		s.wait, s.next = 0, time.Time{}
		if s.tape.Rate > 0 {
			s.wait = time.Duration(float64(time.Second) / s.tape.Rate)
		}
		switch {
		case st.Say != "":
			s.setText(DeltaText, st.Say)
		case st.Think != "":
			s.setText(DeltaThinking, st.Think)
		case st.Ask != "":
			s.setText(DeltaText, st.Ask)
			s.pending = []Delta{{Kind: DeltaUsage, Usage: Usage{Output: s.out}}, {Kind: DeltaStop, StopReason: StopAwaitUser}}
			s.done = true
		case st.Text != "":
			s.pending = []Delta{{Kind: DeltaText, Text: st.Text}}
		case st.Capsule != "":
			s.pending = []Delta{{Kind: DeltaText, Text: "\n```json\n" + st.Capsule + "\n```\n"}}
		case st.Tool != "":
			s.calls++
			s.pending = []Delta{{Kind: DeltaToolCall, ToolCall: ToolCall{
				ID: fmt.Sprintf("call-%d-%d", s.req.Turn+1, s.calls), Name: st.Tool, Args: st.Args}}}
		case st.Sleep > 0:
			if err := s.p.c.Sleep(s.ctx, st.Sleep); err != nil {
				return Delta{}, err
			}
		case st.Fail != "":
			if st.Times == 0 || s.req.Attempt <= st.Times {
				s.done = true
				return Delta{}, &Error{Provider: "script", Transient: st.Transient, Msg: st.Fail}
			}
		}
	}
}

// setText starts streaming a step's text.
func (s *scriptStream) setText(kind DeltaKind, text string) {
	s.text, s.textKind, s.textPos = text, kind, 0
}

// nextText is the next delta of the text streaming: the next word with the spaces before it,
// or the whole text when the tape has no rate. The text is not empty past textPos.
func (s *scriptStream) nextText() Delta {
	rest := s.text[s.textPos:]
	end := len(rest)
	if s.tape.Rate > 0 {
		inWord := false
		for i, r := range rest {
			sp := unicode.IsSpace(r)
			if sp && inWord {
				end = i
				break
			}
			inWord = !sp
		}
	}
	s.textPos += end
	if s.textPos >= len(s.text) {
		s.text, s.textPos = "", 0
	}
	return Delta{Kind: s.textKind, Text: rest[:end]}
}
