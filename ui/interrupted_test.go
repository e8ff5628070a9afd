package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// TestInterruptedConflictNotOffered: a conflict whose review was asked for, in a convergence
// that then completed as interrupted (a fork made while it computed), is offered nowhere: not
// in the inbox or the header's count, not in completion, and its tree row says interrupted.
func TestInterruptedConflictNotOffered(t *testing.T) {
	evs := upTo(events(t), session.TypeConflictReviewRequest, true)
	last := evs[len(evs)-1]
	done := session.New("", session.ConvergenceComplete{ConvergenceID: "cv-1", Outcome: session.OutcomeInterrupted, ConflictCount: 1})
	done.Seq, done.TS, done.SessionID = last.Seq+1, last.TS.Add(time.Millisecond), last.SessionID
	m, _ := newModel(t, 120, 40, &fakeBackend{})
	m.Update(EventsMsg(slices.Clone(evs[:len(evs)-1])))
	m.Update(EventsMsg([]session.Event{last}))
	if w := m.waiting(); len(w) != 1 || w[0].ID != "cf-1" {
		t.Fatalf("before: waiting %+v", w)
	}
	m.Update(EventsMsg([]session.Event{done}))
	if w := m.waiting(); len(w) != 0 {
		t.Errorf("the inbox offers %+v", w)
	}
	out := ansi.Strip(m.Render())
	if strings.Contains(out, "waiting") || !strings.Contains(out, "↯ cf-1") || !strings.Contains(out, "interrupted") {
		t.Errorf("the screen offers cf-1:\n%s", out)
	}
	if c := m.live().Conflicts; len(c) != 0 {
		t.Errorf("completion offers %v", c)
	}
}
