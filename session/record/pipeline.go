package record

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/summit-dev/summit/session"
)

// The parallel reading pipeline behind ForEach: one goroutine cuts the recording into chunks
// of whole lines (read into buffers, or sliced from a mapping of the file: forEachFile), the
// GOMAXPROCS workers decode chunks, and the caller's goroutine takes the decoded chunks back
// in file order and calls fn on each event, so the fold stays on one goroutine and sees
// exactly the sequence the sequential Reader gives, with the same report and the same errors
// at the same lines (TestPipelineMatchesReader, TestPipelineRandomSplits,
// FuzzPipelineMatchesReader). Memory is bounded: at most 2×workers+2 chunks are in flight,
// each of defaultChunk bytes (one holding a longer line grows to fit it, up to MaxEventLine),
// with their decoded events, whatever the size of the file.

const (
	// releaseChunks is how many decoded chunks of a mapped file forEachPipeline lets go of at
	// once (see mapping.releaseTo).
	releaseChunks = 8
	// defaultChunk is the read and decode unit: large enough that the hand-offs between
	// goroutines cost nothing next to decoding it, small enough to stay in cache.
	defaultChunk = 512 << 10
)

type pipelineConfig struct {
	workers int // decoding goroutines (≥ 1)
	chunk   int // bytes per chunk (≥ 1; tests use tiny ones)
}

func defaultPipeline() pipelineConfig {
	return pipelineConfig{workers: runtime.GOMAXPROCS(0), chunk: defaultChunk}
}

// lineKind classifies a line as the Reader does.
type lineKind uint8

const (
	lineEvent   lineKind = iota // decoded
	lineBlank                   // blank, skipped with a warning
	lineBad                     // does not decode: err
	lineTooLong                 // longer than MaxEventLine
)

type lineResult struct {
	kind     lineKind
	complete bool // the line ends with a newline
	ev       session.Event
	err      error
}

// batch is a decoded chunk: its lines in order, then the read error that ended the input
// after them, if any.
type batch struct {
	lines []lineResult
	err   error
	end   int // where the chunk ends in the mapping, when the file is mapped
}

// chunk is a piece of the input cut at a newline, on its way to a worker and to the reader of
// the results (in file order).
type chunk struct {
	data []byte
	eof  bool // data ends the input: its last line may have no newline
	done chan *batch
}

type pipeline struct {
	cfg   pipelineConfig
	opts  ReadOptions
	order chan *chunk // every chunk, in file order
	work  chan *chunk // chunks to decode
	quit  chan struct{}
	wg    sync.WaitGroup
	bufs  chan []byte // free chunk buffers of cfg.chunk bytes
	outs  chan *batch // free batches
	// mapped is the file when it is read from a mapping: chunks are slices of it, not copies.
	mapped *mapping
}

// startPipeline starts reading r, or the mapped file m when m is not nil.
func startPipeline(r io.Reader, m *mapping, opts ReadOptions, cfg pipelineConfig) *pipeline {
	inflight := 2*cfg.workers + 2
	p := &pipeline{cfg: cfg, opts: opts,
		order: make(chan *chunk, inflight),
		work:  make(chan *chunk, cfg.workers),
		quit:  make(chan struct{}),
		bufs:  make(chan []byte, inflight+cfg.workers+2),
		outs:  make(chan *batch, inflight+cfg.workers+2),
	}
	p.wg.Add(1 + cfg.workers)
	if m != nil {
		p.mapped = m
		go p.readMapped(m)
	} else {
		go p.read(r)
	}
	for range cfg.workers {
		go p.decode()
	}
	return p
}

// next returns the next decoded chunk in file order, or false at the end of the input.
func (p *pipeline) next() (*batch, bool) {
	c, ok := <-p.order
	if !ok {
		return nil, false
	}
	return <-c.done, true
}

// release hands a batch back once its events have been passed on.
func (p *pipeline) release(b *batch) {
	b.lines, b.err, b.end = b.lines[:0], nil, 0 // (the old events are garbage once overwritten)
	select {
	case p.outs <- b:
	default:
	}
}

