package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/summit-dev/summit/session"
)

// DefaultSyncInterval is the group fsync period of a Recorder.
const DefaultSyncInterval = 100 * time.Millisecond

// flushThreshold bounds the bytes buffered between Flushes: past it Append writes at once, so a
// caller that flushes rarely cannot grow the buffer without limit.
const flushThreshold = 1 << 20

var dataKey = []byte(`,"data":`)

// ErrRecorderClosed is returned by Append and Flush after Close.
var ErrRecorderClosed = errors.New("session recorder is closed")

// RecorderOptions configures a Recorder. The zero value is the production setting.
type RecorderOptions struct {
	// Environ is the environment whose secret-named variables (…_API_KEY, …_TOKEN, …) are
	// redacted, as "NAME=value" entries. Nil means os.Environ(); pass an empty non-nil slice
	// to redact only the token patterns.
	Environ []string
	// Redactor, when set, is used instead of one built from Environ.
	Redactor *Redactor
	// SyncInterval is the group fsync period; zero means DefaultSyncInterval.
	SyncInterval time.Duration

	// tick, when set, drives the sync loop instead of a time.Ticker (tests).
	tick <-chan time.Time
	// afterTick is called by the sync loop after each tick with whether it fsynced (tests).
	afterTick func(synced bool)
}

// recFile is what a Recorder writes to: an *os.File, or a fault-injecting fake in tests.
type recFile interface {
	io.Writer
	Sync() error
	Close() error
}

// Recorder appends events to a session recording (JSONL), redacting secrets first.
//
// Durability contract:
//   - Append encodes an event completely before any byte of it is buffered, so a line on disk
//     is never half an event except when the process dies inside the write syscall (the
//     Reader reports and skips such a torn last line).
//   - Flush hands every buffered line to the kernel in one write. The orchestrator calls
//     Flush before it gives a batch of events to the UI, so every event reaches the kernel
//     before it is shown: after kill -9 nothing that was on screen is missing.
//   - Lifecycle events (see IsLifecycle) are written and fsynced by Append itself before it
//     returns.
//   - Everything else is fsynced by a background loop at most every SyncInterval (100 ms) when
//     there were writes since the last fsync; the loop also writes out lines a caller left
//     buffered, so none lingers longer than one interval.
//   - A write or fsync error is returned and remembered: every later Append, Flush and Close
//     fails with it, so a lost event is never silent.
//   - The file stays open for the whole session, and the sync loop checks after every tick
//     with writes (and Close checks at the end) that the path still names it: a recording
//     replaced or removed during the session fails with ErrRecordingReplaced.
//
// A Recorder is safe for concurrent use, though the orchestrator is its only writer.
type Recorder struct {
	path string
	red  *Redactor

	mu     sync.Mutex
	f      recFile
	buf    []byte // encoded lines not yet written
	dirty  bool   // written since the last fsync
	err    error  // first write/fsync error; sticky
	closed bool
	// held is set between Hold and Release: nothing is written, so the lines appended then go
	// to the kernel in one write call; heldSync says one of them was a lifecycle event.
	held, heldSync bool

	syncs atomic.Uint64 // fsyncs done (tests and diagnostics)

	// wake tells a sync loop that stopped its ticker (nothing to write or fsync) that there is
	// something again; capacity 1, sent without blocking.
	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// OpenRecorder creates dir (mode 0700 for every directory it creates, whatever the umask) and
// the new recording <dir>/<sessionID>.jsonl (mode 0600). It refuses to overwrite an existing
// file. A directory that already exists keeps its mode: it may be shared, and the recording
// itself is 0600.
func OpenRecorder(dir, sessionID string, opts RecorderOptions) (*Recorder, error) {
	if sessionID == "" || sessionID == "." || sessionID == ".." || strings.ContainsAny(sessionID, "/\\\x00") {
		return nil, fmt.Errorf("session id %q cannot be a file name", sessionID)
	}
	return OpenRecorderFile(filepath.Join(dir, sessionID+".jsonl"), opts)
}

// OpenRecorderFile is OpenRecorder for an explicit path (--record FILE). Missing parent
// directories are created with mode 0700; the file must not exist yet.
func OpenRecorderFile(path string, opts RecorderOptions) (*Recorder, error) {
	if err := mkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("create recording directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("recording %s already exists; refusing to overwrite it", path)
		}
		return nil, fmt.Errorf("create recording: %w", err)
	}
	if err := lockWriter(f); err != nil { // lock_unix.go: one writer of a recording
		f.Close()
		return nil, fmt.Errorf("recording %s: %w", path, err)
	}
	// The umask can only clear bits of 0600, but an explicit chmod states the invariant and
	// also restores u+w under an odd umask such as 0277.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("chmod recording: %w", err)
	}
	return newRecorder(f, path, opts), nil
}

