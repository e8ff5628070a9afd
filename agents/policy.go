package agents

import (
	"fmt"
	"slices"
)

// Verdict is the outcome of one permission decision.
type Verdict string

const (
	Allow Verdict = "allow"
	Ask   Verdict = "ask"
	Deny  Verdict = "deny"
)

// Decision is a verdict with the reason, so a denial can become a
// policy_notes entry and a policy_denied transcript event verbatim.
type Decision struct {
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason"`
}

// Decide applies the DESIGN §5 table to one call of a canonical tool:
//
//	mode               read/network  write_file, replace   run_shell_command  mcp    task
//	plan               allow         deny                  ask                ask    deny
//	acceptEdits        allow         allow (workspace)     ask                ask    deny
//	bypassPermissions  allow         allow (workspace)     allow              allow  deny
//
// MCP tools have unknown effects, so they are treated like the shell.
// Unknown tools and unknown modes are denied. Whether the tool is in the
// agent's effective set is checked by Policy.Decide.
func Decide(mode PermissionMode, tool string) Decision {
	if !mode.Valid() {
		return Decision{Deny, fmt.Sprintf("unknown permission mode %q", mode)}
	}
	switch c := ClassOf(tool); c {
	case ClassTask:
		return Decision{Deny, "task is never available to a subagent (no recursive delegation)"}
	case ClassRead, ClassNetwork:
		return Decision{Allow, fmt.Sprintf("%s tool allowed in every mode", c)}
	case ClassWrite:
		if mode == ModePlan {
			return Decision{Deny, tool + " changes files; plan mode is read-only"}
		}
		return Decision{Allow, tool + " allowed inside the workspace in " + string(mode)}
	case ClassShell, ClassMCP:
		if mode == ModeBypass {
			return Decision{Allow, tool + " allowed in bypassPermissions"}
		}
		return Decision{Ask, tool + " asks each time in " + string(mode)}
	default:
		return Decision{Deny, fmt.Sprintf("unknown tool %q", tool)}
	}
}

// Policy is a subagent's effective grant: its tools and its mode.
type Policy struct {
	Mode  PermissionMode `json:"mode"`
	Tools []string       `json:"tools"`
	Notes []string       `json:"notes,omitempty"` // what was dropped or capped, and why
}

// Decide refuses a tool outside the effective set (deny by default), then
// applies the mode table.
func (p Policy) Decide(tool string) Decision {
	canon, _ := CanonicalTool(tool)
	if canon == ToolTask {
		return Decide(p.Mode, canon)
	}
	if !slices.Contains(p.Tools, canon) {
		return Decision{Deny, fmt.Sprintf("%s is not among this agent's tools", canon)}
	}
	return Decide(p.Mode, canon)
}

// Request is what the parent asks for when delegating.
type Request struct {
	SessionTools   []string       // the parent's allowed tools (canonical)
	Ceiling        PermissionMode // the session's --permission-mode (default acceptEdits)
	Tools          []string       // --tools, if given
	Mode           PermissionMode // --permission-mode of /delegate, if given
	BypassApproved bool           // the user explicitly approved bypassPermissions
}

// Resolve computes a subagent's effective policy:
//
//	tools = session ∩ definition tools (absent: the session's) ∩ --tools − disallowedTools − task
//	mode  = requested, else the definition's, else the ceiling; capped at the ceiling;
//	        bypassPermissions without approval falls back to acceptEdits.
//
// --tools naming a tool the parent lacks is an error, not a silent drop.
func Resolve(d *Definition, r Request) (Policy, error) {
	ceiling := r.Ceiling
	if ceiling == "" {
		ceiling = ModeAcceptEdits
	}
	if !ceiling.Valid() {
		return Policy{}, fmt.Errorf("unknown session permission mode %q", ceiling)
	}
	session := normaliseTools(r.SessionTools)
	var p Policy
	var flagTools []string
	for _, t := range r.Tools {
		c, _ := CanonicalTool(t)
		if !slices.Contains(session, c) {
			return Policy{}, fmt.Errorf("--tools names %q, which the parent session does not have", t)
		}
		flagTools = append(flagTools, c)
	}
	base := d.Tools
	if base == nil {
		base = session
	}
	for _, t := range base {
		switch {
		case ClassOf(t) == ClassTask:
			p.Notes = append(p.Notes, "task removed: subagents never delegate")
		case !slices.Contains(session, t):
			p.Notes = append(p.Notes, t+" removed: the parent session does not have it")
		case r.Tools != nil && !slices.Contains(flagTools, t):
		case slices.Contains(d.DisallowedTools, t):
			p.Notes = append(p.Notes, t+" removed: disallowedTools")
		default:
			p.Tools = append(p.Tools, t)
		}
	}
	for _, t := range flagTools {
		if !slices.Contains(base, t) {
			p.Notes = append(p.Notes, t+" requested by --tools but not among the agent's tools")
		}
	}
	if p.Tools == nil {
		p.Tools = []string{}
	}

	mode := r.Mode
	if mode == "" {
		mode = d.PermissionMode
	}
	if mode == "" {
		mode = ceiling
	}
	if !mode.Valid() {
		return Policy{}, fmt.Errorf("unknown permission mode %q", mode)
	}
	if mode.Rank() > ceiling.Rank() {
		p.Notes = append(p.Notes, fmt.Sprintf("permission mode %s capped at the session ceiling %s", mode, ceiling))
		mode = ceiling
	}
	if mode == ModeBypass && !r.BypassApproved {
		p.Notes = append(p.Notes, "bypassPermissions needs explicit approval; running in acceptEdits")
		mode = ModeAcceptEdits
	}
	p.Mode = mode
	return p, nil
}
