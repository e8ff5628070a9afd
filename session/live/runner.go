package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/gitws"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/runners"
)

// Remote runners (session/runners): `/delegate TASK --on NAME|LABEL=VALUE|any` spawns the
// subagent here like any other (its isolation, base and worktree are local), then
// runOnRunner replaces its run: the job (task, agent, policy, the base as a git bundle) goes
// to the runner, the runner's events of the subagent are recorded here as its own with this
// session's seqs, its permission requests are decided here, and its change set comes home as
// a bundle whose result becomes the worktree's files, so the change set is recorded, diffed,
// applied and converged as a local subagent's. A runner whose lease expires is probed on its
// liveness subject: dead (NATS holds no connection of it: killed) fails the subagent naming it
// (or, with --retry, places it again from its base); unreachable (NATS still holds its
// connection: a partition) is waited for, with a transcript note, up to
// runners.UnreachableMax.

// leaseWatch is how often a placed subagent checks its runner's lease.
const leaseWatch = time.Second

// checkPlacement is why a /delegate --on cannot be placed now ("" when it can).
func (x *Orchestrator) checkPlacement(def *agents.Definition, c commands.Delegate) string {
	switch {
	case c.On == "":
		return "--retry goes with --on (it places the subagent again on another runner)"
	case x.o.Runners == nil:
		return "--on needs NATS: start summit with --nats URL, or set runners: {nats: URL} in the user config"
	case x.isRemote(def):
		return fmt.Sprintf("--on: %s is a remote agent that runs on its own server", def.Name)
	}
	if _, err := x.pickRunner(c.On, nil); err != nil {
		return "--on " + c.On + ": " + err.Error()
	}
	return ""
}

func (x *Orchestrator) pickRunner(on string, not []string) (runners.Registration, error) {
	ctx, cancel := context.WithTimeout(x.ctx, 5*time.Second)
	defer cancel()
	regs, err := x.o.Runners.Runners(ctx)
	if err != nil {
		return runners.Registration{}, fmt.Errorf("listing the runners: %w", err)
	}
	return runners.Pick(regs, on, not)
}

// placeOn is the runner --on picks now ("" when none).
func (x *Orchestrator) placeOn(on string, not []string) string {
	if x.o.Runners == nil {
		return ""
	}
	r, err := x.pickRunner(on, not)
	if err != nil {
		return ""
	}
	return r.Name
}

// runOnRunner is a placed subagent's run: one job per placement until one ends.
func (x *Orchestrator) runOnRunner(s *sub, deadline time.Time) runtime.Result {
	return x.placeOnRunners(s, deadline, s.runner, nil)
}

// placeOnRunners places s's job on runner name ("": one --on picks, none of tried) from its
// base and follows it; with --retry a runner that dies is followed by another (runOnRunner,
// and a reattached subagent's runner that dies after a resume: runnerresume.go).
func (x *Orchestrator) placeOnRunners(s *sub, deadline time.Time, name string, tried []string) runtime.Result {
	fail := func(context string, err error) runtime.Result {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: err.Error()})
		_, _ = x.emit(s.id, session.SubagentError{Error: err.Error(), Attempt: 1, Context: context})
		return runtime.Result{Outcome: session.OutcomeFailure, Err: err}
	}
	if s.unhold != nil {
		defer s.unhold() // given up before its job was submitted
	}
	c := x.o.Runners
	if c == nil {
		return fail("runner", errors.New("no NATS connection for --on"))
	}
	ctx, cancel := context.WithDeadline(s.ctx, deadline)
	defer cancel()
	if x.clock.Simulated() {
		// The job runs on the wall clock; the time left is a wall-clock budget.
		ctx, cancel = context.WithTimeout(s.ctx, deadline.Sub(x.clock.Now()))
		defer cancel()
	}
	base, baseCommit := "", ""
	if s.wt != nil {
		baseCommit = s.wt.Base.Commit
	} else if r, err := x.repo(); err == nil {
		// A subagent that changes nothing still reads the workspace there: a snapshot of it
		// (shared with the placements asked at the same time: runnerbase.go).
		if b, err := x.bases.snapshot(ctx, r); err == nil {
			baseCommit = b.Commit
		}
	}
	if baseCommit != "" {
		path, release, err := x.bases.bundle(ctx, x.git.Workspace(), baseCommit, gitws.Options{CacheDir: x.o.CacheDir})
		if err != nil {
			return fail("runner", err)
		}
		defer release()
		base = path
	}
	for {
		if name == "" {
			r, err := x.pickRunner(s.cmd.On, tried)
			if err != nil {
				return fail("runner", fmt.Errorf("--on %s: %w", s.cmd.On, err))
			}
			name = r.Name
		}
		tried = append(tried, name)
		res, why := x.runJob(ctx, s, c, name, base, baseCommit)
		if why == nil {
			return res
		}
		if !s.cmd.Retry {
			return fail("runner", why)
		}
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: why.Error() + "; --retry places it again from its base"})
		name = ""
	}
}

