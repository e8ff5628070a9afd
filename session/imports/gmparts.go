package imports

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// A hand-written reader for the usual shapes of a Gemini CLI content (gmParts) and of a
// function response (responseText). Decoding them through the general decoder was a tenth of
// a Gemini CLI import: each is a second decode, with its own setup and a copy of its input,
// nested in the decode of the message, for every content and every tool result.
//
// The reader is an exact shortcut, never a second opinion: it accepts only input it reads to
// the same value the general decoder does (the keys spelt exactly, each once; strings that
// need no unescaping, or are unescaped by the general decoder itself; raw values that are
// strict JSON), and for anything else (a key in another case, a duplicate key, a null, a
// nested list, a value it does not check) it answers "not mine", and the general decoder
// reads the whole input as before, with its errors. FuzzGmPartsFast and
// TestGmPartsFastMatches hold it to that.

// jsonScan reads JSON from b at i. Every method reports false for input it does not take.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // compact JSON: no white space at all
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, or 0 at the end (a NUL byte in the input is never
// valid JSON outside a string, and every caller refuses it as it refuses the end).
func (s *jsonScan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// atEnd is whether only white space is left.
func (s *jsonScan) atEnd() bool {
	s.ws()
	return s.i == len(s.b)
}

// eat consumes c (after white space).
func (s *jsonScan) eat(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// rawString is the extent of a string (quotes included) at s.i, its escapes checked, and
// whether it is plain: no escape, no byte to unescape, valid UTF-8 (its bytes are its value).
func (s *jsonScan) rawString() (raw []byte, plain bool, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	start := s.i
	s.i++
	plain = true
	ascii := true
	b := s.b
	for {
		// Eight bytes at a time past those that stand for themselves (a tool's output is
		// often tens of kilobytes), and straight to the first that does not: special's
		// lowest bit is always a byte that is special.
		if s.i+8 <= len(b) {
			m := special(binary.LittleEndian.Uint64(b[s.i:]))
			if m == 0 {
				s.i += 8
				continue
			}
			s.i += bits.TrailingZeros64(m) >> 3
		}
		if s.i >= len(b) {
			return nil, false, false
		}
		c := b[s.i]
		switch {
		case c == '"':
			s.i++
			raw = b[start:s.i]
			if !ascii && !utf8.Valid(raw) {
				plain = false
			}
			return raw, plain, true
		case c == '\\':
			plain = false
			if s.i+1 >= len(b) {
				return nil, false, false
			}
			switch b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(b) {
					return nil, false, false
				}
				for _, h := range b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				s.i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false // a control character is never raw in a JSON string
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			s.i++
		}
	}
}

// special has the high bit of each byte of w set that is a quote, a backslash, a control
// character or not ASCII (and may set others above such a byte, where a borrow carried:
// never one below the first that is).
func special(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := w ^ (lo * '"')
	bs := w ^ (lo * '\\')
	return ((q-lo)&^q | (bs-lo)&^bs | (w-lo*0x20)&^w | w) & hi
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// str reads a string value. One with escapes is unescaped by the general decoder.
func (s *jsonScan) str() (string, bool) {
	raw, plain, ok := s.rawString()
	if !ok {
		return "", false
	}
	return unquote(raw, plain)
}

// unquote is the value of the string raw (quotes included) that rawString read.
func unquote(raw []byte, plain bool) (string, bool) {
	if plain {
		return string(raw[1 : len(raw)-1]), true
	}
	var v string
	return v, json.Unmarshal(raw, &v) == nil
}

// key reads an object key and its colon. A key that is not plain ASCII is not taken: the
// general decoder matches keys without regard to case, by Unicode's folding.
func (s *jsonScan) key() ([]byte, bool) {
	raw, plain, ok := s.rawString()
	if !ok || !plain {
		return nil, false
	}
	k := raw[1 : len(raw)-1]
	for _, c := range k {
		if c >= utf8.RuneSelf {
			return nil, false
		}
	}
	if !s.eat(':') {
		return nil, false
	}
	return k, true
}

// maxFastDepth bounds the nesting value checks (deeper input takes the general way).
const maxFastDepth = 64

// value checks a strict JSON value at s.i and returns its bytes.
func (s *jsonScan) value(depth int) ([]byte, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	c := s.peek()
	start := s.i
	switch {
	case c == '"':
		if _, _, ok := s.rawString(); !ok {
			return nil, false
		}
	case c == '{':
		s.i++
		if !s.eat('}') {
			for {
				if _, _, ok := s.rawString(); !ok || !s.eat(':') {
					return nil, false
				}
				if _, ok := s.value(depth + 1); !ok {
					return nil, false
				}
				if s.eat('}') {
					break
				}
				if !s.eat(',') {
					return nil, false
				}
			}
		}
	case c == '[':
		s.i++
		if !s.eat(']') {
			for {
				if _, ok := s.value(depth + 1); !ok {
					return nil, false
				}
				if s.eat(']') {
					break
				}
				if !s.eat(',') {
					return nil, false
				}
			}
		}
	case c == '-' || '0' <= c && c <= '9':
		if !s.number() {
			return nil, false
		}
	default:
		if !s.literal("true") && !s.literal("false") && !s.literal("null") {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

func (s *jsonScan) literal(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScan) number() bool {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// object reads an object whose keys are among names (each at most once; a key that matches
// one of them only without regard to case is not taken), calling field for each known key
// with its index, and checking the value of any other key.
func (s *jsonScan) object(names []string, field func(int) bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	var seen uint32
	for {
		k, ok := s.key()
		if !ok {
			return false
		}
		known := -1
		for i, n := range names {
			if string(k) == n {
				known = i
				break
			}
			if asciiEqualFold(k, n) {
				return false
			}
		}
		if known >= 0 {
			if seen&(1<<known) != 0 {
				return false
			}
			seen |= 1 << known
			if !field(known) {
				return false
			}
		} else if _, ok := s.value(1); !ok {
			return false
		}
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

func asciiEqualFold(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// raw reads a value kept as json.RawMessage: a copy of its bytes, as the general decoder keeps.
func (s *jsonScan) raw() ([]byte, bool) {
	v, ok := s.value(1)
	if !ok {
		return nil, false
	}
	c := make([]byte, len(v))
	copy(c, v)
	return c, true
}

var (
	partKeys     = []string{"text", "thought", "functionCall", "functionResponse", "inlineData"}
	callKeys     = []string{"id", "name", "args"}
	responseKeys = []string{"id", "name", "response"}
	inlineKeys   = []string{"mimeType"}
	outputKeys   = []string{"output", "error"}
)

// part reads one part object.
func (s *jsonScan) part(p *gmPart) bool {
	var ok bool
	return s.object(partKeys, func(k int) bool {
		switch k {
		case 0:
			p.Text, ok = s.str()
		case 1:
			switch s.peek() {
			case 't':
				p.Thought, ok = true, s.literal("true")
			case 'f':
				p.Thought, ok = false, s.literal("false")
			default:
				ok = false // a null or another type: the general way
			}
		case 2:
			fc := &gmFunctionCall{}
			p.FunctionCall = fc
			ok = s.named(callKeys, &fc.ID, &fc.Name, &fc.Args)
		case 3:
			fr := &gmFunctionResponse{}
			p.FunctionResponse = fr
			ok = s.named(responseKeys, &fr.ID, &fr.Name, &fr.Response)
		case 4:
			in := &gmInlineData{}
			p.InlineData = in
			ok = s.object(inlineKeys, func(int) bool {
				var ok bool
				in.MimeType, ok = s.str()
				return ok
			})
		}
		return ok
	})
}

// named reads a function call's or a function response's object: keys are its id's, its
// name's and its raw value's.
func (s *jsonScan) named(keys []string, id, name *string, raw *json.RawMessage) bool {
	return s.object(keys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			*id, ok = s.str()
		case 1:
			*name, ok = s.str()
		case 2:
			*raw, ok = s.raw()
		}
		return ok
	})
}

// fastParts reads b (a string, a part, or a list of strings and parts) as the general
// decoder would, or reports false.
func fastParts(b []byte) (gmParts, bool) {
	if len(b) == 0 || b[0] != '"' && b[0] != '{' && b[0] != '[' {
		return nil, false // what UnmarshalJSON's general way reads by its first byte alone
	}
	s := &jsonScan{b: b}
	var out gmParts
	switch s.peek() {
	case '"':
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		out = gmParts{{Text: v}}
	case '{':
		var p gmPart
		if !s.part(&p) {
			return nil, false
		}
		out = gmParts{p}
	case '[':
		s.i++
		out = make(gmParts, 0, 1) // a content is nearly always one part
		if !s.eat(']') {
			for {
				switch s.peek() {
				case '"':
					v, ok := s.str()
					if !ok {
						return nil, false
					}
					out = append(out, gmPart{Text: v})
				case '{':
					var p gmPart
					if !s.part(&p) {
						return nil, false
					}
					out = append(out, p)
				default:
					return nil, false
				}
				if s.eat(']') {
					break
				}
				if !s.eat(',') {
					return nil, false
				}
			}
		}
	default:
		return nil, false
	}
	if !s.atEnd() {
		return nil, false
	}
	return out, true
}

// fastResponseText is responseText of an object response, or false.
func fastResponseText(raw []byte) (string, bool) {
	s := &jsonScan{b: raw}
	var vals [2][]byte
	var plain [2]bool
	if !s.object(outputKeys, func(k int) bool {
		var ok bool
		if s.peek() == '"' {
			vals[k], plain[k], ok = s.rawString()
		} else {
			vals[k], ok = s.value(1)
		}
		return ok
	}) || !s.atEnd() {
		return "", false
	}
	for k, x := range vals {
		if len(x) > 0 && x[0] == '"' {
			if v, ok := unquote(x, plain[k]); ok {
				return v, true
			}
		}
	}
	return string(raw), true
}
