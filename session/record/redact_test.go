package record

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
)

// Realistic secret shapes (fake values of the right length and alphabet).
const (
	fakeOpenAI     = "sk-4fJ8kq2LmN9pQr7sTuVwXyZ0aB1cD2eF3gH4iJ5kL6mN7o"
	fakeOpenAIProj = "sk-proj-Xy7_Qa-9kLmN0pQrStUvWxYz1234567890abcdEFGH_ijklMNOP-qrst"
	fakeAnthropic  = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-abcdefghijklmnop_QRSTUVwxyzAA"
	fakeAWS        = "AKIAIOSFODNN7EXAMPLE"
	fakeAWSTemp    = "ASIAY34FZKBOKMUTVV7A"
	fakeGHP        = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	fakeGHS        = "ghs_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	fakeGHPat      = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV0123456789ab"
	fakeSlack      = "xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	fakeJWT        = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

// tokenLine encodes a transcript token event carrying text, as the recorder would.
func tokenLine(t testing.TB, text string) []byte {
	t.Helper()
	e := session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: text})
	e.Seq, e.SessionID, e.TS = 7, "s-1", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	line, err := AppendLine(nil, e)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// redactText redacts text as it appears in a token event and returns the decoded text.
func redactText(t *testing.T, r *Redactor, text string) string {
	t.Helper()
	line := tokenLine(t, text)
	out := r.Redact(line)
	ev, err := DecodeLine(out)
	if err != nil {
		t.Fatalf("redacted line does not decode: %v\n%s", err, out)
	}
	if ev.Seq != 7 || ev.SubagentID != "sa-1" || ev.SessionID != "s-1" {
		t.Fatalf("envelope changed: %v", ev)
	}
	return ev.Data.(session.TranscriptEvent).Text
}

