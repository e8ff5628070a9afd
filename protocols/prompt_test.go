package protocols

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./protocols -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; run with -update if the change is intended\n--- got\n%s", path, got)
	}
}

func TestBuildPromptGolden(t *testing.T) {
	full := PromptInput{
		AgentName: "builder", AgentBody: "You are a careful implementer.", PermissionMode: "acceptEdits", Workspace: "/w",
		Tools: []string{"read_file", "glob", "write_file", "replace"}, Denied: []string{"run_shell_command"},
		InheritContext: true,
		Playbook:       []PlaybookItem{{ID: "pb-1", Section: "style", Content: "errors wrap with %w"}},
		Chain: []ChainLink{
			{SubagentID: "sa-1", AgentName: "analyzer", DownstreamContext: "- Integration Points: retry.go\n- Warnings: none"},
			{SubagentID: "sa-2", AgentName: "retriever"},
		},
		Task:     "Add a Retry helper to retry.go",
		Consumer: "the tester subagent that runs next",
	}
	golden(t, "prompt-full", BuildPrompt(full))
	golden(t, "prompt-readonly-nocontext", BuildPrompt(PromptInput{
		AgentName: "explore", AgentBody: "Read only.", PermissionMode: "plan", Tools: []string{"read_file", "glob"},
		Task: "Where is the config loaded?", Validation: []string{"Cite file:line for every claim."},
	}))
}

// TestBuildPromptOrder checks the section order of DESIGN §6 independently of the golden
// files, so regenerating them cannot hide a reordering.
func TestBuildPromptOrder(t *testing.T) {
	p := BuildPrompt(PromptInput{AgentBody: "BODY-MARK", Task: "TASK-MARK", InheritContext: true,
		Chain: []ChainLink{{SubagentID: "sa-1", AgentName: "a"}}})
	order := []string{"BODY-MARK", "\n# Agent base protocol\n", "\n# Filesystem safety protocol\n", "\n# Tool restrictions\n",
		"\n# Context from the session\n", MissingContext, "\n# Task\n", "TASK-MARK", "\n# Deliverables\n",
		"\n# Validation criteria\n", "\n# Prohibitions\n", "\n# Who reads your result\n"}
	last := -1
	for _, m := range order {
		i := strings.Index(p, m)
		if i < 0 || i < last {
			t.Fatalf("%q missing or out of order (at %d, previous at %d)", m, i, last)
		}
		last = i
	}
	if !strings.Contains(p, "Denied: task.") {
		t.Error("task is not denied when the caller forgot it")
	}
}
