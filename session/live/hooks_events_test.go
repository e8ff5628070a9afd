package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/hooks"
)

// hookRunner runs hs with a scrubbed environment (PATH and a throwaway HOME).
func hookRunner(t *testing.T, hs provider.Hooks) *hooks.Runner {
	return hooks.New(hooks.Options{Hooks: hs, Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}})
}

// hookLog reads the JSON objects a hook appended to path (one stdin per line).
func hookLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the hook wrote nothing: %v", err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("hook stdin %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// hookRuns are the HookRan events of event hookEvent.
func (o outcome) hookRuns(hookEvent string) []session.Event {
	var out []session.Event
	for _, e := range o.find(session.TypeHookRan, "") {
		if e.Data.(session.HookRan).HookEvent == hookEvent {
			out = append(out, e)
		}
	}
	return out
}

// A Notification hook runs when a permission request waits for the user (the workbench's
// inbox): its script gets Claude Code's fields, and its run is recorded after the request.
func TestNotificationHookPermissionPrompt(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "notify.log")
	h := newHarness(t)
	h.approve = ""
	h.hooks = hookRunner(t, hookList("Notification", provider.Hook{Matcher: "permission_prompt", Command: "cat >> " + log}))
	x := h.start(RealClock{})
	ctx := context.Background()
	if r, err := x.Submit(ctx, "/delegate run the shell --agent-type builder"); err != nil || r.Rejected {
		t.Fatal(r, err)
	}
	waitFor(t, x, func(s *session.State) bool { return s.Subagent("sa-1").PendingRequest == "pr-1" })
	// The hook ran while the request waits (nobody answered yet).
	waitFor(t, x, func(s *session.State) bool { return s.Counters.Hooks == 1 })
	if r, err := x.Submit(ctx, "/approve pr-1 --scope subagent"); err != nil || r.Rejected {
		t.Fatal(r, err)
	}
	if r, _ := x.Submit(ctx, "/wait sa-1"); r.Rejected {
		t.Fatal(r)
	}
	if err := x.Close("quit"); err != nil {
		t.Fatal(err)
	}
	o := h.read(0, x, "")
	ins := hookLog(t, log)
	if len(ins) != 1 {
		t.Fatalf("the hook ran %d times: %v", len(ins), ins)
	}
	in := ins[0]
	if in["hook_event_name"] != "Notification" || in["notification_type"] != "permission_prompt" || in["session_id"] != "s-test" ||
		in["message"] != "sa-1 needs your permission to use run_shell_command (pr-1)" || in["cwd"] != h.ws {
		t.Errorf("the hook's stdin: %v", in)
	}
	req := o.find(session.TypePermissionRequested, "sa-1")
	ran := o.hookRuns("Notification")
	if len(ran) != 1 || len(req) != 1 {
		t.Fatalf("HookRan %v, requests %v", ran, req)
	}
	if d := ran[0].Data.(session.HookRan); d.Outcome != session.HookOK || d.TriggerSeq != req[0].Seq || ran[0].SubagentID != "sa-1" {
		t.Errorf("HookRan %+v (request at seq %d)", d, req[0].Seq)
	}
}

// A Notification hook runs when a subagent asks the user a question (idle_prompt); one
// matching another type does not.
func TestNotificationHookQuestion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log, other := filepath.Join(dir, "notify.log"), filepath.Join(dir, "other.log")
	h := newHarness(t)
	h.hooks = hookRunner(t, hookList("Notification",
		provider.Hook{Matcher: "idle_prompt", Command: "cat >> " + log},
		provider.Hook{Matcher: "permission_prompt|review", Command: "cat >> " + other}))
	o := h.run("/delegate an interactive session --agent-type builder\n/handoff sa-1 --transfer-control\nlook at main.go\n/wait sa-1\n")
	if o.exit != ExitOK {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	ins := hookLog(t, log)
	if len(ins) != 1 || ins[0]["hook_event_name"] != "Notification" || ins[0]["notification_type"] != "idle_prompt" ||
		ins[0]["message"] != "sa-1 is waiting for your message" || ins[0]["subagent_id"] != "sa-1" {
		t.Errorf("the hook's stdin: %v", ins)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("the hook matching other notification types ran")
	}
	if ran := o.hookRuns("Notification"); len(ran) != 1 || ran[0].Data.(session.HookRan).Outcome != session.HookOK {
		t.Errorf("HookRan %+v", ran)
	}
}

// askTape asks the user and says back what it got, so the message the model received is in
// the transcript.
const askTape = `tapes:
  - name: asker
    match: {task: "(?i)interactive"}
    steps:
      - ask: "Which file should I look at?"
        otherwise:
          - say: "You said: {{answer}}"
          - capsule: {summary: "answered the user"}
`

