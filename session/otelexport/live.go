package otelexport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/summit-dev/summit/session"
)

// DefaultQueue is how many ended spans Live holds for the exporter before it drops.
const DefaultQueue = 4096

// LiveConfig configures a Live export.
type LiveConfig struct {
	Config
	Options
	// Version is the program's version, recorded as service.version.
	Version string
	// Queue is how many ended spans wait for the exporter at most; 0 is DefaultQueue.
	Queue int
}

// Live exports a running session's spans as they end. Observe folds each event on the
// caller's goroutine (a few map operations, no I/O) and hands the spans it ended to a queue;
// one goroutine feeds them to the Pipeline, which batches and exports them. When the queue is
// full (the collector is slow or unreachable) a span is dropped and counted, never waited
// for: the session does not stall on its telemetry.
type Live struct {
	mu      sync.Mutex
	conv    *Converter
	closed  bool
	queue   chan Span
	done    chan struct{}
	pipe    *Pipeline
	dropped atomic.Int64
}

// NewLive starts a live export. Nothing is sent until a span ends.
func NewLive(ctx context.Context, cfg LiveConfig) (*Live, error) {
	exp, err := exporterFor(ctx, cfg.Config)
	if err != nil {
		return nil, err
	}
	pipe, err := NewPipeline(ctx, exp, cfg.Version)
	if err != nil {
		return nil, err
	}
	n := cfg.Queue
	if n <= 0 {
		n = DefaultQueue
	}
	l := &Live{conv: NewConverter(cfg.Options), queue: make(chan Span, n), done: make(chan struct{}), pipe: pipe}
	go l.run()
	return l, nil
}

func (l *Live) run() {
	defer close(l.done)
	for s := range l.queue {
		l.pipe.Emit(s)
	}
}

// Observe folds one event of the session, in seq order (live.Options.OnEvent calls it so).
// It never blocks on the exporter.
func (l *Live) Observe(e session.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	for _, s := range l.conv.Observe(e) {
		select {
		case l.queue <- s:
		default:
			l.dropped.Add(1)
		}
	}
}

// Dropped is the number of spans dropped because the queue was full.
func (l *Live) Dropped() int64 { return l.dropped.Load() }

// Exported is the number of spans the collector accepted so far.
func (l *Live) Exported() int { return l.pipe.Exported() }

// Close ends what is still open (marked unfinished: a session that ended has nothing
// open), exports everything queued and stops. It waits for the exporter until ctx is done.
// Its error says what failed to export and how many spans were dropped.
func (l *Live) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	rest := l.conv.Finish()
	l.mu.Unlock()
	var err error
	for _, s := range rest {
		select {
		case l.queue <- s:
		case <-ctx.Done():
			l.dropped.Add(1)
		}
	}
	close(l.queue)
	select {
	case <-l.done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if cerr := l.pipe.Close(ctx); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if n := l.dropped.Load(); n > 0 {
		err = errors.Join(err, fmt.Errorf("%d spans dropped: the collector did not keep up", n))
	}
	return err
}
