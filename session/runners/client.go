package runners

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/nats-io/nuid"
)

// Client is the local session's side: placement, jobs, their events and decisions.
type Client struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	obj jetstream.ObjectStore
	key nkeys.KeyPair
	URL string

	mu     sync.Mutex
	placed map[string]string // job → runner: this client's jobs not yet forgotten
	held   map[string]int    // runner → placements picked and not yet submitted (Hold)

	// api bounds this session's JetStream API calls of job set-up and clean-up (a job's
	// stream, its base bundle, the consumer that follows it, the deletes) to JobAPICalls at
	// once: 300 placements at once on nats-server 2.9 left most of them unanswered past 2
	// minutes (testdata/perf/scale-remote.sh); in turn they take about 0.1 s each.
	api apiLimit

	// listMu guards regs, read at regsAt: the registrations Runners reuses for
	// RegistrationsFresh (one listing at a time: callers that wait for it share it).
	listMu sync.Mutex
	regs   []Registration
	regsAt time.Time
}

// NewClient prepares the shared streams and signs jobs with key.
func NewClient(ctx context.Context, nc *nats.Conn, key nkeys.KeyPair) (*Client, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, obj, err := Ensure(ctx, js)
	if err != nil {
		return nil, err
	}
	return &Client{nc: nc, js: js, kv: kv, obj: obj, key: key, URL: nc.ConnectedUrlRedacted(),
		api: make(apiLimit, JobAPICalls)}, nil
}

// Close closes the connection.
func (c *Client) Close() { c.nc.Close() }

// NewJobID is a fresh job id.
func NewJobID() string { return nuid.Next() }

// Runners are the registered (live) runners, sorted by name, as the bucket held them at most
// RegistrationsFresh ago, each one's free slots less this session's jobs queued on it.
func (c *Client) Runners(ctx context.Context) ([]Registration, error) {
	c.listMu.Lock()
	defer c.listMu.Unlock()
	if age := time.Since(c.regsAt); c.regsAt.IsZero() || age > RegistrationsFresh {
		// With a list read less than a lease ago, a listing that NATS is slow to answer (its
		// JetStream API queued behind a burst of placements' streams and consumers) is not
		// waited for long: that list holds, as the registrations it names held a lease then.
		// The placed subagents' lease watch finds a runner that has died since.
		lctx, cancel := ctx, context.CancelFunc(func() {})
		fallback := !c.regsAt.IsZero() && age < LeaseTTL
		if fallback {
			lctx, cancel = context.WithTimeout(ctx, time.Second)
		}
		regs, err := c.listRunners(lctx)
		cancel()
		switch {
		case err == nil:
			c.regs, c.regsAt = regs, time.Now()
		case !fallback:
			return nil, err
		}
	}
	out := slices.Clone(c.regs) // withQueued changes the copies' Free
	c.mu.Lock()
	defer c.mu.Unlock()
	return withQueued(out, c.placed, c.held), nil
}

// listRunners reads the bucket's registrations.
func (c *Client) listRunners(ctx context.Context) ([]Registration, error) {
	lister, err := c.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var out []Registration
	for k := range lister.Keys() {
		e, err := c.kv.Get(ctx, k)
		if err != nil {
			continue // expired between the list and the read
		}
		var r Registration
		if json.Unmarshal(e.Value(), &r) == nil && r.Name == k {
			out = append(out, r)
		}
	}
	if err := ctx.Err(); err != nil {
		// The lister closes its keys when the context ends too: a part of the list is not
		// the list ("no runner is registered" when NATS was only slow).
		return nil, fmt.Errorf("the registrations were not all read: %w", err)
	}
	slices.SortFunc(out, func(a, b Registration) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Hold counts a placement on runner from when it is picked until release (once its job is
// submitted, or it is given up): a burst of placements picks before any of its jobs is
// submitted, and would all pick the same runner otherwise.
func (c *Client) Hold(runner string) (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held == nil {
		c.held = map[string]int{}
	}
	c.held[runner]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.held[runner]--; c.held[runner] <= 0 {
				delete(c.held, runner)
			}
		})
	}
}

