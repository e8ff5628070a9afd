package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sniffLen is how much of a file decides whether it is binary.
const sniffLen = 8 << 10

// looksBinary reports whether head, the start of a file, is not text: it holds a NUL byte, or
// more than a tenth of it is invalid UTF-8 (a few stray Latin-1 bytes still pass as text and
// reach the model as U+FFFD). A rune cut at the end of head does not count.
func looksBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 {
			if !utf8.FullRune(head[i:]) {
				break
			}
			bad++
		}
		i += n
	}
	return bad*10 > len(head)
}

func readFile(ctx context.Context, s *Sandbox, a args) Result {
	arg := a.str("path")
	offset, hasOff := a.int("offset")
	limit, hasLim := a.int("limit")
	switch {
	case offset < 0:
		return errResult("read_file: offset must be 0 or more, got %d", offset)
	case hasLim && limit < 1:
		return errResult("read_file: limit must be 1 or more, got %d", limit)
	}
	rel, err := s.resolve(arg)
	if err != nil {
		return errResult("read_file: %v", err)
	}
	root, err := s.openRoot()
	if err != nil {
		return errResult("read_file: %v", err)
	}
	defer root.Close()
	f, st, err := openContent(root, rel, arg)
	if err != nil {
		return errResult("read_file: %v", err)
	}
	defer f.Close()
	ranged := hasOff || hasLim
	if !ranged && st.Size() > s.o.MaxRead {
		return errResult("read_file: %s is %d bytes, over the read limit of %d bytes; read it in ranges with offset and limit",
			arg, st.Size(), s.o.MaxRead)
	}
	// Everything streams through one buffer: memory stays bounded whatever the file's size
	// or line lengths, and only the first MaxResult bytes of the text shown are kept.
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF {
		return errResult("read_file: %v", fileErr(arg, err))
	}
	if looksBinary(head) {
		return errResult("read_file: %s is a binary file (%d bytes)", arg, st.Size())
	}
	out := capBuf{max: s.o.MaxResult + utf8.UTFMax}
	if !ranged {
		if _, err := io.Copy(&out, br); err != nil {
			return errResult("read_file: %v", fileErr(arg, err))
		}
		return Result{Output: clip(string(out.buf), out.n, s.o.MaxResult)}
	}
	end := math.MaxInt
	if hasLim {
		end = offset + limit // both ≤ 2^53: no overflow
	}
	// Only the lines up to the end of the range are read: those before it are counted in
	// whole buffers without being looked at one by one, and nothing after it is read, so the
	// cost is that of the range's position, not of the file's size.
	line, atEOF, err := skipLines(ctx, br, offset)
	if err != nil {
		return errResult("read_file: %v", fileErr(arg, err))
	}
	switch {
	case atEOF && line == 0 && offset == 0:
		return Result{Output: fmt.Sprintf("[%s: empty file]", rel)}
	case atEOF:
		return errResult("read_file: offset %d is past the end of %s (%d lines)", offset, arg, line)
	}
	// The output holds whole lines: a line that would not fit in MaxResult ends the range
	// before it, and the header says where to continue. Only a first line (or a line longer
	// than the read buffer) is cut, with the truncation marker.
	inLine := false // part of line has been read, not its end
	more := false   // a line after the range has been read already
	for i := 0; !atEOF && line < end; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return errResult("read_file: %v", ctx.Err())
		}
		chunk, err := br.ReadSlice('\n')
		if (err == nil || err == io.EOF) && !inLine && line > offset && out.n+int64(len(chunk)) > int64(s.o.MaxResult) {
			more = true
			break
		}
		out.Write(chunk)
		switch err {
		case nil:
			line, inLine = line+1, false
		case bufio.ErrBufferFull: // a line longer than the buffer: keep going
			inLine = true
		case io.EOF:
			if len(chunk) > 0 || inLine { // a last line without a newline
				line++
			}
			atEOF = true
		default:
			return errResult("read_file: %v", fileErr(arg, err))
		}
		if err == nil && out.n > int64(s.o.MaxResult) {
			break // the output is full: the lines after this one would not be shown
		}
		if out.n > int64(s.o.MaxResult)+countAhead {
			// A line that goes on and on: stop counting it.
			text := string(out.buf)
			cut := runeCut(text, s.o.MaxResult)
			return Result{Output: fmt.Sprintf("[%s: lines %d-%d, the last one cut; continue with offset %d]\n", rel, offset+1, line+1, line+1) +
				text[:cut] + fmt.Sprintf("\n[... truncated: more than %d bytes total, showing the first %d]", out.n, cut)}
		}
	}
	if !atEOF && !more {
		// Whether anything follows is one byte away; how much does not matter.
		if _, err := br.Peek(1); err == io.EOF {
			atEOF = true
		} else if err != nil {
			return errResult("read_file: %v", fileErr(arg, err))
		}
	}
	header := fmt.Sprintf("[%s: lines %d-%d of %d]\n", rel, offset+1, line, line)
	if !atEOF || more {
		header = fmt.Sprintf("[%s: lines %d-%d; more follow, continue with offset %d]\n", rel, offset+1, line, line)
	}
	return Result{Output: header + clip(string(out.buf), out.n, s.o.MaxResult)}
}

