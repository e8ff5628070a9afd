package record

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// transcriptPayloads are TranscriptEvent payloads, ordinary and odd: the hand-written decoder
// must read each exactly as the general decoder does, or decline it.
var transcriptPayloads = []string{
	`{"event_type":"token","text":"plain"}`,
	`{"event_type":"token","text":""}`,
	`{"event_type":"thinking","text":"tab\there \"quoted\" back\\slash \/ \b\f\r\n"}`,
	`{"event_type":"tool_result","call_id":"c-1","tool":"read_file","result":"if a \u003c b \u0026\u0026 c \u003e d {\n\treturn\n}\n","is_error":true}`,
	`{"event_type":"tool_call","call_id":"c-1","tool":"read_file","args":{"path":"a.go","n":1.5e3,"deep":{"x":[1,"]}",{"y":null}]},"s":"\"}"}}`,
	`{"event_type":"policy_denied","tool":"run_shell_command","reason":"not in plan mode","is_error":false}`,
	`{"event_type":"message","text":"é ü 😀 中文 \u00e9\u4e2d"}`,
	`{"event_type":"message","text":"\ud83d\ude00 a pair"}`,
	`{"event_type":"message","text":"\ud83d a lone high surrogate"}`,
	`{"event_type":"message","text":"\ude00 a lone low surrogate"}`,
	`{"event_type":"message","text":"\u0000\u001f\u007f\u2028\ufffd"}`,
	"{\"event_type\":\"message\",\"text\":\"raw control \x01\"}",
	"{\"event_type\":\"message\",\"text\":\"raw tab \t\"}",
	"{\"event_type\":\"message\",\"text\":\"invalid \xff utf-8 \xe2\x80\"}",
	"{\"event_type\":\"message\",\"text\":\"a surrogate in UTF-8 \xed\xa0\x80\"}",
	"{\"event_type\":\"message\",\"text\":\"overlong \xc0\xaf\"}",
	"{\"event_type\":\"message\",\"text\":\"U+FFFD written \xef\xbf\xbd\"}",
	`{"event_type":"message","text":"bad escape \q"}`,
	`{"event_type":"message","text":"bad hex \u12g4"}`,
	`{"event_type":"message","text":"short hex \u12"}`,
	`{"event_type":"message","text":"unterminated}`,
	`{"event_type":"message","text":"x","text":"dup"}`,
	`{"event_type":"message","Text":"case"}`,
	`{"event_type":"message","TEXT":"case","text":"lower"}`,
	`{"event_type":"message","extra":1,"text":"x"}`,
	`{"event_type":"message","text":null}`,
	`{"event_type":null}`,
	`{"event_type":"message","text":5}`,
	`{"event_type":"message","is_error":null}`,
	`{"event_type":"message","is_error":"true"}`,
	`{"event_type":"message","is_error":tru}`,
	`{"event_type":"message","is_error":truex}`,
	`{"event_type":"message","args":null}`,
	`{"event_type":"message","args":{}}`,
	`{"event_type":"message","args":[1]}`,
	`{"event_type":"message","args":{"a":1,"a":2}}`,
	`{"event_type":"message","args":{"n":1e400}}`,
	`{"event_type":"message","args":{"n":01}}`,
	`{"event_type":"message","args":{"a":"\q"}}`,
	`{"event_type":"message","args":{"a":1}`,
	`{"event_type":"message","args":{"a":"}"}}`,
	`{"event_type":"message","text":"x",}`,
	`{"event_type":"message" ,"text":"x"}`,
	`{"event_type":"message", "text":"x"}`,
	`{ "event_type":"message"}`,
	`{"event_type":"message"}}`,
	`{"event_type":"message"}x`,
	`{"event_type":"mess\u0061ge"}`,
	`{"event_type":"nonsense"}`,
	`{"event_type":""}`,
	`{}`,
	`{"text":"no type"}`,
	`{"event_type":"token","text":"x"},"extra":{"a":1}`,
}

func transcriptLine(payload string) []byte {
	return []byte(`{"v":1,"seq":5,"ts":"2026-11-22T10:00:00.000001Z","session_id":"s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA","type":"TranscriptEvent","subagent_id":"sa-1","data":` + payload + "}\n")
}