// withQueued takes from each runner's free slots this session's jobs placed on it that it has
// not started (not in its Jobs), and the placements held on it: a burst of placements sees the
// ones before it, instead of every one picking the same runner before its registration
// changes.
func withQueued(regs []Registration, placed map[string]string, held map[string]int) []Registration {
	for i := range regs {
		regs[i].Free -= held[regs[i].Name]
		for job, name := range placed {
			if name == regs[i].Name && !slices.Contains(regs[i].Jobs, job) {
				regs[i].Free--
			}
		}
	}
	return regs
}

// Alive reports whether runner name's lease holds (false only when NATS says the key is gone;
// an unreachable NATS is not a dead runner).
func (c *Client) Alive(ctx context.Context, name string) (bool, error) {
	_, err := c.kv.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return false, nil
	}
	return err == nil, err
}

// Liveness is what a probe of a runner's AliveSubject found.
type Liveness int

const (
	// Answered: the runner replied; its connection is up.
	Answered Liveness = iota
	// Unreachable: no reply within ProbeTimeout, but NATS still holds the runner's
	// subscription (a partition NATS has not detected yet), or NATS is not reachable from here.
	Unreachable
	// Dead: NATS answered "no responders": no connection of the runner is subscribed (its
	// process ended, or NATS dropped its connection as stale).
	Dead
)

// Probe asks runner name whether it is alive (a request on AliveSubject).
func (c *Client) Probe(ctx context.Context, name string) Liveness {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	_, err := c.nc.RequestWithContext(ctx, AliveSubject(name), nil)
	switch {
	case err == nil:
		return Answered
	case errors.Is(err, nats.ErrNoResponders):
		return Dead
	}
	return Unreachable
}

// Pick chooses a runner for --on (NAME, LABEL=VALUE or any), skipping the names in not.
func Pick(regs []Registration, on string, not []string) (Registration, error) {
	var cands []Registration
	var names []string
	for _, r := range regs {
		names = append(names, r.Name)
		if slices.Contains(not, r.Name) {
			continue
		}
		k, v, isLabel := strings.Cut(on, "=")
		switch {
		case on == "any", !isLabel && r.Name == on, isLabel && r.Labels[k] == v:
			cands = append(cands, r)
		}
	}
	if len(cands) == 0 {
		if len(regs) == 0 {
			return Registration{}, errors.New("no runner is registered")
		}
		what := "runner " + on
		if on == "any" {
			what = "other runner"
		} else if strings.Contains(on, "=") {
			what = "runner labelled " + on
		}
		return Registration{}, fmt.Errorf("no %s is registered (live: %s)", what, strings.Join(names, ", "))
	}
	slices.SortStableFunc(cands, func(a, b Registration) int {
		if a.Free != b.Free {
			return b.Free - a.Free
		}
		return strings.Compare(a.Name, b.Name)
	})
	return cands[0], nil
}

// apiLimit bounds JetStream API calls at once (JobAPICalls; nil: no bound).
type apiLimit chan struct{}

// turn waits for a turn; done gives it back.
func (l apiLimit) turn(ctx context.Context) (done func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// transient is an error of a JetStream call NATS did not answer in time (its API busy, or the
// server restarting): worth a second try.
func transient(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders)
}

