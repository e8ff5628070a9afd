package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// The header names the tapes a session runs on: the user's own (--tapes, recorded as
// SessionStarted.config.tapes) as theirs, the embedded ones as the demo's; a recording read
// back from JSON says the same.
func TestHeaderNamesWhoseTapes(t *testing.T) {
	for _, c := range []struct {
		config map[string]any
		want   string
	}{
		{map[string]any{"tapes": true}, "your tapes, no model"},
		{map[string]any{"tapes": false}, "demo tapes, no model"},
		{nil, "demo tapes, no model"},
	} {
		start := session.SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/w", PermissionMode: "acceptEdits",
			Provider: "script", AllowedTools: []string{}, Config: c.config}
		// As a replay reads it: through the recording's JSON.
		b, _ := json.Marshal(start)
		var read session.SessionStarted
		if err := json.Unmarshal(b, &read); err != nil {
			t.Fatal(err)
		}
		for _, data := range []session.SessionStarted{start, read} {
			m, _ := newModel(t, 120, 30, &fakeBackend{})
			m.Update(EventsMsg{session.Event{V: 1, Seq: 1, TS: t0.Add(time.Second), SessionID: "s-demo", Type: session.TypeSessionStarted, Data: data}})
			h := ansi.Strip(m.header())
			other := "demo tapes"
			if c.want == "demo tapes, no model" {
				other = "your tapes"
			}
			if !strings.Contains(h, c.want) || strings.Contains(h, other) {
				t.Errorf("config %v: header %q, want %q", c.config, h, c.want)
			}
		}
	}
}
