package provider

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// exampleMarker starts the paragraph after which the package doc shows a complete tape file.
const exampleMarker = "A complete tape file"

// exampleAfter returns the indented block that follows the paragraph starting with marker in
// text, with its common indent taken off: the example as a reader would copy it.
func exampleAfter(t *testing.T, text, marker string) string {
	t.Helper()
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("no %q in:\n%s", marker, text)
	}
	lines := strings.Split(text[i:], "\n")
	k := 0
	for k < len(lines) && strings.TrimSpace(lines[k]) != "" { // the marker's paragraph
		k++
	}
	var block []string
	indent := ""
	for _, l := range lines[k:] {
		if strings.TrimSpace(l) == "" {
			block = append(block, "")
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			break
		}
		if indent == "" {
			indent = l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		}
		if !strings.HasPrefix(l, indent) {
			t.Fatalf("example line %q is not indented by %q", l, indent)
		}
		block = append(block, strings.TrimPrefix(l, indent))
	}
	out := strings.TrimSpace(strings.Join(block, "\n"))
	if out == "" {
		t.Fatalf("no example block after %q", marker)
	}
	return out + "\n"
}

// packageDocText is the package doc as go doc prints it: parsed from the package's files and
// rendered by go/doc/comment.
func packageDocText(t *testing.T) string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	paths, _ := filepath.Glob("*.go")
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/summit-dev/summit/agents/provider")
	if err != nil {
		t.Fatal(err)
	}
	var pr comment.Printer
	return string(pr.Text(pkg.Parser().Parse(pkg.Doc)))
}

// TestTapeGuideExample: the package doc (as go doc prints it) and TapeGuide (what summit tapes
// --help prints) hold the same complete tape file, which parses exactly as printed and uses
// every key of the grammar; and the grammar names every key the parser accepts.
func TestTapeGuideExample(t *testing.T) {
	docText := packageDocText(t)
	if !strings.Contains(docText, "# Script tapes") {
		t.Fatalf("the package doc has no Script tapes section:\n%s", docText)
	}
	guide := TapeGuide()
	fromDoc := exampleAfter(t, docText, exampleMarker)
	fromGuide := exampleAfter(t, guide, exampleMarker)
	if fromDoc != fromGuide {
		t.Fatalf("the example differs between go doc and the help:\n--- go doc\n%s\n--- help\n%s", fromDoc, fromGuide)
	}
	tapes, err := ParseTapes([]byte(fromGuide), "example.yaml")
	if err != nil {
		t.Fatalf("the documented example does not parse:\n%v\n%s", err, fromGuide)
	}
	// Complete: every field of the grammar is set somewhere in the example.
	seen := map[string]bool{}
	var walk func([]Step)
	walk = func(steps []Step) {
		for _, s := range steps {
			for k, on := range map[string]bool{"say": s.Say != "", "think": s.Think != "", "ask": s.Ask != "",
				"text": s.Text != "", "tool": s.Tool != "", "args": s.Tool != "" && s.Args != "{}", "sleep": s.Sleep > 0,
				"fail": s.Fail != "", "transient": s.Transient, "times": s.Times > 0, "capsule": s.Capsule != "",
				"end_turn": s.EndTurn, "on_denied": s.OnDenied != nil, "on_error": s.OnError != nil,
				"on_exit": s.OnExit != nil, "answers": s.Answers != nil, "otherwise": s.Otherwise != nil,
				"{{answer}}": strings.Contains(s.Say+s.Args+s.Capsule, answerMark)} {
				seen[k] = seen[k] || on
			}
			walk(s.OnDenied)
			walk(s.OnError)
			for _, b := range s.OnExit {
				walk(b)
			}
			for _, a := range s.Answers {
				walk(a.Steps)
			}
			walk(s.Otherwise)
		}
	}
	for _, tp := range tapes {
		seen["match.agent"] = seen["match.agent"] || tp.Agent != ""
		seen["match.task"] = seen["match.task"] || tp.Task != nil
		seen["rate"] = seen["rate"] || tp.Rate > 0
		walk(tp.Steps)
	}
	seen["raw_args"] = strings.Contains(fromGuide, "raw_args:")
	seen["&anchor"] = regexp.MustCompile(`: &[a-z]`).MatchString(fromGuide)
	seen["*alias"] = regexp.MustCompile(`: \*[a-z]`).MatchString(fromGuide)
	for _, k := range append([]string{"match.agent", "match.task", "rate", "{{answer}}", "&anchor", "*alias"}, stepKeys...) {
		if !seen[k] {
			t.Errorf("the example does not show %s", k)
		}
	}
	// The grammar names every key the parser knows.
	for _, k := range append([]string{"tapes", "name", "match", "agent", "task", "rate", "steps"}, stepKeys...) {
		if !strings.Contains(guide, k+":") {
			t.Errorf("the grammar does not name %s:", k)
		}
	}
	for _, p := range []string{"agents/provider/tapes/default.yaml"} {
		if _, err := os.Stat(filepath.Join("..", "..", p)); err != nil || !strings.Contains(guide, p) {
			t.Errorf("the guide points at %s, which must exist: %v", p, err)
		}
	}
}

