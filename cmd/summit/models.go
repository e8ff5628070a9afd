package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
)

// modelRow is what `summit models --json` prints for one agent.
type modelRow struct {
	Agent     string   `json:"agent"`
	Requested string   `json:"requested"`
	Provider  string   `json:"provider,omitempty"`
	Model     string   `json:"model,omitempty"`
	Why       string   `json:"why,omitempty"`
	Overrides []string `json:"env_overrides,omitempty"`
	Fallbacks []string `json:"fallbacks,omitempty"`
	Dropped   []string `json:"dropped,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func newModels(stdout, stderr io.Writer) *cobra.Command {
	var f catalogueFlags
	var forced string
	var asJSON bool
	c := &cobra.Command{
		Use:   "models",
		Short: "Show what model every agent runs on, and why",
		Long: `Models resolves every agent's model as a session would, without calling any model: the
provider and model its requests go to, and why (the agent's own choice, a route in the config,
an environment override, a tier mapping when its provider is not configured or --provider
overrides it, the default provider), its fallbacks, and the parameters that are not sent.
Then it lists the providers used, and whether their keys are set.`,
		Example: "  summit models\n  summit models --provider anthropic\n  summit models --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			router, _, err := sessionRouter(f.workspace, forced, nil)
			if err != nil {
				return err
			}
			cat := f.load()
			var rows []modelRow
			used := map[string]bool{}
			for _, d := range cat.List() {
				row := modelRow{Agent: d.Name, Requested: d.Model.Name}
				for _, o := range d.Overrides {
					if strings.HasSuffix(o, "_MODEL") {
						row.Overrides = append(row.Overrides, o)
					}
				}
				res, err := router.RouteModel(d.Model.Name, d.Model.Fallbacks)
				if err != nil {
					row.Error = err.Error()
					rows = append(rows, row)
					continue
				}
				row.Provider, row.Model, row.Why = res.Provider, res.Model, res.Why
				used[res.Provider] = true
				for _, l := range res.Fallbacks {
					row.Fallbacks = append(row.Fallbacks, l.String())
					used[l.Provider] = true
				}
				if res.DropTemperature != "" && d.Temperature != nil {
					row.Dropped = append(row.Dropped, "temperature: "+res.DropTemperature)
				}
				rows = append(rows, row)
			}
			if asJSON {
				return writeJSON(stdout, rows)
			}
			printModels(stdout, rows, router, used, forced)
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVar(&forced, "provider", "", "resolve as a session with --provider P would")
	c.Flags().BoolVar(&asJSON, "json", false, "print one object per agent as JSON")
	return c
}

// sessionRouter routes as a session in workspace with --provider forced would, without
// starting one: the merged config, or the keys in the environment when there is none. files,
// when set, is called with the config files and whether each exists (summit doctor says so).
func sessionRouter(workspace, forced string, files func(path string, exists bool)) (*provider.Router, provider.Config, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return nil, provider.Config{}, usageErr("--workspace: %v", err)
	}
	userDir := ""
	if dir, err := os.UserConfigDir(); err == nil {
		userDir = filepath.Join(dir, "summit")
	}
	if files != nil {
		for _, p := range provider.ConfigFiles(ws, userDir) {
			_, err := os.Stat(p)
			files(p, err == nil)
		}
	}
	// As the workspace's trust allows (trust.go): an untrusted workspace's providers are
	// neither shown as routes nor contacted by doctor.
	g, err := workspaceGate(ws, nil, false)
	if err != nil {
		return nil, provider.Config{}, err
	}
	loaded := g.cfg
	cfg := loaded
	if cfg.Empty() && forced == "" {
		cfg, _ = provider.FromEnvironment(os.Getenv) // as a session would
	}
	router := provider.NewRouter(cfg, provider.NewScript(provider.ScriptConfig{}), os.Getenv)
	if forced != "" {
		if err := router.Force(forced); err != nil {
			return nil, provider.Config{}, usageErr("--provider: %v", err)
		}
	}
	return router, loaded, nil
}

func printModels(w io.Writer, rows []modelRow, router *provider.Router, used map[string]bool, forced string) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r.Agent))
	}
	pad := strings.Repeat(" ", width+2)
	san := session.Sanitize
	for _, r := range rows {
		req := r.Requested
		if req == "" {
			req = "(inherit)"
		}
		if r.Error != "" {
			fmt.Fprintf(w, "%-*s  %s → ✗ %s\n", width, san(r.Agent), san(req), san(r.Error))
			continue
		}
		to := r.Provider
		if r.Model != "" {
			to += "/" + r.Model
		}
		fmt.Fprintf(w, "%-*s  %s → %s\n", width, san(r.Agent), san(req), san(to))
		why := r.Why
		if len(r.Overrides) > 0 {
			why = strings.Join(r.Overrides, ", ") + " sets the model; " + why
		}
		fmt.Fprintf(w, "%s%s\n", pad, san(why))
		if len(r.Fallbacks) > 0 {
			fmt.Fprintf(w, "%sfallbacks: %s\n", pad, san(strings.Join(r.Fallbacks, ", ")))
		}
		for _, d := range r.Dropped {
			fmt.Fprintf(w, "%snot sent: %s\n", pad, san(d))
		}
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return
	}
	fmt.Fprintln(w, "\nproviders used:")
	for _, n := range names {
		info := router.Info(n)
		line := fmt.Sprintf("  %s: kind %s", n, info.Kind)
		if info.BaseURL != "" {
			line += ", " + info.BaseURL
		}
		if info.Tiers != "" {
			line += ", " + info.Tiers
		}
		switch {
		case info.Kind == "script":
			line += ", the script tapes (no model, no key)"
		case info.KeyEnv == "":
		case os.Getenv(info.KeyEnv) != "":
			line += ", key " + info.KeyEnv + " is set"
		default:
			line += ", key " + info.KeyEnv + " is NOT set"
		}
		fmt.Fprintln(w, san(line))
	}
	if forced == "" && len(names) == 1 && names[0] == "script" {
		fmt.Fprintln(w, "\nNo model is configured, so sessions run on the script tapes. See the README's Models section.")
	}
}
