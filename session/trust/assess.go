package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
)

// The workspace's trust states, as SessionStarted.workspace_trust records them.
const (
	StatusNone      = "none"      // the workspace configures nothing that needs trust
	StatusTrusted   = "trusted"   // trusted (remembered, or --trust-workspace for this run)
	StatusUntrusted = "untrusted" // its gated parts are ignored
)

// maxHashed bounds what is read of one covered file (a bigger file is hashed by its first
// maxHashed bytes and its size).
const maxHashed = 4 << 20

// Assessment is what trusting a workspace would enable, and whether it is trusted.
type Assessment struct {
	// Workspace is the absolute, symlink-resolved path the store keys by.
	Workspace string
	// Items lists what trust enables, one line each ("mcp_servers.fs: runs ./fs.sh",
	// "agent general (.summit/agents/general.md): kind: acp (runs ./evil.sh)").
	Items []string
	// Digest covers the config file, the gated agent files and the hook scripts (doc.go).
	Digest string
	// Status is StatusNone, StatusTrusted or StatusUntrusted.
	Status string
	// Changed is set when the workspace was trusted for another digest: what it covers has
	// changed since, so it is asked again.
	Changed bool
	// Flag is set when --trust-workspace trusted it for this run only.
	Flag bool
	// Config is the workspace file's entries; Agents its gated agent files.
	Config []provider.WorkspaceEntry
	Agents []agents.GatedFile
}

// Trusted reports whether the gated parts take effect.
func (a Assessment) Trusted() bool { return a.Status != StatusUntrusted }

// Resolve is the key a workspace is trusted under: absolute, symlinks resolved.
func Resolve(workspace string) (string, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Assess reads what the workspace would have trust enable and looks it up in the store at
// storePath ("" = none: untrusted unless flag). flag is --trust-workspace. A config file that
// does not load is an error (a session would refuse to start on it either way).
func Assess(workspace, storePath string, flag bool) (Assessment, error) {
	ws, err := Resolve(workspace)
	if err != nil {
		return Assessment{}, err
	}
	a := Assessment{Workspace: ws}
	_, entries, err := provider.LoadConfigGated(ws, "", false)
	if err != nil {
		return Assessment{}, err
	}
	a.Config = entries
	for _, e := range entries {
		a.Items = append(a.Items, e.String())
	}
	a.Agents = agents.Load(agents.Options{Workspace: ws, NoBuiltins: true, GateWorkspace: true}).Gated()
	for _, g := range a.Agents {
		a.Items = append(a.Items, fmt.Sprintf("agent %s (%s): %s", g.Name, rel(ws, g.Path), g.Why))
	}
	if len(a.Items) == 0 {
		a.Status = StatusNone
		return a, nil
	}
	a.Digest = digest(ws, a.Agents)
	a.Status = StatusUntrusted
	switch {
	case flag:
		a.Status, a.Flag = StatusTrusted, true
	case storePath != "":
		e, ok, err := Lookup(storePath, ws)
		if err != nil {
			return a, err // untrusted, and the caller says why
		}
		if ok && e.Digest == a.Digest {
			a.Status = StatusTrusted
		} else if ok {
			a.Changed = true
		}
	}
	return a, nil
}

// Ignored is what an untrusted workspace's gated parts are, for notices: the config's
// sections (with their names) and the agent files, in one short line each.
func (a Assessment) Ignored() []string {
	if a.Trusted() {
		return nil
	}
	var out []string
	for _, e := range a.Config {
		s := e.Section
		if e.Name != "" && e.Section != "hooks" {
			s += "." + e.Name
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, g := range a.Agents {
		out = append(out, "agent file "+rel(a.Workspace, g.Path))
	}
	return out
}

// Notice is the one line that names what an untrusted workspace's ignored parts are ("" when
// nothing is ignored).
func (a Assessment) Notice() string {
	ig := a.Ignored()
	if len(ig) == 0 {
		return ""
	}
	why := "not trusted"
	if a.Changed {
		why = "changed since you trusted it"
	}
	return fmt.Sprintf("workspace %s: ignored %s (summit trust to enable)", why, strings.Join(ig, ", "))
}

func rel(ws, p string) string {
	if r, err := filepath.Rel(ws, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// digest covers the bytes of .summit/config.yaml, of the gated agent files and of the files
// the workspace's hook commands name, each under its path relative to the workspace.
func digest(ws string, gated []agents.GatedFile) string {
	h := sha256.New()
	add := func(kind, p string) {
		fmt.Fprintf(h, "%s\x00%s\x00", kind, rel(ws, p))
		hashFile(h, p)
	}
	add("config", filepath.Join(ws, ".summit", "config.yaml"))
	paths := make([]string, 0, len(gated))
	for _, g := range gated {
		paths = append(paths, g.Path)
	}
	slices.Sort(paths)
	for _, p := range paths {
		add("agent", p)
	}
	for _, p := range HookScripts(ws) {
		add("script", p)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func hashFile(w io.Writer, p string) {
	f, err := os.Open(p)
	if err != nil {
		fmt.Fprintf(w, "missing\x00")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		fmt.Fprintf(w, "not a file\x00")
		return
	}
	fmt.Fprintf(w, "%d\x00", st.Size())
	io.Copy(w, io.LimitReader(f, maxHashed))
}

// HookScripts are the workspace files the workspace config's hook commands name: every word
// of a command (quotes stripped, split at shell punctuation) that is a regular file inside
// the workspace, relative to it or absolute. Hooks run in the workspace (never in a
// subagent's worktree), so these are the files they execute or read.
func HookScripts(ws string) []string {
	cfg, err := provider.LoadConfig(ws, "")
	if err != nil {
		return nil
	}
	var out []string
	for _, list := range cfg.Hooks.Events {
		for _, h := range list {
			// Claude Code's settings name their scripts "$CLAUDE_PROJECT_DIR"/...: hooks get
			// the workspace there (session/hooks), so those are the workspace's files.
			// Quotes are dropped, not split at: "$CLAUDE_PROJECT_DIR"/x.sh is one word.
			command := strings.NewReplacer("${CLAUDE_PROJECT_DIR}", ws, "$CLAUDE_PROJECT_DIR", ws, `"`, "", "'", "").Replace(h.Command)
			for _, w := range strings.FieldsFunc(command, func(r rune) bool {
				return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(";|&()<>`\"'=", r)
			}) {
				p := w
				if !filepath.IsAbs(p) {
					p = filepath.Join(ws, p)
				}
				p = filepath.Clean(p)
				if r := rel(ws, p); r == p || r == "." {
					continue // outside the workspace: not the repository's to change
				}
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
