package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

var update = flag.Bool("update", false, "rewrite golden files")

func summit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

const rec = "../../testdata/recordings/"

func TestReplayPrintGolden(t *testing.T) {
	code, out, errOut := summit(t, "replay", rec+"valid.jsonl", "--print")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden := "testdata/valid.print.golden"
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, []byte(out), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/summit -update)", err)
	}
	if string(want) != out {
		t.Errorf("replay --print differs from %s:\n%s", golden, out)
	}
	// Deterministic: a second run prints the same bytes.
	if _, again, _ := summit(t, "replay", rec+"valid.jsonl", "--print"); again != out {
		t.Error("replay --print is not deterministic")
	}
	for _, want := range []string{"== tree ==", "cf-1", "resolved by", "== permissions ==", "handoff"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestInspectJSON(t *testing.T) {
	code, out, errOut := summit(t, "inspect", rec+"valid.jsonl", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m render.Metrics
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.SessionID == "" || m.Spawns != 3 || m.Events != 53 || m.Convergences != 1 || m.ConflictRate != 1 || m.Handoffs != 1 ||
		m.EventsByType["SubagentSpawned"] != 3 || len(m.ByAgentType) == 0 || m.DurationMS <= 0 {
		t.Errorf("metrics %+v", m)
	}
}

func TestExitCodesAndMessages(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"version", []string{"version"}, 0, ""},
		{"torn last line", []string{"inspect", rec + "torn.jsonl"}, 0, "torn last line"},
		{"unknown type", []string{"replay", rec + "unknown-type.jsonl", "--print"}, 0, `unknown event type "SubagentHeartbeat"`},
		{"malformed", []string{"inspect", rec + "malformed.jsonl"}, 1, "line 4:"},
		{"malformed lenient", []string{"inspect", rec + "malformed.jsonl", "--lenient"}, 0, "line 4"},
		{"future version", []string{"replay", rec + "future-version.jsonl", "--print"}, 1, "schema version 2 is newer"},
		{"missing file", []string{"inspect", filepath.Join(dir, "nope.jsonl")}, 1, "no such file"},
		{"no file", []string{"inspect"}, 2, "needs a recording FILE"},
		{"three files", []string{"inspect", "a", "b", "c"}, 2, "takes one FILE, or two to compare"},
		{"compare with a missing file", []string{"inspect", rec + "valid.jsonl", filepath.Join(dir, "nope.jsonl")}, 1, "nope.jsonl: no such file"},
		{"compare with a malformed file", []string{"inspect", rec + "valid.jsonl", rec + "malformed.jsonl"}, 1, "line 4:"},
		{"unknown flag", []string{"inspect", rec + "valid.jsonl", "--jsn"}, 2, "unknown flag: --jsn"},
		{"unknown command", []string{"inspct"}, 2, "unknown command"},
		{"replay without print", []string{"replay", rec + "valid.jsonl"}, 2, "needs a terminal"},
		{"bad speed", []string{"replay", rec + "valid.jsonl", "--speed", "0", "--print"}, 2, "--speed must be from 0.25 to 16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := summit(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.stderr) {
				t.Errorf("exit %d stderr %q; want exit %d containing %q", code, errOut, c.code, c.stderr)
			}
		})
	}
}

// TestFiveMegabyteLine: a recording whose one transcript line is 5 MB replays.
func TestFiveMegabyteLine(t *testing.T) {
	ts := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	evs := []session.Event{
		session.New("", session.SessionStarted{Schema: 1, PermissionMode: "plan"}),
		session.New("sa-1", session.SubagentSpawned{AgentType: "explore", TaskDescription: "big"}),
		session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: strings.Repeat("word ", 1<<20)}),
		session.New("", session.SessionEnded{Reason: "quit"}),
	}
	var buf []byte
	for i, e := range evs {
		e.Seq, e.TS, e.SessionID = uint64(i+1), ts, "s-big"
		var err error
		if buf, err = record.AppendLine(buf, e); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := summit(t, "replay", path, "--print")
	if code != 0 || len(out) < 5<<20 {
		t.Fatalf("exit %d, %d bytes out: %s", code, len(out), errOut)
	}
}

