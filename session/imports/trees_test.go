package imports

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

// notes is the session's notes, one a line.
func notes(st *session.State) string {
	var b strings.Builder
	for _, l := range st.Log {
		if l.Kind == "note" {
			b.WriteString(l.Text + "\n")
		}
	}
	return b.String()
}

func TestClaudeCodeAgentProgressAndAside(t *testing.T) {
	// 2.1.3x: the Explore subagent is recorded only by agent_progress lines of the main file;
	// the aside question's file starts with a copy of the main history (same uuids).
	u := plan(t, filepath.Join(td, "claude/v2.1.3x/-home-dev-cafe"))
	if len(u.Children) != 1 {
		t.Fatalf("children %v", u.Children)
	}
	st, res, _ := load(t, u)
	want := "sa-1 claude-code main <-  success\n" +
		"sa-2 Explore Find price code <- sa-1 success\n" +
		"sa-3 subagent aside_question-5f1e <- sa-1 success\n"
	if got := tree(st); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	if res.Subagents != 2 {
		t.Errorf("result %+v", res)
	}
	ex := st.Subagent("sa-2")
	if ex.ToolCalls != 1 || ex.Tokens != (session.Tokens{Input: 900, Output: 40}) || ex.Route == nil || ex.Route.Model != "claude-haiku-4-5-20251001" ||
		!ex.SpawnedAt.Equal(mustTS("2026-04-10T08:00:02Z")) || ex.Task != "Find where menu prices are computed." {
		t.Errorf("Explore %+v", ex)
	}
	tr := transcript(st, "sa-2")
	for _, w := range []string{"user  Find where menu prices are computed.", "tool_call Grep ", "tool_result Grep menu/price.go:14", "message  Prices are computed in menu/price.go"} {
		if !strings.Contains(tr, w) {
			t.Errorf("sa-2 transcript lacks %q:\n%s", w, tr)
		}
	}
	if strings.Count(tr, "tool_result") != 1 {
		t.Errorf("a repeated progress message was replayed twice:\n%s", tr)
	}
	aside := transcript(st, "sa-3")
	if aside != "user  Does Price include tax?\nmessage  No: tax is added at checkout.\n" {
		t.Errorf("aside transcript holds more than its own work:\n%s", aside)
	}
	if a := st.Subagent("sa-3"); a.Task != "Does Price include tax?" || a.ToolCalls != 0 || a.Tokens != (session.Tokens{Input: 50, Output: 9}) {
		t.Errorf("aside %+v", a)
	}
	if m := st.Subagent("sa-1"); m.ToolCalls != 1 || m.Tokens != (session.Tokens{Input: 350, Output: 70}) {
		t.Errorf("main %+v", m)
	}
	n := notes(st)
	for _, w := range []string{"4 lines a subagent file copied from the history it was forked from", "2 empty thinking blocks", "1 agent_progress lines that repeat a message"} {
		if !strings.Contains(n, w) {
			t.Errorf("closing note lacks %q:\n%s", w, n)
		}
	}
}

func TestGeminiJSONSubagentAndEdits(t *testing.T) {
	u := plan(t, filepath.Join(td, "gemini/tmp/a1b2c3/chats"))
	if len(u.Children) != 1 || !strings.HasSuffix(u.Children[0], "c0ffee00-2222-4333-8444-555566667777/d00dfeed-8888-4999-aaaa-bbbbccccdddd.json") {
		t.Fatalf("children %v", u.Children)
	}
	st, _, _ := load(t, u)
	want := "sa-1 gemini-cli main <-  success\nsa-2 gemini-subagent d00dfeed-8888-4999-aaaa-bbbbccccdddd <- sa-1 success\n"
	if got := tree(st); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	if sa := st.Subagent("sa-2"); sa.ToolCalls != 1 || sa.Route == nil || sa.Route.Model != "gemini-2.5-flash" {
		t.Errorf("subagent %+v", sa)
	}
	ch := st.Subagent("sa-1").Changes
	if ch == nil || len(ch.Files) != 2 || ch.Added != 5 || ch.Removed != 1 {
		t.Fatalf("changes %+v", ch)
	}
	f0, f1 := ch.Files[0], ch.Files[1]
	if f0.Path != "/home/dev/calc/calc.py" || f0.Kind != session.ChangeModified || !strings.Contains(f0.Diff, "-    return sum(xs)\n+    return round(sum(xs), 2)\n") || strings.Contains(f0.Diff, "Index:") {
		t.Errorf("calc.py %+v", f0)
	}
	if f1.Path != "/home/dev/calc/test_calc.py" || f1.Kind != session.ChangeAdded || f1.Added != 4 || !strings.HasPrefix(f1.Diff, "--- /dev/null\n+++ b//home/dev/calc/test_calc.py\n@@ -0,0 +1,4 @@") {
		t.Errorf("test_calc.py %+v", f1)
	}
}

const (
	cxFork      = "codex/sessions/2026/02/03"
	cxForkMain  = cxFork + "/rollout-2026-02-03T14-00-00-019c0a00-1111-7aaa-8bbb-000000000001.jsonl"
	cxForkChild = cxFork + "/rollout-2026-02-03T14-00-04-019c0a00-1111-7aaa-8bbb-000000000002.jsonl"
	ccAside     = "claude/v2.1.3x/-home-dev-cafe/3c4d5e6f-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
)

