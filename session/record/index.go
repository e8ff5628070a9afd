package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"
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
// Entries hold no pointers (type and subagent id are small numbers into interned tables), and
// are packed: offset and ts as 32-bit deltas from a base kept every blockRows entries, a line's
// length as the distance to the next, seq as runs of consecutive numbers. So an index costs
// ~12 bytes an event (a 1 GB recording of 200-byte events: 60 MB) and nothing to the garbage
// collector.
type Index struct {
	rows  []indexRow
	bases []blockBase       // bases[i/blockRows] is the base of entry i's offset and ts
	exc   map[int]blockBase // entries whose offset or ts is too far from their base
	seqs  []seqRun          // ascending at; entry i's seq is in the last run at or before i
	// mapped is set while rows live outside the heap (see reserve); final once the index has
	// a finalizer to release them.
	mapped, final bool
	// A line's length is where the next entry starts, except for the last entry (lastN) and
	// those followed by a line without an entry (nexc).
	lastN   uint32
	lastOff int64 // the last entry's offset
	nexc    map[int]uint32
	types   []session.Type // interned types; rows refer to them by position
	subs    []string       // interned subagent ids; subs[0] is ""
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
	offd uint32 // offset - base offset, or excMark (then exc holds offset and ts)
	tsd  uint32 // ts - base ts, in microseconds
	typ  uint16
	sub  uint16
}

// blockBase is the offset and ts (unix microseconds) entries are stored relative to.
type blockBase struct {
	off int64
	ts  int64
}

// seqRun is a run of entries from at whose seqs count up by one from seq.
type seqRun struct {
	at  int
	seq uint64
}

const (
	blockRows = 256
	excMark   = 1<<32 - 1
)

// push appends an entry.
func (ix *Index) push(off int64, seq uint64, ts int64, n uint32, typ, sub uint16) {
	i := len(ix.rows)
	if i%blockRows == 0 {
		ix.bases = append(ix.bases, blockBase{off: off, ts: ts})
	}
	if i > 0 && ix.lastOff+int64(ix.lastN) != off {
		if ix.nexc == nil {
			ix.nexc = map[int]uint32{}
		}
		ix.nexc[i-1] = ix.lastN
	}
	ix.lastN, ix.lastOff = n, off
	b := &ix.bases[i/blockRows]
	r := indexRow{typ: typ, sub: sub}
	if do, dt := off-b.off, ts-b.ts; do >= 0 && do < excMark && dt >= 0 && dt < excMark {
		r.offd, r.tsd = uint32(do), uint32(dt)
	} else {
		r.offd = excMark
		if ix.exc == nil {
			ix.exc = map[int]blockBase{}
		}
		ix.exc[i] = blockBase{off: off, ts: ts}
	}
	if k := len(ix.seqs); k == 0 || seq != ix.seqs[k-1].seq+uint64(i-ix.seqs[k-1].at) {
		ix.seqs = append(ix.seqs, seqRun{at: i, seq: seq})
	}
	if len(ix.rows) == cap(ix.rows) {
		ix.reserve(max(2*cap(ix.rows), 1024))
	}
	ix.rows = append(ix.rows, r)
}

// reserve makes room for n entries in all. Rows live outside the Go heap where the system
// allows (see mapRows), released when the index is garbage.
func (ix *Index) reserve(n int) {
	if n <= cap(ix.rows) {
		return
	}
	rows := mapRows(n)
	mapped := rows != nil
	if !mapped {
		rows = make([]indexRow, 0, n)
	} else if !ix.final {
		ix.final = true
		runtime.SetFinalizer(ix, (*Index).freeRows)
	}
	rows = append(rows, ix.rows...)
	ix.freeRows()
	ix.rows, ix.mapped = rows, mapped
}

// freeRows releases the rows if they are mapped; the index has no entries after.
func (ix *Index) freeRows() {
	if ix.mapped {
		unmapRows(ix.rows)
	}
	ix.rows, ix.mapped = nil, false
}

// off and ts are entry i's offset and ts (unix microseconds).
func (ix *Index) off(i int) int64 {
	// (Rows may be mapped memory the finalizer releases: every read of one keeps ix alive.)
	defer runtime.KeepAlive(ix)
	if d := ix.rows[i].offd; d != excMark {
		return ix.bases[i/blockRows].off + int64(d)
	}
	return ix.exc[i].off
}

// n is entry i's line length, newline included.
func (ix *Index) n(i int) uint32 {
	if i == len(ix.rows)-1 {
		return ix.lastN
	}
	if len(ix.nexc) > 0 {
		if n, ok := ix.nexc[i]; ok {
			return n
		}
	}
	return uint32(ix.off(i+1) - ix.off(i))
}

