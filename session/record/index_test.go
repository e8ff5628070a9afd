package record

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// expectedEntries decodes every line of file in full, the slow way the index must agree with.
// Blank lines are skipped; an unterminated last line that does not decode is left out.
func expectedEntries(t *testing.T, file []byte) []IndexEntry {
	t.Helper()
	var want []IndexEntry
	var off int64
	for n, line := range bytes.SplitAfter(file, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !isBlank(line) {
			e, err := DecodeLine(line)
			if err == nil {
				want = append(want, IndexEntry{Offset: off, Len: len(line), Line: n + 1, Seq: e.Seq, TS: e.TS.Truncate(time.Microsecond),
					Type: e.Type, SubagentID: e.SubagentID})
			} else if line[len(line)-1] == '\n' {
				t.Fatalf("line %d does not decode: %v", n+1, err)
			}
		}
		off += int64(len(line))
	}
	return want
}

func indexEntries(ix *Index) []IndexEntry {
	out := make([]IndexEntry, ix.Len())
	for i := range out {
		out[i] = ix.Entry(i)
	}
	return out
}

func checkIndex(t *testing.T, name string, file []byte, chunk int) *Index {
	t.Helper()
	ix, err := buildIndex(bytes.NewReader(file), ReadOptions{}, chunk, 0)
	if err != nil {
		t.Fatalf("%s (chunk %d): %v", name, chunk, err)
	}
	want := expectedEntries(t, file)
	got := indexEntries(ix)
	if len(got) != len(want) {
		t.Fatalf("%s (chunk %d): %d entries, want %d", name, chunk, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s (chunk %d): entry %d\n got %+v\nwant %+v", name, chunk, i, got[i], want[i])
		}
	}
	return ix
}

