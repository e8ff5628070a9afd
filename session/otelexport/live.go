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
	dropped atomic.Int64 // spans the full queue did not take
	// made counts every span the session ended (queued or not); finished is set when Close
	// has flushed, after which whatever the collector did not accept is lost.
	made     atomic.Int64
	finished atomic.Bool
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
		l.made.Add(1)
		select {
		case l.queue <- s:
		default:
			l.dropped.Add(1)
		}
	}
}

// Dropped is the number of spans that did not reach the collector: dropped because the queue
// was full, or refused by the exporter (the collector is down, unreachable or refused them);
// after Close, every span the collector did not accept, which counts those still waiting in
// the SDK's batch when the flush gave up too.
func (l *Live) Dropped() int64 {
	if l.finished.Load() {
		return max(l.made.Load()-int64(l.pipe.Exported()), 0)
	}
	return l.dropped.Load() + int64(l.pipe.Failed())
}

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
		l.made.Add(1)
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
	l.finished.Store(true)
	if lost := l.Dropped(); lost > 0 {
		why := "the collector refused them or could not be reached"
		if q := l.dropped.Load(); q > 0 {
			why = fmt.Sprintf("%d dropped while the collector did not keep up, the rest %s", q, why)
			if q == lost {
				why = "the collector did not keep up"
			}
		}
		err = errors.Join(err, fmt.Errorf("%d of %s dropped: %s", lost, session.Plural(int(l.made.Load()), "span"), why))
	}
	return err
}
