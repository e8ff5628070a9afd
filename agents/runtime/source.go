package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/summit-dev/summit/agents/provider"
)

// errFlush tells the loop that buffered tokens are due before the next delta has arrived.
var errFlush = errors.New("flush due")

// source yields a stream's deltas. Under a real clock a goroutine reads ahead so the loop can
// flush coalesced tokens on time while the model is silent; under a simulated clock the loop
// pulls directly (no goroutine may block outside the clock), and tokens are flushed when the
// next delta arrives.
type source struct {
	st     provider.Stream
	ch     chan item
	cancel context.CancelFunc
	done   chan struct{}
}

type item struct {
	d   provider.Delta
	err error
}

func newSource(ctx context.Context, st provider.Stream, simulated bool) *source {
	s := &source{st: st}
	if simulated {
		return s
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.ch = make(chan item)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		for {
			d, err := st.Next()
			select {
			case s.ch <- item{d, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// next returns the next delta, or errFlush when due (non-zero) passes first.
func (s *source) next(due time.Time) (provider.Delta, error) {
	if s.ch == nil {
		return s.st.Next()
	}
	if due.IsZero() {
		it := <-s.ch
		return it.d, it.err
	}
	t := time.NewTimer(time.Until(due))
	defer t.Stop()
	select {
	case it := <-s.ch:
		return it.d, it.err
	case <-t.C:
		return provider.Delta{}, errFlush
	}
}

// stop ends the read-ahead goroutine; the caller closes the stream, which unblocks a Next in
// progress, and stop then waits for the goroutine so none outlives the turn.
func (s *source) stop() {
	if s.ch == nil {
		return
	}
	s.cancel()
	s.st.Close()
	<-s.done
}