func TestIndexFixtures(t *testing.T) {
	for _, name := range []string{"valid.jsonl", "unknown-type.jsonl", "torn.jsonl"} {
		file, err := os.ReadFile(recordings + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, chunk := range []int{1, 7, 100, 333, 4096, defaultIndexChunk} {
			checkIndex(t, name, file, chunk)
		}
		ix, err := BuildIndexFile(recordings+name, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, rep, _ := ReadAll(recordings+name, ReadOptions{})
		if !reflect.DeepEqual(ix.Report, rep) {
			t.Errorf("%s: index report %+v, reader report %+v", name, ix.Report, rep)
		}
	}
}

func TestIndexTorn(t *testing.T) {
	file, _ := os.ReadFile(recordings + "torn.jsonl")
	ix := checkIndex(t, "torn", file, 64)
	lastNL := int64(bytes.LastIndexByte(file, '\n') + 1)
	if ix.Len() != 6 || !ix.Report.Torn || ix.Size != lastNL || ix.Report.Warnings[0] != "line 7: torn last line (crash mid-write?), skipped" {
		t.Errorf("len %d, size %d (torn line at %d), report %+v", ix.Len(), ix.Size, lastNL, ix.Report)
	}
	// An unterminated last line that decodes is indexed, like the Reader returns it.
	valid, _ := os.ReadFile(recordings + "valid.jsonl")
	ix = checkIndex(t, "unterminated", valid[:len(valid)-1], 64)
	if ix.Len() != 53 || ix.Report.Torn || ix.Size != int64(len(valid)-1) {
		t.Errorf("unterminated valid line: len %d torn %v size %d", ix.Len(), ix.Report.Torn, ix.Size)
	}
}

func TestIndexErrors(t *testing.T) {
	_, err := BuildIndexFile(recordings+"malformed.jsonl", ReadOptions{})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 4 {
		t.Errorf("malformed: %v", err)
	}
	ix, err := BuildIndexFile(recordings+"malformed.jsonl", ReadOptions{Lenient: true})
	if err != nil || ix.Len() != 9 || ix.Report.Skipped != 1 || ix.Report.Lines != 10 {
		t.Fatalf("lenient: %v %+v", err, ix)
	}
	// Entry line numbers count the skipped line.
	for i, want := range []int{1, 2, 3, 5, 6, 7, 8, 9, 10} {
		if got := ix.Entry(i).Line; got != want {
			t.Errorf("entry %d: line %d, want %d", i, got, want)
		}
	}
	for _, lenient := range []bool{false, true} {
		_, err := BuildIndexFile(recordings+"future-version.jsonl", ReadOptions{Lenient: lenient})
		var ve *VersionError
		if !errors.As(err, &ve) || !errors.As(err, &le) || le.Line != 1 {
			t.Errorf("future version (lenient %v): %v", lenient, err)
		}
	}
}

// odd lines: valid events the fast path must hand to DecodeLine, and what they decode to.
var oddLines = []string{
	// keys in another order
	`{"seq":%d,"v":1,"ts":"2026-11-22T10:00:01.000001Z","session_id":"s-gen","type":"UserNote","data":{"text":"reordered"}}`,
	// subagent_id after data: the prefix looks canonical up to data, the tail gives it away
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:01.000002Z","session_id":"s-gen","type":"TranscriptEvent","data":{"event_type":"token","text":"x"},"subagent_id":"sa-9"}`,
	// spaces
	`{"v": 1, "seq": %d, "ts": "2026-11-22T10:00:01.000003Z", "session_id": "s-gen", "type": "UserNote", "data": {"text": "spaced"}}`,
	// an escaped id
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:01.000004Z","session_id":"s-gen","type":"SubagentActive","subagent_id":"sa\u002d7","data":{"initial_state":"running"}}`,
	// nanoseconds, and an offset instead of Z
	`{"v":1,"seq":%d,"ts":"2026-11-22T11:00:01.000000005+01:00","session_id":"s-gen","type":"UserNote","data":{"text":"tz"}}`,
	// no fraction
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:02Z","session_id":"s-gen","type":"UserNote","data":{"text":"whole second"}}`,
	// data not an object... that still decodes (null)
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:01.000006Z","session_id":"s-gen","type":"UserNote","data":null}`,
	// an escape in session_id
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:01.000007Z","session_id":"s-\"q\"","type":"UserNote","data":{"text":"q"}}`,
	// a session_id that is not ASCII
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:01.000008Z","session_id":"s-é","type":"UserNote","subagent_id":"sa-1","data":{"text":"é"}}`,
	// an unknown type with a non-object data
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:01.000009Z","session_id":"s-gen","type":"FutureThing","data":[1,2]}`,
	// trailing spaces before the newline
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:01.000010Z","session_id":"s-gen","type":"UserNote","data":{"text":"trail"}}   `,
	// CRLF (the \r is added by the generator for this one)
	`{"v":1,"seq":%d,"ts":"2026-11-22T10:00:01.000011Z","session_id":"s-gen","type":"UserNote","subagent_id":"sa-2","data":{"text":"crlf"}}` + "\r",
}

// genRecording writes n realistic events (a token-heavy mix over several subagents); with odd
// set, every 7th line is one of oddLines and every 50th line is blank.
func genRecording(n int, odd bool, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []byte
	ts := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for seq := uint64(1); seq <= uint64(n); seq++ {
		ts = ts.Add(time.Duration(rng.IntN(30000)) * time.Microsecond)
		if odd && seq%50 == 0 {
			out = append(out, '\n')
		}
		if odd && seq%7 == 0 {
			out = fmt.Appendf(out, oddLines[int(seq/7)%len(oddLines)], seq)
			out = append(out, '\n')
			continue
		}
		e := mixEvent(rng, seq)
		e.Seq, e.TS, e.SessionID = seq, ts, "s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA"
		out, _ = AppendLine(out, e)
	}
	return out
}

var tokenWords = []string{"The ", "cart ", "total ", "is ", "rounded ", "once, ", "after ", "summing", ". ", "I'll ", "check ", "`cart.go` ", "and ", "run ", "the ", "tests.\n"}

// mixEvent is one event of a realistic mix: ~85% token/thinking deltas of a few words, ~10%
// tool calls and results, the rest messages, permissions and, one in a thousand, a lifecycle
// event (which the recorder fsyncs at once).
func mixEvent(rng *rand.Rand, seq uint64) session.Event {
	sub := fmt.Sprintf("sa-%d", 1+rng.IntN(6))
	switch k := rng.IntN(1000); {
	case k < 820:
		var sb strings.Builder
		for range 1 + rng.IntN(4) {
			sb.WriteString(tokenWords[rng.IntN(len(tokenWords))])
		}
		return session.New(sub, session.TranscriptEvent{EventType: session.TranscriptToken, Text: sb.String()})
	case k < 850:
		return session.New(sub, session.TranscriptEvent{EventType: session.TranscriptThinking, Text: "Sum first, then round once."})
	case k < 900:
		return session.New(sub, session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: fmt.Sprintf("call-%d", seq), Tool: "read_file",
			Args: map[string]any{"path": "internal/checkout/cart.go"}})
	case k < 950:
		return session.New(sub, session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: fmt.Sprintf("call-%d", seq), Tool: "read_file",
			Result: "package checkout\n\nfunc Total(lines []Line) Money {\n\tvar t Money\n\tfor _, l := range lines {\n\t\tt += l.Price * l.Qty\n\t}\n\treturn round(t)\n}\n"})
	case k < 980:
		return session.New(sub, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "Totals now round once, after summing. Tests pass."})
	case k < 990:
		return session.New(sub, session.PermissionRequested{RequestID: fmt.Sprintf("pr-%d", seq), Tool: "run_shell_command", Args: map[string]any{"command": "go test ./..."}})
	case k < 999:
		return session.New(sub, session.SubagentActive{InitialState: "running"})
	default:
		return session.New(sub, session.SubagentSpawned{AgentType: "builder", AgentName: "builder", ParentSessionID: "s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA",
			PermissionMode: "acceptEdits", Tools: []string{"read_file", "replace"}, TaskDescription: "fix rounding in cart totals", TimeoutS: 300, InheritContext: true})
	}
}

