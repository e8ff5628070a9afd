package session_test

import (
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// An id with a line break, a control or an invisible character is refused by the fold: ids
// are printed bare, and such an id in a hand-edited recording would forge lines of --print.
func TestFoldRefusesForgingIDs(t *testing.T) {
	for _, id := range []string{"sa-1\nsa-2 done", "sa\x1b[2J", "sa-\u202e1", "sa\u200b1"} {
		evs := sessiontest.FullSession()
		st := &session.State{}
		var err error
		for i, e := range evs {
			if i == 4 {
				e.SubagentID = id // a SubagentSpawned
			}
			if err = session.Apply(st, e); err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), "holds a control or invisible character") {
			t.Errorf("%q: %v", id, err)
		}
	}
}

// The id check runs on ids the fold has not seen, whatever the event: a session id on the first
// event, a subagent id that never spawned (the id error comes before "unknown subagent").
func TestFoldRefusesForgingIDsAnywhere(t *testing.T) {
	first := session.New("", session.SessionStarted{Schema: 1})
	first.Seq, first.SessionID = 1, "s-1\x1b[2J"
	if err := session.Apply(&session.State{}, first); err == nil || !strings.Contains(err.Error(), "holds a control or invisible character") {
		t.Errorf("forged session id: %v", err)
	}
	st := sessiontest.Fold(t, sessiontest.FullSession()[:5])
	e := session.New("sa-9\u202e", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "x"})
	e.Seq, e.SessionID = st.LastSeq+1, st.SessionID
	if err := session.Apply(st, e); err == nil || !strings.Contains(err.Error(), "holds a control or invisible character") {
		t.Errorf("forged id of an unknown subagent: %v", err)
	}
}
