package live

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// The real agents' lifecycle, end to end, each agent as installed from npm (see
// acp_real_test.go, acp_real_gemini_test.go, acp_real_codex_test.go) with its model calls
// answered by tapes served in-process:
//
//   - its permission requests answered by the user, not by --approve: one approved, one denied
//     with a reason, and the denial reaches the agent (its next model request carries the
//     refusal, which the tape branches on);
//   - /cancel while a command it started sleeps: SubagentCancelled then SubagentStop
//     (cancelled) within seconds, its write before the sleep a recorded change, and nothing of
//     the agent or of its command left running;
//   - a /delegate --timeout that ends while such a command sleeps: SubagentTimeout then
//     SubagentStop (timeout), near the deadline, and nothing left running.
//
// The user answers a request as the TUI's inbox does: ui/inbox.go (choices) submits
// "/approve pr-N" for "allow once" and `/deny pr-N --reason "…"` for a denial, the same lines
// these tests submit.
//
// Codex cannot take part in the first: confined by summit it runs only under bypassPermissions,
// in its agent-full-access mode (agents/acp/agent.go, ConfinedModes, Unasked), which never asks
// before a command. Its tests cover cancel and timeout.

// lcSlow is the slow command: it writes started.txt (a change the stopped subagent still
// has), then waits 30 s, its argv marked by MARKER (the test's own token) so that its process
// can be found, and found gone. As the tapes' YAML double-quoted strings write it.
const lcSlow = `node -e \"require('fs').writeFileSync('started.txt', 'started'); setTimeout(() => {}, 30000)\" MARKER`

// lcMark is a command that writes NAME.txt, as the tapes write it.
func lcMark(name string) string {
	return `node -e \"require('fs').writeFileSync('` + name + `.txt', '` + name + `')\"`
}

// The tasks: the permission test's and the slow command's (cancel and timeout).
const (
	lcAskTask  = "run the two marking commands"
	lcSlowTask = "wait for the slow command"
)

// realClaudeLifecycleTape: Claude Code asks before each Bash call (acceptEdits allows edits
// only). A refused call comes back to the model as an is_error tool_result: the on_error
// branch.
var realClaudeLifecycleTape = `
tapes:
  - name: claude-title
    match: {agent: summit-fast}
    steps:
      - say: '{"title": "Lifecycle"}'
  - name: claude-ask
    match: {agent: summit-main, task: "(?s)# Task\\s+run the two marking commands"}
    steps:
      - say: "Marking the first."
      - tool: Bash
        args: {command: "` + lcMark("approved") + `", description: "Mark approved"}
      - say: "Marking the second."
      - tool: Bash
        args: {command: "` + lcMark("refused") + `", description: "Mark refused"}
        on_error:
          - say: "The second command was refused."
          - capsule: {summary: "the second command was refused", confidence: 0.9}
      - capsule: {summary: "ran both commands", confidence: 0.9}
  - name: claude-slow
    match: {agent: summit-main, task: "(?s)# Task\\s+wait for the slow command"}
    steps:
      - say: "Starting the slow command."
      - tool: Bash
        args: {command: "` + lcSlow + `", description: "Run the slow command"}
      - capsule: {summary: "the slow command finished", confidence: 0.9}
`

// realGeminiLifecycleTape: Gemini CLI asks before each run_shell_command (autoEdit allows
// edits only). A refused call comes back as a functionResponse with an error: the on_error
// branch.
var realGeminiLifecycleTape = `
tapes:
  - name: gemini-ask
    match: {agent: summit-main, task: "(?s)run the two marking commands"}
    steps:
      - say: "Marking the first."
      - tool: run_shell_command
        args: {command: "` + lcMark("approved") + `", description: "Mark approved"}
      - say: "Marking the second."
      - tool: run_shell_command
        args: {command: "` + lcMark("refused") + `", description: "Mark refused"}
        on_error:
          - say: "The second command was refused."
          - capsule: {summary: "the second command was refused", confidence: 0.9}
      - capsule: {summary: "ran both commands", confidence: 0.9}
  - name: gemini-slow
    match: {agent: summit-main, task: "(?s)wait for the slow command"}
    steps:
      - say: "Starting the slow command."
      - tool: run_shell_command
        args: {command: "` + lcSlow + `", description: "Run the slow command"}
      - capsule: {summary: "the slow command finished", confidence: 0.9}
`