func TestAgentsCommands(t *testing.T) {
	code, out, errOut := summit(t, "agents", "list", "--json", "--workspace", t.TempDir())
	var defs []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &defs) != nil || len(defs) != 20 {
		t.Fatalf("list --json: exit %d, %d agents, %s", code, len(defs), errOut)
	}
	code, out, _ = summit(t, "agents", "show", "builder", "--workspace", t.TempDir())
	if code != 0 || !strings.Contains(out, "mode:        acceptEdits") || !strings.Contains(out, "# Tool restrictions") {
		t.Errorf("show builder: exit %d\n%s", code, out)
	}
	code, _, errOut = summit(t, "agents", "show", "buildr", "--workspace", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "did you mean builder?") {
		t.Errorf("show buildr: exit %d %s", code, errOut)
	}
	code, out, _ = summit(t, "agents", "validate", "../../agents/testdata/broken")
	if code != 1 || !strings.Contains(out, ": error: ") {
		t.Errorf("validate broken: exit %d\n%s", code, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if parts := strings.SplitN(line, ":", 4); len(parts) < 4 {
			t.Errorf("not file:line: level: message: %q", line)
		}
	}
	if code, _, errOut := summit(t, "agents", "validate", "no/such/dir"); code != 1 || !strings.Contains(errOut, "no such file") {
		t.Errorf("validate missing: exit %d %s", code, errOut)
	}
	corpus := "../../../shared/corpus/agents"
	if _, err := os.Stat(corpus); err == nil {
		code, out, errOut := summit(t, "agents", "validate", corpus)
		if !strings.Contains(errOut, "119 files") || code != 1 || strings.Contains(out, "panic") {
			t.Errorf("corpus: exit %d: %s", code, errOut)
		}
	}
}

// TestMain keeps the tests' worktrees and private git dirs (and every run of the binary they
// start, in tmux too) out of the user's cache dir.
func TestMain(m *testing.M) {
	cache, err := os.MkdirTemp("", "summit-test-cache-")
	if err != nil {
		panic(err)
	}
	// go build (the tmux tests build the binary) keeps its own cache where it was.
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && os.Getenv("GOCACHE") == "" {
		os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	testCache = cache
	// The workspace trust store (session/trust) of the tests, never the developer's.
	os.Setenv("XDG_DATA_HOME", filepath.Join(cache, "data"))
	// A developer's real keys must not turn the tests' sessions into paid model calls: with no
	// config, summit routes by the keys it finds (provider.FromEnvironment).
	for _, k := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		os.Unsetenv(k)
	}
	// As main does first thing: the commands run in this process (doctor reports it).
	if err := tools.HardenProcess(); err != nil {
		panic(err)
	}
	// The parallel tests mostly wait on processes they start (the binary in tmux, a served
	// run, git): by default Go runs only GOMAXPROCS of them at once, 2 on a 2-core machine,
	// which leaves the CPU idle while they wait. An explicit -parallel is kept.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	// The binary is built in the background while the in-process tests run, unless the run
	// is focused (-run, -list, -short), when only the tests that need it build it.
	focused := testing.Short()
	flag.Visit(func(f *flag.Flag) { focused = focused || f.Name == "test.run" || f.Name == "test.list" })
	if !focused {
		go builtBinary()
	}
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// Non-regular files are refused at once with a clear error, never read into a hang: a FIFO
// as a recording (replay, --print, inspect), a script, tapes, an agent file, and a FIFO agent
// file in the workspace's agent dir.
func TestFIFOsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no mkfifo here:", err)
	}
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".claude", "agents"), 0o755)
	syscall.Mkfifo(filepath.Join(ws, ".claude", "agents", "x.md"), 0o600)
	tapes := t.TempDir()
	syscall.Mkfifo(filepath.Join(tapes, "t.yaml"), 0o600)
	for _, args := range [][]string{
		{"replay", fifo, "--print"},
		{"inspect", fifo},
		{"agents", "validate", fifo},
		{"run", "--script", fifo, "--workspace", ws},
		{"run", "--script", "-", "--workspace", ws, "--tapes", tapes},
		{"run", "--script", "-", "--workspace", ws, "--tapes", fifo},
	} {
		done := make(chan struct{})
		var code int
		var out, errOut string
		go func() {
			code, out, errOut = summit(t, args...)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%v hung on a FIFO", args)
		}
		if code == 0 || !strings.Contains(out+errOut, "not a regular file") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// The workspace's FIFO agent file is a problem named in the catalogue, not a hang.
	done := make(chan struct{})
	go func() {
		_, out, _ := summit(t, "agents", "list", "--workspace", ws)
		_ = out
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("agents list hung on a FIFO agent file")
	}
}

// The input history keeps typed secrets redacted; --speed NaN is a usage error.
func TestHistoryRedactedAndSpeedNaN(t *testing.T) {
	ws := t.TempDir()
	save := saveHistory(ws)
	save(`/delegate "use key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" --agent-type builder`)
	b, _ := os.ReadFile(historyFile(ws))
	if strings.Contains(string(b), "AAAAAAAAAAAAAAAA") || len(b) == 0 {
		t.Errorf("history: %q", b)
	}
	if code, _, errOut := summit(t, "replay", "../../testdata/recordings/valid.jsonl", "--speed", "NaN"); code != 2 || !strings.Contains(errOut, "--speed") {
		t.Errorf("--speed NaN: exit %d %s", code, errOut)
	}
}