// checkDecoders decodes line with the hand-written decoders (full and without text) and with
// the general path, and fails on any difference.
func checkDecoders(t *testing.T, line []byte) {
	t.Helper()
	want, werr := decodeLineGeneric(line)
	for _, noText := range []bool{false, true} {
		for _, own := range []bool{false, true} {
			d := newLineDecoder(noText, own)
			d.useArena = own
			got, gerr := d.decode(line)
			w := want
			if te, ok := w.Data.(session.TranscriptEvent); ok && noText {
				w.Data = withoutText(te)
			}
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !reflect.DeepEqual(got, w) {
				t.Fatalf("noText %v: %q\n  fast    %#v, %v\n  general %#v, %v", noText, line, got, gerr, w, werr)
			}
		}
	}
	if got, gerr := DecodeLine(line); (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeLine %q: %#v, %v; want %#v, %v", line, got, gerr, want, werr)
	}
	// canonical, on the line followed by more lines (it must stop at the line's end, and
	// read nothing past it), twice (the second time from its memory of the first).
	for _, noText := range []bool{false, true} {
		d := newLineDecoder(noText, true)
		d.useArena = true
		for range 2 {
			for _, more := range []string{"", "\n", `{"v":1,"seq":7,"ts":"2026-11-22T10:00:00.000001Z"}` + "\n" + strings.Repeat("x", 200)} {
				buf := append(append([]byte(nil), line...), more...)
				var got session.Event
				n, ok := d.canonical(buf, &got)
				if !ok {
					continue
				}
				w := want
				if te, isTE := w.Data.(session.TranscriptEvent); isTE && noText {
					w.Data = withoutText(te)
				}
				if werr != nil || n != len(line) || line[len(line)-1] != '\n' || !reflect.DeepEqual(got, w) {
					t.Fatalf("canonical %q (+%q): %#v, %d; want %#v, %v (line of %d)", line, more, got, n, w, werr, len(line))
				}
			}
		}
	}
}

// TestLineDecoderMatchesGeneral: the hand-written decoder returns what the general path
// returns (values and errors) on the fixtures, a generated recording, every payload of the
// full fixture session and odd transcript payloads; and it takes the fast path on the lines
// the Recorder writes.
func TestLineDecoderMatchesGeneral(t *testing.T) {
	var lines [][]byte
	for _, name := range []string{"valid.jsonl", "unknown-type.jsonl", "malformed.jsonl", "torn.jsonl", "future-version.jsonl"} {
		lines = append(lines, fixtureLines(t, name)...)
	}
	lines = append(lines, bytes.SplitAfter(genRecording(3000, true, 9), []byte("\n"))...)
	for _, e := range sessiontest.FullSession() {
		l, _ := AppendLine(nil, e)
		lines = append(lines, l)
	}
	for _, p := range transcriptPayloads {
		lines = append(lines, transcriptLine(p))
	}
	for _, l := range lines {
		if len(l) == 0 || isBlank(l) {
			continue
		}
		checkDecoders(t, l)
	}
	// The recorder's lines take the fast paths.
	d := newLineDecoder(false, true)
	canonical := 0
	for i, l := range bytes.SplitAfter(genRecording(2000, false, 10), []byte("\n")) {
		if len(l) > 0 {
			if _, ok := d.fast(l); !ok {
				t.Fatalf("line %d took the slow path: %s", i+1, l)
			}
			var ev session.Event
			if _, ok := d.canonical(append(l, "x"...), &ev); ok {
				canonical++
			}
		}
	}
	if canonical < 1500 {
		t.Errorf("only %d lines of 2000 took the canonical path", canonical)
	}
}

// TestIDTable: ids are interned (one string per id), whatever their number.
func TestIDTable(t *testing.T) {
	c := newIDTable()
	first := map[string]string{}
	for round := range 3 {
		for i := range 3000 {
			id := fmt.Sprintf("sa-%d", i)
			got := c.get([]byte(id))
			if got != id {
				t.Fatalf("got %q for %q", got, id)
			}
			if round == 0 {
				first[id] = got
			} else if p := first[id]; unsafe.StringData(p) != unsafe.StringData(got) {
				t.Fatalf("%s was allocated again", id)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { c.get([]byte("sa-7")); c.session([]byte("s-01JDQ8M4X2K7P9R3T5V6W8Y0ZA")) }); n != 0 {
		t.Errorf("%v allocations per lookup of known ids", n)
	}
}

// FuzzLineDecoder: on any transcript payload and any line, the hand-written decoder agrees
// with the general one.
func FuzzLineDecoder(f *testing.F) {
	for _, p := range transcriptPayloads {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		checkDecoders(t, transcriptLine(string(payload)))
		checkDecoders(t, payload)
	})
}
