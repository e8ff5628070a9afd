package session

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\nline two\tTab", "plain text\nline two\tTab"},
		{"héllo wörld ✓", "héllo wörld ✓"},
		{"red \x1b[31mRED\x1b[0m done", `red \x1b[31mRED\x1b[0m done`},
		{"clear \x1b[2J", `clear \x1b[2J`},
		{"title \x1b]0;pwned\x07 after", `title \x1b]0;pwned\x07 after`},
		{"clip \x1b]52;c;ZXZpbA==\x1b\\ after", `clip \x1b]52;c;ZXZpbA==\x1b\ after`},
		{"c1 csi \u009b31m x", `c1 csi \u009b31m x`},
		{"c1 osc \u009d0;t\u009c x", `c1 osc \u009d0;t\u009c x`},
		{"cr\roverwrite", `cr\x0doverwrite`},
		{"bell\x07 back\bspace del\x7f", `bell\x07 back\x08space del\x7f`},
		{"bad utf8 \xff\xfe end", `bad utf8 \xff\xfe end`},
		{"trailing esc \x1b", `trailing esc \x1b`},
		{`already \x1b escaped`, `already \x1b escaped`},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzSanitize: whatever comes in, nothing that reaches a terminal can start a sequence.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b[31m", "\x1b]0;x\x07", "\u009b1m", "ok", "\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		for _, r := range out {
			if r == 0x1b || r == '\r' || r == 0x7f || r < 0x20 && r != '\n' && r != '\t' || r >= 0x80 && r < 0xa0 {
				t.Fatalf("Sanitize(%q) = %q keeps control %U", s, out, r)
			}
		}
		if Sanitize(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
		if !strings.Contains(s, "\x1b") && !strings.ContainsAny(s, "\u009b\u009d\u0090\u0098\u009e\u009f") && len(out) > len(s)*6 {
			t.Fatalf("output grew unexpectedly")
		}
	})
}

// Bidi overrides and zero-width characters are shown escaped, so a file name cannot reverse
// or hide text.
func TestSanitizeBidiAndInvisible(t *testing.T) {
	for in, want := range map[string]string{
		"MBIDI\u202etxt.exe\u202c": `MBIDI\u202etxt.exe\u202c`,
		"a\u200bb":                 `a\u200bb`,
		"\u2066x\u2069":            `\u2066x\u2069`,
		"\ufeffbom":                `\ufeffbom`,
		"plain é 漢 🚀":              "plain é 漢 🚀",
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
		if Sanitize(Sanitize(in)) != Sanitize(in) {
			t.Errorf("not idempotent on %q", in)
		}
	}
}

// SanitizeJSON keeps the document's value: what Sanitize would escape is written as a JSON
// escape, and the text decodes to what was encoded.
func TestSanitizeJSON(t *testing.T) {
	in := map[string]any{"name": "evil\x1b[2J\u009b31m\u202eexe\u202c\u200b\ufeff del\x7f", "ok": "é 漢 🚀\n\ttab"}
	raw, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out := SanitizeJSON(raw)
	if Sanitize(string(out)) != string(out) {
		t.Errorf("SanitizeJSON left something Sanitize escapes: %q", out)
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("not JSON any more: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(back, in) {
		t.Errorf("the value changed: %q, want %q", back, in)
	}
	if clean := []byte(`{"a": "plain"}`); &SanitizeJSON(clean)[0] != &clean[0] {
		t.Error("clean JSON is copied")
	}
	if got := string(SanitizeJSON([]byte("\"a\xffb\""))); got != `"a\ufffdb"` {
		t.Errorf("invalid UTF-8: %q", got)
	}
}

// cleanByByte is clean as it was before the eight-byte scan, byte by byte: the reference.
func cleanByByte(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			for j := i; j < len(s); {
				r, size := utf8.DecodeRuneInString(s[j:])
				if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || invisible(r) {
					return false
				}
				j += size
			}
			return true
		}
	}
	return true
}

// The eight-byte scan judges every string as the byte loop does: each special byte or rune
// at every offset of a word, alone and among others, and random mixes.
func TestCleanMatchesByteLoop(t *testing.T) {
	specials := []string{"\x00", "\x1b", "\x1f", " ", "~", "\x7f", "\n", "\t", "\r", "\x80", "\xff", "\xc3", "é", "\u0085", "\u009f", "\u00a0",
		"\u200b", "\u202e", "\u2069", "\ufeff", "\ufffd", "✓", "😀", "\xed\xa0\x80"}
	base := strings.Repeat("plain text, ", 3)
	for _, sp := range specials {
		for at := 0; at <= 24; at++ {
			s := base[:at] + sp + base[at:]
			if got, want := clean(s), cleanByByte(s); got != want {
				t.Errorf("clean(%q) = %v, want %v", s, got, want)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			if rng.IntN(4) == 0 {
				b.WriteString(specials[rng.IntN(len(specials))])
			} else {
				b.WriteByte(byte(' ' + rng.IntN(95)))
			}
		}
		if s := b.String(); clean(s) != cleanByByte(s) {
			t.Fatalf("clean(%q) = %v, the byte loop says %v", s, clean(s), cleanByByte(s))
		}
	}
}

func FuzzClean(f *testing.F) {
	f.Add("plain\ttext\n\x1b[31m \u202e é")
	f.Fuzz(func(t *testing.T, s string) {
		if clean(s) != cleanByByte(s) {
			t.Fatalf("clean(%q) = %v, the byte loop says %v", s, clean(s), cleanByByte(s))
		}
	})
}

// BenchmarkClean: model text as --print writes it (ASCII lines of about 70 bytes), the
// eight-byte scan against the byte loop it replaced.
func BenchmarkClean(b *testing.B) {
	text := strings.Repeat("The builder wrote the fix in main.go and ran the tests again; all pass.\n", 4096)
	for _, c := range []struct {
		name string
		fn   func(string) bool
	}{{"scan8", clean}, {"bytes", cleanByByte}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if !c.fn(text) {
					b.Fatal("not clean")
				}
			}
		})
	}
}
