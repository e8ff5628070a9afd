package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// summit run does not run an untrusted workspace's hooks, says so, and runs them with
// --trust-workspace (and its deprecated spelling --trust-hooks); the trust store and the user
// config are temp dirs.
func TestRunWorkspaceHooksTrust(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ws := runWorkspace(t)
	side := filepath.Join(t.TempDir(), "ran")
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	cfg := "hooks:\n  SubagentStart:\n    - command: echo start >> " + side + "\n"
	if err := os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "/delegate find markers --agent-type analyzer\n"
	code, out, errOut, _ := runScript(t, ws, script)
	if code != 0 || !strings.Contains(errOut, "workspace not trusted: ignored hooks (summit trust to enable)") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if _, err := os.Stat(side); err == nil || strings.Contains(out, "SubagentStart hook") {
		t.Fatalf("an untrusted workspace's hook ran")
	}
	code, out, errOut, _ = runScript(t, ws, script, "--trust-workspace")
	if b, _ := os.ReadFile(side); code != 0 || string(b) != "start\n" || !strings.Contains(out, "SubagentStart hook `echo start") {
		t.Fatalf("--trust-workspace: exit %d, ran %q\n%s\n%s", code, b, errOut, out)
	}
	code, _, errOut, _ = runScript(t, ws, script, "--trust-hooks")
	if b, _ := os.ReadFile(side); code != 0 || string(b) != "start\nstart\n" {
		t.Fatalf("--trust-hooks: exit %d, ran %q\n%s", code, b, errOut)
	}
	// A typo in the config is refused with file:line and the nearest event.
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("hooks:\n  SubagentStrat:\n    - command: x\n"), 0o644)
	code, _, errOut, _ = runScript(t, ws, script)
	if code != 2 || !strings.Contains(errOut, "config.yaml:2: hooks.SubagentStrat: not a hook event (did you mean SubagentStart?)") {
		t.Errorf("typo: exit %d\n%s", code, errOut)
	}
}

// The check, through the real binary: a Claude Code settings block (PreToolUse
// denying rm -rf by pattern, PostToolUse logging, Stop, Notification and an inert
// PreCompact) pasted as it is under hooks: in a trusted workspace's config. The session
// starts, the denied call is refused with the hook's reason (the model's tool error) and
// recorded, the log has every call that ran, Stop ran, PreCompact is named as no effect.
func TestRunClaudeCodeHooksBlock(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	data, cfgHome := t.TempDir(), t.TempDir()
	ws := runWorkspace(t)
	logs := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	block := `{
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "if grep -q 'rm -rf'; then echo 'rm -rf is not allowed in this repository' >&2; exit 2; fi"}
        ]
      }
    ],
    "PostToolUse": [
      {"matcher": "*", "hooks": [{"type": "command", "command": "cat >> ` + logs + `/tools.log; echo >> ` + logs + `/tools.log"}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "cat > ` + logs + `/stop.json"}]}],
    "Notification": [{"hooks": [{"type": "command", "command": "cat >> ` + logs + `/notify.log"}]}],
    "PreCompact": [{"hooks": [{"type": "command", "command": "true"}]}]
  }`
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("hooks: "+block+"\n"), 0o644)
	tapes := t.TempDir()
	os.WriteFile(filepath.Join(tapes, "t.yaml"), []byte(`tapes:
  - name: hooked
    match: {agent: builder, task: "(?i)clean"}
    steps:
      - tool: run_shell_command
        args: {command: "rm -rf build"}
      - tool: run_shell_command
        args: {command: "echo kept"}
      - tool: read_file
        args: {path: main.go}
      - capsule: {summary: "cleaned"}
`), 0o644)
	env := append(os.Environ(), "XDG_DATA_HOME="+data, "XDG_CONFIG_HOME="+cfgHome)
	// Trusted as a user does it: summit trust.
	trust := exec.Command(bin, "trust", ws)
	trust.Env = env
	if out, err := trust.CombinedOutput(); err != nil || !strings.Contains(string(out), "hooks.PreToolUse: runs") {
		t.Fatalf("summit trust: %v\n%s", err, out)
	}
	check := exec.Command(bin, "hooks", "check", filepath.Join(ws, ".summit", "config.yaml"))
	if out, err := check.CombinedOutput(); err != nil || !strings.Contains(string(out), "4 hooks (Notification, PostToolUse, PreToolUse, Stop), no mistakes") ||
		!strings.Contains(string(out), "PreCompact has no counterpart in summit: this hook has no effect") {
		t.Fatalf("hooks check: %v\n%s", err, out)
	}
	sf := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(sf, []byte("/delegate \"clean the build\" --agent-type builder\n/wait sa-1\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	cmd := exec.Command(bin, "run", "--script", sf, "--workspace", ws, "--tapes", tapes, "--record", rec, "--approve", "shell")
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("summit run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "PreCompact has no counterpart in summit") {
		t.Errorf("no warning for PreCompact:\n%s", stderr.String())
	}
	recorded, _ := os.ReadFile(rec)
	var denied, toolErr, hookRan bool
	for _, line := range strings.Split(string(recorded), "\n") {
		switch {
		case strings.Contains(line, `"type":"PermissionDenied"`) && strings.Contains(line, "rm -rf is not allowed in this repository") && strings.Contains(line, "PreToolUse hook"):
			denied = true
		case strings.Contains(line, `"event_type":"tool_result"`) && strings.Contains(line, "rm -rf is not allowed in this repository") && strings.Contains(line, `"is_error":true`):
			toolErr = true
		case strings.Contains(line, `"type":"HookRan"`) && strings.Contains(line, `"hook_event":"PreToolUse"`) && strings.Contains(line, `"outcome":"blocked"`) && strings.Contains(line, `"decision":"deny"`):
			hookRan = true
		}
	}
	if !denied || !toolErr || !hookRan {
		t.Errorf("denied %v, tool error %v, HookRan %v in the recording:\n%s", denied, toolErr, hookRan, recorded)
	}
	log, _ := os.ReadFile(filepath.Join(logs, "tools.log"))
	var names []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var in struct {
			Event    string         `json:"hook_event_name"`
			Tool     string         `json:"tool_name"`
			Alias    string         `json:"tool_alias"`
			Input    map[string]any `json:"tool_input"`
			Response map[string]any `json:"tool_response"`
			Session  string         `json:"session_id"`
			Cwd      string         `json:"cwd"`
		}
		if err := json.Unmarshal([]byte(l), &in); err != nil || in.Event != "PostToolUse" || in.Session == "" || in.Cwd == "" || in.Response == nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		names = append(names, in.Tool+"/"+in.Alias)
	}
	if got := strings.Join(names, ","); got != "run_shell_command/Bash,read_file/Read" {
		t.Errorf("the log has %s, want the two calls that ran", got)
	}
	if b, err := os.ReadFile(filepath.Join(logs, "stop.json")); err != nil || !strings.Contains(string(b), `"hook_event_name":"Stop"`) || !strings.Contains(string(b), `"stop_hook_active":false`) {
		t.Errorf("Stop hook: %v %s", err, b)
	}
}

