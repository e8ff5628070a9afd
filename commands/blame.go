package commands

// Blame is /blame: the provenance of each line of a workspace file (session/blame).
type Blame struct{ Path string }

func (Blame) Name() string           { return "blame" }
func (c Blame) Args() map[string]any { return map[string]any{"path": c.Path} }
func (c Blame) String() string       { return newLine("blame").word(c.Path).String() }
