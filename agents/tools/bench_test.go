package tools

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// benchFileSize is the size of the file the ranged-read benchmarks read: big enough that
// reading all of it dominates, as with the 133 MB file of the audit.
const benchFileSize = 64 << 20

// writeBenchFile writes a text file of benchFileSize bytes of 80-byte lines (838,861 lines).
func writeBenchFile(b *testing.B, path string) int {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	lines := 0
	for n := 0; n < benchFileSize; n += 80 {
		fmt.Fprintf(w, "%08d %s\n", lines, strings.Repeat("abcdefghij", 7)[:70])
		lines++
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return lines
}

// BenchmarkReadFileRange compares a ranged read_file near the start of a 64 MB file with the
// cost of the behaviour it replaced, which read the whole file to count its lines for the
// header ("old-whole-file", the former loop, kept below), and with a range near the end (the
// new code reads up to the range, so its cost grows with the offset).
//
//	go test -run '^$' -bench ReadFileRange -count 5 ./agents/tools/
func BenchmarkReadFileRange(b *testing.B) {
	dir := b.TempDir()
	lines := writeBenchFile(b, filepath.Join(dir, "big.txt"))
	s, err := New(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	near := `{"path": "big.txt", "offset": 1000, "limit": 100}`
	b.Run("new-near-start", func(b *testing.B) {
		for b.Loop() {
			if r := s.Call(ctx, "read_file", near); r.IsError || !strings.HasPrefix(r.Output, "[big.txt: lines 1001-1100; more follow") {
				b.Fatalf("%.100q", r.Output)
			}
		}
	})
	b.Run("old-whole-file", func(b *testing.B) {
		want := fmt.Sprintf("[big.txt: lines 1001-1100 of %d]", lines)
		for b.Loop() {
			if out, err := oldRangedRead(ctx, filepath.Join(dir, "big.txt"), "big.txt", 1000, 100, 64<<10); err != nil || !strings.HasPrefix(out, want) {
				b.Fatalf("%v %.100q", err, out)
			}
		}
	})
	far := fmt.Sprintf(`{"path": "big.txt", "offset": %d, "limit": 100}`, lines-200)
	b.Run("new-near-end", func(b *testing.B) {
		for b.Loop() {
			if r := s.Call(ctx, "read_file", far); r.IsError || !strings.Contains(r.Output, "; more follow") {
				b.Fatalf("%.100q", r.Output)
			}
		}
	})
}

// oldRangedRead is the ranged read_file this package had before it stopped at the end of the
// range: the same buffer and sniffing, then every line of the file read to count them for
// the header "lines X-Y of N".
func oldRangedRead(ctx context.Context, path, rel string, offset, limit, maxResult int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF {
		return "", err
	}
	if looksBinary(head) {
		return "", fmt.Errorf("binary")
	}
	out := capBuf{max: maxResult + utf8.UTFMax}
	end := offset + limit
	line, partial := 0, false
	for i := 0; ; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if line >= offset && line < end {
				out.Write(chunk)
			}
			if partial = chunk[len(chunk)-1] != '\n'; !partial {
				line++
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if partial {
		line++
	}
	header := fmt.Sprintf("[%s: lines %d-%d of %d]\n", rel, offset+1, min(end, line), line)
	return header + clip(string(out.buf), out.n, maxResult), nil
}