// A UserPromptSubmit hook blocks a message to the subagent holding control: it is withheld,
// the user is told why, the run is recorded; a message it lets through is delivered.
func TestUserPromptSubmitBlocks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tapes = t.TempDir()
	write(t, h.tapes, "ask.yaml", askTape)
	h.hooks = hookRunner(t, hookList("UserPromptSubmit", provider.Hook{
		Command: `if grep -q 'sk-live'; then echo "that message holds a key" >&2; exit 2; fi`}))
	o := h.run("/delegate an interactive session --agent-type builder\n/handoff sa-1 --transfer-control\nmy key is sk-live-123\nlook at main.go\n/wait sa-1\n")
	if o.exit != ExitOK {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	var toSub, toUser []string
	for _, e := range o.find(session.TypeUserNote, "") {
		if e.SubagentID == "sa-1" {
			toSub = append(toSub, e.Data.(session.UserNote).Text)
		} else {
			toUser = append(toUser, e.Data.(session.UserNote).Text)
		}
	}
	if strings.Join(toSub, "|") != "look at main.go" {
		t.Errorf("messages to sa-1: %q", toSub)
	}
	if len(toUser) != 1 || !strings.Contains(toUser[0], "your message to sa-1 was not sent") || !strings.Contains(toUser[0], "that message holds a key") {
		t.Errorf("notes to the user: %q", toUser)
	}
	// The first ran on the /delegate's task; the messages' hooks run off the command path,
	// in no fixed order with each other.
	var outcomes []string
	for _, e := range o.hookRuns("UserPromptSubmit")[1:] {
		d := e.Data.(session.HookRan)
		outcomes = append(outcomes, d.Outcome+":"+d.Reason)
	}
	slices.Sort(outcomes)
	if strings.Join(outcomes, ",") != "blocked:that message holds a key,ok:" {
		t.Errorf("HookRan outcomes %q", outcomes)
	}
	if said := o.said("sa-1"); strings.Contains(said, "sk-live") || !strings.Contains(said, "You said: look at main.go") {
		t.Errorf("the model said %q", said)
	}
}

