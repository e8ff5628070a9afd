package serve

import (
	"fmt"
	"testing"
)

// A long-lived server forgets its oldest finished runs beyond MaxKept, never a running one.
func TestForgetOldRuns(t *testing.T) {
	s := New(nil, Options{})
	for i := range MaxKept + 5 {
		id := fmt.Sprintf("r%d", i)
		rn := &run{id: id, ended: i != 1} // r1 still runs
		s.runs[id] = rn
		s.order = append(s.order, id)
	}
	s.mu.Lock()
	s.forget()
	s.mu.Unlock()
	if len(s.runs) != MaxKept || len(s.order) != MaxKept {
		t.Fatalf("%d runs kept, %d in order; want %d", len(s.runs), len(s.order), MaxKept)
	}
	for _, gone := range []string{"r0", "r2", "r3", "r4", "r5"} {
		if s.runs[gone] != nil {
			t.Errorf("%s kept", gone)
		}
	}
	if s.runs["r1"] == nil || s.runs["r6"] == nil || s.order[0] != "r1" {
		t.Errorf("kept the wrong runs: first %s", s.order[0])
	}
}

// seqOf reads the envelope's seq, and 0 from a line without one.
func TestSeqOf(t *testing.T) {
	for line, want := range map[string]uint64{
		`{"v":1,"seq":17,"ts":"x"}`:    17,
		`{"v":1,"seq":0}`:              0,
		`{"v":1,"type":"x","seq":3}`:   0, // seq comes second in an envelope
		`garbage`:                      0,
		`{"data":{"x":1},"seq":99999}`: 0, // not in the envelope's prefix
	} {
		if got := seqOf([]byte(line)); got != want {
			t.Errorf("seqOf(%s) = %d, want %d", line, got, want)
		}
	}
}
