package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// runnerEnv is this process's environment for a runner, with a config directory of its own
// (so it has no agent files, config or key of the session's user) and extra variables.
func runnerEnv(t *testing.T, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "XDG_CONFIG_HOME="+t.TempDir()), extra...)
}

// watchJobs keeps the body of every job placed through the NATS server at url.
func watchJobs(t *testing.T, url string) func() []string {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var mu sync.Mutex
	var jobs []string
	if _, err := nc.Subscribe("summit.jobs.*", func(m *nats.Msg) {
		mu.Lock()
		jobs = append(jobs, string(m.Data))
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	return func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), jobs...) }
}

func recordingEvents(t *testing.T, rec string) []session.Event {
	t.Helper()
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// The job carries the agent's effective definition: an agent only the session's user has (its
// --agents directory) runs on a runner that has no copy of it; with --inherit-context the job
// brings the context chain (the finished sa-1).
func TestRunnerRunsTheJobsAgent(t *testing.T) {
	forkEnv(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url := natsServer(t)
	_, key, _ := summit(t, "runner", "key")
	dir := t.TempDir()
	tapes := filepath.Join(dir, "tapes.yaml")
	os.WriteFile(tapes, []byte(`tapes:
  - name: mapper-on-the-runner
    match: {agent: mapper}
    steps:
      - tool: glob
        args: {pattern: "*.txt"}
      - capsule: {summary: "mapped with the job's own definition", confidence: 0.8}
`), 0o644)
	agentsDir := filepath.Join(dir, "agents")
	os.MkdirAll(agentsDir, 0o755)
	os.WriteFile(filepath.Join(agentsDir, "mapper.md"), []byte("---\nname: mapper\ndescription: Maps files.\ntools: [glob]\n---\nYou map the files of the workspace.\n"), 0o644)
	startRunnerWith(t, url, "r-def", strings.TrimSpace(key), runnerEnv(t), "--tapes", tapes)
	jobs := watchJobs(t, url)
	ws := runnerWorkspace(t)
	script := filepath.Join(dir, "s.summit")
	os.WriteFile(script, []byte("/delegate \"map the files\" --agent-type mapper\n/wait sa-1\n"+
		"/delegate \"map the files\" --agent-type mapper --inherit-context --on r-def\n/wait sa-2\n"), 0o644)
	rec := filepath.Join(dir, "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--agents", agentsDir, "--tapes", tapes,
		"--nats", url, "--insecure", "--approve", "all", "--record", rec)
	if code != 0 {
		t.Fatalf("summit run exits %d\n%s\n%s", code, out, errOut)
	}
	var stop *session.SubagentStop
	globbed := false
	for _, e := range recordingEvents(t, rec) {
		switch d := e.Data.(type) {
		case session.SubagentStop:
			stop = &d
		case session.TranscriptEvent:
			globbed = globbed || d.EventType == session.TranscriptToolResult && strings.Contains(d.Result, "a.txt")
		}
	}
	if stop == nil || stop.Outcome != session.OutcomeSuccess || stop.Capsule == nil || stop.Capsule.Summary != "mapped with the job's own definition" || !globbed {
		t.Fatalf("stop %+v, glob result seen %v\n%s", stop, globbed, out)
	}
	js := jobs()
	if len(js) != 1 || !strings.Contains(js[0], `"body":"You map the files of the workspace.\n"`) || !strings.Contains(js[0], `"tools":["glob"]`) ||
		!strings.Contains(js[0], `"context":{"chain":[{"subagent_id":"sa-1","agent_name":"mapper"}]}`) || strings.Contains(js[0], agentsDir) {
		t.Fatalf("the job: %v", js)
	}
}

// An ACP agent runs on a runner: its command line comes in the job (env entries that name a
// variable, never a value), the runner's session drives it, and its file comes home as git.
func TestRunnerRunsACPAgent(t *testing.T) {
	forkEnv(t)
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	dir := t.TempDir()
	bin := fakeAgent(t)
	agentScript := filepath.Join(dir, "agent.script")
	os.WriteFile(agentScript, []byte("say Hello from the runner.\nwrite note.txt written on the runner\\n\n"+
		"say Done.\\n```json\\n{\"agent_name\": \"fake\", \"summary\": \"wrote note.txt\", \"confidence\": 0.9}\\n```\n"), 0o644)
	os.MkdirAll(filepath.Join(cfgHome, "summit"), 0o700)
	os.WriteFile(filepath.Join(cfgHome, "summit", "config.yaml"), []byte("acp_agents:\n  fake:\n    command: "+bin+
		"\n    env: {FAKE_ACP_SCRIPT: $FAKE_ACP_SCRIPT, FAKE_ACP_NAME: sk-literal-value}\n"), 0o600)
	url := natsServer(t)
	_, key, _ := summit(t, "runner", "key")
	startRunnerWith(t, url, "r-acp", strings.TrimSpace(key), runnerEnv(t, "FAKE_ACP_SCRIPT="+agentScript), "--tapes", "../../agents/provider/tapes")
	jobs := watchJobs(t, url)
	ws := runnerWorkspace(t)
	script := filepath.Join(dir, "s.summit")
	os.WriteFile(script, []byte("/delegate \"write a note\" --agent-type fake --on r-acp\n/wait sa-1\n/apply sa-1\n"), 0o644)
	rec := filepath.Join(dir, "rec.jsonl")
	code, out, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--nats", url, "--insecure",
		"--tapes", "../../agents/provider/tapes", "--approve", "all", "--record", rec)
	if code != 0 {
		t.Fatalf("summit run exits %d\n%s\n%s", code, out, errOut)
	}
	var stop *session.SubagentStop
	hello, changed := false, false
	for _, e := range recordingEvents(t, rec) {
		switch d := e.Data.(type) {
		case session.SubagentStop:
			stop = &d
		case session.TranscriptEvent:
			hello = hello || strings.Contains(d.Text, "Hello from the runner.")
		case session.SubagentChanges:
			for _, f := range d.Files {
				changed = changed || f.Path == "note.txt"
			}
		}
	}
	if stop == nil || stop.Outcome != session.OutcomeSuccess || stop.Capsule == nil || stop.Capsule.Summary != "wrote note.txt" || !hello || !changed {
		t.Fatalf("stop %+v, hello %v, note.txt changed %v\n%s\n%s", stop, hello, changed, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "note.txt")); err != nil || string(b) != "written on the runner\n" {
		t.Fatalf("/apply: note.txt = %q, %v", b, err)
	}
	js := jobs()
	if len(js) != 1 || !strings.Contains(js[0], `"kind":"acp"`) || !strings.Contains(js[0], `"command":"`+bin+`"`) ||
		!strings.Contains(js[0], `"FAKE_ACP_SCRIPT":"$FAKE_ACP_SCRIPT"`) || strings.Contains(js[0], "sk-literal-value") ||
		!strings.Contains(js[0], `"env":["FAKE_ACP_SCRIPT"]`) {
		t.Fatalf("the job: %v", js)
	}
}
