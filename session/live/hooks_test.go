package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/hooks"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

// hookTape answers the "hooked" task with one final message per turn, each turn ended by
// end_turn: a SubagentStop hook that blocks makes it take the next.
const hookTape = `tapes:
  - name: hooked
    match: {agent: analyzer, task: "(?i)hooked"}
    steps:
      - say: "First answer."
      - capsule: {summary: "first"}
      - end_turn: true
      - say: "Second answer, with the tests run."
      - capsule: {summary: "second"}
      - end_turn: true
      - say: "Third answer."
      - capsule: {summary: "third"}
      - end_turn: true
      - say: "Fourth answer."
      - capsule: {summary: "fourth"}
`

func hookHarness(t *testing.T, hs provider.Hooks, env ...string) *harness {
	t.Helper()
	h := newHarness(t)
	h.tapes = t.TempDir()
	write(t, h.tapes, "hooks.yaml", hookTape)
	h.hooks = hooks.New(hooks.Options{Hooks: hs, Environ: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)})
	return h
}

func hookList(event string, hs ...provider.Hook) provider.Hooks {
	return provider.Hooks{Events: map[string][]provider.Hook{event: hs}}
}

// trail lists a subagent's hook, note, stop events and the first token of each streamed
// message, as "type:detail", for order checks.
func (o outcome) trail(id string) []string {
	var out []string
	for _, e := range o.events {
		if e.SubagentID != id {
			continue
		}
		switch d := e.Data.(type) {
		case session.HookRan:
			out = append(out, "HookRan:"+d.Outcome)
		case session.UserNote:
			out = append(out, "UserNote:"+d.Text)
		case session.TranscriptEvent:
			if d.EventType == session.TranscriptToken && (len(out) == 0 || !strings.HasPrefix(out[len(out)-1], "token")) {
				out = append(out, "token:"+strings.Fields(d.Text)[0])
			}
		case session.SubagentStop:
			summary := ""
			if d.Capsule != nil {
				summary = d.Capsule.Summary
			}
			out = append(out, "SubagentStop:"+d.Outcome+":"+summary)
		}
	}
	return out
}

