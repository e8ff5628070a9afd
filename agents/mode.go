package agents

import (
	"fmt"
	"strings"
)

// PermissionMode is how much a subagent may do without asking, ordered
// plan < acceptEdits < bypassPermissions.
type PermissionMode string

const (
	ModePlan        PermissionMode = "plan"              // read; no file changes; shell asks
	ModeAcceptEdits PermissionMode = "acceptEdits"       // plus edits inside the workspace
	ModeBypass      PermissionMode = "bypassPermissions" // plus shell without asking
)

// Modes lists the modes in order.
var Modes = []PermissionMode{ModePlan, ModeAcceptEdits, ModeBypass}

// Rank orders modes; an unknown or empty mode ranks below plan, so it can
// never win a comparison that grants more.
func (m PermissionMode) Rank() int {
	switch m {
	case ModePlan:
		return 1
	case ModeAcceptEdits:
		return 2
	case ModeBypass:
		return 3
	}
	return 0
}

// Valid reports whether m is one of the three modes.
func (m PermissionMode) Valid() bool { return m.Rank() > 0 }

// ParseMode accepts the canonical spellings and the kebab/snake variants
// people write (accept-edits, bypass_permissions). Empty is "not set".
func ParseMode(s string) (PermissionMode, error) {
	k := strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.TrimSpace(s)))
	switch k {
	case "":
		return "", nil
	case "plan", "readonly":
		return ModePlan, nil
	case "acceptedits":
		return ModeAcceptEdits, nil
	case "bypasspermissions", "bypass":
		return ModeBypass, nil
	}
	return "", fmt.Errorf("unknown permission mode %q (want plan, acceptEdits or bypassPermissions)", s)
}
