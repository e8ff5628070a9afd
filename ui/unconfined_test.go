package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// A session whose subagents' shells run unconfined (no Landlock, --allow-unconfined-shell)
// says so in the header; one that does not, does not.
func TestHeaderSaysShellUnconfined(t *testing.T) {
	for _, unconfined := range []bool{true, false} {
		m, _ := newModel(t, 120, 30, &fakeBackend{})
		m.Update(EventsMsg{session.Event{V: 1, Seq: 1, TS: t0.Add(time.Second), SessionID: "s-demo", Type: session.TypeSessionStarted,
			Data: session.SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/w", PermissionMode: "acceptEdits",
				Provider: "script", AllowedTools: []string{}, UnconfinedShell: unconfined}}})
		if got := strings.Contains(ansi.Strip(m.header()), "shell unconfined"); got != unconfined {
			t.Errorf("unconfined %t: header %q", unconfined, ansi.Strip(m.header()))
		}
	}
}