// ErrRecordingReplaced reports that the file at a recording's path is no longer the file the
// recorder wrote: something replaced or removed it during the session.
var ErrRecordingReplaced = errors.New("the recording was replaced or removed during the session")

// ErrRecordingInUse reports that another summit holds the recording's writer lock: its
// session is running, so it is not resumed (or reattached) from here.
var ErrRecordingInUse = errors.New("a running summit is recording it (its session has not stopped); resume it only after that summit has stopped")

// checkReplaced compares the file at the path with the file the recorder holds open: a
// recording that was swapped (a forged file renamed over it) must not be trusted.
func (r *Recorder) checkReplaced() error {
	f, ok := r.f.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return nil // not a file (a test's writer)
	}
	held, err := f.Stat()
	if err != nil {
		return nil
	}
	now, err := os.Stat(r.path)
	if err != nil || !os.SameFile(held, now) {
		return fmt.Errorf("%w: %s is not the file summit wrote (%d bytes were written to a file no longer at that path)", ErrRecordingReplaced, r.path, held.Size())
	}
	return nil
}

// mkdirPrivate creates dir and its missing parents and chmods each one it created to 0700.
func mkdirPrivate(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, d := range missing {
		if err := os.Chmod(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

func newRecorder(f recFile, path string, opts RecorderOptions) *Recorder {
	red := opts.Redactor
	if red == nil {
		env := opts.Environ
		if env == nil {
			env = os.Environ()
		}
		red = NewRedactor(env)
	}
	r := &Recorder{
		path: path,
		red:  red,
		f:    f,
		buf:  make([]byte, 0, 64<<10),
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	tick := opts.tick
	var ticker *time.Ticker
	if tick == nil {
		interval := opts.SyncInterval
		if interval <= 0 {
			interval = DefaultSyncInterval
		}
		ticker = time.NewTicker(interval)
		tick = ticker.C
		go r.syncLoop(tick, ticker, interval, opts.afterTick)
		return r
	}
	go r.syncLoop(tick, nil, 0, opts.afterTick)
	return r
}

// Redactor is the redactor the recorder applies to every line.
func (r *Recorder) Redactor() *Redactor { return r.red }

// Path is the recording's file name.
func (r *Recorder) Path() string { return r.path }

// IsLifecycle reports whether events of type t are fsynced as soon as they are appended:
// session start and end, subagent lifecycle, handoffs, convergences and conflicts — the
// events a post-mortem must find.
func IsLifecycle(t session.Type) bool {
	switch t {
	case session.TypeSessionStarted, session.TypeSessionEnded,
		session.TypeSubagentSpawned, session.TypeSubagentStop, session.TypeSubagentError, session.TypeSubagentTimeout, session.TypeSubagentCancelled,
		session.TypeHandoffInitiated, session.TypeHandoffComplete, session.TypeHandoffResolved,
		session.TypeConvergenceInitiated, session.TypeConvergenceComplete, session.TypeConflictDetected, session.TypeConflictResolved:
		return true
	}
	return false
}

// Append encodes ev, redacts secrets from the encoded line and buffers it (lifecycle events
// are written and fsynced at once). It returns the event as recorded: when redaction changed
// the line, the line is decoded again and that event is returned, so the caller folds exactly
// what a replay will read. V is set to SchemaVersion when zero and TS is normalised to UTC
// microseconds, as on disk.
//
// An event that cannot be encoded is refused and nothing is buffered; that error is not
// sticky. Write and fsync errors are (see Recorder).
func (r *Recorder) Append(ev session.Event) (session.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return session.Event{}, ErrRecorderClosed
	}
	if r.err != nil {
		return session.Event{}, r.err
	}
	start := len(r.buf)
	buf, ev, err := r.encode(r.buf, ev)
	if err != nil {
		r.buf = r.buf[:start]
		return session.Event{}, err
	}
	r.buf = buf
	if err := r.committedLocked(ev.Type); err != nil {
		return session.Event{}, err
	}
	return ev, nil
}

// Encode is the part of Append that depends only on ev: it appends ev's line to dst, exactly
// as Append would write it (encoded, secrets redacted, cut to MaxEventLine, hiding characters
// respelled), and returns the event as recorded. Nothing is buffered; AppendEncoded does
// that. Encode is safe for concurrent use (the Redactor is immutable), so a writer with many
// events (summit import) encodes them on every core and appends the lines in order: the file
// is byte for byte what Append would have written. On error dst is returned unchanged.
func (r *Recorder) Encode(dst []byte, ev session.Event) ([]byte, session.Event, error) {
	start := len(dst)
	out, ev, err := r.encode(dst, ev)
	if err != nil {
		return dst[:start], session.Event{}, err
	}
	return out, ev, nil
}

// AppendEncoded buffers a line Encode made for an event of type t (one whole line, its
// newline included), with Append's durability: a lifecycle event is written and fsynced
// before it returns. Lines must be appended in the order of their seq.
func (r *Recorder) AppendEncoded(line []byte, t session.Type) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRecorderClosed
	}
	if r.err != nil {
		return r.err
	}
	r.buf = append(r.buf, line...)
	return r.committedLocked(t)
}

// encode appends ev's line as recorded to buf and returns the event as recorded; on error
// buf may hold part of a line past its original length.
func (r *Recorder) encode(buf []byte, ev session.Event) ([]byte, session.Event, error) {
	if ev.Data != nil {
		if ev.Type == "" {
			ev.Type = ev.Data.Type()
		} else if ev.Type != ev.Data.Type() {
			return buf, session.Event{}, fmt.Errorf("record #%d: type %s does not match its %s data", ev.Seq, ev.Type, ev.Data.Type())
		}
	}
	if ev.Type == "" {
		return buf, session.Event{}, fmt.Errorf("record #%d: event has no type", ev.Seq)
	}
	if ev.V == 0 {
		ev.V = session.SchemaVersion
	}
	if ev.V != session.SchemaVersion {
		return buf, session.Event{}, fmt.Errorf("record #%d: schema version %d; this summit writes %d", ev.Seq, ev.V, session.SchemaVersion)
	}
	ev.TS = ev.TS.UTC().Truncate(time.Microsecond)

	start := len(buf)
	buf, at, err := appendLine(buf, ev)
	if err != nil {
		return buf, session.Event{}, fmt.Errorf("record %v: %w", ev, err)
	}
	line := buf[start:]
	red, changed, hide := r.red.redactLine(line, at)
	if len(red)-1 > MaxEventLine {
		// Nothing is written that a reader would refuse: cut the payload to fit, and the
		// caller folds (and shows) the event as cut.
		clipped, err := clipLine(red)
		if err != nil {
			return buf, session.Event{}, fmt.Errorf("record %v: %w", ev, err)
		}
		red, changed = clipped, true
	}
	// C1 controls, bidi controls and zero-width characters are written as JSON escapes: the
	// same value, but `tail -f` on a recording shows nothing raw that reorders or hides text.
	respelled := false
	if hide || changed && mayHideText(red) {
		if safe := session.SanitizeJSON(red); len(safe) != len(red) {
			red, respelled = safe, true
		}
	}
	if changed || ev.Data == nil {
		// The caller must fold what a replay reads: decode the line as written. (Nil data is
		// written as {} and reads back as the type's zero payload.) red is a fresh slice when
		// changed, so rewriting buf from start cannot clobber it.
		dec, err := DecodeLine(red)
		if err != nil {
			return buf, session.Event{}, fmt.Errorf("record %v: recorded line does not decode: %w", ev, err)
		}
		ev = dec
	}
	if changed || respelled || ev.Data == nil {
		buf = append(buf[:start], red...)
	}
	return buf, ev, nil
}

// committedLocked does what Append does once a line of type t is in r.buf: a lifecycle event
// is written and fsynced, a full buffer written, and the sync loop woken. r.mu is held.
func (r *Recorder) committedLocked(t session.Type) error {
	if r.held {
		r.heldSync = r.heldSync || IsLifecycle(t)
	} else if IsLifecycle(t) {
		if err := r.writeLocked(); err != nil {
			return err
		}
		if err := r.syncLocked(); err != nil {
			return err
		}
	} else if len(r.buf) >= flushThreshold {
		if err := r.writeLocked(); err != nil {
			return err
		}
	}
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	return nil
}

// Flush writes every buffered line to the kernel with one write call. Call it before the
// events appended so far are shown (see Recorder for the contract).
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRecorderClosed
	}
	return r.writeLocked()
}

