package live

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/session"
)

func (o outcome) spawned(t *testing.T, id string) session.SubagentSpawned {
	t.Helper()
	s := o.find(session.TypeSubagentSpawned, id)
	if len(s) != 1 {
		t.Fatalf("%s spawned %d times", id, len(s))
	}
	return s[0].Data.(session.SubagentSpawned)
}

// TestDelegateSaysModeCapped: a /delegate whose --permission-mode (or whose agent's default)
// is above the session ceiling says so in its reply, and SubagentSpawned records the mode
// asked for next to the one granted; one within the ceiling says nothing.
func TestDelegateSaysModeCapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.run(`/delegate "change the greeting" --agent-type builder --permission-mode bypassPermissions
/delegate docs --agent-type retriever
/delegate "change the greeting" --agent-type builder --permission-mode plan
`)
	want := "delegated to sa-1 · permission mode capped at acceptEdits by the session ceiling (asked bypassPermissions)\n"
	if !strings.Contains(o.progress, want) {
		t.Errorf("progress lacks %q:\n%s", want, o.progress)
	}
	if strings.Count(o.progress, "capped") != 1 || !strings.Contains(o.progress, "  delegated to sa-2\n") || !strings.Contains(o.progress, "  delegated to sa-3\n") {
		t.Errorf("only sa-1 is capped:\n%s", o.progress)
	}
	if s := o.spawned(t, "sa-1"); s.PermissionMode != "acceptEdits" || s.RequestedPermissionMode != "bypassPermissions" {
		t.Errorf("sa-1 spawned %+v", s)
	}
	for _, id := range []string{"sa-2", "sa-3"} {
		if s := o.spawned(t, id); s.RequestedPermissionMode != "" {
			t.Errorf("%s spawned %+v", id, s)
		}
	}

	// The agent's default above a plan ceiling.
	h = newHarness(t)
	h.ceiling = agents.ModePlan
	o = h.run("/delegate \"change the greeting\" --agent-type builder\n")
	want = "delegated to sa-1 · permission mode capped at plan by the session ceiling (acceptEdits is builder's default)\n"
	if !strings.Contains(o.progress, want) {
		t.Errorf("progress lacks %q:\n%s", want, o.progress)
	}
	if s := o.spawned(t, "sa-1"); s.PermissionMode != "plan" || s.RequestedPermissionMode != "acceptEdits" {
		t.Errorf("sa-1 spawned %+v", s)
	}

	// Under a bypassPermissions ceiling nothing is capped; the mode waits for its approval.
	h = newHarness(t)
	h.ceiling = agents.ModeBypass
	o = h.run("/delegate docs --agent-type retriever --permission-mode bypassPermissions\n")
	if strings.Contains(o.progress, "capped") {
		t.Errorf("capped under a bypass ceiling:\n%s", o.progress)
	}
	if s := o.spawned(t, "sa-1"); s.PermissionMode != "acceptEdits" || s.RequestedPermissionMode != "bypassPermissions" {
		t.Errorf("sa-1 spawned %+v", s)
	}
}

// TestWaitSaysHowEachEnded: /wait replies with how long it waited and how each id ended,
// subagents and convergences alike.
func TestWaitSaysHowEachEnded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.run(`/delegate "change the greeting" --agent-type builder
/delegate the service is down --agent-type retriever
/wait sa-1 sa-2
/delegate variant a --agent-type builder
/delegate variant b --agent-type builder
/converge sa-3 sa-4 --strategy merge
/wait cv-1
/resolve cf-1 --choose sa-3
/wait cv-1 sa-3
`)
	for _, re := range []string{
		`\n  waited \d+\.\ds: sa-1 success · sa-2 failure\n`,
		`\n  waited \d+\.\ds: cv-1 waits for review \(cf-1 open\)\n`,
		`\n  waited 0\.0s: cv-1 complete \(1 conflict resolved\) · sa-3 success\n`,
	} {
		if !regexp.MustCompile(re).MatchString(o.progress) {
			t.Errorf("progress lacks %s:\n%s", re, o.progress)
		}
	}
}

