package live

import (
	"context"
	"sync"
	"time"
)

// Clock is the time source and scheduler of a live session. Everything in a session that waits
// (tape sleeps, streaming rates, timeouts, permission decisions, /wait) waits through it.
//
// Two implementations:
//
//   - RealClock: wall time; participants are plain goroutines.
//   - SimClock: a deterministic discrete-event scheduler for headless runs on script tapes.
//     Exactly one participant runs at a time; it runs until it waits on the clock (Sleep or an
//     Event), and the scheduler then resumes the waiter with the earliest wake time (ties in
//     the order they began waiting). Time jumps instead of passing, so a tape that sleeps for
//     minutes runs in milliseconds, and the same script on the same tapes gives the same
//     events in the same order, with the same durations, every time.
//
// Rules for code running under a Clock: start concurrent work only with Go; never block on a
// channel another participant feeds except through an Event; never use context.WithTimeout
// (use AfterFunc): a real timer would fire at a nondeterministic point of simulated time.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
	// Go runs fn as a new participant.
	Go(fn func())
	// NewEvent returns an unfired event.
	NewEvent() *Event
	// Simulated reports whether time is simulated (tools then run without consuming time).
	Simulated() bool
}

// AfterFunc runs fn after d unless ctx ends first; it is how timeouts are armed on a Clock.
func AfterFunc(c Clock, ctx context.Context, d time.Duration, fn func()) {
	c.Go(func() {
		if c.Sleep(ctx, d) == nil {
			fn()
		}
	})
}

// Event is a one-shot signal between participants: Wait blocks until Fire (or ctx ends).
type Event struct {
	once sync.Once
	ch   chan struct{}
	sim  *SimClock
}

// Fire releases every present and future Wait. Firing twice is a no-op.
func (e *Event) Fire() {
	e.once.Do(func() {
		if e.sim != nil {
			e.sim.mu.Lock()
			defer e.sim.mu.Unlock()
		}
		close(e.ch)
	})
}

// Fired reports whether Fire was called.
func (e *Event) Fired() bool {
	select {
	case <-e.ch:
		return true
	default:
		return false
	}
}

// Wait blocks until the event fires (nil) or ctx ends (ctx.Err()).
func (e *Event) Wait(ctx context.Context) error {
	if e.sim != nil {
		return e.sim.wait(ctx, e, 0)
	}
	select {
	case <-e.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RealClock is wall time.
type RealClock struct{}

func (RealClock) Now() time.Time  { return time.Now().UTC() }
func (RealClock) Go(fn func())    { go fn() }
func (RealClock) Simulated() bool { return false }
func (RealClock) NewEvent() *Event {
	return &Event{ch: make(chan struct{})}
}
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SimClock is the deterministic scheduler described on Clock. The goroutine that creates it
// holds the baton (it is the first participant) and must release it by waiting on the clock
// or by calling Done when it ends.
type SimClock struct {
	mu      sync.Mutex
	now     time.Time
	seq     uint64
	waiters []*waiter
	idle    chan struct{} // closed when no participant is left
	live    int
}

type waiter struct {
	wake  time.Time
	timed bool
	ev    *Event
	ctx   context.Context
	seq   uint64
	ch    chan struct{}
}

// NewSimClock starts simulated time at start; the caller is its first participant.
func NewSimClock(start time.Time) *SimClock {
	return &SimClock{now: start.UTC(), live: 1, idle: make(chan struct{})}
}

func (c *SimClock) Simulated() bool { return true }

func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *SimClock) NewEvent() *Event { return &Event{ch: make(chan struct{}), sim: c} }

func (c *SimClock) Sleep(ctx context.Context, d time.Duration) error {
	if d < 0 {
		d = 0
	}
	return c.wait(ctx, nil, d)
}

// Go starts fn as a participant; it first runs when the current one waits.
func (c *SimClock) Go(fn func()) {
	c.mu.Lock()
	c.live++
	w := c.enqueue(context.Background(), nil, 0, true)
	c.mu.Unlock()
	go func() {
		<-w.ch
		defer c.Done()
		fn()
	}()
}

// Done ends the calling participant and hands the baton on.
func (c *SimClock) Done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live--
	if c.live == 0 {
		close(c.idle)
		return
	}
	c.dispatch()
}

// Interrupt resumes, at once, every participant whose wait's context has ended, even while
// another participant runs (one blocked in a real shell command holds the baton until it
// returns). It is for a signal that ends the session (summit run on SIGTERM, SIGQUIT…): from
// then on determinism gives way to a prompt close, which the session's code allows because
// it is correct under RealClock, where every participant runs at once. A context that ends
// inside the simulation (a /cancel) is still seen in dispatch order.
func (c *SimClock) Interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.ctx.Err() != nil {
			close(w.ch)
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// Idle is closed when every participant has ended.
func (c *SimClock) Idle() <-chan struct{} { return c.idle }

func (c *SimClock) enqueue(ctx context.Context, ev *Event, d time.Duration, timed bool) *waiter {
	c.seq++
	w := &waiter{wake: c.now.Add(d), timed: timed, ev: ev, ctx: ctx, seq: c.seq, ch: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	return w
}

// wait parks the calling participant until its event fires, its time comes or ctx ends.
func (c *SimClock) wait(ctx context.Context, ev *Event, d time.Duration) error {
	c.mu.Lock()
	if ev != nil && ev.Fired() {
		c.mu.Unlock()
		return nil
	}
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		return err
	}
	w := c.enqueue(ctx, ev, d, ev == nil)
	c.dispatch()
	c.mu.Unlock()
	<-w.ch
	if ev != nil && ev.Fired() {
		return nil
	}
	if w.timed && ctx.Err() == nil {
		return nil
	}
	return ctx.Err()
}

// dispatch resumes the next participant: first any whose context ended or whose event fired
// (in waiting order, at the current time), else the earliest timer, advancing time to it.
// Called with mu held by the participant giving up the baton. With nothing runnable the
// session is quiescent: only a Fire or cancel from outside the clock can resume it.
func (c *SimClock) dispatch() {
	best := -1
	for i, w := range c.waiters {
		ready := w.ctx.Err() != nil || (w.ev != nil && w.ev.Fired()) || (w.timed && !w.wake.After(c.now))
		if ready && (best < 0 || w.seq < c.waiters[best].seq) {
			best = i
		}
	}
	if best < 0 {
		for i, w := range c.waiters {
			if w.timed && (best < 0 || w.wake.Before(c.waiters[best].wake) ||
				w.wake.Equal(c.waiters[best].wake) && w.seq < c.waiters[best].seq) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		c.now = c.waiters[best].wake
	}
	w := c.waiters[best]
	c.waiters = append(c.waiters[:best], c.waiters[best+1:]...)
	close(w.ch)
}