// Hold keeps every line appended from now until Release in the buffer, lifecycle events
// included, and Release writes them with one write call (and fsyncs if a lifecycle event was
// among them): lines that must reach the file together or not at all. A runner's event and its
// RunnerCursor are such lines (session/live): a kill between two writes would record the one
// without the other. Hold writes out what was buffered before it, so a batch starts alone in
// the buffer.
func (r *Recorder) Hold() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRecorderClosed
	}
	err := r.writeLocked()
	r.held = true
	return err
}

// Release ends a Hold: what was appended since goes to the kernel in one write.
func (r *Recorder) Release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held = false
	if r.closed {
		return ErrRecorderClosed
	}
	err := r.writeLocked()
	if err == nil && r.heldSync {
		err = r.syncLocked()
	}
	r.heldSync = false
	return err
}

// writeLocked writes r.buf out (nothing while a Hold lasts). r.mu is held.
func (r *Recorder) writeLocked() error {
	if r.err != nil {
		return r.err
	}
	if len(r.buf) == 0 || r.held {
		return nil
	}
	n, err := r.f.Write(r.buf)
	if err == nil && n < len(r.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		r.err = fmt.Errorf("write recording %s: %w", r.path, err)
		return r.err
	}
	r.buf = r.buf[:0]
	r.dirty = true
	return nil
}

