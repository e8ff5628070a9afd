package record

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// lineDecoder decodes event lines the way DecodeLine specifies, faster on the lines the
// Recorder writes: the envelope is read by hand (parsePrefix), the type and ids are interned,
// and the payload of TranscriptEvent, nine lines in ten of a recording, is read by hand too
// instead of through the reflective decoder. The hand-written paths only accept what they are
// sure the general decoder reads the same way (plain keys in their exact spelling, each once;
// strings with valid escapes and valid UTF-8; no null; no whitespace); anything else, and
// every error, goes to DecodeLine's own paths, which decide. So the result is always exactly
// DecodeLine's, errors included (TestLineDecoderMatchesGeneral, FuzzLineDecoder).
//
// A lineDecoder is not safe for concurrent use: the pipeline gives each worker its own (with
// its own id table); DecodeLine uses one from a pool with the shared table.
type lineDecoder struct {
	// noText leaves out the text of transcript events (ReadOptions.NoText): text, result,
	// reason and args are checked like the general decoder checks them, but not kept.
	noText  bool
	ids     *idTable // nil: sharedIDs
	scratch []byte   // unescaping buffer, reused
	pc      prefixCache
	// useArena keeps the text fields in arena (see keep).
	useArena bool
	arena    []byte

	// canonical's memory of the previous line.
	lastSess, lastSub string
	minuteHead        [16]byte
	minute            int64 // unix microseconds of minuteHead
	haveMinute        bool
}

func newLineDecoder(noText bool, ownIDs bool) *lineDecoder {
	d := &lineDecoder{noText: noText}
	if ownIDs {
		d.ids = newIDTable()
	}
	return d
}

// decode decodes one line (trailing newline optional), exactly as DecodeLine does, then drops
// transcript text when noText is set.
func (d *lineDecoder) decode(line []byte) (session.Event, error) {
	if ev, ok := d.fast(line); ok {
		return ev, nil
	}
	ev, err := decodeLineGeneric(line)
	if err == nil && d.noText {
		if te, ok := ev.Data.(session.TranscriptEvent); ok {
			ev.Data = withoutText(te)
		}
	}
	return ev, err
}

// box returns te as Data. Without text, most transcript events are alike (a token delta is
// TranscriptEvent{EventType: "token"}), and those share one boxed value: an interface holding
// a struct is never written through, so sharing it is safe, and it saves an allocation an
// event.
func (d *lineDecoder) box(te session.TranscriptEvent) session.Data {
	if d.noText && te.CallID == "" && te.Tool == "" && !te.IsError {
		for i, k := range session.TranscriptEvents {
			if te.EventType == k && i < len(bareEvents) {
				return bareEvents[i]
			}
		}
	}
	return te
}

// bareEvents are the boxed text-less events of each event type, in session.TranscriptEvents
// order.
var bareEvents = func() []session.Data {
	out := make([]session.Data, len(session.TranscriptEvents))
	for i, k := range session.TranscriptEvents {
		out[i] = session.TranscriptEvent{EventType: k}
	}
	return out
}()

// withoutText is te as read with ReadOptions.NoText.
func withoutText(te session.TranscriptEvent) session.TranscriptEvent {
	te.Text, te.Result, te.Reason, te.Args = "", "", "", nil
	return te
}