// stop ends the pipeline (whether or not the input was read to its end) and waits for its
// goroutines.
func (p *pipeline) stop() {
	close(p.quit)
	p.wg.Wait()
}

// getBuf returns an empty chunk buffer with room for atLeast bytes and as many more.
func (p *pipeline) getBuf(atLeast int) []byte {
	if atLeast <= p.cfg.chunk/2 {
		select {
		case b := <-p.bufs:
			return b[:0]
		default:
		}
		return make([]byte, 0, p.cfg.chunk)
	}
	return make([]byte, 0, min(max(2*atLeast, p.cfg.chunk), MaxEventLine+1))
}

func (p *pipeline) putBuf(b []byte) {
	if cap(b) != p.cfg.chunk {
		return // a chunk grown for a long line: let it go
	}
	select {
	case p.bufs <- b:
	default:
	}
}

func (p *pipeline) getBatch() *batch {
	select {
	case b := <-p.outs:
		return b
	default:
	}
	return &batch{}
}

// send queues c for decoding (or, with a done batch already, only for the reader of the
// results). It reports false once the pipeline is stopped.
func (p *pipeline) send(c *chunk, decode bool) bool {
	select {
	case p.order <- c:
	case <-p.quit:
		return false
	}
	if !decode {
		return true
	}
	select {
	case p.work <- c:
		return true
	case <-p.quit:
		return false
	}
}

// sendResult queues a chunk that needs no decoding: a line over the cap, or a read error.
func (p *pipeline) sendResult(b *batch) bool {
	c := &chunk{done: make(chan *batch, 1)}
	c.done <- b
	return p.send(c, false)
}

// read cuts the input into chunks of whole lines. A line longer than a chunk grows the chunk
// until its newline is in; a line longer than MaxEventLine is sent as a lineTooLong result
// (never held whole) and read past. A read error ends the input after the lines completed
// before it, as in the Reader (a partial line before the error is dropped).
func (p *pipeline) read(r io.Reader) {
	defer p.wg.Done()
	defer close(p.work)
	defer close(p.order)
	buf := p.getBuf(0)
	empty := 0 // consecutive reads that returned nothing
	for {
		var err error
		for len(buf) < cap(buf) && err == nil {
			var n int
			n, err = r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if n > 0 || err != nil {
				empty = 0
			} else if empty++; empty >= 100 {
				err = io.ErrNoProgress
			}
		}
		if err != nil {
			if err == io.EOF {
				if len(buf) > 0 {
					p.send(&chunk{data: buf, eof: true, done: make(chan *batch, 1)}, true)
				}
				return
			}
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
				if !p.send(&chunk{data: buf[:i+1], done: make(chan *batch, 1)}, true) {
					return
				}
			}
			b := p.getBatch()
			b.err = err
			p.sendResult(b)
			return
		}
		// buf is full.
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			next := append(p.getBuf(len(buf)-i-1), buf[i+1:]...)
			if !p.send(&chunk{data: buf[:i+1], done: make(chan *batch, 1)}, true) {
				return
			}
			buf = next
			continue
		}
		if len(buf) <= MaxEventLine {
			// One line fills the chunk: make room for the rest of it (at most the cap and
			// its newline).
			grown := make([]byte, len(buf), min(2*cap(buf), MaxEventLine+1))
			copy(grown, buf)
			p.putBuf(buf)
			buf = grown
			continue
		}
		// A line over the cap: report it, then (lenient) read past its end without keeping
		// it. Strict reading ends there: nothing after it is read.
		b := p.getBatch()
		b.lines = append(b.lines, lineResult{kind: lineTooLong})
		if !p.sendResult(b) || !p.opts.Lenient {
			return
		}
		rest, eof, err := p.skipLine(r, buf)
		switch {
		case err != nil:
			b := p.getBatch()
			b.err = err
			p.sendResult(b)
			return
		case eof:
			return
		}
		buf = rest
	}
}