// said is everything subagent id's model streamed.
func (o outcome) said(id string) string {
	var b strings.Builder
	for _, e := range o.find(session.TypeTranscriptEvent, id) {
		if d := e.Data.(session.TranscriptEvent); d.EventType == session.TranscriptToken {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

// A UserPromptSubmit hook's additionalContext is added to the message: the recorded message
// and what the model received hold it.
func TestUserPromptSubmitAnnotates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tapes = t.TempDir()
	write(t, h.tapes, "ask.yaml", askTape)
	h.hooks = hookRunner(t, hookList("UserPromptSubmit", provider.Hook{Matcher: "builder",
		Command: `grep -q '"prompt":"look at main.go"' && echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"house rule: cite file:line"}}'`}))
	o := h.run("/delegate an interactive session --agent-type builder\n/handoff sa-1 --transfer-control\nlook at main.go\n/wait sa-1\n")
	if o.exit != ExitOK {
		t.Fatalf("exit %d\n%s", o.exit, o.progress)
	}
	notes := o.find(session.TypeUserNote, "sa-1")
	if len(notes) != 1 || notes[0].Data.(session.UserNote).Text != "look at main.go\n\nhouse rule: cite file:line" {
		t.Errorf("the message: %+v", notes)
	}
	if said := o.said("sa-1"); !strings.Contains(said, "house rule: cite file:line") {
		t.Errorf("the model did not get the context: %q", said)
	}
	if ran := o.hookRuns("UserPromptSubmit"); len(ran) != 2 || ran[1].Data.(session.HookRan).Outcome != session.HookOK {
		// The task of the /delegate is the first prompt (not annotated: its grep fails).
		t.Errorf("HookRan %+v", ran)
	}
}

// A /delegate's task is the user's first prompt to the subagent: a UserPromptSubmit hook
// that blocks it rejects the delegation with its reason (recorded); one that annotates it
// gives the task its context.
func TestUserPromptSubmitDelegate(t *testing.T) {
	t.Parallel()
	h := hookHarness(t, hookList("UserPromptSubmit", provider.Hook{Command: `if grep -q 'production'; then echo "no tasks on production" >&2; exit 2; fi
echo "ticket: SUM-42"`}))
	o := h.run("/delegate hooked task on production --agent-type analyzer\n/delegate hooked task --agent-type analyzer\n")
	rej := o.find(session.TypeCommandRejected, "")
	if len(rej) != 1 || !strings.Contains(rej[0].Data.(session.CommandRejected).Error, "a UserPromptSubmit hook blocked the task: no tasks on production") {
		t.Fatalf("rejected %+v\n%s", rej, o.progress)
	}
	if !strings.Contains(o.progress, "no tasks on production") {
		t.Errorf("the user is not told why:\n%s", o.progress)
	}
	sp := o.find(session.TypeSubagentSpawned, "")
	if len(sp) != 1 || sp[0].Data.(session.SubagentSpawned).TaskDescription != "hooked task\n\nticket: SUM-42" {
		t.Fatalf("spawned %+v", sp)
	}
	ran := o.hookRuns("UserPromptSubmit")
	if len(ran) != 2 || ran[0].Data.(session.HookRan).Outcome != session.HookBlocked || ran[0].SubagentID != "" ||
		ran[1].Data.(session.HookRan).Outcome != session.HookOK || ran[0].Seq > rej[0].Seq {
		t.Errorf("HookRan %+v", ran)
	}
}

// An ACP agent's tool calls run PostToolUse hooks when they end (completed or failed), with
// tool_name (an MCP tool's mcp__server__tool included), tool_input and tool_response; a
// block is recorded as a failure: the agent ran the call itself.
func TestACPPostToolUse(t *testing.T) {
	c := newACPCase(t, "tool e1 execute go version\ndone e1 go1.26\ntool m1 other mcp__everything__echo\nfailed m1 boom\ntool r1 read Read main.go\ndone r1 package main\nsay "+capsule+"\n", nil)
	log := filepath.Join(t.TempDir(), "post.log")
	c.hooks = hookRunner(t, provider.Hooks{Events: map[string][]provider.Hook{
		"PostToolUse": {{Matcher: "Bash|mcp__everything__.*", Command: "cat >> " + log},
			{Matcher: "Read", Command: `echo "not allowed" >&2; exit 2`}}}})
	o := c.live(nil, "/delegate paint --agent-type fake")
	ins := hookLog(t, log)
	if len(ins) != 2 {
		t.Fatalf("the hook ran %d times: %v", len(ins), ins)
	}
	byTool := map[string]map[string]any{}
	for _, in := range ins {
		byTool[in["tool_name"].(string)] = in
		if in["hook_event_name"] != "PostToolUse" || in["session_id"] != "s-test" {
			t.Errorf("stdin %v", in)
		}
	}
	sh, mcp := byTool["run_shell_command"], byTool["mcp__everything__echo"]
	if sh == nil || sh["tool_alias"] != "Bash" || sh["tool_use_id"] != "e1" || sh["tool_input"].(map[string]any)["command"] != "go version" ||
		sh["tool_response"].(map[string]any)["output"] != "go1.26" || sh["tool_response"].(map[string]any)["is_error"] != false {
		t.Errorf("the shell call's stdin: %v", sh)
	}
	if mcp == nil || mcp["tool_response"].(map[string]any)["output"] != "boom" || mcp["tool_response"].(map[string]any)["is_error"] != true {
		t.Errorf("the MCP call's stdin: %v", mcp)
	}
	results := map[string]uint64{}
	for _, e := range o.find(session.TypeTranscriptEvent, "sa-1") {
		if d := e.Data.(session.TranscriptEvent); d.EventType == session.TranscriptToolResult {
			results[d.Tool] = e.Seq
		}
	}
	ran := o.hookRuns("PostToolUse")
	if len(ran) != 3 {
		t.Fatalf("HookRan %+v", ran)
	}
	for _, e := range ran {
		d := e.Data.(session.HookRan)
		want := session.HookOK
		if d.Tool == "read_file" {
			want = session.HookFailed // observe-only: exit code 2 cannot block
		}
		if d.Outcome != want || d.TriggerSeq == 0 || d.TriggerSeq != results[d.Tool] || e.SubagentID != "sa-1" {
			t.Errorf("HookRan %+v (results at %v)", d, results)
		}
	}
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess {
		t.Errorf("stop %+v", st)
	}
}

// A Notification hook runs when a conflict waits for the user's review; it is about no
// subagent, and its stdin carries the ConflictDetected it ran for.
func TestNotificationHookReview(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "notify.log")
	h := newHarness(t)
	h.hooks = hookRunner(t, hookList("Notification", provider.Hook{Matcher: "review", Command: "cat >> " + log}))
	o := h.run("/delegate variant a --agent-type builder\n/delegate variant b --agent-type builder\n/converge sa-1 sa-2 --strategy merge\n/wait cv-1\n/resolve cf-1 --choose sa-1\n/wait cv-1\n")
	det := o.find(session.TypeConflictDetected, "")
	if len(det) != 1 {
		t.Fatalf("conflicts %v\n%s", det, o.progress)
	}
	ins := hookLog(t, log)
	if len(ins) != 1 || ins[0]["hook_event_name"] != "Notification" || ins[0]["notification_type"] != "review" ||
		ins[0]["message"] != "a conflict waits for your review" || ins[0]["event"].(map[string]any)["type"] != "ConflictDetected" {
		t.Errorf("the hook's stdin: %v", ins)
	}
	if ran := o.hookRuns("Notification"); len(ran) != 1 || ran[0].Data.(session.HookRan).TriggerSeq != det[0].Seq || ran[0].Data.(session.HookRan).Outcome != session.HookOK {
		t.Errorf("HookRan %+v", ran)
	}
}
