package imports

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// genJSONish writes a random value for a Gemini content: mostly the shapes Gemini CLI writes,
// with every variation the general decoder reads differently (keys in another case, twice or
// escaped, nulls, nested lists, numbers and strings of every kind) and, now and then, a byte
// cut, added or changed, so that both readers meet invalid input too.
type genJSONish struct{ rng *rand.Rand }

func (g genJSONish) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g genJSONish) ws() string {
	if g.rng.IntN(6) == 0 {
		return g.pick(" ", "\n", "\t ", "\r\n")
	}
	return ""
}

func (g genJSONish) str() string {
	switch g.rng.IntN(12) {
	case 0:
		return `"line one\nline \"two\"\ttab \\ slash \/"`
	case 1:
		return `"\u00e9t\u00E9 \ud83d\ude00 and a lone \ud800 surrogate"`
	case 2:
		return "\"caf\xc3\xa9 and bad \xff\xfe bytes\""
	case 3:
		return "\"raw\x01control\""
	case 4:
		return `"bad \x escape"`
	case 5:
		return `""`
	case 6:
		return `"<html> & 'quotes' ` + strings.Repeat("long text ", g.rng.IntN(40)) + `"`
	case 7:
		return `"\u2028 sep \u0000 nul"`
	default:
		return fmt.Sprintf(`"plain %d text"`, g.rng.IntN(1000))
	}
}

func (g genJSONish) num() string {
	return g.pick("0", "-0", "12", "-3.25", "1e5", "2.5E-3", "01", "1.", ".5", "-", "1e", "123456789012345678901234567890")
}

func (g genJSONish) any(depth int) string {
	if depth > 3 {
		return g.str()
	}
	switch g.rng.IntN(9) {
	case 0:
		return g.num()
	case 1:
		return g.pick("true", "false", "null", "nul", "True")
	case 2:
		var b strings.Builder
		b.WriteString("[" + g.ws())
		for i := range g.rng.IntN(4) {
			if i > 0 {
				b.WriteString("," + g.ws())
			}
			b.WriteString(g.any(depth + 1))
		}
		b.WriteString(g.ws() + "]")
		return b.String()
	case 3, 4:
		var b strings.Builder
		b.WriteString("{" + g.ws())
		for i := range g.rng.IntN(4) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(g.ws() + g.pick(`"output"`, `"error"`, `"Output"`, `"k"`, `"llmContent"`, `"\u006futput"`) + g.ws() + ":" + g.ws() + g.any(depth+1))
		}
		b.WriteString(g.ws() + "}")
		return b.String()
	default:
		return g.str()
	}
}

// obj writes an object of some of keys (each value by val), now and then with another key,
// a key twice or a key in another case.
func (g genJSONish) obj(keys []string, val func(k string) string) string {
	var b strings.Builder
	b.WriteString("{" + g.ws())
	n := 0
	add := func(k, v string) {
		if n > 0 {
			b.WriteString("," + g.ws())
		}
		b.WriteString(`"` + k + `"` + g.ws() + ":" + g.ws() + v)
		n++
	}
	for _, k := range keys {
		if g.rng.IntN(3) > 0 {
			add(k, val(k))
		}
	}
	switch g.rng.IntN(10) {
	case 0:
		add(strings.ToUpper(keys[0][:1])+keys[0][1:], val(keys[0]))
	case 1:
		add(keys[g.rng.IntN(len(keys))], val(keys[0]))
	case 2:
		add(g.pick("thoughtSignature", "extra", "videoMetadata", "ſext", `te\u0078t`), g.any(1))
	case 3:
		add(keys[0], "null")
	}
	b.WriteString(g.ws() + "}")
	return b.String()
}

func (g genJSONish) part() string {
	return g.obj(partKeys, func(k string) string {
		switch k {
		case "text":
			return g.str()
		case "thought":
			return g.pick("true", "false", "null", `"yes"`)
		case "functionCall":
			return g.obj(callKeys, func(k string) string {
				if k == "args" {
					return g.any(0)
				}
				return g.str()
			})
		case "functionResponse":
			return g.obj(responseKeys, func(k string) string {
				if k == "response" {
					return g.any(0)
				}
				return g.str()
			})
		case "inlineData":
			return g.obj(inlineKeys, func(string) string { return g.pick(`"image/png"`, "3", g.str()) })
		}
		return g.any(0)
	})
}

