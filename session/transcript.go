package session

import (
	"encoding/binary"
	"fmt"
)

// Transcript is one subagent's stream, kept in append-only stores that clones share.
//
// Items are metadata only (seq, kind, tool, call id, flags) plus the place of their text in a
// byte store. The text is either inline (the bytes themselves: a state without a TextStore,
// as in tests and small sessions) or, when the state has a TextStore (replay, a recorded live
// session), a list of spans: where each event that contributed to the item lies in the
// recording. Then the text lives in the recording, not in memory, and Text reads it back
// through the store's bounded cache.
//
// Both stores are chunked: full chunks never change and a clone shares them; the tail chunk is
// shared capped at its length, so the first append on either side copies at most one chunk.
// The last item (the only one that grows: token and thinking deltas coalesce into it) lives
// in the Transcript value itself, so a clone copies it and neither side sees the other's
// later deltas. A clone therefore costs O(1), whatever the transcript's length, and folding a
// delta costs the same at the first event and the millionth.
//
// Invariant: items are contiguous in data, in order: item i occupies [start_i, start_{i+1})
// and the open (last) item [open.start, data.len()).
type Transcript struct {
	closed  itemStore // every item but the last
	open    item      // the last item, when hasOpen
	hasOpen bool
	// openEnd is the end offset (in the recording) of the open item's last span: spans are
	// stored as deltas from it.
	openEnd int64
	data    byteStore
	bytes   int
	src     *TextStore // where span items are read back from (nil: every item is inline)
	// counted is set on the transcripts of a state that counts items (State.SetCountOnly,
	// SetCountItems): n counts the items and open.kind is the last one's kind; closed, data
	// and the rest of open stay empty.
	counted bool
	n       int
}

// Item is one entry of a transcript: a coalesced run of token deltas (Kind "token"), a
// coalesced thinking run, a message, a tool call or result, a policy denial, an error, the
// subagent_start line, or a user message sent to the subagent (Kind "user").
type Item struct {
	Seq     uint64 // the seq of the event that opened the item
	Kind    string // a TranscriptEvent event_type, or ItemUser
	Tool    string
	CallID  string
	Args    map[string]any
	IsError bool
}

// ItemUser is the Kind of a user message sent to a subagent during a transfer-control handoff.
const ItemUser = "user"

// item is an Item as stored.
type item struct {
	seq     uint64
	start   int64 // first byte in data
	textLen int64 // bytes of text
	count   uint32
	kind    uint8 // index in itemKinds
	flags   uint8
	tool    string
	callID  string
	args    map[string]any // a tool call's, unless they are read back from the recording
}

const (
	flagError = 1 << iota
	flagSpans // data holds spans into the recording, not the text
	flagNoKey // some span has no place in the recording: never cached
)

// itemKinds are the kinds an item can have; item.kind indexes it.
var itemKinds = append([]string{""}, append(append([]string(nil), TranscriptEvents...), ItemUser)...)

func kindIndex(k string) uint8 {
	for i, s := range itemKinds {
		if s == k {
			return uint8(i)
		}
	}
	return 0 // the fold validates kinds, so never reached
}

// Len is the number of items.
func (t *Transcript) Len() int {
	if t == nil {
		return 0
	}
	if t.counted {
		return t.n
	}
	if t.hasOpen {
		return t.closed.len() + 1
	}
	return t.closed.len()
}

func (t *Transcript) at(i int) *item {
	if t.counted {
		panic("a state that counts items (State.SetCountOnly, SetCountItems) keeps no transcript items")
	}
	if n := t.closed.len(); i == n && t.hasOpen {
		return &t.open
	} else if i < 0 || i >= n {
		panic(fmt.Sprintf("transcript item %d out of range [0,%d)", i, t.Len()))
	}
	return t.closed.at(i)
}

// end is the end of item i in data.
func (t *Transcript) end(i int) int64 {
	switch n := t.closed.len(); {
	case i+1 < n:
		return t.closed.at(i + 1).start
	case i+1 == n && t.hasOpen:
		return t.open.start
	}
	return t.data.len()
}

// Item returns item i. The Args of a tool call whose text lives in the recording are read
// back (through the TextStore's cache).
func (t *Transcript) Item(i int) Item {
	it := t.at(i)
	out := Item{Seq: it.seq, Kind: itemKinds[it.kind], Tool: it.tool, CallID: it.callID, Args: it.args, IsError: it.flags&flagError != 0}
	if it.flags&flagSpans != 0 && out.Kind == TranscriptToolCall && it.args == nil && t.src != nil {
		_, out.Args = t.src.read(t, i, it)
	}
	return out
}

