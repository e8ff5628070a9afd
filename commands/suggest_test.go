package commands

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"merge", "merge", 0},
		{"mrege", "merge", 1}, // transposition counts once
		{"stratgy", "strategy", 1},
		{"delegte", "delegate", 1},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau
		{"héllo", "hello", 1},
	} {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	strategies := []string{"merge", "vote", "consensus", "first_success"}
	modes := []string{"plan", "acceptEdits", "bypassPermissions"}
	cmds := commandNames()
	for _, tt := range []struct {
		in    string
		cands []string
		want  string
	}{
		{"mrege", strategies, "merge"},
		{"merg", strategies, "merge"},
		{"vot", strategies, "vote"},
		{"consensys", strategies, "consensus"},
		{"first-success", strategies, "first_success"},
		{"firstsuccess", strategies, "first_success"},
		{"banana", strategies, ""},
		{"", strategies, ""},
		{"x", strategies, ""},
		{"acceptedits", modes, "acceptEdits"},
		{"bypass", modes, "bypassPermissions"},
		{"plna", modes, "plan"},
		{"delegte", cmds, "delegate"},
		{"del", cmds, "delegate"},
		{"a", cmds, ""},  // agents, apply, approve: no unique prefix, too far for a typo
		{"ap", cmds, ""}, // apply and approve
		{"appyl", cmds, "apply"},
		{"stauts", cmds, "status"},
		{"wiat", cmds, "wait"},
		{"exit", cmds, ""}, // two edits from quit: too far for four letters
	} {
		if got := nearest(tt.in, tt.cands); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