// canonical decodes the line at the start of b, a TranscriptEvent in exactly the form the
// Recorder writes (see parsePrefix; the payload as transcriptObject reads it), and returns it
// with the length of the line, newline included. Anything else is ok false: the caller finds
// the line's end and decodes it with decode. The envelope's fields mostly repeat the previous
// line's (the session id, the minute of ts, the type, the subagent id), so they are compared
// with it before they are parsed.
func (d *lineDecoder) canonical(b []byte, ev *session.Event) (n int, ok bool) {
	const head = `{"v":1,"seq":`
	if len(b) < 128 || string(b[:len(head)]) != head {
		return 0, false
	}
	p := len(head)
	var seq uint64
	q := p
	for ; q < p+20 && b[q]-'0' < 10; q++ {
		seq = seq*10 + uint64(b[q]-'0')
	}
	if q == p || q-p > 19 || b[p] == '0' {
		return 0, false
	}
	p = q
	const tsKey = `,"ts":"`
	if len(b) < p+100 || string(b[p:p+len(tsKey)]) != tsKey {
		return 0, false
	}
	p += len(tsKey)
	ts, ok := d.ts(b[p : p+len(session.TimeLayout)])
	if !ok {
		return 0, false
	}
	p += len(session.TimeLayout)
	const sessKey = `","session_id":"`
	if string(b[p:p+len(sessKey)]) != sessKey {
		return 0, false
	}
	p += len(sessKey)
	var sess string
	if sess, p, ok = d.cachedID(b, p, &d.lastSess); !ok {
		return 0, false
	}
	const typeKey = `,"type":"TranscriptEvent"`
	if len(b) < p+len(typeKey)+40 || string(b[p:p+len(typeKey)]) != typeKey {
		return 0, false
	}
	p += len(typeKey)
	var sub string
	const subKey = `,"subagent_id":"`
	if string(b[p:p+len(subKey)]) == subKey {
		if sub, p, ok = d.cachedID(b, p+len(subKey), &d.lastSub); !ok || sub == "" {
			return 0, false
		}
	}
	const dataKey = `,"data":`
	if len(b) < p+len(dataKey)+4 || string(b[p:p+len(dataKey)]) != dataKey {
		return 0, false
	}
	p += len(dataKey)
	data, end, ok := d.deltaObject(b, p)
	if !ok {
		var te session.TranscriptEvent
		if te, end, ok = d.transcriptObject(b, p); !ok {
			return 0, false
		}
		data = d.box(te)
	}
	if end+1 >= len(b) || b[end] != '}' || b[end+1] != '\n' {
		return 0, false
	}
	*ev = session.Event{V: 1, Seq: seq, TS: time.UnixMicro(ts).UTC(), SessionID: sess, Type: session.TypeTranscriptEvent,
		SubagentID: sub, Data: data}
	return end + 2, true
}

// deltaObject reads the payload most lines hold, {"event_type":"…"} or
// {"event_type":"…","text":"…"} exactly, faster than transcriptObject (which reads the
// rest); ok false for anything else.
func (d *lineDecoder) deltaObject(b []byte, p int) (session.Data, int, bool) {
	const head = `{"event_type":"`
	if len(b) < p+len(head)+32 || string(b[p:p+len(head)]) != head {
		return nil, 0, false
	}
	p += len(head)
	kind := -1
	for i, k := range session.TranscriptEvents {
		if b[p+len(k)] == '"' && string(b[p:p+len(k)]) == k {
			kind, p = i, p+len(k)+1
			break
		}
	}
	if kind < 0 {
		return nil, 0, false
	}
	te := session.TranscriptEvent{EventType: session.TranscriptEvents[kind]}
	if b[p] == '}' {
		return d.box(te), p + 1, true
	}
	const text = `,"text":"`
	if len(b) < p+len(text)+2 || string(b[p:p+len(text)]) != text {
		return nil, 0, false
	}
	var ok bool
	if d.noText {
		p, ok = skipString(b, p+len(text))
	} else {
		te.Text, p, ok = d.text(b, p+len(text))
	}
	if !ok || p >= len(b) || b[p] != '}' {
		return nil, 0, false
	}
	return d.box(te), p + 1, true
}

// cachedID reads the plain id string at p (after its quote) as *last when it is the same,
// else interned, and returns the position after its closing quote.
func (d *lineDecoder) cachedID(b []byte, p int, last *string) (string, int, bool) {
	if n := len(*last); n > 0 && p+n < len(b) && b[p+n] == '"' && string(b[p:p+n]) == *last {
		return *last, p + n + 1, true
	}
	s, q, ok := plainString(b, p)
	if !ok || len(s) == 0 {
		return "", 0, false
	}
	if d.ids != nil {
		*last = d.ids.get(s)
	} else {
		*last = sharedIDs.get(s)
	}
	return *last, q, true
}

