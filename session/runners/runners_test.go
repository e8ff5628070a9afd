package runners

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/summit-dev/summit/session/runners/natstest"
)

func startNATS(t *testing.T) string { return natstest.Start(t) }

func dial(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := Connect(ConnOptions{URL: url, Insecure: true, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func newKey(t *testing.T) nkeys.KeyPair {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func pub(t *testing.T, kp nkeys.KeyPair) string {
	p, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startRunner runs a runner whose Exec publishes n numbered event lines, pausing after half
// until gate is closed, and ends with success.
func startRunner(t *testing.T, url, name string, trusted []string, n int, gate chan struct{}) (stop func()) {
	t.Helper()
	ready := make(chan struct{})
	var once sync.Once
	r := &Runner{Name: name, Slots: 2, Trusted: trusted, Log: func(l string) {
		if strings.Contains(l, "runner "+name+" ready") {
			once.Do(func() { close(ready) })
		}
	}, Exec: func(ctx context.Context, j Job, dir string, io JobIO) End {
		for i := 1; i <= n; i++ {
			if i == n/2 && gate != nil {
				<-gate
			}
			io.Event([]byte(fmt.Sprintf(`{"n":%d}`, i)))
		}
		return End{Outcome: "success"}
	}}
	nc := dial(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, nc) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("runner: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("runner never ready")
	}
	return func() { cancel(); <-done }
}

func TestEventsExactlyOnceAcrossReconnect(t *testing.T) {
	url := startNATS(t)
	key := newKey(t)
	gate := make(chan struct{})
	stop := startRunner(t, url, "r1", []string{pub(t, key)}, 400, gate)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc := dial(t, url)
	c, err := NewClient(ctx, nc, key)
	if err != nil {
		t.Fatal(err)
	}
	regs, err := c.Runners(ctx)
	if err != nil || len(regs) != 1 || regs[0].Name != "r1" || regs[0].Slots != 2 {
		t.Fatalf("runners = %+v, %v", regs, err)
	}
	pick, err := Pick(regs, "any", nil)
	if err != nil || pick.Name != "r1" {
		t.Fatalf("pick = %+v, %v", pick, err)
	}
	id := NewJobID()
	if err := c.Submit(ctx, "r1", Job{ID: id, Task: "t", AgentType: "explore", TimeoutS: 60}, ""); err != nil {
		t.Fatal(err)
	}
	// The job placed counts against r1's free slots at once, whether the registrations are the
	// ones read before (reused for RegistrationsFresh) or new ones, and on every call (the
	// reused list is not changed by it).
	for range 2 {
		if again, err := c.Runners(ctx); err != nil || len(again) != 1 || again[0].Free != regs[0].Free-1 {
			t.Fatalf("runners after a placement = %+v, %v; want r1 with %d free", again, err, regs[0].Free-1)
		}
	}
	var seqs []uint64
	var ns []int
	end, err := c.Follow(ctx, id, 0, func(seq uint64, line []byte) error {
		seqs = append(seqs, seq)
		var v struct{ N int }
		_ = json.Unmarshal(line, &v)
		ns = append(ns, v.N)
		if len(seqs) == 100 {
			// The consumer's connection drops mid-stream; the rest is published meanwhile.
			if err := nc.ForceReconnect(); err != nil {
				t.Errorf("ForceReconnect: %v", err)
			}
			close(gate)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if end.Outcome != "success" || end.Runner != "r1" {
		t.Fatalf("end = %+v", end)
	}
	if len(ns) != 400 {
		t.Fatalf("got %d events, want 400", len(ns))
	}
	for i := range ns {
		if ns[i] != i+1 || seqs[i] != uint64(i+1) {
			t.Fatalf("event %d: n=%d seq=%d (a gap, a duplicate or a reorder)", i, ns[i], seqs[i])
		}
	}
	// Resuming from a cursor delivers only what follows it.
	var again []uint64
	if _, err := c.Follow(ctx, id, 390, func(seq uint64, _ []byte) error { again = append(again, seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(again) != 10 || again[0] != 391 || again[9] != 400 {
		t.Fatalf("from cursor 390: %v", again)
	}
}

func TestUnsignedAndUntrustedJobsRefused(t *testing.T) {
	url := startNATS(t)
	trusted, stranger := newKey(t), newKey(t)
	stop := startRunner(t, url, "r2", []string{pub(t, trusted)}, 3, nil)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := NewClient(ctx, dial(t, url), stranger)
	if err != nil {
		t.Fatal(err)
	}
	id := NewJobID()
	if err := c.Submit(ctx, "r2", Job{ID: id, Task: "t", AgentType: "explore"}, ""); err != nil {
		t.Fatal(err)
	}
	n := 0
	end, err := c.Follow(ctx, id, 0, func(uint64, []byte) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if end.Outcome != OutcomeRefused || !strings.Contains(end.Error, "does not trust") || n != 0 {
		t.Fatalf("untrusted: end %+v after %d events", end, n)
	}
	// A forged body under a trusted signer's name fails the signature.
	j := Job{ID: NewJobID(), Protocol: Protocol, Task: "t", AgentType: "explore"}
	m, err := signJob(trusted, "r2", j)
	if err != nil {
		t.Fatal(err)
	}
	m.Data = []byte(strings.Replace(string(m.Data), `"task":"t"`, `"task":"rm -rf"`, 1))
	if _, err := verifyJob(m.Header, m.Data, []string{pub(t, trusted)}); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("forged job: %v", err)
	}
	m.Header.Del(hdrSignature)
	if _, err := verifyJob(m.Header, m.Data, []string{pub(t, trusted)}); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("unsigned job: %v", err)
	}
}

func TestLeaseExpiresWhenRunnerDies(t *testing.T) {
	url := startNATS(t)
	key := newKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rnc, err := Connect(ConnOptions{URL: url, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	r := &Runner{Name: "doomed", Slots: 1, Trusted: []string{pub(t, key)}, Log: func(l string) {
		if strings.Contains(l, "ready") {
			close(ready)
		}
	}, Exec: func(context.Context, Job, string, JobIO) End { return End{Outcome: "success"} }}
	go func() { _ = r.Run(context.Background(), rnc) }()
	<-ready
	c, err := NewClient(ctx, dial(t, url), key)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Alive(ctx, "doomed"); !ok || err != nil {
		t.Fatalf("alive = %v, %v", ok, err)
	}
	rnc.Close() // as kill -9: no deregistration, the lease just stops
	start := time.Now()
	for {
		ok, err := c.Alive(ctx, "doomed")
		if err == nil && !ok {
			break
		}
		if time.Since(start) > 15*time.Second {
			t.Fatal("the dead runner's lease did not expire within 15 s")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func TestConnectRefusesUnauthenticated(t *testing.T) {
	if _, err := Connect(ConnOptions{URL: "nats://10.1.2.3:4222"}); err == nil || !strings.Contains(err.Error(), "--creds") {
		t.Fatalf("off loopback without creds: %v", err)
	}
	if _, err := Connect(ConnOptions{URL: "nats://127.0.0.1:4222"}); err == nil || !strings.Contains(err.Error(), "--insecure") {
		t.Fatalf("loopback without --insecure: %v", err)
	}
	if _, err := Connect(ConnOptions{URL: "nats://10.1.2.3:4222", Insecure: true}); err == nil {
		t.Fatal("--insecure off loopback accepted")
	}
}

// TestProbe: a running runner answers on its liveness subject; once its connection is closed
// (what kill -9 does) NATS answers "no responders" (Dead); a subscriber that answers nothing
// (NATS still holds the connection of a partitioned runner) is Unreachable.
func TestProbe(t *testing.T) {
	url := startNATS(t)
	key := newKey(t)
	ctx := context.Background()
	c, err := NewClient(ctx, dial(t, url), key)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Probe(ctx, "nobody"); got != Dead {
		t.Errorf("a runner that never ran: %v, want Dead", got)
	}

	nc := dial(t, url)
	ready := make(chan struct{})
	var once sync.Once
	r := &Runner{Name: "r1", Slots: 1, Trusted: []string{pub(t, key)}, Log: func(l string) {
		if strings.Contains(l, "ready") {
			once.Do(func() { close(ready) })
		}
	}, Exec: func(ctx context.Context, j Job, dir string, io JobIO) End { return End{Outcome: "success"} }}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = r.Run(rctx, nc) }()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("runner never ready")
	}
	if got := c.Probe(ctx, "r1"); got != Answered {
		t.Errorf("a running runner: %v, want Answered", got)
	}
	nc.Close() // its process gone: the socket closes
	deadline := time.Now().Add(5 * time.Second)
	for c.Probe(ctx, "r1") != Dead {
		if time.Now().After(deadline) {
			t.Fatal("a runner whose connection closed is not Dead after 5 s")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Held but silent, as NATS holds a partitioned runner's connection.
	held := dial(t, url)
	if _, err := held.Subscribe(AliveSubject("r2"), func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := held.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := c.Probe(ctx, "r2"); got != Unreachable {
		t.Errorf("a held, silent runner: %v, want Unreachable", got)
	}
}

// A burst of placements spreads: each sees this session's jobs placed before it and not yet
// started as taken slots.
func TestPickSeesQueuedPlacements(t *testing.T) {
	regs := func() []Registration {
		return []Registration{{Name: "a", Slots: 4, Free: 4}, {Name: "b", Slots: 4, Free: 3, Jobs: []string{"j0"}}, {Name: "c", Slots: 4, Free: 4}}
	}
	placed := map[string]string{"j0": "b"} // started on b: already in its Free
	var got []string
	for i := 1; i <= 6; i++ {
		r, err := Pick(withQueued(regs(), placed, nil), "any", nil)
		if err != nil {
			t.Fatal(err)
		}
		placed[fmt.Sprintf("j%d", i)] = r.Name
		got = append(got, r.Name)
	}
	if s := strings.Join(got, " "); s != "a c a b c a" {
		t.Errorf("placements %q, want a c a b c a (most free first, ties by name)", s)
	}
}

// Placements picked and not yet submitted (Client.Hold) count as taken slots too, until
// released: a burst picks before any of its jobs is submitted.
func TestPickSeesHeldPlacements(t *testing.T) {
	c := &Client{regs: []Registration{{Name: "a", Slots: 4, Free: 4}, {Name: "b", Slots: 4, Free: 4}}, regsAt: time.Now().Add(time.Hour)}
	var got []string
	var releases []func()
	for range 4 {
		regs, err := c.Runners(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		r, err := Pick(regs, "any", nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Name)
		releases = append(releases, c.Hold(r.Name))
	}
	if s := strings.Join(got, " "); s != "a b a b" {
		t.Errorf("placements %q, want a b a b", s)
	}
	for _, rel := range releases {
		rel()
		rel() // once only
	}
	if regs, _ := c.Runners(context.Background()); regs[0].Free != 4 || regs[1].Free != 4 {
		t.Errorf("after the releases: %+v, want 4 free on each", regs)
	}
}