// realCodexLifecycleTape: Codex runs the slow command with exec_command, without asking.
var realCodexLifecycleTape = `
tapes:
  - name: codex-slow
    match: {agent: gpt-5.1-codex, task: "(?s)wait for the slow command"}
    steps:
      - say: "Starting the slow command."
      - tool: exec_command
        args: {cmd: "` + lcSlow + `"}
      - capsule: {summary: "the slow command finished", confidence: 0.9}
`

// lcRun is one real agent set up for a lifecycle test.
type lcRun struct {
	c       *acpCase
	typ     string // its --agent-type
	env     string // KEY=VALUE in the environment of its processes
	marker  string // in the slow command's argv
	asks    bool   // it asks before a command
	served  func() []string
	close   func() // stops the model server
	secrets []string
	bodies  string // where the model server wrote each request body (SUMMIT_E2E_DEBUG)
}

// startLifecycle sets up the real agent named (claude, gemini or codex) on the lifecycle
// tapes, with approve as --approve. Every request body the model server receives is written
// to run.bodies (under SUMMIT_E2E_DEBUG when it is set).
func startLifecycle(t *testing.T, agent, approve string) *lcRun {
	t.Helper()
	r := &lcRun{c: &acpCase{harness: newHarness(t)}, marker: "summit-lifecycle-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	r.c.approve = approve
	noUserConfig(t)
	r.bodies = t.TempDir()
	if d := os.Getenv("SUMMIT_E2E_DEBUG"); d != "" {
		r.bodies = filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.MkdirAll(r.bodies, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("SUMMIT_E2E_DEBUG", r.bodies) // the servers below read it when they start
	mark := func(tape string) string { return strings.ReplaceAll(tape, "MARKER", r.marker) }
	switch agent {
	case "claude":
		bin := realClaude(t)
		srv, served, home, key := startRealClaude(t, r.c, bin, mark(realClaudeLifecycleTape))
		r.typ, r.env, r.asks, r.served, r.close, r.secrets = "claude-real", "CLAUDE_CONFIG_DIR="+home, true, served, srv.Close, []string{key, home}
	case "gemini":
		bin := realNPMAgent(t, realGeminiPkg, realGeminiVersion, realGeminiBin, realGeminiBroken == "")
		srv, home, key := startRealGemini(t, r.c, bin, mark(realGeminiLifecycleTape))
		r.typ, r.env, r.asks, r.served, r.close, r.secrets = "gemini-real", "GEMINI_CLI_HOME="+home, true, srv.log, srv.Close, []string{key, home}
	case "codex":
		bin := realNPMAgent(t, realCodexPkg, realCodexVersion, realCodexBin, realCodexBroken == "")
		srv, codexHome, home, key := startRealCodex(t, r.c, bin, mark(realCodexLifecycleTape))
		// Confined, Codex runs only in bypassPermissions (see TestACPRealCodexAcceptEditsRefused),
		// which summit asks about once, at the start of the run: its one request.
		r.c.ceiling = "bypassPermissions"
		r.typ, r.env, r.asks, r.served, r.close, r.secrets = "codex-real --permission-mode bypassPermissions", "CODEX_HOME="+codexHome, true, srv.log, srv.Close, []string{key, home}
	default:
		t.Fatalf("no agent %s", agent)
	}
	return r
}

// procsWithArg lists the live processes whose command line holds s.
func procsWithArg(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmd, []byte(s)) || pidGone(pid) {
			continue
		}
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// waitSlow waits (60 s at most) until the slow command runs, has written started.txt, and
// the agent has reported the call (Codex reports it some time after it started the command).
func (r *lcRun) waitSlow(t *testing.T, x *Orchestrator) {
	t.Helper()
	if !r.slowRuns(x) {
		t.Fatal("the slow command never ran")
	}
}

// slowRuns is waitSlow's wait: false when sa-1 stopped first, or 60 s went by (a real agent
// starts slowly on a loaded machine; the wait ends as soon as the command runs).
func (r *lcRun) slowRuns(x *Orchestrator) bool {
	deadline := time.Now().Add(60 * time.Second)
	started := filepath.Join(r.c.cache, "worktrees", "s-test", "sa-1", "started.txt")
	for {
		stopped, calling := false, false
		x.View(func(s *session.State) {
			sa := s.Subagent("sa-1")
			stopped, calling = sa.Stopped, sa.CurrentTool == "run_shell_command"
		})
		if _, err := os.Stat(started); err == nil && calling && len(procsWithArg(r.marker)) > 0 {
			return true
		}
		if stopped || time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkSlowCall checks that the slow command's call is recorded, and ended: the run's end
// gives a result to every call the agent never reported the end of.
func (r *lcRun) checkSlowCall(t *testing.T, o outcome) {
	t.Helper()
	calls, results := o.transcript("sa-1", session.TranscriptToolCall), o.transcript("sa-1", session.TranscriptToolResult)
	if len(calls) != 1 || calls[0].Tool != "run_shell_command" || len(results) != 1 || results[0].CallID != calls[0].CallID {
		r.dump(t, o)
		t.Errorf("tool calls %+v, results %+v", calls, results)
	}
	if st := o.stop(t, "sa-1"); st.ToolInvocationCount != 1 {
		t.Errorf("%d tool invocations", st.ToolInvocationCount)
	}
}

// dump logs sa-1's events.
func (r *lcRun) dump(t *testing.T, o outcome) {
	t.Helper()
	for _, e := range o.events {
		if e.SubagentID != "" {
			t.Logf("%d %s %+v", e.Seq, e.Type, e.Data)
		}
	}
}

// lastBody is the last request body the model server received.
func (r *lcRun) lastBody(t *testing.T) string {
	t.Helper()
	ents, err := os.ReadDir(r.bodies)
	if err != nil {
		t.Fatal(err)
	}
	last, lastN := "", 0
	for _, e := range ents {
		n, _ := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if n > lastN {
			last, lastN = e.Name(), n
		}
	}
	b, _ := os.ReadFile(filepath.Join(r.bodies, last))
	return string(b)
}

// checkEnd checks what a stopped run leaves: exactly these changes in its worktree and none
// in the main workspace, no process of the agent (its environment) nor of the slow command
// (its argv), and a recording that holds none of the agent's secrets and replays with sa-1's
// outcome.
func (r *lcRun) checkEnd(t *testing.T, o outcome, outcome string, changes ...string) {
	t.Helper()
	var paths []string
	for _, f := range o.changes(t, "sa-1").Files {
		paths = append(paths, f.Path+" "+f.Kind)
	}
	if !slices.Equal(paths, changes) {
		t.Errorf("changes: %v, want %v", paths, changes)
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(r.c.ws, strings.Fields(p)[0])); err == nil {
			t.Errorf("the agent wrote %s in the main workspace", p)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := append(procsWithEnv(r.env), procsWithArg(r.marker)...)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, p := range left { // not to leave them on the machine
				if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			t.Fatalf("processes left: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Codex never asks (see above): were it to, it would need a permission test too.
	if n := len(o.find(session.TypePermissionRequested, "sa-1")); !r.asks && n != 0 {
		t.Errorf("%s asked %d times", r.typ, n)
	}
	r.close()
	rec, err := os.ReadFile(r.c.rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.secrets {
		if bytes.Contains(rec, []byte(s)) {
			t.Errorf("the recording holds %q of the agent's environment", s)
		}
	}
	state, _, err := record.LoadFile(r.c.rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sa := state.Subagent("sa-1"); sa == nil || !sa.Stopped || sa.Outcome != outcome {
		t.Errorf("replayed: %+v", sa)
	}
}

// The user answers the agent's requests in summit's inbox: the first command is approved and
// runs, the second is denied with a reason, which is recorded (PermissionDenied by the user,
// policy_denied, a policy note on the capsule) and reaches the agent: its call fails, its next
// model request carries the refusal, and the tape's on_error branch ends the run.
func testLifecyclePermissions(t *testing.T, agent, refusal string) {
	r := startLifecycle(t, agent, "")
	c := r.c
	const reason = "use the other file"
	o := c.live(func(x *Orchestrator) {
		pr := c.waitRequest(t, x)
		accept(t, x, "/approve "+pr)
		waitState(t, x, "a second permission request", func(s *session.State) bool {
			p := s.Subagent("sa-1").PendingRequest
			return p != "" && p != pr
		})
		accept(t, x, "/deny "+pending(x, "sa-1")+" --reason "+strconv.Quote(reason))
	}, "/delegate "+lcAskTask+" --agent-type "+r.typ)
	checkSeq(t, o.events)
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "the second command was refused" {
		r.dump(t, o)
		t.Fatalf("stop: %+v capsule %+v", st, st.Capsule)
	}
	if notes := st.Capsule.PolicyNotes; len(notes) != 1 || notes[0] != "run_shell_command refused: "+reason {
		t.Errorf("policy notes: %q", notes)
	}
	reqs := o.find(session.TypePermissionRequested, "sa-1")
	if len(reqs) != 2 {
		r.dump(t, o)
		t.Fatalf("%d permission requests, want 2", len(reqs))
	}
	for i, want := range []string{"approved.txt", "refused.txt"} {
		pr := reqs[i].Data.(session.PermissionRequested)
		if pr.Tool != "run_shell_command" || !strings.Contains(pr.Reason, want) {
			t.Errorf("request %d: %+v", i+1, pr)
		}
	}
	id := func(i int) string { return reqs[i].Data.(session.PermissionRequested).RequestID }
	if g := o.find(session.TypePermissionGranted, "sa-1"); len(g) != 1 || g[0].Data.(session.PermissionGranted).RequestID != id(0) {
		t.Errorf("grants: %+v", g)
	}
	d := o.find(session.TypePermissionDenied, "sa-1")
	if len(d) != 1 || d[0].Data.(session.PermissionDenied) != (session.PermissionDenied{RequestID: id(1), Reason: reason, By: "user"}) {
		t.Errorf("denials: %+v", d)
	}
	if pd := o.transcript("sa-1", session.TranscriptPolicyDenied); len(pd) != 1 || pd[0].Tool != "run_shell_command" || pd[0].Reason != reason {
		t.Errorf("policy_denied: %+v", pd)
	}
	for _, p := range o.state.Permissions {
		if p.Decision == session.DecisionPending {
			t.Errorf("permission left pending: %+v", p)
		}
	}
	// The agent's next model request carries its refusal of the call.
	if body := r.lastBody(t); !strings.Contains(body, refusal) {
		t.Errorf("the agent's last model request does not carry the refusal %q: …%s", refusal, body[max(0, len(body)-2000):])
	}
	r.checkEnd(t, o, session.OutcomeSuccess, "approved.txt added")
}

// /cancel while the agent's command sleeps: the run stops within seconds, cancelled, with
// what it wrote before. Twice: with the usual grace period (the agent is told over
// session/cancel, and ends its turn and its command itself), and with none (summit kills the
// agent at once, as it kills one deaf to session/cancel once the grace period is over): what
// the agent started outside its process group must go too (Claude Code runs each Bash command
// in a session of its own).
func testLifecycleCancel(t *testing.T, agent string) {
	for _, tc := range []struct {
		name  string
		grace time.Duration
	}{{"told", 8 * time.Second}, {"killed", time.Millisecond}} {
		// told: 8 s, not the session's 5, so that a real agent slowed by a loaded machine
		// (Gemini CLI ended its turn only after the 5 s once, in a whole `go test ./...` on 2
		// cores) is still seen ending its turn itself, under the 10 s bound below.
		t.Run(tc.name, func(t *testing.T) {
			old := acpCancelGrace
			acpCancelGrace = tc.grace
			t.Cleanup(func() { acpCancelGrace = old })
			r := startLifecycle(t, agent, "")
			c := r.c
			var took time.Duration
			o := c.live(func(x *Orchestrator) {
				if r.asks {
					accept(t, x, "/approve "+c.waitRequest(t, x))
				}
				r.waitSlow(t, x)
				at := time.Now()
				accept(t, x, "/cancel sa-1")
				waitState(t, x, "sa-1's stop", func(s *session.State) bool { return s.Subagent("sa-1").Stopped })
				took = time.Since(at)
			}, "/delegate "+lcSlowTask+" --agent-type "+r.typ)
			t.Logf("the cancellation took %v", took.Round(time.Millisecond))
			checkSeq(t, o.events)
			if took > 10*time.Second {
				t.Errorf("the cancellation took %v", took)
			}
			if tc.name == "told" && took >= tc.grace {
				t.Errorf("the agent did not end its turn when told (session/cancel): it was killed after %v", took)
			}
			cancelled, stop := o.find(session.TypeSubagentCancelled, "sa-1"), o.find(session.TypeSubagentStop, "sa-1")
			if len(cancelled) != 1 || len(stop) != 1 || cancelled[0].Seq > stop[0].Seq ||
				cancelled[0].Data.(session.SubagentCancelled).Reason != "cancelled by the user" {
				r.dump(t, o)
				t.Fatalf("cancelled %+v, stop %+v", cancelled, stop)
			}
			if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeCancelled || len(o.find(session.TypeSubagentTimeout, "sa-1")) != 0 {
				r.dump(t, o)
				t.Errorf("stop: %+v", st)
			}
			if r.asks {
				if g := o.find(session.TypePermissionGranted, "sa-1"); len(g) != 1 || g[0].Data.(session.PermissionGranted).By != "user" {
					t.Errorf("grants: %+v", g)
				}
			}
			r.checkSlowCall(t, o)
			checkNotServed(t, r.served(), "turn 2")
			r.checkEnd(t, o, session.OutcomeCancelled, "started.txt added")
		})
	}
}

// A timeout while the agent's command sleeps: the run ends near the deadline, as a timeout,
// its command gone with it. The deadline counts from the agent's start, which takes 1 to 2 s
// here, and longer on a loaded machine: when the agent had not started the command by then,
// the test checks the timeout all the same, and says so.
func testLifecycleTimeout(t *testing.T, agent string) {
	const timeout = 4
	r := startLifecycle(t, agent, ApproveAll)
	c := r.c
	start := time.Now()
	var took time.Duration
	ran := false
	o := c.live(func(x *Orchestrator) {
		if ran = r.slowRuns(x); ran {
			t.Logf("the slow command ran %v after the delegation", time.Since(start).Round(time.Millisecond))
		} else {
			t.Logf("the agent had not started the slow command by its timeout (a loaded machine?)")
		}
		waitState(t, x, "sa-1's stop", func(s *session.State) bool { return s.Subagent("sa-1").Stopped })
		took = time.Since(start)
	}, "/delegate "+lcSlowTask+" --agent-type "+r.typ+" --timeout "+strconv.Itoa(timeout))
	t.Logf("the delegation took %v", took.Round(time.Millisecond))
	checkSeq(t, o.events)
	to, stop := o.find(session.TypeSubagentTimeout, "sa-1"), o.find(session.TypeSubagentStop, "sa-1")
	if len(to) != 1 || len(stop) != 1 || to[0].Seq > stop[0].Seq || to[0].Data.(session.SubagentTimeout).TimeoutS != timeout {
		r.dump(t, o)
		t.Fatalf("timeout %+v, stop %+v", to, stop)
	}
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeTimeout || len(o.find(session.TypeSubagentCancelled, "sa-1")) != 0 {
		r.dump(t, o)
		t.Errorf("stop: %+v", st)
	}
	// It ran until its deadline, and stopped soon after (the agent's turn cancelled, or its
	// process group killed after the grace period).
	if st.DurationMS < timeout*1000 || st.DurationMS > timeout*1000+10000 || took > timeout*time.Second+10*time.Second {
		t.Errorf("the run took %d ms (%v from the delegation), its timeout is %d s", st.DurationMS, took, timeout)
	}
	errs := o.find(session.TypeSubagentError, "sa-1")
	if len(errs) != 1 || !strings.Contains(errs[0].Data.(session.SubagentError).Error,
		"did not finish within the subagent's timeout ("+strconv.Itoa(timeout)+"s)") {
		t.Errorf("errors: %+v", errs)
	}
	checkNotServed(t, r.served(), "turn 2")
	changes := []string{"started.txt added"}
	if ran {
		r.checkSlowCall(t, o)
	} else if ch := o.changes(t, "sa-1"); len(ch.Files) == 0 {
		changes = nil // stopped before the command wrote anything
	}
	r.checkEnd(t, o, session.OutcomeTimeout, changes...)
}

// checkNotServed checks that the model server served no turn named by what: the run stopped
// before the agent could ask for it.
func checkNotServed(t *testing.T, served []string, what string) {
	t.Helper()
	for _, l := range served {
		if strings.Contains(l, what) && !strings.Contains(l, "-title") {
			t.Errorf("the server served %q after the slow command:\n%s", l, strings.Join(served, "\n"))
		}
	}
}

func TestACPRealLifecycleClaudeCodePermissions(t *testing.T) {
	testLifecyclePermissions(t, "claude", `"content":"User refused permission to run tool","is_error":true`)
}

func TestACPRealLifecycleClaudeCodeCancel(t *testing.T) { testLifecycleCancel(t, "claude") }

func TestACPRealLifecycleClaudeCodeTimeout(t *testing.T) { testLifecycleTimeout(t, "claude") }

func TestACPRealLifecycleGeminiCLIPermissions(t *testing.T) {
	testLifecyclePermissions(t, "gemini", `"response":{"error":"Tool \"run_shell_command\" was canceled by the user."}`)
}

func TestACPRealLifecycleGeminiCLICancel(t *testing.T) { testLifecycleCancel(t, "gemini") }

func TestACPRealLifecycleGeminiCLITimeout(t *testing.T) { testLifecycleTimeout(t, "gemini") }

func TestACPRealLifecycleCodexCancel(t *testing.T) { testLifecycleCancel(t, "codex") }

func TestACPRealLifecycleCodexTimeout(t *testing.T) { testLifecycleTimeout(t, "codex") }