// Text returns the text of item i (for a tool result, the result). Text that lives in the
// recording is read back through the TextStore; if that fails, the text says so.
func (t *Transcript) Text(i int) string {
	it := t.at(i)
	if it.flags&flagSpans == 0 {
		return string(t.data.appendRange(nil, it.start, t.end(i)))
	}
	if t.src == nil {
		return "[summit: this text lives in a recording this state cannot read]"
	}
	text, _ := t.src.read(t, i, it)
	return text
}

// TextLen is the length in bytes of item i's text, without reading it.
func (t *Transcript) TextLen(i int) int { return int(t.at(i).textLen) }

// Bytes is the total size of the items' text.
func (t *Transcript) Bytes() int {
	if t == nil {
		return 0
	}
	return t.bytes
}

// textRef is where the event being folded lies, for a state with a TextStore.
type textRef struct {
	ts *TextStore
	at Loc
}

// add appends a new item holding text (the text of the event at ref).
func (t *Transcript) add(it Item, text string, ref textRef) {
	if t.counted {
		t.n++
		t.open.kind, t.hasOpen = kindIndex(it.Kind), true
		t.bytes += len(text)
		return
	}
	if t.hasOpen {
		t.closed.append(t.open)
	}
	n := item{seq: it.Seq, start: t.data.len(), kind: kindIndex(it.Kind), tool: it.Tool, callID: it.CallID}
	if it.IsError {
		n.flags |= flagError
	}
	t.open, t.hasOpen, t.openEnd = n, true, 0
	if ref.ts != nil {
		t.src = ref.ts
		t.open.flags |= flagSpans
	}
	if ref.ts == nil || ref.at.Len <= 0 {
		t.open.args = it.Args // not to be read back
	}
	t.put(text, ref)
}

// extend appends a delta to the last item when it is of the same kind, else opens a new item.
// It reports whether a new item was opened.
func (t *Transcript) extend(seq uint64, kind, delta string, ref textRef) bool {
	if t.hasOpen && itemKinds[t.open.kind] == kind {
		t.put(delta, ref)
		return false
	}
	t.add(Item{Seq: seq, Kind: kind}, delta, ref)
	return true
}

// put adds one event's text to the open item: the bytes, or the event's span (the text itself
// when the event has no place in the recording).
func (t *Transcript) put(text string, ref textRef) {
	if t.counted {
		t.bytes += len(text)
		return
	}
	o := &t.open
	o.count++
	o.textLen += int64(len(text))
	t.bytes += len(text)
	if o.flags&flagSpans == 0 {
		t.data.appendString(text)
		return
	}
	var b [2 * binary.MaxVarintLen64]byte
	if ref.at.Len <= 0 || ref.at.Off < t.openEnd {
		// No place in the recording (or not after the previous span): keep it inline.
		o.flags |= flagNoKey
		n := binary.PutUvarint(b[:], uint64(len(text))<<1|1)
		t.data.append(b[:n])
		t.data.appendString(text)
		return
	}
	n := binary.PutUvarint(b[:], uint64(ref.at.Len)<<1)
	n += binary.PutUvarint(b[n:], uint64(ref.at.Off-t.openEnd))
	t.data.append(b[:n])
	t.openEnd = ref.at.Off + int64(ref.at.Len)
}

// span is one entry of a span item: a line of the recording, or literal text.
type span struct {
	at  Loc
	lit string
}

// firstSpan is the place of item i's first span (a zero Loc when it is literal or absent).
func (t *Transcript) firstSpan(i int, it *item) Loc {
	end := min(t.end(i), it.start+2*binary.MaxVarintLen64)
	buf := t.data.appendRange(make([]byte, 0, 2*binary.MaxVarintLen64), it.start, end)
	h, k := binary.Uvarint(buf)
	if k <= 0 || h&1 != 0 {
		return Loc{}
	}
	d, k2 := binary.Uvarint(buf[k:])
	if k2 <= 0 {
		return Loc{}
	}
	return Loc{Off: int64(d), Len: int(h >> 1)}
}

