package runners

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/summit-dev/summit/session/gitws"
)

// JobIO is what a job's execution talks through: Event publishes one recording line of the
// runner's session (in order, never lost: a partition delays it), and Control delivers the
// local session's decisions and cancellation.
type JobIO struct {
	Event   func(line []byte)
	Control <-chan Control
	// Models carries the subagent's model requests to the session (a ModelTransport) when
	// the job's Models is "session"; nil otherwise.
	Models http.RoundTripper
}

// Exec runs one job's subagent in dir (its base already restored there) and returns how it
// ended; End.Head is the commit of its change set ("" when nothing changed). The caller
// (cmd/summit) runs it as a session of its own with the same orchestrator as a local one.
type Exec func(ctx context.Context, j Job, dir string, io JobIO) End

// Runner is `summit runner`: it registers, keeps its lease and runs the jobs placed on it.
type Runner struct {
	Name    string
	Labels  map[string]string
	Slots   int
	Version string
	Trusted []string // public nkeys of the sessions whose jobs it runs
	Exec    Exec
	Log     func(string)
	WorkDir string // where jobs' workspaces go ("" = os.TempDir())
	// ModelWait is how long a job's model call waits for its session while none serves it
	// (ModelTransport.Wait: 0 ModelWait, negative not at all).
	ModelWait time.Duration
	Git       gitws.Options // the private git dirs of the restored bases

	mu   sync.Mutex
	reg  Registration
	nc   *nats.Conn
	kv   jetstream.KeyValue
	busy sync.WaitGroup
	// api bounds the jobs' set-up calls (the stream check, the control consumer, the base
	// bundle) to JobAPICalls at once, as the session's are: a runner with many slots starts
	// that many jobs at once.
	api apiLimit
}

func (r *Runner) logf(format string, args ...any) {
	if r.Log != nil {
		r.Log(fmt.Sprintf(format, args...))
	}
}

// Run serves until ctx ends: then running jobs are cancelled, their ends published, and the
// registration deleted.
func (r *Runner) Run(ctx context.Context, nc *nats.Conn) error {
	if err := ValidName(r.Name); err != nil {
		return err
	}
	if r.Slots < 1 {
		return fmt.Errorf("--slots must be at least 1, got %d", r.Slots)
	}
	if len(r.Trusted) == 0 {
		return errors.New("no trusted session key: give --trust KEY (the local `summit runner key` prints it); a runner runs only jobs signed by a session it knows")
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	kv, obj, err := Ensure(sctx, js)
	cancel()
	if err != nil {
		return err
	}
	r.kv, r.nc, r.api = kv, nc, make(apiLimit, JobAPICalls)
	r.reg = Registration{Name: r.Name, Labels: r.Labels, Slots: r.Slots, Free: r.Slots, Version: r.Version,
		Protocol: Protocol, Started: time.Now().UTC()}
	b, _ := json.Marshal(r.reg)
	if _, err := kv.Create(ctx, r.Name, b); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("a runner named %s is already registered (its lease ends within %s of its end): choose another --name", r.Name, LeaseTTL)
		}
		return fmt.Errorf("registering %s: %w", r.Name, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{Durable: "runner-" + r.Name,
		FilterSubject: JobSubject(r.Name), AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute})
	if err != nil {
		_ = kv.Delete(context.Background(), r.Name)
		return fmt.Errorf("the job consumer of %s: %w", r.Name, err)
	}
	// Liveness: the server answers a request here with "no responders" as soon as this
	// connection is closed (the process died: the kernel closes its socket), but keeps the
	// subscription of a connection it has not yet found stale (a partition).
	alive, err := nc.Subscribe(AliveSubject(r.Name), func(m *nats.Msg) { _ = m.Respond(nil) })
	if err != nil {
		_ = kv.Delete(context.Background(), r.Name)
		return fmt.Errorf("the liveness subject of %s: %w", r.Name, err)
	}
	defer func() { _ = alive.Unsubscribe() }()
	_ = nc.Flush() // the server has the subscription before the runner says it is ready
	var labels []string
	for k, v := range r.Labels {
		labels = append(labels, k+"="+v)
	}
	sort.Strings(labels)
	r.logf("runner %s ready (%d slots, labels %s) on %s", r.Name, r.Slots, orNone(strings.Join(labels, ",")), nc.ConnectedUrlRedacted())

	leaseDone := make(chan struct{})
	go func() { // the lease: re-put well within LeaseTTL
		defer close(leaseDone)
		t := time.NewTicker(LeaseTTL / 4)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r.publishReg(ctx)
			}
		}
	}()
	slots := make(chan struct{}, r.Slots)
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		msg, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
		if err != nil {
			<-slots
			if !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
				time.Sleep(250 * time.Millisecond) // disconnected: the client reconnects
			}
			continue
		}
		r.busy.Add(1)
		go func() {
			defer r.busy.Done()
			defer func() { <-slots }()
			r.job(ctx, js, obj, msg)
		}()
	}
	r.busy.Wait()
	<-leaseDone
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	_ = kv.Delete(dctx, r.Name)
	r.logf("runner %s stopped", r.Name)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (r *Runner) publishReg(ctx context.Context) {
	r.mu.Lock()
	b, _ := json.Marshal(r.reg)
	r.mu.Unlock()
	_, _ = r.kv.Put(ctx, r.Name, b)
}