func (ix *Index) ts(i int) int64 {
	defer runtime.KeepAlive(ix)
	if r := ix.rows[i]; r.offd != excMark {
		return ix.bases[i/blockRows].ts + int64(r.tsd)
	}
	return ix.exc[i].ts
}

func (ix *Index) seq(i int) uint64 {
	k := len(ix.seqs) - 1
	if k > 0 && ix.seqs[k].at > i {
		k = sort.Search(len(ix.seqs), func(k int) bool { return ix.seqs[k].at > i }) - 1
	}
	return ix.seqs[k].seq + uint64(i-ix.seqs[k].at)
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
	ix, err := buildIndexParallel(f, opts, sizeHint)
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
	pc                 prefixCache
	// The last few interned spellings: subagents interleave, so the last one alone often
	// misses, and a few string comparisons cost less than a map lookup.
	recentTypes, recentSubs recentIDs
}

// recentIDs is a small ring of interned strings and their positions.
type recentIDs struct {
	s    [8]string
	id   [8]uint16
	next int
}

func (r *recentIDs) find(b []byte) (uint16, bool) {
	for i := range r.s {
		if len(r.s[i]) == len(b) && r.s[i] == string(b) && (len(b) > 0 || r.id[i] != 0 || i < r.next) {
			return r.id[i], true
		}
	}
	return 0, false
}

func (r *recentIDs) put(s string, id uint16) {
	r.s[r.next%len(r.s)], r.id[r.next%len(r.s)] = s, id
	r.next++
}

// recentPlain is a small ring of plain strings a line prefix held (see cachedString).
type recentPlain struct {
	v    [8][]byte
	next int
}

// prefixCache remembers what the previous canonical line's prefix held: consecutive lines
// share their session id and the minute of their ts, and mostly their type and subagent id,
// so those are compared, not parsed again.
type prefixCache struct {
	session, typ, sub recentPlain // plain strings already checked
	tsHead            [16]byte
	minute            int64 // unix microseconds of tsHead's minute
	haveTS            bool
}

// parallelMin is the smallest file BuildIndexFile splits between two goroutines (a variable
// for tests).
var parallelMin int64 = 32 << 20

