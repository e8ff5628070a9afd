package ui

import (
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
)

// FrameRate is the workbench's frames a second: the program's renderer runs at it
// (tea.WithFPS) and the Bridge delivers events at most that often. 30 keeps streaming text
// smooth and typing prompt, while an idle workbench wakes half as often as at Bubble Tea's
// default 60 (its renderer's timer runs even when nothing changes) and a busy one draws and
// diffs half as many screens.
const FrameRate = 30

// Bridge carries the orchestrator's events to the program: Push (the OnEvent hook) only
// appends to a buffer; one goroutine sends what has gathered as a single EventsMsg at most
// once per frame. Nothing is ever dropped (the fold needs every event), and a burst of
// 50 k tokens a second costs the UI FrameRate updates a second, not 50 k.
type Bridge struct {
	mu   sync.Mutex
	buf  []session.Event
	wake chan struct{}
}

// NewBridge returns an empty bridge.
func NewBridge() *Bridge { return &Bridge{wake: make(chan struct{}, 1)} }

// Push queues one event. It never blocks.
func (b *Bridge) Push(e session.Event) {
	b.mu.Lock()
	b.buf = append(b.buf, e)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Run sends batches with send until done is closed, then sends what is left.
func (b *Bridge) Run(send func(tea.Msg), done <-chan struct{}) {
	const frame = time.Second / FrameRate
	for {
		select {
		case <-b.wake:
		case <-done:
			b.flush(send)
			return
		}
		b.flush(send)
		time.Sleep(frame) // gather the next frame's events
	}
}

func (b *Bridge) flush(send func(tea.Msg)) {
	b.mu.Lock()
	evs := b.buf
	b.buf = nil
	b.mu.Unlock()
	if len(evs) > 0 {
		send(EventsMsg(evs))
	}
}
