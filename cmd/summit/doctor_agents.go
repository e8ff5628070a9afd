package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/semver"

	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
)

// What summit doctor says about the programs summit starts: each ACP agent (configured, and
// the built-ins) and each configured MCP server command. A program is found on PATH; when it
// is an npm package's (acp.InstalledPackage) its version is shown without running it, checked
// against the oldest version summit supports and the one CI tests (a built-in's), and the Node
// version its package needs against the node on PATH. The install lines name the versions
// .ci/run installs. A configured program that is missing, too old or whose Node is too old is
// a problem; a built-in that is missing is a note.

// nodeVersion is the node on PATH's version ("v22.3.0"), "" when there is none; a variable for
// tests.
var nodeVersion = func() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// nodeFloor reads the lowest Node version of an engines.node range of the common form
// ">=22", ">= 20.19.0"; "" for any other form (it is then shown, not checked).
var nodeFloor = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^>=\s*v?(\d+(?:\.\d+){0,2})$`) })

// checkNode says whether the node on PATH satisfies need (an engines.node range); ok is false
// only when it is known not to.
func checkNode(need, have string) (msg string, ok bool) {
	if need == "" {
		return "", true
	}
	if have == "" {
		return "needs Node " + need + ", and node is not on PATH", false
	}
	m := nodeFloor().FindStringSubmatch(need)
	if m == nil || !semver.IsValid(have) {
		return "needs Node " + need + " (node " + have + ")", true
	}
	if semver.Compare(have, "v"+m[1]) < 0 {
		return "needs Node " + need + ", node on PATH is " + have, false
	}
	return "Node " + need + " (node " + have + ")", true
}

// doctorProgram checks one program summit starts: label names it (acp_agents.x,
// mcp_servers.y, a built-in's name); b, when not nil, is the built-in it is (its package,
// tested and minimum versions, install line). It prints one line and returns whether it is
// usable.
func doctorProgram(w io.Writer, label, command string, b *acp.Agent, node func() string) bool {
	san := session.Sanitize
	path, err := exec.LookPath(command)
	if err != nil {
		msg := fmt.Sprintf("✗ %s: %s is not on PATH", san(label), san(command))
		if b != nil && b.Install != "" {
			msg += "; install it with " + b.Install
		}
		fmt.Fprintln(w, msg)
		return false
	}
	pkg, isNPM := acp.InstalledPackage(path)
	if !isNPM {
		fmt.Fprintf(w, "✓ %s: %s (%s)\n", san(label), san(command), san(path))
		return true
	}
	var notes []string
	ok := true
	if b != nil && b.Package == pkg.Name {
		v := "v" + pkg.Version
		switch {
		case b.MinVersion != "" && semver.IsValid(v) && semver.Compare(v, "v"+b.MinVersion) < 0:
			ok = false
			notes = append(notes, fmt.Sprintf("older than %s, the oldest summit supports; install %s", b.MinVersion, b.Install))
		case b.Tested != "" && pkg.Version != b.Tested:
			notes = append(notes, fmt.Sprintf("summit supports %s or newer and is tested with %s", b.MinVersion, b.Tested))
		default:
			notes = append(notes, "the version summit is tested with")
		}
	}
	if msg, nodeOK := checkNode(pkg.Node, node()); msg != "" {
		notes = append(notes, msg)
		ok = ok && nodeOK
	}
	mark := "✓"
	if !ok {
		mark = "✗"
	}
	line := fmt.Sprintf("%s %s: %s is %s %s", mark, san(label), san(command), san(pkg.Name), san(pkg.Version))
	if len(notes) > 0 {
		line += "; " + san(strings.Join(notes, "; "))
	}
	fmt.Fprintln(w, line)
	return ok
}

// doctorMCP checks each configured MCP server: a stdio server's command must be on PATH (and,
// an npm package's, run on the node there); a remote one is listed with its URL. It returns
// the problems.
func doctorMCP(w io.Writer, servers map[string]provider.MCPServer, node func() string) int {
	problems := 0
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		s := servers[name]
		label := "mcp_servers." + name
		if s.Command == "" {
			fmt.Fprintf(w, "✓ %s: %s server at %s\n", session.Sanitize(label), session.Sanitize(orDefault(s.Type, "http")), session.Sanitize(s.URL))
			continue
		}
		if !doctorProgram(w, label, s.Command, nil, node) {
			problems++
		}
	}
	return problems
}
