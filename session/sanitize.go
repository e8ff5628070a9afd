package session

import (
	"strings"
	"unicode/utf8"
)

// Sanitize removes every terminal control sequence and control character from text that came
// from a model or a tool, keeping newlines and tabs, so nothing they print can move the cursor,
// retitle the window, write the clipboard (OSC 52) or hide text. Invalid UTF-8 becomes U+FFFD.
//
// It handles 7-bit (ESC-prefixed) and 8-bit (C1) introducers: CSI sequences run to their final
// byte; OSC, DCS, SOS, PM and APC strings run to BEL or ST, or to the end of the text when
// unterminated (an unterminated string must not leak its payload onto the screen).
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
			i++
		case r == 0x1b: // ESC
			i = skipEscape(s, i+1)
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i+size)
		case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f: // C1 OSC DCS SOS PM APC
			i = skipString(s, i+size)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
			i += size
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			i += size // other C0/C1 controls, including \r and backspace, are dropped
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// clean reports whether s needs no change: the common case costs one pass and no allocation.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			return cleanUTF8(s[i:])
		}
	}
	return true
}

func cleanUTF8(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 {
			return false
		}
	}
	return true
}

// skipEscape skips the sequence after an ESC at s[i-1] and returns the index after it.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// Two-byte escapes (ESC 7, ESC c, ...) and intermediates (ESC ( B): skip intermediates
	// 0x20-0x2F, then one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) {
		i++
	}
	return i
}

// skipCSI skips parameter and intermediate bytes and the final byte of a CSI sequence.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		i++
		if c >= 0x40 && c <= 0x7e {
			return i
		}
		if c < 0x20 || c > 0x3f && c < 0x40 || c >= 0x80 {
			return i // malformed: stop at the odd byte (dropped with the sequence)
		}
	}
	return i
}

// skipString skips a control string up to and including BEL, ESC \ or C1 ST.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c: // U+009C ST
			return i + 2
		}
		i++
	}
	return i
}
