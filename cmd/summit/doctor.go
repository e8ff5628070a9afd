package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/remote"
	"github.com/summit-dev/summit/session"
)

func newDoctor(stdout, stderr io.Writer) *cobra.Command {
	var f catalogueFlags
	var forced string
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configured model providers without spending tokens",
		Long: `Doctor reads the config, routes every agent's model as a session would, and asks each provider
it uses for its model list (a request that costs no tokens). It prints what is missing or wrong:
a key that is not set or is refused, a base_url that does not answer or is not the API, a model
the provider does not list, an agent whose model has no route.

Exit codes: 0 nothing wrong, 1 a problem was found, 2 usage (a config that does not load).`,
		Example: "  summit doctor\n  summit doctor --provider anthropic",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprint(stdout, "config:")
			router, cfg, err := sessionRouter(f.workspace, forced, func(p string, exists bool) {
				state := "not there"
				if exists {
					state = "read"
				}
				fmt.Fprintf(stdout, " %s (%s)", session.Sanitize(p), state)
			})
			fmt.Fprintln(stdout)
			if err != nil {
				return err
			}
			doctorTrust(stdout, f.workspace) // trust.go: what an untrusted workspace's files do not do
			problems := 0
			// Which models each provider must serve, and for which agents.
			want := map[string]map[string][]string{}
			add := func(l provider.Link, agent string) {
				if want[l.Provider] == nil {
					want[l.Provider] = map[string][]string{}
				}
				want[l.Provider][l.Model] = append(want[l.Provider][l.Model], agent)
			}
			for _, d := range f.load().List() {
				res, err := router.RouteModel(d.Model.Name, d.Model.Fallbacks)
				if err != nil {
					problems++
					fmt.Fprintf(stdout, "✗ agent %s: %s\n", session.Sanitize(d.Name), session.Sanitize(err.Error()))
					continue
				}
				add(res.Link, d.Name)
				for _, l := range res.Fallbacks {
					add(l, d.Name+" (fallback)")
				}
			}
			names := slices.Sorted(func(yield func(string) bool) {
				for n := range want {
					if !yield(n) {
						return
					}
				}
			})
			if len(names) == 1 && names[0] == "script" {
				fmt.Fprintln(stdout, "No model is configured: sessions run on the script tapes. The README's Models section shows a config for each provider kind.")
			}
			for _, n := range names {
				if n == "script" {
					continue
				}
				client := router.HTTPClient(n, &http.Client{Timeout: 15 * time.Second})
				problems += doctorProvider(stdout, router.Info(n), want[n], client)
			}
			problems += doctorConfinement(stdout) // doctor_confine.go
			node := sync.OnceValue(nodeVersion)
			problems += doctorACP(stdout, cfg.ACPAgents, node)
			problems += doctorMCP(stdout, cfg.MCPServers, node)
			problems += doctorRemotes(stdout, cfg.Remotes)
			if problems > 0 {
				return &exitError{exitBad, fmt.Errorf("%s found", session.Plural(problems, "problem"))}
			}
			fmt.Fprintln(stdout, "no problems found")
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVar(&forced, "provider", "", "check as a session with --provider P would route")
	return c
}

// doctorProvider checks one provider and the models routed to it; it returns the problems.
func doctorProvider(w io.Writer, info provider.ProviderInfo, models map[string][]string, client *http.Client) int {
	san := session.Sanitize
	where := info.Kind
	if info.BaseURL != "" {
		where += " at " + info.BaseURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, err := provider.ListModels(ctx, info, os.Getenv, client)
	if err != nil {
		fmt.Fprintf(w, "✗ %s (%s): %s\n", san(info.Name), san(where), san(err.Error()))
		return 1
	}
	key := ""
	if info.KeyEnv != "" && os.Getenv(info.KeyEnv) != "" {
		key = ", key " + info.KeyEnv + " accepted"
	}
	fmt.Fprintf(w, "✓ %s (%s)%s: %s listed\n", san(info.Name), san(where), key, session.Plural(len(list), "model"))
	problems := 0
	for _, m := range slices.Sorted(func(yield func(string) bool) {
		for m := range models {
			if !yield(m) {
				return
			}
		}
	}) {
		agents := strings.Join(models[m], ", ")
		switch {
		case m == "":
			fmt.Fprintf(w, "    · its configured model, for %s\n", san(agents))
		case provider.Serves(list, m):
			fmt.Fprintf(w, "    ✓ %s, for %s\n", san(m), san(agents))
		default:
			problems++
			fmt.Fprintf(w, "    ✗ %s is not in its model list, for %s\n", san(m), san(agents))
		}
	}
	return problems
}

// doctorACP checks the external ACP agents (doctor_agents.go): a configured one that is
// missing or broken is a problem; a missing built-in is a note that says how to install it.
func doctorACP(w io.Writer, configured map[string]provider.ACPAgent, node func() string) int {
	problems := 0
	builtins := map[string]acp.Agent{}
	for _, a := range acp.Builtins() {
		builtins[a.Command] = a
	}
	for _, name := range slices.Sorted(maps.Keys(configured)) {
		a := configured[name]
		var b *acp.Agent
		if bi, ok := builtins[filepath.Base(a.Command)]; ok {
			b = &bi
		}
		if !doctorProgram(w, "acp_agents."+name, a.Command, b, node) {
			problems++
		}
	}
	for _, a := range acp.Builtins() {
		if _, ok := configured[a.Name]; ok {
			continue
		}
		if _, err := exec.LookPath(a.Command); err != nil {
			fmt.Fprintf(w, "· %s: %s is not on PATH; install it with %s\n", a.Name, a.Command, a.Install)
			continue
		}
		if !doctorProgram(w, a.Name+" (ACP agent, --agent-type "+a.Name+")", a.Command, &a, node) {
			fmt.Fprintf(w, "    it is not used until it works: install it with %s\n", a.Install)
		}
	}
	return problems
}

// doctorRemotes checks that each remote ABI agent answers agent.schema (its token read from
// token_env, never shown); it returns the problems.
func doctorRemotes(w io.Writer, remotes map[string]provider.Remote) int {
	problems := 0
	for _, name := range slices.Sorted(maps.Keys(remotes)) {
		r := remotes[name]
		if r.TokenEnv != "" && os.Getenv(r.TokenEnv) == "" {
			problems++
			fmt.Fprintf(w, "✗ remotes.%s: %s is not set (the bearer token of %s)\n", session.Sanitize(name), session.Sanitize(r.TokenEnv), session.Sanitize(r.URL))
			continue
		}
		c := &remote.Client{Endpoint: r.URL, Token: os.Getenv(r.TokenEnv), HTTP: &http.Client{Timeout: 10 * time.Second}, Retries: 1}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		m, err := c.Schema(ctx, orDefault(r.Agent, name))
		cancel()
		if err != nil {
			problems++
			fmt.Fprintf(w, "✗ remotes.%s: %s\n", session.Sanitize(name), session.Sanitize(err.Error()))
			continue
		}
		fmt.Fprintf(w, "✓ remotes.%s: %s at %s (%s)\n", session.Sanitize(name), session.Sanitize(m.Metadata.Name), session.Sanitize(r.URL),
			session.Sanitize(firstLine(m.Metadata.Description, 60)))
	}
	return problems
}
