package agents

import "maps"

// With is a copy of c in which name is d: a job placed on a runner (session/runners) brings
// the effective definition of its agent, which wins over anything of that name the runner's
// own files define, so a runner needs no copy of the user's agent files.
func (c *Catalogue) With(name string, d *Definition) *Catalogue {
	cp := *c
	cp.defs = maps.Clone(c.defs)
	if cp.defs == nil {
		cp.defs = map[string]*Definition{}
	}
	cp.defs[name] = d
	return &cp
}
