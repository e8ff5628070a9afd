package provider

import (
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

	"gopkg.in/yaml.v3"

	"github.com/summit-dev/summit/agents"
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

// Script tapes (DESIGN §8). A tape stands in for a model:
//
//	tapes:
//	  - name: find-todos
//	    match: {agent: analyzer, task: "(?i)todo"}  # agent = type or agent name; task = RE2; first match wins
//	    rate: 200                                   # streamed words per second; 0 = all at once
//	    steps:
//	      - say: "Scanning for TODO markers."       # streamed assistant text
//	      - think: "optional thinking text"
//	      - tool: search_file_content               # a tool call; the runtime runs it for real
//	        args: {pattern: "TODO", path: "."}
//	      - tool: replace
//	        raw_args: '{"path": '                  # the exact argument text, malformed on purpose
//	      - tool: run_shell_command
//	        args: {command: "go test ./..."}
//	        on_denied: [steps]                      # taken when the call was denied (policy or user)
//	        on_error: [steps]                       # taken when the call failed for any other reason
//	        on_exit: {127: [steps]}                 # a shell command that ended with this exit code
//	      - sleep: 2s
//	      - fail: "upstream overloaded"             # a provider error
//	        transient: true                         # retried like a 429/5xx
//	        times: 1                                # fail only the first N attempts (0 = always)
//	      - ask: "Which package?"                   # say, then wait for the user's reply
//	        answers:                                # the first branch whose match finds the reply
//	          - match: "^api$|server"               # RE2, case-insensitive, on the trimmed reply
//	            steps: [steps]
//	        otherwise: [steps]                      # no match (absent: the tape goes on)
//	      - text: "a final message that is not a capsule"
//	      - capsule: {summary: "...", confidence: 0.8, findings: [...]}
//	      - end_turn: true                          # end the turn here (end_turn); what follows is
//	                                                # the next turn, if the conversation goes on
//
// Turns: a run of consecutive tool steps ends a model turn (stop reason tool_use); the runtime
// runs the calls and asks for the next turn, which continues after them. An ask step ends a
// turn with StopAwaitUser; an end_turn step ends one with end_turn, as the last turn ends. A capsule step streams the capsule
// as a fenced JSON block, the way a model writes it.
//
// Branches: a tool step's on_denied is taken when that call's result is a denial (IsError and
// the text starts with DeniedPrefix: a policy denial, or a user's /deny with or without a
// message); its on_exit branch for a run_shell_command whose result ends with the exit code it
// names ("[exit code N]"), before on_error; its on_error when the result IsError for any
// other reason (a failed command, bad arguments). An ask step's branch is chosen by the user's reply. A branch taken replaces the
// rest of the tape after the turn that ended with the step; when several tool steps of one
// turn have a branch that applies, the first one wins. Without a branch that applies, the
// tape goes on as written. Branch steps are steps: they may hold branches of their own, and
// they are cut into turns the same way.
//
// A tape file is at most MaxTapeFile (16 MiB); a bigger one is refused, naming it, without
// being read past the cap. Anchors (&name), aliases (*name) and merge keys (<<: *name) work
// as in any YAML, so a block of steps can be written once and reused; a file whose aliases
// expand past agents.MaxAliasNodes (100,000) nodes is refused as an alias bomb, at the
// alias's file:line.
//
// Inside an ask's branch, {{answer}} stands for the reply, as plain text (trimmed, control
// characters removed), in say, think, ask, text and capsule strings and in the strings of tool
// arguments (JSON-escaped there); in a nested ask's own branches it stands for that ask's reply.
// Elsewhere {{answer}} is left as written.
//
// The provider keeps no state between turns: each Stream call walks the tape from the start
// over Request.Messages, taking the branch that each earlier turn's tool results or reply
// chose, so the same conversation always plays the same steps.

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

// ParseTapes parses one tape file; errors name file:line. Anchors, aliases and merge keys
// work as in any YAML (see agents.ExpandAliases); a document whose aliases expand past
// agents.MaxAliasNodes nodes is refused as an alias bomb.
func ParseTapes(data []byte, file string) ([]*Tape, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1: empty tape file", file)
	}
	if err := expandAliases(&doc, file); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	errAt := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", file, n.Line, fmt.Sprintf(format, args...))
	}
	list := mapValue(root, "tapes")
	if root.Kind != yaml.MappingNode || list == nil || list.Kind != yaml.SequenceNode {
		return nil, errAt(root, "a tape file is a mapping with a tapes: list")
	}
	if err := onlyKeys(root, errAt, "tapes"); err != nil {
		return nil, err
	}
	var out []*Tape
	var err error
	for _, n := range list.Content {
		if n.Kind != yaml.MappingNode {
			return nil, errAt(n, "a tape is a mapping (name, match, rate, steps)")
		}
		if err := onlyKeys(n, errAt, "name", "match", "rate", "steps"); err != nil {
			return nil, err
		}
		t := &Tape{Source: fmt.Sprintf("%s:%d", file, n.Line)}
		if v := mapValue(n, "name"); v != nil {
			t.Name = v.Value
		}
		if t.Name == "" {
			return nil, errAt(n, "tape has no name")
		}
		if m := mapValue(n, "match"); m != nil {
			if err := onlyKeys(m, errAt, "agent", "task"); err != nil {
				return nil, err
			}
			if v := mapValue(m, "agent"); v != nil {
				t.Agent = v.Value
			}
			if v := mapValue(m, "task"); v != nil {
				re, err := regexp.Compile(v.Value)
				if err != nil {
					return nil, errAt(v, "match.task: %v", err)
				}
				t.Task = re
			}
		}
		if v := mapValue(n, "rate"); v != nil {
			if err := v.Decode(&t.Rate); err != nil || t.Rate < 0 {
				return nil, errAt(v, "rate is words per second, a number ≥ 0")
			}
		}
		steps := mapValue(n, "steps")
		if steps == nil || steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
			return nil, errAt(n, "tape %s has no steps", t.Name)
		}
		if t.Steps, err = parseSteps(steps, errAt); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

