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
