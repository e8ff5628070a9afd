package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// The real agents, confined, with their state where a user's is: under HOME, with no
// CLAUDE_CONFIG_DIR or GEMINI_CLI_HOME pointing elsewhere (the other real-agent tests move it
// to a directory of its own, which is then writable whole). HOME itself is not writable (the
// workspace usually lies below it): what the built-in's writable set names must be enough.

// Claude Code writes its sessions under ~/.claude; ~/.claude.json, beside it in HOME, stays
// as the user had it (Claude Code cannot replace it, and runs on without saving it).
func TestACPRealClaudeCodeUserHome(t *testing.T) {
	bin := realClaude(t)
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: the agent process cannot be confined here")
	}
	c := newRealCase(t)
	wt := filepath.Join(c.cache, "worktrees", "s-test", "sa-1")
	srv := newTapeServer(t, strings.ReplaceAll(realClaudeTape, "WORKTREE", wt), "claude.yaml")
	home := t.TempDir()
	const global = `{"numStartups": 3, "hasCompletedOnboarding": true}`
	write(t, home, ".claude.json", global)
	c.config(map[string]any{"claude-real": map[string]any{"command": bin, "env": map[string]string{
		"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": "test-key-not-secret-e2e",
		"ANTHROPIC_MODEL": "summit-main", "ANTHROPIC_SMALL_FAST_MODEL": "summit-fast",
		"ANTHROPIC_DEFAULT_OPUS_MODEL": "summit-main", "ANTHROPIC_DEFAULT_SONNET_MODEL": "summit-main",
		"ANTHROPIC_DEFAULT_HAIKU_MODEL": "summit-fast", "HOME": home,
		"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}}})
	o := c.live(nil, "/delegate write greeting.txt saying hello --agent-type claude-real", "/wait sa-1")
	checkUserHomeRun(t, c, o, []string{"built.txt added", "greeting.txt added"})
	if b, _ := os.ReadFile(filepath.Join(home, ".claude.json")); string(b) != global {
		t.Errorf("~/.claude.json changed: %s", b)
	}
	sessions, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	if len(sessions) == 0 {
		t.Error("Claude Code kept no session under ~/.claude/projects")
	}
	checkHomeHolds(t, home, ".claude", ".claude.json")
}

// Gemini CLI keeps its state in ~/.gemini, which summit creates for a fresh account (the agent
// could not: HOME is not writable).
func TestACPRealGeminiCLIUserHome(t *testing.T) {
	bin := realNPMAgent(t, realGeminiPkg, realGeminiVersion, realGeminiBin, realGeminiBroken == "")
	if !tools.ConfinementAvailable() {
		t.Skip("this kernel has no Landlock: the agent process cannot be confined here")
	}
	c := newRealCase(t)
	srv := newTapeServer(t, realGeminiTape, "gemini.yaml")
	home := t.TempDir()
	c.config(map[string]any{"gemini-real": map[string]any{"command": bin, "args": []string{"--acp"}, "env": map[string]string{
		"GOOGLE_GEMINI_BASE_URL": srv.URL, "GEMINI_API_KEY": "test-key-not-secret-e2e", "GEMINI_MODEL": "summit-main",
		"HOME": home, "GEMINI_CLI_NO_RELAUNCH": "true", "GEMINI_TELEMETRY_ENABLED": "false", "GEMINI_CLI_TRUST_WORKSPACE": "true",
	}}})
	o := c.live(nil, "/delegate write greeting.txt saying hello --agent-type gemini-real", "/wait sa-1")
	checkUserHomeRun(t, c, o, []string{"built.txt added", "greeting.txt added"})
	if _, err := os.Stat(filepath.Join(home, ".gemini", "projects.json")); err != nil {
		t.Errorf("Gemini CLI kept no state under ~/.gemini: %v", err)
	}
	checkHomeHolds(t, home, ".gemini")
}

// checkUserHomeRun checks that the delegation succeeded with exactly these changes in its
// worktree, and nothing in the main workspace.
func checkUserHomeRun(t *testing.T, c *acpCase, o outcome, changes []string) {
	t.Helper()
	st := o.stop(t, "sa-1")
	if st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "wrote greeting.txt" {
		for _, e := range o.events {
			if e.SubagentID != "" {
				t.Logf("%s %+v", e.Type, e.Data)
			}
		}
		t.Fatalf("stop: %+v", st)
	}
	var paths []string
	for _, f := range o.changes(t, "sa-1").Files {
		paths = append(paths, f.Path+" "+f.Kind)
	}
	if strings.Join(paths, ",") != strings.Join(changes, ",") {
		t.Errorf("changes: %v", paths)
	}
	for _, name := range []string{"greeting.txt", "built.txt"} {
		if _, err := os.Stat(filepath.Join(c.ws, name)); err == nil {
			t.Errorf("the agent wrote %s in the main workspace", name)
		}
	}
}

// checkHomeHolds checks that HOME holds only these entries.
func checkHomeHolds(t *testing.T, home string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(home)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("HOME holds %v, want %v", got, names)
	}
}
