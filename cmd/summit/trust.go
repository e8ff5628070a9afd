package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/trust"
)

// userConfigDir is the user's summit config dir ("" when there is none).
func userConfigDir() string {
	if dir, err := os.UserConfigDir(); err == nil {
		return filepath.Join(dir, "summit")
	}
	return ""
}

// gated is a workspace's configuration as its trust allows: every command that reads the
// config or the agent files goes through workspaceGate, so an untrusted workspace's gated
// parts (session/trust) reach nothing.
type gated struct {
	trust  trust.Assessment
	cfg    provider.Config
	agents agents.Options // GateWorkspace set while untrusted
	// note is why the trust store could not be read ("" = it could).
	note string
}

// workspaceGate assesses the workspace's trust (flag: --trust-workspace) and loads its config
// and agent options accordingly. A config that does not load is a usage error.
func workspaceGate(ws string, agentDirs []string, flag bool) (*gated, error) {
	g := &gated{}
	store, err := trust.StorePath(os.Getenv)
	if err != nil {
		g.note = err.Error()
	}
	g.trust, err = trust.Assess(ws, store, flag)
	if err != nil {
		if g.trust.Workspace == "" { // the config did not load, or the path does not resolve
			return nil, usageErr("%v", err)
		}
		g.note = "the workspace trust store could not be read: " + err.Error()
	}
	userDir := userConfigDir()
	cfg, _, err := provider.LoadConfigGated(ws, userDir, g.trust.Trusted())
	if err != nil {
		return nil, usageErr("%v", err)
	}
	g.cfg = cfg
	g.agents = agents.Options{UserConfigDir: userDir, Workspace: ws, Dirs: agentDirs, Env: os.Getenv, GateWorkspace: !g.trust.Trusted()}
	return g, nil
}

// notice is what an untrusted run says on stderr ("" when nothing was ignored).
func (g *gated) notice() string {
	n := g.trust.Notice()
	if n != "" && g.note != "" {
		n += " (" + g.note + ")"
	}
	return n
}

func newTrust(stdout, stderr io.Writer) *cobra.Command {
	var revoke, list bool
	c := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a workspace's own config, agent files and hook scripts (or --revoke, --list)",
		Long: `Trust lists what a workspace's own files would make summit do (its .summit/config.yaml: MCP
servers and ACP agents it starts, providers and remotes it sends keys and tokens to, hooks it
runs, hosts web_fetch may reach; agent files that run a command or reach an endpoint) and
records that you trust them. Until then a session ignores them and says so. The trust covers
those files as they are now (and the scripts the hooks name): when one changes, summit asks
again. DIR defaults to the current directory.`,
		Example: "  summit trust\n  summit trust ~/src/project\n  summit trust --revoke\n  summit trust --list",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := trust.StorePath(os.Getenv)
			if err != nil {
				return badFile(err)
			}
			san := session.Sanitize
			if list {
				if len(args) > 0 || revoke {
					return usageErr("--list takes no DIR and no --revoke\nusage: %s", cmd.UseLine())
				}
				all, err := trust.List(store)
				if err != nil {
					return badFile(err)
				}
				for _, t := range all {
					fmt.Fprintf(stdout, "%s  (since %s, %s)\n", san(t.Workspace), t.At.Format(time.DateOnly), session.Plural(len(t.Covered), "item"))
				}
				if len(all) == 0 {
					fmt.Fprintln(stdout, "no workspace is trusted")
				}
				return nil
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usageErr("%s is not a directory", dir)
			}
			if revoke {
				ws, err := trust.Resolve(dir)
				if err != nil {
					return badFile(err)
				}
				had, err := trust.Revoke(store, ws)
				if err != nil {
					return badFile(err)
				}
				if had {
					fmt.Fprintf(stdout, "%s is no longer trusted\n", san(ws))
				} else {
					fmt.Fprintf(stdout, "%s was not trusted\n", san(ws))
				}
				return nil
			}
			a, err := trust.Assess(dir, store, false)
			if err != nil && a.Workspace == "" {
				return usageErr("%v", err)
			}
			if a.Status == trust.StatusNone {
				fmt.Fprintf(stdout, "%s configures nothing that needs trust: no .summit/config.yaml entries, no agent files that run commands\n", san(a.Workspace))
				return nil
			}
			fmt.Fprintf(stdout, "Trusting %s enables:\n", san(a.Workspace))
			for _, it := range a.Items {
				fmt.Fprintf(stdout, "  %s\n", san(it))
			}
			if err := trust.Record(store, a, time.Now()); err != nil {
				return badFile(err)
			}
			fmt.Fprintln(stdout, "trusted (until any of these files changes; summit trust --revoke undoes it)")
			return nil
		},
	}
	c.Flags().BoolVar(&revoke, "revoke", false, "forget the workspace's trust")
	c.Flags().BoolVar(&list, "list", false, "list the trusted workspaces")
	return c
}

// trustItems is what SessionStarted lists for the trust inbox item: what trusting would
// enable, while the workspace is untrusted.
func trustItems(a trust.Assessment) []string {
	if a.Trusted() {
		return nil
	}
	return a.Items
}

// doctorTrust says whether the workspace is trusted and, when it is not, what of it doctor
// (like a session) ignored: nothing it names is contacted or started.
func doctorTrust(w io.Writer, workspace string) {
	g, err := workspaceGate(workspace, nil, false)
	if err != nil {
		return // the config did not load: doctor has already said so
	}
	san := session.Sanitize
	switch {
	case g.trust.Status == trust.StatusNone:
		fmt.Fprintln(w, "workspace trust: nothing in this workspace needs it")
	case g.trust.Trusted():
		fmt.Fprintf(w, "workspace trust: trusted (%s)\n", session.Plural(len(g.trust.Items), "item"))
	default:
		fmt.Fprintf(w, "· workspace trust: %s; not checked, contacted or started:\n", san(g.notice()))
		for _, it := range g.trust.Items {
			fmt.Fprintf(w, "    %s\n", san(it))
		}
	}
}

// relPath is p relative to root when it is inside it.
func relPath(root, p string) string {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// recordTrust is what /trust does in the workbench: it records the trust the session's start
// assessed, in the user's store. Only an interactive session of an untrusted workspace has it
// (headless runs take --trust-workspace). The files are assessed again first: trust covers
// what the inbox item showed, so a change since the session started is refused, not trusted.
func (f *sessionFlags) recordTrust(at trust.Assessment) func() error {
	if !f.interactive || at.Trusted() {
		return nil
	}
	return func() error {
		store, err := trust.StorePath(os.Getenv)
		if err != nil {
			return err
		}
		now, err := trust.Assess(at.Workspace, "", false)
		if err != nil {
			return err
		}
		if now.Digest != at.Digest {
			return fmt.Errorf("the workspace's config, agent files or hook scripts changed since this session started; start summit again to see what they hold now")
		}
		return trust.Record(store, at, time.Now())
	}
}
