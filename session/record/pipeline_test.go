package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/summit-dev/summit/session"
)

// readResult is everything a ForEach returns and passes on.
type readResult struct {
	evs []session.Event
	rep ReadReport
	err error
}

func collect(read func(io.Reader, ReadOptions, func(session.Event) error) (ReadReport, error), r io.Reader, opts ReadOptions) readResult {
	var res readResult
	res.rep, res.err = read(r, opts, func(e session.Event) error {
		res.evs = append(res.evs, e)
		return nil
	})
	return res
}

// sameResult reports how got differs from want: events, report, error text, and the error's
// line and kind.
func sameResult(got, want readResult) string {
	if len(got.evs) != len(want.evs) {
		return fmt.Sprintf("%d events, want %d", len(got.evs), len(want.evs))
	}
	for i := range want.evs {
		if !reflect.DeepEqual(got.evs[i], want.evs[i]) {
			return fmt.Sprintf("event %d:\n got %#v\nwant %#v", i, got.evs[i], want.evs[i])
		}
	}
	if !reflect.DeepEqual(got.rep, want.rep) {
		return fmt.Sprintf("report %+v, want %+v", got.rep, want.rep)
	}
	if (got.err == nil) != (want.err == nil) || got.err != nil && got.err.Error() != want.err.Error() {
		return fmt.Sprintf("error %v, want %v", got.err, want.err)
	}
	var gl, wl *LineError
	if errors.As(got.err, &gl) != errors.As(want.err, &wl) || gl != nil && gl.Line != wl.Line {
		return fmt.Sprintf("error %#v, want %#v", got.err, want.err)
	}
	var gv, wv *VersionError
	if errors.As(got.err, &gv) != errors.As(want.err, &wv) || errors.Is(got.err, ErrLineTooLong) != errors.Is(want.err, ErrLineTooLong) {
		return fmt.Sprintf("error kind %#v, want %#v", got.err, want.err)
	}
	return ""
}

// checkPipeline reads file with the pipeline in several shapes and with the sequential Reader,
// and fails on any difference.
func checkPipeline(t *testing.T, name string, file []byte, chunks []int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, opts := range []ReadOptions{{}, {Lenient: true}, {NoText: true}, {Lenient: true, NoText: true}} {
		want := collect(forEachSequential, bytes.NewReader(file), opts)
		for _, chunk := range chunks {
			for _, workers := range []int{1, 2, 3} {
				cfg := pipelineConfig{workers: workers, chunk: chunk}
				par := func(r io.Reader, o ReadOptions, fn func(session.Event) error) (ReadReport, error) {
					return forEachParallel(r, o, cfg, fn)
				}
				got := collect(par, bytes.NewReader(file), opts)
				if d := sameResult(got, want); d != "" {
					t.Fatalf("%s, %+v, chunk %d, %d workers: %s", name, opts, chunk, workers, d)
				}
				// The same from a mapping of the file (where the system maps files).
				m, _ := mapFile(f)
				if m == nil {
					continue
				}
				mapped := func(_ io.Reader, o ReadOptions, fn func(session.Event) error) (ReadReport, error) {
					return forEachPipeline(startPipeline(nil, m, o, cfg), o, fn)
				}
				got = collect(mapped, nil, opts)
				m.close()
				if d := sameResult(got, want); d != "" {
					t.Fatalf("%s, mapped, %+v, chunk %d, %d workers: %s", name, opts, chunk, workers, d)
				}
			}
		}
	}
	// forEachFile, as FoldFile and ReadAll read.
	want := collect(forEachSequential, bytes.NewReader(file), ReadOptions{Lenient: true})
	ff := func(_ io.Reader, o ReadOptions, fn func(session.Event) error) (ReadReport, error) {
		return forEachFile(f, o, fn)
	}
	if d := sameResult(collect(ff, nil, ReadOptions{Lenient: true}), want); d != "" {
		t.Fatalf("%s, forEachFile: %s", name, d)
	}
}

