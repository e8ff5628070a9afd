package imports

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
	for i := range l.len() {
		if e := l.at(i); e.ts != int64(i) || e.off != int64(-i) {
			t.Fatalf("at %d: %+v", i, *e)
		}
	}
}