// TestIndexGenerated: on a generated recording with non-canonical lines (fallback), blank
// lines, long lines and every chunk size from tiny to default, the index agrees with a full
// decode entry for entry.
func TestIndexGenerated(t *testing.T) {
	file := genRecording(3000, true, 1)
	// A long line in the middle, longer than every chunk size below.
	long, _ := AppendLine(nil, bigTextEvent(3001, 3<<20/2))
	file = append(file, long...)
	more := genRecording(50, false, 2)
	file = append(file, more...)
	var fast, slow int
	for _, line := range bytes.SplitAfter(file, []byte("\n")) {
		if _, ok := parsePrefix(line); ok {
			fast++
		} else if len(line) > 0 && !isBlank(line) {
			slow++
		}
	}
	if slow < 350 || fast < 2500 {
		t.Fatalf("the generator is off: %d fast lines, %d fallback lines", fast, slow)
	}
	for _, chunk := range []int{1, 13, 256, 4096, 1 << 16, defaultIndexChunk} {
		ix := checkIndex(t, "generated", file, chunk)
		if ix.Report.Lines != bytes.Count(file, []byte("\n")) || ix.Size != int64(len(file)) || ix.Report.Torn {
			t.Errorf("chunk %d: report %+v, size %d of %d", chunk, ix.Report, ix.Size, len(file))
		}
	}
	// Torn at every kind of place: the index always equals the full decode of what is whole.
	for _, cut := range []int{1, 10, 100, len(long) / 2} {
		checkIndex(t, "generated, torn", file[:len(file)-len(more)-cut], 4096)
	}
}

