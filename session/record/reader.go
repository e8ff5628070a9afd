package record

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/summit-dev/summit/session"
)

// ReadOptions configures reading a recording (Reader, ReadAll, ForEach, BuildIndexWith).
type ReadOptions struct {
	// Lenient skips malformed lines (counting them in ReadReport.Skipped) instead of failing
	// on the first one. A line of a newer schema version is refused even then: the rest of
	// such a file cannot be read safely.
	Lenient bool
	// NoText leaves out what the model and the tools said in transcript events: their text,
	// result and reason decode as "" and their args as nil (all are still checked, so a line
	// that fails to decode still fails). For readers that need the events but not their
	// text: inspect folds a recording this way (the transcripts keep their items' kinds, tools
	// and counts, not their text). Other events are decoded whole.
	NoText bool
}

// LineError is a line of a recording that cannot be read. Line is 1-based.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// MaxEventLine caps one line of a recording, that is one event: at most 16 MiB (16,777,216
// bytes) before its newline. Readers stop at the cap, so a line without end costs one buffer of
// the cap's size, not the line: the Reader, the Index and everything built on them (replay,
// inspect) report a longer line as a *LineError wrapping ErrLineTooLong, or skip it with
// Lenient. The recorder must never write a longer line.
const MaxEventLine = 16 << 20

// ErrLineTooLong is the error of a line over MaxEventLine.
var ErrLineTooLong = fmt.Errorf("an event line longer than %d MiB (the cap)", MaxEventLine>>20)

// maxWarnings bounds ReadReport.Warnings; a damaged file could otherwise produce one per line.
const maxWarnings = 32

// ReadReport is what reading a recording found besides its events.
type ReadReport struct {
	// Lines is the number of lines read, blank, skipped and torn ones included.
	Lines int
	// Skipped counts malformed lines skipped in lenient mode (not blank lines, not the torn
	// last line).
	Skipped int
	// Torn is set when the last line had no newline and did not decode: a crash mid-write.
	// It is skipped.
	Torn bool
	// Warnings are the first messages ("line N: …") about torn, blank, skipped and unknown-
	// type lines; WarningsDropped counts the ones beyond maxWarnings.
	Warnings        []string
	WarningsDropped int
}

func (rep *ReadReport) warnf(format string, args ...any) {
	if len(rep.Warnings) >= maxWarnings {
		rep.WarningsDropped++
		return
	}
	rep.Warnings = append(rep.Warnings, fmt.Sprintf(format, args...))
}

// Reader streams the events of a recording, one line at a time; memory is bounded by the
// longest line, whatever the file size, and a line is at most MaxEventLine.
//
// What it does with each kind of line:
//   - a valid event: returned;
//   - an event of a type this build does not know: returned with Unknown data (the fold
//     skips it), with a warning "line N: unknown event type "Foo" (kept, skipped)";
//   - a blank line: skipped with a warning (the recorder never writes one);
//   - a line of a newer schema version (v > SchemaVersion): a *LineError wrapping a
//     *VersionError, always fatal, lenient or not;
//   - the last line without a trailing newline: returned if it decodes (its newline is all
//     that is missing; hand-written files often end so), otherwise it is the torn line of a
//     crash mid-write: reported (Torn, "line N: torn last line (crash mid-write?), skipped")
//     and skipped, never an error;
//   - a line longer than MaxEventLine: a *LineError wrapping ErrLineTooLong, read no further
//     than the cap; with Lenient the rest of it is read past (not kept), and it is skipped,
//     counted and reported like a malformed line, wherever it is in the file;
//   - any other malformed line: a *LineError naming the line; with Lenient it is skipped,
//     counted in Skipped and reported as a warning.
//
// Errors are sticky: after an error (or io.EOF) Next keeps returning it.
type Reader struct {
	br     *bufio.Reader
	opts   ReadOptions
	dec    *lineDecoder
	long   []byte // a line longer than br's buffer, assembled
	line   int
	report ReadReport
	err    error
}

// NewReader returns a Reader of the recording r.
func NewReader(r io.Reader, opts ReadOptions) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 256<<10), opts: opts, dec: newLineDecoder(opts.NoText, true)}
}

// Report is what the reader found so far besides the events.
func (r *Reader) Report() ReadReport {
	rep := r.report
	rep.Warnings = append([]string(nil), rep.Warnings...)
	return rep
}

