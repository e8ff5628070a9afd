package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// TestSpoolPrintLongSessions: long sessions (many thousand items, monitor handoffs whose
// mirrored items keep growing after the log names them, items spilled to the file between
// their header and their end) and the fixture with every event type print through a spool
// what the reference printer prints for the full fold, with the spool's memory from a few
// bytes to the default.
func TestSpoolPrintLongSessions(t *testing.T) {
	defer func(m int) { memBlock = m }(memBlock)
	sessions := map[string][]session.Event{"full session": sessiontest.FullSession()}
	for seed := range uint64(3) {
		sessions[fmt.Sprintf("long %d", seed)] = genSession(200+seed, 20000)
	}
	for name, evs := range sessions {
		want := oldRender(fold(t, evs))
		for _, c := range []struct{ memory, memBlock int }{{16, 5}, {4 << 10, 1 << 10}, {0, 32 << 10}} {
			if c.memory == 16 && name != "full session" && name != "long 0" {
				continue // slow (a write to the file every 5 bytes, most of the test's time): one long session shows it
			}
			memBlock = c.memBlock
			sp := NewTextSpool(c.memory)
			st := &session.State{}
			for _, e := range evs {
				if err := sp.Apply(st, e); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			var out strings.Builder
			if err := sp.Print(&out, st); err != nil {
				t.Fatal(err)
			}
			sp.Close()
			if got := out.String(); got != want {
				t.Fatalf("%s, %+v:\n%s", name, c, firstDiff(got, want))
			}
		}
	}
}

// TestSpoolNeedsEveryEvent: a state folded without the spool is refused, not printed half
// empty; nothing is folded after Print.
func TestSpoolNeedsEveryEvent(t *testing.T) {
	evs := genSession(9, 100)
	st := fold(t, evs[:10])
	sp := NewTextSpool(0)
	if err := sp.Apply(st, evs[10]); err == nil || !strings.Contains(err.Error(), "folded without the text spool") {
		t.Fatalf("got %v", err)
	}
	st = &session.State{}
	for _, e := range evs[:10] {
		if err := sp.Apply(st, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.Print(&strings.Builder{}, st); err != nil {
		t.Fatal(err)
	}
	if err := sp.Apply(st, evs[10]); err == nil {
		t.Fatal("Apply after Print was accepted")
	}
}

// TestSpoolMemoryFlat: what a fold through the spool keeps in memory besides the blocks of text
// it holds (which its memory bounds) does not grow with the number of transcript items: one
// subagent streaming 10× more tokens, tool calls and results, thinking and notes, under a
// monitor handoff (so the log mirrors every item), with commands in the log between. A full
// fold's memory grows (which shows the measure sees growth).
func TestSpoolMemoryFlat(t *testing.T) {
	retained := func(spooled bool, n int) int64 {
		var sp *TextSpool
		got := sessiontest.Retained(func() any {
			st := &session.State{}
			apply := session.Apply
			if spooled {
				sp = NewTextSpool(1 << 20)
				apply = sp.Apply
			}
			sessiontest.FoldStream(t, st, apply, n)
			return st
		})
		if sp != nil {
			got -= sp.blockBytes() // the text held in memory, up to the spool's memory
			sp.Close()
		}
		return got
	}
	const n = 20_000
	fullSmall, fullBig := retained(false, n), retained(false, 10*n)
	if fullBig-fullSmall < 1<<20 {
		t.Fatalf("a full fold of %d more events retained only %d more bytes: the measure is off", 9*n, fullBig-fullSmall)
	}
	small, big := retained(true, n), retained(true, 10*n)
	t.Logf("retained: full fold %d → %d bytes, spooled %d → %d bytes", fullSmall, fullBig, small, big)
	if big-small > 64<<10 {
		t.Errorf("a spooled fold of %d events retained %d bytes, of %d events %d: it grows with the transcript (a full fold: %d, %d)",
			n, small, 10*n, big, fullSmall, fullBig)
	}
}

// blockBytes is the memory the spool's blocks of text take: in its streams and free to reuse.
func (sp *TextSpool) blockBytes() int64 {
	n := 0
	for _, s := range sp.all {
		for _, b := range s.blocks {
			n += cap(b)
		}
	}
	for _, b := range sp.free {
		n += cap(b)
	}
	return int64(n)
}
