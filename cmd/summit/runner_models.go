package main

import (
	"fmt"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session/runners"
)

// A job's session on a runner (runner.go's runJob) takes what the job brings instead of the
// runner's own files: the agent's effective definition, and, when the job's models come from
// the session (session/runners' Models "session"), the session's routing of its model, every
// request of which goes back to the session through jobModels (runners.ModelTransport).

// jobCatalogue is cat with the job's agent in effect.
func (f *sessionFlags) jobCatalogue(cat *agents.Catalogue) *agents.Catalogue {
	if f.job == nil || f.job.Agent == nil {
		return cat
	}
	return cat.With(f.job.AgentType, f.job.Agent)
}

// jobRouter is the router of a job whose models come from the session: the job's route, no
// key and no endpoint of this machine, every request through the session; router otherwise.
func (f *sessionFlags) jobRouter(router *provider.Router, script provider.Provider) (*provider.Router, error) {
	if !f.jobRouted() {
		return router, nil
	}
	cfg, err := f.job.Route.RunnerConfig()
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", f.job.ID, err)
	}
	// The SDKs want some key: a placeholder, dropped by the transport (the session adds its own).
	getenv := func(k string) string {
		if k == provider.SessionKeyEnv {
			return "through-the-session"
		}
		return ""
	}
	return provider.NewRouter(cfg, script, getenv).Via(f.jobModels), nil
}

// jobRouted reports whether the job's model is routed by the session's route: its models come
// from the session and the route has a chain (an ACP agent's has none: startJobRelay).
func (f *sessionFlags) jobRouted() bool {
	return f.job != nil && f.job.Route != nil && len(f.job.Route.Chain) > 0 && f.jobModels != nil
}

// startJobRelay starts the loopback model relay of a job whose ACP agent's models come from the
// session (a route with no chain), and points the job's ACP agents at it; stop closes it.
func (f *sessionFlags) startJobRelay() (stop func(), err error) {
	if f.job == nil || f.job.Route == nil || len(f.job.Route.Chain) > 0 || f.jobModels == nil {
		return func() {}, nil
	}
	r, err := runners.StartModelRelay(f.jobModels, f.job.Route)
	if err != nil {
		return nil, err
	}
	f.jobRelay = &acp.Relay{URL: r.URL, Kinds: r.Kinds, Key: runners.RelayKey}
	return func() { _ = r.Close() }, nil
}

// jobModel is the model a definition routes by: the job's route when it has one.
func (f *sessionFlags) jobModel(def *agents.Definition) (string, []string) {
	if f.jobRouted() {
		return provider.JobModel, nil
	}
	return def.Model.Name, def.Model.Fallbacks
}

// jobContext is the context chain the job brings (nil outside a job, or without one).
func (f *sessionFlags) jobContext() *runners.ContextChain {
	if f.job == nil {
		return nil
	}
	return f.job.Context
}
