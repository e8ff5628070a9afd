package live

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/summit-dev/summit/session/gitws"
)

// freshRound: callers that ask while a round runs share the next one (fn runs once for them),
// and none gets the result of a round that began before it asked.
func TestFreshRoundShares(t *testing.T) {
	var f freshRound[int]
	var mu sync.Mutex
	calls := 0
	gates := []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
	fn := func() (int, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		<-gates[n-1]
		return n, nil
	}
	joined := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			f.mu.Lock()
			n := 0
			if f.next != nil {
				n = f.next.joined
			}
			f.mu.Unlock()
			if n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d callers joined the next round, want %d", n, want)
			}
		}
	}
	got := make(chan int, 4)
	ask := func() {
		v, err := f.do(context.Background(), fn)
		if err != nil {
			t.Error(err)
		}
		got <- v
	}
	go ask() // round 1 starts at once
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		c := calls
		mu.Unlock()
		if c == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("round 1 did not start")
		}
	}
	go ask()
	go ask() // both asked while round 1 runs: they share round 2
	joined(2)
	close(gates[0])
	if v := <-got; v != 1 {
		t.Fatalf("the first caller got round %d, want 1", v)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		f.mu.Lock()
		started := f.next == nil && f.cur != nil && f.cur.joined == 2
		f.mu.Unlock()
		if started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("round 2 did not start")
		}
	}
	go ask() // asked while round 2 runs: round 3
	joined(1)
	close(gates[1])
	close(gates[2])
	var vs []int
	for range 3 {
		vs = append(vs, <-got)
	}
	twos, threes := 0, 0
	for _, v := range vs {
		switch v {
		case 2:
			twos++
		case 3:
			threes++
		}
	}
	if twos != 2 || threes != 1 || calls != 3 {
		t.Fatalf("results %v after %d calls: want two callers of round 2, one of round 3, 3 calls", vs, calls)
	}
	// A caller whose context ends stops waiting; the round goes on for the others.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.do(ctx, func() (int, error) { return 9, nil }); err == nil {
		t.Fatal("a cancelled caller got a result")
	}
}

// runnerBases.bundle: placements of the same base share one bundle file while any holds it;
// the last release removes it.
func TestRunnerBasesShareBundle(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := gitws.Options{SessionID: "s-base", CacheDir: t.TempDir()}
	ctx := context.Background()
	r, err := gitws.Open(ctx, ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b runnerBases
	var wg sync.WaitGroup
	bases := make([]gitws.Base, 4)
	for i := range bases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if bases[i], err = b.snapshot(ctx, r); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	commit := bases[0].Commit
	for _, x := range bases {
		if x.Commit != commit || commit == "" {
			t.Fatalf("snapshots %+v: want one commit", bases)
		}
	}
	paths := make([]string, 5)
	releases := make([]func(), 5)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, rel, err := b.bundle(ctx, r.Workspace(), commit, opts)
			if err != nil {
				t.Error(err)
				return
			}
			paths[i], releases[i] = p, rel
		}()
	}
	wg.Wait()
	for _, p := range paths {
		if p != paths[0] {
			t.Fatalf("bundle paths %v: want one", paths)
		}
	}
	for _, rel := range releases[:4] {
		rel()
	}
	if _, err := os.Stat(paths[0]); err != nil {
		t.Fatalf("released by 4 of 5, the bundle is gone: %v", err)
	}
	releases[4]()
	if _, err := os.Stat(paths[0]); !os.IsNotExist(err) {
		t.Fatalf("released by all, the bundle is still there (%v)", err)
	}
	if _, _, err := b.bundle(ctx, r.Workspace(), "0123456789012345678901234567890123456789", opts); err == nil {
		t.Fatal("a bundle of a commit the repository does not hold")
	}
}
