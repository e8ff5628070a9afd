package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// clipLine returns an encoded event line (newline included) whose payload is cut until the
// line fits MaxEventLine: the longest string values of data are halved, each keeping its
// start and saying how much was cut, until it fits. The envelope is kept as it is. A writer
// must never produce a line a reader refuses; this is the last resort behind the bounds the
// producers keep (tool results, diffs), for what nothing else bounds (a model's streamed
// text, its tool arguments, a capsule).
func clipLine(line []byte) ([]byte, error) {
	at := bytes.Index(line, dataKey)
	if at < 0 {
		return nil, fmt.Errorf("an event line of %d bytes has no data to clip", len(line))
	}
	var data any
	dec := json.NewDecoder(bytes.NewReader(line[at+len(dataKey) : len(line)-2])) // up to the closing "}\n"
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		return nil, fmt.Errorf("clip an event line: %w", err)
	}
	const margin = 4 << 10
	for range 256 {
		var buf bytes.Buffer
		je := json.NewEncoder(&buf)
		je.SetEscapeHTML(false)
		if err := je.Encode(data); err != nil {
			return nil, err
		}
		enc := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		out := make([]byte, 0, at+len(dataKey)+len(enc)+2)
		out = append(append(append(append(out, line[:at]...), dataKey...), enc...), '}', '\n')
		if len(out)-1 <= MaxEventLine-margin {
			return out, nil
		}
		longest := 0
		walkStrings(&data, func(s *string) { longest = max(longest, len(*s)) })
		if longest < 2*margin {
			break
		}
		done := false
		walkStrings(&data, func(s *string) {
			if !done && len(*s) == longest {
				*s, done = clipString(*s, longest/2), true
			}
		})
	}
	return nil, fmt.Errorf("an event of %d bytes cannot be cut to the %d MiB line cap", len(line), MaxEventLine>>20)
}

const clipMark = "… [cut by summit: "

// clipString keeps about the first keep bytes of s (on a rune boundary) and notes the cut; a
// string cut before is cut again from its kept part, and the note counts every byte cut.
func clipString(s string, keep int) string {
	total := len(s)
	if i := bytes.LastIndex([]byte(s), []byte(clipMark)); i >= 0 {
		var was int
		if _, err := fmt.Sscanf(s[i+len(clipMark):], "%d", &was); err == nil {
			total, s = was, s[:i]
		}
	}
	for keep > 0 && keep < len(s) && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:min(keep, len(s))] + clipMark + fmt.Sprintf("%d bytes, over the line cap]", total)
}

// walkStrings calls fn with a pointer to every string in a decoded JSON value; a string in a
// map or slice is written back when fn changes it.
func walkStrings(v *any, fn func(*string)) {
	switch x := (*v).(type) {
	case string:
		s := x
		fn(&s)
		*v = s
	case map[string]any:
		for k, e := range x {
			walkStrings(&e, fn)
			x[k] = e
		}
	case []any:
		for i := range x {
			walkStrings(&x[i], fn)
		}
	}
}
