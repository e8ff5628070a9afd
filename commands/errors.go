package commands

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParseError is why a line was rejected. Every error Parse and Tokenize return is a
// *ParseError; the orchestrator records Error() and Usage in a CommandRejected event and the UI
// shows Error() on its error line and may put the caret at Column.
//
// A ParseError is a syntax error, so it carries the usage line. A well-formed line the session
// then refuses (an unknown id, nothing to apply, not allowed now) is not a ParseError and shows
// no usage line: with one, a refusal reads like a typo.
type ParseError struct {
	Command    string // the command's name without "/", or "" when it is not known
	Msg        string // what is wrong, one line
	Usage      string // the command's usage line, or "" when the command is not known
	Suggestion string // the nearest valid text to type instead (e.g. "--strategy"), or ""
	Column     int    // byte offset in the line of the offending word, or -1
}

// Error renders the whole message: "/cmd: what is wrong (did you mean X?)" and, when the
// command is known, a second line "usage: ...".
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Command != "" {
		b.WriteString("/")
		b.WriteString(e.Command)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Suggestion != "" {
		b.WriteString(" (did you mean ")
		b.WriteString(e.Suggestion)
		b.WriteString("?)")
	}
	if e.Usage != "" {
		b.WriteString("\nusage: ")
		b.WriteString(e.Usage)
	}
	return b.String()
}

// maxShown bounds how much of a user's word an error message repeats, so a pasted megabyte
// cannot make a megabyte error line.
const maxShown = 40

// quoted shows a user-supplied value in a message: Go-quoted (so control characters cannot
// reach the terminal) and truncated.
func quoted(s string) string { return strconv.Quote(truncate(s)) }

// shown shows a user-typed name (a flag or command) as typed when it is short and printable,
// and quoted otherwise.
func shown(s string) string {
	if len(s) > maxShown {
		return quoted(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || r == ' ' || r == utf8.RuneError {
			return quoted(s)
		}
	}
	return s
}

func truncate(s string) string {
	if utf8.RuneCountInString(s) <= maxShown {
		return s
	}
	n := 0
	for i := range s {
		if n == maxShown {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
