package fork

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

const valid = "../../testdata/recordings/valid.jsonl"

// TestLoad: a plan holds the parent's state at the fork point, hashed; the end, seq 0 and a
// seq the file does not hold are refused with the range it does.
func TestLoad(t *testing.T) {
	st, _, err := record.LoadFile(valid, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		seq  uint64
		want string
	}{
		{0, "seqs start at 1"},
		{st.LastSeq + 5, "holds no event"},
		{st.LastSeq, "is the session's end"},
	} {
		if _, err := Load(valid, c.seq); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("seq %d: %v, want %q", c.seq, err, c.want)
		}
	}
	p, err := Load(valid, 5)
	if err != nil {
		t.Fatal(err)
	}
	if p.State.LastSeq != 5 || p.Parent.SessionID != st.SessionID || len(p.Parent.SHA256) != 64 || !filepath.IsAbs(p.Parent.Path) {
		t.Errorf("plan %+v", p.Parent)
	}
	var seqs []uint64
	if err := p.Events(func(e session.Event) error { seqs = append(seqs, e.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 4 || seqs[0] != 2 || seqs[3] != 5 {
		t.Errorf("events %v, want 2..5", seqs)
	}
}

// TestEventsParentChanged: a parent whose bytes before the fork point change between the plan
// and the copy is caught, not copied as if it were the same.
func TestEventsParentChanged(t *testing.T) {
	data, err := os.ReadFile(valid)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.jsonl")
	os.WriteFile(path, data, 0o644)
	p, err := Load(path, 6)
	if err != nil {
		t.Fatal(err)
	}
	// Same length, another letter in the first line's workspace path: the file still reads.
	i := strings.Index(string(data), `"workspace":"`) + len(`"workspace":"`) + 1
	changed := []byte(string(data))
	if changed[i] == 'Z' {
		changed[i] = 'Y'
	} else {
		changed[i] = 'Z'
	}
	os.WriteFile(path, changed, 0o644)
	err = p.Events(func(session.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "changed while the fork was made") {
		t.Errorf("a changed parent: %v", err)
	}
}

// TestClosing: what was open at the fork point closes in order: pending requests denied, then
// running subagents interrupted, children before their parents, then open handoffs and
// convergences still computing (one waiting for review stays open); everything folds.
func TestClosing(t *testing.T) {
	ix, err := record.BuildIndexFile(valid, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Every event but the end is a fork point whose closing events fold onto its state.
	for i := 1; i < ix.Len()-1; i++ {
		seq := ix.Seq(i)
		p, err := Load(valid, seq)
		if err != nil {
			t.Fatal(err)
		}
		st := p.State
		st.SessionID = "s-fork" // the closing events are the fork's
		fork := *st
		fork.Fork = &session.SessionForked{Parent: p.Parent}
		running := p.Interrupted()
		review := map[string]bool{} // waiting for review at the fork point (the fold shares the pointers)
		for _, cv := range st.Convergences {
			review[cv.ID] = cv.Status == session.ConvergenceReview && cv.Strategy != "apply"
		}
		for k, e := range p.Closing() {
			e.Seq, e.SessionID, e.TS = seq+uint64(k)+1, "s-fork", st.LastTS
			if err := session.Apply(&fork, e); err != nil {
				t.Fatalf("fork at #%d: closing %v: %v", seq, e, err)
			}
		}
		for _, id := range running {
			if sa := fork.Subagent(id); sa.Status != session.StatusInterrupted {
				t.Errorf("fork at #%d: %s is %s", seq, id, sa.Status)
			}
		}
		for _, sa := range fork.Subagents {
			if !sa.Terminal() || sa.PendingRequest != "" {
				t.Errorf("fork at #%d: %s still %s (pending %q)", seq, sa.ID, sa.Status, sa.PendingRequest)
			}
		}
		// A convergence waiting for review stays open (the fork's orchestrator takes the
		// review over); every other one is closed.
		for _, cv := range fork.Convergences {
			switch {
			case review[cv.ID] && cv.Status != session.ConvergenceReview:
				t.Errorf("fork at #%d: %s waited for review and is now %s", seq, cv.ID, cv.Status)
			case !review[cv.ID] && cv.Status != session.ConvergenceDone:
				t.Errorf("fork at #%d: %s still %s", seq, cv.ID, cv.Status)
			}
		}
	}
}
