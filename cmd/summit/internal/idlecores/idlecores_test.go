package idlecores

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// waitProcs polls until GOMAXPROCS is want, or fails after two seconds.
func waitProcs(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.GOMAXPROCS(0) != want {
		if time.Now().After(deadline) {
			t.Fatalf("GOMAXPROCS is %d, want %d", runtime.GOMAXPROCS(0), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestQuietDropsToOneCoreAndAMessageBringsAllBack(t *testing.T) {
	all := runtime.GOMAXPROCS(0)
	if all == 1 {
		t.Skip("one P on this machine: there is nothing to drop to")
	}
	// The quiet period is long against the test's own steps (20 ms), so that a loaded machine
	// oversleeping one of them does not count as quiet.
	k := New(400*time.Millisecond, nil)
	defer k.Stop()
	waitProcs(t, 1)

	// A message brings every core back before Update would see it: at once, not eventually.
	if msg := k.Filter(nil, "key"); msg != "key" {
		t.Fatalf("the filter changed the message to %v", msg)
	}
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("after a message GOMAXPROCS is %d, want %d", got, all)
	}
	// While messages keep coming, faster than the quiet period, it stays up.
	for range 25 {
		k.Busy()
		time.Sleep(20 * time.Millisecond)
		if got := runtime.GOMAXPROCS(0); got != all {
			t.Fatalf("busy, yet GOMAXPROCS dropped to %d", got)
		}
	}
	// Quiet again: down again.
	waitProcs(t, 1)
	k.Stop()
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("after Stop GOMAXPROCS is %d, want %d", got, all)
	}
	k.Stop() // twice is fine
	time.Sleep(100 * time.Millisecond)
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("a stopped keeper changed GOMAXPROCS to %d", got)
	}
}

func TestOneCoreAlreadyIsLeftAlone(t *testing.T) {
	all := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(all)
	k := New(10*time.Millisecond, nil)
	time.Sleep(50 * time.Millisecond)
	k.Busy()
	k.Stop()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS is %d: a keeper started on one P must not change it", got)
	}
}

func TestWorkingHoldsEveryCore(t *testing.T) {
	all := runtime.GOMAXPROCS(0)
	if all == 1 {
		t.Skip("one P on this machine: there is nothing to drop to")
	}
	var mu sync.Mutex
	working := true
	k := New(20*time.Millisecond, func() bool { mu.Lock(); defer mu.Unlock(); return working })
	defer k.Stop()
	// No message at all for ten quiet periods, but work runs: every core stays.
	time.Sleep(200 * time.Millisecond)
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("while working GOMAXPROCS dropped to %d", got)
	}
	mu.Lock()
	working = false
	mu.Unlock()
	waitProcs(t, 1)
}