// countAhead is how far a ranged read_file reads on past a full output to finish the line it
// was showing, so the truncation marker can give that line's size; a longer line is cut
// there and the marker says "more than".
const countAhead = 16 << 20

// skipLines reads past the first n lines of br (a last line without a newline counts) and
// returns how many it passed, fewer when the input ended first (then atEOF is set; it is also
// set when exactly n lines make the whole input). It counts newlines a buffer at a time.
func skipLines(ctx context.Context, br *bufio.Reader, n int) (skipped int, atEOF bool, err error) {
	inLine := false // bytes of an unfinished line have been passed
	for chunks := 0; ; chunks++ {
		if chunks%64 == 0 && ctx.Err() != nil {
			return skipped, false, ctx.Err()
		}
		buf, err := br.Peek(max(br.Buffered(), 1))
		if err == io.EOF {
			if inLine {
				skipped++
			}
			return skipped, true, nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return skipped, false, err
		}
		if skipped == n {
			return skipped, false, nil
		}
		if c := bytes.Count(buf, []byte{'\n'}); skipped+c < n {
			skipped += c
			inLine = buf[len(buf)-1] != '\n'
			br.Discard(len(buf))
			continue
		}
		i := 0
		for skipped < n {
			i += bytes.IndexByte(buf[i:], '\n') + 1
			skipped++
		}
		br.Discard(i)
		inLine = false
	}
}