// TestPipelineMatchesReader: the parallel ForEach gives what the sequential Reader gives, event
// for event, with the same report and the same error at the same line, on the fixtures and on
// generated recordings with odd, blank, malformed, long, over-the-cap and torn lines, for
// chunk sizes from one byte (every line spans chunks) to the default.
func TestPipelineMatchesReader(t *testing.T) {
	chunks := []int{1, 7, 100, 4096, defaultChunk}
	for _, name := range []string{"valid.jsonl", "torn.jsonl", "malformed.jsonl", "unknown-type.jsonl", "future-version.jsonl"} {
		checkPipeline(t, name, bytes.Join(fixtureLines(t, name), nil), chunks)
	}
	gen := genRecording(2000, true, 3)
	checkPipeline(t, "generated", gen, chunks)
	// Torn at various places.
	for _, cut := range []int{1, 2, 50, 333} {
		checkPipeline(t, fmt.Sprintf("generated, cut %d", cut), gen[:len(gen)-cut], []int{64, 4096})
	}
	// Malformed lines (strict: the first one fails; lenient: each is skipped), a line of a
	// newer version in the middle, CRLF, an unterminated valid last line.
	lines := bytes.SplitAfter(genRecording(600, false, 4), []byte("\n"))
	bad := slices.Clone(lines)
	bad[100] = []byte("{\"v\":1,\"seq\":101,\"ts\":\"2026-11-22T10:00:00Z\"\n")
	bad[200] = []byte("not json at all\n")
	bad[300] = []byte(`{"v":1,"seq":301,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA","type":"TranscriptEvent","data":{"event_type":"token","text":"a\qb"}}` + "\n")
	checkPipeline(t, "malformed", bytes.Join(bad, nil), []int{13, 4096})
	future := slices.Clone(lines)
	future[250] = []byte(`{"v":2,"seq":251,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s","type":"UserNote","data":{}}` + "\n")
	checkPipeline(t, "future", bytes.Join(future, nil), []int{13, 4096})
	crlf := bytes.ReplaceAll(bytes.Join(lines, nil), []byte("\n"), []byte("\r\n"))
	checkPipeline(t, "crlf", crlf[:len(crlf)-2], []int{13, 4096})
	// Long lines: longer than every chunk, at the cap, over it (in the middle and last).
	long, _ := AppendLine(nil, bigTextEvent(601, 3<<20/2))
	withLong := slices.Concat(bytes.Join(lines, nil), long, genRecording(20, false, 5))
	checkPipeline(t, "long", withLong, []int{100, 1 << 16, defaultChunk})
	first := fixtureLines(t, "valid.jsonl")[0]
	atCap, overCap, after := eventLineOfLen(t, 2, MaxEventLine), eventLineOfLen(t, 2, MaxEventLine+1), eventLineOfLen(t, 3, 300)
	checkPipeline(t, "at the cap", slices.Concat(first, atCap, after), []int{defaultChunk})
	checkPipeline(t, "over the cap", slices.Concat(first, overCap, after), []int{defaultChunk})
	checkPipeline(t, "far over the cap", slices.Concat(first, eventLineOfLen(t, 2, 3*MaxEventLine/2), after), []int{1 << 20})
	checkPipeline(t, "over the cap, unterminated", slices.Concat(first, overCap[:len(overCap)-1]), []int{defaultChunk})
}

// TestPipelineReadErrors: a read error ends the input after the lines completed before it, as
// in the Reader, whatever the reads' sizes. (An error that depends on the number of reads,
// like iotest.TimeoutReader's, comes at another place with other buffer sizes.)
func TestPipelineReadErrors(t *testing.T) {
	file := genRecording(500, true, 6)
	boom := errors.New("boom")
	for _, at := range []int{0, 1, 1000, len(file) / 2, len(file) - 1} {
		for _, mk := range []func() io.Reader{
			func() io.Reader { return io.MultiReader(bytes.NewReader(file[:at]), iotest.ErrReader(boom)) },
			func() io.Reader {
				return iotest.OneByteReader(io.MultiReader(bytes.NewReader(file[:at]), iotest.ErrReader(boom)))
			},
			func() io.Reader { return iotest.DataErrReader(bytes.NewReader(file[:at])) },
			func() io.Reader { return iotest.HalfReader(bytes.NewReader(file[:at])) },
		} {
			for _, opts := range []ReadOptions{{}, {Lenient: true}} {
				want := collect(forEachSequential, mk(), opts)
				for _, chunk := range []int{64, 4096} {
					par := func(r io.Reader, o ReadOptions, fn func(session.Event) error) (ReadReport, error) {
						return forEachParallel(r, o, pipelineConfig{workers: 2, chunk: chunk}, fn)
					}
					if d := sameResult(collect(par, mk(), opts), want); d != "" {
						t.Fatalf("error at %d, %+v, chunk %d: %s", at, opts, chunk, d)
					}
				}
			}
		}
	}
}