// TestIndexReadEvent: ReadEvent and ReadRange decode exactly what the Reader reads.
func TestIndexReadEvent(t *testing.T) {
	file := genRecording(500, true, 3)
	path := filepath.Join(t.TempDir(), "gen.jsonl")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	want, _, err := ReadAll(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := BuildIndexFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != len(want) {
		t.Fatalf("%d entries, %d events", ix.Len(), len(want))
	}
	f, _ := os.Open(path)
	defer f.Close()
	for _, i := range []int{0, 1, 6, 7, 48, 49, 50, 250, len(want) - 1} {
		got, err := ix.ReadEvent(f, i)
		if err != nil || !reflect.DeepEqual(got, want[i]) {
			t.Errorf("ReadEvent(%d) = %v, %v; want %v", i, got, err, want[i])
		}
	}
	got, err := ix.ReadRange(f, 40, 120) // spans blank lines
	if err != nil || !reflect.DeepEqual(got, want[40:120]) {
		t.Errorf("ReadRange: %d events, %v", len(got), err)
	}
	if evs, err := ix.ReadRange(f, 5, 5); err != nil || len(evs) != 0 {
		t.Errorf("empty range: %v %v", evs, err)
	}
	for _, r := range [][2]int{{-1, 2}, {3, 2}, {0, ix.Len() + 1}} {
		if _, err := ix.ReadRange(f, r[0], r[1]); err == nil {
			t.Errorf("range %v accepted", r)
		}
	}
	// Another file under the same index is caught, not shown.
	other := filepath.Join(t.TempDir(), "other.jsonl")
	os.WriteFile(other, genRecording(500, true, 4), 0o600)
	g, _ := os.Open(other)
	defer g.Close()
	var le *LineError
	if _, err := ix.ReadRange(g, 0, 100); !errors.As(err, &le) {
		t.Errorf("reading another file: %v", err)
	}
	// A file cut short after indexing.
	if _, err := ix.ReadEvent(bytes.NewReader(file[:100]), ix.Len()-1); err == nil {
		t.Error("short file accepted")
	}
}

func TestIndexFilterFind(t *testing.T) {
	file := genRecording(2000, true, 5)
	ix, err := BuildIndex(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	entries := indexEntries(ix)
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.SubagentID] = true
	}
	var order []string
	for _, e := range entries {
		if e.SubagentID != "" && seen[e.SubagentID] {
			order = append(order, e.SubagentID)
			seen[e.SubagentID] = false
		}
	}
	if !reflect.DeepEqual(ix.SubagentIDs(), order) {
		t.Errorf("SubagentIDs %v, want %v", ix.SubagentIDs(), order)
	}
	for _, id := range append(order, "", "sa-none") {
		var want []int
		for i, e := range entries {
			if e.SubagentID == id {
				want = append(want, i)
			}
		}
		got := ix.Filter(id)
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("Filter(%q): %d positions, want %d", id, len(got), len(want))
		}
	}
	for i, e := range entries {
		if ix.Seq(i) != e.Seq || ix.Type(i) != e.Type || ix.SubagentID(i) != e.SubagentID || !ix.TS(i).Equal(e.TS) {
			t.Fatalf("accessors of entry %d disagree with Entry", i)
		}
		if j, ok := ix.Find(e.Seq); !ok || j != i {
			t.Fatalf("Find(%d) = %d, %v; want %d", e.Seq, j, ok, i)
		}
	}
	if j, ok := ix.Find(0); ok || j != 0 {
		t.Errorf("Find(0) = %d %v", j, ok)
	}
	if j, ok := ix.Find(1 << 40); ok || j != ix.Len() {
		t.Errorf("Find(huge) = %d %v", j, ok)
	}
}

// TestIndexNoAllocPerLine: interning keeps the build's allocations independent of the number
// of lines, apart from the amortised growth of the entry slice.
func TestIndexNoAllocPerLine(t *testing.T) {
	small, big := genRecording(2000, false, 6), genRecording(40000, false, 6)
	allocs := func(file []byte) float64 {
		return testing.AllocsPerRun(3, func() {
			if _, err := buildIndex(bytes.NewReader(file), ReadOptions{}, defaultIndexChunk, int64(len(file))); err != nil {
				t.Fatal(err)
			}
		})
	}
	a, b := allocs(small), allocs(big)
	if b > a+10 || b > 100 {
		t.Errorf("allocations: %v for 2000 lines, %v for 40000", a, b)
	}
}

