package render_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/record/recordgen"
	"github.com/summit-dev/summit/session/render"
)

// benchFile is the recording the reader benchmarks read: $SUMMIT_BENCH_RECORDING when set (for
// instance testdata/perf/gen.go's 512 MB file, as measure.sh reads), else a 128 MiB recording
// of recordgen's mix, written once per process into a temporary directory.
var benchFile = sync.OnceValues(func() (string, error) {
	if p := os.Getenv("SUMMIT_BENCH_RECORDING"); p != "" {
		return p, nil
	}
	dir, err := os.MkdirTemp("", "summit-render-bench-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "bench.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return path, recordgen.Generate(f, 128<<20, 1)
})

// BenchmarkReaders measures the two recording readers end to end on a file in the page cache,
// with the GC settings the commands run with (cmd/summit's boundReaderHeap):
//   - lines: read the file and count its newlines, the floor (what `wc -l` does): the
//     reference the others are quoted against, measured in the same run;
//   - inspect: `summit inspect`'s path, a FoldFile without text into a counting state
//     (State.SetCountOnly), then the metrics;
//   - print: `replay --print`'s path, a FoldFile through a TextSpool, printed to io.Discard.
//
// Issue 16 asks inspect for ≤ 6× and print for ≤ 15× the reference.
func BenchmarkReaders(b *testing.B) {
	path, err := benchFile()
	if err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(160 << 20))
	b.Run("lines", func(b *testing.B) {
		b.SetBytes(fi.Size())
		buf := make([]byte, 128<<10)
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				k, err := f.Read(buf)
				n += bytes.Count(buf[:k], []byte{'\n'})
				if err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
			if n == 0 {
				b.Fatal("no lines")
			}
		}
	})
	b.Run("inspect", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			st := &session.State{}
			st.SetCountOnly()
			if _, err := record.FoldFile(path, record.ReadOptions{NoText: true}, st, session.Apply); err != nil {
				b.Fatal(err)
			}
			if m := render.ComputeMetrics(st); m.Events == 0 {
				b.Fatal("no events")
			}
		}
	})
	b.Run("print", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			sp := render.NewTextSpool(0)
			st := &session.State{}
			if _, err := record.FoldFile(path, record.ReadOptions{}, st, sp.Apply); err != nil {
				b.Fatal(err)
			}
			if err := sp.Print(io.Discard, st); err != nil {
				b.Fatal(err)
			}
			sp.Close()
		}
	})
}
