package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// run is one invocation: its session, its state and how it ended.
type run struct {
	id    string
	p     protocols.InvokeParams
	m     protocols.Manifest
	b     budget
	start time.Time
	done  chan struct{} // closed when the run's session has closed and its result is final
	// started is closed once the run's session has started, or failed to (an invoke that
	// does not wait returns then, with the recording's path).
	started chan struct{}

	mu        sync.Mutex
	sess      *Session
	subID     string        // the delegation's subagent, once known
	why       string        // why the run was stopped ("" when it was not)
	stopNow   chan struct{} // closed by stop
	stopped   bool
	changed   chan struct{} // closed (and replaced) when an event is recorded
	ended     bool          // the session closed: nothing more is recorded
	final     *protocols.InvokeResult
	failedWhy string // a failure before or around the delegation
	unpriced  bool   // a usd budget met a model without a price
	cancelled bool   // its subagent was cancelled (cancelIn)
	// overBudget is set when the budget stopped the run (a failure, not a cancellation).
	overBudget bool
}

func newRun(p protocols.InvokeParams, m protocols.Manifest, b budget) *run {
	return &run{id: p.RunID, p: p, m: m, b: b, start: time.Now(), done: make(chan struct{}), started: make(chan struct{}),
		stopNow: make(chan struct{}), changed: make(chan struct{})}
}

// stop cancels the run (once): its delegation is cancelled, and the result records why.
func (rn *run) stop(why string) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.stopped || rn.ended {
		return
	}
	rn.stopped, rn.why = true, why
	close(rn.stopNow)
}

// isEnded reports whether the run's session has closed.
func (rn *run) isEnded() bool {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.ended
}

// recorded wakes the followers of the run's events.
func (rn *run) recorded() {
	rn.mu.Lock()
	close(rn.changed)
	rn.changed = make(chan struct{})
	rn.mu.Unlock()
}

