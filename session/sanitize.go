package session

import (
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Sanitize makes text that came from a model or a tool safe for a terminal while keeping it
// legible: every control character except newline and tab is shown as a visible escape, so
// "\x1b[2J" reads as the six characters `\x1b[2J` instead of clearing the screen.
//
// Invariants: the result contains no C0 control but '\n' and '\t', no DEL and no C1 control
// (U+0080–U+009F, which 8-bit terminals read as CSI, OSC, ...), and is valid UTF-8. Because
// the introducer of every escape sequence (ESC, or a C1 code) is escaped, the rest of the
// sequence is plain printable text: nothing can move the cursor, retitle the window, write
// the clipboard (OSC 52) or hide text. Sanitize is idempotent (backslashes are kept as they
// are, so an escape it wrote reads the same the second time).
//
// Bidi controls and invisible characters are escaped too (\u202e, \u200b, ...): a model or a
// file name cannot reverse or hide text on the screen (U+061C, U+200B–U+200F, U+202A–U+202E,
// U+2060–U+2064, U+2066–U+2069, U+FEFF; the zero-width joiner of emoji sequences included).
//
// Escapes: C0 and DEL as \xNN (\r is \x0d), C1 as \u0080–\u009f, an invalid UTF-8 byte as \xNN.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0 || invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no change: the common case costs one pass and no allocation.
// Plain ASCII is skipped eight bytes at a time (--print sanitises every byte a recording's
// models and tools said: the byte loop was 40 % of it); each byte that stops the scan is then
// judged on its own.
func clean(s string) bool {
	for i := 0; i < len(s); {
		i = scanPlain(s, i)
		if i == len(s) {
			return true
		}
		switch c := s[i]; {
		case c == '\n' || c == '\t':
			i++
		case c < 0x80: // another control character, or DEL
			return false
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r < 0xa0 || invisible(r) {
				return false
			}
			i += size
		}
	}
	return true
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// scanPlain returns the position of the first byte at or after i that is a control
// character, DEL or ≥ 0x80 (len(s) if none).
func scanPlain(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		// The compiler makes this one 8-byte load.
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		del := x ^ (lsb * 0x7f)
		// Each term flags, in a byte's high bit, bytes < 0x20, bytes == 0x7f and bytes ≥ 0x80.
		// The lowest flag is exact: a borrow only makes false flags above a true one.
		if m := ((x - lsb*0x20) &^ x) | ((del - lsb) &^ del) | x; m&msb != 0 {
			return i + bits.TrailingZeros64(m&msb)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return i
		}
	}
	return i
}

// invisible reports bidi controls and zero-width characters: they reorder or hide text.
func invisible(r rune) bool {
	switch {
	case r == 0x061c, r == 0xfeff:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// SanitizeJSON is Sanitize for JSON text (the --json outputs): every code point Sanitize
// escapes is written as a JSON escape (\u001b, \u202e, ...) instead, so the document stays
// valid and decodes to the same value, and nothing in it reaches a terminal raw. encoding/json
// escapes C0 controls already, but writes DEL, C1 controls, bidi controls and zero-width
// characters as they are. An invalid UTF-8 byte becomes \ufffd, what a decoder reads it as.
// Raw newlines and tabs are kept: between tokens they are the document's indentation (inside
// a string a JSON encoder never writes them raw).
func SanitizeJSON(js []byte) []byte {
	if clean(string(js)) {
		return js
	}
	b := make([]byte, 0, len(js)+16)
	for i := 0; i < len(js); {
		r, size := utf8.DecodeRune(js[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\n' || r == '\t':
			b = append(b, byte(r))
		case r < 0x20 || r >= 0x7f && r < 0xa0 || invisible(r):
			b = fmt.Appendf(b, `\u%04x`, r)
		default:
			b = append(b, js[i:i+size]...)
		}
		i += size
	}
	return b
}
