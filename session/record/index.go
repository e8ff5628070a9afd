package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// Index locates every event of a recording without decoding it: offset and length of its
// line, seq, ts, type and subagent_id, all read from the canonical line prefix
//
//	{"v":1,"seq":N,"ts":"2026-11-22T10:00:00.123456Z","session_id":"…","type":"…","subagent_id":"…","data":{
//
// by hand. A line whose prefix is not in that exact form (other key order, spaces, escapes in
// an id, another ts layout) is decoded with DecodeLine instead: correct, only slower. A viewer
// builds the index once, then decodes only what it shows (ReadEvent, ReadRange).
//
// Only the prefix is checked: a line whose data is malformed is indexed, and its error shows
// when it is read. Lines are classified like the Reader does: blank lines are skipped with a
// warning, a torn last line is left out and flagged (Torn), a line of a newer schema version
// fails the whole build, other malformed lines fail it unless Lenient (then they are skipped).
//
// Entries hold no pointers (type and subagent id are small numbers into interned tables), so
// a 200 MB recording's index costs ~32 bytes an event and nothing to the garbage collector.
type Index struct {
	rows  []indexRow
	types []session.Type // interned types; rows refer to them by position
	subs  []string       // interned subagent ids; subs[0] is ""
	// gaps are the line numbers (ascending) that have no entry: blank and skipped lines.
	gaps []int

	// Size is the number of bytes covered: the offset just after the last complete line (or
	// of the accepted unterminated last line). A torn last line starts here.
	Size   int64
	Report ReadReport
}

// IndexEntry is one event of an Index.
type IndexEntry struct {
	Offset     int64
	Len        int // bytes of the line, newline included
	Line       int // 1-based line number in the file
	Seq        uint64
	TS         time.Time // UTC, microseconds
	Type       session.Type
	SubagentID string
}

type indexRow struct {
	off int64
	seq uint64
	ts  int64 // unix microseconds
	n   uint32
	typ uint16
	sub uint16
}

// defaultIndexChunk is the read size of BuildIndex: big enough that read syscalls cost nothing
// next to the scan, small enough to stay in L2/L3 cache while the prefix parser follows the
// newline search.
const defaultIndexChunk = 1 << 20

// BuildIndex indexes the recording read from r, strictly (a malformed line is an error).
func BuildIndex(r io.Reader) (*Index, error) {
	return buildIndex(r, ReadOptions{}, defaultIndexChunk, 0)
}

// BuildIndexWith is BuildIndex with options (Lenient).
func BuildIndexWith(r io.Reader, opts ReadOptions) (*Index, error) {
	return buildIndex(r, opts, defaultIndexChunk, 0)
}

// BuildIndexFile indexes the recording at path.
func BuildIndexFile(path string, opts ReadOptions) (*Index, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var sizeHint int64
	if st, err := f.Stat(); err == nil {
		sizeHint = st.Size()
	}
	ix, err := buildIndex(f, opts, defaultIndexChunk, sizeHint)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ix, nil
}

// indexBuilder carries the interning state of one build.
type indexBuilder struct {
	ix              *Index
	opts            ReadOptions
	line            int
	typeIDs, subIDs map[string]uint16
	known           []bool // known[i]: types[i] is a schema v1 type
	// The most recent interned spellings: consecutive lines mostly repeat them, and a string
	// comparison is cheaper than a map lookup.
	lastTyp, lastSub   string
	lastTypI, lastSubI uint16
	haveLast           bool
}