// skipLine reads past the end of the current line, using scratch as its read buffer, and
// returns a chunk buffer holding what follows the newline.
func (p *pipeline) skipLine(r io.Reader, scratch []byte) (rest []byte, eof bool, err error) {
	scratch = scratch[:cap(scratch)]
	empty := 0
	for {
		select {
		case <-p.quit:
			return nil, true, nil
		default:
		}
		n, err := r.Read(scratch)
		if i := bytes.IndexByte(scratch[:n], '\n'); i >= 0 {
			rest = append(p.getBuf(n-i-1), scratch[i+1:n]...)
			if err == io.EOF {
				err = nil // the rest is read on the next call and ends with EOF again
			}
			return rest, false, err
		}
		switch {
		case err == io.EOF:
			return nil, true, nil
		case err != nil:
			return nil, false, err
		case n == 0:
			if empty++; empty >= 100 {
				return nil, false, io.ErrNoProgress
			}
		default:
			empty = 0
		}
	}
}

// decode is a worker: it decodes chunks until there are no more.
func (p *pipeline) decode() {
	defer p.wg.Done()
	d := newLineDecoder(p.opts.NoText, true)
	d.useArena = true
	for c := range p.work {
		b := p.getBatch()
		if p.mapped != nil {
			if err := p.mapped.guard(func() { d.decodeChunk(c.data, c.eof, b) }); err != nil {
				b.lines, b.err = b.lines[:0], err
			}
			// The decoded events hold no reference to the chunk: its pages go with the
			// releaseTo of forEachPipeline, a few chunks at once.
			b.end = p.mapped.end(c.data)
		} else {
			d.decodeChunk(c.data, c.eof, b)
			p.putBuf(c.data)
		}
		c.data = nil
		c.done <- b
	}
}

// readMapped cuts the mapped file into chunks of whole lines, as read does: a line longer
// than a chunk is taken whole (up to the cap), a line over MaxEventLine is sent as a
// lineTooLong result and, lenient, stepped over; nothing is copied.
func (p *pipeline) readMapped(m *mapping) {
	defer p.wg.Done()
	defer close(p.work)
	defer close(p.order)
	data := m.data
	pos := 0
	for pos < len(data) {
		var end int
		var tooLong bool
		err := m.guard(func() { end, tooLong = cutChunk(data, pos, p.cfg.chunk) })
		if err != nil {
			b := p.getBatch()
			b.err = err
			p.sendResult(b)
			return
		}
		if tooLong {
			b := p.getBatch()
			b.lines = append(b.lines, lineResult{kind: lineTooLong})
			if !p.sendResult(b) || !p.opts.Lenient {
				return
			}
			// Past the end of the line (nothing follows it when it has none).
			var next int
			if err := m.guard(func() { next = bytes.IndexByte(data[pos+MaxEventLine+1:], '\n') }); err != nil {
				b := p.getBatch()
				b.err = err
				p.sendResult(b)
				return
			}
			if next < 0 {
				return
			}
			pos += MaxEventLine + 1 + next + 1
			continue
		}
		if !p.send(&chunk{data: data[pos:end], eof: end == len(data), done: make(chan *batch, 1)}, true) {
			return
		}
		pos = end
	}
}

// cutChunk returns where the chunk of data that starts at pos ends: after the last newline
// within size bytes, else after the newline of the one line longer than that, else at the end
// of data (a last line without newline); tooLong when the line at pos runs past MaxEventLine
// without a newline.
func cutChunk(data []byte, pos, size int) (end int, tooLong bool) {
	end = min(len(data), pos+size)
	if end == len(data) {
		return end, false
	}
	if i := bytes.LastIndexByte(data[pos:end], '\n'); i >= 0 {
		return pos + i + 1, false
	}
	limit := min(len(data), pos+MaxEventLine+1)
	if j := bytes.IndexByte(data[end:limit], '\n'); j >= 0 {
		return end + j + 1, false
	}
	if limit == len(data) && limit-pos <= MaxEventLine {
		return len(data), false
	}
	return 0, true
}