// A SubagentStop hook that blocks once: the subagent gets the reason as a user message, takes
// another turn, and stops; the hook does not run again for the recorded stop.
func TestHookBlocksStopOnce(t *testing.T) {
	h := hookHarness(t, hookList("SubagentStop", provider.Hook{Matcher: "analyzer",
		Command: `if grep -q '"stop_hook_active":true'; then exit 0; fi; echo "run the tests first" >&2; exit 2`}))
	o := h.run("/delegate hooked task --agent-type analyzer\n")
	if o.exit != ExitOK {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	want := []string{"token:First", "HookRan:blocked", "UserNote:run the tests first", "token:Second", "HookRan:ok", "SubagentStop:success:second"}
	if got := o.trail("sa-1"); !equalTail(got, want) {
		t.Errorf("sa-1's trail:\n got %q\nwant %q", got, want)
	}
	ran := o.find(session.TypeHookRan, "sa-1")
	if len(ran) != 2 {
		t.Fatalf("HookRan events: %d, want 2", len(ran))
	}
	b := ran[0].Data.(session.HookRan)
	if b.ExitCode != 2 || b.Reason != "run the tests first" || b.TriggerSeq != 0 || b.HookEvent != "SubagentStop" || b.Source != "user" {
		t.Errorf("the block: %+v", b)
	}
	if o.state.Counters.Hooks != 2 || o.state.Counters.HooksBlocked != 1 {
		t.Errorf("counters: %d hooks, %d blocked", o.state.Counters.Hooks, o.state.Counters.HooksBlocked)
	}
	// Replay shows the hooks from the recording and runs none.
	if text := render.Render(o.state); !strings.Contains(text, "SubagentStop hook `if grep") || !strings.Contains(text, "blocked") {
		t.Errorf("the replay print does not show the hook:\n%s", text)
	}
}

// equalTail reports whether got ends with want (earlier events, such as the start, may lead).
func equalTail(got, want []string) bool {
	for i := 0; i < len(got); i++ {
		if strings.Join(got[i:], "|") == strings.Join(want, "|") {
			return true
		}
	}
	return false
}

// A hook that always blocks is bounded by max_blocks: then its block is recorded as failed,
// with why, and the subagent stops.
func TestHookBlocksBounded(t *testing.T) {
	hs := hookList("SubagentStop", provider.Hook{Command: `echo '{"decision":"block","reason":"again"}'`})
	hs.MaxBlocks = 2
	h := hookHarness(t, hs)
	o := h.run("/delegate hooked task --agent-type analyzer\n")
	var outcomes []string
	for _, e := range o.find(session.TypeHookRan, "sa-1") {
		outcomes = append(outcomes, e.Data.(session.HookRan).Outcome)
	}
	if strings.Join(outcomes, ",") != "blocked,blocked,failed" {
		t.Errorf("outcomes %v, want two blocks then a failure", outcomes)
	}
	last := o.find(session.TypeHookRan, "sa-1")[2].Data.(session.HookRan)
	if !strings.Contains(last.Reason, "max_blocks") || !strings.Contains(last.Reason, "again") {
		t.Errorf("the bounded block says %q", last.Reason)
	}
	stop := o.find(session.TypeSubagentStop, "sa-1")
	if len(stop) != 1 || stop[0].Data.(session.SubagentStop).Capsule.Summary != "third" || len(o.find(session.TypeUserNote, "sa-1")) != 2 {
		t.Errorf("stop %+v, notes %d", stop, len(o.find(session.TypeUserNote, "sa-1")))
	}
}

// Hooks that hang are killed at their timeout, a child holding stdout included, and the
// session goes on: a SubagentStart hook (off the serialising path) and a SubagentStop hook
// (before the stop).
func TestHookTimeout(t *testing.T) {
	t.Parallel()
	hs := provider.Hooks{Events: map[string][]provider.Hook{
		"SubagentStart": {{Command: "sleep 1000", Timeout: 1}},
		"SubagentStop":  {{Command: "sleep 1000 & echo child; sleep 1000", Timeout: 1}},
	}}
	h := hookHarness(t, hs)
	start := time.Now()
	o := h.run("/delegate hooked task --agent-type analyzer\n")
	took := time.Since(start)
	if o.exit != ExitOK || took > 8*time.Second {
		t.Fatalf("exit %d after %s\n%s", o.exit, took, o.progress)
	}
	ran := o.find(session.TypeHookRan, "sa-1")
	if len(ran) != 2 {
		t.Fatalf("HookRan: %v", ran)
	}
	for _, e := range ran {
		d := e.Data.(session.HookRan)
		if d.Outcome != session.HookTimeout || d.ExitCode != -1 || d.DurationMS < 1000 || d.DurationMS > 3000 {
			t.Errorf("%s hook: %+v, want a timeout after about 1s", d.HookEvent, d)
		}
	}
	// The start hook runs off the serialising path (so after the trigger, in no fixed order
	// with the run); the stop hook before the stop, with no trigger recorded yet.
	for _, e := range ran {
		d := e.Data.(session.HookRan)
		if (d.HookEvent == "SubagentStart") != (d.TriggerSeq != 0) {
			t.Errorf("%s hook: trigger_seq %d", d.HookEvent, d.TriggerSeq)
		}
	}
	if stop := o.find(session.TypeSubagentStop, "sa-1"); len(stop) != 1 || stop[0].Data.(session.SubagentStop).Outcome != session.OutcomeSuccess {
		t.Errorf("stop: %+v", stop)
	}
}

// A hook's environment has no secret-named variable.
func TestHookEnvironmentScrubbed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env.txt")
	h := hookHarness(t, hookList("SubagentStart", provider.Hook{Command: "env > " + out}),
		"HOOKTEST_API_KEY=sk-hooktest-0123456789abcdef", "HOOKTEST_PLAIN=visible")
	o := h.run("/delegate hooked task --agent-type analyzer\n")
	env, err := os.ReadFile(out)
	if err != nil || o.exit != ExitOK {
		t.Fatalf("%v exit %d", err, o.exit)
	}
	// An allow-list: a variable whose name does not look secret is left out too.
	if strings.Contains(string(env), "HOOKTEST_API_KEY") || strings.Contains(string(env), "sk-hooktest") || strings.Contains(string(env), "HOOKTEST_PLAIN") ||
		!strings.Contains(string(env), "PATH=") {
		t.Errorf("the hook's environment:\n%s", env)
	}
}

