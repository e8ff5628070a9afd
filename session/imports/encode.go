package imports

import (
	"runtime"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// The recording is written by three stages. One goroutine merges the agents' streams out of
// the spool (merged.merge) and cuts them into batches of encBatch events, each event with its
// seq; GOMAXPROCS workers decode the batches' spooled records and encode each event as the
// recorder writes it (record.Recorder.Encode: the line, secrets redacted, and the event as a
// replay reads it); the caller's goroutine takes the batches back in seq order, folds each
// event and appends its line (Recorder.AppendEncoded). The file is byte for byte what
// Recorder.Append, one event after the other, writes: the same lines in the same order, each
// line redacted whole (an event is never split between batches). At most 2×workers+2 batches
// are in flight, so memory does not grow with the session.

// encBatch is the number of events a batch holds.
const encBatch = 256

// mergeItem is an event of the merge: d, or (d nil) the spooled record arena[lo:hi].
type mergeItem struct {
	ts     time.Time
	sub    string
	seq    uint64
	d      session.Data
	lo, hi int
}

type encodedBatch struct {
	items []mergeItem
	arena []byte // the batch's spooled records
	err   error  // the merge's error, after items
	done  chan struct{}

	// Set by the worker: the lines of items[:n] in lines (ends[i] is where line i ends), the
	// events as recorded (without their text: the fold does not read it), and the error of
	// item n when n < len(items).
	lines  []byte
	ends   []int
	evs    []session.Event
	n      int
	encErr error
}

// encodeMerged writes every event of mg to rec in recording order, from seq first on: each is
// folded by fold (the event as recorded, textless) after its line is buffered. It returns the
// next seq.
func encodeMerged(mg *merged, sp *spool, rec *record.Recorder, id string, first uint64, fold func(session.Event) error) (uint64, error) {
	workers := runtime.GOMAXPROCS(0)
	order := make(chan *encodedBatch, 2*workers+2)
	work := make(chan *encodedBatch, 2*workers+2)
	stop := make(chan struct{})
	defer close(stop)
	// Batches the caller is done with come back to the merge through free, their buffers
	// kept: a batch's line buffer grows to a few hundred KiB, and growing fresh ones for every
	// batch was a tenth of an import's CPU (growslice's copies and the allocations' clearing).
	free := make(chan *encodedBatch, 2*workers+2)
	newBatch := func() *encodedBatch {
		select {
		case b := <-free:
			b.done = make(chan struct{})
			return b
		default:
			return &encodedBatch{done: make(chan struct{}), items: make([]mergeItem, 0, encBatch)}
		}
	}
	go func() {
		defer close(order)
		defer close(work)
		seq := first
		b := newBatch()
		send := func() bool {
			select {
			case order <- b:
			case <-stop:
				return false
			}
			select {
			case work <- b:
			case <-stop:
				return false
			}
			b = newBatch()
			return true
		}
		err := mg.merge(sp, func(ts time.Time, sub string, d session.Data, raw []byte) error {
			it := mergeItem{ts: ts, sub: sub, seq: seq, d: d}
			seq++
			if d == nil {
				it.lo = len(b.arena)
				b.arena = append(b.arena, raw...)
				it.hi = len(b.arena)
			}
			b.items = append(b.items, it)
			if len(b.items) == encBatch && !send() {
				return errSpool
			}
			return nil
		})
		if err != nil || len(b.items) > 0 {
			b.err = err
			send()
		}
	}()
	for range workers {
		go func() {
			for b := range work {
				encodeBatch(b, rec, id)
				close(b.done)
			}
		}()
	}
	next := first
	for b := range order {
		<-b.done
		from := 0
		for i := range b.n {
			if err := rec.AppendEncoded(b.lines[from:b.ends[i]], b.evs[i].Type); err != nil {
				return next, err
			}
			from = b.ends[i]
			if err := fold(b.evs[i]); err != nil {
				return next, err
			}
			next++
		}
		if b.encErr != nil {
			return next, b.encErr
		}
		if b.err != nil {
			return next, b.err
		}
		b.reset()
		select {
		case free <- b:
		default:
		}
	}
	return next, nil
}

// reset empties b for the next batch, keeping its buffers' room. The fold was handed copies
// of b's events, and AppendEncoded copied its lines, so nothing still reads them. A buffer
// that one huge event grew past maxKeptBatchBytes is dropped: what is reused stays small.
func (b *encodedBatch) reset() {
	clear(b.items) // drop the payloads the items point at
	clear(b.evs)
	lines, arena := b.lines[:0], b.arena[:0]
	if cap(lines) > maxKeptBatchBytes {
		lines = nil
	}
	if cap(arena) > maxKeptBatchBytes {
		arena = nil
	}
	*b = encodedBatch{items: b.items[:0], arena: arena, lines: lines, ends: b.ends[:0], evs: b.evs[:0]}
}

// maxKeptBatchBytes is the most room a reused batch keeps in each of its buffers.
const maxKeptBatchBytes = 4 << 20

// encodeBatch decodes b's spooled records and encodes its events, up to the first that fails.
func encodeBatch(b *encodedBatch, rec *record.Recorder, id string) {
	if cap(b.ends) < len(b.items) {
		b.ends = make([]int, 0, len(b.items))
		b.evs = make([]session.Event, 0, len(b.items))
	}
	for i := range b.items {
		it := &b.items[i]
		d := it.d
		if d == nil {
			var err error
			if d, err = decodeSpooled(b.arena[it.lo:it.hi]); err != nil {
				b.n, b.encErr = i, err
				return
			}
		}
		e := session.New(it.sub, d)
		e.Seq, e.TS, e.SessionID = it.seq, it.ts, id
		lines, got, err := rec.Encode(b.lines, e)
		if err != nil {
			b.n, b.encErr = i, err
			return
		}
		b.lines = lines
		b.ends = append(b.ends, len(lines))
		b.evs = append(b.evs, textless(got))
		it.d = nil // the text is in the line now
	}
	b.n = len(b.items)
}
