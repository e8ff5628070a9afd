package live

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

// Summit, not Claude Code, decides what the real agent may do (issue 26): the adapter runs in
// its default mode, where it asks for every change and command, and summit's mode answers.
// Claude Code's own plan mode, begun from its auto mode, let it write without asking; its
// acceptEdits mode runs the commands it takes for file edits (touch) without asking.

// realClaudeModeTape: the main model writes planned.txt with its Write tool, then runs touch
// with its Bash tool, then ends with a capsule.
const realClaudeModeTape = `
tapes:
  - name: claude-title
    match: {agent: summit-fast}
    steps:
      - say: '{"title": "Mode check"}'
  - name: claude-main
    match: {agent: summit-main, task: "(?s)# Task\\s+try to change files"}
    steps:
      - tool: Write
        args: {file_path: "WORKTREE/planned.txt", content: "written under plan\n"}
      - tool: Bash
        args: {command: "touch touched.txt", description: "Touch a file"}
      - capsule: {summary: "tried to change files", confidence: 0.5}
`

// checkNoChanges checks that sa-1 changed nothing, in its worktree or the workspace.
func checkNoChanges(t *testing.T, c *acpCase, o outcome) {
	t.Helper()
	if ch := o.changes(t, "sa-1"); len(ch.Files) != 0 {
		t.Errorf("the agent changed files: %+v", ch.Files)
	}
	for _, f := range []string{"planned.txt", "touched.txt"} {
		if _, err := os.Stat(filepath.Join(c.ws, f)); err == nil {
			t.Errorf("%s written in the workspace", f)
		}
	}
}

// Under summit's plan, even with --approve all, Claude Code's write and command are refused
// without asking, and the refusals are recorded.
func TestACPRealClaudeCodePlanRefusesChanges(t *testing.T) {
	bin := realClaude(t)
	c := newRealCase(t)
	c.ceiling = "plan"
	srv, _, _, _ := startRealClaude(t, c, bin, realClaudeModeTape)
	defer srv.Close()
	o := c.live(nil, "/delegate try to change files --agent-type claude-real", "/wait sa-1")
	checkSeq(t, o.events)
	if r := o.find(session.TypePermissionRequested, "sa-1"); len(r) != 0 {
		t.Errorf("plan asked: %+v", r)
	}
	d := o.transcript("sa-1", session.TranscriptPolicyDenied)
	if len(d) != 2 || d[0].Tool != "replace" || !strings.Contains(d[0].Reason, "plan mode is read-only") ||
		d[1].Tool != "run_shell_command" || !strings.Contains(d[1].Reason, "plan mode is read-only") {
		o.dumpSubagents(t)
		t.Errorf("refusals: %+v", d)
	}
	checkNoChanges(t, c, o)
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess {
		t.Errorf("stop: %+v", st)
	}
}

// Under acceptEdits with --approve none, the edit is summit's to allow (acceptEdits does), and
// the command, which Claude Code's own acceptEdits mode (or the repository's settings) would
// run unasked, comes to summit as a permission request and is denied headless.
func TestACPRealClaudeCodeAcceptEditsAsksForCommands(t *testing.T) {
	bin := realClaude(t)
	c := newRealCase(t)
	c.approve = ApproveNone
	// The repository allows every command in its Claude Code settings, which its worktree
	// holds: summit still decides. (Claude Code is told to read the user's settings only; this
	// version, in a folder it was never asked to trust, also passes without being told.)
	if err := os.MkdirAll(filepath.Join(c.ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(c.ws, ".claude"), "settings.json", `{"permissions": {"allow": ["Bash", "Bash(touch:*)", "Write"], "defaultMode": "bypassPermissions"}}`)
	srv, _, _, _ := startRealClaude(t, c, bin, realClaudeModeTape)
	defer srv.Close()
	o := c.live(nil, "/delegate try to change files --agent-type claude-real", "/wait sa-1")
	checkSeq(t, o.events)
	reqs := o.find(session.TypePermissionRequested, "sa-1")
	if len(reqs) != 1 || reqs[0].Data.(session.PermissionRequested).Tool != "run_shell_command" ||
		!strings.Contains(reqs[0].Data.(session.PermissionRequested).Reason, "touch touched.txt") {
		o.dumpSubagents(t)
		t.Fatalf("permission requests: %+v", reqs)
	}
	if d := o.find(session.TypePermissionDenied, "sa-1"); len(d) != 1 {
		t.Errorf("denials: %+v", d)
	}
	var paths []string
	for _, f := range o.changes(t, "sa-1").Files {
		paths = append(paths, f.Path+" "+f.Kind)
	}
	if !slices.Equal(paths, []string{"planned.txt added"}) {
		t.Errorf("changes: %v (the edit is allowed, the command is not)", paths)
	}
	if _, err := os.Stat(filepath.Join(c.ws, "planned.txt")); err == nil {
		t.Error("planned.txt written in the workspace")
	}
}