func TestRedactPatterns(t *testing.T) {
	r := NewRedactor(nil)
	cases := []struct{ in, want string }{
		{"key " + fakeOpenAI + " ok", "key [REDACTED] ok"},
		{"OPENAI_API_KEY=" + fakeOpenAIProj, "OPENAI_API_KEY=[REDACTED]"},
		{"x-api-key: " + fakeAnthropic + "\n", "x-api-key: [REDACTED]\n"},
		{"aws " + fakeAWS + ".", "aws [REDACTED]."},
		{"temp " + fakeAWSTemp, "temp [REDACTED]"},
		{"token=" + fakeGHP, "token=[REDACTED]"},
		{"(" + fakeGHS + ")", "([REDACTED])"},
		{"gho_0123456789abcdefghijKLMNOPQRST and ghu_0123456789abcdefghijKLMNOPQRST and ghr_0123456789abcdefghijKLMNOPQRST",
			"[REDACTED] and [REDACTED] and [REDACTED]"},
		{"pat " + fakeGHPat, "pat [REDACTED]"},
		{"slack " + fakeSlack + " done", "slack [REDACTED] done"},
		{"xoxp-123456-7890abcdef, xoxa-2-1234567890ab xoxr-abcdefghij1 xoxs-1234567890", "[REDACTED], [REDACTED] [REDACTED] [REDACTED]"},
		{"Authorization: Bearer " + fakeJWT, "Authorization: Bearer [REDACTED]"},
		{"authorization: bearer 1f9c2a7e8b", "authorization: bearer [REDACTED]"},
		{"AUTHORIZATION: BEARER abcdefghijklmnopqrstuvwxyz", "AUTHORIZATION: BEARER [REDACTED]"},
		{`curl -H "Authorization: Bearer ` + fakeJWT + `" https://api`, `curl -H "Authorization: Bearer [REDACTED]" https://api`},
		// At the start of a line of text: the JSON escape \n sits right before the key.
		{"export\n" + fakeOpenAI + "\n", "export\n[REDACTED]\n"},
		{"\t" + fakeGHP, "\t[REDACTED]"},
		{fakeOpenAI, "[REDACTED]"},
		// Two secrets, one text.
		{fakeAWS + " " + fakeOpenAI, "[REDACTED] [REDACTED]"},
		// HTML-escaped neighbours (goccy writes < as \u003c) do not hide a key.
		{"<" + fakeOpenAI + ">", "<[REDACTED]>"},
	}
	for _, c := range cases {
		if got := redactText(t, r, c.in); got != c.want {
			t.Errorf("redact %q\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestRedactNearMisses(t *testing.T) {
	r := NewRedactor([]string{"DEBUG_TOKEN=true", "SHORT_PASSWORD=12345", "HOME=/home/dev/a-long-home-directory"})
	for _, s := range []string{
		"pip install scikit-learn sk-learn",
		"task-description-of-the-whole-thing-here", // "sk-" after a letter
		"risk-assessment-for-the-payment-service",
		"sk-short",
		"sk-abc def ghi jkl mno pqr stu vwx",
		"AKIA is a prefix; AKIAIOSFODNN7 is too short",
		"akiaiosfodnn7example is lower case",
		"BAKIAIOSFODNN7EXAMPLE follows a letter",
		"through the night, high and right: ghp_short",
		"ghx_0123456789abcdefghijKLMNOPQRST is not a GitHub prefix",
		"github_pat_tooshort",
		"xoxo-1234567890 hugs",
		"xoxb-123",
		"Bearer token",
		"the Bearer authentication scheme",
		"Bearer: none",
		"debug is true; 12345 is short; /home/dev/a-long-home-directory is not secret",
		"", "plain ascii", "naïve unicode ✓",
	} {
		if got := redactText(t, r, s); got != s {
			t.Errorf("redacted a near miss: %q -> %q", s, got)
		}
		line := tokenLine(t, s)
		if out := r.Redact(line); &out[0] != &line[0] || !bytes.Equal(out, line) {
			t.Errorf("%q: a line without secrets must come back as the same slice", s)
		}
	}
}

func TestRedactEnvValues(t *testing.T) {
	env := []string{
		"OPENAI_API_KEY=local-proxy-key-31337",
		"GITLAB_TOKEN=glpat-xxyyzz0011",
		"DB_PASSWORD=p\"q\\r<s>&cret",
		"APP_SECRET=hunter2hunter2",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"TOKEN=top-level-token-value",
		"FEATURE_TOKEN=true",        // too short
		"PATH=/usr/bin:/bin:secret", // not a secret name
		"BROKEN",                    // no '='
	}
	r := NewRedactor(env)
	cases := []struct{ in, want string }{
		{"key local-proxy-key-31337 used", "key [REDACTED:OPENAI_API_KEY] used"},
		{"glpat-xxyyzz0011", "[REDACTED:GITLAB_TOKEN]"},
		{"pw=p\"q\\r<s>&cret;", "pw=[REDACTED:DB_PASSWORD];"},
		{"x hunter2hunter2hunter2hunter2 y", "x [REDACTED:APP_SECRET][REDACTED:APP_SECRET] y"},
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED:AWS_SECRET_ACCESS_KEY]"},
		{"top-level-token-value", "[REDACTED:TOKEN]"},
		{"flag is true, path is /usr/bin:/bin:secret", "flag is true, path is /usr/bin:/bin:secret"},
	}
	for _, c := range cases {
		if got := redactText(t, r, c.in); got != c.want {
			t.Errorf("redact %q\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	for _, name := range []string{"OPENAI_API_KEY", "x_token", "DB_PASSWORD", "APP_SECRET", "PASSWORD", "AWS_SECRET_ACCESS_KEY", "SSH_PRIVATE_KEY"} {
		if !IsSecretEnvName(name) {
			t.Errorf("IsSecretEnvName(%q) = false", name)
		}
	}
	for _, name := range []string{"HOME", "PATH", "TOKENIZER", "API_KEYS_DIR", "EDITOR"} {
		if IsSecretEnvName(name) {
			t.Errorf("IsSecretEnvName(%q) = true", name)
		}
	}
}

// TestRedactOnlyDataValues: the envelope, object keys and numbers are never rewritten, even
// when an environment value happens to equal one of them; string values in nested objects and
// arrays are.
func TestRedactOnlyDataValues(t *testing.T) {
	r := NewRedactor([]string{"A_TOKEN=session", "B_TOKEN=20261122", "C_TOKEN=TranscriptEvent", "D_TOKEN=nested-secret"})
	e := session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c1", Tool: "run_shell_command",
		Args: map[string]any{"session": "in session now", "list": []any{"nested-secret", 20261122.0}, "obj": map[string]any{"k": "a nested-secret b"}}})
	e.Seq, e.SessionID, e.TS = 20261122, "session", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	line, err := AppendLine(nil, e)
	if err != nil {
		t.Fatal(err)
	}
	out := r.Redact(line)
	ev, err := DecodeLine(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if ev.Seq != 20261122 || ev.SessionID != "session" || ev.Type != session.TypeTranscriptEvent || !ev.TS.Equal(e.TS) {
		t.Errorf("envelope changed: %s", out)
	}
	args := ev.Data.(session.TranscriptEvent).Args
	if args["session"] != "in [REDACTED:A_TOKEN] now" {
		t.Errorf("args.session = %v (the key must stay, the value be redacted)", args["session"])
	}
	list := args["list"].([]any)
	if list[0] != "[REDACTED:D_TOKEN]" || list[1] != 20261122.0 {
		t.Errorf("args.list = %v", list)
	}
	if got := args["obj"].(map[string]any)["k"]; got != "a [REDACTED:D_TOKEN] b" {
		t.Errorf("args.obj.k = %v", got)
	}
}

// TestRedactEscapes: a match never starts or ends inside a JSON escape sequence, so the output
// always decodes.
func TestRedactEscapes(t *testing.T) {
	r := NewRedactor([]string{"X_TOKEN=nabcdefg", "Y_TOKEN=u0041bcdef"})
	for _, s := range []string{
		"\nabcdefg",      // the text is newline+"abcdefg": the escape \n must not be cut
		"\\nabcdefg",     // a real backslash then the secret
		"A" + "bcdef",    // encoded plainly; not the secret u0041bcdef
		"\\u0041bcdef",   // backslash + the secret text
		"\x01u0041bcdef", // \u0001 then the secret
		"\"" + fakeGHP + "\"",
		"\\" + fakeOpenAI, // a backslash before the key: escaped as \\, then the key
	} {
		line := tokenLine(t, s)
		out := r.Redact(line)
		if _, err := DecodeLine(out); err != nil {
			t.Errorf("%q: redacted line does not decode: %v\n%s", s, err, out)
		}
	}
	if got := redactText(t, r, "\nabcdefg"); got != "\nabcdefg" {
		t.Errorf("cut an escape: %q", got)
	}
	if got := redactText(t, r, "\\nabcdefg"); got != "\\[REDACTED:X_TOKEN]" {
		t.Errorf("backslash + secret: %q", got)
	}
	if got := redactText(t, r, "\\"+fakeOpenAI); got != "\\[REDACTED]" {
		t.Errorf("backslash + key: %q", got)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", fakeOpenAI, "\n" + fakeGHP, "Bearer " + fakeJWT, "\"\\u0000", "sk-\\\"aaaaaaaaaaaaaaaaaaaaaaaa", "p\"q\\r<s>&cret", "xoxb-\n\n"} {
		f.Add(s)
	}
	r := NewRedactor([]string{"DB_PASSWORD=p\"q\\r<s>&cret", "N_TOKEN=nnnnnn", "U_TOKEN=u00000"})
	f.Fuzz(func(t *testing.T, s string) {
		line := tokenLine(t, s)
		out := r.Redact(line)
		ev, err := DecodeLine(out)
		if err != nil {
			t.Fatalf("%q: redacted line does not decode: %v\n%s", s, err, out)
		}
		if ev.Seq != 7 || ev.Type != session.TypeTranscriptEvent || ev.SubagentID != "sa-1" {
			t.Fatalf("envelope changed: %s", out)
		}
		text := ev.Data.(session.TranscriptEvent).Text
		if strings.Contains(text, "p\"q\\r<s>&cret") {
			t.Fatalf("env secret survived: %q", text)
		}
		// A key set off by spaces is redacted whatever surrounds it.
		for _, key := range []string{fakeOpenAI, fakeGHP, fakeAWS} {
			ev, err := DecodeLine(r.Redact(tokenLine(t, s+" "+key+" "+s)))
			if err != nil || strings.Contains(ev.Data.(session.TranscriptEvent).Text, key) {
				t.Fatalf("%q around %.8s…: err %v, text %q", s, key, err, ev.Data.(session.TranscriptEvent).Text)
			}
		}
		// A secret's escaped spelling cannot survive in the bytes either.
		if bytes.Contains(out, []byte(`p\"q\\r\u003cs\u003e\u0026cret`)) {
			t.Fatalf("escaped env secret survived: %s", out)
		}
	})
}

// TestRedactLinear: pathological lines (runs of anchors, of a repeated secret, of escapes)
// take linear time; a quadratic scan would need hours for these megabytes. Each takes ~0.3 s
// under -race on 2 cores; the bound is a minute because a shared host under load has
// stretched one to 12 s, and no quadratic scan comes anywhere near it.
func TestRedactLinear(t *testing.T) {
	r := NewRedactor([]string{"X_TOKEN=aaaaaa", "Y_TOKEN=" + strings.Repeat("k-", 8)})
	for _, text := range []string{
		strings.Repeat("sk-", 350_000),
		strings.Repeat("a", 1_000_000),
		strings.Repeat("k-", 500_000),
		strings.Repeat(`\u`, 300_000),
		" " + strings.Repeat("B", 1_000_000),
		"Bearer " + strings.Repeat("x", 1_000_000),
		strings.Repeat(fakeGHP+" ", 25_000),
	} {
		line := tokenLine(t, text)
		start := time.Now()
		out := r.Redact(line)
		if d := time.Since(start); d > time.Minute {
			t.Errorf("%.20q…: %v", text, d)
		}
		if _, err := DecodeLine(out); err != nil {
			t.Fatalf("%.20q…: %v", text, err)
		}
	}
}
