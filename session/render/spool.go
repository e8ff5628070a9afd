package render

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"unicode/utf8"

	"github.com/summit-dev/summit/session"
)

// TextSpool prints a recording of any size in bounded memory (`summit replay --print`). Fold
// every event with its Apply instead of session.Apply: it folds the event into a state that
// counts transcript items without keeping them (State.SetCountItems, which Apply sets on the
// empty state), and keeps, out of the state, what Print needs of them: each subagent's items
// (kind, tool, error flag, then the text) as one stream, and the parent log (taken out of the
// state after each event) as another, in memory up to a limit and past it in an unnamed
// temporary file. Print then writes what Print would write for the state folded in full, byte
// for byte (TestSpoolPrintMatchesPrint), reading the streams back in order.
//
// So what stays in memory is the state without its transcripts and log (it grows with the
// subagents, handoffs, convergences and permission requests, never with the transcript
// events: TestSpoolMemoryFlat), a few numbers per subagent, and where each stream's parts lie
// in the file (one entry per spill of a stream, a spill every `memory` bytes of text).
//
// # Streams
//
// A subagent's stream is its items in order, each a header then the item's text:
//
//	kind      1 byte: index in itemKinds (0xff: uvarint length and the kind's name follow)
//	flags     1 byte: 1 = an error result (Item.IsError)
//	tool      uvarint length, bytes (tool calls, results and denials; else empty)
//	length    8 bytes, little endian: the length of the text, written when the item closes
//	text      what the item prints: the text, result or reason, a tool call's arguments as
//	          compact JSON
//
// The length is written back into the header when the subagent's next item opens, or when
// Print starts (the last item): only the last item of each subagent grows. The log's stream
// is its items in order: uvarint seq, then the kind, and for a mirror item the subagent id
// and the place of the mirrored item's header in that subagent's stream, for any other the
// text, detail and subagent id (each a uvarint length and its bytes).
//
// A TextSpool serves one state, on one goroutine. Close removes its file.
type TextSpool struct {
	limit int      // memory for text before it goes to the file
	used  int      // memory the blocks holding text take now
	free  [][]byte // blocks to reuse
	subs  map[string]*subStream
	last  *subStream // the subagent of the last transcript event
	log   stream
	logN  int       // items in the log's stream
	all   []*stream // every stream in creation order (the log's first): what spill writes
	file  *os.File
	size  int64 // bytes in the file
	err   error
	enc   []byte // scratch for headers and log items
	ready bool   // Print has written every open item's length
	// rd reads the transcripts, then the log; mirror reads the items the log mirrors.
	rd, mirror reader
	names      map[string]string // see reader.name
}

// stream is one sequence of bytes: its start in the file (segs), the rest in memory blocks.
type stream struct {
	total  int64     // bytes written
	segs   []segment // the bytes in the file, in order; then the blocks
	blocks [][]byte  // the bytes not yet in the file, [total-inMem, total): full blocks, then one
	inMem  int64
}

// segment is a part of a stream in the file: at is its place in the stream.
type segment struct{ at, off, n int64 }

// subStream is a subagent's stream and where its last item is.
type subStream struct {
	stream
	sa    *session.Subagent
	items int   // items written
	hdr   int64 // where the last item's header starts
	lenAt int64 // where its length goes
	text  int64 // where its text starts
}

// itemKinds are the kinds a header names by index.
var itemKinds = append(append([]string(nil), session.TranscriptEvents...), session.ItemUser)

const (
	kindNamed = 0xff // the kind's name follows the byte
	flagError = 1
	lenBytes  = 8
)

// DefaultSpoolMemory is how much memory a TextSpool's text may take.
const DefaultSpoolMemory = 16 << 20

// spoolBlock is the read size of the file, memBlock the size of the blocks text is held in
// (variables for the tests).
var (
	spoolBlock int64 = 256 << 10
	memBlock         = 32 << 10
)

// NewTextSpool returns a spool that holds up to memory bytes of text in memory (≤ 0: the
// default) and the rest in a temporary file, created when needed.
func NewTextSpool(memory int) *TextSpool {
	if memory <= 0 {
		memory = DefaultSpoolMemory
	}
	sp := &TextSpool{limit: memory, subs: map[string]*subStream{}}
	sp.all = append(sp.all, &sp.log)
	sp.rd.sp, sp.mirror.sp, sp.names = sp, sp, map[string]string{}
	return sp
}

