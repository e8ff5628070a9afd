package runtime

import (
	"context"
	"errors"
	"io"
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
	ctx    context.Context
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
	s.ctx, s.cancel = context.WithCancel(ctx)
	ctx = s.ctx
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
	// The reader stops without handing over a delta once the context ends, so waiting on
	// done too keeps a cancelled turn from blocking forever.
	var flush <-chan time.Time
	if !due.IsZero() {
		t := time.NewTimer(time.Until(due))
		defer t.Stop()
		flush = t.C
	}
	select {
	case it := <-s.ch:
		return it.d, it.err
	case <-s.done:
		if err := s.ctx.Err(); err != nil {
			return provider.Delta{}, err
		}
		return provider.Delta{}, io.EOF // the reader already handed over its last item
	case <-flush:
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