// The README's summit hooks check example is what summit prints for its file.
func TestREADMEHooksCheck(t *testing.T) {
	const file = "testdata/hooks/claude-settings.json"
	var out, errb strings.Builder
	if code := run([]string{"hooks", "check", "../../" + file}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	got := strings.ReplaceAll(errb.String()+out.String(), "../../"+file, file)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "$ summit hooks check "+file+"\n"+got) {
		t.Errorf("README's example differs from:\n%s", got)
	}
	// A misspelt event is refused at file:line with the nearest name.
	bad := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(bad, []byte("{\n  \"hooks\": {\n    \"PreToolUs\": []\n  }\n}\n"), 0o644)
	errb.Reset()
	if code := run([]string{"hooks", "check", bad}, &out, &errb); code != 1 || !strings.Contains(errb.String(), bad+":3: hooks.PreToolUs: not a hook event (did you mean PreToolUse?)") {
		t.Errorf("typo: exit %d\n%s", code, errb.String())
	}
}

// TestWorkbenchHookWarnings: a pasted Claude Code block with an event summit has no
// counterpart for starts the workbench (trusted), and the notice line says that entry has no
// effect and where to see it, as summit run says it on stderr.
func TestWorkbenchHookWarnings(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws := runWorkspace(t)
	data, cfgHome := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".summit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte(`hooks: {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],
  "PreCompact": [{"hooks": [{"type": "command", "command": "true"}]}]
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := "XDG_DATA_HOME=" + data + " XDG_CONFIG_HOME=" + cfgHome + " XDG_CACHE_HOME=" + t.TempDir()
	trust := exec.Command(bin, "trust", ws)
	trust.Env = append(os.Environ(), "XDG_DATA_HOME="+data, "XDG_CONFIG_HOME="+cfgHome)
	if out, err := trust.CombinedOutput(); err != nil {
		t.Fatalf("summit trust: %v\n%s", err, out)
	}
	tm := newTerm(t, 200, 40, "cd "+ws+" && "+env+" "+bin+"; sleep 60")
	tm.waitFor(`1 hook entry of the config has no effect \(Claude Code events summit lacks\): summit hooks check names them`, 20*time.Second)
	tm.keys("/quit", "Enter")
}
