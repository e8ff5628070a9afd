package commands

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseValid(t *testing.T) {
	delegate := func(task, agent string) Delegate {
		return Delegate{Task: task, AgentType: agent, InheritContext: true, Timeout: 300}
	}
	handoff := func(id string) Handoff {
		return Handoff{SubagentID: id, Timeout: 600, OnFailure: OnFailureEscalate}
	}
	converge := func(strategy string, ids ...string) Converge {
		return Converge{SubagentIDs: ids, Strategy: strategy, ConflictResolution: ResolutionManual, OutputFormat: FormatDeltaBatch}
	}
	with := func(d Delegate, f func(*Delegate)) Delegate { f(&d); return d }
	withH := func(h Handoff, f func(*Handoff)) Handoff { f(&h); return h }
	withC := func(c Converge, f func(*Converge)) Converge { f(&c); return c }

	tests := []struct {
		line string
		want Command
	}{
		// /delegate: task forms
		{`/delegate fix the bug --agent-type builder`, delegate("fix the bug", "builder")},
		{`/delegate "fix  the bug" --agent-type builder`, delegate("fix  the bug", "builder")},
		{`/delegate 'say "hi"' --agent-type builder`, delegate(`say "hi"`, "builder")},
		{`/delegate --agent-type builder fix the bug`, delegate("fix the bug", "builder")},
		{`/delegate fix bug --agent-type builder in main.go`, delegate("fix bug in main.go", "builder")},
		{`/delegate   fix    bug   --agent-type   builder  `, delegate("fix bug", "builder")},
		{"\t/delegate fix\tbug --agent-type builder", delegate("fix bug", "builder")},
		{`/delegate fix "the bug" now --agent-type builder`, delegate("fix the bug now", "builder")},
		{`/delegate "--help me" --agent-type builder`, delegate("--help me", "builder")},
		{`/delegate --agent-type builder -- --verbose --timeout 5`, delegate("--verbose --timeout 5", "builder")},
		{`/delegate a -b --agent-type builder`, delegate("a -b", "builder")},
		{`/delegate "tab\there\nnl \"q\" \\ \x" --agent-type builder`, delegate("tab\there\nnl \"q\" \\ \\x", "builder")},
		{`/delegate it\'s\ fine --agent-type builder`, delegate("it's fine", "builder")},
		{`/delegate 'C:\dir' --agent-type builder`, delegate(`C:\dir`, "builder")},
		{`/delegate fix --agent-type=maestro-tester`, delegate("fix", "maestro-tester")},
		{`/delegate fix --agent-type code_reviewer2`, delegate("fix", "code_reviewer2")},
		{`/delegate fix --agent-type tester`, delegate("fix", "tester")},
		{`/delegate fix --agent-type analyzer`, delegate("fix", "analyzer")},
		{`/delegate fix --agent-type retriever`, delegate("fix", "retriever")},
		// /delegate: every flag
		{`/delegate x --agent-type builder --inherit-context`, delegate("x", "builder")},
		{`/delegate x --agent-type builder --inherit-context=true`, delegate("x", "builder")},
		{`/delegate x --agent-type builder --inherit-context=false`,
			with(delegate("x", "builder"), func(d *Delegate) { d.InheritContext = false })},
		{`/delegate x --agent-type builder --permission-mode plan`,
			with(delegate("x", "builder"), func(d *Delegate) { d.PermissionMode = PermissionPlan })},
		{`/delegate x --agent-type builder --permission-mode=acceptEdits`,
			with(delegate("x", "builder"), func(d *Delegate) { d.PermissionMode = PermissionAcceptEdits })},
		{`/delegate x --agent-type builder --permission-mode bypassPermissions`,
			with(delegate("x", "builder"), func(d *Delegate) { d.PermissionMode = PermissionBypass })},
		{`/delegate x --agent-type builder --timeout 1`,
			with(delegate("x", "builder"), func(d *Delegate) { d.Timeout = 1 })},
		{`/delegate x --agent-type builder --timeout=86400`,
			with(delegate("x", "builder"), func(d *Delegate) { d.Timeout = 86400 })},
		{`/delegate x --agent-type builder --timeout 0060`,
			with(delegate("x", "builder"), func(d *Delegate) { d.Timeout = 60 })},
		{`/delegate x --agent-type builder --tools read_file,glob`,
			with(delegate("x", "builder"), func(d *Delegate) { d.Tools = []string{"read_file", "glob"} })},
		{`/delegate x --agent-type builder --tools "glob, read_file ,glob,Grep"`,
			with(delegate("x", "builder"), func(d *Delegate) { d.Tools = []string{"glob", "read_file", "Grep"} })},
		{`/delegate x --agent-type builder --tools=mcp__fs__read`,
			with(delegate("x", "builder"), func(d *Delegate) { d.Tools = []string{"mcp__fs__read"} })},

		// /handoff
		{`/handoff sa-1`, handoff("sa-1")},
		{`/handoff sa-12 --transfer-control`, withH(handoff("sa-12"), func(h *Handoff) { h.TransferControl = true })},
		{`/handoff sa-2 --transfer-control=true`, withH(handoff("sa-2"), func(h *Handoff) { h.TransferControl = true })},
		{`/handoff sa-2 --transfer-control=false`, handoff("sa-2")},
		{`/handoff --timeout 30 sa-2`, withH(handoff("sa-2"), func(h *Handoff) { h.Timeout = 30 })},
		{`/handoff sa-2 --on-failure retry`, withH(handoff("sa-2"), func(h *Handoff) { h.OnFailure = OnFailureRetry })},
		{`/handoff sa-2 --on-failure=abort`, withH(handoff("sa-2"), func(h *Handoff) { h.OnFailure = OnFailureAbort })},
		{`/handoff sa-2 --on-failure escalate`, handoff("sa-2")},

		// /converge
		{`/converge sa-1 sa-2 --strategy merge`, converge(StrategyMerge, "sa-1", "sa-2")},
		{`/converge sa-1 sa-2 sa-3 --strategy vote`, converge(StrategyVote, "sa-1", "sa-2", "sa-3")},
		{`/converge --strategy=consensus sa-3 sa-1`, converge(StrategyConsensus, "sa-3", "sa-1")},
		{`/converge sa-1 --strategy first_success sa-2`, converge(StrategyFirstSuccess, "sa-1", "sa-2")},
		{`/converge sa-1 sa-2 --strategy merge --conflict-resolution auto_accept_latest`,
			withC(converge(StrategyMerge, "sa-1", "sa-2"), func(c *Converge) { c.ConflictResolution = ResolutionAutoAcceptLatest })},
		{`/converge sa-1 sa-2 --strategy merge --conflict-resolution=prefer_higher_confidence`,
			withC(converge(StrategyMerge, "sa-1", "sa-2"), func(c *Converge) { c.ConflictResolution = ResolutionPreferHigherConfidence })},
		{`/converge sa-1 sa-2 --strategy merge --conflict-resolution manual`, converge(StrategyMerge, "sa-1", "sa-2")},
		{`/converge sa-1 sa-2 --strategy merge --output-format json`,
			withC(converge(StrategyMerge, "sa-1", "sa-2"), func(c *Converge) { c.OutputFormat = FormatJSON })},
		{`/converge sa-1 sa-2 --strategy merge --output-format markdown`,
			withC(converge(StrategyMerge, "sa-1", "sa-2"), func(c *Converge) { c.OutputFormat = FormatMarkdown })},
		{`/converge sa-1 sa-2 --strategy merge --output-format delta_batch`, converge(StrategyMerge, "sa-1", "sa-2")},

		// /resolve
		{`/resolve cf-1 --choose sa-2`, Resolve{ConflictID: "cf-1", Choose: "sa-2"}},
		{`/resolve cf-1 --choose both`, Resolve{ConflictID: "cf-1", Choose: ChooseBoth}},
		{`/resolve cf-1 --choose=none --note="keep neither"`, Resolve{ConflictID: "cf-1", Choose: ChooseNone, Note: "keep neither"}},
		{`/resolve cf-9 --note 'sa-2 is "right"' --choose sa-2`, Resolve{ConflictID: "cf-9", Choose: "sa-2", Note: `sa-2 is "right"`}},
		{`/resolve cf-1 --choose sa-2 --note "--x"`, Resolve{ConflictID: "cf-1", Choose: "sa-2", Note: "--x"}},
		{`/resolve cf-1 --choose sa-2 --note ""`, Resolve{ConflictID: "cf-1", Choose: "sa-2"}},
		{`/resolve cf-1 --choose sa-3 --whole-file`, Resolve{ConflictID: "cf-1", Choose: "sa-3", WholeFile: true}},

		// /approve, /deny
		{`/approve pr-1`, Approve{RequestID: "pr-1", Scope: ScopeOnce}},
		{`/approve pr-1 --scope once`, Approve{RequestID: "pr-1", Scope: ScopeOnce}},
		{`/approve pr-7 --scope=subagent`, Approve{RequestID: "pr-7", Scope: ScopeSubagent}},
		{`/deny pr-2`, Deny{RequestID: "pr-2"}},
		{`/deny pr-2 --reason "not in the workspace"`, Deny{RequestID: "pr-2", Reason: "not in the workspace"}},

		// the rest
		{`/apply cv-1`, Apply{ConvergenceID: "cv-1"}},
		{`/cancel sa-3`, Cancel{SubagentID: "sa-3"}},
		{`/status`, Status{}},
		{`/status sa-3`, Status{ID: "sa-3"}},
		{`/status cv-2`, Status{ID: "cv-2"}},
		{`/wait sa-1`, Wait{IDs: []string{"sa-1"}}},
		{`/wait sa-1 cv-1 sa-10`, Wait{IDs: []string{"sa-1", "cv-1", "sa-10"}}},
		{`/agents`, Agents{}},
		{`/help`, Help{}},
		{`/help converge`, Help{Topic: "converge"}},
		{`/help /delegate`, Help{Topic: "delegate"}},
		{`/quit`, Quit{}},
		{`   /quit   `, Quit{}},
		{`/status -- sa-3`, Status{ID: "sa-3"}},
		{`/cancel sa-999999999999999999`, Cancel{SubagentID: "sa-999999999999999999"}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.line)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.line, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q)\n got %#v\nwant %#v", tt.line, got, tt.want)
			continue
		}
		// The canonical form parses back to the same value and is a fixpoint.
		s := got.String()
		again, err := Parse(s)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(%q).String() = %q, which parses to %#v, %v", tt.line, s, again, err)
		} else if again.String() != s {
			t.Errorf("String not a fixpoint: %q then %q", s, again.String())
		}
		checkArgs(t, got)
	}
}