func buildIndex(r io.Reader, opts ReadOptions, chunk int, sizeHint int64) (*Index, error) {
	ix := &Index{subs: []string{""}}
	b := &indexBuilder{ix: ix, opts: opts, typeIDs: map[string]uint16{}, subIDs: map[string]uint16{"": 0}}
	buf := make([]byte, min(chunk, MaxEventLine+1))
	var base int64    // file offset of buf[0]
	n := 0            // valid bytes in buf
	scan := 0         // buf[:scan] holds no newline (the start of a line spanning a chunk boundary)
	skipping := false // reading past a line over MaxEventLine (lenient), up to its newline
	for {
		m, rerr := r.Read(buf[n:])
		n += m
		if skipping {
			i := bytes.IndexByte(buf[:n], '\n')
			if i < 0 {
				base, n = base+int64(n), 0
			} else {
				copy(buf, buf[i+1:n])
				base, n = base+int64(i+1), n-(i+1)
				ix.Size, skipping = base, false
			}
			scan = 0
		}
		pos := 0
		for !skipping {
			i := bytes.IndexByte(buf[scan:n], '\n')
			if i < 0 {
				break
			}
			end := scan + i + 1
			if err := b.add(buf[pos:end], base+int64(pos), true); err != nil {
				return nil, err
			}
			pos, scan = end, end
		}
		// Keep only the unfinished line: move it to the front (the only copying of line
		// bytes), and grow the buffer if that line fills it.
		if pos > 0 {
			copy(buf, buf[pos:n])
			base += int64(pos)
			n -= pos
		}
		scan = n
		if n > MaxEventLine {
			// The unfinished line is over the cap already: stop here, or (lenient) skip it
			// and read past the rest of it without keeping it. The buffer never grows past
			// the cap and its newline.
			if err := b.tooLong(); err != nil {
				return nil, err
			}
			base, n, scan, skipping = base+int64(n), 0, 0, true
		}
		if sizeHint > 0 && base > 0 {
			// After the first chunk the line density is known: size the entries for the
			// whole file once (5% spare) instead of doubling, which would copy them and
			// leave up to half the capacity untouched but allocated.
			want := int(float64(len(ix.rows))*float64(sizeHint)/float64(base)*1.05) + 64
			if want > cap(ix.rows) {
				ix.rows = append(make([]indexRow, 0, want), ix.rows...)
			}
			sizeHint = 0
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, rerr
		}
		if n == len(buf) {
			grown := make([]byte, min(2*len(buf), MaxEventLine+1))
			copy(grown, buf[:n])
			buf = grown
		}
	}
	if !skipping {
		ix.Size = base
	}
	if n > 0 {
		if err := b.add(buf[:n], base, false); err != nil {
			return nil, err
		}
	}
	ix.Report.Lines = b.line
	return ix, nil
}

// tooLong handles the next line, which is over MaxEventLine: an error, or with Lenient a
// skipped line.
func (b *indexBuilder) tooLong() error {
	b.line++
	le := &LineError{Line: b.line, Err: ErrLineTooLong}
	if !b.opts.Lenient {
		return le
	}
	b.ix.Report.Skipped++
	b.ix.Report.warnf("%v (skipped)", le)
	b.ix.gaps = append(b.ix.gaps, b.line)
	return nil
}

// add indexes one line found at off. complete says it ends in a newline.
func (b *indexBuilder) add(line []byte, off int64, complete bool) error {
	// buildIndex has refused or skipped every line over MaxEventLine, so len(line) fits the
	// row's uint32.
	b.line++
	ix := b.ix
	if pf, ok := parsePrefix(line); ok {
		ti, si, err := b.intern(pf.typ, pf.sub)
		if err != nil {
			return err
		}
		if !b.known[ti] {
			ix.Report.warnf("line %d: unknown event type %q (kept, skipped)", b.line, string(pf.typ))
		}
		ix.rows = append(ix.rows, indexRow{off: off, seq: pf.seq, ts: pf.ts, n: uint32(len(line)), typ: ti, sub: si})
		ix.Size = off + int64(len(line))
		return nil
	}
	if isBlank(line) {
		ix.Report.warnf("line %d: blank line, skipped", b.line)
		ix.gaps = append(ix.gaps, b.line)
		ix.Size = off + int64(len(line))
		return nil
	}
	// Not canonical: the slow, exact path.
	ev, err := DecodeLine(line)
	switch {
	case err == nil:
		if u, ok := ev.Data.(session.Unknown); ok {
			ix.Report.warnf("line %d: unknown event type %q (kept, skipped)", b.line, string(u.Name))
		}
		ti, si, err := b.intern([]byte(ev.Type), []byte(ev.SubagentID))
		if err != nil {
			return err
		}
		ix.rows = append(ix.rows, indexRow{off: off, seq: ev.Seq, ts: ev.TS.UnixMicro(), n: uint32(len(line)), typ: ti, sub: si})
		ix.Size = off + int64(len(line))
		return nil
	case errors.As(err, new(*VersionError)):
		return &LineError{Line: b.line, Err: err}
	case !complete:
		ix.Report.Torn = true
		ix.Report.warnf("line %d: torn last line (crash mid-write?), skipped", b.line)
		return nil
	case !b.opts.Lenient:
		return &LineError{Line: b.line, Err: err}
	}
	le := &LineError{Line: b.line, Err: err}
	ix.Report.Skipped++
	ix.Report.warnf("%v (skipped)", le)
	ix.gaps = append(ix.gaps, b.line)
	ix.Size = off + int64(len(line))
	return nil
}