// ts parses a timestamp in TimeLayout as parseTS does; a timestamp in the same minute as the
// previous one costs its seconds and microseconds only.
func (d *lineDecoder) ts(b []byte) (int64, bool) {
	if d.haveMinute && string(b[:16]) == string(d.minuteHead[:]) {
		if b[16] != ':' || b[19] != '.' || b[26] != 'Z' {
			return 0, false
		}
		var v int64
		for i, c := range b[17:26] {
			if i == 2 {
				continue // the '.'
			}
			if c-'0' >= 10 {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		if v >= 60_000_000 {
			return 0, false
		}
		return d.minute + v, true
	}
	ts, ok := parseTS(b)
	if !ok {
		return 0, false
	}
	sec := int64(b[17]-'0')*10 + int64(b[18]-'0')
	var us int64
	for _, c := range b[20:26] {
		us = us*10 + int64(c-'0')
	}
	copy(d.minuteHead[:], b[:16])
	d.minute, d.haveMinute = ts-sec*1_000_000-us, true
	return ts, true
}

// fast decodes a canonical line of a known type, or returns ok false.
func (d *lineDecoder) fast(line []byte) (session.Event, bool) {
	pf, ok := parsePrefixCached(line, &d.pc)
	if !ok {
		return session.Event{}, false
	}
	t, known := lookupType(pf.typ)
	if !known {
		return session.Event{}, false
	}
	raw := line[pf.data:pf.dataEnd]
	var data session.Data
	if t == session.TypeTranscriptEvent {
		te, ok := d.transcriptEvent(raw)
		if !ok {
			return session.Event{}, false
		}
		data = d.box(te)
	} else {
		var err error
		if data, err = session.Decoders[t](raw); err != nil {
			return session.Event{}, false
		}
	}
	ev := session.Event{V: 1, Seq: pf.seq, TS: time.UnixMicro(pf.ts).UTC(), Type: t, Data: data}
	if d.ids != nil {
		ev.SessionID, ev.SubagentID = d.ids.session(pf.session), d.ids.get(pf.sub)
	} else {
		ev.SessionID, ev.SubagentID = sharedIDs.get(pf.session), sharedIDs.get(pf.sub)
	}
	return ev, true
}

// lookupType returns the constant of a known type's spelling without allocating.
func lookupType(b []byte) (session.Type, bool) {
	if string(b) == string(session.TypeTranscriptEvent) {
		return session.TypeTranscriptEvent, true
	}
	t, ok := knownTypes[string(b)]
	return t, ok
}

// The keys of a TranscriptEvent payload, as bits of a seen-set.
const (
	keyEventType = 1 << iota
	keyText
	keyCallID
	keyTool
	keyArgs
	keyResult
	keyIsError
	keyReason
)

// transcriptEvent reads a TranscriptEvent payload (raw is the data object, '{' to '}') by
// hand, or returns ok false for anything it is not sure of: then the general decoder decides.
func (d *lineDecoder) transcriptEvent(raw []byte) (session.TranscriptEvent, bool) {
	te, end, ok := d.transcriptObject(raw, 0)
	return te, ok && end == len(raw)
}

// transcriptObject reads the TranscriptEvent payload object that starts at raw[p] and returns
// the position after its closing brace. What follows is the caller's to check. It reads no
// further than the line: a control character (a newline among them) anywhere is refused.
func (d *lineDecoder) transcriptObject(raw []byte, p int) (te session.TranscriptEvent, end int, ok bool) {
	n := len(raw)
	if p+2 > n || raw[p] != '{' {
		return te, 0, false
	}
	p++
	if raw[p] == '}' {
		return te, p + 1, true
	}
	var seen uint
	for {
		// A key, spelled exactly (the general decoder also matches other cases, and reads
		// keys this one does not know; both go to it), and its colon.
		if p+4 >= n || raw[p] != '"' {
			return te, 0, false
		}
		k := raw[p+1:]
		var bit uint
		var dst *string
		skip := false // a text field: left out with noText, kept in the arena
		switch {
		case len(k) > 12 && string(k[:12]) == `event_type":`:
			bit, p = keyEventType, p+13
		case len(k) > 6 && string(k[:6]) == `text":`:
			bit, dst, skip, p = keyText, &te.Text, true, p+7
		case len(k) > 9 && string(k[:9]) == `call_id":`:
			bit, dst, p = keyCallID, &te.CallID, p+10
		case len(k) > 6 && string(k[:6]) == `tool":`:
			bit, dst, p = keyTool, &te.Tool, p+7
		case len(k) > 6 && string(k[:6]) == `args":`:
			bit, p = keyArgs, p+7
		case len(k) > 8 && string(k[:8]) == `result":`:
			bit, dst, skip, p = keyResult, &te.Result, true, p+9
		case len(k) > 10 && string(k[:10]) == `is_error":`:
			bit, p = keyIsError, p+11
		case len(k) > 8 && string(k[:8]) == `reason":`:
			bit, dst, skip, p = keyReason, &te.Reason, true, p+9
		default:
			return te, 0, false
		}
		if seen&bit != 0 {
			return te, 0, false
		}
		seen |= bit
		switch bit {
		case keyEventType:
			if raw[p] != '"' {
				return te, 0, false
			}
			if te.EventType, p, ok = d.eventType(raw, p+1); !ok {
				return te, 0, false
			}
		case keyArgs:
			if raw[p] != '{' {
				return te, 0, false
			}
			end := skipObject(raw, p)
			if end < 0 {
				return te, 0, false
			}
			var m map[string]any
			if err := json.Unmarshal(raw[p:end], &m); err != nil {
				return te, 0, false
			}
			if !d.noText {
				te.Args = m
			}
			p = end
		case keyIsError:
			switch {
			case bytes.HasPrefix(raw[p:], []byte("true")):
				te.IsError, p = true, p+4
			case bytes.HasPrefix(raw[p:], []byte("false")):
				p += 5
			default:
				return te, 0, false
			}
		default:
			if raw[p] != '"' {
				return te, 0, false
			}
			switch {
			case skip && d.noText:
				if p, ok = skipString(raw, p+1); !ok {
					return te, 0, false
				}
			case skip:
				if *dst, p, ok = d.text(raw, p+1); !ok {
					return te, 0, false
				}
			case bit == keyTool:
				if *dst, p, ok = d.tool(raw, p+1); !ok {
					return te, 0, false
				}
			default:
				if *dst, p, ok = d.str(raw, p+1); !ok {
					return te, 0, false
				}
			}
		}
		if p >= n {
			return te, 0, false
		}
		switch raw[p] {
		case ',':
			p++
		case '}':
			return te, p + 1, true
		default:
			return te, 0, false
		}
	}
}

// eventType reads the event_type string starting at p (after its quote), as the constant of
// a known value (no allocation), or as read.
func (d *lineDecoder) eventType(raw []byte, p int) (string, int, bool) {
	for _, k := range session.TranscriptEvents {
		if e := p + len(k); e < len(raw) && raw[e] == '"' && string(raw[p:e]) == k {
			return k, e + 1, true
		}
	}
	return d.str(raw, p)
}

// str reads the JSON string whose contents start at p (just after the opening quote) and
// returns its value and the position after the closing quote; ok is false for anything the
// general decoder could read differently or refuse (a raw control character, a bad escape,
// an escaped surrogate, invalid UTF-8).
func (d *lineDecoder) str(raw []byte, p int) (string, int, bool) {
	i := scanString(raw, p)
	if i < len(raw) && raw[i] == '"' {
		return string(raw[p:i]), i + 1, true
	}
	b, end, ok := d.unescape(raw, p, i)
	return string(b), end, ok
}

// tool is str for tool names, which repeat: they are interned like ids.
func (d *lineDecoder) tool(raw []byte, p int) (string, int, bool) {
	i := scanString(raw, p)
	if i < len(raw) && raw[i] == '"' && d.ids != nil {
		return d.ids.get(raw[p:i]), i + 1, true
	}
	return d.str(raw, p)
}

// text is str for the text fields, which the decoders of the pipeline keep in an arena (see
// keep).
func (d *lineDecoder) text(raw []byte, p int) (string, int, bool) {
	if !d.useArena {
		return d.str(raw, p)
	}
	i := scanString(raw, p)
	if i < len(raw) && raw[i] == '"' {
		return d.keep(raw[p:i]), i + 1, true
	}
	b, end, ok := d.unescape(raw, p, i)
	return d.keep(b), end, ok
}

// arenaBlock is the size of the blocks keep copies text into.
const arenaBlock = 64 << 10

// keep returns b as a string copied into the decoder's arena: the texts of thousands of
// events share one allocation instead of one each. The arena's bytes are never written again
// once a string refers to them, and a string keeps its block alive, so the strings are as
// good as any; but one kept string keeps its whole block, which is why only the pipeline's
// decoders use it (its readers fold the text away or keep all of it).
func (d *lineDecoder) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaBlock/4 {
		return string(b)
	}
	if cap(d.arena)-len(d.arena) < len(b) {
		d.arena = make([]byte, 0, arenaBlock)
	}
	off := len(d.arena)
	d.arena = append(d.arena, b...)
	return unsafe.String(&d.arena[off], len(b))
}

// unescape reads the rest of a string past the first byte that needs care, at i, into the
// decoder's scratch buffer (valid until the next call).
func (d *lineDecoder) unescape(raw []byte, p, i int) ([]byte, int, bool) {
	buf := append(d.scratch[:0], raw[p:i]...)
	defer func() { d.scratch = buf[:0] }()
	for i < len(raw) {
		switch c := raw[i]; {
		case c == '"':
			return buf, i + 1, true
		case c == '\\':
			if i+1 >= len(raw) {
				return nil, 0, false
			}
			switch e := raw[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(raw, i+2)
				if !ok || r >= 0xd800 && r < 0xe000 {
					return nil, 0, false // surrogates (pairs or not) are the general decoder's
				}
				buf = utf8.AppendRune(buf, r)
				i += 4
			default:
				return nil, 0, false
			}
			i += 2
		case c < 0x20:
			return nil, 0, false
		default: // c >= 0x80
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, 0, false
			}
			buf = append(buf, raw[i:i+size]...)
			i += size
		}
		j := scanString(raw, i)
		buf = append(buf, raw[i:j]...)
		i = j
	}
	return nil, 0, false
}

