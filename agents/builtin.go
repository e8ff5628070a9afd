package agents

import (
	"embed"
	"io/fs"
	"path"
	"sort"
)

// builtinFS holds the built-in agents as ordinary definition files, so they
// go through the same parser as everyone else's and can be copied out and
// edited by users.
//
//go:embed builtin/*.md
var builtinFS embed.FS

// Builtins parses the embedded agents. They are checked by tests; a broken
// one would be a build defect, so it panics rather than hiding.
func Builtins() []*Definition {
	entries, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		panic(err)
	}
	var out []*Definition
	for _, e := range entries {
		p := path.Join("builtin", e.Name())
		data, err := builtinFS.ReadFile(p)
		if err != nil {
			panic(err)
		}
		d, ps := Parse("builtin:"+e.Name(), data)
		if d == nil || len(ps) > 0 {
			panic("built-in agent " + e.Name() + " does not parse cleanly: " + fmtProblems(ps))
		}
		d.Source.Layer = "builtin"
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func fmtProblems(ps []Problem) string {
	s := ""
	for _, p := range ps {
		s += p.String() + "; "
	}
	return s
}
