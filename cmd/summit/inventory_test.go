package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// An agent file a subagent writes (and /apply lands) during a session does not take effect in
// that session; the next session names it, records it in SessionStarted, and only then can it
// be delegated to. A config file changed between sessions is named too.
func TestAgentFilesTakeEffectNextSession(t *testing.T) {
	ws := runWorkspace(t)
	tapes := t.TempDir()
	os.WriteFile(filepath.Join(tapes, "plant.yaml"), []byte(`tapes:
  - name: plant
    match: {agent: builder, task: plant}
    steps:
      - tool: write_file
        args:
          path: .claude/agents/planted.md
          content: "---\nname: planted\ndescription: Planted during a session.\ntools: [read_file]\n---\nRead files.\n"
      - capsule: {summary: "planted an agent"}
  - name: planted
    match: {agent: planted}
    steps:
      - capsule: {summary: "the planted agent ran"}
`), 0o644)
	session1 := func(script string) (int, string, string, string) {
		t.Helper()
		sf := filepath.Join(t.TempDir(), "s.summit")
		os.WriteFile(sf, []byte(script), 0o644)
		rec := filepath.Join(t.TempDir(), "rec.jsonl")
		var out, errb bytes.Buffer
		code := run([]string{"run", "--script", sf, "--workspace", ws, "--tapes", tapes, "--record", rec}, &out, &errb)
		return code, out.String(), errb.String(), rec
	}
	code, _, errOut, _ := session1("/delegate plant --agent-type builder\n/wait sa-1\n/apply sa-1\n/delegate go --agent-type planted\n")
	if code != 1 || !strings.Contains(errOut, `unknown agent type "planted"`) {
		t.Fatalf("the planted agent took effect in the session that wrote it (exit %d):\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, ".claude", "agents", "planted.md")); err != nil {
		t.Fatalf("the /apply did not land the file: %v", err)
	}
	if strings.Contains(errOut, "changed since the last session") {
		t.Errorf("the first session named changes:\n%s", errOut)
	}
	// File times come from the kernel's coarse clock, a few ms behind time.Now: a file
	// written at once after a session ended can carry a time inside it.
	time.Sleep(50 * time.Millisecond)
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o700)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("web_allow_hosts: [docs.internal]\n"), 0o600)

	code, _, errOut, rec := session1("/delegate go --agent-type planted\n/wait sa-1\n")
	if code != 0 {
		t.Fatalf("the planted agent is not in effect in the next session (exit %d):\n%s", code, errOut)
	}
	want := "summit: 2 agent or config files changed since the last session, in effect from now: .claude/agents/planted.md (new, while session "
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, ".summit/config.yaml (new)") {
		t.Errorf("the next session does not name the files:\n%s", errOut)
	}
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := evs[0].Data.(session.SessionStarted)
	if len(st.ChangedFiles) != 2 || st.ChangedFiles[0].Path != filepath.Join(ws, ".claude", "agents", "planted.md") ||
		st.ChangedFiles[0].Change != session.FileNew || st.ChangedFiles[0].During == "" || st.ChangedFiles[1].During != "" {
		t.Errorf("SessionStarted.changed_files = %+v", st.ChangedFiles)
	}
	// A third session with nothing changed names nothing.
	if _, _, errOut, _ = session1("/status\n"); strings.Contains(errOut, "changed since the last session") {
		t.Errorf("an unchanged workspace named changes:\n%s", errOut)
	}
}
