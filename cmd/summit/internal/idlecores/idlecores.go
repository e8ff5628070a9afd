// Package idlecores runs a quiet workbench on one core.
//
// Bubble Tea's renderer wakes the process every frame even when nothing changed: its ticker
// runs for as long as the program does (v2.0.10, the pinned version, and v2.1.1 alike), and
// nothing outside the package can pause it. Each of those wake-ups costs more than the frame
// check itself: with two or more Ps the runtime wakes a second thread to look for work to
// steal, and the system monitor wakes with it. Measured on an idle workbench at 200×60 over
// 30 s (testdata/perf/live.sh), one P instead of two takes idle CPU from 0.37 % to 0.27 % of a
// core.
//
// A Keeper drops GOMAXPROCS to 1 once the program has had no message for its quiet period,
// and puts the previous setting back on the next message, in the program's filter, before
// Update sees it: a key, or a batch of streamed events, runs on every core. Work that sends
// the program nothing for a whole quiet period (a model thinking, a tool running) is not
// slowed in any way that matters: it is waiting, and child processes are not counted in
// GOMAXPROCS at all. Work that runs on its own without messages (a replay's background fold)
// is named by the working function, and holds every core while it runs.
package idlecores

import (
	"os"
	"runtime"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Keeper switches the scheduler between all cores and one. Its zero value is not usable:
// call New.
type Keeper struct {
	quiet   time.Duration
	working func() bool

	mu      sync.Mutex
	timer   *time.Timer
	last    time.Time // the last message
	low     bool      // GOMAXPROCS is 1 because of the keeper
	stopped bool
}

// New starts a keeper that drops to one core after quiet without a message, and not while
// working (if not nil; called from the keeper's timer goroutine, so it must be safe for
// that) reports true. On a machine with one P already (one core, or GOMAXPROCS=1) it never
// changes anything.
func New(quiet time.Duration, working func() bool) *Keeper {
	k := &Keeper{quiet: quiet, working: working, last: time.Now()}
	if runtime.GOMAXPROCS(0) == 1 {
		k.stopped = true
		return k
	}
	// Under the lock: the timer may fire before AfterFunc has even returned.
	k.mu.Lock()
	k.timer = time.AfterFunc(quiet, k.idle)
	k.mu.Unlock()
	return k
}

// Filter is the program's message filter (tea.WithFilter): every message counts as activity.
func (k *Keeper) Filter(_ tea.Model, msg tea.Msg) tea.Msg {
	k.Busy()
	return msg
}

// Busy records activity: all cores come back at once, and the quiet period starts again.
func (k *Keeper) Busy() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	k.last = time.Now()
	if k.low {
		k.restore()
		// The timer has fired (that is how the keeper went low): start it again.
		k.timer.Reset(k.quiet)
	}
}

// idle runs when the timer fires. A message may have come in since the timer was set: the
// keeper then waits for the rest of the quiet period instead (Busy does not touch a running
// timer, so that a message costs a lock and a clock read, no timer work).
func (k *Keeper) idle() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped || k.low {
		return
	}
	if since := time.Since(k.last); since < k.quiet {
		k.timer.Reset(k.quiet - since)
		return
	}
	if k.working != nil && k.working() {
		k.timer.Reset(k.quiet)
		return
	}
	runtime.GOMAXPROCS(1)
	k.low = true
}

// Stop ends the keeper and puts every core back. It is safe to call more than once.
func (k *Keeper) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	k.stopped = true
	k.timer.Stop()
	if k.low {
		k.restore()
	}
}

// restore puts back what the runtime had: its own default, which follows the CPU limit of the
// container as it changes, unless the user set GOMAXPROCS, whose value is then kept.
func (k *Keeper) restore() {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		runtime.GOMAXPROCS(procs)
	} else {
		runtime.SetDefaultGOMAXPROCS()
	}
	k.low = false
}

// procs is GOMAXPROCS as the program started with it.
var procs = runtime.GOMAXPROCS(0)
