package session

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	json "github.com/goccy/go-json"
)

// A checkpoint on disk (EncodeCheckpoint, DecodeCheckpoint) is a state saved whole, for a
// replay that reopens a recording: restoring it costs a read of the file, not a fold of the
// recording. It is only ever read back by the same build of summit (checkpointFormat), beside
// the recording it was folded from (the caller checks that identity).
//
// Layout: the line "summit-checkpoint <format>\n"; a uvarint length and the JSON of the state's
// exported fields, transcripts left out; then, per subagent in order, its unexported fold
// fields and its transcript (see writeTranscript). The lookup maps are not written: Clone
// rebuilds them.
//
// Every exported field goes through JSON, so a field added to State or its parts is saved
// without a change here; an unexported one must be added to writeSubagent or writeTranscript
// (TestCheckpointCodecRoundTrip compares a decoded state with the original, field by field).

// checkpointFormat changes whenever the layout or the meaning of a saved field does.
const checkpointFormat = "summit-checkpoint 1\n"

// EncodeCheckpoint writes s, a state folded with a TextStore or without (not a counting one),
// to w.
func (s *State) EncodeCheckpoint(w io.Writer) error {
	if s.countOnly || s.countItems {
		return errors.New("session: a counting state cannot be saved as a checkpoint")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(checkpointFormat)
	shell := *s
	shell.Subagents = make([]*Subagent, len(s.Subagents))
	for i, sa := range s.Subagents {
		n := *sa
		n.Transcript = nil
		shell.Subagents[i] = &n
	}
	js, err := json.Marshal(&shell)
	if err != nil {
		return fmt.Errorf("session: checkpoint: %w", err)
	}
	e := &enc{w: bw}
	e.bytes(js)
	for _, sa := range s.Subagents {
		e.str(sa.currentCallID)
		e.transcript(sa.Transcript)
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

// DecodeCheckpoint reads a state EncodeCheckpoint wrote. text is the TextStore its transcripts
// read their text back through (the recording's; nil for a state folded without one). The
// result is a checkpoint: Clone it before folding into it or reading it.
func DecodeCheckpoint(r io.Reader, text *TextStore) (*State, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head := make([]byte, len(checkpointFormat))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != checkpointFormat {
		return nil, errors.New("session: not a checkpoint of this format")
	}
	d := &dec{r: br}
	js := d.bytes(1 << 30)
	if d.err != nil {
		return nil, d.err
	}
	st := &State{}
	if err := json.Unmarshal(js, st); err != nil {
		return nil, fmt.Errorf("session: checkpoint: %w", err)
	}
	st.text = text
	for i, sa := range st.Subagents {
		if sa == nil {
			return nil, errors.New("session: checkpoint: a nil subagent")
		}
		sa.index = i
		sa.currentCallID = d.str()
		sa.Transcript = d.transcript(text)
		if d.err != nil {
			return nil, d.err
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, errors.New("session: checkpoint: trailing bytes")
	}
	return st, nil
}

type enc struct {
	w   *bufio.Writer
	buf [binary.MaxVarintLen64]byte
	err error
}

func (e *enc) uv(v uint64) {
	n := binary.PutUvarint(e.buf[:], v)
	if _, err := e.w.Write(e.buf[:n]); err != nil && e.err == nil {
		e.err = err
	}
}

func (e *enc) i64(v int64) { e.uv(uint64(v)) }

func (e *enc) bytes(b []byte) {
	e.uv(uint64(len(b)))
	if _, err := e.w.Write(b); err != nil && e.err == nil {
		e.err = err
	}
}

func (e *enc) str(s string) {
	e.uv(uint64(len(s)))
	if _, err := e.w.WriteString(s); err != nil && e.err == nil {
		e.err = err
	}
}

// transcript writes the stores as they are: the text bytes (or spans) whole, then the items.
func (e *enc) transcript(t *Transcript) {
	if t == nil {
		e.uv(0)
		return
	}
	var flags uint64 = 1
	if t.hasOpen {
		flags |= 2
	}
	if t.counted {
		flags |= 4
	}
	if t.src != nil {
		flags |= 8
	}
	e.uv(flags)
	e.i64(t.openEnd)
	e.uv(uint64(t.bytes))
	e.uv(uint64(t.n))
	e.uv(uint64(t.data.len()))
	for _, ch := range t.data.full {
		e.w.Write(ch)
	}
	e.w.Write(t.data.tail)
	e.uv(uint64(t.closed.len()))
	for i := 0; i < t.closed.len(); i++ {
		e.item(t.closed.at(i))
	}
	if t.hasOpen {
		e.item(&t.open)
	}
}

func (e *enc) item(it *item) {
	e.uv(it.seq)
	e.i64(it.start)
	e.i64(it.textLen)
	e.uv(uint64(it.count))
	e.uv(uint64(it.kind)<<8 | uint64(it.flags))
	e.str(it.tool)
	e.str(it.callID)
	if it.args == nil {
		e.uv(0)
		return
	}
	js, err := json.Marshal(it.args)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("session: checkpoint: %w", err)
	}
	e.bytes(js)
}

type dec struct {
	r   *bufio.Reader
	err error
}

func (d *dec) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		d.err = fmt.Errorf("session: checkpoint: %w", err)
	}
}

func (d *dec) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *dec) i64() int64 { return int64(d.uv()) }