func (g genJSONish) parts() string {
	var s string
	switch g.rng.IntN(8) {
	case 0:
		s = g.str()
	case 1:
		s = g.part()
	case 2:
		s = g.pick("null", "3", "[]", "[[]]", `[["nested"]]`, "[null]", `[{"text":"a"},null]`)
	default:
		var b strings.Builder
		b.WriteString("[" + g.ws())
		for i := range 1 + g.rng.IntN(3) {
			if i > 0 {
				b.WriteString("," + g.ws())
			}
			if g.rng.IntN(5) == 0 {
				b.WriteString(g.str())
			} else {
				b.WriteString(g.part())
			}
		}
		b.WriteString(g.ws() + "]")
		s = b.String()
	}
	if g.rng.IntN(8) == 0 && len(s) > 0 { // a byte cut, added or changed
		i := g.rng.IntN(len(s))
		switch g.rng.IntN(3) {
		case 0:
			s = s[:i] + s[i+1:]
		case 1:
			s = s[:i] + g.pick(`"`, `\`, ",", "}", "]", "\x00") + s[i:]
		default:
			s = s[:i] + g.pick(`"`, "x", "{", "[") + s[i+1:]
		}
	}
	return s
}

// checkParts holds fastParts to the general decoder on b: when it takes b, the general
// decoder reads b without an error to the same parts. It reports whether fastParts took b.
func checkParts(t testing.TB, b []byte) bool {
	fast, ok := fastParts(b)
	var general gmParts
	err := general.unmarshalGeneral(b)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("fastParts took %q, which the general decoder refuses: %v", b, err)
	}
	if !reflect.DeepEqual(fast, general) {
		t.Fatalf("fastParts(%q) =\n%#v\nthe general decoder:\n%#v", b, fast, general)
	}
	for i := range fast {
		if r := fast[i].FunctionResponse; r != nil {
			checkResponse(t, r.Response)
		}
	}
	return true
}

// checkResponse holds fastResponseText to responseTextGeneral.
func checkResponse(t testing.TB, raw []byte) bool {
	got, ok := fastResponseText(raw)
	if !ok {
		return false
	}
	if want := responseTextGeneral(raw); got != want {
		t.Fatalf("fastResponseText(%q) = %q, the general decoder %q", raw, got, want)
	}
	return true
}

// TestGmPartsFastMatches: on 20,000 random contents and responses, the hand-written reader
// either declines or reads what the general decoder reads; and it takes the usual shapes
// (the test fails if it declines too much to be worth having).
func TestGmPartsFastMatches(t *testing.T) {
	g := genJSONish{rand.New(rand.NewPCG(7, 11))}
	const n = 20000
	took, tookResp := 0, 0
	for range n {
		if checkParts(t, []byte(g.parts())) {
			took++
		}
		if checkResponse(t, []byte(g.any(0))) {
			tookResp++
		}
	}
	t.Logf("fastParts took %d of %d contents; fastResponseText %d of %d responses", took, n, tookResp, n)
	if took < n/8 || tookResp < n/20 {
		t.Errorf("fastParts took %d of %d, fastResponseText %d of %d: the generator or the reader changed", took, n, tookResp, n)
	}
	// The shapes Gemini CLI writes are always taken.
	for _, b := range []string{
		`"Why does the build fail?"`,
		`[{"text":"Looking."}]`,
		`[{"text":"thinking","thought":true},{"text":"answer"}]`,
		`[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"line\nline"}}}]`,
		`[{"functionResponse":{"id":"c2","name":"run_shell_command","response":{"error":"exit 1"}}}]`,
		`[{"functionCall":{"id":"c3","name":"write_file","args":{"content":"x","file_path":"/p/a.go"}}}]`,
		`{"inlineData":{"mimeType":"image/png"}}`,
		`[{"text":"a","thoughtSignature":"c2lnbmF0dXJl"}]`,
	} {
		if !checkParts(t, []byte(b)) {
			t.Errorf("fastParts declined %s", b)
		}
	}
}

// FuzzGmPartsFast: the same property on whatever the fuzzer makes (go test runs the seeds).
func FuzzGmPartsFast(f *testing.F) {
	g := genJSONish{rand.New(rand.NewPCG(3, 5))}
	for range 200 {
		f.Add([]byte(g.parts()))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParts(t, b)
		checkResponse(t, b)
	})
}
