package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

const loopTapes = `tapes:
  - name: tests
    match: {agent: tester}
    steps:
      - tool: run_shell_command
        args: {command: "exit 3"}
        on_denied:
          - capsule: {summary: "could not run the tests: the shell was denied", verification: {status: skipped}}
        on_error:
          - fail: "the tests failed"
      - capsule: {summary: "the tests ran"}
  - name: readme
    match: {agent: builder}
    steps:
      - ask: "Usage or Testing?"
        answers:
          - match: usage
            steps:
              - tool: write_file
                args: {path: README.md, content: "## Usage"}
              - capsule: {summary: "wrote Usage"}
        otherwise:
          - tool: write_file
            args: {path: README.md, content: "## {{answer}}"}
          - capsule: {summary: "wrote {{answer}}"}
`

// runTape runs the agent loop on the script tapes above, with the shell approved or not and
// reply as the user's answer to an ask.
func runTape(t *testing.T, agent, task string, approve bool, reply string) (Result, string) {
	t.Helper()
	ws := t.TempDir()
	tapes, err := provider.ParseTapes([]byte(loopTapes), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := tools.New(ws, tools.Options{})
	res := Run(context.Background(), Config{
		Agent: &agents.Definition{Name: agent}, AgentType: agent, Sandbox: sb, Task: task, Clock: realClock{},
		Provider: provider.NewScript(provider.ScriptConfig{Tapes: tapes}),
		Policy:   agents.Policy{Mode: agents.ModeAcceptEdits, Tools: []string{"run_shell_command", "write_file"}},
		Emit:     func(session.Data) error { return nil },
		Approve: func(context.Context, string, map[string]any, string) (bool, string, error) {
			return approve, "use make test instead", nil
		},
		Inbox: func(context.Context) (string, error) { return reply, nil },
	})
	b, _ := os.ReadFile(filepath.Join(ws, "README.md"))
	return res, string(b)
}

// TestLoopTapeBranches: through the agent loop, a denied shell call takes on_denied (a
// success that says it could not run the tests), a failing one takes on_error (a failure),
// and the user's reply picks what the builder writes.
func TestLoopTapeBranches(t *testing.T) {
	res, _ := runTape(t, "tester", "run the tests", false, "")
	if res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != "could not run the tests: the shell was denied" ||
		res.Capsule.Verification == nil || res.Capsule.Verification.Status != "skipped" {
		t.Errorf("denied: %s %+v %v", res.Outcome, res.Capsule, res.Err)
	}
	res, _ = runTape(t, "tester", "run the tests", true, "")
	if res.Outcome != session.OutcomeFailure || res.Err == nil || !strings.Contains(res.Err.Error(), "the tests failed") {
		t.Errorf("failed command: %s %v", res.Outcome, res.Err)
	}
	res, readme := runTape(t, "builder", "pair", true, "usage please")
	if res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != "wrote Usage" || readme != "## Usage" {
		t.Errorf("usage: %s %q %q", res.Outcome, res.Capsule.Summary, readme)
	}
	res, readme = runTape(t, "builder", "pair", true, `a "FAQ"`)
	if res.Outcome != session.OutcomeSuccess || res.Capsule.Summary != `wrote a "FAQ"` || readme != `## a "FAQ"` {
		t.Errorf("otherwise: %s %q %q", res.Outcome, res.Capsule.Summary, readme)
	}
}
