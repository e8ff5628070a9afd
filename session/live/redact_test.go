package live

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// A model that streams secrets in pieces (a bearer token, an Anthropic key, a password from the
// environment, a GitHub token in thinking) gets each redacted whole: nothing of them is in the
// recording, the folded transcript or what run prints, and the text around them still streams
// as several deltas.
func TestSplitSecretsRedactedWhole(t *testing.T) {
	t.Setenv("DB_PASSWORD", "correct-horse-battery-staple")
	h := newHarness(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(`tapes:
  - name: leaky
    match: {task: "leak"}
    rate: 50
    steps:
      - think: "checking ghp_16C7e42F"
      - sleep: 1s
      - think: "292c6912E7710c838347Ae178B4a now"
      - sleep: 1s
      - say: "The header is Authorization: Bear"
      - sleep: 1s
      - say: "er eyJhbGciOiJIUzI1NiJ9.eyJzdWIi"
      - sleep: 1s
      - say: "OiIxMjM0NTY3ODkwIn0.dozjg ok. Key sk-ant-"
      - sleep: 1s
      - say: "api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 and the password correct-horse-"
      - sleep: 1s
      - say: "battery-staple done."
      - capsule: {summary: "leaked nothing"}
`), 0o644)
	h.tapes = dir
	o := h.run("/delegate leak --agent-type analyzer\n/wait sa-1\n")
	raw, err := os.ReadFile(h.rec)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render.Print(&out, o.state); err != nil {
		t.Fatal(err)
	}
	text := ""
	tr := o.state.Subagent("sa-1").Transcript
	for i := range tr.Len() {
		text += tr.Text(i) + "\n"
	}
	pieces := []string{"16C7e42F", "292c6912E", "eyJzdWIi", "OiIxMjM0", "dozjg", "api03", "AbCdEfGh", "correct-horse", "battery-staple"}
	for _, where := range []struct{ name, s string }{{"recording", string(raw)}, {"transcript", text}, {"print", out.String()}, {"progress", o.progress}} {
		for _, p := range pieces {
			if strings.Contains(where.s, p) {
				t.Errorf("%s holds %q", where.name, p)
			}
		}
	}
	for _, want := range []string{"Authorization: Bearer [REDACTED] ok. Key [REDACTED] and the password [REDACTED:DB_PASSWORD] done.", "checking [REDACTED] now"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q:\n%s", want, text)
		}
	}
	if n := len(o.transcript("sa-1", session.TranscriptToken)); n < 5 {
		t.Errorf("the text streamed as %d token events; want it still streamed", n)
	}
}
