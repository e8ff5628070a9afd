package imports

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// TestSpoolRoundTrip spools every kind of event the readers add, and one kept in memory, and
// reads each back, by a cursor in order, by a cursor that skips, and by get while writing.
func TestSpoolRoundTrip(t *testing.T) {
	sp := newSpool()
	defer sp.close()
	big := strings.Repeat("é line\n", 300_000) // past the 1 MiB write buffer
	evs := []session.Data{
		session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "hello\x00 \u202e"},
		session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c1", Tool: "Edit", Args: map[string]any{"a": 1.5, "b": []any{"x", true}}},
		session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c1", Tool: "Edit", Result: big, IsError: true, Reason: "r"},
		session.UserNote{Text: ""},
		session.PermissionRequested{RequestID: "pr-1", Tool: "Bash", Args: map[string]any{"command": "ls"}, Reason: "why"},
		session.PermissionGranted{RequestID: "pr-1", Scope: "once", By: "user"},
		session.PermissionDenied{RequestID: "pr-2", Reason: "no", By: "user"},
		session.SubagentActive{InitialState: "active"}, // not spooled: kept in memory
	}
	var offs []int64
	for _, d := range evs {
		offs = append(offs, sp.put(d))
	}
	raw := sp.putToolRaw("c2", "Read", []byte(` "not an object" `))
	blob := sp.putBlob([]byte(`{"line":1}`))
	for i, off := range offs {
		got, err := sp.get(off)
		if err != nil || !reflect.DeepEqual(got, evs[i]) {
			t.Fatalf("get %d: %v %#v", i, err, got)
		}
	}
	if err := sp.flush(); err != nil {
		t.Fatal(err)
	}
	c := cursor{sp: sp}
	for i, off := range offs {
		got, err := c.at(off)
		if err != nil || !reflect.DeepEqual(got, evs[i]) {
			t.Fatalf("cursor %d: %v %#v", i, err, got)
		}
	}
	got, err := c.at(raw)
	want := session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c2", Tool: "Read", Args: map[string]any{"input": "not an object"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("raw tool call: %v %#v", err, got)
	}
	if b, err := sp.blob(blob); err != nil || string(b) != `{"line":1}` {
		t.Fatalf("blob: %v %q", err, b)
	}
	var skip cursor // forward past other records, and back
	skip.sp = sp
	for _, i := range []int{6, 0, 4} {
		if got, err := skip.at(offs[i]); err != nil || !reflect.DeepEqual(got, evs[i]) {
			t.Fatalf("skip %d: %v %#v", i, err, got)
		}
	}
	if _, err := decodeSpooled([]byte{spTranscript, 5}); err == nil {
		t.Fatal("a cut record decoded")
	}
}

