package live

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/summit-dev/summit/session/gitws"
)

// A placed subagent's base is the workspace's snapshot, sent as a git bundle (runOnRunner).
// Taking a snapshot is a few git processes under the repository's lock, and a bundle a few
// more: a burst of placements (300 /delegate --on lines of a script, or pasted) took one of
// each per job, one after another, so the last job waited about 50 s for its base on a loaded
// 2-core machine (testdata/perf/scale-remote.sh). runnerBases shares that work among the
// placements of a burst, without giving any of them an older base than its own would be:
//
//   - a snapshot is shared only by placements that asked before it started (freshRound): one
//     that asks while a snapshot runs waits for the next one, which starts when that one ends
//     and serves everyone who asked in the meantime;
//   - a bundle is shared by the placements of the same base commit while any of them holds
//     it (the commit names its content), and removed when the last one lets it go.
type runnerBases struct {
	snap freshRound[gitws.Base]

	mu      sync.Mutex
	bundles map[string]*baseBundle // by commit
}

type baseBundle struct {
	path  string
	refs  int
	ready chan struct{} // closed once path is written, or err set
	err   error
}

// snapshot is the workspace's snapshot for a placement asked for now.
func (b *runnerBases) snapshot(ctx context.Context, r *gitws.Repo) (gitws.Base, error) {
	return b.snap.do(ctx, func() (gitws.Base, error) {
		// Not the caller's context: the snapshot serves other placements too, and one
		// cancelled must not fail theirs.
		sctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
		defer cancel()
		return r.Snapshot(sctx)
	})
}

// bundle is a git bundle of commit from workspace's repository; release lets it go (the last
// one to let it go removes it). No commit found there: an error.
func (b *runnerBases) bundle(ctx context.Context, workspace, commit string, opts gitws.Options) (path string, release func(), err error) {
	b.mu.Lock()
	if b.bundles == nil {
		b.bundles = map[string]*baseBundle{}
	}
	e := b.bundles[commit]
	if e == nil {
		e = &baseBundle{ready: make(chan struct{})}
		b.bundles[commit] = e
		go b.build(e, workspace, commit, opts)
	}
	e.refs++
	b.mu.Unlock()
	release = func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if e.refs--; e.refs == 0 {
			if b.bundles[commit] == e {
				delete(b.bundles, commit)
			}
			if e.path != "" {
				os.RemoveAll(filepath.Dir(e.path))
			}
		}
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		release()
		return "", nil, ctx.Err()
	}
	if e.err != nil {
		release()
		return "", nil, e.err
	}
	return e.path, release, nil
}

// build writes e's bundle (its own goroutine: the placements wait on e.ready, each with its
// own context). A failed one is dropped from the map at once, so the next placement tries
// again.
func (b *runnerBases) build(e *baseBundle, workspace, commit string, opts gitws.Options) {
	defer close(e.ready)
	dir, err := os.MkdirTemp("", "summit-base-")
	if err == nil {
		path := filepath.Join(dir, "base.bundle")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var n int
		n, err = gitws.KeepBundle(ctx, workspace, []string{commit}, path, opts)
		cancel()
		if err == nil && n == 0 {
			err = fmt.Errorf("the base %s is not in the repository", commit)
		}
		b.mu.Lock()
		if err == nil && e.refs > 0 {
			e.path = path
		} else {
			os.RemoveAll(dir) // failed, or every placement that wanted it has given up
		}
		b.mu.Unlock()
	}
	if err != nil {
		e.err = fmt.Errorf("bundling the base: %w", err)
		b.mu.Lock()
		if b.bundles[commit] == e {
			delete(b.bundles, commit)
		}
		b.mu.Unlock()
	}
}

// freshRound runs fn for callers that ask at about the same time, once for all of them, and
// never gives a caller the result of a run that began before it asked: one round runs at a
// time, and the callers that ask while it runs share the next one, which starts when it ends.
type freshRound[T any] struct {
	mu   sync.Mutex
	cur  *round[T] // the round started last (nil: none yet)
	next *round[T] // the round callers join now: it has not started
}

type round[T any] struct {
	done   chan struct{}
	v      T
	err    error
	joined int // callers sharing it (f.mu)
}

func (f *freshRound[T]) do(ctx context.Context, fn func() (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		// Ended already: it neither starts nor joins a round (else a round that ends at
		// once could race its context in the select below and hand it a result).
		var zero T
		return zero, err
	}
	f.mu.Lock()
	r, lead := f.next, false
	if r == nil {
		r, lead = &round[T]{done: make(chan struct{})}, true
		f.next = r
	}
	r.joined++
	prev := f.cur
	f.mu.Unlock()
	if lead {
		// The leader starts r once the round before it has ended, whatever its own context
		// says: the others of r wait on it.
		go func() {
			if prev != nil {
				<-prev.done
			}
			f.mu.Lock()
			f.next, f.cur = nil, r // from here on, a caller waits for the round after r
			f.mu.Unlock()
			r.v, r.err = fn()
			close(r.done)
		}()
	}
	select {
	case <-r.done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