// writeAtomic replaces rel with data through a temporary file in the same directory and a
// rename, so a reader sees the old content or the new, never a mix, and a failed write leaves
// the old file alone. An existing file keeps its permission bits; a new one gets 0644 and
// missing parent directories 0755. Every step goes through root, so nothing lands outside.
// There is no fsync: the aim is atomicity towards other readers, not crash durability.
func writeAtomic(root *os.Root, rel string, data []byte) error {
	mode := fs.FileMode(0o644)
	switch st, err := root.Stat(rel); {
	case err == nil && st.IsDir():
		return errors.New("is a directory")
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("is not a regular file (%s)", st.Mode().Type())
	case err == nil:
		mode = st.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := path.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// A random name and O_EXCL: never an existing file, nor one another call is writing.
	tmp := path.Join(dir, fmt.Sprintf(".summit-%016x.tmp", rand.Uint64()))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode) // fchmod on the open file: not subject to umask, no race
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

func writeFile(_ context.Context, s *Sandbox, a args) Result {
	arg, content := a.str("path"), a.str("content")
	rel, err := s.resolve(arg)
	if err != nil {
		return errResult("write_file: %v", err)
	}
	if rel == "." {
		return errResult("write_file: %s is the workspace root, not a file", arg)
	}
	root, err := s.openRoot()
	if err != nil {
		return errResult("write_file: %v", err)
	}
	defer root.Close()
	verb := "created"
	if _, err := root.Lstat(rel); err == nil {
		verb = "overwrote"
	}
	if err := writeAtomic(root, rel, []byte(content)); err != nil {
		return errResult("write_file: %v", fileErr(arg, err))
	}
	return Result{Output: fmt.Sprintf("%s %s (%d bytes)", verb, rel, len(content)), Written: []string{rel}}
}

func replaceTool(_ context.Context, s *Sandbox, a args) Result {
	arg, old, repl := a.str("path"), a.str("old_string"), a.str("new_string")
	want := 1
	if n, ok := a.int("expected_replacements"); ok {
		want = n
	}
	switch {
	case old == "":
		return errResult("replace: old_string is empty; use write_file to create or overwrite a whole file")
	case want < 1:
		return errResult("replace: expected_replacements must be 1 or more, got %d", want)
	case old == repl:
		return errResult("replace: old_string and new_string are the same; nothing would change")
	}
	rel, err := s.resolve(arg)
	if err != nil {
		return errResult("replace: %v", err)
	}
	root, err := s.openRoot()
	if err != nil {
		return errResult("replace: %v", err)
	}
	defer root.Close()
	f, st, err := openContent(root, rel, arg)
	if err != nil {
		return errResult("replace: %v", err)
	}
	if st.Size() > s.o.MaxRead {
		f.Close()
		return errResult("replace: %s is %d bytes, over the limit of %d bytes for editing", arg, st.Size(), s.o.MaxRead)
	}
	// A file that grows past the limit after the check is not read past it.
	data, err := io.ReadAll(io.LimitReader(f, s.o.MaxRead+1))
	f.Close()
	if err != nil {
		return errResult("replace: %v", fileErr(arg, err))
	}
	if int64(len(data)) > s.o.MaxRead {
		return errResult("replace: %s is over the limit of %d bytes for editing", arg, s.o.MaxRead)
	}
	if looksBinary(data[:min(len(data), sniffLen)]) {
		return errResult("replace: %s is a binary file (%d bytes)", arg, len(data))
	}
	text := string(data)
	switch found := strings.Count(text, old); {
	case found == 0:
		msg := "replace: old_string not found in " + arg
		if line := looseLine(text, old); line > 0 {
			msg += fmt.Sprintf("; it matches at line %d if whitespace is normalised: copy the exact text, "+
				"indentation and line breaks included", line)
		}
		return Result{Output: msg, IsError: true}
	case found != want:
		return errResult("replace: found %d occurrences of old_string in %s, expected %d; add surrounding "+
			"lines to old_string to pick one, or set expected_replacements to %d to replace them all", found, arg, want, found)
	}
	if err := writeAtomic(root, rel, []byte(strings.ReplaceAll(text, old, repl))); err != nil {
		return errResult("replace: %v", fileErr(arg, err))
	}
	return Result{Output: fmt.Sprintf("replaced %d occurrence(s) in %s", want, rel), Written: []string{rel}}
}

// looseLine looks for old in text with every run of whitespace taken as one space and old's
// outer whitespace dropped, and returns the 1-based line of text where the match starts, or 0.
func looseLine(text, old string) int {
	needle, _ := squeeze(strings.TrimSpace(old), -1)
	if needle == "" {
		return 0
	}
	hay, _ := squeeze(text, -1)
	i := strings.Index(hay, needle)
	if i < 0 {
		return 0
	}
	_, line := squeeze(text, i)
	return line
}

// squeeze collapses each run of whitespace in s to one space and drops leading whitespace.
// When stop ≥ 0 it also returns the 1-based line of s that byte stop of the result comes from.
func squeeze(s string, stop int) (string, int) {
	var b strings.Builder
	line, space := 1, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if r == '\n' {
				line++
			}
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if b.Len() >= stop && stop >= 0 {
			return "", line
		}
		b.WriteRune(r)
	}
	return b.String(), 0
}
