package ui

import (
	"fmt"
	"strings"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// followHandoff selects a subagent that was just given control and shows its question: the
// user is now talking to it.
func (m *Model) followHandoff(evs []session.Event) {
	for _, e := range evs {
		h, ok := e.Data.(session.HandoffInitiated)
		if !ok || h.HandoffMode != session.HandoffTransferControl || m.o.Replay != nil {
			continue
		}
		// Its question streams in after this: the transcript shows it, and so does the
		// banner on the notice line whenever no other notice stands there.
		m.sel = e.SubagentID
		m.view(e.SubagentID).follow = true
	}
}

// awaitingUser is the transcript message the agent loop (agents/runtime, and live for an ACP
// agent) records when a subagent stops to wait for the user's message.
const awaitingUser = "waiting for a user message"

// question is what the subagent asks, one line: its last message, once it waits for the
// user (the loop's "waiting for a user message" follows it) or the user has answered it.
// Text it streams after that, its reply to the answer or its final result, is no question
// until it waits again: it must not stand on the notice line as "asks:" while it streams.
func (m *Model) question(id string) string {
	sa := m.st.Subagent(id)
	if sa == nil {
		return ""
	}
	t := sa.Transcript
	asked := false // a wait for the user, or the user's answer, came after what is seen next
	for i := t.Len() - 1; i >= 0; i-- {
		switch it := t.Item(i); {
		case it.Kind == session.ItemUser, it.Kind == session.TranscriptMessage && t.Text(i) == awaitingUser:
			asked = true
		case it.Kind == session.TranscriptToken:
			if !asked {
				return ""
			}
			return session.Sanitize(strings.Join(strings.Fields(t.Text(i)), " "))
		}
	}
	return ""
}

// startWait notes what a /wait line waits for, so the notice line can say it and mark each
// id as it ends.
func (m *Model) startWait(line string) {
	c, err := commands.Parse(line)
	if err != nil {
		return
	}
	if w, ok := c.(commands.Wait); ok {
		m.waits = w.IDs
		m.waitProgress()
	}
}

// waitProgress rewrites the wait line: each id with its state.
func (m *Model) waitProgress() {
	if len(m.waits) == 0 {
		return
	}
	var parts []string
	left := 0
	for _, id := range m.waits {
		state := "running"
		if sa := m.st.Subagent(id); sa != nil {
			if sa.Stopped {
				state = "✓ " + sa.Outcome
				if sa.Outcome != session.OutcomeSuccess {
					state = "✗ " + sa.Outcome
				}
			} else {
				left++
			}
		} else if cv := m.st.Convergence(id); cv != nil {
			switch cv.Status {
			case session.ConvergenceDone:
				state = "✓ complete"
			case session.ConvergenceReview:
				state = "⚠ waits for review"
			default:
				left++
			}
		}
		parts = append(parts, id+" "+state)
	}
	m.waitLine = fmt.Sprintf("/wait: %d of %d pending · %s", left, len(m.waits), strings.Join(parts, " · "))
}

// waitDone ends the wait line when the /wait's answer arrives.
func (m *Model) waitDone(line string) {
	if len(m.waits) == 0 {
		return
	}
	if c, err := commands.Parse(line); err == nil && c.Name() == "wait" {
		m.waitProgress()
		m.waits, m.waitLine = nil, ""
	}
}