// checkArgs holds Args to the spec: its keys are spec keys, every required argument is there,
// and the map survives JSON.
func checkArgs(t *testing.T, c Command) {
	t.Helper()
	spec, ok := Lookup(c.Name())
	if !ok {
		t.Fatalf("%T.Name() = %q, not in the table", c, c.Name())
	}
	keys := map[string]bool{}
	for _, a := range spec.Args {
		keys[a.Key] = true
	}
	for _, f := range spec.Flags {
		keys[f.Key] = true
	}
	args := c.Args()
	for k := range args {
		if !keys[k] {
			t.Errorf("%s: Args has key %q that no spec names", c.Name(), k)
		}
	}
	for _, a := range spec.Args {
		if _, ok := args[a.Key]; a.Required && !ok {
			t.Errorf("%s: Args lacks required %q", c.Name(), a.Key)
		}
	}
	for _, f := range spec.Flags {
		if _, ok := args[f.Key]; (f.Required || f.Default != "") && !ok {
			t.Errorf("%s: Args lacks %q, which always has a value", c.Name(), f.Key)
		}
	}
	if _, err := json.Marshal(args); err != nil {
		t.Errorf("%s: Args does not marshal: %v", c.Name(), err)
	}
}

func TestArgs(t *testing.T) {
	c, err := Parse(`/delegate "find todos" --agent-type analyzer --tools glob,read_file`)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(c.Args())
	want := `{"agent_type":"analyzer","inherit_context":true,"task":"find todos","timeout":300,"tools":["glob","read_file"]}`
	if string(got) != want {
		t.Errorf("Args JSON\n got %s\nwant %s", got, want)
	}
	// Args is a copy: changing it does not change the command.
	c.Args()["tools"].([]string)[0] = "changed"
	if c.(Delegate).Tools[0] != "glob" {
		t.Error("Args shares the Tools slice with the command")
	}
	for line, want := range map[string]string{
		`/converge sa-1 sa-2 --strategy vote`: `{"conflict_resolution":"manual","output_format":"delta_batch","strategy":"vote","subagent_ids":["sa-1","sa-2"]}`,
		`/handoff sa-1 --transfer-control`:    `{"on_failure":"escalate","subagent_id":"sa-1","timeout":600,"transfer_control":true}`,
		`/resolve cf-1 --choose both`:         `{"choose":"both","conflict_id":"cf-1","whole_file":false}`,
		`/approve pr-1`:                       `{"request_id":"pr-1","scope":"once"}`,
		`/deny pr-1 --reason no`:              `{"reason":"no","request_id":"pr-1"}`,
		`/status`:                             `{}`,
		`/quit`:                               `{}`,
		`/wait cv-1`:                          `{"ids":["cv-1"]}`,
	} {
		c, err := Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(c.Args()); string(got) != want {
			t.Errorf("%s: Args JSON\n got %s\nwant %s", line, got, want)
		}
	}
}

