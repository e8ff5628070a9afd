package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/remote"
	"github.com/summit-dev/summit/agents/runtime"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// Remote ABI agents (agents/remote): `/delegate TASK --agent-type researcher` where the
// config's remotes names researcher. Such a subagent is spawned like any other (no worktree:
// it changes nothing here), then runRemote replaces the native loop: the endpoint's manifest
// (agent.schema, fetched once per session) says what inputs it takes; the task goes in its
// task or query field; agent.invoke starts the run without waiting; the run's events, followed
// over the server's event stream, become this subagent's transcript; and the final result
// becomes its capsule (output, verification, tokens, cost). /cancel and the timeout send
// agent.cancel. Transient HTTP failures are retried (Retry-After honoured); a server that stops
// answering fails the subagent with what the client last saw.

// RemoteKind is the Kind of a remote agent's definition.
const RemoteKind = "remote"

// remoteReg is a session's remote agents, read once.
type remoteReg struct {
	defs map[string]*agents.Definition
	conf map[*agents.Definition]provider.Remote
	// unlisted are agent files (agent.yaml) whose endpoint no remotes entry names: a
	// delegation to one fails saying so (a file that comes with a repository must not send
	// tasks, or a token, anywhere the user did not name).
	unlisted map[*agents.Definition]string
	mu       sync.Mutex
	schemas  map[string]protocols.Manifest // by remote name: fetched once per session
}

func (x *Orchestrator) remotes() *remoteReg {
	x.remoteOnce.Do(func() {
		r := &remoteReg{defs: map[string]*agents.Definition{}, conf: map[*agents.Definition]provider.Remote{},
			schemas: map[string]protocols.Manifest{}}
		conf := x.o.Remotes // gated by the caller; never read from the files here
		r.unlisted = map[*agents.Definition]string{}
		for name, c := range conf {
			d := &agents.Definition{Name: name, Description: "remote agent " + orDefault(c.Agent, name) + " at " + c.URL,
				Kind: RemoteKind, Source: agents.Source{Path: c.File, Layer: "remote"}}
			r.defs[name], r.conf[d] = d, c
		}
		// An agent.yaml with an endpoint is the manifest of an agent served there: it runs
		// there when a remotes entry names that URL (its token_env then applies).
		if x.o.Catalogue != nil {
			for _, cd := range x.o.Catalogue.List() {
				ep, _ := cd.Metadata["endpoint"].(string)
				if ep == "" {
					ep, _ = cd.Unknown["endpoint"].(string) // a key no dialect documents
				}
				if ep == "" || r.defs[cd.Name] != nil {
					continue
				}
				d := &agents.Definition{Name: cd.Name, Description: "remote agent " + cd.Name + " at " + ep,
					Kind: RemoteKind, Source: cd.Source}
				r.defs[cd.Name] = d
				r.unlisted[d] = ep
				for _, c := range conf {
					if strings.TrimSuffix(strings.TrimSuffix(c.URL, "/"), "/rpc") == strings.TrimSuffix(strings.TrimSuffix(ep, "/"), "/rpc") {
						r.conf[d] = provider.Remote{URL: c.URL, Agent: cd.Name, TokenEnv: c.TokenEnv, File: c.File}
						delete(r.unlisted, d)
					}
				}
			}
		}
		x.remoteR = r
	})
	return x.remoteR
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// isRemote reports whether a definition is a remote ABI agent.
func (x *Orchestrator) isRemote(def *agents.Definition) bool {
	return def != nil && def.Kind == RemoteKind
}

// remoteClient is the client of a remote agent's endpoint, with its token.
func (x *Orchestrator) remoteClient(c provider.Remote) *remote.Client {
	token := ""
	if c.TokenEnv != "" {
		token = os.Getenv(c.TokenEnv)
	}
	return &remote.Client{Endpoint: c.URL, Token: token, Sleep: x.clock.Sleep}
}

// parseInputs reads --inputs: a JSON object.
func parseInputs(s string) (map[string]any, error) {
	var in map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil || in == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, fmt.Errorf("want a JSON object, such as '{\"depth\": 3}': %v", err)
	}
	if dec.More() {
		return nil, errors.New("want one JSON object; there is more after it")
	}
	return in, nil
}

// remoteInputs are the invoke inputs for a task: --inputs (a JSON object, "" for none) with the
// task in the manifest's task or query field (or its one required string field) unless
// --inputs sets that field itself.
func remoteInputs(m protocols.Manifest, task, extra string) (map[string]any, error) {
	in := map[string]any{}
	if extra != "" {
		var err error
		if in, err = parseInputs(extra); err != nil {
			return nil, fmt.Errorf("--inputs: %w", err)
		}
	}
	field, err := taskField(m)
	if err != nil {
		if len(in) > 0 {
			return in, nil // the inputs say it all
		}
		return nil, err
	}
	if _, set := in[field]; !set {
		in[field] = task
	}
	return in, nil
}