// intern returns the table positions of a type and a subagent id, adding new ones.
func (b *indexBuilder) intern(typ, sub []byte) (uint16, uint16, error) {
	ix := b.ix
	if !b.haveLast || string(typ) != b.lastTyp {
		id, ok := b.typeIDs[string(typ)]
		if !ok {
			if len(ix.types) > 0xffff {
				return 0, 0, &LineError{Line: b.line, Err: errors.New("more than 65536 distinct event types")}
			}
			id = uint16(len(ix.types))
			ix.types = append(ix.types, session.Type(typ))
			b.known = append(b.known, ix.types[id].Known())
			b.typeIDs[string(ix.types[id])] = id
		}
		b.lastTyp, b.lastTypI = string(ix.types[id]), id
	}
	if !b.haveLast || string(sub) != b.lastSub {
		id, ok := b.subIDs[string(sub)]
		if !ok {
			if len(ix.subs) > 0xffff {
				return 0, 0, &LineError{Line: b.line, Err: errors.New("more than 65535 distinct subagent ids")}
			}
			id = uint16(len(ix.subs))
			ix.subs = append(ix.subs, string(sub))
			b.subIDs[ix.subs[id]] = id
		}
		b.lastSub, b.lastSubI = ix.subs[id], id
	}
	b.haveLast = true
	return b.lastTypI, b.lastSubI, nil
}

const (
	pfxHead    = `{"v":1,"seq":`
	pfxTS      = `,"ts":"`
	pfxSession = `","session_id":"`
	pfxType    = `,"type":"`
	pfxSub     = `,"subagent_id":"`
	pfxData    = `,"data":{`
)

// prefix is the envelope of a canonical line, read by hand. The byte slices point into the
// line.
type prefix struct {
	seq            uint64
	ts             int64 // unix microseconds
	session        []byte
	typ, sub       []byte
	data, dataEnd  int // line[data:dataEnd] is the data object, if the line is well-formed
	lineEndTrimmed int
}

// parsePrefix reads the envelope of a line in canonical form:
//
//	{"v":1,"seq":N,"ts":"2006-01-02T15:04:05.000000Z","session_id":"…","type":"…"[,"subagent_id":"…"],"data":{…}}
//
// with every string plain printable ASCII (no escapes). ok is false for anything else,
// including a line that does not end "}}": then a key may follow data, and only a full decode
// can tell. It checks the envelope only; data[data:dataEnd] is data only if the line is valid.
func parsePrefix(line []byte) (pf prefix, ok bool) {
	end := len(line)
	if end > 0 && line[end-1] == '\n' {
		end--
		if end > 0 && line[end-1] == '\r' {
			end--
		}
	}
	if end < 2 || line[end-1] != '}' || line[end-2] != '}' {
		return pf, false
	}
	l := line[:end]
	if !bytes.HasPrefix(l, []byte(pfxHead)) {
		return pf, false
	}
	p := len(pfxHead)
	// seq: 1..19 digits without a leading zero, so it fits in uint64 and is valid JSON.
	q := p
	for q < len(l) && q-p < 20 && l[q] >= '0' && l[q] <= '9' {
		pf.seq = pf.seq*10 + uint64(l[q]-'0')
		q++
	}
	if q == p || q-p > 19 || l[p] == '0' {
		return pf, false
	}
	p = q
	if !bytes.HasPrefix(l[p:], []byte(pfxTS)) || len(l)-p-len(pfxTS) < len(session.TimeLayout) {
		return pf, false
	}
	p += len(pfxTS)
	if pf.ts, ok = parseTS(l[p : p+len(session.TimeLayout)]); !ok {
		return pf, false
	}
	p += len(session.TimeLayout)
	if !bytes.HasPrefix(l[p:], []byte(pfxSession)) {
		return pf, false
	}
	if pf.session, p, ok = plainString(l, p+len(pfxSession)); !ok {
		return pf, false
	}
	if !bytes.HasPrefix(l[p:], []byte(pfxType)) {
		return pf, false
	}
	if pf.typ, p, ok = plainString(l, p+len(pfxType)); !ok || len(pf.typ) == 0 {
		return pf, false
	}
	if bytes.HasPrefix(l[p:], []byte(pfxSub)) {
		if pf.sub, p, ok = plainString(l, p+len(pfxSub)); !ok || len(pf.sub) == 0 {
			return pf, false
		}
	}
	if !bytes.HasPrefix(l[p:], []byte(pfxData)) {
		return pf, false
	}
	pf.data, pf.dataEnd, pf.lineEndTrimmed = p+len(pfxData)-1, end-1, end
	return pf, true
}

