package live

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/runners"
)

// What a job carries besides its task and base (session/runners' Job), and the session's half
// of a runner's model calls: the job takes the effective agent definition after this
// session's policy, the context chain its prompt inherits, and, when this session routes the
// agent's model to a provider it can call (not script tapes), that routing without endpoint or
// key; for an ACP agent, which picks its models itself, the providers of this session that
// serve the APIs it may speak (provider.RelayRoute), which the runner's loopback relay sends
// its requests to. The runner then sends each model request back here
// (runners.ModelTransport); this session makes it with its own key (Options.Models,
// provider.Router.Forward) and records its turns, tokens and cost from the runner's events;
// an ACP agent's relayed calls it records itself, from their responses (relaymeter.go).

// jobSpec fills j's agent, context and models for s. stop ends serving its model calls (call
// it when the job is forgotten); it is never nil.
func (x *Orchestrator) jobSpec(s *sub, j *runners.Job) (stop func(), err error) {
	j.Agent, j.Env = x.jobAgent(s)
	if s.cmd.InheritContext {
		j.Context = x.contextChain(s)
	}
	return x.serveModels(s, j)
}

// serveModels sets j's Models (and Route) and, when this session routes s's model to a
// provider it can call, serves job j.ID's model calls until stop (never nil). It records the
// ModelRouted of s unless the recording has one (a --retry's next job, a reattached job:
// the route is the first one's).
func (x *Orchestrator) serveModels(s *sub, j *runners.Job) (stop func(), err error) {
	stop = func() {}
	j.Models = runners.ModelsRunner
	if x.o.Models != nil && x.isACP(s.def) {
		// An ACP agent calls its models itself: the runner points it at a loopback relay of
		// the job (session/runners' ModelRelay), whose requests come here like a native
		// subagent's, for the providers of this session that serve its APIs.
		jr, err := x.o.Models.RelayRoute()
		if err != nil || len(jr.Providers) == 0 {
			return stop, nil // script tapes: the agent calls its models with the runner's environment
		}
		serve, err := x.serveJobModels(j.ID, jr, x.relayMeterOf(s))
		if err != nil {
			return stop, err
		}
		j.Models, j.Route = runners.ModelsSession, &jr
		return serve, nil
	}
	if x.o.Models == nil || x.isACP(s.def) || x.o.Route == nil {
		return stop, nil
	}
	prov, _, err := x.o.Route(s.def)
	if err != nil {
		return stop, nil // the runner routes it (its error, if any, comes home as its events)
	}
	rp, ok := prov.(provider.Routed)
	if !ok {
		return stop, nil // script tapes: the runner plays its own (--tapes)
	}
	res := rp.Resolution()
	jr, err := x.o.Models.JobRoute(res)
	if err != nil {
		return stop, nil
	}
	serve, err := x.serveJobModels(j.ID, jr, nil)
	if err != nil {
		return stop, err
	}
	j.Models, j.Route = runners.ModelsSession, &jr
	routed := session.ModelRouted{Requested: res.Requested, Provider: res.Provider, Model: res.Model, Why: res.Why}
	for _, f := range res.Fallbacks {
		routed.Fallbacks = append(routed.Fallbacks, f.String())
	}
	if res.DropTemperature != "" && s.def.Temperature != nil {
		routed.Dropped = append(routed.Dropped, "temperature: "+res.DropTemperature)
	}
	// Where the model requests go is on the record before the first of them, as for a local
	// subagent (once); the runner's own ModelRouted (its placeholder route) is not recorded.
	x.mu.Lock()
	sa := x.state.Subagent(s.id)
	already := sa != nil && sa.Route != nil
	x.mu.Unlock()
	if already {
		return serve, nil
	}
	if _, err := x.emit(s.id, routed); err != nil {
		serve()
		return stop, err
	}
	return serve, nil
}

