package main

import (
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session/hooks"
)

// hookRunner is the session's hooks (nil when none is configured). cfg is the gated config's
// (workspaceGate): the workspace's hooks are in it only when the workspace is trusted, so
// every hook it holds runs. passEnv are the user config's env_passthrough names.
func (f *sessionFlags) hookRunner(cfg provider.Hooks) *hooks.Runner {
	if cfg.Empty() {
		return nil
	}
	return hooks.New(hooks.Options{Hooks: cfg, WorkspaceTrusted: true, PassEnv: f.passEnv})
}
