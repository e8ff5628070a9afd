package record

import (
	"bytes"
	"testing"

	"github.com/summit-dev/summit/session"
)

// BenchmarkDecode measures decoding throughput (MB/s of recording) on the ~200 MB generated
// recording of BenchmarkIndex (the realistic mix), in memory:
//   - ForEach: the parallel pipeline the CLI reads with (replay --print, LoadFile), every
//     event decoded whole, GOMAXPROCS workers; target ≥ 450 MB/s on two cores;
//   - ForEach/NoText: the same without transcript text (inspect);
//   - Chunk, Chunk/NoText: one worker's decoding, on one goroutine (the per-core rate);
//   - DecodeLine: line by line on one goroutine, as Index.ReadRange decodes what replay shows.
func BenchmarkDecode(b *testing.B) {
	data := benchRecording()
	events := bytes.Count(data, []byte("\n"))
	for _, opts := range []struct {
		name string
		ReadOptions
	}{{"ForEach", ReadOptions{}}, {"ForEach/NoText", ReadOptions{NoText: true}}} {
		b.Run(opts.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				if _, err := ForEach(bytes.NewReader(data), opts.ReadOptions, func(session.Event) error { n++; return nil }); err != nil || n != events {
					b.Fatal(err, n)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
	for _, noText := range []bool{false, true} {
		name := "Chunk"
		if noText {
			name += "/NoText"
		}
		b.Run(name, func(b *testing.B) {
			d := newLineDecoder(noText, true)
			d.useArena = true // as in the pipeline
			var out batch
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				for rest := data; len(rest) > 0; {
					n := min(len(rest), defaultChunk)
					if i := bytes.LastIndexByte(rest[:n], '\n'); i >= 0 && n < len(rest) {
						n = i + 1
					}
					clear(out.lines)
					out.lines = out.lines[:0]
					d.decodeChunk(rest[:n], n == len(rest), &out)
					rest = rest[n:]
				}
			}
		})
	}
	b.Run("DecodeLine", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			for rest := data; len(rest) > 0; {
				n := bytes.IndexByte(rest, '\n') + 1
				if _, err := DecodeLine(rest[:n]); err != nil {
					b.Fatal(err)
				}
				rest = rest[n:]
			}
		}
	})
}