// TestPipelineStops: an error from fn stops the reading there (the report counts the lines up
// to that event) and the pipeline's goroutines end.
func TestPipelineStops(t *testing.T) {
	file := genRecording(3000, false, 7)
	stop := errors.New("enough")
	for _, k := range []int{1, 17, 2999} {
		n := 0
		fn := func(session.Event) error {
			if n++; n == k {
				return stop
			}
			return nil
		}
		want, werr := forEachSequential(bytes.NewReader(file), ReadOptions{}, fn)
		n = 0
		got, gerr := forEachParallel(bytes.NewReader(file), ReadOptions{}, pipelineConfig{workers: 2, chunk: 1000}, fn)
		if gerr != stop || werr != stop || !reflect.DeepEqual(got, want) || got.Lines != k {
			t.Fatalf("stop at %d: %v %+v, want %v %+v", k, gerr, got, werr, want)
		}
	}
}

// TestNoText: reading with NoText gives the events of a full read with the text, result and
// reason of transcript events left out, and nothing else changed.
func TestNoText(t *testing.T) {
	file := genRecording(3000, true, 8)
	full := collect(ForEach, bytes.NewReader(file), ReadOptions{})
	bare := collect(ForEach, bytes.NewReader(file), ReadOptions{NoText: true})
	if full.err != nil || bare.err != nil || len(full.evs) != len(bare.evs) {
		t.Fatalf("%v %v %d %d", full.err, bare.err, len(full.evs), len(bare.evs))
	}
	texts := 0
	for i, e := range full.evs {
		if te, ok := e.Data.(session.TranscriptEvent); ok {
			if te.Text != "" || te.Result != "" || te.Reason != "" || te.Args != nil {
				texts++
			}
			e.Data = withoutText(te)
		}
		if !reflect.DeepEqual(e, bare.evs[i]) {
			t.Fatalf("event %d: %#v, want %#v", i, bare.evs[i], e)
		}
	}
	if texts < 2000 {
		t.Errorf("only %d events with text", texts)
	}
}

// FuzzPipelineMatchesReader: on any input, the pipeline reads what the Reader reads.
func FuzzPipelineMatchesReader(f *testing.F) {
	for _, name := range []string{"valid.jsonl", "torn.jsonl", "malformed.jsonl", "unknown-type.jsonl", "future-version.jsonl"} {
		f.Add(bytes.Join(fixtureLines(f, name), nil), uint8(7), true)
	}
	f.Add(genRecording(50, true, 9), uint8(1), false)
	f.Add([]byte("\n\n  \n{}\n"), uint8(2), true)
	f.Fuzz(func(t *testing.T, file []byte, chunk uint8, lenient bool) {
		opts := ReadOptions{Lenient: lenient}
		want := collect(forEachSequential, bytes.NewReader(file), opts)
		par := func(r io.Reader, o ReadOptions, fn func(session.Event) error) (ReadReport, error) {
			return forEachParallel(r, o, pipelineConfig{workers: 2, chunk: 1 + int(chunk)}, fn)
		}
		if d := sameResult(collect(par, bytes.NewReader(file), opts), want); d != "" {
			t.Fatal(d)
		}
	})
}

// TestPipelineRandomSplits: generated recordings with random damage (lines cut, bytes
// flipped, lines joined), read through random read sizes: the pipeline matches the Reader.
func TestPipelineRandomSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	base := genRecording(400, true, 12)
	for range 60 {
		file := slices.Clone(base)
		for range rng.IntN(4) {
			switch i := rng.IntN(len(file)); rng.IntN(3) {
			case 0:
				file[i] ^= byte(1 + rng.IntN(255))
			case 1:
				file = slices.Delete(file, i, min(len(file), i+rng.IntN(300)))
			default:
				if j := bytes.IndexByte(file[i:], '\n'); j >= 0 {
					file = slices.Delete(file, i+j, i+j+1)
				}
			}
		}
		if rng.IntN(3) == 0 {
			file = file[:rng.IntN(len(file))]
		}
		checkPipeline(t, "damaged", file, []int{1 + rng.IntN(300), 4096})
	}
}

func TestPipelineEmpty(t *testing.T) {
	for _, file := range []string{"", "\n", "   ", "x"} {
		checkPipeline(t, fmt.Sprintf("%q", file), []byte(file), []int{1, 4096})
	}
}

// TestMappedFileShrinks: a file truncated while it is read through its mapping is an error,
// not a crash (reading a page past its new end faults).
func TestMappedFileShrinks(t *testing.T) {
	file := genRecording(20000, false, 13)
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, _ := mapFile(f)
	if m == nil {
		t.Skip("files are not mapped here")
	}
	defer m.close()
	if err := f.Truncate(int64(len(file) / 3)); err != nil {
		t.Fatal(err)
	}
	n := 0
	_, err = forEachPipeline(startPipeline(nil, m, ReadOptions{Lenient: true}, pipelineConfig{workers: 2, chunk: 4096}), ReadOptions{Lenient: true},
		func(session.Event) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("after %d events: %v", n, err)
	}
}