func TestWaitWords(t *testing.T) {
	cv := &session.Convergence{Status: session.ConvergenceDone, Outcome: "partial", ResolutionCount: 2}
	if got := convergenceEnd(cv); got != "complete (partial · 2 conflicts resolved)" {
		t.Errorf("partial: %q", got)
	}
	cv = &session.Convergence{Status: session.ConvergenceDone, Outcome: "failure"}
	if got := convergenceEnd(cv); got != "failed" {
		t.Errorf("failure: %q", got)
	}
	if got := convergenceEnd(&session.Convergence{Status: session.ConvergenceRunning}); got != "pending" {
		t.Errorf("running: %q", got)
	}
	for d, want := range map[int64]string{0: "0.0s", 4_250_000_000: "4.2s", 125_400_000_000: "2m5s"} {
		if got := seconds(time.Duration(d)); got != want {
			t.Errorf("seconds(%d) = %q, want %q", d, got, want)
		}
	}
}

// TestWaitInterrupted: a /wait cut short says so, with how far each id got.
func TestWaitInterrupted(t *testing.T) {
	h := newHarness(t)
	x := h.start(RealClock{})
	if r, err := x.Submit(context.Background(), "/delegate slow --agent-type retriever"); err != nil || r.Rejected {
		t.Fatalf("%+v %v", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r, err := x.Submit(ctx, "/wait sa-1")
	if err != nil || !regexp.MustCompile(`^wait interrupted after 0\.\ds: sa-1 active$`).MatchString(r.Output) {
		t.Errorf("reply %q %v", r.Output, err)
	}
	if err := x.Close("quit"); err != nil {
		t.Fatal(err)
	}
}

// A model-chosen tool name reaches stderr escaped, never as raw control sequences.
func TestProgressSanitized(t *testing.T) {
	ev := session.Event{Type: session.TypeTranscriptEvent, SubagentID: "sa-1",
		Data: session.TranscriptEvent{EventType: session.TranscriptToolCall, Tool: "x\x1b[2J\x1b]52;c;cHduZWQ=\x07\u202e"}}
	got := Progress(ev)
	if strings.ContainsAny(got, "\x1b\x07\u202e") || !strings.Contains(got, `\x1b[2J`) {
		t.Errorf("progress %q", got)
	}
}

// summit run prints a model switch with where from, where to, and why, escaped.
func TestProgressModelSwitched(t *testing.T) {
	ev := session.Event{Type: session.TypeModelSwitched, SubagentID: "sa-2", Data: session.ModelSwitched{
		FromProvider: "gemini", FromModel: "gemini-3-pro-preview", ToProvider: "gemini", ToModel: "gemini-2.5-pro",
		Reason: "overloaded (HTTP 503) after 3 attempts: gemini: HTTP 503: UNAVAILABLE: The model is overloaded.\x1b[2J"}}
	got := Progress(ev)
	want := `  sa-2 model switched: gemini/gemini-3-pro-preview → gemini/gemini-2.5-pro: overloaded (HTTP 503) after 3 attempts: gemini: HTTP 503: UNAVAILABLE: The model is overloaded.\x1b[2J`
	if got != want {
		t.Errorf("progress\n%q, want\n%q", got, want)
	}
}

// The script lines run echoes on stderr keep secrets out.
func TestRunScriptEchoRedacted(t *testing.T) {
	h := newHarness(t)
	x := h.start(NewSimClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
	var progress strings.Builder
	RunScript(context.Background(), x, strings.NewReader("note with ghp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA in it\n"), &progress)
	if strings.Contains(progress.String(), "ghp_AAAA") || !strings.Contains(progress.String(), "note with") {
		t.Errorf("echo: %s", progress.String())
	}
}