// errFolded is Apply's error for a state some events were folded into without the spool.
var errFolded = errors.New("the state was folded without the text spool: give TextSpool.Apply every event, from the empty state")

// Apply folds e into st as session.Apply does, with st's transcripts counting their items
// (State.SetCountItems), and keeps the item e opens or extends, and the log items it adds,
// in the spool. st's Log is empty after it.
func (sp *TextSpool) Apply(st *session.State, e session.Event) error {
	if !st.CountsItems() {
		if st.Started {
			return errFolded
		}
		st.SetCountItems()
	}
	if sp.err != nil {
		return sp.err
	}
	if sp.ready {
		return errors.New("TextSpool.Apply after Print")
	}
	if err := session.Apply(st, e); err != nil {
		return err
	}
	switch d := e.Data.(type) {
	case session.TranscriptEvent:
		s := sp.sub(st, e.SubagentID)
		if s.sa.Transcript.Len() > s.items {
			tool, flags := "", byte(0)
			switch d.EventType {
			case session.TranscriptToolCall, session.TranscriptPolicyDenied:
				tool = d.Tool
			case session.TranscriptToolResult:
				tool = d.Tool
				if d.IsError {
					flags = flagError
				}
			}
			sp.open(s, d.EventType, tool, flags)
		}
		switch d.EventType {
		case session.TranscriptToolCall:
			// What the item prints of its arguments.
			put(sp, &s.stream, compactJSON(d.Args))
		case session.TranscriptToolResult:
			put(sp, &s.stream, d.Result)
		case session.TranscriptPolicyDenied:
			put(sp, &s.stream, d.Reason)
		default:
			put(sp, &s.stream, d.Text)
		}
	case session.UserNote:
		if e.SubagentID != "" {
			s := sp.sub(st, e.SubagentID)
			sp.open(s, session.ItemUser, "", 0)
			put(sp, &s.stream, d.Text)
		}
	}
	if len(st.Log) > 0 {
		sp.takeLog(st)
	}
	if sp.used > sp.limit {
		sp.spill()
	}
	return sp.err
}

// sub is the stream of subagent id (which the fold has just accepted).
func (sp *TextSpool) sub(st *session.State, id string) *subStream {
	if s := sp.last; s != nil && s.sa.ID == id {
		return s
	}
	s := sp.subs[id]
	if s == nil {
		s = &subStream{sa: st.Subagent(id)}
		sp.subs[id] = s
		sp.all = append(sp.all, &s.stream)
	}
	sp.last = s
	return s
}

// open closes s's last item (writes its length) and starts the next with its header.
func (sp *TextSpool) open(s *subStream, kind, tool string, flags byte) {
	sp.closeItem(s)
	b := sp.enc[:0]
	k := -1
	for i, n := range itemKinds {
		if n == kind {
			k = i
			break
		}
	}
	if k >= 0 {
		b = append(b, byte(k))
	} else {
		b = append(b, kindNamed)
		b = appendString(b, kind)
	}
	b = append(b, flags)
	b = appendString(b, tool)
	s.hdr = s.total
	s.lenAt = s.total + int64(len(b))
	b = append(b, make([]byte, lenBytes)...)
	sp.enc = b
	put(sp, &s.stream, b)
	s.text = s.total
	s.items++
}

// closeItem writes the length of s's last item into its header.
func (sp *TextSpool) closeItem(s *subStream) {
	if s.items == 0 {
		return
	}
	var b [lenBytes]byte
	binary.LittleEndian.PutUint64(b[:], uint64(s.total-s.text))
	sp.patch(&s.stream, s.lenAt, b[:])
}