// runJob places one job on runner name and follows it to its end. gone is why the runner was
// given up first (dead, or unreachable for too long); nil when the job ended.
func (x *Orchestrator) runJob(ctx context.Context, s *sub, c *runners.Client, name, base, baseCommit string) (res runtime.Result, gone error) {
	fail := func(err error) (runtime.Result, error) {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: err.Error()})
		_, _ = x.emit(s.id, session.SubagentError{Error: err.Error(), Attempt: 1, Context: "runner " + name})
		return runtime.Result{Outcome: session.OutcomeFailure, Err: err}, nil
	}
	j := runners.Job{ID: runners.NewJobID(), SessionID: x.o.SessionID, SubagentID: s.id, Task: s.cmd.Task,
		AgentType: s.cmd.AgentType, PermissionMode: string(s.policy.Mode), Tools: s.policy.Tools,
		InheritContext: s.cmd.InheritContext, TimeoutS: s.cmd.Timeout, BaseCommit: baseCommit}
	stopModels, err := x.jobSpec(s, &j) // runnermodels.go: the agent, context chain and models
	if err != nil {
		return fail(fmt.Errorf("runner %s: serving the job's model calls: %w", name, err))
	}
	defer stopModels()
	_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
		Text: fmt.Sprintf("placed on runner %s as job %s", name, j.ID)})
	// The job is on the record before it exists: a session killed from here on reattaches it.
	_, _ = x.emit(s.id, session.RunnerCursor{Job: j.ID, Runner: name})
	sctx, scancel := context.WithTimeout(ctx, 2*time.Minute)
	err = c.Submit(sctx, name, j, base)
	scancel()
	if s.unhold != nil {
		s.unhold() // counted as placed from here on (or failed)
	}
	if err != nil {
		return fail(fmt.Errorf("runner %s: %w", name, err))
	}
	return x.followJob(ctx, s, c, name, j.ID, j.Models, 0, nil)
}

// followJob follows job id on runner name from its stream sequence after to the job's end
// (runJob; a resumed session's reattach, runnerresume.go, with its undecided requests),
// then forgets the job.
func (x *Orchestrator) followJob(ctx context.Context, s *sub, c *runners.Client, name, id, models string, after uint64, pending []*session.Permission) (res runtime.Result, gone error) {
	fail := func(err error) (runtime.Result, error) {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: err.Error()})
		_, _ = x.emit(s.id, session.SubagentError{Error: err.Error(), Attempt: 1, Context: "runner " + name})
		return runtime.Result{Outcome: session.OutcomeFailure, Err: err}, nil
	}
	j := runners.Job{ID: id, Models: models}
	defer func() {
		fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
		c.Forget(fctx, j.ID)
		fcancel()
	}()

	// The follow ends at the job's end; the lease watch ends it early when the runner dies.
	fctx, fcancel := context.WithCancelCause(context.Background())
	defer fcancel(nil)
	var goneWhy error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(leaseWatch)
		defer t.Stop()
		cancelled := false
		var lost time.Time // when the runner became unreachable (zero: it is reachable)
		note := func(text string) {
			_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage, Text: text})
		}
		back := func() {
			if !lost.IsZero() {
				note(fmt.Sprintf("runner %s is back after %s", name, time.Since(lost).Round(time.Second)))
				lost = time.Time{}
			}
		}
		for {
			select {
			case <-fctx.Done():
				return
			case <-ctx.Done():
				if !cancelled { // /cancel or the timeout: the runner stops the run, and its end follows
					cancelled = true
					cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
					_ = c.Control(cctx, j.ID, runners.Control{Type: "cancel", Reason: "cancelled by the session"})
					ccancel()
					go func() { // an end that never comes (runner cut off) does not hold the session
						select {
						case <-time.After(30 * time.Second):
							fcancel(context.Canceled)
						case <-fctx.Done():
						}
					}()
				}
			case <-t.C:
				lctx, lcancel := context.WithTimeout(fctx, leaseWatch)
				alive, err := c.Alive(lctx, name)
				lcancel()
				if err != nil {
					continue // NATS is not reachable from here: nothing is known of the runner
				}
				if alive {
					back()
					continue
				}
				switch c.Probe(fctx, name) {
				case runners.Answered: // reconnected, its lease not yet renewed
					back()
				case runners.Dead:
					// Once more after a moment: a runner reconnecting (NATS restarted) has no
					// subscription for that moment.
					select {
					case <-fctx.Done():
						return
					case <-time.After(time.Second):
					}
					if c.Probe(fctx, name) != runners.Dead {
						continue
					}
					goneWhy = fmt.Errorf("runner %s is gone: its lease expired and NATS holds no connection of it (killed or stopped)", name)
					fcancel(errRunnerGone)
					return
				case runners.Unreachable:
					if lost.IsZero() {
						lost = time.Now()
						note(fmt.Sprintf("runner %s is unreachable (its lease expired; NATS still holds its connection): waiting for it up to %s", name, runners.UnreachableMax))
					} else if time.Since(lost) > runners.UnreachableMax {
						goneWhy = fmt.Errorf("runner %s is gone: unreachable for over %s", name, runners.UnreachableMax)
						fcancel(errRunnerGone)
						return
					}
				}
			}
		}
	}()
	defer wg.Wait()
	m := &runnerMirror{x: x, s: s, c: c, job: j.ID, runner: name, last: after, pending: pending,
		sessionModels: j.Models == runners.ModelsSession}
	// From the stream's start even when resuming: the head names the runner session's id of
	// the subagent; the mirror folds nothing at or below its cursor.
	end, err := c.Follow(fctx, j.ID, 0, m.event)
	fcancel(nil)
	if err != nil {
		if errors.Is(context.Cause(fctx), errRunnerGone) {
			wg.Wait() // goneWhy is written before the cancel
			return runtime.Result{Outcome: session.OutcomeFailure, Tokens: m.tokens, ToolCalls: m.calls}, goneWhy
		}
		if ctx.Err() != nil {
			return runtime.Result{Outcome: session.OutcomeCancelled, Err: ctx.Err(), Tokens: m.tokens, ToolCalls: m.calls}, nil
		}
		return fail(fmt.Errorf("runner %s: following job %s: %w", name, j.ID, err))
	}
	res = runtime.Result{Outcome: end.Outcome, Tokens: m.tokens, ToolCalls: max(m.calls, end.ToolCalls),
		Capsule: m.capsule, Artifacts: end.Artifacts}
	if end.CostUSD != nil {
		s.remoteCost = end.CostUSD
	}
	switch end.Outcome {
	case runners.OutcomeRefused:
		return fail(fmt.Errorf("runner %s refused the job: %s", name, end.Error))
	case session.OutcomeSuccess, session.OutcomeFailure, session.OutcomeCancelled, session.OutcomeTimeout:
	default:
		return fail(fmt.Errorf("runner %s ended the job as %q", name, end.Outcome))
	}
	if end.Error != "" && end.Outcome != session.OutcomeSuccess {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: "runner " + name + ": " + end.Error})
	}
	if end.Result != "" && s.wt != nil {
		if err := x.importResult(s, c, end); err != nil {
			return fail(fmt.Errorf("runner %s: the change set: %w", name, err))
		}
	}
	return res, nil
}

