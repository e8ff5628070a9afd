package commands

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The usage lines are the grammar of DESIGN §4 (joined onto one line), plus /deny --reason.
func TestUsageLines(t *testing.T) {
	want := map[string]string{
		"delegate": "/delegate <task> --agent-type <type|agent-name> [--inherit-context[=true|false]] [--permission-mode plan|acceptEdits|bypassPermissions] [--timeout <seconds>] [--tools a,b] [--inputs <json>] [--on <runner|label=value|any>] [--retry]",
		"handoff":  "/handoff <subagent_id> [--transfer-control] [--timeout <seconds>] [--on-failure retry|abort|escalate]",
		"converge": "/converge <id1> <id2> [<id3> ...] --strategy merge|vote|consensus|first_success [--conflict-resolution manual|auto_accept_latest|prefer_higher_confidence] [--output-format json|markdown|delta_batch]",
		"resolve":  "/resolve <conflict_id> --choose <subagent_id>|both|none|edit [--note <text>] [--content <text>] [--whole-file]",
		"approve":  "/approve <request_id> [--scope once|subagent]",
		"deny":     "/deny <request_id> [--reason <text>]",
		"apply":    "/apply <subagent_id|convergence_id> [--dry-run] [--verify <command>] [--force]",
		"diff":     "/diff <subagent_id|convergence_id> [PATH]",
		"blame":    "/blame <path>",
		"undo":     "/undo",
		"discard":  "/discard <subagent_id>",
		"retry":    "/retry <subagent_id> [--agent-type <type|agent-name>]",
		"cancel":   "/cancel <subagent_id>",
		"status":   "/status [id]",
		"wait":     "/wait <id...>",
		"agents":   "/agents",
		"runners":  "/runners",
		"inbox":    "/inbox",
		"trust":    "/trust",
		"help":     "/help [command]",
		"quit":     "/quit",
	}
	specs := Specs()
	if len(specs) != len(want) {
		t.Errorf("%d specs, want %d", len(specs), len(want))
	}
	for _, s := range specs {
		if s.Usage != want[s.Name] {
			t.Errorf("usage of %s\n got %s\nwant %s", s.Name, s.Usage, want[s.Name])
		}
		if Usage(s.Name) != s.Usage || Usage("/"+s.Name) != s.Usage {
			t.Errorf("Usage(%q) disagrees with the spec", s.Name)
		}
	}
	if Usage("nope") != "" {
		t.Error(`Usage("nope") is not empty`)
	}
}

// Every enum value of every flag parses and lands in Args under the flag's key; every default
// is what Parse applies when the flag is absent. Driven by the tables, so a new flag or value
// is covered without a new test line.
func TestEveryFlagFromTable(t *testing.T) {
	for _, s := range Specs() {
		base := minimalLine(t, s)
		c, err := Parse(base)
		if err != nil {
			t.Fatalf("minimal line %q: %v", base, err)
		}
		for _, f := range s.Flags {
			if f.Default != "" {
				got := c.Args()[f.Key]
				if str := fmtArg(got); str != f.Default {
					t.Errorf("%s: default of --%s is %q in Args, spec says %q", base, f.Name, str, f.Default)
				}
			}
			if f.Required {
				continue
			}
			var vals []string
			switch f.Kind {
			case KindEnum, KindID:
				vals = valueNames(f.Values)
			case KindBool:
				vals = []string{"true", "false"}
			case KindInt:
				vals = []string{strconv.Itoa(f.Min), strconv.Itoa(f.Max)}
			case KindText:
				vals = []string{"some text"}
			case KindList:
				vals = []string{"read_file,glob"}
			}
			for _, v := range vals {
				for _, line := range []string{base + " --" + f.Name + " " + Quote(v), base + " --" + f.Name + "=" + Quote(v)} {
					if f.Kind == KindBool && !strings.Contains(line, "=") {
						continue
					}
					c, err := Parse(line)
					if err != nil {
						t.Errorf("%s: %v", line, err)
						continue
					}
					if _, set := c.Args()[f.Key]; !set && f.Kind == KindBool && f.Default == "" && v == "false" {
						continue // a bool flag without a default (--retry) is absent from Args when false
					}
					if got := fmtArg(c.Args()[f.Key]); got != v {
						t.Errorf("%s: Args[%q] = %q, want %q", line, f.Key, got, v)
					}
				}
			}
		}
	}
}

// minimalLine builds the shortest valid line of a spec from its own tables.
func minimalLine(t *testing.T, s Spec) string {
	t.Helper()
	parts := []string{"/" + s.Name}
	for _, a := range s.Args {
		if !a.Required {
			continue
		}
		switch a.Kind {
		case KindText:
			parts = append(parts, "do", "it")
		case KindID:
			for i := 1; i <= max(a.Min, 1); i++ {
				parts = append(parts, string(a.IDKinds[0])+"-"+strconv.Itoa(i))
			}
		}
	}
	for _, f := range s.Flags {
		if !f.Required {
			continue
		}
		switch f.Kind {
		case KindEnum, KindName:
			parts = append(parts, "--"+f.Name, f.Values[0].Name)
		case KindID:
			parts = append(parts, "--"+f.Name, string(f.IDKinds[0])+"-1")
		default:
			t.Fatalf("no minimal value for required --%s", f.Name)
		}
	}
	return strings.Join(parts, " ")
}

