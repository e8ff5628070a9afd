package commands

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	`/delegate fix the bug --agent-type builder`,
	`/delegate "fix  it" --agent-type=builder --inherit-context=false --permission-mode plan --timeout 60 --tools "read_file, glob"`,
	`/delegate --agent-type builder -- --x "y z"`,
	`/delegate it\'s\ fine --agent-type maestro-tester --tools a,b,a`,
	`/delegate "tab\there\n\"q\" \\ \x" --agent-type builder`,
	`/handoff sa-1 --transfer-control --timeout 30 --on-failure retry`,
	`/converge sa-1 sa-2 sa-3 --strategy vote --conflict-resolution auto_accept_latest --output-format json`,
	`/converge sa-1 sa-2 --stratgy merge`,
	`/resolve cf-1 --choose both --note='a "b" c'`,
	`/approve pr-1 --scope subagent`,
	`/deny pr-2 --reason "no"`,
	`/apply cv-1`, `/cancel sa-3`, `/status`, `/status cv-2`, `/wait sa-1 cv-1`,
	`/agents`, `/help`, `/help /delegate`, `/quit`,
	`/delegate "abc`, `/x\`, "/delegate a\x00b --agent-type b", "/delegate \xff",
	`/delegate x --agent-type b --inherit-context false`, `/`, `hello`,
}

// FuzzParse: Parse never panics, every error is a *ParseError, and every accepted line has a
// canonical form that parses back to the same value and is a fixpoint.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, err := Parse(line)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T", line, err)
			}
			if pe.Msg == "" || pe.Column < -1 || pe.Column > len(line) {
				t.Fatalf("Parse(%q) bad error %#v", line, pe)
			}
			if first, _, _ := strings.Cut(err.Error(), "\n"); len(first) > 400 {
				t.Fatalf("Parse(%q) error line is %d bytes", line, len(first))
			}
			return
		}
		if c == nil {
			t.Fatalf("Parse(%q) = nil, nil", line)
		}
		s := c.String()
		c2, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %#v, whose String %q does not parse: %v", line, c, s, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip of %q via %q\n got %#v\nwant %#v", line, s, c2, c)
		}
		if s2 := c2.String(); s2 != s {
			t.Fatalf("String is not a fixpoint: %q then %q", s, s2)
		}
		if _, err := json.Marshal(c.Args()); err != nil {
			t.Fatalf("Args of %q do not marshal: %v", line, err)
		}
		if c.Name() == "" || !strings.HasPrefix(s, "/"+c.Name()) {
			t.Fatalf("String %q does not start with /%s", s, c.Name())
		}
	})
}

// FuzzTokenize: Tokenize never panics; words are in order, inside the line and non-overlapping;
// a word with no quoting is the line's own bytes; quoting every word with Quote and tokenizing
// again gives the same words, none of them a flag.
func FuzzTokenize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add(`a"b"'c'\ d "" '' -- "--x" --y="z w"`)
	f.Fuzz(func(t *testing.T, line string) {
		toks, err := Tokenize(line)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Column < 0 || pe.Column > len(line) {
				t.Fatalf("Tokenize(%q) error %#v", line, err)
			}
			if utf8.ValidString(line) && strings.HasPrefix(pe.Msg, "invalid UTF-8") {
				t.Fatalf("Tokenize(%q) rejects valid UTF-8", line)
			}
			return
		}
		quotedLine := make([]string, len(toks))
		prevEnd := 0
		for i, tk := range toks {
			if tk.Start < prevEnd || tk.End <= tk.Start || tk.End > len(line) {
				t.Fatalf("Tokenize(%q) token %d at %d:%d after %d", line, i, tk.Start, tk.End, prevEnd)
			}
			if tk.bare < 0 || tk.bare > len(tk.Text) {
				t.Fatalf("Tokenize(%q) token %d bare %d of %q", line, i, tk.bare, tk.Text)
			}
			if !tk.Quoted && (tk.Text != line[tk.Start:tk.End] || tk.bare != len(tk.Text)) {
				t.Fatalf("Tokenize(%q) unquoted token %d is %q, line has %q", line, i, tk.Text, line[tk.Start:tk.End])
			}
			prevEnd = tk.End
			quotedLine[i] = Quote(tk.Text)
		}
		again, err := Tokenize(strings.Join(quotedLine, " "))
		if err != nil || len(again) != len(toks) {
			t.Fatalf("re-tokenizing the quoted words of %q: %d words, %v", line, len(again), err)
		}
		for i := range toks {
			if again[i].Text != toks[i].Text || again[i].IsFlag() || again[i].EndsFlags() {
				t.Fatalf("word %d of %q: %q became %q", i, line, toks[i].Text, again[i].Text)
			}
		}
		// Completion reads the same words leniently and must not panic anywhere in the line.
		for cur := 0; cur <= len(line) && cur < 64; cur++ {
			_ = Complete(line, cur, testLive)
		}
	})
}

// TestRoundTripGenerated puts together lines from the grammar's own pieces (commands, flags,
// values, ids, awkward words) in random order, where byte-level fuzzing rarely gets past the
// first error, and holds every accepted line to the round-trip property. Fixed seed: the same
// lines every run.
func TestRoundTripGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{
		"fix", "the", "bug", "--", `"--x"`, `'a b'`, `"q\"uote"`, `it\'s`, "é", `""`, "true", "false",
		"sa-1", "sa-2", "sa-3", "cv-1", "cf-1", "pr-1", "both", "none", "-v", "a=b", `"tab\t"`, `\\`,
		`"  spaced  "`, "'\"'", `"\n"`,
	}
	specs := Specs()
	accepted := 0
	for i := 0; i < 20000; i++ {
		s := specs[r.IntN(len(specs))]
		parts := []string{"/" + s.Name}
		for n := r.IntN(7); n > 0; n-- {
			if len(s.Flags) > 0 && r.IntN(2) == 0 {
				f := s.Flags[r.IntN(len(s.Flags))]
				var v string
				switch {
				case len(f.Values) > 0 && r.IntN(4) > 0:
					v = f.Values[r.IntN(len(f.Values))].Name
				case f.Kind == KindInt:
					v = []string{"1", "300", "86400", "0"}[r.IntN(4)]
				case f.Kind == KindList:
					v = []string{"a,b", "b, a,b", `"x y"`, "read_file"}[r.IntN(4)]
				default:
					v = words[r.IntN(len(words))]
				}
				switch {
				case f.Kind == KindBool && r.IntN(2) == 0:
					parts = append(parts, "--"+f.Name)
				case r.IntN(2) == 0:
					parts = append(parts, "--"+f.Name+"="+v)
				default:
					parts = append(parts, "--"+f.Name, v)
				}
				continue
			}
			parts = append(parts, words[r.IntN(len(words))])
		}
		line := strings.Join(parts, " ")
		c, err := Parse(line)
		if err != nil {
			continue
		}
		accepted++
		s2 := c.String()
		c2, err := Parse(s2)
		if err != nil || !reflect.DeepEqual(c, c2) || c2.String() != s2 {
			t.Fatalf("round trip of %q via %q: %#v, %v", line, s2, c2, err)
		}
	}
	t.Logf("%d accepted", accepted)
	if accepted < 500 {
		t.Errorf("only %d of 20000 generated lines parsed (fewer than 500); the generator has drifted from the grammar", accepted)
	}
}