func TestString(t *testing.T) {
	for line, want := range map[string]string{
		`/delegate fix the bug --agent-type builder`:                                    `/delegate fix the bug --agent-type builder`,
		`/delegate --timeout 60 "fix  it" --agent-type=builder --inherit-context=false`: `/delegate "fix  it" --agent-type builder --inherit-context=false --timeout 60`,
		`/delegate --agent-type builder -- --x`:                                         `/delegate "--x" --agent-type builder`,
		`/delegate 'a "b"' --agent-type builder --tools "x, y"`:                         `/delegate 'a "b"' --agent-type builder --tools x,y`,
		`/handoff sa-1 --on-failure=retry --transfer-control --timeout 600`:             `/handoff sa-1 --transfer-control --on-failure retry`,
		`/converge --output-format json sa-2 sa-1 --strategy vote`:                      `/converge sa-2 sa-1 --strategy vote --output-format json`,
		`/resolve cf-1 --note "it's \"fine\"" --choose sa-1`:                            `/resolve cf-1 --choose sa-1 --note "it's \"fine\""`,
		`/help /agents`: `/help agents`,
	} {
		c, err := Parse(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got := c.String(); got != want {
			t.Errorf("Parse(%q).String()\n got %q\nwant %q", line, got, want)
		}
	}
}
