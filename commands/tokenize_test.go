package commands

import (
	"reflect"
	"testing"
)

func TestTokenize(t *testing.T) {
	type tok struct {
		Text       string
		Start, End int
		Quoted     bool
		Flag       bool
	}
	tests := []struct {
		line string
		want []tok
	}{
		{"", nil},
		{"  \t ", nil},
		{"a bc", []tok{{"a", 0, 1, false, false}, {"bc", 2, 4, false, false}}},
		{" a\t\tb\n", []tok{{"a", 1, 2, false, false}, {"b", 4, 5, false, false}}},
		{`"a b" c`, []tok{{"a b", 0, 5, true, false}, {"c", 6, 7, false, false}}},
		{`'a "b"'`, []tok{{`a "b"`, 0, 7, true, false}}},
		{`'a\nb'`, []tok{{`a\nb`, 0, 6, true, false}}},
		{`"a\nb\tc\"d\\e\qf"`, []tok{{"a\nb\tc\"d\\e\\qf", 0, 18, true, false}}},
		{`a\ b`, []tok{{"a b", 0, 4, true, false}}},
		{`\"x`, []tok{{`"x`, 0, 3, true, false}}},
		{`\n`, []tok{{"n", 0, 2, true, false}}},
		{`a"b"'c'd`, []tok{{"abcd", 0, 8, true, false}}},
		{`""`, []tok{{"", 0, 2, true, false}}},
		{`'' x`, []tok{{"", 0, 2, true, false}, {"x", 3, 4, false, false}}},
		{`--note="a b"`, []tok{{"--note=a b", 0, 12, true, true}}},
		{`--x`, []tok{{"--x", 0, 3, false, true}}},
		{`"--x"`, []tok{{"--x", 0, 5, true, false}}},
		{`-"-x"`, []tok{{"--x", 0, 5, true, false}}},
		{`\--x`, []tok{{"--x", 0, 4, true, false}}},
		{`--"x"`, []tok{{"--x", 0, 5, true, true}}},
		{`-- --`, []tok{{"--", 0, 2, false, false}, {"--", 3, 5, false, false}}},
		{"é\"ü ö\"", []tok{{"éü ö", 0, 9, true, false}}},
		{"a\x00b", []tok{{"a\x00b", 0, 3, false, false}}},
		{"\\é", []tok{{"é", 0, 3, true, false}}},
	}
	for _, tt := range tests {
		toks, err := Tokenize(tt.line)
		if err != nil {
			t.Errorf("Tokenize(%q): %v", tt.line, err)
			continue
		}
		var got []tok
		for _, x := range toks {
			got = append(got, tok{x.Text, x.Start, x.End, x.Quoted, x.IsFlag()})
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tokenize(%q)\n got %+v\nwant %+v", tt.line, got, tt.want)
		}
	}
}

func TestTokenizeEndsFlagsAndParts(t *testing.T) {
	toks, _ := Tokenize(`-- "--" --a=b --a"=b" --c=`)
	if !toks[0].EndsFlags() || toks[1].EndsFlags() {
		t.Error("only a bare -- ends the flags")
	}
	for i, want := range []struct {
		name, value string
		has         bool
	}{{"a", "b", true}, {"a=b", "", false}, {"c", "", true}} {
		n, v, has := toks[i+2].flagParts()
		if n != want.name || v != want.value || has != want.has {
			t.Errorf("flagParts(%q) = %q %q %v, want %+v", toks[i+2].Text, n, v, has, want)
		}
	}
}

func TestTokenizeErrors(t *testing.T) {
	for line, want := range map[string]struct {
		msg string
		col int
	}{
		`a "b`:         {"unterminated double quote opened at column 3", 2},
		`a 'b`:         {"unterminated single quote opened at column 3", 2},
		`"a\"`:         {"unterminated double quote opened at column 1", 0},
		`"a\`:          {"unterminated double quote opened at column 1", 0},
		`ab\`:          {"trailing backslash at column 3 escapes nothing", 2},
		"ab \xc3":      {"invalid UTF-8 at column 4", 3},
		"é \xff":       {"invalid UTF-8 at column 3", 3},
		`x 'a' "b" 'c`: {"unterminated single quote opened at column 11", 10},
	} {
		_, err := Tokenize(line)
		pe, ok := err.(*ParseError)
		if !ok || pe.Msg != want.msg || pe.Column != want.col || err.Error() != want.msg {
			t.Errorf("Tokenize(%q) error %#v, want %q at %d", line, err, want.msg, want.col)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"abc":       "abc",
		"":          `""`,
		"a b":       `"a b"`,
		`a"b`:       `'a"b'`,
		`a\b`:       `'a\b'`,
		`it's`:      `"it's"`,
		`it's "x"`:  `"it's \"x\""`,
		"a\nb":      `"a\nb"`,
		"tab\there": `"tab\there"`,
		"--x":       `"--x"`,
		"-x":        "-x",
		"a=b":       "a=b",
		"é":         "é",
		"a\x00b":    "\"a\x00b\"",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		toks, err := Tokenize(Quote(in))
		if err != nil || len(toks) != 1 || toks[0].Text != in || toks[0].IsFlag() || toks[0].EndsFlags() {
			t.Errorf("Tokenize(Quote(%q)) = %+v, %v", in, toks, err)
		}
	}
}
