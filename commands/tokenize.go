package commands

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Token is one word of a command line after quote removal and escape processing.
type Token struct {
	Text   string // the word as the parser sees it: quotes removed, escapes applied
	Start  int    // byte offset of the word's first byte in the line
	End    int    // byte offset just past the word's last byte in the line
	Quoted bool   // some part of the word was quoted or backslash-escaped

	// bare is the length of the leading part of Text that was typed without quotes or
	// escapes. Only that part can make a word a flag: "--x" and '--x' are positional words,
	// while --note="a b" is the flag note with the value "a b".
	bare int
}

// IsFlag reports whether t is a flag (--name or --name=value). The "--" must be typed bare.
func (t Token) IsFlag() bool {
	return t.bare >= 2 && len(t.Text) > 2 && strings.HasPrefix(t.Text, "--")
}

// EndsFlags reports whether t is the bare "--" that makes every later word positional.
func (t Token) EndsFlags() bool { return t.bare == 2 && t.Text == "--" }

// flagParts splits a flag token into its name and value. Only an "=" in the bare prefix
// separates them, so --note"=x" is a flag named note=x (and unknown), not note with value x.
func (t Token) flagParts() (name, value string, hasValue bool) {
	if i := strings.IndexByte(t.Text[:t.bare], '='); i >= 2 {
		return t.Text[2:i], t.Text[i+1:], true
	}
	return t.Text[2:], "", false
}

// spaceChars are the word separators. Only ASCII whitespace separates words; other Unicode
// spaces are part of a word, so the rules stay byte-exact and easy to state.
const spaceChars = " \t\n\r\v\f"

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// Tokenize splits a command line into words.
//
//   - Words are separated by runs of ASCII whitespace.
//   - "..." quotes with the escapes \" \\ \n \t; any other backslash inside double quotes is
//     kept literally (so "C:\dir" stays as typed).
//   - '...' quotes literally: no escapes at all.
//   - Outside quotes a backslash makes the next character literal (\  is a space inside a word).
//   - Quoted and unquoted parts that touch form one word: --note="a b" is one word.
//
// An unterminated quote, a trailing backslash or invalid UTF-8 is a *ParseError whose Column
// is the byte offset of the opening quote, the backslash or the bad byte.
func Tokenize(line string) ([]Token, error) {
	toks, err := scan(line, false)
	if err != nil {
		return nil, err
	}
	return toks, nil
}

// scan implements Tokenize. In lenient mode (completion of a line still being typed) an
// unterminated quote or a trailing backslash ends the last word instead of failing.
func scan(line string, lenient bool) ([]Token, *ParseError) {
	if !utf8.ValidString(line) {
		off := invalidUTF8At(line)
		return nil, &ParseError{
			Msg:    "invalid UTF-8 at column " + strconv.Itoa(column(line, off)),
			Column: off,
		}
	}
	var toks []Token
	var b strings.Builder
	i, n := 0, len(line)
	for {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i >= n {
			return toks, nil
		}
		start := i
		b.Reset()
		quoted := false
		bare := -1 // -1 while every byte so far was typed bare
		markQuoted := func() {
			if bare < 0 {
				bare = b.Len()
			}
			quoted = true
		}
		for i < n && !isSpace(line[i]) {
			switch c := line[i]; c {
			case '\'':
				markQuoted()
				j := strings.IndexByte(line[i+1:], '\'')
				if j < 0 {
					if !lenient {
						return nil, unterminated(line, i, "single")
					}
					b.WriteString(line[i+1:])
					i = n
					break
				}
				b.WriteString(line[i+1 : i+1+j])
				i += j + 2
			case '"':
				markQuoted()
				open := i
				i++
				closed := false
				for i < n {
					c := line[i]
					if c == '"' {
						i++
						closed = true
						break
					}
					if c == '\\' && i+1 < n {
						if r, ok := dquoteEscape(line[i+1]); ok {
							b.WriteByte(r)
							i += 2
							continue
						}
					}
					b.WriteByte(c)
					i++
				}
				if !closed && !lenient {
					return nil, unterminated(line, open, "double")
				}
			case '\\':
				markQuoted()
				if i+1 >= n {
					if !lenient {
						return nil, &ParseError{
							Msg:    "trailing backslash at column " + strconv.Itoa(column(line, i)) + " escapes nothing",
							Column: i,
						}
					}
					i = n
					break
				}
				_, size := utf8.DecodeRuneInString(line[i+1:])
				b.WriteString(line[i+1 : i+1+size])
				i += 1 + size
			default:
				b.WriteByte(c)
				i++
			}
		}
		if bare < 0 {
			bare = b.Len()
		}
		toks = append(toks, Token{Text: b.String(), Start: start, End: i, Quoted: quoted, bare: bare})
	}
}

// dquoteEscape maps the character after a backslash inside double quotes to what it stands for.
func dquoteEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\':
		return c, true
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	}
	return 0, false
}

func unterminated(line string, open int, kind string) *ParseError {
	return &ParseError{
		Msg:    "unterminated " + kind + " quote opened at column " + strconv.Itoa(column(line, open)),
		Column: open,
	}
}

// Quote returns s as one word that Tokenize reads back as exactly s. Words that need no
// quoting come back unchanged; otherwise double quotes are preferred, then single quotes, then
// double quotes with escapes. A word starting with "--" is quoted so that it is never taken
// for a flag.
func Quote(s string) string {
	if s != "" && !needsQuote(s) {
		return s
	}
	ctl := hasControl(s)
	if !ctl && !strings.ContainsAny(s, `"\`) {
		return `"` + s + `"`
	}
	if !ctl && !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func needsQuote(s string) bool {
	if strings.HasPrefix(s, "--") {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isSpace(c), c == '"', c == '\'', c == '\\', c < 0x20, c == 0x7f:
			return true
		}
	}
	return false
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

func invalidUTF8At(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(s)
}

// column is the 1-based character column of byte offset off, for messages meant for people.
// ParseError.Column stays a byte offset for programs.
func column(line string, off int) int {
	if off > len(line) {
		off = len(line)
	}
	return utf8.RuneCountInString(line[:off]) + 1
}