// buildIndexParallel indexes a file of size bytes in two halves at once (the machine summit
// is measured on has two cores), split at a line boundary near the middle, and joins them.
// The second half must be plain (no warning, no skipped, blank or torn line, no error): its
// line numbers are only known once the first half is done. Anything else, and small files,
// are indexed by one sequential pass, which is always exact.
func buildIndexParallel(f *os.File, opts ReadOptions, size int64) (*Index, error) {
	var first, second *Index
	seq := func() (*Index, error) {
		for _, h := range []*Index{first, second} {
			if h != nil {
				h.freeRows()
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return buildIndex(f, opts, defaultIndexChunk, size)
	}
	if size < parallelMin {
		return seq()
	}
	// The split: just after the first newline past the middle.
	probe := make([]byte, 1<<20)
	n, _ := f.ReadAt(probe, size/2)
	nl := bytes.IndexByte(probe[:n], '\n')
	if nl < 0 {
		return seq()
	}
	split := size/2 + int64(nl) + 1
	var secondErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		second, secondErr = buildIndexAt(io.NewSectionReader(f, split, size-split), opts, defaultIndexChunk, size-split, split)
	}()
	first, err := buildIndex(io.NewSectionReader(f, 0, split), opts, defaultIndexChunk, size)
	<-done
	if err != nil {
		return nil, err
	}
	if secondErr != nil || len(second.gaps) > 0 || second.Report.Torn || second.Report.Skipped > 0 ||
		len(second.Report.Warnings) > 0 || second.Report.WarningsDropped > 0 || first.Size != split {
		return seq()
	}
	// Join: the second half's types and subagent ids in the first's tables, its entries
	// re-based on the joined blocks.
	typeAt := map[session.Type]int{}
	for i, t := range first.types {
		typeAt[t] = i
	}
	subAt := map[string]int{}
	for i, id := range first.subs {
		subAt[id] = i
	}
	typs := make([]uint16, len(second.types))
	for i, t := range second.types {
		k, ok := typeAt[t]
		if !ok {
			if k = len(first.types); k > 0xffff {
				return seq()
			}
			first.types = append(first.types, t)
		}
		typs[i] = uint16(k)
	}
	subs := make([]uint16, len(second.subs))
	for i, id := range second.subs {
		k, ok := subAt[id]
		if !ok {
			if k = len(first.subs); k > 0xffff {
				return seq()
			}
			first.subs = append(first.subs, id)
		}
		subs[i] = uint16(k)
	}
	if need := len(first.rows) + len(second.rows); cap(first.rows) < need {
		first.reserve(need)
	}
	for i := range second.rows {
		r := second.row(i)
		first.push(second.off(i), second.seq(i), second.ts(i), second.n(i), typs[r.typ], subs[r.sub])
	}
	first.Size = second.Size
	second.freeRows()
	first.Report.Lines += second.Report.Lines
	return first, nil
}

func buildIndex(r io.Reader, opts ReadOptions, chunk int, sizeHint int64) (*Index, error) {
	return buildIndexAt(r, opts, chunk, sizeHint, 0)
}

// buildIndexAt indexes lines read from r, which starts at offset start of the file.
func buildIndexAt(r io.Reader, opts ReadOptions, chunk int, sizeHint int64, start int64) (*Index, error) {
	ix := &Index{subs: []string{""}}
	b := &indexBuilder{ix: ix, opts: opts, typeIDs: map[string]uint16{}, subIDs: map[string]uint16{"": 0}}
	buf := make([]byte, min(chunk, MaxEventLine+1))
	base := start     // file offset of buf[0]
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
		if sizeHint > 0 && base > start {
			// After the first chunk the line density is known: size the entries for the
			// whole file once (5% spare) instead of doubling, which would copy them and
			// leave up to half the capacity untouched but allocated.
			want := int(float64(len(ix.rows))*float64(sizeHint)/float64(base-start)*1.05) + 64
			if want > cap(ix.rows) {
				ix.reserve(want)
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
	if pf, ok := parsePrefixCached(line, &b.pc); ok {
		ti, si, err := b.intern(pf.typ, pf.sub)
		if err != nil {
			return err
		}
		if !b.known[ti] {
			ix.Report.warnf("line %d: unknown event type %q (kept, skipped)", b.line, string(pf.typ))
		}
		ix.push(off, pf.seq, pf.ts, uint32(len(line)), ti, si)
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
		ix.push(off, ev.Seq, ev.TS.UnixMicro(), uint32(len(line)), ti, si)
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
		id, ok := b.recentTypes.find(typ)
		if !ok {
			id, ok = b.typeIDs[string(typ)]
		}
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
		b.recentTypes.put(b.lastTyp, id)
	}
	if !b.haveLast || string(sub) != b.lastSub {
		id, ok := b.recentSubs.find(sub)
		if !ok {
			id, ok = b.subIDs[string(sub)]
		}
		if !ok {
			if len(ix.subs) > 0xffff {
				return 0, 0, &LineError{Line: b.line, Err: errors.New("more than 65535 distinct subagent ids")}
			}
			id = uint16(len(ix.subs))
			ix.subs = append(ix.subs, string(sub))
			b.subIDs[ix.subs[id]] = id
		}
		b.lastSub, b.lastSubI = ix.subs[id], id
		b.recentSubs.put(b.lastSub, id)
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
func parsePrefix(line []byte) (pf prefix, ok bool) { return parsePrefixCached(line, nil) }

// cachedString is plainString with c (previous plain strings at the same place) tried first.
func cachedString(l []byte, p int, c *recentPlain) ([]byte, int, bool) {
	if c != nil {
		for _, v := range c.v {
			if n := len(v); n > 0 && len(l) > p+n && l[p+n] == '"' && string(l[p:p+n]) == string(v) {
				return l[p : p+n], p + n + 1, true
			}
		}
	}
	s, q, ok := plainString(l, p)
	if ok && c != nil && len(s) > 0 && len(s) <= 64 {
		k := c.next % len(c.v)
		c.v[k] = append(c.v[k][:0], s...)
		c.next++
	}
	return s, q, ok
}

// parsePrefixCached is parsePrefix with a cache of the previous line's prefix (nil: none).
func parsePrefixCached(line []byte, c *prefixCache) (pf prefix, ok bool) {
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
	if tb := l[p : p+len(session.TimeLayout)]; c != nil && c.haveTS && string(tb[:16]) == string(c.tsHead[:]) {
		// Same minute as the previous line: only seconds and microseconds to read.
		if tb[16] != ':' || tb[19] != '.' || tb[26] != 'Z' {
			return pf, false
		}
		var v int64
		for i, ch := range tb[17:26] {
			if i == 2 {
				continue // the '.'
			}
			if ch < '0' || ch > '9' {
				return pf, false
			}
			v = v*10 + int64(ch-'0')
		}
		if v >= 60_000_000 {
			return pf, false
		}
		pf.ts = c.minute + v
	} else {
		if pf.ts, ok = parseTS(tb); !ok {
			return pf, false
		}
		if c != nil {
			sec := int64(tb[17]-'0')*10 + int64(tb[18]-'0')
			var us int64
			for _, ch := range tb[20:26] {
				us = us*10 + int64(ch-'0')
			}
			copy(c.tsHead[:], tb[:16])
			c.minute, c.haveTS = pf.ts-sec*1_000_000-us, true
		}
	}
	p += len(session.TimeLayout)
	if !bytes.HasPrefix(l[p:], []byte(pfxSession)) {
		return pf, false
	}
	var cs, ct, cb *recentPlain
	if c != nil {
		cs, ct, cb = &c.session, &c.typ, &c.sub
	}
	if pf.session, p, ok = cachedString(l, p+len(pfxSession), cs); !ok {
		return pf, false
	}
	if !bytes.HasPrefix(l[p:], []byte(pfxType)) {
		return pf, false
	}
	if pf.typ, p, ok = cachedString(l, p+len(pfxType), ct); !ok || len(pf.typ) == 0 {
		return pf, false
	}
	if bytes.HasPrefix(l[p:], []byte(pfxSub)) {
		if pf.sub, p, ok = cachedString(l, p+len(pfxSub), cb); !ok || len(pf.sub) == 0 {
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
func decodeCanonical(line []byte) (session.Event, bool) { return decodeCanonicalCached(line, nil) }

// decodeCanonicalCached is decodeCanonical with a cache of the previous line's prefix.
func decodeCanonicalCached(line []byte, c *prefixCache) (session.Event, bool) {
	pf, ok := parsePrefixCached(line, c)
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
	r := ix.row(i)
	return IndexEntry{
		Offset:     ix.off(i),
		Len:        int(ix.n(i)),
		Line:       ix.lineOf(i),
		Seq:        ix.seq(i),
		TS:         time.UnixMicro(ix.ts(i)).UTC(),
		Type:       ix.types[r.typ],
		SubagentID: ix.subs[r.sub],
	}
}

// Seq, Type and SubagentID are the cheap single-field forms of Entry, for loops over all
// entries.
func (ix *Index) Seq(i int) uint64        { return ix.seq(i) }
func (ix *Index) Type(i int) session.Type { return ix.types[ix.row(i).typ] }
func (ix *Index) SubagentID(i int) string { return ix.subs[ix.row(i).sub] }

// row is a copy of row i.
func (ix *Index) row(i int) indexRow {
	defer runtime.KeepAlive(ix)
	return ix.rows[i]
}
func (ix *Index) TS(i int) time.Time { return time.UnixMicro(ix.ts(i)).UTC() }

// Loc is where entry i's line lies: its offset and length, newline included.
func (ix *Index) Loc(i int) (int64, int) { return ix.off(i), int(ix.n(i)) }

// Positions returns the positions of the entries of the given types, in order.
func (ix *Index) Positions(types ...session.Type) []int {
	want := make([]bool, len(ix.types))
	some := false
	for k, t := range ix.types {
		for _, w := range types {
			if t == w {
				want[k], some = true, true
			}
		}
	}
	var out []int
	if !some {
		return out
	}
	for i := range ix.rows {
		if want[ix.row(i).typ] {
			out = append(out, i)
		}
	}
	return out
}

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
	i := sort.Search(len(ix.rows), func(i int) bool { return ix.seq(i) >= seq })
	return i, i < len(ix.rows) && ix.seq(i) == seq
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
		if int(ix.row(i).sub) == id {
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

// readBufs are ReadRange's read buffers, up to maxPooledRead bytes.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledRead = 4 << 20

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
	start := ix.off(from)
	size := ix.off(to-1) + int64(ix.n(to-1)) - start
	// The lines are read into a pooled buffer: decoded events never point into it (the
	// decoder copies every string), and a replay reads the whole recording this way.
	var buf []byte
	if size <= maxPooledRead {
		bp := readBufs.Get().(*[]byte)
		defer readBufs.Put(bp)
		if int64(cap(*bp)) < size {
			*bp = make([]byte, size)
		}
		buf = (*bp)[:size]
	} else {
		buf = make([]byte, size)
	}
	if n, err := ra.ReadAt(buf, start); n < len(buf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("index: read events at offset %d: %w", start, err)
	}
	evs := make([]session.Event, 0, to-from)
	var pc prefixCache
	for i := from; i < to; i++ {
		r := ix.row(i)
		off := ix.off(i)
		line := buf[off-start : off-start+int64(ix.n(i))]
		// DecodeLine, with the prefixes of consecutive lines read faster.
		ev, ok := decodeCanonicalCached(trimEOL(line), &pc)
		var err error
		if !ok {
			ev, err = DecodeLine(line)
		}
		if err != nil {
			return evs, &LineError{Line: ix.lineOf(i), Err: err}
		}
		if seq := ix.seq(i); ev.Seq != seq || ev.Type != ix.types[r.typ] || ev.SubagentID != ix.subs[r.sub] {
			return evs, &LineError{Line: ix.lineOf(i), Err: fmt.Errorf("event #%d %s does not match the index (#%d %s): the file changed since it was indexed", ev.Seq, ev.Type, seq, ix.types[r.typ])}
		}
		evs = append(evs, ev)
	}
	return evs, nil
}
