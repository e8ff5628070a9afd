package live

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSimClockOrder: participants interleave by simulated time, ties in waiting order, and
// time jumps rather than passes.
func TestSimClockOrder(t *testing.T) {
	for round := 0; round < 20; round++ {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		c := NewSimClock(start)
		var mu sync.Mutex
		var log []string
		add := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
		for _, p := range []struct {
			name string
			step time.Duration
		}{{"a", 3 * time.Second}, {"b", 2 * time.Second}, {"c", 2 * time.Second}} {
			p := p
			c.Go(func() {
				for i := 0; i < 3; i++ {
					add(fmt.Sprintf("%s%d@%d", p.name, i, c.Now().Sub(start)/time.Second))
					_ = c.Sleep(context.Background(), p.step)
				}
			})
		}
		wall := time.Now()
		c.Done()
		<-c.Idle()
		got := strings.Join(log, " ")
		want := "a0@0 b0@0 c0@0 b1@2 c1@2 a1@3 b2@4 c2@4 a2@6"
		if got != want {
			t.Fatalf("round %d: %s\nwant     %s", round, got, want)
		}
		if time.Since(wall) > time.Second {
			t.Fatalf("simulated 6 s took %v of wall time", time.Since(wall))
		}
	}
}

// TestSimClockEventsAndCancel: an event wakes its waiter at the current time; cancelling a
// sleeper wakes it at once with the context's error; AfterFunc is a simulated timeout.
func TestSimClockEventsAndCancel(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewSimClock(start)
	ev := c.NewEvent()
	var woke time.Duration
	var sleepErr error
	ctx, cancel := context.WithCancel(context.Background())
	c.Go(func() {
		_ = ev.Wait(context.Background())
		woke = c.Now().Sub(start)
	})
	c.Go(func() { sleepErr = c.Sleep(ctx, time.Hour) })
	timedOut := false
	AfterFunc(c, context.Background(), 5*time.Second, func() { timedOut = true; cancel() })
	c.Go(func() {
		_ = c.Sleep(context.Background(), time.Second)
		ev.Fire()
	})
	c.Done()
	<-c.Idle()
	if woke != time.Second {
		t.Errorf("event waiter woke at %v, want 1s", woke)
	}
	if !timedOut || sleepErr != context.Canceled {
		t.Errorf("timeout fired %v, sleeper err %v", timedOut, sleepErr)
	}
	if now := c.Now().Sub(start); now != 5*time.Second {
		t.Errorf("clock at %v: the cancelled hour-long sleep must not advance it", now)
	}
}