func TestNamedTwiceImportsOnce(t *testing.T) {
	j := func(p string) string { return filepath.Join(td, p) }
	for _, args := range [][]string{
		{j(cxForkMain), j(cxForkChild)},                   // a glob naming parent and subagent
		{j(cxForkChild), j(cxForkMain)},                   // the subagent first
		{j(cxFork), j(cxForkMain), "./" + j(cxForkChild)}, // a folder and files in it
		{j(ccAside + ".jsonl"), j(ccAside + "/subagents/agent-aside_question-5f1e.jsonl"), j("claude/v2.1.3x")},
	} {
		us, errs := Plan(args, Auto)
		if len(errs) > 0 || len(us) != 1 || len(us[0].Children) != 1 {
			t.Errorf("plan %v: %d units %+v %v", args, len(us), us, errs)
		}
	}
}

func TestCodexForkedThreadAlone(t *testing.T) {
	us, errs := Plan([]string{filepath.Join(td, cxForkChild)}, Auto)
	if len(errs) > 0 || len(us) != 1 {
		t.Fatalf("plan: %v %v", us, errs)
	}
	st, res, _ := load(t, us[0])
	m := st.Subagent("sa-1")
	if m.Task != "List the TODO comments in src." || m.ToolCalls != 1 || res.Subagents != 0 {
		t.Errorf("alone: task %q, %d tool calls, %+v", m.Task, m.ToolCalls, res)
	}
	tr := transcript(st, "sa-1")
	for _, w := range []string{"[imported: history copied from the parent thread] user: Clean up the notes app.",
		"[imported: history copied from the parent thread] assistant: I will have a helper list the TODOs first.",
		"user  List the TODO comments in src.", "message  2 TODOs"} {
		if !strings.Contains(tr, w) {
			t.Errorf("transcript lacks %q:\n%s", w, tr)
		}
	}
	if !strings.Contains(notes(st), "spawned by thread 019c0a00-1111-7aaa-8bbb-000000000001, whose rollout was not imported") {
		t.Errorf("notes do not say the parent is missing:\n%s", notes(st))
	}

	// With its parent: the copy is the parent's, so the thread holds only its own work.
	st, _, _ = load(t, plan(t, filepath.Join(td, cxForkMain)))
	if got := tree(st); got != "sa-1 codex main <-  success\nsa-2 explorer Scout <- sa-1 success\n" {
		t.Errorf("tree %s", got)
	}
	if tr := transcript(st, "sa-2"); strings.Contains(tr, "Clean up") || strings.Count(tr, "tool_call") != 1 {
		t.Errorf("thread transcript holds the parent's history:\n%s", tr)
	}
	if tr := transcript(st, "sa-1"); !strings.Contains(tr, "user  Clean up the notes app.") || !strings.Contains(tr, "message  There are 2 TODOs") {
		t.Errorf("main transcript:\n%s", tr)
	}
	if !strings.Contains(notes(st), "3 lines a spawned thread's rollout copied from its parent") {
		t.Errorf("notes:\n%s", notes(st))
	}
}

func TestClaudeCodeSubagentFileAlone(t *testing.T) {
	p := filepath.Join(td, "claude/v2.1/-home-dev-shop/7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b/subagents/agent-a4f9e21.jsonl")
	us, errs := Plan([]string{p}, Auto)
	if len(errs) > 0 || len(us) != 1 {
		t.Fatalf("plan: %v %v", us, errs)
	}
	st, res, _ := load(t, us[0])
	if m := st.Subagent("sa-1"); m.Task != "Find where cart totals are rounded and report the file and line." || m.ToolCalls != 1 || res.Subagents != 0 {
		t.Errorf("alone: %+v %+v", m, res)
	}
	if res.SessionID == "s-claude-7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b" || len(res.Warnings) != 1 || !strings.Contains(notes(st), "[imported: parent missing] this is the transcript of subagent a4f9e21") {
		t.Errorf("alone result %+v notes %s", res, notes(st))
	}
}

func TestForcedFormatMismatch(t *testing.T) {
	claude := filepath.Join(td, ccAside+".jsonl")
	for _, c := range []struct {
		f    Format
		path string
		want string
	}{
		{Codex, claude, ": --format codex, but it looks like a claude session (Claude Code JSONL); use --format claude or auto"},
		{Gemini, filepath.Join(td, cxForkMain), ": --format gemini, but it looks like a codex session (Codex rollout JSONL)"},
		{Claude, filepath.Join(td, "bad/notjson.jsonl"), ": --format claude, but it is not a session file of a format summit imports"},
	} {
		us, errs := Plan([]string{c.path}, c.f)
		if len(us) != 0 || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), c.path+c.want) {
			t.Errorf("%s as %s: %v %v", c.path, c.f, us, errs)
		}
	}
	if us, errs := Plan([]string{claude}, Claude); len(us) != 1 || len(errs) != 0 {
		t.Errorf("a matching --format: %v %v", us, errs)
	}
}