// syncLocked fsyncs the file. r.mu is held.
func (r *Recorder) syncLocked() error {
	if r.err != nil {
		return r.err
	}
	if err := r.f.Sync(); err != nil {
		r.err = fmt.Errorf("fsync recording %s: %w", r.path, err)
		return r.err
	}
	r.dirty = false
	r.syncs.Add(1)
	return nil
}

// syncLoop is the group fsync: on each tick it writes out what is buffered and fsyncs if
// anything was written since the last fsync. The fsync runs without r.mu so Append is not
// held up by the disk; Close stops the loop before it closes the file, so the file is open
// for the whole of every Sync here.
func (r *Recorder) syncLoop(tick <-chan time.Time, ticker *time.Ticker, interval time.Duration, afterTick func(bool)) {
	defer close(r.done)
	if ticker != nil {
		defer ticker.Stop()
	}
	for {
		select {
		case <-r.stop:
			return
		case <-r.wake:
			// Something was appended. A sleeping loop starts ticking again; a ticking one
			// needs nothing.
			if ticker != nil && tick == nil {
				ticker.Reset(interval)
				tick = ticker.C
			}
			continue
		case <-tick:
		}
		r.mu.Lock()
		_ = r.writeLocked() // an error is sticky and surfaces in the next call
		if r.dirty && r.err == nil && r.path != "" {
			// Written since the last tick: make sure it went to the file at the path. A
			// replaced recording fails the session now, not only at Close.
			if err := r.checkReplaced(); err != nil {
				r.err = err
			}
		}
		need := r.dirty && r.err == nil
		r.dirty = false // writes from here on are covered by the next tick
		// Nothing was buffered or written since the last tick: the loop sleeps until the next
		// Append wakes it, so an idle session does not wake ten times a second for nothing.
		// (Append signals wake under this same lock, so none is missed.)
		if ticker != nil && !need && len(r.buf) == 0 {
			ticker.Stop()
			tick = nil // a nil channel never fires
		}
		r.mu.Unlock()
		if need {
			if err := r.f.Sync(); err != nil {
				r.mu.Lock()
				if r.err == nil {
					r.err = fmt.Errorf("fsync recording %s: %w", r.path, err)
				}
				r.mu.Unlock()
				need = false
			} else {
				r.syncs.Add(1)
			}
		}
		if afterTick != nil {
			afterTick(need)
		}
	}
}