// plainString returns the contents of the string that starts at p (just after its opening
// quote) and the position after its closing quote, if it is ASCII without escapes or controls,
// which is what ids and type names are; then its bytes are its value. Anything else is left to
// the full decoder, which unescapes and replaces invalid UTF-8.
func plainString(l []byte, p int) ([]byte, int, bool) {
	q := bytes.IndexByte(l[p:], '"')
	if q < 0 {
		return nil, 0, false
	}
	s := l[p : p+q]
	// Eight bytes at a time: no byte ≥ 0x80, < 0x20, or '\\'.
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		bs := x ^ (lo * '\\')
		if (x|(x-lo*0x20)|(bs-lo)&^bs)&hi != 0 {
			return nil, 0, false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '\\' || c >= 0x80 {
			return nil, 0, false
		}
	}
	return s, p + q + 1, true
}

// knownTypes maps a type's spelling to its constant, so decoding a known type allocates no
// string for it.
var knownTypes = func() map[string]session.Type {
	m := make(map[string]session.Type, len(session.Decoders))
	for t := range session.Decoders {
		m[string(t)] = t
	}
	return m
}()

// idCache hands out the strings of recently decoded ids, so decoding does not allocate the same
// session id and subagent ids for every line of a recording (it has one session id and a
// handful of subagent ids). It is safe for concurrent use; a collision only costs an
// allocation.
type idCache [64]atomic.Pointer[string]

var decodedIDs idCache

func (c *idCache) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 64 {
		return string(b)
	}
	h := uint(len(b))
	for _, x := range b {
		h = h*31 + uint(x)
	}
	slot := &c[h%uint(len(c))]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}

// decodeCanonical is DecodeLine's fast path for a line in canonical form (see parsePrefix):
// the envelope is read by hand and only data goes through the JSON decoder, once. It returns
// exactly what the general path returns for the same line, or ok false (the general path then
// decides, errors included): data must decode as one complete JSON value, so the whole line is
// valid JSON with the envelope keys once each.
func decodeCanonical(line []byte) (session.Event, bool) {
	pf, ok := parsePrefix(line)
	if !ok {
		return session.Event{}, false
	}
	raw := line[pf.data:pf.dataEnd]
	ev := session.Event{V: 1, Seq: pf.seq, TS: time.UnixMicro(pf.ts).UTC(), SessionID: decodedIDs.get(pf.session), SubagentID: decodedIDs.get(pf.sub)}
	t, known := knownTypes[string(pf.typ)]
	if !known {
		if !json.Valid(raw) {
			return session.Event{}, false
		}
		ev.Type = session.Type(pf.typ)
		ev.Data = session.Unknown{Name: ev.Type, Raw: append([]byte(nil), raw...)}
		return ev, true
	}
	ev.Type = t
	var err error
	if ev.Data, err = session.Decoders[t](raw); err != nil {
		return session.Event{}, false
	}
	return ev, true
}

// parseTS parses the exact TimeLayout "2006-01-02T15:04:05.000000Z" into unix microseconds,
// with the range checks time.Parse makes. ok is false for anything else.
func parseTS(b []byte) (int64, bool) {
	if b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[19] != '.' || b[26] != 'Z' {
		return 0, false
	}
	num := func(i, n int) (int64, bool) {
		var v int64
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	s, ok6 := num(17, 2)
	us, ok7 := num(20, 6)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) ||
		mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) || h > 23 || mi > 59 || s > 59 {
		return 0, false
	}
	// Days from the civil date (H. Hinnant's algorithm), then seconds.
	yy := y
	if mo <= 2 {
		yy--
	}
	era := yy / 400
	if yy < 0 { // floor division: year 0's January and February belong to era -1
		era = (yy - 399) / 400
	}
	yoe := yy - era*400
	mp := (mo + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	days := era*146097 + doe - 719468
	return ((days*24+h)*60+mi)*60_000_000 + s*1_000_000 + us, true
}

