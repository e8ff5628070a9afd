package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/live"
	"github.com/summit-dev/summit/session/render"
)

// catalogueFlags are the search-path flags shared by the agents subcommands.
type catalogueFlags struct {
	workspace string
	dirs      []string
}

func (f *catalogueFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.workspace, "workspace", ".", "project root whose resources/agents, .claude/agents, .gemini/agents and .summit/agents are searched")
	c.Flags().StringArrayVar(&f.dirs, "agents", nil, "extra agent directory, searched last (repeatable)")
}

// acpAgents are the external ACP agents a session in the workspace could delegate to. A config
// that does not load lists none here (a session would refuse to start, saying why).
func (f *catalogueFlags) acpAgents() []acp.Agent {
	return acp.NewSet(f.config().ACPAgents, nil).List()
}

// config is the workspace's and user's config as the workspace's trust allows (empty when it
// does not load).
func (f *catalogueFlags) config() provider.Config {
	g, err := workspaceGate(f.workspace, f.dirs, false)
	if err != nil {
		return provider.Config{}
	}
	return g.cfg
}

// remoteDefs are the config's remote ABI agents, as definitions for the list.
func (f *catalogueFlags) remoteDefs() []*agents.Definition {
	var out []*agents.Definition
	for name, r := range f.config().Remotes {
		out = append(out, &agents.Definition{Name: name, Description: "remote agent " + orDefault(r.Agent, name) + " at " + r.URL,
			Kind: live.RemoteKind, Source: agents.Source{Path: r.File, Layer: "remote"}})
	}
	slices.SortFunc(out, func(a, b *agents.Definition) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// load is the catalogue a session in the workspace would have: an untrusted workspace's agent
// files that run commands or reach endpoints are left out (and listed by Gated).
func (f *catalogueFlags) load() *agents.Catalogue {
	if g, err := workspaceGate(f.workspace, f.dirs, false); err == nil {
		return agents.Load(g.agents)
	}
	// A config that does not load: trust cannot be assessed, so the workspace is untrusted.
	return agents.Load(agents.Options{UserConfigDir: userConfigDir(), Workspace: f.workspace, Dirs: f.dirs, Env: os.Getenv, GateWorkspace: true})
}

func newAgents(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "agents",
		Short: "List, validate and show agent definitions",
		Long: `Agent definitions come from the embedded built-ins, the user config dir's agents/, and the
workspace's resources/agents, .claude/agents, .gemini/agents and .summit/agents, then --agents
directories; later wins by name.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("agents needs a subcommand: list, validate or show")
		},
	}
	c.AddCommand(newAgentsList(stdout, stderr), newAgentsValidate(stdout, stderr), newAgentsShow(stdout))
	return c
}

func newAgentsList(stdout, stderr io.Writer) *cobra.Command {
	var f catalogueFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the agents in effect, with where each comes from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat := f.load()
			defs := cat.List()
			// External ACP agents (acp_agents, and the built-ins whose command is on PATH) are
			// --agent-types too; a catalogue agent of the same name wins over a built-in.
			for _, a := range f.acpAgents() {
				if _, dup := cat.Get(a.Name); !dup || a.Source != "builtin:acp" {
					d := a.Definition()
					d.Source.Layer = "acp"
					defs = append(defs, d)
				}
			}
			defs = append(defs, f.remoteDefs()...) // remote ABI agents (remotes:)
			if asJSON {
				// JSONSafe turns the YAML maps kept in Metadata and Unknown into JSON objects.
				type jsonDef struct {
					*agents.Definition
					Metadata any `json:"metadata,omitempty"`
					Unknown  any `json:"unknown,omitempty"`
				}
				out := make([]jsonDef, 0, len(defs))
				for _, d := range defs {
					out = append(out, jsonDef{d, agents.JSONSafe(d.Metadata), agents.JSONSafe(d.Unknown)})
				}
				return writeJSON(stdout, out)
			}
			// Names, descriptions, tools and paths are whatever the agent files say: every cell
			// is sanitised, on one line.
			tb := render.Table{Header: []string{"NAME", "FROM", "MODE", "MODEL", "DESCRIPTION", "TOOLS"}}
			row := func(cells ...string) {
				for i, c := range cells {
					cells[i] = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(session.Sanitize(c))
				}
				tb.Rows = append(tb.Rows, cells)
			}
			for _, d := range defs {
				tools := "(type defaults)"
				if d.Tools != nil {
					tools = strings.Join(d.Tools, ", ")
				}
				mode := string(d.PermissionMode)
				if mode == "" {
					mode = "session's" // it sets none: it runs in the session's mode
				}
				model := d.Model.String()
				if model == "" {
					model = "session's"
				}
				row(d.Name, d.Source.Layer, mode, model, firstLine(d.Description, 300), tools)
				if sh := cat.Shadowing(d.Name, f.workspace); sh != "" { // never silently
					row("", "", "", "", "↳ runs "+sh, "")
				}
			}
			// An untrusted workspace's agent files that would run a command (session/trust).
			for _, g := range cat.Gated() {
				if g.Ignored {
					row(g.Name, "workspace", "", "", fmt.Sprintf("ignored: %s: %s; the workspace is not trusted (summit trust)", relPath(f.workspace, g.Path), g.Why), "")
				}
			}
			// On a terminal: as wide as it is, the header in bold; piped: every cell whole, plain.
			width := 0
			if fd, ok := stdout.(interface{ Fd() uintptr }); ok && term.IsTerminal(fd.Fd()) {
				if w, _, err := term.GetSize(fd.Fd()); err == nil {
					width = w
				}
				tb.Style = func(row, _ int) lipgloss.Style { return lipgloss.NewStyle().Bold(row == -1) }
			}
			for _, l := range tb.Lines(width) {
				fmt.Fprintln(stdout, l)
			}
			fmt.Fprintln(stdout, "\nMODE: what an agent asks for, never above the session's. session's: it sets none and takes the session's.")
			for _, s := range cat.Shadows() {
				fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(fmt.Sprintf("%s: %s shadows %s", s.Name, s.Winner, s.Loser)))
			}
			if n := len(cat.Problems()); n > 0 {
				fmt.Fprintf(stderr, "summit: %s while loading; run 'summit agents validate'\n", session.Plural(n, "problem"))
			}
			return nil
		},
	}
	f.add(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the definitions as JSON")
	return c
}

func newAgentsValidate(stdout, stderr io.Writer) *cobra.Command {
	var f catalogueFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check agent files; exit 0 without errors, 1 with any",
		Long: `Validate checks agent definitions: the name is kebab-case and matches the file name,
required fields are present, tool names are known, the tool tier fits the declared role, and
task is never granted. With PATHs (files or directories) only those are read; without, the
whole search path. One line per problem: file:line: level: message.`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			var cat *agents.Catalogue
			if len(paths) > 0 {
				for _, p := range paths {
					if _, err := os.Stat(p); err != nil {
						return badFile(fmt.Errorf("%s: no such file or directory", p))
					}
				}
				cat = agents.LoadPaths(os.Getenv, paths...)
			} else {
				cat = f.load()
			}
			problems := cat.Validate()
			if asJSON {
				if problems == nil {
					problems = []agents.Problem{}
				}
				if err := writeJSON(stdout, problems); err != nil {
					return err
				}
			} else {
				for _, p := range problems {
					fmt.Fprintln(stdout, session.Sanitize(p.String())) // file names and names as found
				}
			}
			errs := 0
			for _, p := range problems {
				if p.Level == agents.LevelError {
					errs++
				}
			}
			fmt.Fprintf(stderr, "summit: %s, %s, %s, %s\n", session.Plural(cat.Files(), "file"), session.Plural(len(cat.List()), "agent"),
				session.Plural(errs, "error"), session.Plural(len(problems)-errs, "warning"))
			if errs > 0 {
				return &exitError{exitBad, fmt.Errorf("%s", session.Plural(errs, "error"))}
			}
			return nil
		},
	}
	f.add(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the problems as JSON")
	return c
}

func newAgentsShow(stdout io.Writer) *cobra.Command {
	var f catalogueFlags
	var task, ceiling string
	c := &cobra.Command{
		Use:   "show NAME",
		Short: "Print an agent's effective definition and the delegation prompt it would receive",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("show needs one agent NAME\nusage: %s", cmd.UseLine())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// Everything shown comes from the agent file (the body is the prompt): it is
			// written out sanitised, whole.
			var out strings.Builder
			defer func() { fmt.Fprint(stdout, session.Sanitize(out.String())) }()
			cat := f.load()
			d, ok := cat.Get(args[0])
			if !ok {
				names := []string{}
				for _, x := range cat.List() {
					names = append(names, x.Name)
				}
				return usageErr("no agent named %q%s", args[0], nearest(args[0], names))
			}
			mode, err := agents.ParseMode(ceiling)
			if err != nil {
				return usageErr("--ceiling: %v", err)
			}
			pol, err := agents.Resolve(d, agents.Request{SessionTools: agents.CanonicalTools(), Ceiling: mode})
			if err != nil {
				return badFile(err)
			}
			fmt.Fprintf(&out, "name:        %s\nsource:      %s (%s, %s)\ndescription: %s\nmodel:       %s\n",
				d.Name, d.Source.Path, d.Source.Dialect, d.Source.Layer, firstLine(d.Description, 200), orDash(d.Model.String()))
			if d.Temperature != nil {
				fmt.Fprintf(&out, "temperature: %g\n", *d.Temperature)
			}
			if d.MaxTurns > 0 {
				fmt.Fprintf(&out, "max turns:   %d\n", d.MaxTurns)
			}
			if d.TimeoutMins > 0 {
				fmt.Fprintf(&out, "timeout:     %d min\n", d.TimeoutMins)
			}
			fmt.Fprintf(&out, "mode:        %s (session ceiling %s)\ntools:       %s\n", pol.Mode, mode, orDash(strings.Join(pol.Tools, ", ")))
			for _, n := range pol.Notes {
				fmt.Fprintf(&out, "policy:      %s\n", n)
			}
			for _, o := range d.Overrides {
				fmt.Fprintf(&out, "override:    %s\n", o)
			}
			prompt := protocols.BuildPrompt(protocols.PromptInput{
				AgentName: d.Name, AgentBody: d.Body, PermissionMode: string(pol.Mode), Workspace: f.workspace,
				Tools: pol.Tools, Denied: d.DisallowedTools, InheritContext: true, Task: task,
			})
			fmt.Fprintf(&out, "\n---- delegation prompt for the sample task ----\n%s", prompt)
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVar(&task, "task", "Summarise how this repository is organised.", "the sample task for the prompt")
	c.Flags().StringVar(&ceiling, "ceiling", "acceptEdits", "the session permission ceiling: plan, acceptEdits or bypassPermissions")
	return c
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// nearest formats the grammar's suggestion rule for "no agent named" errors.
func nearest(name string, names []string) string {
	if best := commands.Nearest(name, names); best != "" {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return "; run 'summit agents list'"
}