var stepActions = []string{"say", "think", "ask", "text", "tool", "sleep", "fail", "capsule", "end_turn"}

type errAtFunc = func(*yaml.Node, string, ...any) error

// parseSteps parses a list of steps (a tape's steps or a branch).
func parseSteps(n *yaml.Node, errAt errAtFunc) ([]Step, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, errAt(n, "a list of steps is expected")
	}
	var out []Step
	for _, sn := range n.Content {
		s, err := parseStep(sn, errAt)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
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
	for _, an := range n.Content {
		if an.Kind != yaml.MappingNode {
			return nil, errAt(an, "an answer is a mapping {match: RE2, steps: [...]}")
		}
		if err := onlyKeys(an, errAt, "match", "steps"); err != nil {
			return nil, err
		}
		a := Answer{Line: an.Line}
		m := mapValue(an, "match")
		if m == nil || m.Kind != yaml.ScalarNode || m.Value == "" {
			return nil, errAt(an, "an answer needs match: a regexp for the reply")
		}
		re, err := regexp.Compile("(?i)" + m.Value)
		if err != nil {
			return nil, errAt(m, "answers.match: %v", err)
		}
		a.Match = re
		st := mapValue(an, "steps")
		if st == nil {
			return nil, errAt(an, "an answer needs steps")
		}
		if a.Steps, err = parseBranch(st, "an answer's steps", errAt); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func parseStep(n *yaml.Node, errAt errAtFunc) (Step, error) {
	s := Step{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return s, errAt(n, "a step is a mapping with one of %s", strings.Join(stepActions, ", "))
	}
	if err := onlyKeys(n, errAt, append(slices.Clone(stepActions), "args", "raw_args", "transient", "times",
		"on_denied", "on_error", "on_exit", "answers", "otherwise")...); err != nil {
		return s, err
	}
	var actions []string
	for i := 0; i < len(n.Content); i += 2 {
		if slices.Contains(stepActions, n.Content[i].Value) {
			actions = append(actions, n.Content[i].Value)
		}
	}
	if len(actions) != 1 {
		return s, errAt(n, "a step has exactly one of %s (found %d)", strings.Join(stepActions, ", "), len(actions))
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
			return s, err
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
				return s, errAt(b.Content[i], "on_exit: %q is not an exit code from 1 to 255", b.Content[i].Value)
			}
			steps, err := parseBranch(b.Content[i+1], "on_exit", errAt)
			if err != nil {
				return s, err
			}
			s.OnExit[code] = steps
		}
	}
	for _, k := range []string{"answers", "otherwise"} {
		if mapValue(n, k) != nil && s.Ask == "" {
			return s, errAt(n, "%s belongs to an ask step", k)
		}
	}
	if a := mapValue(n, "answers"); a != nil {
		if s.Answers, err = parseAnswers(a, errAt); err != nil {
			return s, err
		}
	}
	if o := mapValue(n, "otherwise"); o != nil {
		if s.Otherwise, err = parseBranch(o, "otherwise", errAt); err != nil {
			return s, err
		}
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

func onlyKeys(m *yaml.Node, errAt func(*yaml.Node, string, ...any) error, keys ...string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if !slices.Contains(keys, k.Value) {
			return errAt(k, "unknown key %q (known: %s)", k.Value, strings.Join(keys, ", "))
		}
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