func (r *Runner) track(id string, start bool) {
	r.mu.Lock()
	if start {
		r.reg.Free--
		r.reg.Jobs = append(r.reg.Jobs, id)
	} else {
		r.reg.Free++
		r.reg.Jobs = slices.DeleteFunc(r.reg.Jobs, func(s string) bool { return s == id })
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.publishReg(ctx)
}

// job runs one job message to its end.
func (r *Runner) job(ctx context.Context, js jetstream.JetStream, obj jetstream.ObjectStore, msg jetstream.Msg) {
	id := msg.Headers().Get(hdrJob)
	j, err := verifyJob(msg.Headers(), msg.Data(), r.Trusted)
	if err == nil && id != j.ID {
		err = errors.New("the job's id header and body differ")
	}
	if id == "" || !nameRE().MatchString(id) {
		_ = msg.Term()
		r.logf("refused a job without a valid id")
		return
	}
	done, terr := r.api.turn(ctx)
	if terr != nil {
		return // the runner stops: the message is redelivered to it or its successor
	}
	defer func() { done() }() // given back once the job's consumer is made, or on the way out
	if _, serr := js.Stream(ctx, JobStream(id)); serr != nil {
		_ = msg.Ack() // the session gave up on it (or never made it): nothing to run
		r.logf("job %s: skipped, its stream is gone", id)
		return
	}
	pub := newPublisher(js, id)
	defer pub.close()
	if err != nil {
		_ = msg.Ack()
		r.logf("job %s: refused: %v", id, err)
		pub.end(End{Outcome: OutcomeRefused, Error: err.Error(), Runner: r.Name})
		return
	}
	_ = msg.Ack()
	r.track(id, true)
	defer r.track(id, false)
	r.logf("job %s: %s (%s of session %s) started", id, j.AgentType, j.SubagentID, j.SessionID)
	ctl := make(chan Control, 16)
	oc, err := js.OrderedConsumer(ctx, JobStream(id), jetstream.OrderedConsumerConfig{FilterSubjects: []string{ControlSubject(id)}})
	if err != nil {
		pub.end(End{Outcome: "failure", Error: "reading the job's control subject: " + err.Error(), Runner: r.Name})
		return
	}
	jctx, jcancel := context.WithCancel(ctx)
	defer jcancel()
	cc, err := oc.Consume(func(m jetstream.Msg) {
		var c Control
		if json.Unmarshal(m.Data(), &c) == nil {
			select {
			case ctl <- c:
			case <-jctx.Done():
			}
		}
	})
	if err == nil {
		defer cc.Stop()
	}
	done()
	done = func() {}
	jio := JobIO{Event: pub.event, Control: ctl}
	if j.Models == ModelsSession {
		// Only the session that signed the job answers its model calls: its replies are
		// checked against the signer verifyJob accepted.
		jio.Models = &ModelTransport{NC: r.nc, Job: id, Signer: msg.Headers().Get(hdrSigner), Wait: r.ModelWait}
	}
	end := r.runJob(jctx, obj, j, jio)
	end.Runner = r.Name
	pub.end(end)
	r.logf("job %s: %s", id, end.Outcome)
}

// runJob restores the base, runs the job and puts its change set in the store.
func (r *Runner) runJob(ctx context.Context, obj jetstream.ObjectStore, j Job, io JobIO) End {
	fail := func(what string, err error) End {
		return End{Outcome: "failure", Error: what + ": " + err.Error()}
	}
	root, err := os.MkdirTemp(r.WorkDir, "summit-job-")
	if err != nil {
		return fail("the job's directory", err)
	}
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "ws")
	if j.BaseBundle != "" {
		bundle := filepath.Join(root, "base.bundle")
		if err := r.fetch(ctx, obj, j.BaseBundle, bundle); err != nil {
			return fail("fetching the base bundle", err)
		}
		if _, err := gitws.RestoreBundle(ctx, bundle, j.BaseCommit, dir, r.Git); err != nil {
			return fail("restoring the base", err)
		}
		defer func() { _, _ = gitws.RemovePrivate(dir, r.Git) }()
	} else if err := os.Mkdir(dir, 0o700); err != nil {
		return fail("the job's workspace", err)
	}
	end := r.Exec(ctx, j, dir, io)
	if end.Head != "" {
		bundle := filepath.Join(root, "result.bundle")
		bctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		n, err := gitws.KeepBundle(bctx, dir, []string{end.Head}, bundle, r.Git)
		if err == nil && n == 0 {
			err = fmt.Errorf("commit %s is not in the job's repository", end.Head)
		}
		if err == nil {
			err = putFile(bctx, obj, ResultObject(j.ID), bundle)
		}
		if err != nil {
			end.Outcome, end.Error = "failure", "sending the change set: "+err.Error()
			end.Head = ""
		} else {
			end.Result = ResultObject(j.ID)
		}
	}
	return end
}