// Close writes what is buffered, fsyncs, stops the sync loop and closes the file. It returns
// the first error the recorder met, if any. It does not write SessionEnded: the orchestrator
// appends that itself. Close is idempotent; later calls return the same result.
func (r *Recorder) Close() error {
	r.closeOnce.Do(func() {
		close(r.stop)
		<-r.done
		r.mu.Lock()
		defer r.mu.Unlock()
		r.held = false // a Hold never outlives the recording
		err := r.writeLocked()
		if err == nil && (r.dirty || r.heldSync) {
			err = r.syncLocked()
		}
		if err == nil && r.path != "" {
			err = r.checkReplaced()
		}
		if cerr := r.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close recording %s: %w", r.path, cerr)
		}
		r.closed = true
		r.closeErr = err
	})
	return r.closeErr
}

// leads marks the bytes that start what SanitizeJSON respells in an encoded line: DEL, C1
// controls (0xC2 0x80–0x9F), U+061C (0xD8 0x9C), the zero-width and bidi controls of
// U+200B–U+2069 (0xE2 0x80/0x81 …) and U+FEFF (0xEF 0xBB 0xBF). The encoders escape C0 controls
// and invalid UTF-8 themselves.
var leads = [256]bool{0x7f: true, 0xc2: true, 0xd8: true, 0xe2: true, 0xef: true}

// mayHideText reports whether line may hold what SanitizeJSON respells (confirmed by it).
func mayHideText(line []byte) bool {
	for i := range line {
		if leads[line[i]] && mayHideAt(line, i) {
			return true
		}
	}
	return false
}

// mayHideAt reports whether the character at line[i] is one SanitizeJSON respells; the
// Redactor asks it at the bytes its table marks, in the pass it makes anyway.
func mayHideAt(line []byte, i int) bool {
	switch c := line[i]; {
	case c == 0x7f:
		return true
	case i+1 >= len(line):
	case c == 0xc2 && line[i+1] >= 0x80 && line[i+1] <= 0x9f, c == 0xd8 && line[i+1] == 0x9c:
		return true
	case i+2 >= len(line):
	case c == 0xe2 && line[i+1] == 0x80:
		t := line[i+2]
		return t >= 0x8b && t <= 0x8f || t >= 0xaa && t <= 0xae
	case c == 0xe2 && line[i+1] == 0x81:
		t := line[i+2]
		return t >= 0xa0 && t <= 0xa4 || t >= 0xa6 && t <= 0xa9
	case c == 0xef && line[i+1] == 0xbb && line[i+2] == 0xbf:
		return true
	}
	return false
}
