package record

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// streamSecrets are every secret shape the Redactor knows, in the sentence a model would stream.
func streamSecrets() (env []string, texts []string) {
	env = []string{"DB_PASSWORD=correct-horse-battery-staple", "OPENAI_API_KEY=local-proxy-key-31337",
		`WEIRD_TOKEN=a"quoted\value with spaces`}
	for _, s := range []string{fakeOpenAI, fakeOpenAIProj, fakeAnthropic, fakeAWS, fakeAWSTemp, fakeGHP, fakeGHS,
		fakeGHPat, fakeSlack, "Bearer " + fakeJWT, "bearer 1f9c2a7e8b", "BEARER    abcdefghijklmnopqrstuvwxyz",
		"correct-horse-battery-staple", "local-proxy-key-31337", `a"quoted\value with spaces`} {
		texts = append(texts,
			"the key is "+s+", keep it safe.\n",
			s,
			"```\nexport X="+s+"\n```",
			"two: "+s+" and "+s+"!")
	}
	return env, texts
}

// stream pushes the pieces and returns what was released, in order.
func stream(r *Redactor, pieces []string) string {
	s := r.Stream()
	var b strings.Builder
	for _, p := range pieces {
		b.WriteString(s.Push(p))
	}
	b.WriteString(s.Flush())
	return b.String()
}

// TestStreamRedactEveryOffset splits every secret shape at every byte offset, and into random
// pieces, and checks that what the stream releases is what redacting the whole text gives: the
// secret never leaves in parts.
func TestStreamRedactEveryOffset(t *testing.T) {
	env, texts := streamSecrets()
	r := NewRedactor(env)
	rng := rand.New(rand.NewPCG(7, 13))
	secrets := []string{"correct-horse", "local-proxy", `quoted\value`, "4fJ8kq2LmN9p", "IOSFODNN7", "16C7e42F", "api03-AbCd", "eyJzdWIi", "1f9c2a7e8b", "abcdefghijklmnopqrstuvwxyz", "1234567890123-1234567890123"}
	checked := 0
	for _, text := range texts {
		want := r.RedactText(text)
		for _, s := range secrets {
			if strings.Contains(want, s) {
				t.Fatalf("RedactText(%q) keeps %q: %q", text, s, want)
			}
		}
		if want == text {
			t.Fatalf("RedactText(%q) redacted nothing", text)
		}
		for i := 0; i <= len(text); i++ {
			if got := stream(r, []string{text[:i], text[i:]}); got != want {
				t.Fatalf("split at %d of %q:\n got %q\nwant %q", i, text, got, want)
			}
			checked++
		}
		// Every pair of offsets: three pieces.
		for i := 0; i <= len(text); i += 3 {
			for j := i; j <= len(text); j += 5 {
				if got := stream(r, []string{text[:i], text[i:j], text[j:]}); got != want {
					t.Fatalf("split at %d,%d of %q:\n got %q\nwant %q", i, j, text, got, want)
				}
				checked++
			}
		}
		// Byte by byte, and random pieces.
		bytesOf := make([]string, len(text))
		for i := range text {
			bytesOf[i] = text[i : i+1]
		}
		if got := stream(r, bytesOf); got != want {
			t.Fatalf("byte by byte %q:\n got %q\nwant %q", text, got, want)
		}
		for range 20 {
			var pieces []string
			for rest := text; rest != ""; {
				n := min(len(rest), 1+rng.IntN(6))
				pieces, rest = append(pieces, rest[:n]), rest[n:]
			}
			if got := stream(r, pieces); got != want {
				t.Fatalf("pieces %q:\n got %q\nwant %q", pieces, got, want)
			}
			checked++
		}
	}
	t.Logf("%d texts, %d splits checked", len(texts), checked)
}

// TestStreamRedactReleasesProse checks that ordinary text is not held back: only a tail that
// could still become a secret waits for the next delta.
func TestStreamRedactReleasesProse(t *testing.T) {
	r := NewRedactor([]string{"DB_PASSWORD=correct-horse-battery-staple"})
	s := r.Stream()
	for _, c := range []struct{ in, out string }{
		{"Hello, world. ", "Hello, world. "},
		{"The plan has three steps.\n", "The plan has three steps.\n"},
		{"Use the key sk", "Use the key "}, // "sk" may be the start of sk-…
		{"etch of the map. ", "sketch of the map. "},
		{"Authorization: Bearer", "Authorization: "},
		{" abc", ""},
		{"defghijklmnopqrstuvwxyz0123 ok", "Bearer [REDACTED] ok"},
		{" the password is correct-horse", " the password is "},
		{"-battery-staple.", "[REDACTED:DB_PASSWORD]."},
	} {
		if got := s.Push(c.in); got != c.out {
			t.Fatalf("Push(%q) = %q, want %q", c.in, got, c.out)
		}
	}
	if s.Held() {
		t.Fatal("nothing should be held after a sentence ends")
	}
}

// TestStreamRedactHoldIsBounded streams a token that never ends: the held text stays bounded,
// and none of the token leaks after it is released.
func TestStreamRedactHoldIsBounded(t *testing.T) {
	r := NewRedactor(nil)
	s := r.Stream()
	var out strings.Builder
	out.WriteString(s.Push("key: sk-"))
	chunk := strings.Repeat("a1B2c3D4", 1024)
	for range 20 {
		out.WriteString(s.Push(chunk))
		if len(s.held) > maxHold+len(chunk) {
			t.Fatalf("held %d bytes", len(s.held))
		}
	}
	out.WriteString(s.Push(" done"))
	out.WriteString(s.Flush())
	if got := out.String(); got != "key: [REDACTED] done" {
		t.Fatalf("got %.200q", got)
	}
}

// TestStreamRedactRandom streams random texts made of secret fragments, near misses and
// awkward bytes (quotes, backslashes, UTF-8 and invalid UTF-8), in random pieces.
func TestStreamRedactRandom(t *testing.T) {
	env, _ := streamSecrets()
	r := NewRedactor(env)
	frags := []string{"sk-", "Bearer", "bearer", " ", "a", "0", "-", "_", "gh", "p_", "xox", "b-", "correct-horse",
		"-battery-staple", `"`, `\`, "é", "\xff", "AKIA", "github_pat_", ".", "+", "\n", "local-proxy", "Z"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(200) {
			b.WriteString(frags[rng.IntN(len(frags))])
		}
		text := b.String()
		var pieces []string
		for rest := text; rest != ""; {
			n := min(len(rest), 1+rng.IntN(12))
			pieces, rest = append(pieces, rest[:n]), rest[n:]
		}
		if got, want := stream(r, pieces), r.RedactText(text); got != want {
			t.Fatalf("pieces %q:\n got %q\nwant %q", pieces, got, want)
		}
	}
}

func FuzzStreamRedact(f *testing.F) {
	env, texts := streamSecrets()
	r := NewRedactor(env)
	for _, text := range texts {
		f.Add(text, uint64(3))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		if len(text) > 4<<10 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		var pieces []string
		for rest := text; rest != ""; {
			n := min(len(rest), 1+rng.IntN(12))
			pieces, rest = append(pieces, rest[:n]), rest[n:]
		}
		if got, want := stream(r, pieces), r.RedactText(text); got != want {
			t.Fatalf("pieces %q:\n got %q\nwant %q", pieces, got, want)
		}
	})
}
