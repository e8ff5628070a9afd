package acp

import "testing"

// Gemini CLI reports usage in the prompt response's _meta, not in usage; a mode change comes
// as a message chunk that is a notice, not turn text.
func TestMetaUsageAndModeNotice(t *testing.T) {
	u := metaUsage(map[string]any{"quota": map[string]any{"token_count": map[string]any{"input_tokens": 1200.0, "output_tokens": 34.0}}})
	if u == nil || u.InputTokens != 1200 || u.OutputTokens != 34 || u.TotalTokens != 1234 {
		t.Errorf("usage %+v", u)
	}
	if metaUsage(nil) != nil || metaUsage(map[string]any{"quota": "x"}) != nil {
		t.Error("usage from nothing")
	}
	for s, want := range map[string]bool{"[MODE_UPDATE] autoEdit": true, "[MODE_UPDATE] plan": true, "[MODE_UPDATE] autoEdit and more": false, "Writing [MODE_UPDATE] x": false} {
		if modeNotice().MatchString(s) != want {
			t.Errorf("%q: %v", s, !want)
		}
	}
}