// A workspace's hooks run only when trusted; the user's always do. A SessionEnded hook's
// HookRan is recorded just before the end.
func TestHookWorkspaceTrust(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{false, true} {
		h := newHarness(t)
		h.tapes = t.TempDir()
		write(t, h.tapes, "hooks.yaml", hookTape)
		side := t.TempDir()
		os.MkdirAll(filepath.Join(h.ws, ".summit"), 0o755)
		write(t, filepath.Join(h.ws, ".summit"), "config.yaml", "hooks:\n  SubagentStart:\n    - command: touch "+filepath.Join(side, "ws-start")+"\n  SessionEnded:\n    - command: touch "+filepath.Join(side, "ws-end")+"\n")
		user := t.TempDir()
		write(t, user, "config.yaml", "hooks:\n  SubagentStart:\n    - command: touch "+filepath.Join(side, "user-start")+"\n")
		// The config as the workspace's trust gates it (session/trust): untrusted, none of
		// the workspace file reaches the hooks.
		cfg, ignored, err := provider.LoadConfigGated(h.ws, user, trusted)
		if err != nil {
			t.Fatal(err)
		}
		if (len(ignored) == 2) == trusted {
			t.Fatalf("trusted %v: ignored %v", trusted, ignored)
		}
		h.hooks = hooks.New(hooks.Options{Hooks: cfg.Hooks, WorkspaceTrusted: true})
		o := h.run("/delegate hooked task --agent-type analyzer\n")
		for name, want := range map[string]bool{"user-start": true, "ws-start": trusted, "ws-end": trusted} {
			if _, err := os.Stat(filepath.Join(side, name)); (err == nil) != want {
				t.Errorf("trusted %v: %s ran = %v, want %v", trusted, name, err == nil, want)
			}
		}
		if n := len(o.find(session.TypeHookRan, "")); n != map[bool]int{false: 1, true: 3}[trusted] {
			t.Errorf("trusted %v: %d HookRan", trusted, n)
		}
		evs := o.events
		if evs[len(evs)-1].Type != session.TypeSessionEnded {
			t.Errorf("the last event is %s", evs[len(evs)-1].Type)
		}
		if prev := evs[len(evs)-2]; trusted {
			d, ok := prev.Data.(session.HookRan)
			if !ok || d.HookEvent != "SessionEnded" || d.Outcome != session.HookOK || d.TriggerSeq != 0 {
				t.Errorf("before the end: %v %+v", prev, prev.Data)
			}
		}
	}
}

// Replaying a recording runs no hook: the recording's HookRan is all there is.
func TestReplayRunsNoHooks(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	h := hookHarness(t, hookList("SubagentStart", provider.Hook{Command: "echo ran >> " + count}))
	h.run("/delegate hooked task --agent-type analyzer\n")
	before, _ := os.ReadFile(count)
	st, _, err := record.LoadFile(h.rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := render.Render(st)
	after, _ := os.ReadFile(count)
	if string(before) != "ran\n" || string(after) != string(before) || !strings.Contains(text, "SubagentStart hook `echo ran") {
		t.Errorf("hook ran %q, after replay %q; replay shows the hook: %v", before, after, strings.Contains(text, "SubagentStart hook"))
	}
}

// An external (ACP) agent's SubagentStop hook may block its stop as a native subagent's does:
// the reason is the agent's next prompt, then it stops; the hook is not run again at the
// recorded stop.
func TestACPStopHookBlocks(t *testing.T) {
	c := newACPCase(t, "say a first answer\n---\nsay "+capsule+"\n", nil)
	marker := filepath.Join(t.TempDir(), "blocked")
	cmd := fmt.Sprintf(`if [ -e %[1]s ]; then exit 0; fi; touch %[1]s; echo "run the linter first" >&2; exit 2`, marker)
	c.hooks = hooks.New(hooks.Options{Hooks: hookList("SubagentStop", provider.Hook{Command: cmd}),
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}})
	o := c.live(nil, "/delegate paint --agent-type fake")
	c.logHas(t, `prompt 2: "run the linter first"`)
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "wrote pkg/new.go" {
		t.Errorf("stop: %+v", st)
	}
	var outcomes []string
	for _, e := range o.find(session.TypeHookRan, "sa-1") {
		outcomes = append(outcomes, e.Data.(session.HookRan).Outcome)
	}
	if strings.Join(outcomes, ",") != "blocked,ok" {
		t.Errorf("hook outcomes %v, want blocked then ok", outcomes)
	}
}

