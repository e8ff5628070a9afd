package live

import (
	"context"
	"testing"
	"time"
)

// A participant parked on the simulated clock behind one that blocks outside it (a real shell
// command) is resumed by Interrupt once its context ends, while the other still blocks; a
// plain cancel alone leaves it parked until the baton comes back (the simulation's order).
func TestSimClockInterrupt(t *testing.T) {
	c := NewSimClock(time.Unix(0, 0))
	release := make(chan struct{})
	started := make(chan struct{})
	c.Go(func() { close(started); <-release }) // holds the baton, outside the clock
	ctx, cancel := context.WithCancel(context.Background())
	ev := c.NewEvent()
	woke := make(chan error, 1)
	go func() { woke <- ev.Wait(ctx) }() // the first participant parks; the other runs
	<-started
	cancel()
	select {
	case err := <-woke:
		t.Fatalf("woke before Interrupt (%v): the baton holder still runs", err)
	case <-time.After(100 * time.Millisecond):
	}
	c.Interrupt()
	select {
	case err := <-woke:
		if err != context.Canceled {
			t.Errorf("Wait after Interrupt: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Interrupt did not resume the cancelled waiter")
	}
	close(release)
	c.Done()
	select {
	case <-c.Idle():
	case <-time.After(5 * time.Second):
		t.Fatal("the clock did not drain")
	}
}