// serveJobModels makes job id's model calls with this session's keys until the returned stop:
// only for the providers of its route, only model endpoints (Forward). With a meter (an ACP
// agent's relayed calls, relaymeter.go) each call's usage is read from its response as it
// streams back and recorded as a ModelTurn; a native subagent's runner records its own.
func (x *Orchestrator) serveJobModels(id string, jr provider.JobRoute, m *relayMeter) (stop func(), err error) {
	return x.o.Runners.ServeModels(id, func(ctx context.Context, c runners.ModelCall) (*http.Response, error) {
		p, ok := jr.Providers[c.Provider]
		if !ok {
			return nil, fmt.Errorf("provider %q is not in job %s's model route", c.Provider, id)
		}
		res, err := x.o.Models.Forward(ctx, c.Provider, c.Method, c.Path, c.Header, c.Body)
		if err == nil && m != nil {
			path, _, _ := strings.Cut(c.Path, "?")
			m.meter(p.Kind, callInfo{provider: c.Provider, path: path, model: requestModel(path, c.Body)}, res)
		}
		return res, err
	})
}

// jobAgent is s's definition as it runs: the policy's mode and tools, the file's source path
// and unknown keys left out (a runner needs neither). An ACP agent's is its command line from
// this session's (trusted) config or file, with the env entries that name a variable ($VAR,
// ${VAR}: the runner passes its own; env names those) and none that holds a value, which could
// be a secret; a built-in ACP agent is left to the runner's built-in of that name (nil).
func (x *Orchestrator) jobAgent(s *sub) (def *agents.Definition, env []string) {
	if x.isACP(s.def) {
		a, err := x.acpAgentOf(s.def)
		if err != nil || a.Source == "builtin:acp" {
			return nil, nil
		}
		args := []any{}
		for _, v := range a.Args {
			args = append(args, v)
		}
		refs := map[string]any{}
		for k, v := range a.Env {
			if m := envRef.FindStringSubmatch(v); m != nil {
				refs[k] = v
				env = append(env, m[1]+m[2])
			}
		}
		slices.Sort(env)
		unknown := map[string]any{"command": a.Command, "args": args, "env": refs}
		if len(a.MCPServers) > 0 {
			var names []any
			for _, n := range a.MCPServers {
				names = append(names, n)
			}
			unknown["mcpServers"] = names
		}
		return &agents.Definition{Name: s.def.Name, Description: a.Description, Kind: acp.Kind,
			Tools: append([]string(nil), s.policy.Tools...), PermissionMode: s.policy.Mode,
			Unknown: unknown, Source: agents.Source{Layer: "job"}}, env
	}
	d := *s.def
	d.Tools = append([]string(nil), s.policy.Tools...)
	d.PermissionMode = s.policy.Mode
	d.Source = agents.Source{Dialect: d.Source.Dialect, Layer: d.Source.Layer}
	d.Unknown, d.Metadata, d.Overrides = nil, nil, nil
	return &d, nil
}

// envRef is an env value that only names a variable: $VAR or ${VAR}.
var envRef = regexp.MustCompile(`^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$`)

// contextChain is the context chain s's prompt inherits from this session (DESIGN §6): the
// playbook and the Downstream Context of every finished subagent (delegate.go's prompt), and
// what a job placed on a runner carries.
func (x *Orchestrator) contextChain(s *sub) *runners.ContextChain {
	c := &runners.ContextChain{}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.state.Playbook {
		c.Playbook = append(c.Playbook, runners.PlaybookItem{ID: p.ID, Section: p.Section, Content: p.Content})
	}
	for _, sa := range x.state.Subagents {
		if sa.ID == s.id || !sa.Stopped || sa.Outcome != session.OutcomeSuccess {
			continue
		}
		l := runners.ChainLink{SubagentID: sa.ID, AgentName: sa.AgentName}
		if sa.Capsule != nil {
			l.DownstreamContext = sa.Capsule.DownstreamContext
		}
		c.Chain = append(c.Chain, l)
	}
	return c
}
