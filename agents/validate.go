package agents

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

var (
	kebabRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })
	snakeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)+$`) })
)

// roleTiers maps a declared role to the tool classes it may hold. Maestro
// declares `capabilities: read_only | read_shell | read_write | full`; the
// registry and ABI manifests declare roles such as critic or researcher.
// A role not listed here is not checked.
var roleTiers = map[string][]ToolClass{
	"read_only":  {ClassRead, ClassNetwork},
	"readonly":   {ClassRead, ClassNetwork},
	"read-only":  {ClassRead, ClassNetwork},
	"critic":     {ClassRead, ClassNetwork},
	"reviewer":   {ClassRead, ClassNetwork},
	"researcher": {ClassRead, ClassNetwork},
	"router":     {ClassRead, ClassNetwork},
	"read_shell": {ClassRead, ClassNetwork, ClassShell},
	"read_write": {ClassRead, ClassNetwork, ClassWrite},
	"writer":     {ClassRead, ClassNetwork, ClassWrite},
}

// Validate checks one definition against the rules of seed 001's
// validate-agent-permissions. See the package documentation for which
// findings are errors and which are warnings.
func Validate(d *Definition) []Problem {
	ps := &problems{file: d.Source.Path}
	line := d.Source.Line

	// Name: required, kebab-case, and matching the file it lives in (the
	// dispatcher looks agents up by file name).
	switch {
	case d.Name == "":
		ps.errorf(line("name"), "name is required")
	case snakeRe().MatchString(d.Name):
		ps.warnf(line("name"), "name %q is snake_case; use kebab-case (%s)", d.Name, strings.ReplaceAll(d.Name, "_", "-"))
	case !kebabRe().MatchString(d.Name):
		ps.errorf(line("name"), "name %q is not kebab-case (lower-case words joined by hyphens)", d.Name)
	}
	if d.Source.Path != "" && d.Source.Layer != "builtin" {
		if fn := nameFromPath(d.Source.Path); d.Name != "" && fn != d.Name {
			ps.warnf(line("name"), "name %q does not match the file name %q", d.Name, fn)
		}
	}
	if strings.TrimSpace(d.Description) == "" {
		ps.errorf(line("description"), "description is required: it is what delegation routes on")
	}

	// Tools: known names; task never granted; tier within the declared role.
	names := d.RawTools // as written, for messages; each is canonicalised below
	if names == nil {
		names = d.Tools
	}
	var unknown, unknownDenied []string
	for _, raw := range names {
		t, _ := CanonicalTool(raw)
		switch ClassOf(t) {
		case ClassTask:
			ps.errorf(line("tools"), "tool %q (task) is never granted to a subagent: no recursive delegation", raw)
		case ClassUnknown:
			unknown = append(unknown, strconv.Quote(raw))
		}
	}
	if len(unknown) > 0 {
		ps.warnf(line("tools"), "unknown tools %s: Summit has no such tools; they will never be granted", strings.Join(unknown, ", "))
	}
	for _, t := range d.DisallowedTools {
		if ClassOf(t) == ClassUnknown {
			unknownDenied = append(unknownDenied, strconv.Quote(t))
		}
	}
	if len(unknownDenied) > 0 {
		ps.warnf(line("disallowedTools"), "unknown tools in disallowedTools: %s", strings.Join(unknownDenied, ", "))
	}
	if allowed, ok := roleTiers[strings.ToLower(d.Role)]; ok {
		for _, t := range d.Tools {
			c := ClassOf(t)
			if (c == ClassWrite || c == ClassShell) && !containsClass(allowed, c) {
				ps.errorf(line("tools"), "role %q may not hold %s tool %q", d.Role, c, t)
			}
		}
	}
	if d.PermissionMode != "" && !d.PermissionMode.Valid() {
		ps.errorf(line("permissionMode"), "unknown permission mode %q", d.PermissionMode)
	}
	if d.PermissionMode == ModePlan {
		for _, t := range d.Tools {
			if ClassOf(t) == ClassWrite {
				ps.warnf(line("permissionMode"), "permissionMode plan denies %s, which the tools list grants", t)
				break
			}
		}
	}
	return ps.list
}

func containsClass(cs []ToolClass, c ToolClass) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