// skipString checks the JSON string whose contents start at p as the general decoder would
// (escapes, control characters; invalid UTF-8 is no error, it decodes to U+FFFD) without
// keeping it, and returns the position after its closing quote.
func skipString(raw []byte, p int) (int, bool) {
	for i := p; ; {
		i = scanEnd(raw, i)
		if i >= len(raw) {
			return 0, false
		}
		switch raw[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(raw) {
				return 0, false
			}
			switch raw[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(raw, i+2); !ok {
					return 0, false
				}
				i += 6
			default:
				return 0, false
			}
		default: // a control character
			return 0, false
		}
	}
}

func hex4(raw []byte, p int) (rune, bool) {
	if p+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[p : p+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special8 flags (in the high bit of each byte) the bytes of x that are '"', '\\' or a
// control character; the lowest flag is exact (borrows only make false flags above a true one).
func special8(x uint64) uint64 {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	return ((q - lsb) &^ q) | ((b - lsb) &^ b) | ((x - lsb*0x20) &^ x)
}

// scanString returns the position of the first byte at or after i that ends a plain run of
// a string: '"', '\\', a control character or a byte ≥ 0x80 (len(s) if none).
func scanString(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if m := (special8(x) | x) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// scanEnd is scanString without stopping at bytes ≥ 0x80.
func scanEnd(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if m := special8(x) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// skipObject returns the position just after the JSON object (or array) that starts at p,
// following nesting and strings, or -1 if it does not end or holds a control character (a
// newline among them: it never reads past its line). It does not validate: the decoder given
// raw[p:end] does.
func skipObject(raw []byte, p int) int {
	depth := 0
	for i := p; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		case '"':
			for i++; ; {
				i = scanEnd(raw, i)
				if i >= len(raw) || raw[i] < 0x20 {
					return -1
				}
				if raw[i] == '"' {
					break
				}
				i += 2 // an escape and the byte it escapes
			}
		default:
			if c < 0x20 {
				return -1
			}
		}
	}
	return -1
}

// idTable interns the session and subagent ids of one decoder: a recording has one session id
// and a few hundred subagent ids at most, repeated on every line. A direct-mapped table
// answers almost every line without hashing a map; the map behind it keeps every id (up to
// maxIDs, then it starts over) so no id is allocated twice.
type idTable struct {
	sess  string // the last session id
	slots [1024]string
	all   map[string]string
}

const maxIDs = 1 << 14

func newIDTable() *idTable { return &idTable{all: map[string]string{}} }

// session is get for the session id, which every line repeats.
func (c *idTable) session(b []byte) string {
	if string(b) == c.sess {
		return c.sess
	}
	c.sess = c.get(b)
	return c.sess
}

func (c *idTable) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 64 {
		return string(b)
	}
	slot := &c.slots[idHash(b)%uint(len(c.slots))]
	if *slot == string(b) {
		return *slot
	}
	s, ok := c.all[string(b)]
	if !ok {
		if len(c.all) >= maxIDs {
			clear(c.all)
		}
		s = string(b)
		c.all[s] = s
	}
	*slot = s
	return s
}

func idHash(b []byte) uint {
	h := uint(2166136261)
	for _, x := range b {
		h = (h ^ uint(x)) * 16777619
	}
	return h ^ h>>15
}

// sharedTable is the id table of DecodeLine, safe for concurrent use: a collision only costs
// an allocation.
type sharedTable [4096]atomic.Pointer[string]

var sharedIDs sharedTable

func (c *sharedTable) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 64 {
		return string(b)
	}
	slot := &c[idHash(b)%uint(len(c))]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}