// fetch gets object name into path in a turn of r.api, tried again when NATS does not answer
// in time.
func (r *Runner) fetch(ctx context.Context, obj jetstream.ObjectStore, name, path string) error {
	done, err := r.api.turn(ctx)
	if err != nil {
		return err
	}
	defer done()
	return again(ctx, func(ctx context.Context) error { return obj.GetFile(ctx, name, path) })
}

// putFile stores the file at path as the object name.
func putFile(ctx context.Context, obj jetstream.ObjectStore, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = obj.Put(ctx, jetstream.ObjectMeta{Name: name}, f)
	return err
}

// publisher sends a job's events in order, each until JetStream acks it (a partition delays
// them, never drops or reorders them), without blocking the session that produces them.
type publisher struct {
	js   jetstream.JetStream
	id   string
	mu   sync.Mutex
	cond *sync.Cond
	q    [][]byte
	n    int
	done chan struct{}
	shut bool
}

func newPublisher(js jetstream.JetStream, id string) *publisher {
	p := &publisher{js: js, id: id, done: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	go p.loop()
	return p
}

func (p *publisher) event(line []byte) {
	p.mu.Lock()
	p.q = append(p.q, slices.Clone(line))
	p.cond.Signal()
	p.mu.Unlock()
}

func (p *publisher) loop() {
	defer close(p.done)
	for {
		p.mu.Lock()
		for len(p.q) == 0 && !p.shut {
			p.cond.Wait()
		}
		if len(p.q) == 0 {
			p.mu.Unlock()
			return
		}
		line := p.q[0]
		p.q = p.q[1:]
		p.n++
		n := p.n
		p.mu.Unlock()
		m := nats.NewMsg(EventSubject(p.id))
		m.Data = line
		m.Header.Set(hdrKind, kindEvent)
		m.Header.Set(nats.MsgIdHdr, fmt.Sprintf("%s-%d", p.id, n))
		p.send(m)
	}
}

// send publishes until acked; the msg id makes a resend after a lost ack a no-op. It gives
// up only when the job's stream is gone (the session deleted it).
func (p *publisher) send(m *nats.Msg) {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := p.js.PublishMsg(ctx, m)
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrNoStreamResponse) && p.gone() {
			return
		}
		time.Sleep(wait)
	}
}

func (p *publisher) gone() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := p.js.Stream(ctx, JobStream(p.id))
	return errors.Is(err, jetstream.ErrStreamNotFound)
}

// end publishes the last message after every event.
func (p *publisher) end(e End) {
	p.close()
	b, _ := json.Marshal(e)
	m := nats.NewMsg(EventSubject(p.id))
	m.Data = b
	m.Header.Set(hdrKind, kindEnd)
	m.Header.Set(nats.MsgIdHdr, p.id+"-end")
	p.send(m)
}

func (p *publisher) close() {
	p.mu.Lock()
	p.shut = true
	p.cond.Signal()
	p.mu.Unlock()
	<-p.done
}
