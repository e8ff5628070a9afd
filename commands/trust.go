package commands

// Trust is /trust: trust the workspace's own config, agent files and hook scripts (see
// session/trust). The workbench's trust inbox item sends it; headless runs refuse it
// (--trust-workspace or summit trust are their ways).
type Trust struct{}

func (Trust) Name() string         { return "trust" }
func (Trust) Args() map[string]any { return map[string]any{} }
func (Trust) String() string       { return "/trust" }