func daysIn(m, y int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// Len is the number of events indexed.
func (ix *Index) Len() int { return len(ix.rows) }

// Entry returns entry i (0 ≤ i < Len). It does not allocate.
func (ix *Index) Entry(i int) IndexEntry {
	r := &ix.rows[i]
	return IndexEntry{
		Offset:     r.off,
		Len:        int(r.n),
		Line:       ix.lineOf(i),
		Seq:        r.seq,
		TS:         time.UnixMicro(r.ts).UTC(),
		Type:       ix.types[r.typ],
		SubagentID: ix.subs[r.sub],
	}
}

// Seq, Type and SubagentID are the cheap single-field forms of Entry, for loops over all
// entries.
func (ix *Index) Seq(i int) uint64        { return ix.rows[i].seq }
func (ix *Index) Type(i int) session.Type { return ix.types[ix.rows[i].typ] }
func (ix *Index) SubagentID(i int) string { return ix.subs[ix.rows[i].sub] }
func (ix *Index) TS(i int) time.Time      { return time.UnixMicro(ix.rows[i].ts).UTC() }

// lineOf is entry i's line number: i+1 plus the lines before it that have no entry.
func (ix *Index) lineOf(i int) int {
	// Gap j has gaps[j]-1-j entries before it, a non-decreasing count.
	k := sort.Search(len(ix.gaps), func(j int) bool { return ix.gaps[j]-1-j > i })
	return i + 1 + k
}

// Find returns the position of the entry with the given seq, or the position of the first
// entry with a larger seq (Len when none) and false. Seqs of a recording ascend (they are
// gap-free), which the binary search relies on.
func (ix *Index) Find(seq uint64) (int, bool) {
	i := sort.Search(len(ix.rows), func(i int) bool { return ix.rows[i].seq >= seq })
	return i, i < len(ix.rows) && ix.rows[i].seq == seq
}

// Filter returns the positions of the entries about one subagent, in order (subagentID ""
// selects the session and convergence events).
func (ix *Index) Filter(subagentID string) []int {
	id := -1
	for i, s := range ix.subs {
		if s == subagentID {
			id = i
			break
		}
	}
	var out []int
	if id < 0 {
		return out
	}
	for i := range ix.rows {
		if int(ix.rows[i].sub) == id {
			out = append(out, i)
		}
	}
	return out
}

// SubagentIDs lists the subagent ids of the recording in order of first appearance.
func (ix *Index) SubagentIDs() []string { return append([]string(nil), ix.subs[1:]...) }

// ReadEvent reads and decodes entry i from ra, the recording the index was built from.
func (ix *Index) ReadEvent(ra io.ReaderAt, i int) (session.Event, error) {
	evs, err := ix.ReadRange(ra, i, i+1)
	if err != nil {
		return session.Event{}, err
	}
	return evs[0], nil
}

// ReadRange reads and decodes entries [from, to) with one read when they are contiguous in
// the file (they are unless blank or skipped lines sit between them). Each decoded event is
// checked against its entry, so reading a file other than the indexed one fails rather than
// showing wrong events.
func (ix *Index) ReadRange(ra io.ReaderAt, from, to int) ([]session.Event, error) {
	if from < 0 || to > len(ix.rows) || from > to {
		return nil, fmt.Errorf("index: range [%d,%d) out of [0,%d)", from, to, len(ix.rows))
	}
	if from == to {
		return nil, nil
	}
	start := ix.rows[from].off
	last := &ix.rows[to-1]
	buf := make([]byte, last.off+int64(last.n)-start)
	if n, err := ra.ReadAt(buf, start); n < len(buf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("index: read events at offset %d: %w", start, err)
	}
	evs := make([]session.Event, 0, to-from)
	for i := from; i < to; i++ {
		r := &ix.rows[i]
		line := buf[r.off-start : r.off-start+int64(r.n)]
		ev, err := DecodeLine(line)
		if err != nil {
			return evs, &LineError{Line: ix.lineOf(i), Err: err}
		}
		if ev.Seq != r.seq || ev.Type != ix.types[r.typ] || ev.SubagentID != ix.subs[r.sub] {
			return evs, &LineError{Line: ix.lineOf(i), Err: fmt.Errorf("event #%d %s does not match the index (#%d %s): the file changed since it was indexed", ev.Seq, ev.Type, r.seq, ix.types[r.typ])}
		}
		evs = append(evs, ev)
	}
	return evs, nil
}
