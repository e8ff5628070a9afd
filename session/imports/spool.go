package imports

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"time"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// The spool holds the events of a session being imported, so that memory does not grow with
// the source: an agent's stream keeps, per event, only its time and where the event lies in
// the spool (16 bytes), and the recording is written by merging the agents' streams back
// out of it (see sess.build).
//
// The spool is one unlinked temporary file: nothing is left behind whatever happens to the
// process. A record is uvarint(len) then len bytes: a kind byte and the event's fields,
// strings as uvarint(len) + bytes, the tool arguments as JSON (or, kind 'R', the source's raw
// tool input, decoded by rawArgs only when the event is written). Only the five kinds of
// event the readers add are spooled; any other stays in memory.

// noTime is the time of an event whose source line has none.
const noTime = math.MinInt64

// micros is t in Unix microseconds, the precision a recording keeps; noTime for the zero time.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return noTime
	}
	return t.UnixMicro()
}

// fromMicros is the time micros returned.
func fromMicros(us int64) time.Time {
	if us == noTime {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

const (
	spTranscript = 'T'
	spToolRaw    = 'R'
	spNote       = 'U'
	spRequested  = 'Q'
	spGranted    = 'G'
	spDenied     = 'D'
	spBlob       = 'B'
)

type spool struct {
	f    *os.File
	wb   []byte // records not yet written to f; wb[0] is at offset n-len(wb)
	n    int64  // bytes spooled
	buf  []byte
	mem  []session.Data // events that are not spooled; referenced by offset -(i+1)
	err  error
	seed maphash.Seed
}

func newSpool() *spool { return &spool{seed: maphash.MakeSeed()} }

// hash is the key the readers keep for an id they only look up (uuids, call and message
// ids): 8 bytes, and it does not keep the decoded line the id's string points into alive.
func (sp *spool) hash(s string) uint64 { return maphash.String(sp.seed, s) }

func (sp *spool) open() error {
	if sp.f != nil || sp.err != nil {
		return sp.err
	}
	f, err := os.CreateTemp("", "summit-import-*.spool")
	if err != nil {
		sp.err = fmt.Errorf("import spool: %w", err)
		return sp.err
	}
	// Unlinked at once: the open file is all that is needed, and nothing outlives the process.
	if os.Remove(f.Name()) != nil {
		defer os.Remove(f.Name())
	}
	sp.f = f
	return nil
}

// close releases the spool.
func (sp *spool) close() {
	if sp.f != nil {
		sp.f.Close()
		os.Remove(sp.f.Name())
		sp.f, sp.wb = nil, nil
	}
}

func (sp *spool) str(s string) {
	sp.buf = binary.AppendUvarint(sp.buf, uint64(len(s)))
	sp.buf = append(sp.buf, s...)
}

func (sp *spool) bytes(b []byte, isNil bool) {
	if isNil {
		sp.buf = binary.AppendUvarint(sp.buf, 0)
		return
	}
	sp.buf = binary.AppendUvarint(sp.buf, uint64(len(b))+1)
	sp.buf = append(sp.buf, b...)
}

func (sp *spool) args(m map[string]any) {
	if m == nil {
		sp.bytes(nil, true)
		return
	}
	b, err := json.Marshal(m)
	if err != nil {
		// Not expected (the maps hold decoded JSON); kept in memory rather than lost.
		panic(err)
	}
	sp.bytes(b, false)
}

// put spools d and returns its offset.
func (sp *spool) put(d session.Data) int64 {
	sp.buf = sp.buf[:0]
	switch d := d.(type) {
	case session.TranscriptEvent:
		sp.buf = append(sp.buf, spTranscript)
		sp.str(d.EventType)
		sp.str(d.Text)
		sp.str(d.CallID)
		sp.str(d.Tool)
		sp.args(d.Args)
		sp.str(d.Result)
		sp.buf = append(sp.buf, b2byte(d.IsError))
		sp.str(d.Reason)
	case session.UserNote:
		sp.buf = append(sp.buf, spNote)
		sp.str(d.Text)
	case session.PermissionRequested:
		sp.buf = append(sp.buf, spRequested)
		sp.str(d.RequestID)
		sp.str(d.Tool)
		sp.args(d.Args)
		sp.str(d.Reason)
	case session.PermissionGranted:
		sp.buf = append(sp.buf, spGranted)
		sp.str(d.RequestID)
		sp.str(d.Scope)
		sp.str(d.By)
	case session.PermissionDenied:
		sp.buf = append(sp.buf, spDenied)
		sp.str(d.RequestID)
		sp.str(d.Reason)
		sp.str(d.By)
	default:
		sp.mem = append(sp.mem, d)
		return -int64(len(sp.mem))
	}
	return sp.write()
}

// putToolRaw spools a tool call whose arguments are the source's raw JSON input.
func (sp *spool) putToolRaw(id, tool string, raw []byte) int64 {
	sp.buf = append(sp.buf[:0], spToolRaw)
	sp.str(id)
	sp.str(tool)
	sp.bytes(raw, false)
	return sp.write()
}

// putBlob spools bytes for the reader itself (an agent_progress line kept until the end).
func (sp *spool) putBlob(b []byte) int64 {
	sp.buf = append(sp.buf[:0], spBlob)
	sp.buf = append(sp.buf, b...)
	return sp.write()
}

// putRaw spools b as it is, with no record around it, and returns where it starts: a block
// of source lines, spooled once, which a reader finds by offset and length (span). Whatever
// is buffered is written first, so b lands at the offset returned and can be read back at
// once.
func (sp *spool) putRaw(b []byte) int64 {
	if sp.open() != nil || sp.flush() != nil {
		return 0
	}
	off := sp.n
	if _, err := sp.f.Write(b); err != nil {
		sp.err = fmt.Errorf("import spool: %w", err)
		return 0
	}
	sp.n += int64(len(b))
	return off
}

// span reads back n bytes putRaw spooled at off, into a new slice.
func (sp *spool) span(off int64, n int) ([]byte, error) {
	if sp.err != nil {
		return nil, sp.err
	}
	b := make([]byte, n)
	if _, err := sp.f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	return b, nil
}

// blob reads back what putBlob spooled.
func (sp *spool) blob(off int64) ([]byte, error) {
	rec, err := sp.record(off)
	if err != nil {
		return nil, err
	}
	if len(rec) == 0 || rec[0] != spBlob {
		return nil, errSpool
	}
	return rec[1:], nil
}

func (sp *spool) write() int64 {
	if sp.open() != nil {
		return 0
	}
	off := sp.n
	l := len(sp.wb)
	sp.wb = binary.AppendUvarint(sp.wb, uint64(len(sp.buf)))
	sp.wb = append(sp.wb, sp.buf...)
	sp.n += int64(len(sp.wb) - l)
	if cap(sp.buf) > 1<<20 {
		sp.buf = nil
	}
	if len(sp.wb) >= 1<<20 {
		sp.flush()
	}
	return off
}

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// flush makes every record readable from the file.
func (sp *spool) flush() error {
	if sp.err != nil {
		return sp.err
	}
	if len(sp.wb) > 0 {
		if _, err := sp.f.Write(sp.wb); err != nil {
			sp.err = fmt.Errorf("import spool: %w", err)
		}
		if cap(sp.wb) > 4<<20 {
			sp.wb = nil
		}
		sp.wb = sp.wb[:0]
	}
	return sp.err
}

// get reads back the event at off while the spool is being written (a refusal reads its
// call's arguments): from the records not yet written out, or from the file.
func (sp *spool) get(off int64) (session.Data, error) {
	if off < 0 {
		return sp.mem[-off-1], nil
	}
	rec, err := sp.record(off)
	if err != nil {
		return nil, err
	}
	return decodeSpooled(rec)
}

// record is the body of the record at off, while the spool is being written.
func (sp *spool) record(off int64) ([]byte, error) {
	if sp.err != nil {
		return nil, sp.err
	}
	var rec []byte
	if base := sp.n - int64(len(sp.wb)); off >= base {
		rec = sp.wb[off-base:]
	} else {
		var hdr [binary.MaxVarintLen64]byte
		k, _ := sp.f.ReadAt(hdr[:], off)
		n, h := binary.Uvarint(hdr[:k])
		if h <= 0 {
			return nil, errSpool
		}
		rec = make([]byte, int64(h)+int64(n))
		if _, err := sp.f.ReadAt(rec, off); err != nil {
			return nil, fmt.Errorf("import spool: %w", err)
		}
	}
	n, h := binary.Uvarint(rec)
	if h <= 0 || uint64(len(rec)-h) < n {
		return nil, errSpool
	}
	return rec[h : h+int(n)], nil
}

// cursor reads one agent's events out of the spool, in the order they were spooled: a
// buffered reader that moves forward, skipping the other agents' records between.
type cursor struct {
	sp *spool
	// end, when set, is where the records a cursor may read end: a cursor used by another
	// goroutine than the spool's writer must not read sp.n, which the writer moves on.
	end  int64
	r    *bufio.Reader
	pos  int64
	body []byte
}

func (c *cursor) release() { c.r, c.body = nil, nil }

var errSpool = errors.New("import spool: record cut short")

func (c *cursor) at(off int64) (session.Data, error) {
	if off < 0 {
		return c.sp.mem[-off-1], nil
	}
	body, err := c.record(off)
	if err != nil {
		return nil, err
	}
	d, err := decodeSpooled(body)
	if cap(c.body) > 1<<20 {
		c.body = nil
	}
	return d, err
}

// record is the body of the record at off, valid until the next call. Everything up to off
// must have been flushed.
func (c *cursor) record(off int64) ([]byte, error) {
	if err := c.seek(off); err != nil {
		return nil, err
	}
	n, err := binary.ReadUvarint(c.r)
	if err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	if uint64(cap(c.body)) < n {
		c.body = make([]byte, n)
	}
	c.body = c.body[:n]
	if _, err := io.ReadFull(c.r, c.body); err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	c.pos = off + int64(uvarintLen(n)) + int64(n)
	return c.body, nil
}

// seek moves the cursor's reader to off: forward by reading past what lies between when that
// is under 1 MiB, else by starting a new read there.
func (c *cursor) seek(off int64) error {
	if c.r == nil || off < c.pos || off-c.pos > 1<<20 {
		end := c.end
		if end == 0 {
			end = c.sp.n
		}
		sec := io.NewSectionReader(c.sp.f, off, end-off)
		if c.r == nil {
			c.r = bufio.NewReaderSize(sec, 64<<10)
		} else {
			c.r.Reset(sec)
		}
		c.pos = off
	} else if off > c.pos {
		if _, err := c.r.Discard(int(off - c.pos)); err != nil {
			return fmt.Errorf("import spool: %w", err)
		}
		c.pos = off
	}
	return nil
}

// span reads n bytes putRaw spooled at off into a new slice. Spans read in order of their
// offsets (as a chat's messages mostly are) are read ahead like records.
func (c *cursor) span(off int64, n int) ([]byte, error) {
	if err := c.seek(off); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	c.pos = off + int64(n)
	return b, nil
}

func uvarintLen(n uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], n)
}