// taskField is the input field a task goes in.
func taskField(m protocols.Manifest) (string, error) {
	props, _ := m.Spec.Interface.InputSchema["properties"].(map[string]any)
	isString := func(k string) bool {
		p, _ := props[k].(map[string]any)
		return p != nil && (p["type"] == "string" || p["type"] == nil)
	}
	if len(props) == 0 {
		return "task", nil
	}
	for _, k := range []string{"task", "query", "prompt", "input"} {
		if isString(k) {
			return k, nil
		}
	}
	if req, _ := m.Spec.Interface.InputSchema["required"].([]any); len(req) == 1 {
		if k, _ := req[0].(string); isString(k) {
			return k, nil
		}
	}
	var names []string
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	return "", fmt.Errorf("the remote agent takes structured inputs (%s), with no text field for the task (task or query): give them with --inputs '{…}'", strings.Join(names, ", "))
}

// runRemote is a remote agent's run in place of the native loop.
func (x *Orchestrator) runRemote(s *sub, deadline time.Time) (res runtime.Result) {
	reg := x.remotes()
	conf := reg.conf[s.def]
	agentID := orDefault(conf.Agent, s.def.Name)
	fail := func(context string, err error) runtime.Result {
		msg := err.Error()
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: msg})
		_, _ = x.emit(s.id, session.SubagentError{Error: msg, Attempt: 1, Context: context})
		return runtime.Result{Outcome: session.OutcomeFailure, Err: err}
	}
	if ep, ok := reg.unlisted[s.def]; ok {
		return fail("remote agent", fmt.Errorf("%s (%s) declares the endpoint %s, and summit sends a task to an endpoint only when the config names it: add `remotes: {%s: {url: %q}}` to .summit/config.yaml (with token_env if it needs a token)",
			s.def.Name, s.def.Source.Path, ep, s.def.Name, ep))
	}
	client := x.remoteClient(conf)
	ctx := s.ctx
	if x.clock.Simulated() {
		// The run waits on the wall clock (the server) while the simulated clock stands
		// still: the time left is a wall-clock budget, as for an ACP agent.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(s.ctx, deadline.Sub(x.clock.Now()))
		defer cancel()
	}
	reg.mu.Lock()
	m, ok := reg.schemas[s.def.Name]
	reg.mu.Unlock()
	if !ok {
		var err error
		if m, err = client.Schema(ctx, agentID); err != nil {
			if ctx.Err() != nil {
				return runtime.Result{Outcome: session.OutcomeCancelled, Err: ctx.Err()}
			}
			return fail("remote agent", fmt.Errorf("%s: agent.schema of %s: %w", conf.URL, agentID, err))
		}
		reg.mu.Lock()
		reg.schemas[s.def.Name] = m
		reg.mu.Unlock()
	}
	inputs, err := remoteInputs(m, s.cmd.Task, s.cmd.Inputs)
	if err == nil {
		err = m.ValidateInputs(inputs)
	}
	if err != nil {
		return fail("remote agent", fmt.Errorf("%s: %w", agentID, err))
	}
	runID := strings.ReplaceAll(x.o.SessionID, "/", "-") + "-" + s.id
	wait := false
	_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
		Text: fmt.Sprintf("invoking %s at %s (run %s)", agentID, conf.URL, runID)})
	started, err := client.Invoke(ctx, protocols.InvokeParams{AgentID: agentID, Inputs: inputs, RunID: runID,
		Context: &protocols.InvokeContext{TraceID: x.o.SessionID}, Wait: &wait})
	if err != nil {
		if ctx.Err() != nil {
			return runtime.Result{Outcome: session.OutcomeCancelled, Err: ctx.Err()}
		}
		return fail("remote agent", fmt.Errorf("%s: agent.invoke of %s: %w", conf.URL, agentID, err))
	}
	if started.Recording != "" {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
			Text: "the server records the run in " + started.Recording})
	}

	// Follow the run; a broken stream resumes after the last event received, a few times.
	mirror := remoteMirror{x: x, s: s}
	var final protocols.InvokeResult
	var lastErr error
	for tries := 0; ; tries++ {
		final, err = client.Follow(ctx, runID, mirror.last, mirror.event)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			break
		}
		lastErr = err
		var rpcErr *protocols.RPCError
		if errors.As(err, &rpcErr) || tries >= 4 {
			return fail("remote agent", fmt.Errorf("%s: following run %s: %w", conf.URL, runID, err))
		}
		if x.clock.Sleep(ctx, time.Duration(200<<tries)*time.Millisecond) != nil {
			break
		}
	}
	if ctx.Err() != nil {
		// /cancel or the timeout: the remote run is cancelled too (with a short budget of
		// its own: the subagent's context has ended).
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if r, err := client.Cancel(cctx, runID); err == nil {
			_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
				Text: "the remote run ended: " + r.Status})
		} else {
			_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError,
				Text: fmt.Sprintf("cancelling the remote run %s: %v", runID, err)})
		}
		x.acpTimeout(s, deadline, "") // the timeout, when that is what ended it
		return runtime.Result{Outcome: session.OutcomeCancelled, Err: ctx.Err(), Tokens: mirror.tokens, ToolCalls: mirror.calls}
	}
	_ = lastErr
	return x.remoteResult(s, final, mirror)
}

