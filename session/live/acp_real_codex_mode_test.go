package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// Summit, not Codex, decides what the real Codex may do (issue 26). Confined by summit, Codex
// cannot ask before a command (agents/acp/agent.go says why, with the code paths): its own
// sandbox cannot start inside Landlock, and unsandboxed it runs every command unasked. So
// summit refuses to start it where summit would ask (acceptEdits), and names the modes that
// work. Before, under acceptEdits it ran in its full-access mode and ran the command unasked,
// --approve none or not.

// realCodexModeTape: Codex runs one command, which would write touched.txt, then ends.
const realCodexModeTape = `
tapes:
  - name: codex-mode
    match: {agent: gpt-5.1-codex, task: "(?s)try to run a command"}
    steps:
      - tool: exec_command
        args: {cmd: "` + realCodexTouch + `"}
      - capsule: {summary: "tried to run a command", confidence: 0.5}
`

// realCodexTouch writes touched.txt.
const realCodexTouch = `node -e \"require('fs').writeFileSync('touched.txt', 'x')\"`

// checkCodexUntouched checks that the command did not run: no touched.txt anywhere.
func checkCodexUntouched(t *testing.T, c *acpCase, o outcome) {
	t.Helper()
	if ch := o.changes(t, "sa-1"); len(ch.Files) != 0 {
		t.Errorf("the agent changed files: %+v", ch.Files)
	}
	if _, err := os.Stat(filepath.Join(c.ws, "touched.txt")); err == nil {
		t.Error("touched.txt written in the workspace")
	}
}

// Under acceptEdits with --approve none, where summit asks before every command, summit
// refuses to start Codex confined, says why and what works instead, and nothing runs: no
// model request is made.
func TestACPRealCodexAcceptEditsRefused(t *testing.T) {
	bin := realNPMAgent(t, realCodexPkg, realCodexVersion, realCodexBin, realCodexBroken == "")
	if !tools.ConfinementAvailable() {
		t.Skip("no Landlock: Codex runs unconfined, in its own sandboxed modes")
	}
	c := newRealCase(t)
	c.approve = ApproveNone
	srv, _, _, _ := startRealCodex(t, c, bin, realCodexModeTape)
	defer srv.Close()
	o := c.live(nil, "/delegate try to run a command --agent-type codex-real", "/wait sa-1")
	checkSeq(t, o.events)
	st := o.stop(t, "sa-1")
	errs := o.find(session.TypeSubagentError, "sa-1")
	if st.Outcome != session.OutcomeFailure || len(errs) != 1 {
		o.dumpSubagents(t)
		t.Fatalf("stop %+v, errors %+v", st, errs)
	}
	msg := errs[0].Data.(session.SubagentError).Error
	for _, want := range []string{"codex-real cannot run in acceptEdits confined to its worktree",
		"(agent-full-access) runs them without asking summit", "--permission-mode bypassPermissions",
		"--permission-mode plan", "claude-code, gemini-cli"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if r := o.find(session.TypePermissionRequested, "sa-1"); len(r) != 0 {
		t.Errorf("requests: %+v", r)
	}
	checkCodexUntouched(t, c, o)
	if served := srv.log(); len(served) != 0 {
		t.Errorf("the agent ran: the model server served %q", served)
	}
}

// Under plan, even with --approve all, Codex keeps its read-only mode: the command does not
// run (its sandbox cannot start inside summit's, and the failure is its result), and nothing
// asks. (This held before too: a guard for plan, not the defect.)
func TestACPRealCodexPlanRunsNothing(t *testing.T) {
	bin := realNPMAgent(t, realCodexPkg, realCodexVersion, realCodexBin, realCodexBroken == "")
	c := newRealCase(t)
	c.ceiling = "plan"
	srv, _, _, _ := startRealCodex(t, c, bin, realCodexModeTape)
	defer srv.Close()
	o := c.live(nil, "/delegate try to run a command --agent-type codex-real", "/wait sa-1")
	checkSeq(t, o.events)
	if r := o.find(session.TypePermissionRequested, "sa-1"); len(r) != 0 {
		t.Errorf("plan asked: %+v", r)
	}
	msgs := o.transcript("sa-1", session.TranscriptMessage)
	if len(msgs) < 2 || !strings.Contains(msgs[1].Text, "the agent runs in its read-only mode; summit's plan decides") {
		o.dumpSubagents(t)
		t.Errorf("messages: %+v", msgs)
	}
	checkCodexUntouched(t, c, o)
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess {
		t.Errorf("stop: %+v", st)
	}
}