// decodeChunk decodes every line of data into b, classifying lines as the Reader does. Only
// the last line of the input (eof) can lack its newline.
func (d *lineDecoder) decodeChunk(data []byte, eof bool, b *batch) {
	for len(data) > 0 {
		// Decode into the next result in place: an event is 104 bytes, worth not copying.
		k := len(b.lines)
		if k == cap(b.lines) {
			b.lines = append(b.lines, lineResult{})[:k]
		}
		res := &b.lines[:k+1][k]
		if n, ok := d.canonical(data, &res.ev); ok {
			res.kind, res.complete, res.err = lineEvent, true, nil
			b.lines = b.lines[:k+1]
			data = data[n:]
			continue
		}
		line, complete := data, false
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data, complete = data[:i+1], data[i+1:], true
		} else {
			data = nil
		}
		n := len(line)
		if complete {
			n--
		}
		*res = lineResult{complete: complete}
		switch {
		case n > MaxEventLine:
			res.kind = lineTooLong
		case isBlank(line):
			res.kind = lineBlank
		default:
			if res.ev, res.err = d.decode(line); res.err != nil {
				res.kind = lineBad
			}
		}
		b.lines = b.lines[:k+1]
	}
}

// forEachParallel is ForEach on the pipeline.
func forEachParallel(r io.Reader, opts ReadOptions, cfg pipelineConfig, fn func(session.Event) error) (ReadReport, error) {
	return forEachPipeline(startPipeline(r, nil, opts, cfg), opts, fn)
}

// forEachFile is ForEach of a whole file (from its start), read from a mapping of it where
// the system has them (no copy of the file through read buffers), else as ForEach reads.
func forEachFile(f *os.File, opts ReadOptions, fn func(session.Event) error) (ReadReport, error) {
	m, err := mapFile(f)
	if err != nil || m == nil {
		return ForEach(f, opts, fn)
	}
	defer m.close()
	return forEachPipeline(startPipeline(nil, m, opts, defaultPipeline()), opts, fn)
}

func forEachPipeline(p *pipeline, opts ReadOptions, fn func(session.Event) error) (ReadReport, error) {
	defer p.stop()
	var rep ReadReport
	line, chunks := 0, 0
	for {
		b, ok := p.next()
		if !ok {
			return rep, nil
		}
		for i := range b.lines {
			res := &b.lines[i]
			line++
			rep.Lines++
			switch res.kind {
			case lineEvent:
				if u, ok := res.ev.Data.(session.Unknown); ok {
					rep.warnf("line %d: unknown event type %q (kept, skipped)", line, string(u.Name))
				}
				if err := fn(res.ev); err != nil {
					return rep, err
				}
			case lineBlank:
				rep.warnf("line %d: blank line, skipped", line)
			case lineTooLong:
				le := &LineError{Line: line, Err: ErrLineTooLong}
				if !opts.Lenient {
					return rep, le
				}
				rep.Skipped++
				rep.warnf("%v (skipped)", le)
			case lineBad:
				if ve := (*VersionError)(nil); errors.As(res.err, &ve) {
					return rep, &LineError{Line: line, Err: res.err}
				}
				if !res.complete {
					rep.Torn = true
					rep.warnf("line %d: torn last line (crash mid-write?), skipped", line)
					return rep, nil
				}
				le := &LineError{Line: line, Err: res.err}
				if !opts.Lenient {
					return rep, le
				}
				rep.Skipped++
				rep.warnf("%v (skipped)", le)
			}
		}
		if b.err != nil {
			return rep, b.err
		}
		// Every releaseChunks chunks, drop the pages read so far: one madvise (and one TLB
		// shootdown on every core) per few megabytes rather than per chunk, for a few more
		// megabytes resident.
		if chunks++; p.mapped != nil && chunks%releaseChunks == 0 {
			p.mapped.releaseTo(b.end)
		}
		p.release(b)
	}
}