// TestParseTS: the hand-written ts parser agrees with time.Parse, and refuses what time.Parse
// refuses.
func TestParseTS(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 20000 {
		tm := time.Unix(rng.Int64N(1<<37)-1<<35, rng.Int64N(1e9)).UTC()
		if tm.Year() < 0 || tm.Year() > 9999 {
			continue
		}
		s := tm.Format(session.TimeLayout)
		got, ok := parseTS([]byte(s))
		if !ok || got != tm.Truncate(time.Microsecond).UnixMicro() {
			t.Fatalf("%s: %d %v, want %d", s, got, ok, tm.UnixMicro())
		}
	}
	for _, s := range []string{
		"2024-02-29T23:59:59.999999Z", "2000-02-29T00:00:00.000000Z", "1970-01-01T00:00:00.000000Z",
		"1969-12-31T23:59:59.999999Z", "0000-03-01T00:00:00.000000Z", "0000-01-01T00:00:00.000000Z", "0000-02-29T12:00:00.000001Z", "9999-12-31T23:59:59.999999Z",
		"2023-02-29T00:00:00.000000Z", "1900-02-29T00:00:00.000000Z", "2026-04-31T00:00:00.000000Z",
		"2026-13-01T00:00:00.000000Z", "2026-00-01T00:00:00.000000Z", "2026-01-00T00:00:00.000000Z",
		"2026-01-01T24:00:00.000000Z", "2026-01-01T00:60:00.000000Z", "2026-01-01T00:00:60.000000Z",
		"2026-01-01 00:00:00.000000Z", "2026-01-01T00:00:00,000000Z", "2026-01-01T00:00:00.00000aZ",
		"2026-01-01T00:00:00.000000+", "2026-1-01T00:00:00.0000000Z", "+026-01-01T00:00:00.000000Z",
	} {
		// parseTS may leave a spelling to the full decoder (time.Parse also takes a comma
		// before the fraction), but it must never accept what time.Parse refuses, and must
		// agree with it on what both accept.
		want, err := time.Parse(time.RFC3339Nano, s)
		got, ok := parseTS([]byte(s))
		if ok && (err != nil || got != want.UnixMicro()) || !ok && err == nil && s[19] == '.' {
			t.Errorf("%s: parseTS %d %v; time.Parse %v %v", s, got, ok, want.UnixMicro(), err)
		}
	}
}

// TestDecodeCanonicalMatchesGeneral: DecodeLine's hand-read envelope path returns exactly what
// the general decoder returns, on every line it accepts, and declines the rest.
func TestDecodeCanonicalMatchesGeneral(t *testing.T) {
	var lines [][]byte
	for _, name := range []string{"valid.jsonl", "unknown-type.jsonl", "malformed.jsonl", "torn.jsonl"} {
		lines = append(lines, fixtureLines(t, name)...)
	}
	lines = append(lines, bytes.SplitAfter(genRecording(3000, true, 9), []byte("\n"))...)
	for _, e := range sessiontest.FullSession() {
		l, _ := AppendLine(nil, e)
		lines = append(lines, l)
	}
	head := `{"v":1,"seq":3,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s","type":`
	for _, tail := range []string{
		`"UserNote","data":{"text":"x"},"subagent_id":"sa-1"}`,      // a key after data
		`"UserNote","data":{"text":"x"}}}`,                          // one brace too many
		`"UserNote","data":{"text":"x"} }`,                          // a space before the end
		`"UserNote","data":{"text":5}}`,                             // a type error in data
		`"UserNote","data":{"text":"x",}}`,                          // a syntax error in data
		`"UserNote","data":{"text":"x"},"data":{"text":"y"}}`,       // data twice
		`"FutureThing","data":{"a":[1,2}}`,                          // invalid unknown data
		`"FutureThing","data":{"a":[1,2]}}`,                         // valid unknown data
		`"UserNote","subagent_id":"","data":{"text":"x"}}`,          // an empty subagent id
		`"UserNote","subagent_id":"sa-\u0031","data":{"text":"x"}}`, // an escaped id
		`"UserNote","data":{"text":"\u00e9\ud83d\ude00 \"q\" \\"}}`,
		"\"UserNote\",\"data\":{\"text\":\"caf\xc3\"}}", // invalid UTF-8 in data
		"\"UserNote\",\"subagent_id\":\"sa\x7f\",\"data\":{\"text\":\"del\"}}",
	} {
		lines = append(lines, []byte(head+tail+"\n"))
	}
	for _, l := range []string{
		`{"v":1,"seq":01,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s","type":"UserNote","data":{}}`,
		`{"v":1,"seq":0,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s","type":"UserNote","data":{}}`,
		`{"v":1,"seq":18446744073709551615,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s","type":"UserNote","data":{}}`,
		`{"v":1,"seq":18446744073709551616,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s","type":"UserNote","data":{}}`,
		`{"v":1,"seq":2,"ts":"2026-02-30T10:00:00.000001Z","session_id":"s","type":"UserNote","data":{}}`,
		`{"v":1,"seq":2,"ts":"2026-11-22T10:00:00.000001Z","session_id":"","type":"UserNote","data":{}}`,
		`{"v":1,"seq":2,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s","type":"","data":{}}`,
		`{"v":2,"seq":2,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s","type":"UserNote","data":{}}`,
	} {
		lines = append(lines, []byte(l+"\n"))
	}
	fast := 0
	for _, l := range lines {
		if len(l) == 0 || isBlank(l) {
			continue
		}
		got, gerr := DecodeLine(l)
		want, werr := decodeGeneral(trimEOL(l))
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !reflect.DeepEqual(got, want) {
			t.Errorf("%s\n  DecodeLine %#v, %v\n  general    %#v, %v", l, got, gerr, want, werr)
		}
		if _, ok := decodeCanonical(trimEOL(l)); ok {
			fast++
		}
	}
	if fast < len(lines)*3/4 {
		t.Errorf("only %d of %d lines took the fast path", fast, len(lines))
	}
}