// spoolDec reads a record's fields in the order put wrote them.
type spoolDec struct {
	b   []byte
	err error
}

func (d *spoolDec) raw() ([]byte, bool) {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || uint64(len(d.b)-k) < n {
		d.err, d.b = errSpool, nil
		return nil, false
	}
	v := d.b[k : k+int(n)]
	d.b = d.b[k+int(n):]
	return v, true
}

func (d *spoolDec) str() string {
	v, _ := d.raw()
	return string(v)
}

// opt reads what bytes wrote: (nil, false) for nil.
func (d *spoolDec) opt() ([]byte, bool) {
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err, d.b = errSpool, nil
		return nil, false
	}
	d.b = d.b[k:]
	if n == 0 {
		return nil, false
	}
	if uint64(len(d.b)) < n-1 {
		d.err, d.b = errSpool, nil
		return nil, false
	}
	v := d.b[:n-1]
	d.b = d.b[n-1:]
	return v, true
}

func (d *spoolDec) args() map[string]any {
	b, ok := d.opt()
	if !ok {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		d.err = err
	}
	return m
}

func (d *spoolDec) bool() bool {
	if len(d.b) == 0 {
		d.err = errSpool
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func decodeSpooled(b []byte) (session.Data, error) {
	if len(b) == 0 {
		return nil, errSpool
	}
	d := &spoolDec{b: b[1:]}
	var out session.Data
	switch b[0] {
	case spTranscript:
		t := session.TranscriptEvent{EventType: d.str(), Text: d.str(), CallID: d.str(), Tool: d.str(), Args: d.args()}
		t.Result, t.IsError, t.Reason = d.str(), d.bool(), d.str()
		out = t
	case spToolRaw:
		t := session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: d.str(), Tool: d.str()}
		raw, _ := d.opt()
		t.Args = rawArgs(raw)
		out = t
	case spNote:
		out = session.UserNote{Text: d.str()}
	case spRequested:
		out = session.PermissionRequested{RequestID: d.str(), Tool: d.str(), Args: d.args(), Reason: d.str()}
	case spGranted:
		out = session.PermissionGranted{RequestID: d.str(), Scope: d.str(), By: d.str()}
	case spDenied:
		out = session.PermissionDenied{RequestID: d.str(), Reason: d.str(), By: d.str()}
	default:
		return nil, fmt.Errorf("import spool: unknown record kind %q", b[0])
	}
	return out, d.err
}
