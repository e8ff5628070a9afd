package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runWorkspace(t *testing.T) string {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

func runScript(t *testing.T, ws, script string, extra ...string) (int, string, string, string) {
	t.Helper()
	sf := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(sf, []byte(script), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	args := append([]string{"run", "--script", sf, "--workspace", ws, "--tapes", "../../session/live/testdata/tapes", "--record", rec}, extra...)
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String(), rec
}

// TestRunScript: stdout is exactly replay --print of the recording; progress is on stderr;
// exit codes follow DESIGN §10; escapes from a model never reach stdout raw.
func TestRunScript(t *testing.T) {
	t.Parallel()
	ws := runWorkspace(t)
	code, out, errOut, rec := runScript(t, ws, "/delegate \"change the greeting\" --agent-type builder\n/delegate escape test --agent-type analyzer\n/wait sa-1\n/apply sa-1\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "sa-1 spawned: builder") || strings.Contains(out, "spawned:") {
		t.Errorf("progress belongs on stderr:\n%s", errOut)
	}
	var replay, rerr bytes.Buffer
	if c := run([]string{"replay", rec, "--print"}, &replay, &rerr); c != 0 {
		t.Fatalf("replay exit %d: %s", c, rerr.String())
	}
	if replay.String() != out {
		t.Errorf("run stdout differs from replay --print:\n%s\n---\n%s", out, replay.String())
	}
	if strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `\x1b[2J`) {
		t.Errorf("escapes not shown escaped")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.go")); !strings.Contains(string(b), "hello, world") {
		t.Errorf("the builder's edit is missing: %s", b)
	}

	for _, c := range []struct {
		script string
		extra  []string
		code   int
		want   string
	}{
		{"/delegate x --agent-type nobody\n", nil, 1, "rejected"},
		{"/delegate the service is down --agent-type retriever\n", nil, 1, "did not succeed: sa-1"},
		{"/delegate run the shell --agent-type builder\n", []string{"--approve", "shell"}, 0, "granted --approve shell"},
		{"/delegate x --agent-type builder\n", []string{"--approve", "maybe"}, 2, `--approve "maybe"`},
		{"/delegate x --agent-type builder\n", []string{"--permission-mode", "god"}, 2, "--permission-mode"},
	} {
		code, _, errOut, _ := runScript(t, runWorkspace(t), c.script, c.extra...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q %v: exit %d, stderr:\n%s\nwant exit %d with %q", c.script, c.extra, code, errOut, c.code, c.want)
		}
	}
	var o, e bytes.Buffer
	if c := run([]string{"run"}, &o, &e); c != 2 || !strings.Contains(e.String(), "--script") {
		t.Errorf("no --script: %d %s", c, e.String())
	}
}