// Next returns the next event, or io.EOF after the last one.
func (r *Reader) Next() (session.Event, error) {
	for r.err == nil {
		raw, complete, err := r.readLine()
		if err == ErrLineTooLong {
			r.line++
			r.report.Lines++
			le := &LineError{Line: r.line, Err: err}
			if !r.opts.Lenient {
				r.err = le
				break
			}
			if !complete {
				if err := r.skipLine(); err != nil {
					r.err = err
					break
				}
			}
			r.report.Skipped++
			r.report.warnf("%v (skipped)", le)
			continue
		}
		if err != nil {
			r.err = err
			break
		}
		r.line++
		r.report.Lines++
		if isBlank(raw) {
			r.report.warnf("line %d: blank line, skipped", r.line)
			continue
		}
		ev, derr := r.dec.decode(raw)
		if derr == nil {
			if u, ok := ev.Data.(session.Unknown); ok {
				r.report.warnf("line %d: unknown event type %q (kept, skipped)", r.line, string(u.Name))
			}
			return ev, nil
		}
		if ve := (*VersionError)(nil); errors.As(derr, &ve) {
			r.err = &LineError{Line: r.line, Err: derr}
			break
		}
		if !complete {
			r.report.Torn = true
			r.report.warnf("line %d: torn last line (crash mid-write?), skipped", r.line)
			r.err = io.EOF
			break
		}
		le := &LineError{Line: r.line, Err: derr}
		if !r.opts.Lenient {
			r.err = le
			break
		}
		r.report.Skipped++
		r.report.warnf("%v (skipped)", le)
	}
	return session.Event{}, r.err
}

// readLine returns the next line, newline included when complete is true. The slice is valid
// until the next call. At the end of input it returns io.EOF. A line over MaxEventLine is
// ErrLineTooLong as soon as the cap is passed: at most the cap and one buffer of it have been
// read, and complete says whether that was all of it (else skipLine reads past the rest).
func (r *Reader) readLine() (line []byte, complete bool, err error) {
	if cap(r.long) > 4<<20 {
		r.long = nil // do not hold on to a long line's 16 MiB for the rest of the file
	}
	r.long = r.long[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return nil, false, err
		}
		n := len(r.long) + len(frag)
		if err == nil {
			n-- // the newline does not count
		}
		if n > MaxEventLine {
			// complete here says whether the line's end has been read already.
			return nil, err != bufio.ErrBufferFull, ErrLineTooLong
		}
		if err == bufio.ErrBufferFull {
			r.long = appendLong(r.long, frag)
			continue
		}
		if len(r.long) > 0 {
			r.long = appendLong(r.long, frag)
			frag = r.long
		}
		switch {
		case err == nil:
			return frag, true, nil
		case err == io.EOF && len(frag) > 0:
			return frag, false, nil
		default:
			return nil, false, err
		}
	}
}

// appendLong appends frag to the long line being assembled, doubling its capacity but never
// past what a line at the cap needs (with its newline), so a line at the cap costs one buffer
// of that size, not the next doubling.
func appendLong(long, frag []byte) []byte {
	if need := len(long) + len(frag); need > cap(long) {
		grown := make([]byte, len(long), max(min(2*cap(long), MaxEventLine+1), need))
		copy(grown, long)
		long = grown
	}
	return append(long, frag...)
}

// skipLine reads past the rest of the current line without keeping it.
func (r *Reader) skipLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil, io.EOF:
			return nil
		}
		return err
	}
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// ForEach calls fn with each event of the recording r, in order, and returns what the reading
// found. It stops at the first error, from reading or from fn.
//
// It reads like the Reader (the same events, report and errors) but decodes on every core:
// one goroutine reads r in chunks cut at newlines, GOMAXPROCS goroutines decode them, and fn
// is called on the caller's goroutine, in order, while the next chunks are decoded. Memory
// stays bounded (a few chunks of 512 KiB and their events) whatever the size of r. r is not
// read after ForEach returns.
func ForEach(r io.Reader, opts ReadOptions, fn func(session.Event) error) (ReadReport, error) {
	return forEachParallel(r, opts, defaultPipeline(), fn)
}

// forEachSequential is ForEach on one goroutine, with the Reader: what the pipeline must match.
func forEachSequential(r io.Reader, opts ReadOptions, fn func(session.Event) error) (ReadReport, error) {
	rd := NewReader(r, opts)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return rd.Report(), nil
		}
		if err != nil {
			return rd.Report(), err
		}
		if err := fn(ev); err != nil {
			return rd.Report(), err
		}
	}
}

// ReadAll reads the whole recording at path. On error it returns the events read before it.
func ReadAll(path string, opts ReadOptions) ([]session.Event, ReadReport, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, ReadReport{}, err
	}
	defer f.Close()
	var evs []session.Event
	rep, err := forEachFile(f, opts, func(ev session.Event) error {
		evs = append(evs, ev)
		return nil
	})
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return evs, rep, err
}
