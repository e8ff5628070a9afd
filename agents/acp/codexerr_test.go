package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestCodexTurnError: codex-acp's message that is a provider's error body is read as the
// turn's error (sanitised); any other text, or another agent's, is its answer.
func TestCodexTurnError(t *testing.T) {
	codex := &sdk.Implementation{Name: codexACP}
	body := `{"error":{"code":null,"message":"tapeserve: tape p (p.yaml:3), step at p.yaml:7 calls tool \"apply_patch\"\u001b[31m","param":null,"type":"invalid_request_error"}}` + "\n\n"
	msg, ok := codexTurnError(codex, body)
	if !ok || !strings.HasPrefix(msg, `tapeserve: tape p (p.yaml:3), step at p.yaml:7 calls tool "apply_patch"`) || strings.ContainsRune(msg, 0x1b) {
		t.Errorf("error body: %q %v", msg, ok)
	}
	for _, c := range []struct {
		agent *sdk.Implementation
		text  string
	}{
		{codex, "Done: wrote notes.md."},
		{codex, `{"error": {"code": 1}}`},
		{codex, `I saw {"error":{"message":"x"}} in the log`},
		{&sdk.Implementation{Name: "gemini-cli"}, `{"error":{"message":"x"}}`},
		{nil, `{"error":{"message":"x"}}`},
	} {
		if msg, ok := codexTurnError(c.agent, c.text); ok {
			t.Errorf("%q read as an error %q", c.text, msg)
		}
	}
}