// takeLog moves st's log items into the log's stream. A mirror item names the item the same
// event opened, the last of its subagent's.
func (sp *TextSpool) takeLog(st *session.State) {
	for _, l := range st.Log {
		b := binary.AppendUvarint(sp.enc[:0], l.Seq)
		b = appendString(b, l.Kind)
		if l.Kind == "mirror" {
			s := sp.subs[l.SubagentID]
			if s == nil || l.Ref != s.items-1 {
				sp.err = fmt.Errorf("seq %d: the log mirrors item %d of %s, not the item its event opened", l.Seq, l.Ref, l.SubagentID)
				return
			}
			b = appendString(b, l.SubagentID)
			b = binary.AppendUvarint(b, uint64(s.hdr))
		} else {
			b = appendString(b, l.Text)
			b = appendString(b, l.Detail)
			b = appendString(b, l.SubagentID)
		}
		sp.enc = b
		put(sp, &sp.log, b)
		sp.logN++
	}
	clear(st.Log) // the strings go with the items
	st.Log = st.Log[:0]
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// put appends text to s's blocks.
func put[T string | []byte](sp *TextSpool, s *stream, text T) {
	s.total += int64(len(text))
	s.inMem += int64(len(text))
	for len(text) > 0 {
		n := len(s.blocks)
		if n == 0 || len(s.blocks[n-1]) == cap(s.blocks[n-1]) {
			var b []byte
			if k := len(sp.free); k > 0 {
				b, sp.free = sp.free[k-1][:0], sp.free[:k-1]
			} else {
				b = make([]byte, 0, memBlock)
			}
			sp.used += cap(b)
			s.blocks = append(s.blocks, b)
			n++
		}
		b := s.blocks[n-1]
		k := min(len(text), cap(b)-len(b))
		s.blocks[n-1] = append(b, text[:k]...)
		text = text[k:]
	}
}

// patch overwrites the bytes of s at [at, at+len(b)), wherever they are.
func (sp *TextSpool) patch(s *stream, at int64, b []byte) {
	for len(b) > 0 && sp.err == nil {
		n := 0
		if memAt := s.total - s.inMem; at >= memAt {
			k, off := int(at-memAt)/memBlock, int(at-memAt)%memBlock
			n = copy(s.blocks[k][off:], b)
		} else {
			seg := s.segs[s.segment(at)]
			n = int(min(int64(len(b)), seg.at+seg.n-at))
			if _, err := sp.file.WriteAt(b[:n], seg.off+at-seg.at); err != nil {
				sp.err = fmt.Errorf("keep transcript text in a temporary file: %w", err)
			}
		}
		b, at = b[n:], at+int64(n)
	}
}

// segment is the index of the segment holding byte at of the stream (in the file).
func (s *stream) segment(at int64) int {
	return sort.Search(len(s.segs), func(k int) bool { return s.segs[k].at+s.segs[k].n > at })
}

// spill moves the bytes held in memory to the file.
func (sp *TextSpool) spill() {
	if sp.file == nil {
		f, err := os.CreateTemp("", "summit-print-*")
		if err != nil {
			sp.err = fmt.Errorf("keep transcript text in a temporary file: %w", err)
			return
		}
		if runtime.GOOS != "windows" {
			os.Remove(f.Name()) // unnamed: nothing is left behind, whatever happens
		}
		sp.file = f
	}
	for _, s := range sp.all {
		if s.inMem == 0 {
			continue
		}
		if k := len(s.segs) - 1; k >= 0 && s.segs[k].off+s.segs[k].n == sp.size {
			s.segs[k].n += s.inMem // right after its previous part: one segment
		} else {
			s.segs = append(s.segs, segment{at: s.total - s.inMem, off: sp.size, n: s.inMem})
		}
		for _, b := range s.blocks {
			if _, err := sp.file.WriteAt(b, sp.size); err != nil {
				sp.err = fmt.Errorf("keep transcript text in a temporary file: %w", err)
				return
			}
			sp.size += int64(len(b))
			if len(sp.free) < sp.limit/memBlock {
				sp.free = append(sp.free, b)
			}
		}
		clear(s.blocks)
		s.blocks, s.inMem = s.blocks[:0], 0
	}
	sp.used = 0
}

// reader reads a stream from a place on, in pieces: a view of a memory block, or of its own
// block of the file (each reader has its own, so that two can read at once: the log and the
// items it mirrors).
type reader struct {
	sp       *TextSpool
	s        *stream
	pos      int64  // the place of buf[0] in the stream
	buf      []byte // what can be read at pos without another lookup
	cache    []byte // the file from cacheOff
	cacheOff int64
	scratch  []byte // bytes that were in two pieces
}

// seek places r at pos of stream s.
func (r *reader) seek(s *stream, pos int64) { r.s, r.pos, r.buf = s, pos, nil }

// fill makes buf hold the bytes at pos (at least one), and reports whether it could.
func (r *reader) fill() bool {
	if len(r.buf) > 0 {
		return true
	}
	s := r.s
	if r.pos >= s.total || r.sp.err != nil {
		return false
	}
	if memAt := s.total - s.inMem; r.pos >= memAt {
		k, off := int(r.pos-memAt)/memBlock, int(r.pos-memAt)%memBlock
		r.buf = s.blocks[k][off:]
		return true
	}
	seg := s.segs[s.segment(r.pos)]
	off, n := seg.off+r.pos-seg.at, seg.at+seg.n-r.pos // in the file; bytes left in the segment
	if off < r.cacheOff || off >= r.cacheOff+int64(len(r.cache)) {
		size := min(spoolBlock, r.sp.size-off)
		if int64(cap(r.cache)) < size {
			r.cache = make([]byte, spoolBlock)
		}
		r.cache, r.cacheOff = r.cache[:size], off
		if _, err := r.sp.file.ReadAt(r.cache, off); err != nil && err != io.EOF {
			r.sp.err = fmt.Errorf("read back transcript text: %w", err)
			r.cache = r.cache[:0]
			return false
		}
	}
	r.buf = r.cache[off-r.cacheOff:]
	r.buf = r.buf[:min(int64(len(r.buf)), n)]
	return true
}

// next returns up to n of the bytes at pos (none at the end), and moves past them.
func (r *reader) next(n int64) []byte {
	if !r.fill() {
		return nil
	}
	b := r.buf[:min(int64(len(r.buf)), n)]
	r.buf, r.pos = r.buf[len(b):], r.pos+int64(len(b))
	return b
}

// ReadByte is for binary.ReadUvarint.
func (r *reader) ReadByte() (byte, error) {
	b := r.next(1)
	if len(b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	return b[0], nil
}

// bytes returns the n bytes at pos, in a buffer the next call reuses.
func (r *reader) bytes(n uint64) ([]byte, error) {
	if n > uint64(r.s.total-r.pos) {
		return nil, io.ErrUnexpectedEOF
	}
	b := r.next(int64(n))
	if uint64(len(b)) == n {
		return b, nil // all in one piece: no copy
	}
	r.scratch = append(r.scratch[:0], b...)
	for uint64(len(r.scratch)) < n {
		b := r.next(int64(n) - int64(len(r.scratch)))
		if len(b) == 0 {
			return nil, io.ErrUnexpectedEOF
		}
		r.scratch = append(r.scratch, b...)
	}
	return r.scratch, nil
}

func (r *reader) string() (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	return string(b), err
}

// name is string for the short strings that repeat (tool names, log kinds): the spool keeps
// one copy of each of the first few hundred.
func (r *reader) name() (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	if err != nil || len(b) > 64 {
		return string(b), err
	}
	if s, ok := r.sp.names[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	if len(r.sp.names) < 256 {
		r.sp.names[s] = s
	}
	return s, nil
}

// text calls fn with the n bytes at pos, in pieces of at most a block, each ending with a
// whole rune (so each piece can be sanitized on its own).
func (r *reader) text(n int64, fn func(string)) {
	var carry []byte // the start of a rune the last piece cut
	for n > 0 {
		b := r.next(n)
		if len(b) == 0 {
			return
		}
		n -= int64(len(b))
		if len(carry) > 0 {
			b = append(carry, b...)
			carry = nil
		}
		if k := lastRuneStart(b); n > 0 && k >= 0 && !utf8.FullRune(b[k:]) {
			carry = append([]byte(nil), b[k:]...)
			b = b[:k]
		}
		fn(string(b))
	}
}

// lastRuneStart is the index of the last byte of b that is not a UTF-8 continuation byte,
// looking back no further than a rune's length (-1 if none).
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if !utf8.RuneStart(b[i]) {
			continue
		}
		return i
	}
	return -1
}

// item reads the header at r's place and returns the item, r placed at its text.
func (r *reader) item() (itemView, error) {
	k, err := r.ReadByte()
	if err != nil {
		return itemView{}, err
	}
	var v itemView
	switch {
	case int(k) < len(itemKinds):
		v.kind = itemKinds[k]
	case k == kindNamed:
		if v.kind, err = r.name(); err != nil {
			return v, err
		}
	default:
		return v, fmt.Errorf("kind %d", k)
	}
	flags, err := r.ReadByte()
	if err != nil {
		return v, err
	}
	v.isError = flags&flagError != 0
	if v.tool, err = r.name(); err != nil {
		return v, err
	}
	b, err := r.bytes(lenBytes)
	if err != nil {
		return v, err
	}
	v.n = int64(binary.LittleEndian.Uint64(b))
	if v.n > r.s.total-r.pos {
		return v, fmt.Errorf("text of %d bytes past the end", v.n)
	}
	v.r = r
	return v, nil
}

// prepare writes the length of every subagent's last item, before anything is read.
func (sp *TextSpool) prepare() {
	if sp.ready {
		return
	}
	sp.ready = true
	for _, s := range sp.subs {
		sp.closeItem(s)
	}
}

// items calls fn with each item of sa's transcript, in order.
func (sp *TextSpool) items(sa *session.Subagent, fn func(*itemView)) {
	s := sp.subs[sa.ID]
	if s == nil {
		return
	}
	r := &sp.rd
	r.seek(&s.stream, 0)
	for range s.items {
		v, err := r.item()
		if err != nil {
			sp.readErr(err)
			return
		}
		end := r.pos + v.n
		fn(&v)
		r.seek(&s.stream, end)
	}
}

// mirrored returns the item whose header is at hdr in the stream of subagent id.
func (sp *TextSpool) mirrored(id string, hdr int64) (itemView, error) {
	s := sp.subs[id]
	if s == nil {
		return itemView{}, fmt.Errorf("no transcript of %s", id)
	}
	sp.mirror.seek(&s.stream, hdr)
	return sp.mirror.item()
}

// logItems calls fn with each log item, in order; a mirror item's Ref is the place of its
// item's header.
func (sp *TextSpool) logItems(fn func(session.LogItem)) {
	r := &sp.rd
	r.seek(&sp.log, 0)
	for range sp.logN {
		l, err := r.logItem()
		if err != nil {
			sp.readErr(err)
			return
		}
		fn(l)
	}
}

func (r *reader) logItem() (l session.LogItem, err error) {
	if l.Seq, err = binary.ReadUvarint(r); err != nil {
		return l, err
	}
	if l.Kind, err = r.name(); err != nil {
		return l, err
	}
	if l.Kind == "mirror" {
		if l.SubagentID, err = r.name(); err != nil {
			return l, err
		}
		hdr, err := binary.ReadUvarint(r)
		l.Ref = int(hdr)
		return l, err
	}
	if l.Text, err = r.string(); err != nil {
		return l, err
	}
	if l.Detail, err = r.string(); err != nil {
		return l, err
	}
	l.SubagentID, err = r.name()
	return l, err
}

// readErr records a stream that does not read back as it was written (a file changed under
// the spool): the printing stops there and Print returns the error.
func (sp *TextSpool) readErr(err error) {
	if sp.err == nil {
		sp.err = fmt.Errorf("read back transcript text: %w", err)
	}
}

// Print writes what Print writes for the state st folded in full, taking its transcripts and
// its log from the spool. Nothing is folded after it.
func (sp *TextSpool) Print(w io.Writer, st *session.State) error {
	sp.prepare()
	if sp.err != nil {
		return sp.err
	}
	return printState(w, st, sp)
}

// Close removes the spool's file.
func (sp *TextSpool) Close() error {
	if sp.file == nil {
		return nil
	}
	err := sp.file.Close()
	if runtime.GOOS == "windows" {
		os.Remove(sp.file.Name())
	}
	sp.file = nil
	return err
}