// errRunnerGone is the follow's cancel cause when the runner is given up.
var errRunnerGone = errors.New("runner gone")

// importResult makes the worktree's files the runner's result; finish records the change set.
func (x *Orchestrator) importResult(s *sub, c *runners.Client, end runners.End) error {
	dir, err := os.MkdirTemp("", "summit-result-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(dir, "result.bundle")
	if err := c.FetchResult(ctx, end.Result, path); err != nil {
		return err
	}
	return x.git.ImportResult(ctx, s.wt, path, end.Head)
}

// runnerMirror folds a job's events: the runner session's first subagent's events become this
// subagent's, recorded with this session's seqs. Its lifecycle (spawn, isolation, changes,
// stop) is this session's own, and its permission requests are asked here.
type runnerMirror struct {
	x      *Orchestrator
	s      *sub
	c      *runners.Client
	job    string
	runner string
	// last is the cursor: the stream sequence folded so far (recorded as RunnerCursor with
	// every event folded from the stream; a resumed session starts from the recorded one).
	last    uint64
	remote  string // the runner session's id of the subagent
	tokens  session.Tokens
	calls   int
	capsule *protocols.Capsule
	// sessionModels: this session routed the model and recorded ModelRouted itself.
	sessionModels bool
	routedSeen    bool           // the runner's first ModelRouted came
	used          session.Tokens // the ModelTurns' tokens so far
	// pending are a resumed session's undecided requests of this subagent, matched in order
	// with the runner's requests the stream holds at or below the cursor (runnerresume.go).
	pending []*session.Permission
}

func (m *runnerMirror) event(seq uint64, line []byte) error {
	e, err := record.DecodeLine(line)
	if err != nil {
		return nil // a line this version cannot read changes nothing here
	}
	if d, ok := e.Data.(session.SubagentSpawned); ok && m.remote == "" && d.ParentSubagentID == "" {
		m.remote = e.SubagentID
		return nil
	}
	if e.SubagentID == "" || e.SubagentID != m.remote {
		return nil
	}
	if seq <= m.last {
		// Folded before (the cursor): never twice. A resumed session still learns from it
		// which runner request each of its undecided requests is.
		// And what the first route and the tokens so far were.
		switch d := e.Data.(type) {
		case session.PermissionRequested:
			m.rewire(d)
		case session.ModelRouted:
			m.routedSeen = true
		case session.ModelTurn:
			m.used.Input += d.Tokens.Input
			m.used.Output += d.Tokens.Output
		}
		return nil
	}
	m.last = seq
	x, s := m.x, m.s
	cur := session.RunnerCursor{Job: m.job, Runner: m.runner, Seq: seq}
	switch d := e.Data.(type) {
	case session.TranscriptEvent:
		if d.EventType == session.TranscriptStart {
			return nil
		}
		if d.EventType == session.TranscriptToolCall {
			m.calls++
		}
		return x.emitFromRunner(s.id, d, cur)
	case session.ModelRouted:
		if m.sessionModels && !m.routedSeen {
			// The runner's first route is its placeholder; this session recorded its own. A
			// later one (a move down the chain mid-run) is recorded as it comes.
			m.routedSeen = true
			return nil
		}
		return x.emitFromRunner(s.id, d, cur)
	case session.ModelTurn:
		// Its tokens so far go to Options.OnUsage (a served run's budget), as a local one's do.
		m.used.Input += d.Tokens.Input
		m.used.Output += d.Tokens.Output
		err := x.emitFromRunner(s.id, d, cur)
		x.reportUsage(s, m.used)
		return err
	case session.ModelSwitched, session.SubagentError:
		return x.emitFromRunner(s.id, e.Data, cur)
	case session.PermissionRequested:
		// Asked here, answered there: the runner's session waits for the decision. The local
		// request is recorded now, in the stream's order and with the cursor (a resumed
		// session never asks it twice); only the wait for the decision runs beside.
		r, err := x.ask(s, d.Tool, d.Args, d.Reason, func(req session.Data) error {
			return x.emitFromRunner(s.id, req, cur)
		})
		if err != nil {
			return err
		}
		go m.answer(d.RequestID, r)
	case session.SubagentStop:
		m.tokens = d.Tokens
		m.capsule = d.Capsule
		m.calls = max(m.calls, d.ToolInvocationCount)
	}
	return nil
}

// answer waits for the local decision of r (nil: a grant answered it) and sends it back.
func (m *runnerMirror) answer(id string, r *request) {
	ok, why := true, ""
	if r != nil {
		var err error
		if ok, why, err = m.x.await(m.s, r); err != nil && why == "" {
			why = err.Error()
		}
	}
	m.decide(id, ok, why)
}

// decide sends the local decision of the runner's request id back on the job's control
// subject.
func (m *runnerMirror) decide(id string, grant bool, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = m.c.Control(ctx, m.job, runners.Control{Type: "decision", Request: id, Grant: grant, Reason: why})
}

// runnersCmd is /runners: the registered runners, their labels and free slots, and this
// session's subagents on each.
func (x *Orchestrator) runnersCmd(ctx context.Context, line string, c commands.Runners) (Reply, error) {
	if x.o.Runners == nil {
		return x.rejectf(line, c, "no runners: start summit with --nats URL, or set runners: {nats: URL} in the user config")
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	regs, err := x.o.Runners.Runners(lctx)
	cancel()
	if err != nil {
		return x.rejectf(line, c, "listing the runners: %v", err)
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	here := map[string][]string{}
	x.mu.Lock()
	for _, sa := range x.state.Subagents {
		if s := x.subs[sa.ID]; s != nil && s.runner != "" && !sa.Stopped {
			here[s.runner] = append(here[s.runner], sa.ID)
		}
	}
	x.mu.Unlock()
	if len(regs) == 0 {
		return Reply{Output: "no runner is registered at " + x.o.Runners.URL}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %s:", session.Plural(len(regs), "runner"), x.o.Runners.URL)
	for _, r := range regs {
		var labels []string
		for k, v := range r.Labels {
			labels = append(labels, k+"="+v)
		}
		sort.Strings(labels)
		fmt.Fprintf(&b, "\n  %s  %d/%d free", r.Name, max(r.Free, 0), r.Slots) // queued jobs count as taken
		if len(labels) > 0 {
			b.WriteString("  " + strings.Join(labels, ","))
		}
		if ids := here[r.Name]; len(ids) > 0 {
			slices.Sort(ids)
			b.WriteString("  running " + strings.Join(ids, ", "))
		}
	}
	return Reply{Output: b.String()}, nil
}

// RunnerNames are the registered runners' names (completion of --on).
func (x *Orchestrator) RunnerNames() []string {
	if x.o.Runners == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(x.ctx, time.Second)
	defer cancel()
	regs, _ := x.o.Runners.Runners(ctx)
	var out []string
	for _, r := range regs {
		out = append(out, r.Name)
	}
	return out
}