// spans decodes item i's span list.
func (t *Transcript) spans(i int, it *item) []span {
	buf := t.data.appendRange(nil, it.start, t.end(i))
	out := make([]span, 0, it.count)
	var prevEnd int64
	for len(buf) > 0 {
		h, k := binary.Uvarint(buf)
		buf = buf[k:]
		n := int(h >> 1)
		if h&1 != 0 {
			out = append(out, span{lit: string(buf[:n])})
			buf = buf[n:]
			continue
		}
		d, k := binary.Uvarint(buf)
		buf = buf[k:]
		off := prevEnd + int64(d)
		out = append(out, span{at: Loc{Off: off, Len: n}})
		prevEnd = off + int64(n)
	}
	return out
}

// clone returns a copy that shares the stores' bytes but can never see the original's later
// appends (and the original never sees the clone's). It costs O(1).
func (t *Transcript) clone() *Transcript {
	if t == nil {
		return nil
	}
	c := *t
	c.closed = t.closed.clone()
	c.data = t.data.clone()
	return &c
}

// eventText is the text a transcript item keeps of an event.
func eventText(e Event) (string, map[string]any) {
	switch d := e.Data.(type) {
	case TranscriptEvent:
		switch d.EventType {
		case TranscriptToolResult:
			return d.Result, nil
		case TranscriptPolicyDenied:
			return d.Reason, nil
		case TranscriptToolCall:
			return "", d.Args
		}
		return d.Text, nil
	case UserNote:
		return d.Text, nil
	}
	return "", nil
}

// Chunk sizes of the stores: a clone's first append copies at most one tail chunk.
const (
	byteChunk = 8 << 10
	itemChunk = 64
)

// itemStore is an append-only store of items in fixed-size chunks. Full chunks are never
// written again; the tail is written only past the length any clone shares.
type itemStore struct {
	full [][]item
	tail []item
}

func (c *itemStore) len() int { return len(c.full)*itemChunk + len(c.tail) }

func (c *itemStore) at(i int) *item {
	if k := i / itemChunk; k < len(c.full) {
		return &c.full[k][i%itemChunk]
	}
	return &c.tail[i-len(c.full)*itemChunk]
}

func (c *itemStore) append(v item) {
	if len(c.tail) == itemChunk {
		c.full = append(c.full, c.tail)
		c.tail = nil
	}
	if len(c.tail) == cap(c.tail) {
		t := make([]item, len(c.tail), min(itemChunk, max(8, 2*cap(c.tail))))
		copy(t, c.tail)
		c.tail = t
	}
	c.tail = append(c.tail, v)
}

func (c *itemStore) clone() itemStore {
	return itemStore{full: c.full[:len(c.full):len(c.full)], tail: c.tail[:len(c.tail):len(c.tail)]}
}

// byteStore is the same for bytes.
type byteStore struct {
	full [][]byte
	tail []byte
}

func (c *byteStore) len() int64 { return int64(len(c.full))*byteChunk + int64(len(c.tail)) }

// room makes the tail writable past its length (a full tail moves to full) and returns how
// many bytes it can take before the chunk is full.
func (c *byteStore) room(want int) int {
	if len(c.tail) == byteChunk {
		c.full = append(c.full, c.tail)
		c.tail = nil
	}
	if len(c.tail) == cap(c.tail) {
		t := make([]byte, len(c.tail), min(byteChunk, max(64, 2*cap(c.tail), len(c.tail)+want)))
		copy(t, c.tail)
		c.tail = t
	}
	return cap(c.tail) - len(c.tail)
}

func (c *byteStore) appendString(s string) {
	for len(s) > 0 {
		k := min(len(s), c.room(len(s)))
		c.tail = append(c.tail, s[:k]...)
		s = s[k:]
	}
}

func (c *byteStore) append(p []byte) {
	for len(p) > 0 {
		k := min(len(p), c.room(len(p)))
		c.tail = append(c.tail, p[:k]...)
		p = p[k:]
	}
}

// appendRange appends bytes [from, to) to dst.
func (c *byteStore) appendRange(dst []byte, from, to int64) []byte {
	for from < to {
		k := from / byteChunk
		ch := c.tail
		if k < int64(len(c.full)) {
			ch = c.full[k]
		} else {
			k = int64(len(c.full))
		}
		lo, hi := from-k*byteChunk, min(to-k*byteChunk, int64(len(ch)))
		dst = append(dst, ch[lo:hi]...)
		from = k*byteChunk + hi
	}
	return dst
}

func (c *byteStore) clone() byteStore {
	return byteStore{full: c.full[:len(c.full):len(c.full)], tail: c.tail[:len(c.tail):len(c.tail)]}
}
