package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/summit-dev/summit/session"
)

const recordings = "../../testdata/recordings/"

// fixtureLines returns the lines of a fixture, newlines kept.
func fixtureLines(t testing.TB, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(recordings + name)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

func readAllFrom(t *testing.T, r io.Reader, opts ReadOptions) ([]session.Event, ReadReport, error) {
	t.Helper()
	var evs []session.Event
	rep, err := ForEach(r, opts, func(e session.Event) error { evs = append(evs, e); return nil })
	return evs, rep, err
}

func TestReadValidFixture(t *testing.T) {
	evs, rep, err := ReadAll(recordings+"valid.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 53 || rep.Lines != 53 || rep.Skipped != 0 || rep.Torn || len(rep.Warnings) != 0 {
		t.Fatalf("read %d events, report %+v", len(evs), rep)
	}
	// The fixture is canonical: every line is exactly what AppendLine writes for its event,
	// so it documents the wire format byte for byte.
	lines := fixtureLines(t, "valid.jsonl")
	subagents := map[string]bool{}
	for i, e := range evs {
		if e.Seq != uint64(i+1) || e.V != 1 || e.SessionID != "s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA" {
			t.Errorf("line %d: envelope %v v=%d session %q", i+1, e, e.V, e.SessionID)
		}
		if _, ok := e.Data.(session.Unknown); ok {
			t.Errorf("line %d: unknown type %s", i+1, e.Type)
		}
		re, err := AppendLine(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(re, lines[i]) {
			t.Errorf("line %d is not canonical:\n got %s\nwant %s", i+1, lines[i], re)
		}
		if e.SubagentID != "" {
			subagents[e.SubagentID] = true
		}
	}
	if len(subagents) != 3 {
		t.Errorf("subagents %v, want three", subagents)
	}
	// It is a session the fold accepts: three subagents, a handoff, a convergence with a
	// conflict resolved by hand.
	s := &session.State{}
	for _, e := range evs {
		if err := session.Apply(s, e); err != nil {
			t.Fatalf("fold: %v", err)
		}
	}
	if !s.Ended || s.Counters.Handoffs != 1 || s.Conflict("cf-1") == nil || s.Convergence("cv-1") == nil {
		t.Errorf("fold: ended %v handoffs %d conflict %v convergence %v", s.Ended, s.Counters.Handoffs, s.Conflict("cf-1"), s.Convergence("cv-1"))
	}
	types := map[session.Type]bool{}
	for _, e := range evs {
		types[e.Type] = true
	}
	for _, want := range []session.Type{session.TypeHandoffInitiated, session.TypeHandoffComplete, session.TypeHandoffResolved, session.TypeConvergenceInitiated,
		session.TypeConflictDetected, session.TypeConflictResolved, session.TypeConvergenceComplete, session.TypePermissionRequested, session.TypePermissionGranted} {
		if !types[want] {
			t.Errorf("valid.jsonl has no %s", want)
		}
	}
}

// TestReaderSmallReads: a reader that returns one byte at a time (every line assembled from
// fragments) reads the same events as whole-file decoding.
func TestReaderSmallReads(t *testing.T) {
	want, _, err := ReadAll(recordings+"valid.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(recordings + "valid.jsonl")
	got, rep, err := readAllFrom(t, iotest.OneByteReader(bytes.NewReader(b)), ReadOptions{})
	if err != nil || !reflect.DeepEqual(got, want) || rep.Lines != 53 {
		t.Fatalf("one-byte reads: %d events, err %v, report %+v", len(got), err, rep)
	}
}

func TestReadTorn(t *testing.T) {
	evs, rep, err := ReadAll(recordings+"torn.jsonl", ReadOptions{})
	if err != nil {
		t.Fatalf("a torn last line must not be an error: %v", err)
	}
	if len(evs) != 6 || evs[5].Seq != 6 {
		t.Fatalf("read %d events", len(evs))
	}
	want := []string{"line 7: torn last line (crash mid-write?), skipped"}
	if !rep.Torn || rep.Lines != 7 || rep.Skipped != 0 || !reflect.DeepEqual(rep.Warnings, want) {
		t.Errorf("report %+v", rep)
	}
	// Lenient reads it the same way.
	_, rep2, err := ReadAll(recordings+"torn.jsonl", ReadOptions{Lenient: true})
	if err != nil || !reflect.DeepEqual(rep2, rep) {
		t.Errorf("lenient: %v %+v", err, rep2)
	}
}

// TestReadUnterminatedValidLine: a last line whose newline alone is missing is a whole event
// and is accepted without a warning.
func TestReadUnterminatedValidLine(t *testing.T) {
	lines := fixtureLines(t, "valid.jsonl")
	in := bytes.Join(lines[:3], nil)
	in = in[:len(in)-1] // drop the final newline
	evs, rep, err := readAllFrom(t, bytes.NewReader(in), ReadOptions{})
	if err != nil || len(evs) != 3 || rep.Torn || len(rep.Warnings) != 0 || rep.Lines != 3 {
		t.Fatalf("%d events, err %v, report %+v", len(evs), err, rep)
	}
}

func TestReadMalformed(t *testing.T) {
	evs, rep, err := ReadAll(recordings+"malformed.jsonl", ReadOptions{})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 4 {
		t.Fatalf("want a *LineError on line 4, got %v", err)
	}
	if !strings.Contains(err.Error(), "line 4: not a JSON event") {
		t.Errorf("error %q", err)
	}
	if len(evs) != 3 || rep.Lines != 4 {
		t.Errorf("strict: %d events before the error, report %+v", len(evs), rep)
	}

	evs, rep, err = ReadAll(recordings+"malformed.jsonl", ReadOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 9 || rep.Skipped != 1 || rep.Lines != 10 || rep.Torn {
		t.Fatalf("lenient: %d events, report %+v", len(evs), rep)
	}
	if len(rep.Warnings) != 1 || !strings.HasPrefix(rep.Warnings[0], "line 4: not a JSON event") || !strings.HasSuffix(rep.Warnings[0], "(skipped)") {
		t.Errorf("warnings %q", rep.Warnings)
	}
	if evs[2].Seq != 3 || evs[3].Seq != 5 {
		t.Errorf("seqs around the skipped line: %d %d", evs[2].Seq, evs[3].Seq)
	}
}

// TestReadMalformedKinds: each kind of bad line names its line and what is wrong.
func TestReadMalformedKinds(t *testing.T) {
	good := string(fixtureLines(t, "valid.jsonl")[0])
	for _, c := range []struct{ line, want string }{
		{`{"v":1,"seq":2,"ts":"2026-11-22T10:00:00Z","session_id":"s","type":"UserNote","data":{"text":"x"}`, "not a JSON event"},
		{`[1,2,3]`, "not a JSON event"},
		{`{"seq":2,"ts":"2026-11-22T10:00:00Z","session_id":"s","type":"UserNote","data":{}}`, `missing "v"`},
		{`{"v":1,"ts":"2026-11-22T10:00:00Z","session_id":"s","type":"UserNote","data":{}}`, `missing "seq"`},
		{`{"v":1,"seq":2,"ts":"2026-11-22T10:00:00Z","session_id":"s","data":{}}`, `missing "type"`},
		{`{"v":1,"seq":2,"ts":"yesterday","session_id":"s","type":"UserNote","data":{}}`, `bad "ts"`},
		{`{"v":1,"seq":2,"ts":"2026-11-22T10:00:00Z","session_id":"s","type":"UserNote","data":{"text":5}}`, "UserNote data"},
		{`{"v":1,"seq":2,"ts":"2026-11-22T10:00:00Z","session_id":"s","type":"UserNote","data":"text"}`, "UserNote data"},
	} {
		in := good + c.line + "\n" + good
		_, _, err := readAllFrom(t, strings.NewReader(in), ReadOptions{})
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n  error %v, want line 2: …%s…", c.line, err, c.want)
		}
		evs, rep, err := readAllFrom(t, strings.NewReader(in), ReadOptions{Lenient: true})
		if err != nil || len(evs) != 2 || rep.Skipped != 1 {
			t.Errorf("%s\n  lenient: %d events, err %v, report %+v", c.line, len(evs), err, rep)
		}
	}
}

func TestReadUnknownType(t *testing.T) {
	evs, rep, err := ReadAll(recordings+"unknown-type.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 11 || rep.Skipped != 0 || rep.Lines != 11 {
		t.Fatalf("%d events, report %+v", len(evs), rep)
	}
	u, ok := evs[4].Data.(session.Unknown)
	if !ok || u.Name != "SubagentHeartbeat" || evs[4].Type != "SubagentHeartbeat" || evs[4].SubagentID != "sa-1" || evs[4].Seq != 5 ||
		string(u.Raw) != `{"rss_bytes":48234496,"cpu_ms":112}` {
		t.Errorf("event 5: %v %#v", evs[4], evs[4].Data)
	}
	want := []string{`line 5: unknown event type "SubagentHeartbeat" (kept, skipped)`}
	if !reflect.DeepEqual(rep.Warnings, want) {
		t.Errorf("warnings %q", rep.Warnings)
	}
	// The fold skips it and goes on.
	s := &session.State{}
	for _, e := range evs {
		if err := session.Apply(s, e); err != nil {
			t.Fatalf("fold: %v", err)
		}
	}
	if s.Counters.Unknown != 1 || s.LastSeq != 11 {
		t.Errorf("fold: unknown %d, last seq %d", s.Counters.Unknown, s.LastSeq)
	}
}

func TestReadFutureVersion(t *testing.T) {
	const msg = "line 1: schema version 2 is newer than this summit reads (1); upgrade summit to read this recording"
	for _, lenient := range []bool{false, true} {
		evs, _, err := ReadAll(recordings+"future-version.jsonl", ReadOptions{Lenient: lenient})
		var ve *VersionError
		var le *LineError
		if !errors.As(err, &ve) || ve.V != 2 || !errors.As(err, &le) || le.Line != 1 || !strings.HasSuffix(err.Error(), msg) || len(evs) != 0 {
			t.Errorf("lenient=%v: %d events, err %v", lenient, len(evs), err)
		}
	}
	// A newer line later in a file stops the read there, lenient or not, even as the
	// unterminated last line.
	lines := fixtureLines(t, "valid.jsonl")
	future := fixtureLines(t, "future-version.jsonl")[1]
	for _, in := range [][]byte{
		bytes.Join([][]byte{lines[0], lines[1], future, lines[2]}, nil),
		bytes.Join([][]byte{lines[0], lines[1], future[:len(future)-1]}, nil),
	} {
		evs, rep, err := readAllFrom(t, bytes.NewReader(in), ReadOptions{Lenient: true})
		var le *LineError
		if !errors.As(err, &le) || le.Line != 3 || len(evs) != 2 || rep.Torn {
			t.Errorf("%d events, err %v, report %+v", len(evs), err, rep)
		}
	}
}

func TestReadBlankLines(t *testing.T) {
	lines := fixtureLines(t, "valid.jsonl")
	in := bytes.Join([][]byte{lines[0], []byte("\n"), lines[1], []byte("  \r\n"), lines[2]}, nil)
	evs, rep, err := readAllFrom(t, bytes.NewReader(in), ReadOptions{})
	want := []string{"line 2: blank line, skipped", "line 4: blank line, skipped"}
	if err != nil || len(evs) != 3 || rep.Lines != 5 || rep.Skipped != 0 || !reflect.DeepEqual(rep.Warnings, want) {
		t.Fatalf("%d events, err %v, report %+v", len(evs), err, rep)
	}
}

func TestReadCRLF(t *testing.T) {
	b, _ := os.ReadFile(recordings + "valid.jsonl")
	want, _, _ := readAllFrom(t, bytes.NewReader(b), ReadOptions{})
	got, rep, err := readAllFrom(t, bytes.NewReader(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))), ReadOptions{})
	if err != nil || !reflect.DeepEqual(got, want) || len(rep.Warnings) != 0 {
		t.Fatalf("CRLF: %d events, err %v, report %+v", len(got), err, rep)
	}
}

func TestReadWarningsCapped(t *testing.T) {
	lines := fixtureLines(t, "valid.jsonl")
	in := append(append([]byte(nil), lines[0]...), strings.Repeat("\n", 100)...)
	_, rep, err := readAllFrom(t, bytes.NewReader(in), ReadOptions{})
	if err != nil || len(rep.Warnings) != maxWarnings || rep.WarningsDropped != 100-maxWarnings || rep.Lines != 101 {
		t.Fatalf("err %v, %d warnings, %d dropped, %d lines", err, len(rep.Warnings), rep.WarningsDropped, rep.Lines)
	}
}

// TestReadErrors: an I/O error is returned as it is (not as EOF), and a callback's error stops
// ForEach.
func TestReadErrors(t *testing.T) {
	b, _ := os.ReadFile(recordings + "valid.jsonl")
	boom := errors.New("disk on fire")
	r := io.MultiReader(bytes.NewReader(b[:1000]), iotest.ErrReader(boom))
	evs, _, err := readAllFrom(t, r, ReadOptions{Lenient: true})
	if !errors.Is(err, boom) || len(evs) == 0 {
		t.Errorf("read error: %d events, %v", len(evs), err)
	}
	stop := errors.New("enough")
	n := 0
	_, err = ForEach(bytes.NewReader(b), ReadOptions{}, func(session.Event) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	})
	if err != stop || n != 5 {
		t.Errorf("callback error: n=%d err %v", n, err)
	}
	rd := NewReader(bytes.NewReader(nil), ReadOptions{})
	for range 2 {
		if _, err := rd.Next(); err != io.EOF {
			t.Errorf("empty input: %v", err)
		}
	}
	if _, _, err := ReadAll(filepath.Join(t.TempDir(), "missing.jsonl"), ReadOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// bigTextEvent is a transcript event whose text is n bytes of mixed ASCII, escapes and
// multi-byte runes.
func bigTextEvent(seq uint64, n int) session.Event {
	var sb strings.Builder
	pieces := []string{"The quick brown fox ", "jumps \"over\" ", "the\tlazy dog.\n", "café ✓ ", "<tag>&amp; "}
	for i := 0; sb.Len() < n; i++ {
		sb.WriteString(pieces[i%len(pieces)])
	}
	e := session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: sb.String()[:n]})
	e.Seq, e.SessionID, e.TS = seq, "s-long", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Add(time.Duration(seq)*time.Millisecond)
	return e
}