// bytes reads a length-prefixed run of at most max bytes.
func (d *dec) bytes(max uint64) []byte {
	n := d.uv()
	if d.err != nil {
		return nil
	}
	if n > max {
		d.fail(fmt.Errorf("a run of %d bytes", n))
		return nil
	}
	if n <= 1<<20 {
		b := make([]byte, n)
		if _, err := io.ReadFull(d.r, b); err != nil {
			d.fail(err)
			return nil
		}
		return b
	}
	// A long run grows as it is read: a damaged length fails at the file's end, without
	// first allocating what it claims.
	var b bytes.Buffer
	if _, err := io.CopyN(&b, d.r, int64(n)); err != nil {
		d.fail(err)
		return nil
	}
	return b.Bytes()
}

func (d *dec) str() string { return string(d.bytes(64 << 20)) }

func (d *dec) transcript(text *TextStore) *Transcript {
	flags := d.uv()
	if flags == 0 || d.err != nil {
		return nil
	}
	t := &Transcript{hasOpen: flags&2 != 0, counted: flags&4 != 0}
	if flags&8 != 0 {
		if text == nil {
			d.fail(errors.New("its text lives in a recording, and no TextStore was given"))
			return nil
		}
		t.src = text
	}
	t.openEnd = d.i64()
	t.bytes = int(d.uv())
	t.n = int(d.uv())
	data := d.bytes(1 << 40)
	dataLen := int64(len(data))
	// Full chunks are slices of one buffer, capped so that no append reaches the next; the
	// tail is its own, as the store keeps it.
	for len(data) > byteChunk {
		t.data.full = append(t.data.full, data[:byteChunk:byteChunk])
		data = data[byteChunk:]
	}
	t.data.tail = data[:len(data):len(data)]
	n := d.uv()
	var items []item
	var prev int64
	for i := uint64(0); i < n && d.err == nil; i++ {
		it := d.item()
		// Items lie in order inside the text store (the invariant Text relies on).
		if it.start < prev || it.start > dataLen {
			d.fail(errors.New("a transcript's items do not fit its text"))
		}
		prev = it.start
		items = append(items, it)
	}
	if d.err != nil {
		return nil
	}
	items = items[:len(items):len(items)]
	for len(items) > itemChunk {
		t.closed.full = append(t.closed.full, items[:itemChunk:itemChunk])
		items = items[itemChunk:]
	}
	t.closed.tail = items
	if t.hasOpen {
		t.open = d.item()
	}
	if d.err != nil {
		return nil
	}
	if t.data.len() < t.open.start || t.hasOpen && t.open.start < prev || int(t.open.kind) >= len(itemKinds) {
		d.fail(errors.New("a transcript's items do not fit its text"))
		return nil
	}
	return t
}

func (d *dec) item() item {
	it := item{seq: d.uv(), start: d.i64(), textLen: d.i64(), count: uint32(d.uv())}
	kf := d.uv()
	it.kind, it.flags = uint8(kf>>8), uint8(kf)
	if int(it.kind) >= len(itemKinds) {
		d.fail(fmt.Errorf("item kind %d", it.kind))
	}
	it.tool = d.str()
	it.callID = d.str()
	if js := d.bytes(64 << 20); len(js) > 0 {
		if err := json.Unmarshal(js, &it.args); err != nil {
			d.fail(err)
		}
	}
	return it
}