// TestAppendTS: the hand-written timestamp formatter writes what time.AppendFormat writes.
func TestAppendTS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	loc := time.FixedZone("X", -7*3600-1800)
	times := []time.Time{{}, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 2, 29, 1, 2, 3, 4000, time.UTC), time.Now(), time.Now().In(loc)}
	for range 20000 {
		times = append(times, time.Unix(rng.Int64N(1<<38)-1<<37, rng.Int64N(1e9)).In(loc))
	}
	for _, tm := range times {
		if got, want := string(appendTS(nil, tm)), tm.UTC().Format(session.TimeLayout); got != want {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
	}
}

// TestIndexLineCap: the index applies the Reader's cap on a line, with every read size: a line
// of exactly MaxEventLine bytes is indexed, one byte more is an error naming the line or with
// Lenient a gap, and a line without end is refused once the cap is passed.
func TestIndexLineCap(t *testing.T) {
	first := fixtureLines(t, "valid.jsonl")[0]
	atCap := eventLineOfLen(t, 2, MaxEventLine)
	after := eventLineOfLen(t, 3, 300)
	for _, chunk := range []int{4096, defaultIndexChunk} {
		checkIndex(t, "a line of exactly the cap", slices.Concat(first, atCap, after), chunk)
		for _, long := range [][]byte{eventLineOfLen(t, 2, MaxEventLine+1), eventLineOfLen(t, 2, 3*MaxEventLine/2)} {
			file := slices.Concat(first, long, after)
			_, err := buildIndex(bytes.NewReader(file), ReadOptions{}, chunk, 0)
			if err == nil || err.Error() != "line 2: an event line longer than 16 MiB (the cap)" || !errors.Is(err, ErrLineTooLong) {
				t.Fatalf("chunk %d, a line of %d bytes: %v", chunk, len(long), err)
			}
			ix, err := buildIndex(bytes.NewReader(file), ReadOptions{Lenient: true}, chunk, 0)
			want := []string{"line 2: an event line longer than 16 MiB (the cap) (skipped)"}
			if err != nil || ix.Len() != 2 || ix.Report.Skipped != 1 || ix.Report.Lines != 3 || !reflect.DeepEqual(ix.Report.Warnings, want) || ix.Size != int64(len(file)) {
				t.Fatalf("chunk %d, lenient, a line of %d bytes: err %v, index %+v", chunk, len(long), err, ix)
			}
			if e := ix.Entry(1); e.Line != 3 || e.Seq != 3 || e.Offset != int64(len(first)+len(long)) {
				t.Errorf("chunk %d, lenient: the entry after the long line is %+v", chunk, e)
			}
			if ev, err := ix.ReadEvent(bytes.NewReader(file), 1); err != nil || ev.Seq != 3 {
				t.Errorf("chunk %d, lenient: ReadEvent after the long line: %v %v", chunk, ev, err)
			}
		}
		src := &endless{head: first}
		_, err := buildIndex(src, ReadOptions{}, chunk, 0)
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("chunk %d, endless line: %v", chunk, err)
		}
		if limit := int64(MaxEventLine + 2<<20); src.read > limit {
			t.Errorf("chunk %d, endless line: read %d bytes before refusing it, want at most %d", chunk, src.read, limit)
		}
	}
	path := filepath.Join(t.TempDir(), "over.jsonl")
	if err := os.WriteFile(path, slices.Concat(first, eventLineOfLen(t, 2, MaxEventLine+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildIndexFile(path, ReadOptions{}); err == nil || err.Error() != path+": line 2: an event line longer than 16 MiB (the cap)" {
		t.Errorf("BuildIndexFile: %v", err)
	}
}
