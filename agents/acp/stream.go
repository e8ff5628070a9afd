package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/session"
)

// DefaultMaxLine is the longest JSON-RPC line an agent may write (8 MiB): below the SDK's own
// 10 MiB scanner limit, so a longer line is refused here with a message that says so instead
// of ending the connection without one.
const DefaultMaxLine = 8 << 20

// lineGuard stands between the agent's stdout and the SDK's reader. It passes whole lines,
// one per Read, and stops the stream at the first line that is not a JSON object (the SDK
// would log and skip it, and a confused agent would then hang the turn) or that is longer than
// max (read no further than the cap). It also counts the session/update notifications it
// passed that the SDK will hand to the client, so a request handler can wait until the
// updates sent before it have been recorded (see barrier).
//
// Invariant: Read returns bytes of at most one line per call, so the SDK's scanner never
// reads ahead of the line it is about to handle.
type lineGuard struct {
	r   *bufio.Reader
	max int
	out []byte // the rest of the current line, to serve
	// ready gates the first Read until the connection is set up (its logger installed), so
	// nothing the agent writes early races with the SDK's configuration.
	ready chan struct{}

	mu      sync.Mutex
	err     error         // why the stream was stopped; nil while it is fine
	bad     chan struct{} // closed when err is set
	updates uint64        // session/update notifications passed
}

func newLineGuard(r io.Reader, max int) *lineGuard {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &lineGuard{r: bufio.NewReaderSize(r, 64<<10), max: max, bad: make(chan struct{}), ready: make(chan struct{})}
}

// open lets Read start.
func (g *lineGuard) open() { close(g.ready) }

// BadOutput is why an agent's stdout was refused.
type BadOutput struct{ Msg string }

func (e *BadOutput) Error() string { return e.Msg }

func (g *lineGuard) Read(p []byte) (int, error) {
	<-g.ready
	for len(g.out) == 0 {
		line, err := g.readLine()
		if len(line) > 0 {
			if w := wrapChildUpdate(line); w != nil {
				// A child session's update, which the SDK cannot decode: handed over in a
				// form it can, in its place in the stream (child.go).
				line = w
			}
			if ferr := g.check(line); ferr != nil {
				return 0, ferr
			}
			g.out = line
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, g.out)
	g.out = g.out[n:]
	return n, nil
}

// readLine reads one line with its newline (a last line without one gets it), at most max
// bytes of it; a longer line stops the stream.
func (g *lineGuard) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := g.r.ReadSlice('\n')
		if len(line)+len(chunk) > g.max {
			return nil, g.fail(fmt.Sprintf("the agent wrote a line of more than %d bytes on stdout (the limit of one JSON-RPC message); it starts %s",
				g.max, quote(append(line, chunk...))))
		}
		line = append(line, chunk...)
		switch err {
		case nil:
			return line, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(line) > 0 {
				line = append(line, '\n')
			}
			return line, io.EOF
		default:
			return line, err
		}
	}
}

// check refuses a line that is not a JSON object and counts the updates.
func (g *lineGuard) check(line []byte) error {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil
	}
	if t[0] != '{' || !json.Valid(t) {
		return g.fail("the agent wrote something that is not JSON-RPC on stdout: " + quote(t))
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(t, &env) == nil && env.ID == nil && env.Method == sdk.ClientMethodSessionUpdate {
		// The SDK calls the client only for params it can decode; count exactly those.
		var n sdk.SessionNotification
		if json.Unmarshal(env.Params, &n) == nil {
			g.mu.Lock()
			g.updates++
			g.mu.Unlock()
		}
	}
	return nil
}

func (g *lineGuard) fail(msg string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = &BadOutput{Msg: msg}
		close(g.bad)
	}
	return g.err
}

// Err is why the stream was stopped, or nil.
func (g *lineGuard) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Updates counts the session/update notifications passed so far.
func (g *lineGuard) Updates() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.updates
}

// quote shows the start of what an agent wrote: at most 120 bytes, as a Go string.
func quote(b []byte) string {
	const n = 120
	if len(b) <= n {
		return fmt.Sprintf("%q", b)
	}
	cut := n
	for cut > n-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", b[:cut])
}

// tail keeps the last bytes written to it (an agent's stderr): memory stays bounded whatever
// the agent writes.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool // something before buf was dropped
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the tail as whole lines: the first, partial line is dropped when earlier output
// was, and the text is valid UTF-8.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	s := strings.ToValidUTF8(strings.TrimRight(string(b), "\n"), "\uFFFD")
	if t.cut && s != "" {
		s = "…\n" + s
	}
	return s
}

// maxNotes bounds the stderr lines shown as transcript notes in one run (the tail keeps the
// last lines whatever the count); maxNoteLine bounds one note.
const (
	maxNotes    = 200
	maxNoteLine = 400
)

// stderrLines is the agent's stderr: kept in the tail, and each whole line shown live in the
// transcript as a note ("stderr: …"), sanitised (no control, bidi or zero-width characters;
// the session redacts secrets from every event it records). A line that says error marks the
// run's last error for the watchdog (client.stall). Lines written before the client exists
// wait for it.
type stderrLines struct {
	tail *tail

	mu      sync.Mutex
	cl      *client
	partial []byte
	early   []string
	shown   int
}

func (s *stderrLines) Write(p []byte) (int, error) {
	s.tail.Write(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.lineLocked(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	if len(s.partial) > maxNoteLine*4 { // a line without end: shown in pieces
		s.lineLocked(string(s.partial))
		s.partial = nil
	}
	return len(p), nil
}

// start hands the lines to the client, those written so far first.
func (s *stderrLines) start(cl *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cl = cl
	for _, l := range s.early {
		s.noteLocked(l)
	}
	s.early = nil
}

func (s *stderrLines) lineLocked(line string) {
	line = strings.TrimSpace(session.Sanitize(strings.ToValidUTF8(line, "\uFFFD")))
	if line == "" {
		return
	}
	if r := []rune(line); len(r) > maxNoteLine {
		line = string(r[:maxNoteLine]) + "…"
	}
	if s.cl == nil {
		if len(s.early) < maxNotes {
			s.early = append(s.early, line)
		}
		return
	}
	s.noteLocked(line)
}

func (s *stderrLines) noteLocked(line string) {
	s.shown++
	switch {
	case s.shown < maxNotes:
		s.cl.stderrNote("stderr: "+line, errorLine(line))
	case s.shown == maxNotes:
		s.cl.stderrNote(fmt.Sprintf("stderr: more than %d lines; only the last of them are kept, for the error report", maxNotes), false)
	}
	if s.shown >= maxNotes && errorLine(line) {
		s.cl.mu.Lock()
		s.cl.sawErrorLocked(line, false)
		s.cl.mu.Unlock()
	}
}

// errorLine reports a stderr line that says the agent hit an error.
func errorLine(line string) bool {
	l := strings.ToLower(line)
	return strings.Contains(l, "error") || strings.Contains(l, "econnrefused") || strings.Contains(l, "failed")
}
