package record

import (
	"bytes"
	"unicode/utf8"
)

// StreamRedactor redacts one stream of text deltas (a subagent's streamed tokens or thinking)
// whose secrets may be split across deltas: "Bearer" + " eyJ…", "sk-ant-api03-" + the rest, a
// password value in three pieces. Each delta is redacted with what came before it, and the
// tail that could still be the start of a secret is held back until the next delta or Flush
// decides it.
//
// Invariants:
//   - The concatenation of everything Push and Flush return equals RedactText of the whole
//     stream, however the stream was split (unless a held tail outgrew maxHold; see below).
//     So a secret never reaches the recording, the screen or stdout in pieces.
//   - Held text is only what could still become a secret: a proper prefix of a token shape
//     ("sk", "Bearer ", "ghp_12") or of a secret environment value, or a token body that
//     reaches the end of the text (it may go on). Prose passes at once.
//   - A held tail is bounded by maxHold. Past it the tail is released, redacted; when it ended
//     inside a token, the rest of that token's body in later deltas is dropped, so no piece
//     of it leaks either.
//
// A StreamRedactor is not safe for concurrent use; the orchestrator keeps one per subagent
// and stream kind.
type StreamRedactor struct {
	r    *Redactor
	held []byte
	// ctx is the end of the text already released (raw): whether a token may start at the
	// held text's first byte depends on the byte before it.
	ctx []byte
	// cont is the body class of a token released while it was still going: later bytes of
	// that class continue it and are dropped.
	cont *byteClass
}

// maxHold bounds the text a StreamRedactor holds back.
const maxHold = 64 << 10

// ctxLen is how many released bytes are kept as context (tokenBoundary looks back at most 6).
const ctxLen = 8

// Stream returns a StreamRedactor for one stream. A nil Redactor gives one that passes
// text through unchanged.
func (r *Redactor) Stream() *StreamRedactor { return &StreamRedactor{r: r} }

// Push adds a delta and returns the text that can be shown now, redacted; it may be "" when
// everything is held.
func (s *StreamRedactor) Push(text string) string {
	if s.r == nil {
		return text
	}
	if s.cont != nil {
		i := 0
		for i < len(text) && s.cont[text[i]] {
			i++
		}
		if i == len(text) {
			return "" // the released token goes on; all of it is dropped
		}
		s.cont, text = nil, text[i:]
	}
	s.held = append(s.held, text...)
	line := append(append(make([]byte, 0, len(s.ctx)+len(s.held)), s.ctx...), s.held...)
	from := len(s.ctx)
	spans := s.r.find(line, from)
	cut := s.r.safeCut(line, from)
	for _, sp := range spans {
		if sp.head < cut && sp.end > cut {
			cut = sp.head
		}
	}
	for cut > from && cut < len(line) && !utf8.RuneStart(line[cut]) {
		cut--
	}
	if cut-from > 0 || len(s.held) <= maxHold {
		return s.release(line, from, cut, spans)
	}
	// The held tail outgrew maxHold: release all of it, and drop the rest of a token it ends in.
	for _, sp := range spans {
		if sp.end == len(line) && len(sp.repl) > 0 && &sp.repl[0] == &redactedTok[0] {
			s.cont = &anyTokenByte
		}
	}
	return s.release(line, from, len(line), spans)
}

// Flush releases whatever is held, redacted: the stream has ended (or another event of the
// same subagent comes next, which ends this run of deltas).
func (s *StreamRedactor) Flush() string {
	if s.r == nil || len(s.held) == 0 {
		s.cont = nil
		return ""
	}
	line := append(append(make([]byte, 0, len(s.ctx)+len(s.held)), s.ctx...), s.held...)
	from := len(s.ctx)
	out := s.release(line, from, len(line), s.r.find(line, from))
	s.cont = nil
	return out
}

// Held reports whether text is held back.
func (s *StreamRedactor) Held() bool { return len(s.held) > 0 }

// release returns line[from:cut] with the spans inside it replaced, and keeps line[cut:] held.
func (s *StreamRedactor) release(line []byte, from, cut int, spans []span) string {
	var keep []span
	for _, sp := range spans {
		if sp.end <= cut {
			keep = append(keep, span{sp.start - from, sp.end - from, sp.repl, sp.head - from})
		}
	}
	out, _ := s.r.replace(line[from:cut], keep)
	res := string(out)
	s.ctx = append(s.ctx[:0], line[max(0, cut-ctxLen):cut]...)
	s.held = append(s.held[:0], line[cut:]...)
	return res
}

// safeCut returns the first position of line[from:] where a secret could start that is not
// yet complete: a proper prefix of a secret value, or a token shape (possibly complete)
// whose body reaches the end of line. len(line) when there is none.
func (r *Redactor) safeCut(line []byte, from int) int {
	cut := len(line)
	consider := func(p int) {
		if p >= from && p < cut && r.partialAt(line, from, p) {
			cut = p
		}
	}
	// Token shapes: a partial one starts in the run of body bytes that ends the line (an anchor
	// is made of body bytes too), or in the 16 bytes before it and the spaces that may follow
	// "Bearer". Prose ends that run at its last space, so little is looked at.
	q := len(line)
	for q > from && anyTokenByte[line[q-1]] {
		q--
	}
	for q > from && line[q-1] == ' ' {
		q--
	}
	for p := max(from, q-16); p < len(line); p++ {
		consider(p)
	}
	// Secret values: a proper prefix of one ends the line.
	for i := range r.needles {
		n := r.needles[i].text
		for p := max(from, len(line)-len(n)+1); p < cut; p++ {
			if line[p] == n[0] && bytes.HasPrefix(n, line[p:]) {
				cut = p
				break
			}
		}
	}
	return cut
}

// anyTokenByte is every byte some token body is made of.
var anyTokenByte = func() (c byteClass) {
	for _, rule := range tokenRules {
		for b, ok := range rule.class {
			c[b] = c[b] || ok
		}
	}
	return c
}()

// partialAt reports whether a token shape starting at p reaches the end of line without
// being decided: line[p:] is a prefix of its anchor, or the anchor and what must follow it
// are there so far and every byte after them belongs to the body.
func (r *Redactor) partialAt(line []byte, from, p int) bool {
	for _, rule := range tokenRules {
		if rule.partialAt(line, from, p) {
			return true
		}
	}
	return false
}

func (rule *tokenRule) partialAt(line []byte, from, p int) bool {
	if p < from || !tokenBoundary(line, p) {
		return false
	}
	rest, a := line[p:], rule.anchor
	if len(rest) <= len(a) {
		return bytes.HasPrefix(a, rest)
	}
	if !bytes.HasPrefix(rest, a) {
		return false
	}
	body := p + len(a)
	switch {
	case rule.check == nil:
	case rule.keepHead: // "Bearer" and spaces
		i := body
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i == len(line) {
			return true
		}
		if i == body {
			return false
		}
		body = i
	default: // a kind letter and a separator: gh[pousr]_, xox[abprs]-
		switch len(line) - body {
		case 0:
			return true
		case 1: // the kind letter alone: followed by either separator, would it pass?
			_, ok1 := rule.check([]byte{line[body], '_'}, 0)
			_, ok2 := rule.check([]byte{line[body], '-'}, 0)
			return ok1 || ok2
		}
		var ok bool
		if body, ok = rule.check(line, body); !ok {
			return false
		}
	}
	for i := body; i < len(line); i++ {
		if !rule.class[line[i]] {
			return false
		}
	}
	return true
}
