package main

import (
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/hooks"
)

// hookRunner is the session's hooks (nil when none is configured): the user's config's
// always, the workspace's only when trusted. An interactive session on a terminal asks the
// first time (and whenever the workspace's hooks change: typing yes trusts them), other runs
// need --trust-hooks; a notice on stderr says when the workspace's hooks do not run.
func (f *sessionFlags) hookRunner(ws string, cfg provider.Hooks, stderr io.Writer) *hooks.Runner {
	if cfg.Empty() {
		return nil
	}
	store, err := hooks.TrustPath(os.Getenv)
	if err != nil && !f.trustHooks {
		fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(err.Error()))
	}
	interactive := f.interactive && term.IsTerminal(os.Stdin.Fd()) && term.IsTerminal(os.Stdout.Fd())
	ok, notice := hooks.Trust(hooks.TrustOptions{Workspace: ws, Hooks: cfg, StorePath: store, Flag: f.trustHooks,
		Interactive: interactive && err == nil, In: os.Stdin, Out: os.Stdout})
	if notice != "" {
		fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(notice))
	}
	return hooks.New(hooks.Options{Hooks: cfg, WorkspaceTrusted: ok, PassEnv: f.passEnv})
}

// verifyConfig is the verify: command /apply runs: the user's config's always; the
// workspace's, a process the workspace would start, only with --trust-hooks (an untrusted
// workspace starts no process). A notice says when it is left out.
func (f *sessionFlags) verifyConfig(v provider.Verify, stderr io.Writer) provider.Verify {
	if !v.Workspace || f.trustHooks {
		return v
	}
	fmt.Fprintf(stderr, "summit: %s\n", "the workspace's verify: command (.summit/config.yaml) does not run: the workspace is not trusted; --trust-hooks runs it, or put it in your own config")
	return provider.Verify{}
}
