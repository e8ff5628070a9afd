package live

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/session"
)

// realCodexPatchTape has Codex add a file with its apply_patch tool, which the Responses API
// declares as a custom (freeform) tool: the model's call is a custom_tool_call whose input is
// the patch in Codex's grammar, not JSON arguments. Codex declares apply_patch only for a model
// its catalogue knows (gpt-5.5 has apply_patch_tool_type freeform); for an unknown one (the
// gpt-5.1-codex of the other tests) it falls back to metadata without the tool.
const realCodexPatchTape = `
tapes:
  - name: codex-patch
    match: {agent: gpt-5.5, task: "(?s)add notes\\.md with apply_patch"}
    steps:
      - say: "Adding notes.md."
      - tool: apply_patch
        args: {input: "*** Begin Patch\n*** Add File: notes.md\n+patched by codex\n*** End Patch\n"}
      - capsule: {summary: "added notes.md", confidence: 0.9}
`

// TestACPRealCodexApplyPatch: a tape step calling Codex's custom apply_patch tool is played
// as a custom_tool_call; Codex applies the patch in the subagent's worktree, and the change is
// what the subagent's changes (/diff) show.
func TestACPRealCodexApplyPatch(t *testing.T) {
	bin := realNPMAgent(t, realCodexPkg, realCodexVersion, realCodexBin, realCodexBroken == "")
	c := newRealCase(t)
	c.ceiling = agents.ModeBypass
	srv, codexHome, home, key := startRealCodex(t, c, bin, realCodexPatchTape)
	cfg, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, codexHome, "config.toml", strings.Replace(string(cfg), `model = "gpt-5.1-codex"`, `model = "gpt-5.5"`, 1))

	o := c.live(nil, "/delegate add notes.md with apply_patch --agent-type codex-real --permission-mode bypassPermissions", "/wait sa-1")
	checkSeq(t, o.events)
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "added notes.md" || st.ToolInvocationCount != 1 {
		o.dumpSubagents(t)
		t.Fatalf("stop: %+v capsule %+v\nserved:\n%s", st, st.Capsule, strings.Join(srv.log(), "\n"))
	}
	// The apply_patch call is in the transcript (item 9): the call with its patch, the result.
	calls := o.transcript("sa-1", session.TranscriptToolCall)
	results := o.transcript("sa-1", session.TranscriptToolResult)
	// codex-acp reports it as an edit (summit's replace), its result the patch as a diff.
	if len(calls) != 1 || len(results) != 1 || results[0].CallID != calls[0].CallID || results[0].IsError ||
		calls[0].Tool != "replace" || calls[0].Args["kind"] != "edit" || !strings.Contains(results[0].Result, "+patched by codex") ||
		!strings.Contains(results[0].Result, "notes.md") {
		o.dumpSubagents(t)
		t.Errorf("calls %+v\nresults %+v", calls, results)
	}
	if got := strings.Join(st.ArtifactPaths, ","); got != "notes.md" {
		t.Errorf("artifacts: %s", got)
	}
	// The patch went into the subagent's worktree: its changes hold the file with the patch's
	// text.
	ch := o.changes(t, "sa-1")
	var diff string
	for _, f := range ch.Files {
		if f.Path == "notes.md" {
			diff = f.Diff
		}
	}
	if !strings.Contains(diff, "+patched by codex") {
		t.Errorf("the changes do not show the patched file: %+v", ch.Files)
	}
	served := srv.log()
	for _, want := range []string{"tape codex-patch, turn 1", "tape codex-patch, turn 2"} {
		if !slices.ContainsFunc(served, func(l string) bool { return strings.Contains(l, want) }) {
			t.Errorf("the server did not serve %q:\n%s", want, strings.Join(served, "\n"))
		}
	}
	checkRealEnd(t, c, o, []string{"notes.md added"}, "CODEX_HOME="+codexHome, srv.Close, key, home)
	if _, err := os.Stat(filepath.Join(c.ws, "notes.md")); err == nil {
		t.Error("the patch reached the main workspace")
	}
}

// TestACPRealCodexUnplayableStep: for a model Codex's catalogue does not know, Codex declares
// no apply_patch tool; the tape's apply_patch step cannot be played, so the server fails the
// request naming the tape file and the step, and the subagent does not end as a success (before,
// the step vanished: Codex answered "unsupported call", the tape went on, and the run said
// "added notes.md" with nothing written).
func TestACPRealCodexUnplayableStep(t *testing.T) {
	bin := realNPMAgent(t, realCodexPkg, realCodexVersion, realCodexBin, realCodexBroken == "")
	c := newRealCase(t)
	c.ceiling = agents.ModeBypass
	srv, _, _, _ := startRealCodex(t, c, bin, strings.Replace(realCodexPatchTape, "agent: gpt-5.5", "agent: gpt-5.1-codex", 1))

	o := c.live(nil, "/delegate add notes.md with apply_patch --agent-type codex-real --permission-mode bypassPermissions --timeout 120", "/wait sa-1")
	st := o.stop(t, "sa-1")
	if st.Outcome == session.OutcomeSuccess || st.ToolInvocationCount != 0 {
		o.dumpSubagents(t)
		t.Fatalf("stop: %+v", st)
	}
	served := strings.Join(srv.log(), "\n")
	if !strings.Contains(served, "tape codex-patch (codex.yaml:3), step at codex.yaml:7") || !strings.Contains(served, `calls tool "apply_patch"`) {
		t.Errorf("the server did not refuse the step:\n%s", served)
	}
	// The server's message reaches the transcript, so the user sees which step is wrong.
	var seen bool
	for _, e := range o.events {
		if e.SubagentID != "sa-1" {
			continue
		}
		switch d := e.Data.(type) {
		case session.TranscriptEvent:
			seen = seen || strings.Contains(d.Text, "step at codex.yaml:7")
		case session.SubagentError:
			seen = seen || strings.Contains(d.Error, "step at codex.yaml:7")
		}
	}
	if !seen {
		o.dumpSubagents(t)
		t.Error("the tape's step is not named in the transcript")
	}
}