// remoteResult is the subagent's result from the remote run's.
func (x *Orchestrator) remoteResult(s *sub, r protocols.InvokeResult, mir remoteMirror) runtime.Result {
	res := runtime.Result{Tokens: mir.tokens, ToolCalls: mir.calls}
	if res.Tokens == (session.Tokens{}) && r.Metrics != nil {
		res.Tokens.Output = r.Metrics.Tokens // the total, when the events did not say
	}
	var c protocols.Capsule
	if b, err := json.Marshal(r.Output); err == nil {
		_ = json.Unmarshal(b, &c)
	}
	c.AgentName = s.def.Name
	if c.Summary == "" {
		c.Summary = "(no summary)"
	}
	if r.Verification != nil {
		c.Verification = r.Verification
	}
	res.Capsule = &c
	if r.Metrics != nil && r.Metrics.CostUSD > 0 {
		usd := r.Metrics.CostUSD
		s.remoteCost = &usd
	}
	if r.Provenance != nil && r.Provenance.Model != "" {
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptMessage,
			Text: fmt.Sprintf("the remote run used %s (at %s)", r.Provenance.Model, r.Provenance.Timestamp)})
	}
	switch r.Status {
	case protocols.StatusCompleted:
		res.Outcome = session.OutcomeSuccess
	case protocols.StatusCancelled:
		s.cancel("the remote run was cancelled: " + orDefault(r.Error, "by the server"))
		res.Outcome = session.OutcomeCancelled
	default:
		msg := fmt.Sprintf("the remote run %s: %s", orDefault(r.Status, "ended"), orDefault(r.Error, "no reason given"))
		_, _ = x.emit(s.id, session.TranscriptEvent{EventType: session.TranscriptError, Text: msg})
		_, _ = x.emit(s.id, session.SubagentError{Error: msg, Attempt: 1, Context: "remote agent"})
		res.Outcome, res.Err = session.OutcomeFailure, errors.New(msg)
	}
	return res
}

// remoteMirror records a remote run's events as this subagent's: the transcript of the run's
// delegation as it is, its permission decisions and errors as messages.
type remoteMirror struct {
	x      *Orchestrator
	s      *sub
	last   uint64 // the seq of the last event received
	sub    string // the remote run's delegation (its first top-level subagent)
	tokens session.Tokens
	calls  int
}

func (m *remoteMirror) event(e session.Event) error {
	m.last = e.Seq
	if d, ok := e.Data.(session.SubagentSpawned); ok && m.sub == "" && d.ParentSubagentID == "" {
		m.sub = e.SubagentID
		return nil
	}
	if e.SubagentID == "" || e.SubagentID != m.sub {
		return nil
	}
	emit := func(d session.Data) error { _, err := m.x.emit(m.s.id, d); return err }
	note := func(format string, args ...any) error {
		return emit(session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "remote: " + fmt.Sprintf(format, args...)})
	}
	switch d := e.Data.(type) {
	case session.TranscriptEvent:
		if d.EventType == session.TranscriptStart {
			return nil
		}
		if d.EventType == session.TranscriptToolCall {
			m.calls++
		}
		return emit(d)
	case session.PermissionRequested:
		return note("the run asks permission for %s: %s", d.Tool, d.Reason)
	case session.PermissionGranted:
		return note("%s granted by the server (%s)", d.RequestID, orDefault(d.By, "its policy"))
	case session.PermissionDenied:
		return note("%s denied by the server: %s", d.RequestID, d.Reason)
	case session.ModelRouted:
		if d.From != "" {
			return note("the run moved from %s to %s/%s: %s", d.From, d.Provider, d.Model, d.Why)
		}
		return note("the run's model is %s/%s", d.Provider, d.Model)
	case session.SubagentError:
		return emit(session.TranscriptEvent{EventType: session.TranscriptError, Text: "remote: " + d.Error})
	case session.SubagentStop:
		m.tokens = d.Tokens
		if d.ToolInvocationCount > m.calls {
			m.calls = d.ToolInvocationCount
		}
	}
	return nil
}