// TestReadLinesBlocks reads a file whose lines cross block boundaries, one of them longer than
// a block, blank lines and a CRLF among them, and a last line without a newline: every line
// comes once, in order, with its number, and only the last is marked last.
func TestReadLinesBlocks(t *testing.T) {
	var want []string
	var b bytes.Buffer
	n := 0
	for i := 0; b.Len() < 3*readBlock; i++ {
		n++
		switch {
		case i%97 == 5:
			b.WriteString("  \n")
			continue
		case i == 300:
			s := fmt.Sprintf(`{"i":%d,"pad":%q}`, i, strings.Repeat("y", 2*readBlock))
			want = append(want, fmt.Sprintf("%d:%s", n, s))
			b.WriteString(s + "\r\n")
			continue
		}
		s := fmt.Sprintf(`{"i":%d,"pad":%q}`, i, strings.Repeat("x", i%700))
		want = append(want, fmt.Sprintf("%d:%s", n, s))
		b.WriteString(s + "\n")
	}
	n++
	b.WriteString(`{"i":-1}`)
	want = append(want, fmt.Sprintf("%d:%s", n, `{"i":-1}`))
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	lasts := 0
	err := readLines(path, func(b []byte, v *map[string]any) error { return stdjson.Unmarshal(b, v) }, func(ln srcLine, v *map[string]any, err error) error {
		if err != nil {
			return err
		}
		if ln.last {
			lasts++
		}
		if _, ok := (*v)["i"]; !ok {
			return fmt.Errorf("line %d decoded to %v", ln.n, *v)
		}
		got = append(got, fmt.Sprintf("%d:%s", ln.n, ln.b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || lasts != 1 {
		t.Fatalf("got %d lines (last marked %d times), want %d", len(got), lasts, len(want))
	}
}

func TestJSONString(t *testing.T) {
	for _, in := range []string{`"plain text"`, `"a\"b\\c\n\u00e9\ud83d\ude00"`, "\"caf\xc3\xa9\"", "\"bad \xff utf8\"", `""`} {
		var want string
		wantErr := stdjson.Unmarshal([]byte(in), &want)
		got, err := jsonString([]byte(in))
		if (err != nil) != (wantErr != nil) || got != want {
			t.Errorf("%s: got %q %v, want %q %v", in, got, err, want, wantErr)
		}
	}
}

func TestHashSetAndEvList(t *testing.T) {
	var h hashSet
	for i := uint64(0); i < 1000; i += 2 {
		h.add(i * 7919)
	}
	if !h.has(14*7919) || h.has(3*7919) {
		t.Fatal("sorted list")
	}
	h.add(3 * 7919) // after the first look-up
	if !h.has(3 * 7919) {
		t.Fatal("added after a look-up")
	}
	var l evList
	for i := range 3*evChunk + 5 {
		l.add(ev{ts: int64(i), off: int64(-i)})
	}
	if l.len() != 3*evChunk+5 {
		t.Fatal(l.len())
	}
	it := l.iter()
	for i := range l.len() {
		if e, ok := it.next(); !ok || e.ts != int64(i) || e.off != int64(-i) {
			t.Fatalf("at %d: %+v %v", i, e, ok)
		}
	}
	if _, ok := it.next(); ok {
		t.Fatal("an event past the last")
	}
}

// TestSpoolCarriesEveryField fills every field of every event type the spool encodes with
// random non-zero values (by reflection, so a field added to one of those events later is
// filled too) and reads each back by get and by a cursor: a field put does not carry comes
// back zero and fails. Types the spool keeps in memory come back as they are; the five kinds
// the readers spool must be among the spooled ones, so the test cannot pass by spooling none.
func TestSpoolCarriesEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 5))
	spooled := map[session.Type]bool{}
	for round := range 20 {
		sp := newSpool()
		var evs []session.Data
		var offs []int64
		for _, typ := range slices.Sorted(maps.Keys(session.Decoders)) {
			zero, err := session.Decoders[typ]([]byte(`{}`))
			if err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			v := reflect.New(reflect.TypeOf(zero)).Elem()
			fillRandom(t, rng, v, string(typ))
			d := v.Interface().(session.Data)
			off := sp.put(d)
			if off >= 0 {
				spooled[typ] = true
			}
			evs, offs = append(evs, d), append(offs, off)
		}
		for i, off := range offs {
			if got, err := sp.get(off); err != nil || !reflect.DeepEqual(got, evs[i]) {
				t.Fatalf("round %d, get %s: %v\n got %#v\nwant %#v", round, evs[i].Type(), err, got, evs[i])
			}
		}
		if err := sp.flush(); err != nil {
			t.Fatal(err)
		}
		c := cursor{sp: sp}
		for i, off := range offs {
			if got, err := c.at(off); err != nil || !reflect.DeepEqual(got, evs[i]) {
				t.Fatalf("round %d, cursor %s: %v\n got %#v\nwant %#v", round, evs[i].Type(), err, got, evs[i])
			}
		}
		sp.close()
	}
	for _, typ := range []session.Type{session.TypeTranscriptEvent, session.TypeUserNote, session.TypePermissionRequested, session.TypePermissionGranted, session.TypePermissionDenied} {
		if !spooled[typ] {
			t.Errorf("%s is not spooled", typ)
		}
	}
}

// fillRandom sets every field of v (and of what it holds) to a random non-zero value. Maps of
// any hold what JSON gives back (strings, float64s, bools, lists and objects), as tool
// arguments do.
func fillRandom(t *testing.T, rng *rand.Rand, v reflect.Value, path string) {
	t.Helper()
	if strings.Count(path, ".")+strings.Count(path, "[") > 8 {
		return // a recursive type (a plan's steps): deep enough
	}
	str := func() string {
		const alphabet = "abcXYZ 09_-\"\\\n\t\x00é\u202e😀"
		r := []rune(alphabet)
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteRune(r[rng.IntN(len(r))])
		}
		return b.String()
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(str())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1 + rng.Int64N(100))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1 + rng.Uint64N(100))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(1+rng.IntN(1000)) / 8)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillRandom(t, rng, v.Elem(), path+"*")
	case reflect.Slice:
		n := 1 + rng.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillRandom(t, rng, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 1 + rng.IntN(3) {
			k := reflect.New(v.Type().Key()).Elem()
			fillRandom(t, rng, k, path+".key")
			e := reflect.New(v.Type().Elem()).Elem()
			fillRandom(t, rng, e, path+"[]")
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		// A JSON value: what a decoded map[string]any holds.
		var x any
		switch rng.IntN(5) {
		case 0:
			x = str()
		case 1:
			x = float64(rng.IntN(1000)) / 4
		case 2:
			x = true
		case 3:
			x = []any{str(), float64(rng.IntN(9))}
		default:
			x = map[string]any{str(): str()}
		}
		v.Set(reflect.ValueOf(x))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.UnixMicro(1_700_000_000_000_000 + rng.Int64N(1e12)).UTC()))
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fillRandom(t, rng, v.Field(i), path+"."+f.Name)
			}
		}
	default:
		t.Fatalf("%s: cannot fill a %s", path, v.Type())
	}
}