// TestParseTapesListsEveryMistake: every mistake of a file is reported at its file:line, in
// file order, a misspelt key with the nearest known one, and nothing is reported twice.
func TestParseTapesListsEveryMistake(t *testing.T) {
	src := `tapes:
  - name: a
    mtach: {agent: tester}
    steps:
      - sya: "hi"
      - tool: glob
        arg: {pattern: "*"}
      - sleep: soon
      - &bad {think: x, text: y}
      - *bad
  - name: b
    rate: fast
    steps:
      - ask: "which?"
        answers:
          - match: "("
            steps: [{say: x}]
          - mtch: y
            steps: [{say: y}]
        otherwise: [{say: ok}, {capsul: {summary: s}}]
  - nmae: c
    steps: [{say: hi}]
  - name: d
    stpes: [{say: hi}]
`
	_, err := ParseTapes([]byte(src), "t.yaml")
	var te TapeErrors
	if !errorsAs(err, &te) {
		t.Fatalf("err = %#v, want TapeErrors", err)
	}
	want := []string{
		`t.yaml:3: unknown key "mtach": did you mean match?`,
		`t.yaml:5: unknown key "sya": did you mean say?`,
		`t.yaml:7: unknown key "arg": did you mean args?`,
		`t.yaml:8: sleep "soon" is not a duration like 500ms or 2s`,
		`t.yaml:9: a step has exactly one of say, think, ask, text, tool, sleep, fail, capsule, end_turn (found 2)`,
		`t.yaml:12: rate is words per second, a number ≥ 0`,
		`t.yaml:16: answers.match: error parsing regexp: missing closing ): ` + "`(?i)(`",
		`t.yaml:18: unknown key "mtch": did you mean match?`,
		`t.yaml:20: unknown key "capsul": did you mean capsule?`,
		`t.yaml:21: unknown key "nmae": did you mean name?`,
		`t.yaml:24: unknown key "stpes": did you mean steps?`,
	}
	if len(te) != len(want) {
		t.Errorf("%d mistakes reported, want %d:\n%v", len(te), len(want), err)
	}
	for i, w := range want {
		if i < len(te) && !strings.HasPrefix(te[i].Error(), w) {
			t.Errorf("mistake %d:\n got %s\nwant %s", i, te[i], w)
		}
	}
	// A misspelt tapes: key is named as such, not as a missing list.
	_, err = ParseTapes([]byte("tape:\n  - name: a\n    steps: [{say: hi}]\n"), "u.yaml")
	if err == nil || err.Error() != `u.yaml:1: unknown key "tape": did you mean tapes? (a tape file has one key, tapes)` {
		t.Errorf("misspelt tapes: %v", err)
	}
	// Another kind of YAML file is one mistake, naming its keys.
	_, err = ParseTapes([]byte("name: ci\non: [push]\njobs: {}\n"), "w.yaml")
	if err == nil || err.Error() != "w.yaml:1: not a tape file: a tape file is a mapping with a tapes: list, and this one has name, on, jobs" {
		t.Errorf("a CI workflow: %v", err)
	}
	// With nothing close, the known keys alone.
	_, err = ParseTapes([]byte("tapes:\n  - name: a\n    steps: [{zzzzzz: hi}]\n"), "v.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), `v.yaml:3: unknown key "zzzzzz" (known: say, think,`) {
		t.Errorf("unknown key with nothing close: %v", err)
	}
}

func errorsAs(err error, te *TapeErrors) bool {
	v, ok := err.(TapeErrors)
	*te = v
	return ok
}