// TestReadLongLine: a 5 MB single line is read whole (no token limit), in the middle and as
// the last line; cut short at the end of the file it is the torn line.
func TestReadLongLine(t *testing.T) {
	var file []byte
	var want []session.Event
	for _, e := range []session.Event{bigTextEvent(1, 100), bigTextEvent(2, 5<<20), bigTextEvent(3, 200), bigTextEvent(4, 5<<20)} {
		file, _ = AppendLine(file, e)
		want = append(want, e)
	}
	if len(file) < 10<<20 {
		t.Fatalf("generated only %d bytes", len(file))
	}
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	got, rep, err := ReadAll(path, ReadOptions{})
	if err != nil || len(got) != 4 || rep.Lines != 4 {
		t.Fatalf("%d events, err %v, report %+v", len(got), err, rep)
	}
	for i := range want {
		if gt, wt := got[i].Data.(session.TranscriptEvent).Text, want[i].Data.(session.TranscriptEvent).Text; gt != wt {
			t.Errorf("event %d: text of %d bytes, want %d", i+1, len(gt), len(wt))
		}
	}
	torn := file[:len(file)-1000]
	got, rep, err = readAllFrom(t, bytes.NewReader(torn), ReadOptions{})
	if err != nil || len(got) != 3 || !rep.Torn || rep.Warnings[0] != "line 4: torn last line (crash mid-write?), skipped" {
		t.Fatalf("torn 5 MB line: %d events, err %v, report %+v", len(got), err, rep)
	}
}

