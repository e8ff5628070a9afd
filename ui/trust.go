package ui

import (
	"github.com/summit-dev/summit/session"
)

// The trust inbox item: an untrusted workspace's own config and agent files (session/trust)
// are ignored until the user trusts it. The item lists exactly what trusting enables, as
// SessionStarted recorded it; like every inbox item it is answered by selecting a choice and
// confirming it with enter, never by one key. Trusting sends /trust: the orchestrator records
// it in the user's store and WorkspaceTrusted says it applies from the next session.

// trustChoices are the answers to the trust item.
func (m *Model) trustChoices(add func(choice)) {
	add(choice{label: "trust this workspace", risky: true,
		does: "enable everything listed above (commands, URLs that get keys, hosts) and remember it until one of those files changes; in effect from the next session",
		line: func(string) string { return "/trust" }})
	add(choice{label: "not now", does: "keep ignoring them; ctrl+o or /inbox asks again"})
}

// trustBody is the item's question: what trusting the workspace would enable.
func (m *Model) trustBody(inner int) []string {
	items := m.st.Info.TrustItems
	body := []string{}
	for _, l := range wrap("workspace not trusted · "+session.Sanitize(m.st.Info.Workspace), inner) {
		body = append(body, m.sty.warn.Render(l))
	}
	body = append(body, wrap("Its own files would make summit do this; they are ignored until you trust it:", inner)...)
	for _, it := range items {
		body = append(body, wrap("  • "+session.Sanitize(it), inner)...)
	}
	return body
}
