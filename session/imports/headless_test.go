package imports

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

func TestHeadlessOutputs(t *testing.T) {
	for _, c := range []struct {
		file   string
		format Format
		tree   string
	}{
		{"claude-p-stream-verbose.jsonl", Claude, "sa-1 claude-code main <-  success\nsa-2 general-purpose Check tests <- sa-1 success\n"},
		{"claude-p-stream.jsonl", Claude, "sa-1 claude-code main <-  failure\n"},
		{"codex-exec.jsonl", Codex, "sa-1 codex main <-  success\nsa-2 codex 0199f000-aaaa-7bbb-8ccc-eeeeeeeeeeee <- sa-1 success\n"},
		{"gemini-p-stream.jsonl", Gemini, "sa-1 gemini-cli main <-  success\n"},
	} {
		p := filepath.Join(td, "headless", c.file)
		if f, err := Detect(p); f != c.format || err != nil {
			t.Errorf("%s: detected %q %v", c.file, f, err)
		}
		st, _, _ := load(t, plan(t, p))
		if got := tree(st); got != c.tree {
			t.Errorf("%s tree:\n%s\nwant:\n%s", c.file, got, c.tree)
		}
		if st.StartedAt.Before(mustTS("2026-01-01T00:00:00Z")) {
			t.Errorf("%s starts %v", c.file, st.StartedAt)
		}
		main := st.Subagent("sa-1")
		switch c.file {
		case "claude-p-stream-verbose.jsonl":
			sub := st.Subagent("sa-2")
			if sub.ToolCalls != 1 || sub.Task != "Run the tests and report failures." || sub.Tokens != (session.Tokens{Input: 460, Output: 21}) || sub.Route.Model != "claude-haiku-4-5-20251001" {
				t.Errorf("subagent %+v", sub)
			}
			if tr := transcript(st, "sa-2"); !strings.Contains(tr, "tool_result Bash 2 passing, 1 failing") || !strings.Contains(tr, "message  One failure") {
				t.Errorf("subagent transcript:\n%s", tr)
			}
			if main.ToolCalls != 1 || st.Info.Workspace != "/home/ci/app" || main.Route.Model != "claude-sonnet-4-6" {
				t.Errorf("main %+v ws %q", main, st.Info.Workspace)
			}
			if tr := transcript(st, "sa-1"); strings.Contains(tr, "Bash") || !strings.Contains(tr, "[imported: result] success after 3 turns") {
				t.Errorf("main transcript:\n%s", tr)
			}
		case "claude-p-stream.jsonl":
			if tr := transcript(st, "sa-1"); !strings.Contains(tr, "message  Version 1.4.2.") {
				t.Errorf("transcript:\n%s", tr)
			}
		case "codex-exec.jsonl":
			if main.Tokens != (session.Tokens{Input: 5000, Output: 400}) || main.ToolCalls != 3 || main.Changes == nil || len(main.Changes.Files) != 2 || main.Changes.Files[1].Kind != session.ChangeAdded {
				t.Errorf("main %+v changes %+v", main, main.Changes)
			}
			if st.Subagent("sa-2").Task != "Find why cart.test.js fails." {
				t.Errorf("spawned %+v", st.Subagent("sa-2"))
			}
			tr := transcript(st, "sa-1")
			for _, w := range []string{"thinking  **Planning**", "tool_call shell ", "tool_result shell 1 failing", "message  Fixed rounding"} {
				if !strings.Contains(tr, w) {
					t.Errorf("lacks %q:\n%s", w, tr)
				}
			}
		case "gemini-p-stream.jsonl":
			tr := transcript(st, "sa-1")
			if main.Tokens != (session.Tokens{Input: 1200, Output: 100}) || !strings.Contains(tr, "message  src holds cart.js and round.js.\n") || !strings.Contains(tr, "tool_result list_directory Listed 2") {
				t.Errorf("main %+v\n%s", main, tr)
			}
		}
	}
}
