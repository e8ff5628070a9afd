package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// NPMPackage is what an installed npm program says about itself in its package.json: summit
// doctor reads it to show an agent's (or an MCP server's) version without running it, since
// an ACP agent started with no client waits on stdin rather than printing a version.
type NPMPackage struct {
	Name, Version string
	// Node is the package's engines.node, the Node versions it needs ("" when it says none).
	Node string
	// Dir is the package's directory.
	Dir string
}

// InstalledPackage finds the package of the program at path: npm installs a program as a
// symlink (node_modules/.bin/NAME, or PREFIX/bin/NAME) to a file inside its package, so the
// link is followed and the nearest package.json above the target that has a name and a version
// is the package's. ok is false for a program that is not an npm package's.
func InstalledPackage(path string) (pkg NPMPackage, ok bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return NPMPackage{}, false
	}
	dir := filepath.Dir(real)
	// A package's files are at most a few directories below its package.json; past
	// node_modules there is no package of this program.
	for range 6 {
		if filepath.Base(dir) == "node_modules" {
			return NPMPackage{}, false
		}
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var p struct {
				Name    string `json:"name"`
				Version string `json:"version"`
				Engines struct {
					Node string `json:"node"`
				} `json:"engines"`
			}
			if json.Unmarshal(b, &p) == nil && p.Name != "" && p.Version != "" {
				return NPMPackage{Name: p.Name, Version: p.Version, Node: strings.TrimSpace(p.Engines.Node), Dir: dir}, true
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	return NPMPackage{}, false
}
