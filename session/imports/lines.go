package imports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// srcLine is one non-blank line of a source file: its number (from 1) and bytes, newline
// and carriage return cut.
type srcLine struct {
	n int
	b []byte
	// last marks the file's last line when it has no newline: a tool killed mid-write leaves
	// such a torn line, which is skipped with a note rather than failing the file.
	last bool
	// at is where the line starts in the block readLinesBlocks passed to its block function
	// (0 for readLines).
	at int
}

// openRegular opens a source file for reading, refusing anything but a regular file: a named
// pipe or a device would block the import, or never end. The mode is checked before the open
// (which blocks on a FIFO with no writer), and again on the open file, opened non-blocking, in
// case the path was swapped between the two.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(fi)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = notRegular(fi)
		}
		return nil, nil, err
	}
	return f, fi, nil
}

// notRegular says what a path that is not a regular file is.
func notRegular(fi os.FileInfo) error {
	what := "not a regular file"
	switch m := fi.Mode(); {
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file: summit imports session files, which it reads whole"
	case m&os.ModeSocket != 0:
		what = "a socket, not a regular file"
	case m&os.ModeDevice != 0:
		what = "a device, not a regular file"
	case m.IsDir():
		what = "a folder, not a file"
	}
	return errors.New(what)
}

// readFile reads a source file whole, refusing files over MaxFileBytes.
func readFile(path string) ([]byte, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, lineErr(path, 0, "%v", unwrapPath(err))
	}
	defer f.Close()
	if fi.Size() > MaxFileBytes {
		return nil, lineErr(path, 0, "%d bytes is over the %d-byte cap of one source file", fi.Size(), int64(MaxFileBytes))
	}
	data := make([]byte, 0, fi.Size()+1)
	data, err = readAll(f, data)
	if err != nil {
		return nil, lineErr(path, 0, "%v", unwrapPath(err))
	}
	return data, nil
}

func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// decodeAll decodes every line into out[i] with decode, on every core: lines are independent,
// so only the mapping that follows (which needs order) runs on one goroutine. errs[i] is the
// decode error of line i, or nil.
func decodeAll[T any](lines []srcLine, out []T, decode func([]byte, *T) error) []error {
	errs := make([]error, len(lines))
	workers := runtime.GOMAXPROCS(0)
	if workers > len(lines)/64+1 {
		workers = len(lines)/64 + 1
	}
	// Lines differ in size by orders of magnitude, so workers take small batches from a
	// shared counter rather than one fixed share each.
	const batch = 32
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				lo := next
				next += batch
				mu.Unlock()
				if lo >= len(lines) {
					return
				}
				for i := lo; i < min(lo+batch, len(lines)); i++ {
					errs[i] = decode(lines[i].b, &out[i])
				}
			}
		}()
	}
	wg.Wait()
	return errs
}

// jsonMsg shortens a decoder error to what a person can act on.
func jsonMsg(err error) string {
	var se *json.SyntaxError
	if ok := asSyntax(err, &se); ok {
		return fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, se.Error())
	}
	var ue *json.UnmarshalTypeError
	if ok := asType(err, &ue); ok {
		return fmt.Sprintf("field %q is a JSON %s, not the %s it should be", ue.Field, ue.Value, ue.Type)
	}
	return "malformed JSON: " + err.Error()
}

func asSyntax(err error, t **json.SyntaxError) bool {
	se, ok := err.(*json.SyntaxError)
	if ok {
		*t = se
	}
	return ok
}

func asType(err error, t **json.UnmarshalTypeError) bool {
	ue, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*t = ue
	}
	return ok
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// partsText reads content both Claude Code and Codex write as a string or as a list of
// {type, text} parts: the string, or the parts' texts a line each, a part without text kept
// as "[imported: <type> content]". Anything else reads as empty.
func partsText(b []byte) (string, error) {
	switch {
	case len(b) > 0 && b[0] == '"':
		return jsonString(b)
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return "", err
		}
		var sb strings.Builder
		for _, p := range parts {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			switch {
			case p.Text != "" || p.Type == "text":
				sb.WriteString(p.Text)
			case p.Type != "":
				sb.WriteString("[imported: " + p.Type + " content]")
			}
		}
		return sb.String(), nil
	}
	return "", nil
}

// readBlock is how much of a source file is read at a time: the lines in one block are
// decoded (on every core) while the previous block's are mapped, so about three blocks of
// source and their decoded structs are alive at once, whatever the file's size.
const readBlock = 1 << 20

// decoded is one block of decoded lines.
type decoded[T any] struct {
	buf   []byte // the block the lines are in, reused once they are mapped
	lines []srcLine
	out   []T
	errs  []error
	err   error // reading the file failed here
}

// readLines reads the file at path a block at a time, decodes its non-blank lines into T on
// every core, and calls each with every line in order (err: the line's decode error). Reading
// and decoding run ahead of each by one block. A line over MaxLineBytes, a file over
// MaxFileBytes or a read error stops it with that error.
func readLines[T any](path string, decode func([]byte, *T) error, each func(ln srcLine, l *T, err error) error) error {
	return readLinesBlocks(path, decode, nil, each)
}