// TestGmList: a Gemini chat's message list gives back each message as pushed or set, across
// chunks and after a truncation (a rewind), and packs every field (line, torn last line, the
// offset in a whole-JSON session) into its 16 bytes.
func TestGmList(t *testing.T) {
	var l gmList
	msg := func(i int) gmSpooled {
		if i%3 == 0 {
			return gmSpooled{off: int64(i) * 100, at: int64(i) * 7}
		}
		return gmSpooled{off: int64(i) * 100, n: i + 1, last: i%5 == 0, at: -1}
	}
	for i := range 2*gmChunk + 3 {
		l.push(msg(i))
	}
	l.n = gmChunk + 1 // rewound
	for i := gmChunk + 1; i < 3*gmChunk; i++ {
		l.push(msg(i + 1))
	}
	l.set(5, msg(6))
	if l.n != 3*gmChunk {
		t.Fatal(l.n)
	}
	for i := range l.n {
		want := msg(i)
		switch {
		case i == 5:
			want = msg(6)
		case i > gmChunk:
			want = msg(i + 1)
		}
		if got := l.at(i); got != want {
			t.Fatalf("message %d: %+v, want %+v", i, got, want)
		}
	}
	for _, big := range []gmSpooled{
		{off: 1, at: MaxFileBytes - 1, last: true},
		{off: MaxFileBytes - 1, n: MaxFileBytes / 2, size: MaxLineBytes, last: true, at: -1},
		{off: 3 * MaxFileBytes, n: MaxFileBytes - 2, size: 1, at: -1},
	} {
		if got := pack(big).unpack(); got != big {
			t.Fatalf("%+v, want %+v", got, big)
		}
	}
}

// TestTuneGC: the import's GC settings are set and restored, and an explicit GOMEMLIMIT or
// GOGC is left alone.
func TestTuneGC(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	limit, pct := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	defer debug.SetGCPercent(pct)
	restore := TuneGC()
	if got := debug.SetMemoryLimit(-1); got != MemLimit {
		t.Errorf("limit %d, want %d", got, MemLimit)
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GC percent %d, want off", got)
	}
	restore()
	if got, got2 := debug.SetMemoryLimit(-1), debug.SetGCPercent(100); got != limit || got2 != 100 {
		t.Errorf("restored to %d, %d; want %d, 100", got, got2, limit)
	}
	t.Setenv("GOGC", "200")
	restore = TuneGC()
	if got := debug.SetGCPercent(-1); got != 100 {
		t.Errorf("with GOGC set the pacing changed: %d", got)
	}
	debug.SetGCPercent(100)
	restore()
	t.Setenv("GOMEMLIMIT", "1GiB")
	restore = TuneGC()
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("with GOMEMLIMIT set the limit changed: %d", got)
	}
	restore()
}
