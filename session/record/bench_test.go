package record

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// benchEvents is a realistic event mix (see mixEvent), stamped like the orchestrator does.
func benchEvents(n int) []session.Event {
	rng := rand.New(rand.NewPCG(42, 42))
	ts := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	evs := make([]session.Event, n)
	for i := range evs {
		ts = ts.Add(time.Duration(rng.IntN(30000)) * time.Microsecond)
		e := mixEvent(rng, uint64(i+1))
		e.Seq, e.TS, e.SessionID = uint64(i+1), ts, "s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA"
		evs[i] = e
	}
	return evs
}

// BenchmarkRecorder measures recording throughput the way the orchestrator records: Append a
// frame's worth of events (64), then Flush, with the 100 ms group fsync running. The mix is
// mostly short token deltas with some tool calls and results (see mixEvent); a lifecycle event,
// which Append fsyncs before it returns (~0.35 ms on this machine's disk), comes every
// 4096 events (a subagent's spawn and stop bracket thousands of streamed deltas), every 1024
// (a pessimistic mix of short subagents), or never (the cost of everything but those fsyncs).
// The environment holds a few secrets, so redaction does its real work. One op records 1<<16
// events into a new file. Target: ≥ 800k events/s. The flush=each case is what a live session
// does (see Orchestrator.emit): every event is written before it is shown.
func BenchmarkRecorder(b *testing.B) {
	for _, every := range []int{4096, 1024, 0} {
		name := "lifecycle=none"
		if every > 0 {
			name = fmt.Sprintf("lifecycle=1in%d", every)
		}
		b.Run(name, func(b *testing.B) { benchRecorder(b, every, 64) })
	}
	// The orchestrator's path: Flush after every event, so each one is in the kernel before
	// anything shows it (one write syscall per event).
	b.Run("lifecycle=1in4096/flush=each", func(b *testing.B) { benchRecorder(b, 4096, 1) })
}

func benchRecorder(b *testing.B, lifecycleEvery, flushEvery int) {
	const perOp = 1 << 16
	evs := benchEvents(perOp)
	var size int
	for i, e := range evs {
		var d session.Data
		switch {
		case lifecycleEvery > 0 && i%lifecycleEvery == lifecycleEvery-1:
			d = session.SubagentStop{Outcome: session.OutcomeSuccess, ToolInvocationCount: 3, DurationMS: 8461, Tokens: session.Tokens{Input: 5210, Output: 640}}
		case IsLifecycle(e.Type):
			d = session.SubagentActive{InitialState: "running"}
		}
		if d != nil {
			e.Type, e.Data = d.Type(), d
			evs[i] = e
		}
		line, _ := AppendLine(nil, e)
		size += len(line)
	}
	env := []string{"OPENAI_API_KEY=" + fakeOpenAI, "GITHUB_TOKEN=" + fakeGHP, "DB_PASSWORD=correct-horse-battery", "HOME=/home/dev", "TERM=xterm-256color"}
	red := NewRedactor(env)
	dir := b.TempDir()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var elapsed time.Duration
	run := 0
	for b.Loop() {
		run++
		r, err := OpenRecorder(dir, fmt.Sprintf("s-bench-%d", run), RecorderOptions{Redactor: red})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for i, e := range evs {
			if _, err := r.Append(e); err != nil {
				b.Fatal(err)
			}
			if i%flushEvery == flushEvery-1 {
				if err := r.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		os.Remove(r.Path())
	}
	b.ReportMetric(float64(run*perOp)/elapsed.Seconds(), "events/s")
}

// BenchmarkRedact measures the redaction scan the recorder runs on every event, on the
// realistic mix with a few secret environment values and no secret in the text (the common
// case: every byte scanned, nothing replaced). One op scans 4096 lines from their data key.
func BenchmarkRedact(b *testing.B) {
	evs := benchEvents(4096)
	lines := make([][]byte, len(evs))
	var size int
	for i, e := range evs {
		lines[i], _ = AppendLine(nil, e)
		size += len(lines[i])
	}
	r := NewRedactor([]string{"OPENAI_API_KEY=" + fakeOpenAI, "GITHUB_TOKEN=" + fakeGHP, "DB_PASSWORD=correct-horse-battery"})
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if _, changed := r.redact(l, bytes.Index(l, dataKey)); changed {
				b.Fatalf("redacted a clean line: %s", l)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "lines/s")
}

// benchRecording is a ~200 MB generated recording with the realistic mix, built once per
// process and kept in memory; the benchmarks that need a file write it to their TempDir.
// $SUMMIT_BENCH_RECORDING names a recording to read instead (one `summit run` made: the
// program's own mix).
var benchRecording = sync.OnceValue(func() []byte {
	if p := os.Getenv("SUMMIT_BENCH_RECORDING"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			panic(err)
		}
		return data
	}
	const size = 200 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	ts := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	out := make([]byte, 0, size+1<<20)
	for seq := uint64(1); len(out) < size; seq++ {
		ts = ts.Add(time.Duration(rng.IntN(30000)) * time.Microsecond)
		e := mixEvent(rng, seq)
		e.Seq, e.TS, e.SessionID = seq, ts, "s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA"
		out, _ = AppendLine(out, e)
	}
	// Collect the generator's garbage now, not in the first timed run.
	runtime.GC()
	return out
})

// BenchmarkIndex builds the prefix index of a ~200 MB recording from a file (in the page
// cache, as it is right after recording or on a second replay). Target: ≥ 1 GB/s.
func BenchmarkIndex(b *testing.B) {
	data := benchRecording()
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		ix, err := BuildIndexFile(path, ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n = ix.Len()
	}
	b.ReportMetric(float64(n), "events")
}

// BenchmarkDecodeParallel decodes every event of the ~200 MB recording with DecodeLine, the
// file split at a line boundary into two halves decoded by two goroutines (the machine has two
// cores). Target: ≥ 450 MB/s.
func BenchmarkDecodeParallel(b *testing.B) {
	data := benchRecording()
	mid := len(data) / 2
	mid += bytes.IndexByte(data[mid:], '\n') + 1
	halves := [][]byte{data[:mid], data[mid:]}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make([]error, len(halves))
		for h, half := range halves {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for len(half) > 0 {
					n := bytes.IndexByte(half, '\n') + 1
					if _, err := DecodeLine(half[:n]); err != nil {
						errs[h] = err
						return
					}
					half = half[n:]
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		events += bytes.Count(data, []byte("\n"))
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