// again runs step up to 3 times, each within 30 s of ctx, while it fails as transient or with
// the connection lost.
func again(ctx context.Context, step func(context.Context) error) error {
	for try := 1; ; try++ {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := step(sctx)
		cancel()
		if err == nil || try == 3 || ctx.Err() != nil ||
			!(transient(err) || errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting)) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// Submit creates the job's stream, stores its base bundle (a file, "" for none) and places the
// signed job on runner's queue.
func (c *Client) Submit(ctx context.Context, runner string, j Job, baseBundle string) error {
	j.Protocol = Protocol
	done, err := c.api.turn(ctx)
	if err != nil {
		return err
	}
	defer done()
	// Each step is idempotent (the same stream config, the same object, the job's Nats-Msg-Id),
	// so one NATS did not answer in time, or lost with the connection, is tried again.
	if err := again(ctx, func(ctx context.Context) error {
		_, err := c.js.CreateStream(ctx, jetstream.StreamConfig{Name: JobStream(j.ID),
			Subjects: []string{EventSubject(j.ID), ControlSubject(j.ID)}, Storage: jetstream.FileStorage,
			Duplicates: time.Hour, MaxAge: 7 * 24 * time.Hour})
		return err
	}); err != nil {
		return fmt.Errorf("the job's stream: %w", err)
	}
	if baseBundle != "" {
		j.BaseBundle = BaseObject(j.ID)
		if err := again(ctx, func(ctx context.Context) error { return putFile(ctx, c.obj, j.BaseBundle, baseBundle) }); err != nil {
			return fmt.Errorf("storing the base bundle: %w", err)
		}
	}
	m, err := signJob(c.key, runner, j)
	if err != nil {
		return err
	}
	if err := again(ctx, func(ctx context.Context) error { _, err := c.js.PublishMsg(ctx, m); return err }); err != nil {
		return fmt.Errorf("placing the job: %w", err)
	}
	c.mu.Lock()
	if c.placed == nil {
		c.placed = map[string]string{}
	}
	c.placed[j.ID] = runner
	c.mu.Unlock()
	return nil
}

// Follow calls event with each event line of the job after stream sequence after, in order,
// until the job's end, which it returns. The ordered consumer resumes from the last sequence
// it delivered after a reconnect, and event is given the sequence to keep as the cursor.
func (c *Client) Follow(ctx context.Context, id string, after uint64, event func(seq uint64, line []byte) error) (End, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{EventSubject(id)}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	oc, err := c.js.OrderedConsumer(ctx, JobStream(id), cfg)
	if err != nil {
		return End{}, err
	}
	last := after
	for {
		done, err := c.api.turn(ctx) // Messages creates the consumer
		if err != nil {
			return End{}, err
		}
		it, err := oc.Messages()
		done()
		if err != nil {
			if ctx.Err() == nil && transient(err) {
				// NATS did not answer in time (its JetStream API busy, or restarting): the
				// job goes on there, so try again; the caller's lease watch ends ctx when the
				// runner is gone.
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			return End{}, err
		}
		for {
			m, err := it.Next(jetstream.NextContext(ctx))
			if err != nil {
				it.Stop()
				if ctx.Err() != nil {
					return End{}, ctx.Err()
				}
				break // the iterator ended (a reset): a new one resumes after last
			}
			md, err := m.Metadata()
			if err != nil || md.Sequence.Stream <= last {
				continue // never twice
			}
			if m.Headers().Get(hdrKind) == kindEnd {
				it.Stop()
				var e End
				if err := json.Unmarshal(m.Data(), &e); err != nil {
					return End{}, fmt.Errorf("the job's end: %w", err)
				}
				return e, nil
			}
			if err := event(md.Sequence.Stream, m.Data()); err != nil {
				it.Stop()
				return End{}, err
			}
			last = md.Sequence.Stream
		}
	}
}

// Control sends a decision or a cancellation to the job's runner.
func (c *Client) Control(ctx context.Context, id string, ctl Control) error {
	b, _ := json.Marshal(ctl)
	_, err := c.js.Publish(ctx, ControlSubject(id), b)
	return err
}

// FetchResult writes the job's result bundle to path.
func (c *Client) FetchResult(ctx context.Context, object, path string) error {
	return c.obj.GetFile(ctx, object, path)
}

// Forget deletes the job's stream and bundles (after its end is folded and imported; a runner
// that picks the job up later skips it).
func (c *Client) Forget(ctx context.Context, id string) {
	c.mu.Lock()
	delete(c.placed, id)
	c.mu.Unlock()
	done, err := c.api.turn(ctx)
	if err != nil {
		return
	}
	defer done()
	_ = c.js.DeleteStream(ctx, JobStream(id))
	_ = c.obj.Delete(ctx, BaseObject(id))
	_ = c.obj.Delete(ctx, ResultObject(id))
}

// PublicKey is the session's signing key, for a runner's --trust.
func (c *Client) PublicKey() string {
	k, _ := c.key.PublicKey()
	return k
}
