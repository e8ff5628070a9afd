package agents

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SourceFiles lists the agent files Load would read for o (every layer but the built-ins), in
// search-path order. The session inventory hashes them, so the next session can name the
// ones that appeared or changed (see session/inventory).
func SourceFiles(o Options) []string {
	var out []string
	for _, l := range SearchPath(o) {
		if l.Name == "builtin" {
			continue
		}
		if st, err := os.Stat(l.Dir); err != nil || !st.IsDir() {
			continue
		}
		filepath.WalkDir(l.Dir, func(p string, e fs.DirEntry, err error) error {
			switch {
			case err != nil:
			case e.IsDir():
				if p != l.Dir && strings.HasPrefix(e.Name(), ".") && !isAgentDotDir(e.Name()) {
					return filepath.SkipDir
				}
			case isAgentFile(p):
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}
