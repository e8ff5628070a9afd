package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session/runners/natstest"
)

func natsServer(t *testing.T) string { return natstest.Start(t) }

// startRunnerProc starts the built binary as `summit runner` and waits for its ready line.
func startRunnerProc(t *testing.T, url, name, key string) *exec.Cmd {
	t.Helper()
	return startRunnerWith(t, url, name, key, os.Environ(), "--tapes", "../../agents/provider/tapes")
}

// startRunnerWith is startRunnerProc with the runner's environment and further flags.
func startRunnerWith(t *testing.T, url, name, key string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := builtBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"runner", "--nats", url, "--insecure", "--name", name, "--trust", key}, args...)...)
	cmd.Env = env
	errp, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(errp)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "runner "+name+" ready") {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the runner exited before it was ready")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the runner was not ready within 60 s")
	}
	return cmd
}

func runnerWorkspace(t *testing.T) string {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		c := exec.Command("git", args...)
		c.Dir = ws
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return ws
}

type recLine struct {
	Seq        uint64          `json:"seq"`
	Type       string          `json:"type"`
	SubagentID string          `json:"subagent_id"`
	Data       json.RawMessage `json:"data"`
}

func readRecording(t *testing.T, path string) []recLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []recLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r recLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("recording line %q: %v", l, err)
		}
		out = append(out, r)
	}
	for i := 1; i < len(out); i++ {
		if out[i].Seq != out[i-1].Seq+1 {
			t.Fatalf("recording seqs %d then %d: a gap or a duplicate", out[i-1].Seq, out[i].Seq)
		}
	}
	return out
}

// Two subagents placed with --on any on a real `summit runner` process run there: their
// events are in the local recording once each with the runner named, and they read the
// session's base (the workspace's file).
func TestRunnerDelegateOnAny(t *testing.T) {
	forkEnv(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url := natsServer(t)
	code, key, errOut := summit(t, "runner", "key")
	key = strings.TrimSpace(key)
	if code != 0 || !strings.HasPrefix(key, "U") {
		t.Fatalf("runner key: %d %q %s", code, key, errOut)
	}
	startRunnerProc(t, url, "r1", key)
	ws := runnerWorkspace(t)
	script := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(script, []byte("/delegate \"map the repository\" --agent-type explore --on any\n/delegate \"map it again\" --agent-type explore --on r1\n/runners\n/wait sa-1 sa-2\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--nats", url, "--insecure",
		"--tapes", "../../agents/provider/tapes", "--approve", "all", "--record", rec)
	if code != 0 {
		t.Fatalf("summit run exits %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "r1  ") || !strings.Contains(errOut, "1 runner at") {
		t.Errorf("/runners does not list r1:\n%s", errOut)
	}
	lines := readRecording(t, rec)
	placed, stops := 0, 0
	sawBase := map[string]bool{} // the glob's result names the base's file
	for _, l := range lines {
		d := string(l.Data)
		switch {
		case l.Type == "SubagentSpawned" && strings.Contains(d, `"runner":"r1"`):
			placed++
		case l.Type == "TranscriptEvent" && strings.Contains(d, "a.txt") && !strings.Contains(d, "map "):
			sawBase[l.SubagentID] = true
		case l.Type == "SubagentStop" && strings.Contains(d, `"outcome":"success"`):
			stops++
		}
	}
	if globbed := len(sawBase); placed != 2 || globbed != 2 || stops != 2 {
		t.Fatalf("placed %d (runner r1 in SubagentSpawned), saw the base %d times, %d successes; want 2 each\n%s", placed, len(sawBase), stops, out)
	}
}

// A runner killed with SIGKILL: the subagent placed on it fails naming it within 15 s.
func TestRunnerKilledFailsNamingIt(t *testing.T) {
	forkEnv(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url := natsServer(t)
	_, key, _ := summit(t, "runner", "key")
	cmd := startRunnerProc(t, url, "doomed", strings.TrimSpace(key))
	_ = cmd.Process.Kill() // kill -9: its lease is still there, then expires
	_ = cmd.Wait()
	ws := runnerWorkspace(t)
	script := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(script, []byte("/delegate \"map the repository\" --agent-type explore --on doomed\n/wait sa-1\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	start := time.Now()
	code, out, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--nats", url, "--insecure",
		"--tapes", "../../agents/provider/tapes", "--approve", "all", "--record", rec)
	took := time.Since(start)
	if code != 1 {
		t.Fatalf("summit run exits %d, want 1 (a subagent failed)\n%s\n%s", code, out, errOut)
	}
	if took > 15*time.Second {
		t.Errorf("the failure took %s, want within 15 s", took)
	}
	failed := false
	for _, l := range readRecording(t, rec) {
		if l.Type == "SubagentError" && strings.Contains(string(l.Data), "runner doomed is gone") {
			failed = true
		}
	}
	if !failed {
		t.Fatalf("no SubagentError naming the runner:\n%s", out)
	}
}

// runners: in the user's config connects the session as --nats does: `summit run` with no
// --nats places a subagent on the runner the config's server holds; a bad URL there is named
// at its file:line and nothing runs.
func TestRunnerFromUserConfig(t *testing.T) {
	forkEnv(t)
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	url := natsServer(t)
	code, key, errOut := summit(t, "runner", "key")
	if key = strings.TrimSpace(key); code != 0 {
		t.Fatalf("runner key: %d %s", code, errOut)
	}
	startRunnerProc(t, url, "cfg-1", key)
	os.MkdirAll(filepath.Join(cfgHome, "summit"), 0o700)
	cfgFile := filepath.Join(cfgHome, "summit", "config.yaml")
	os.WriteFile(cfgFile, []byte("runners:\n  nats: "+url+"\n  insecure: true\n"), 0o600)
	ws := runnerWorkspace(t)
	script := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(script, []byte("/delegate \"map the repository\" --agent-type explore --on any\n/wait sa-1\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", script, "--workspace", ws,
		"--tapes", "../../agents/provider/tapes", "--approve", "all", "--record", rec)
	if code != 0 {
		t.Fatalf("summit run exits %d\n%s\n%s", code, out, errOut)
	}
	placed := 0
	for _, l := range readRecording(t, rec) {
		if l.Type == "SubagentSpawned" && strings.Contains(string(l.Data), `"runner":"cfg-1"`) {
			placed++
		}
	}
	if placed != 1 {
		t.Fatalf("%d subagents placed on cfg-1 through the config's runners:, want 1\n%s", placed, errOut)
	}
	os.WriteFile(cfgFile, []byte("\nrunners:\n  nats: http://"+strings.TrimPrefix(url, "nats://")+"\n"), 0o600)
	code, _, errOut = summit(t, "run", "--script", script, "--workspace", ws, "--tapes", "../../agents/provider/tapes", "--no-record")
	if code == 0 || !strings.Contains(errOut, cfgFile+":2: runners: nats:") || strings.Contains(errOut, "placed on runner") {
		t.Fatalf("a bad runners.nats: exit %d\n%s", code, errOut)
	}
}