func ExampleReader() {
	f, err := os.Open("../../testdata/recordings/torn.jsonl")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	rd := NewReader(f, ReadOptions{})
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(e)
	}
	fmt.Println(rd.Report().Warnings)
	// Output:
	// #1 SessionStarted
	// #2 CommandIssued
	// #3 SubagentSpawned sa-1
	// #4 SubagentActive sa-1
	// #5 TranscriptEvent sa-1
	// #6 TranscriptEvent sa-1
	// [line 7: torn last line (crash mid-write?), skipped]
}

// eventLineOfLen is the encoded line of a transcript event at seq whose line holds exactly n
// bytes before its newline.
func eventLineOfLen(t testing.TB, seq uint64, n int) []byte {
	t.Helper()
	mk := func(text string) []byte {
		e := session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: text})
		e.Seq, e.SessionID, e.TS = seq, "s-cap", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		b, err := AppendLine(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	line := mk(strings.Repeat("a", 1+n-(len(mk("a"))-1)))
	if len(line) != n+1 {
		t.Fatalf("generated a line of %d bytes, want %d", len(line)-1, n)
	}
	return line
}

// endless is a reader of head, then of 'x' forever; it counts what it gave.
type endless struct {
	head []byte
	read int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = 'x'
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestReadLineCap: a line of exactly MaxEventLine bytes is read; one byte more is an error
// naming the line (and the file), or with Lenient a skipped line, and the events after it are
// read; a line that never ends is refused after reading about the cap, not all of it.
func TestReadLineCap(t *testing.T) {
	first := fixtureLines(t, "valid.jsonl")[0]
	atCap := eventLineOfLen(t, 2, MaxEventLine)
	overCap := eventLineOfLen(t, 2, MaxEventLine+1)
	after := eventLineOfLen(t, 3, 300)

	evs, rep, err := readAllFrom(t, bytes.NewReader(slices.Concat(first, atCap, after)), ReadOptions{})
	if err != nil || len(evs) != 3 || len(evs[1].Data.(session.TranscriptEvent).Text) < MaxEventLine-200 {
		t.Fatalf("a line of exactly the cap: %d events, err %v, report %+v", len(evs), err, rep)
	}

	path := filepath.Join(t.TempDir(), "over.jsonl")
	if err := os.WriteFile(path, slices.Concat(first, overCap, after), 0o600); err != nil {
		t.Fatal(err)
	}
	evs, _, err = ReadAll(path, ReadOptions{})
	if want := path + ": line 2: an event line longer than 16 MiB (the cap)"; err == nil || err.Error() != want || !errors.Is(err, ErrLineTooLong) || len(evs) != 1 {
		t.Fatalf("one byte over the cap: %d events, err %v, want %q", len(evs), err, want)
	}
	if _, _, err := LoadFile(path, ReadOptions{}); err == nil || err.Error() != "line 2: an event line longer than 16 MiB (the cap)" {
		t.Errorf("LoadFile: %v", err)
	}
	// Lenient: skipped like a malformed line, whether its end is in the same read or not,
	// and the reader is back in step at the next line.
	for _, long := range [][]byte{overCap, eventLineOfLen(t, 2, 3*MaxEventLine/2)} {
		if err := os.WriteFile(path, slices.Concat(first, long, after), 0o600); err != nil {
			t.Fatal(err)
		}
		evs, rep, err = ReadAll(path, ReadOptions{Lenient: true})
		want := []string{"line 2: an event line longer than 16 MiB (the cap) (skipped)"}
		if err != nil || len(evs) != 2 || evs[1].Seq != 3 || rep.Lines != 3 || rep.Skipped != 1 || !reflect.DeepEqual(rep.Warnings, want) {
			t.Fatalf("lenient, a line of %d bytes: %d events, err %v, report %+v", len(long), len(evs), err, rep)
		}
	}
	// Unterminated, over the cap: the same error, not a torn line.
	evs, rep, err = readAllFrom(t, bytes.NewReader(slices.Concat(first, overCap[:len(overCap)-1])), ReadOptions{})
	if !errors.Is(err, ErrLineTooLong) || rep.Torn {
		t.Errorf("unterminated over the cap: err %v, report %+v", err, rep)
	}

	// A line without end: refused once the cap is passed, having read the cap and at most
	// one buffer more.
	src := &endless{head: first}
	_, _, err = readAllFrom(t, src, ReadOptions{})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("endless line: %v", err)
	}
	if limit := int64(MaxEventLine + 1<<20); src.read > limit {
		t.Errorf("endless line: read %d bytes before refusing it, want at most %d", src.read, limit)
	}
}