// readLinesBlocks is readLines, and first calls block (when not nil) with each block's lines,
// the bytes from the start of its first line to the end of its last: a reader that keeps
// lines to read again (Gemini's) spools them a block at a time, and each line's at is where
// it starts in that block.
func readLinesBlocks[T any](path string, decode func([]byte, *T) error, block func([]byte) error, each func(ln srcLine, l *T, err error) error) error {
	f, fi, err := openRegular(path)
	if err != nil {
		return lineErr(path, 0, "%v", unwrapPath(err))
	}
	defer f.Close()
	if fi.Size() > MaxFileBytes {
		return lineErr(path, 0, "%d bytes is over the %d-byte cap of one source file", fi.Size(), int64(MaxFileBytes))
	}
	ch := make(chan decoded[T], 1)
	free := make(chan []byte, 3) // blocks whose lines are mapped (decoding copies what it keeps)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(ch)
		send := func(d decoded[T]) bool {
			select {
			case ch <- d:
				return true
			case <-stop:
				return false
			}
		}
		var carry []byte // the start of a line the last block cut
		n := 0           // lines so far
		var total int64
		for eof := false; !eof; {
			var buf []byte
			select {
			case buf = <-free:
			default:
			}
			if want := max(readBlock, 2*len(carry)); cap(buf) < want {
				buf = make([]byte, 0, want)
			}
			buf = buf[:len(carry)]
			copy(buf, carry) // carry may lie in buf itself: copy moves overlapping bytes right
			for len(buf) < cap(buf) {
				k, err := f.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+k]
				total += int64(k)
				if err == io.EOF {
					eof = true
					break
				}
				if err != nil {
					send(decoded[T]{err: lineErr(path, 0, "%v", unwrapPath(err))})
					return
				}
			}
			if total > MaxFileBytes {
				send(decoded[T]{err: lineErr(path, 0, "over the %d-byte cap of one source file", int64(MaxFileBytes))})
				return
			}
			data := buf
			if !eof {
				i := bytes.LastIndexByte(buf, '\n')
				if i < 0 {
					if len(buf) > MaxLineBytes {
						send(decoded[T]{err: lineErr(path, n+1, "a line of over %d bytes is over the %d-byte cap", len(buf), MaxLineBytes)})
						return
					}
					carry = buf // a longer line than the block: read on with a bigger one
					continue
				}
				data, carry = buf[:i+1], buf[i+1:]
			} else {
				carry = nil
			}
			var lines []srcLine
			lines, n, err = splitFrom(path, data, n, eof)
			if err != nil {
				send(decoded[T]{err: err})
				return
			}
			d := decoded[T]{buf: buf, lines: lines, out: make([]T, len(lines))}
			d.errs = decodeAll(lines, d.out, decode)
			if !send(d) {
				return
			}
		}
	}()
	for d := range ch {
		if d.err != nil {
			return d.err
		}
		if block != nil && len(d.lines) > 0 {
			// Every line is a slice of d.buf, so where it starts is told by its capacity.
			start := func(l []byte) int { return cap(d.buf) - cap(l) }
			first, last := d.lines[0].b, d.lines[len(d.lines)-1].b
			lo := start(first)
			if err := block(d.buf[lo : start(last)+len(last)]); err != nil {
				return err
			}
			for i := range d.lines {
				d.lines[i].at = start(d.lines[i].b) - lo
			}
		}
		for i := range d.lines {
			if err := each(d.lines[i], &d.out[i], d.errs[i]); err != nil {
				return err
			}
		}
		select {
		case free <- d.buf:
		default:
		}
	}
	return nil
}

// splitFrom cuts a block into its non-blank lines, numbering them on from n (the lines before
// the block); the block's last line is the file's last when eof. It returns the new count.
func splitFrom(path string, data []byte, n int, eof bool) ([]srcLine, int, error) {
	// Sized once (counting is a vector scan): growing it line by line copied it ~log2(lines)
	// times a block.
	lines := make([]srcLine, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		n++
		i := bytes.IndexByte(data, '\n')
		var l []byte
		last := false
		if i < 0 {
			l, data, last = data, nil, eof
		} else {
			l, data = data[:i], data[i+1:]
		}
		if len(l) > MaxLineBytes {
			return nil, n, lineErr(path, n, "a line of %d bytes is over the %d-byte cap", len(l), MaxLineBytes)
		}
		l = bytes.TrimRight(l, "\r")
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		lines = append(lines, srcLine{n: n, b: l, last: last})
	}
	return lines, n, nil
}

// jsonString decodes a JSON string value. One with nothing to unescape (no backslash, no
// control character, valid UTF-8: most tool output) is its bytes between the quotes, without
// a second pass of the decoder.
func jsonString(b []byte) (string, error) {
	if n := len(b); n >= 2 && b[n-1] == '"' {
		in := b[1 : n-1]
		plain := utf8.Valid(in)
		for _, c := range in {
			if c == '\\' || c == '"' || c < 0x20 {
				plain = false
				break
			}
		}
		if plain {
			return string(in), nil
		}
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}