// A hook's relative command is the main workspace's script, never the copy in the subagent's
// worktree: a subagent with only write_file rewrites ./scripts/check.sh there, and the
// SubagentStop hook still runs the workspace's (issue 26).
func TestHookRunsWorkspaceScriptNotWorktreeCopy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tapes = t.TempDir()
	write(t, h.tapes, "rewrite.yaml", `tapes:
  - name: rewrite
    match: {agent: builder, task: "(?i)rewrite"}
    steps:
      - tool: write_file
        args: {path: scripts/check.sh, content: "#!/bin/sh\necho FROM-THE-WORKTREE >&2\ntouch \"$HOOK_SIDE/worktree-ran\"\nexit 1\n"}
      - capsule: {summary: "rewrote the check"}
`)
	side := t.TempDir()
	os.MkdirAll(filepath.Join(h.ws, "scripts"), 0o755)
	if err := os.WriteFile(filepath.Join(h.ws, "scripts", "check.sh"), []byte("#!/bin/sh\necho FROM-THE-WORKSPACE >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hs := provider.Hooks{Events: map[string][]provider.Hook{"SubagentStop": {{Command: "./scripts/check.sh", Workspace: true}}}}
	h.hooks = hooks.New(hooks.Options{Hooks: hs, WorkspaceTrusted: true,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "HOOK_SIDE=" + side}})
	o := h.run("/delegate rewrite the check --agent-type builder\n")
	if len(o.find(session.TypeSubagentIsolated, "sa-1")) != 1 {
		t.Fatalf("the builder was not isolated: %s", o.progress)
	}
	ran := o.find(session.TypeHookRan, "sa-1")
	if len(ran) == 0 {
		t.Fatalf("no HookRan:\n%s", o.progress)
	}
	for _, e := range ran {
		d := e.Data.(session.HookRan)
		if !strings.Contains(d.Stderr, "FROM-THE-WORKSPACE") || strings.Contains(d.Stderr, "FROM-THE-WORKTREE") {
			t.Errorf("the hook ran the worktree's script: %+v", d)
		}
	}
	if _, err := os.Stat(filepath.Join(side, "worktree-ran")); err == nil {
		t.Error("the script the subagent wrote ran")
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "scripts", "check.sh")); !strings.Contains(string(b), "FROM-THE-WORKSPACE") {
		t.Errorf("the workspace's script changed: %s", b)
	}
}

// A PreToolUse hook never widens: its allow for a shell call the policy asks about still
// asks (and --approve none denies it); the hook's run is recorded with its decision.
func TestPreToolUseAllowDoesNotWiden(t *testing.T) {
	h := newHarness(t)
	h.approve = ApproveNone
	h.hooks = hooks.New(hooks.Options{Hooks: hookList("PreToolUse", provider.Hook{Matcher: "Bash",
		Command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"looks fine"}}'`}),
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}})
	o := h.run("/delegate run the shell --agent-type builder\n")
	if reqs, denied := o.find(session.TypePermissionRequested, "sa-1"), o.find(session.TypePermissionDenied, ""); len(reqs) != 2 || len(denied) != 2 {
		t.Fatalf("requests %d, denied %d: a hook's allow widened the policy", len(reqs), len(denied))
	}
	ran := o.find(session.TypeHookRan, "sa-1")
	if len(ran) != 2 {
		t.Fatalf("HookRan: %d", len(ran))
	}
	if d := ran[0].Data.(session.HookRan); d.HookEvent != "PreToolUse" || d.Decision != "allow" || d.Tool != "run_shell_command" || d.Outcome != session.HookOK {
		t.Errorf("HookRan %+v", d)
	}
}