// TestParseTapesBadInput: a binary file, a file that is not UTF-8 and a YAML syntax error are
// refused at file:line; a huge single line is parsed or refused quickly, never hung on.
func TestParseTapesBadInput(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"NUL", "tapes:\n  - name: a\x00\n", "bin.yaml:2: a NUL byte: this is not a text file (a tape file is UTF-8 YAML)"},
		{"latin-1", "tapes:\n\n  - name: caf\xe9\n", "bin.yaml:3: byte 0xe9 is not UTF-8 (a tape file is UTF-8 YAML)"},
		{"syntax", "tapes:\n  - name: a\n    steps: [{say: hi}\n", "bin.yaml:3: did not find expected ',' or ']'"},
		{"tab indent", "tapes:\n\t- name: a\n", "bin.yaml:2: found character that cannot start any token"},
		{"unclosed block", "x: 1\ny:\n  - b\n  c: d\n", "bin.yaml:3: did not find expected '-' indicator"},
		{"unclosed flow on line 1, found at the end", "tapes: [{name: a\n", "bin.yaml:2: did not find expected ',' or '}'"},
		{"empty", "", "bin.yaml:1: empty tape file"},
	}
	for _, c := range cases {
		_, err := ParseTapes([]byte(c.src), "bin.yaml")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v\nwant %s", c.name, err, c.want)
		}
	}
	long := "tapes: [{name: a, steps: [{say: \"" + strings.Repeat("word ", 3<<20/5) + "\"}]}]\n"
	start := time.Now()
	tapes, err := ParseTapes([]byte(long), "long.yaml")
	if err != nil || len(tapes) != 1 || len(tapes[0].Steps[0].Say) < 3<<20-5 {
		t.Errorf("a 3 MiB line: %v", err)
	}
	// A bound against a hang or a quadratic parse, not a speed figure: under -race at a load of
	// 16 the parse took 10.9 s.
	if d := time.Since(start); d > time.Minute {
		t.Errorf("a 3 MiB line took %v", d)
	}
	// LoadTapes of a directory with no tape file says so.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	if _, err := LoadTapes(dir); err == nil || err.Error() != dir+": no tapes (*.yaml files with a tapes: list)" {
		t.Errorf("a directory without tapes: %v", err)
	}
}

// TestCheckTapes: CheckTapes reads a file or a directory as --tapes does, goes on past a file
// with mistakes, and refuses what is not a regular file from its type, without blocking.
func TestCheckTapes(t *testing.T) {
	dir := t.TempDir()
	good := "tapes:\n  - name: a\n    steps: [{say: hi}]\n  - name: b\n    match: {agent: tester}\n    steps: [{say: hi}]\n"
	os.WriteFile(filepath.Join(dir, "1-good.yaml"), []byte(good), 0o644)
	os.WriteFile(filepath.Join(dir, "2-bad.yml"), []byte("tapes:\n  - name: c\n    steps: [{sya: hi}]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a tape"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "3-bad.yaml"), []byte("tapes: [{name: d}]\n"), 0o644)
	fifo := filepath.Join(dir, "sub", "4-fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var tapes []*Tape
	var files int
	var err error
	go func() {
		defer close(done)
		tapes, files, err = CheckTapes(dir)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("CheckTapes hung on a FIFO")
	}
	want := filepath.Join(dir, "2-bad.yml") + `:3: unknown key "sya": did you mean say?`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v, want it to start with %s", err, want)
	}
	lines := strings.Split(err.Error(), "\n")
	wantLines := []string{want, filepath.Join(dir, "sub", "3-bad.yaml") + ":1: tape d has no steps",
		fifo + " is a named pipe (FIFO), not a regular file: a tape file is a YAML text file"}
	if len(lines) != len(wantLines) {
		t.Fatalf("%d mistakes, want %d:\n%v", len(lines), len(wantLines), err)
	}
	for i, w := range wantLines {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("mistake %d: %s\nwant %s", i, lines[i], w)
		}
	}
	if files != 3 || len(tapes) != 2 || tapes[0].Name != "a" {
		t.Errorf("files %d, tapes %d, want 3 and 2", files, len(tapes))
	}
	// b comes after a, which matches any agent and task: b is never chosen.
	if u := Unreachable(tapes); len(u) != 1 || !strings.Contains(u[0], "1-good.yaml:4: tape b is never chosen: tape a (") {
		t.Errorf("Unreachable = %q", u)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "none.yaml"), filepath.Join(dir, "none.yaml") + ": no such file or directory"},
		{fifo, fifo + " is a named pipe (FIFO), not a regular file"},
		{filepath.Join(dir, "sub", "empty"), filepath.Join(dir, "sub", "empty") + ": no tape files (*.yaml, *.yml) under it"},
	} {
		if c.path == filepath.Join(dir, "sub", "empty") {
			os.Mkdir(c.path, 0o755)
		}
		if _, _, err := CheckTapes(c.path); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("CheckTapes(%s) = %v, want %s", c.path, err, c.want)
		}
	}
	// The shipped tapes have no mistakes, and no tape that can never be chosen.
	for _, p := range []string{"tapes", "tapeserve/testdata", "../../session/live/testdata/tapes"} {
		tapes, _, err := CheckTapes(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if u := Unreachable(tapes); len(u) > 0 {
			t.Errorf("%s: %q", p, u)
		}
	}
}