var delegatedTo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^delegated to (sa-\d+)`) })

// taskOf is the delegation's task: inputs.task, else inputs.query, else the inputs as JSON.
func taskOf(inputs map[string]any) string {
	for _, k := range []string{"task", "query"} {
		if s, ok := inputs[k].(string); ok && s != "" {
			if len(inputs) == 1 {
				return s
			}
			rest := map[string]any{}
			for kk, v := range inputs {
				if kk != k {
					rest[kk] = v
				}
			}
			b, _ := json.MarshalIndent(rest, "", "  ")
			return s + "\n\nInputs:\n```json\n" + string(b) + "\n```"
		}
	}
	b, _ := json.MarshalIndent(inputs, "", "  ")
	return "Inputs:\n```json\n" + string(b) + "\n```"
}

// execute runs one invocation: a session, the delegation, the wait, the close.
func (s *Server) execute(rn *run) {
	defer close(rn.done)
	meta := map[string]any{"run_id": rn.id, "agent_id": rn.p.AgentID}
	if c := rn.p.Context; c != nil {
		if c.TraceID != "" {
			meta["trace_id"] = c.TraceID
		}
		if len(c.Budget) > 0 {
			meta["budget"] = c.Budget
		}
	}
	hooks := Hooks{
		OnEvent: func(session.Event) { rn.recorded() },
		OnUsage: func(id string, t session.Tokens, usd float64, known bool) { rn.watchBudget(id, t, usd, known) },
	}
	sess, err := s.r.Start(rn.id, meta, hooks)
	if err != nil {
		rn.fail("the run's session did not start: " + err.Error())
		res := rn.compute()
		rn.mu.Lock()
		rn.final, rn.ended = &res, true
		rn.mu.Unlock()
		close(rn.started)
		return
	}
	rn.mu.Lock()
	rn.sess = sess
	rn.mu.Unlock()
	close(rn.started)
	s.o.Log(fmt.Sprintf("run %s: %s started (session %s)", rn.id, rn.p.AgentID, sess.X.SessionID()))
	ctx, cancel := context.WithTimeout(context.Background(), s.o.RunTimeout+time.Minute)
	defer cancel()
	d := commands.Delegate{Task: taskOf(rn.p.Inputs), AgentType: rn.p.AgentID, InheritContext: true,
		Timeout: max(1, int(s.o.RunTimeout/time.Second))}
	reply, err := sess.X.Submit(ctx, d.String())
	switch {
	case err != nil:
		rn.fail("the delegation failed: " + err.Error())
	case reply.Rejected:
		rn.fail("the delegation was refused: " + reply.Error)
	default:
		if m := delegatedTo().FindStringSubmatch(reply.Output); m != nil {
			rn.mu.Lock()
			rn.subID = m[1]
			rn.mu.Unlock()
		}
		waited := make(chan error, 1)
		go func() { waited <- sess.X.WaitAll(ctx) }()
		select {
		case <-waited:
		case <-rn.stopNow:
			rn.mu.Lock()
			sub := rn.subID
			rn.mu.Unlock()
			rn.cancelIn(ctx, sess, sub)
			<-waited
		}
	}
	if err := sess.X.Close("script_end"); err != nil && rn.failedWhy == "" {
		rn.fail("closing the run's session: " + err.Error())
	}
	if sess.Closed != nil {
		sess.Closed()
	}
	res := rn.compute()
	rn.mu.Lock()
	rn.final, rn.ended = &res, true
	close(rn.changed)
	rn.changed = make(chan struct{})
	rn.mu.Unlock()
	s.o.Log(fmt.Sprintf("run %s: %s", rn.id, res.Status))
}

func (rn *run) fail(why string) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.failedWhy == "" {
		rn.failedWhy = why
	}
}

// watchBudget stops the run once the delegation's usage passes the budget.
func (rn *run) watchBudget(id string, t session.Tokens, usd float64, known bool) {
	rn.mu.Lock()
	sub := rn.subID
	rn.mu.Unlock()
	if sub != "" && id != sub {
		return
	}
	rn.mu.Lock()
	sess := rn.sess
	rn.mu.Unlock()
	over := func(why string) {
		// At once, on the subagent's own goroutine: its next model turn must not start.
		rn.mu.Lock()
		rn.overBudget = !rn.stopped
		rn.mu.Unlock()
		rn.stop(why)
		if sess != nil {
			rn.cancelIn(context.Background(), sess, id)
		}
	}
	switch used := t.Input + t.Output; {
	case rn.b.tokens > 0 && used > rn.b.tokens:
		over(fmt.Sprintf("the budget of %d tokens is spent (%d used)", rn.b.tokens, used))
	case rn.b.usd > 0 && !known:
		// What an unpriced model costs is unknown: the run goes on, and its recording says
		// the budget could not be held (once).
		rn.mu.Lock()
		first := !rn.unpriced
		rn.unpriced = true
		sess := rn.sess
		rn.mu.Unlock()
		if first && sess != nil {
			go sess.X.Submit(context.Background(), fmt.Sprintf("# the budget of $%.4f cannot be held: the model has no price in the config (give a tokens budget, or prices)", rn.b.usd))
		}
	case rn.b.usd > 0 && usd > rn.b.usd:
		over(fmt.Sprintf("the budget of $%.4f is spent ($%.4f used)", rn.b.usd, usd))
	}
}

// cancelIn records why the run stops (a note) and cancels its subagent, once.
func (rn *run) cancelIn(ctx context.Context, sess *Session, sub string) {
	rn.mu.Lock()
	if rn.cancelled || sub == "" {
		rn.mu.Unlock()
		return
	}
	rn.cancelled = true
	why := rn.why
	rn.mu.Unlock()
	_, _ = sess.X.Submit(ctx, "# "+why) // the reason, as a note in the recording
	_, _ = sess.X.Submit(ctx, "/cancel "+sub)
}

// result is the run's InvokeResult: running until it ends, then final.
func (rn *run) result() protocols.InvokeResult {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.final != nil {
		return *rn.final
	}
	r := protocols.InvokeResult{Status: protocols.StatusRunning, RunID: rn.id}
	if rn.sess != nil {
		r.Recording = rn.sess.Recording
	}
	return r
}

// compute builds the final result from the closed session's state.
func (rn *run) compute() protocols.InvokeResult {
	rn.mu.Lock()
	sess, sub, why, failed := rn.sess, rn.subID, rn.why, rn.failedWhy
	rn.mu.Unlock()
	res := protocols.InvokeResult{Status: protocols.StatusFailed, RunID: rn.id, Output: map[string]any{},
		Metrics: &protocols.RunMetrics{LatencyMS: time.Since(rn.start).Milliseconds()}}
	if sess != nil {
		res.Recording = sess.Recording
	}
	if failed != "" || sess == nil || sub == "" {
		res.Error = failed
		if res.Error == "" {
			res.Error = "the run did not start a subagent"
		}
		return res
	}
	st := sess.X.Snapshot()
	sa := st.Subagent(sub)
	if sa == nil || !sa.Stopped {
		res.Error = "the subagent did not stop"
		return res
	}
	res.Metrics.Tokens = sa.Tokens.Input + sa.Tokens.Output
	if sa.CostUSD != nil {
		res.Metrics.CostUSD = *sa.CostUSD
	}
	model := sa.ModelInUse()
	if model == "" {
		model = st.Info.Provider
	}
	res.Provenance = &protocols.Provenance{Model: model, Timestamp: sa.EndedAt.UTC().Format(time.RFC3339)}
	if c := sa.Capsule; c != nil {
		if b, err := json.Marshal(c); err == nil {
			_ = json.Unmarshal(b, &res.Output)
		}
		res.Verification = c.Verification
	}
	switch sa.Outcome {
	case session.OutcomeSuccess:
		res.Status = protocols.StatusCompleted
		if err := rn.m.ValidateOutput(res.Output); err != nil {
			res.Status, res.Error = protocols.StatusFailed, "the output does not match the agent's outputSchema: "+err.Error()
		}
	case session.OutcomeCancelled:
		res.Status, res.Error = protocols.StatusCancelled, why
		if rn.stoppedByBudget() {
			res.Status = protocols.StatusFailed
		}
		if res.Error == "" {
			res.Error = "cancelled"
		}
	case session.OutcomeTimeout:
		res.Error = fmt.Sprintf("the run timed out after %ds", sa.TimeoutS)
	default:
		res.Error = sa.LastError
		if res.Error == "" {
			res.Error = "the subagent failed"
		}
	}
	return res
}

// stoppedByBudget reports a run its budget stopped: that is a failure, not a cancellation.
func (rn *run) stoppedByBudget() bool {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.overBudget
}

// follow calls fn with each line of the run's recording, from the first, as it is written,
// until the run has ended and every line was sent (nil), ctx ends or fn fails.
func (rn *run) follow(ctx context.Context, fn func([]byte) error) error {
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	var br *bufio.Reader
	var partial []byte
	for {
		rn.mu.Lock()
		changed, ended := rn.changed, rn.ended
		path := ""
		if rn.sess != nil {
			path = rn.sess.Recording
		}
		rn.mu.Unlock()
		if f == nil && path != "" {
			var err error
			if f, err = os.Open(path); err != nil {
				return err
			}
			br = bufio.NewReaderSize(f, 64<<10)
		}
		if br != nil {
			for {
				chunk, err := br.ReadSlice('\n')
				partial = append(partial, chunk...)
				if errors.Is(err, bufio.ErrBufferFull) {
					continue
				}
				if err == nil {
					if ferr := fn(partial[:len(partial)-1]); ferr != nil {
						return ferr
					}
					partial = partial[:0]
					continue
				}
				if !errors.Is(err, io.EOF) {
					return err
				}
				break
			}
		}
		if ended && (path == "" || br != nil) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second): // a write the hook has not announced yet
		}
	}
}