func fmtArg(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case []string:
		return strings.Join(v, ",")
	}
	return "<missing>"
}

func TestTableInvariants(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Specs() {
		if seen[s.Name] || s.Summary == "" || s.build == nil {
			t.Errorf("%s: duplicate, no summary or no build", s.Name)
		}
		seen[s.Name] = true
		keys := map[string]bool{}
		for i, a := range s.Args {
			if a.Variadic && i != len(s.Args)-1 {
				t.Errorf("%s: variadic %s is not last", s.Name, a.Name)
			}
			if a.Kind == KindID && len(a.IDKinds) == 0 {
				t.Errorf("%s: id argument %s without kinds", s.Name, a.Name)
			}
			if keys[a.Key] || a.Key == "" {
				t.Errorf("%s: key %q repeated or empty", s.Name, a.Key)
			}
			keys[a.Key] = true
		}
		for _, f := range s.Flags {
			if keys[f.Key] || f.Key != strings.ReplaceAll(f.Name, "-", "_") {
				t.Errorf("%s: --%s has key %q; keys are the snake_case flag names", s.Name, f.Name, f.Key)
			}
			keys[f.Key] = true
			if f.Required && f.Default != "" {
				t.Errorf("%s: --%s is required and has a default", s.Name, f.Name)
			}
			if f.Help == "" {
				t.Errorf("%s: --%s has no help", s.Name, f.Name)
			}
		}
	}
}

func TestLookupAndSpecsAreCopies(t *testing.T) {
	s, ok := Lookup("/converge")
	if !ok || s.Name != "converge" {
		t.Fatalf("Lookup(/converge) = %v, %v", s.Name, ok)
	}
	s.Flags[0].Values[0].Name = "changed"
	s.Flags[0].Name = "changed"
	Specs()[0].Args[0].Name = "changed"
	if _, err := Parse("/converge sa-1 sa-2 --strategy merge"); err != nil {
		t.Errorf("changing a returned spec changed the grammar: %v", err)
	}
	again, _ := Lookup("converge")
	if !reflect.DeepEqual(again.Flags[0].Values[0], Value{StrategyMerge, again.Flags[0].Values[0].Help}) {
		t.Error("Lookup returned shared slices")
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) found something")
	}
}

func TestHelpText(t *testing.T) {
	for _, s := range Specs() {
		h, ok := HelpText(s.Name)
		if !ok || !strings.HasPrefix(h, s.Usage+"\n") {
			t.Errorf("HelpText(%s) does not start with the usage line", s.Name)
		}
		for _, f := range s.Flags {
			if !strings.Contains(h, "--"+f.Name) || !strings.Contains(h, f.Help) {
				t.Errorf("HelpText(%s) lacks --%s or its help", s.Name, f.Name)
			}
			for _, v := range f.Values {
				if !strings.Contains(h, v.Name) {
					t.Errorf("HelpText(%s) lacks value %s", s.Name, v.Name)
				}
			}
		}
	}
	h, _ := HelpText("/delegate")
	for _, want := range []string{
		"(1 to 86400; default 300)",
		"(default true)",
		"(default: the agent type's default, capped by the session ceiling)",
		"(required)",
		"bypassPermissions",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("HelpText(delegate) lacks %q:\n%s", want, h)
		}
	}
	if _, ok := HelpText("nope"); ok {
		t.Error("HelpText(nope) found something")
	}
	o := Overview()
	for _, s := range Specs() {
		if !strings.Contains(o, "/"+s.Name) || !strings.Contains(o, s.Summary) {
			t.Errorf("Overview lacks /%s", s.Name)
		}
	}
}

func TestIsCommand(t *testing.T) {
	for line, want := range map[string]bool{
		"/quit":         true,
		"  \t/delegate": true,
		"/":             true,
		"hello /quit":   false,
		"":              false,
		"   ":           false,
		`"/quit"`:       false,
		"\n/status":     true,
	} {
		if got := IsCommand(line); got != want {
			t.Errorf("IsCommand(%q) = %v", line, got)
		}
	}
}

func TestParseID(t *testing.T) {
	for s, want := range map[string]bool{
		"sa-1": true, "cv-22": true, "cf-3": true, "pr-4": true, "sa-999999999999999999": true,
		"sa-0": false, "sa-01": false, "sa1": false, "SA-1": false, "xx-1": false, "sa-": false,
		"sa-1a": false, "sa--1": false, "sa-+1": false, "sa-1234567890123456789": false, "": false,
	} {
		if _, _, ok := ParseID(s); ok != want {
			t.Errorf("ParseID(%q) ok = %v", s, ok)
		}
	}
	if k, n, _ := ParseID("cv-42"); k != IDConvergence || n != 42 {
		t.Errorf("ParseID(cv-42) = %v %v", k, n)
	}
}
