package live

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/mcp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/hooks"
	"github.com/summit-dev/summit/session/record"
)

// harness runs scripts on the test tapes in a fresh workspace.
type harness struct {
	t       *testing.T
	ws      string
	rec     string
	approve string
	cap     int
	real    bool
	ceiling agents.PermissionMode // "" = acceptEdits
	cache   string                // worktrees and private git dirs
	tapes   string                // "" = testdata/tapes
	hooks   *hooks.Runner         // the session's hooks (nil = none)
	tweak   func(*Options)        // changes the options before Start (nil = none)
}

func newHarness(t *testing.T) *harness {
	ws := t.TempDir()
	write(t, ws, "main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\") // TODO: say more\n}\n")
	write(t, ws, "main_test.go", "package main\n")
	// A file outside the workspace that no tool may read.
	write(t, filepath.Dir(ws), "outside.txt", "secret outside")
	return &harness{t: t, ws: ws, rec: filepath.Join(t.TempDir(), "rec.jsonl"), approve: ApproveNone, cache: t.TempDir()}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type outcome struct {
	exit     int
	events   []session.Event
	state    *session.State
	progress string
	x        *Orchestrator
}

func (h *harness) start(clock Clock) *Orchestrator {
	h.t.Helper()
	dir := h.tapes
	if dir == "" {
		dir = "testdata/tapes"
	}
	tapes, err := provider.LoadTapes(dir)
	if err != nil {
		h.t.Fatal(err)
	}
	script := provider.NewScript(provider.ScriptConfig{Tapes: tapes, Sleep: clock.Sleep, Now: clock.Now})
	rec, err := record.OpenRecorderFile(h.rec, record.RecorderOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	// The harness trusts its workspace, as cmd/summit does once the user has (session/trust):
	// the session itself reads no config file.
	// A config that does not load means none here (a test may plant a bogus user config).
	cfg, _ := provider.LoadConfig(h.ws, acpUserConfigDir())
	var m *mcp.Manager
	if len(cfg.MCPServers) > 0 {
		m = mcp.NewManager(cfg.MCPServers, mcp.Options{Dir: h.ws})
	}
	o := Options{
		ACPAgents: cfg.ACPAgents, Remotes: cfg.Remotes, MCP: m,
		Workspace: h.ws, SessionID: "s-test", ProgramVersion: "test", Clock: clock, Recorder: rec,
		Catalogue:    agents.Load(agents.Options{Workspace: h.ws}),
		Route:        func(*agents.Definition) (provider.Provider, string, error) { return script, "", nil },
		ProviderName: "script", Approve: h.approve, MaxParallel: h.cap, Ceiling: h.ceiling,
		Backoff:  func(int) time.Duration { return time.Millisecond },
		CacheDir: h.cache,
		Hooks:    h.hooks,
	}
	if h.tweak != nil {
		h.tweak(&o)
	}
	x, err := Start(o)
	if err != nil {
		h.t.Fatal(err)
	}
	return x
}

// run runs a script under a simulated clock and reads the recording back.
func (h *harness) run(script string) outcome {
	h.t.Helper()
	os.Remove(h.rec)
	x := h.start(NewSimClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
	var progress bytes.Buffer
	code, err := RunScript(context.Background(), x, strings.NewReader(script), &progress)
	if err != nil {
		h.t.Fatalf("RunScript: %v\n%s", err, progress.String())
	}
	return h.read(code, x, progress.String())
}

func (h *harness) read(code int, x *Orchestrator, progress string) outcome {
	h.t.Helper()
	evs, _, err := record.ReadAll(h.rec, record.ReadOptions{})
	if err != nil {
		h.t.Fatalf("read recording: %v", err)
	}
	st, _, err := record.LoadFile(h.rec, record.ReadOptions{})
	if err != nil {
		h.t.Fatalf("fold recording: %v", err)
	}
	return outcome{exit: code, events: evs, state: st, progress: progress, x: x}
}

// find returns the events of type t (about subagent id, when not "").
func (o outcome) find(t session.Type, id string) []session.Event {
	var out []session.Event
	for _, e := range o.events {
		if e.Type == t && (id == "" || e.SubagentID == id) {
			out = append(out, e)
		}
	}
	return out
}

func (o outcome) transcript(id, kind string) []session.TranscriptEvent {
	var out []session.TranscriptEvent
	for _, e := range o.find(session.TypeTranscriptEvent, id) {
		if d := e.Data.(session.TranscriptEvent); kind == "" || d.EventType == kind {
			out = append(out, d)
		}
	}
	return out
}

func (o outcome) stop(t *testing.T, id string) session.SubagentStop {
	t.Helper()
	s := o.find(session.TypeSubagentStop, id)
	if len(s) != 1 {
		t.Fatalf("%s has %d SubagentStop events", id, len(s))
	}
	return s[0].Data.(session.SubagentStop)
}

func checkSeq(t *testing.T, evs []session.Event) {
	t.Helper()
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i+1, e.Seq)
		}
	}
	if evs[0].Type != session.TypeSessionStarted || evs[len(evs)-1].Type != session.TypeSessionEnded {
		t.Fatalf("recording runs %s … %s", evs[0].Type, evs[len(evs)-1].Type)
	}
}

// noLeaks waits for the goroutine count to settle back to base.
func noLeaks(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines left (base %d):\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Every event is in the file (written to the kernel, not buffered) before anything sees it:
// when OnEvent runs, the recording on disk already has that event's line.
func TestEventsWrittenBeforeShown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec, err := record.OpenRecorderFile(h.rec, record.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tapes, _ := provider.LoadTapes("testdata/tapes")
	script := provider.NewScript(provider.ScriptConfig{Tapes: tapes})
	var missing []uint64
	var seen int
	x, err := Start(Options{
		Workspace: h.ws, SessionID: "s-test", ProgramVersion: "test", Recorder: rec, CacheDir: h.cache,
		Catalogue:    agents.Load(agents.Options{Workspace: h.ws}),
		Route:        func(*agents.Definition) (provider.Provider, string, error) { return script, "", nil },
		ProviderName: "script", Approve: ApproveNone,
		OnEvent: func(e session.Event) {
			seen++
			b, _ := os.ReadFile(h.rec)
			if !bytes.Contains(b, []byte(fmt.Sprintf(`{"v":1,"seq":%d,`, e.Seq))) {
				missing = append(missing, e.Seq)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, l := range []string{"/delegate change the greeting --agent-type builder", "/delegate escape test --agent-type analyzer", "/wait sa-1 sa-2"} {
		if _, err := x.Submit(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	x.Close("quit")
	if seen < 10 || len(missing) > 0 {
		t.Errorf("%d events seen; not in the file when shown: %v", seen, missing)
	}
}

// A signal (the run's context ends) stops a headless script cleanly: no further line runs,
// the session ends with reason signal, and the exit code is 1.
func TestRunScriptSignal(t *testing.T) {
	h := newHarness(t)
	clock := NewSimClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	x := h.start(clock)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, err := RunScript(ctx, x, strings.NewReader("/delegate change the greeting --agent-type builder\n"), io.Discard)
	if code != ExitFailed || err == nil || !strings.Contains(err.Error(), "signal") {
		t.Fatalf("code %d err %v", code, err)
	}
	o := h.read(0, x, "")
	ends := o.find(session.TypeSessionEnded, "")
	if len(ends) != 1 || ends[0].Data.(session.SessionEnded).Reason != "signal" || len(o.find(session.TypeSubagentSpawned, "")) != 0 {
		t.Errorf("ended %+v, spawned %d", ends, len(o.find(session.TypeSubagentSpawned, "")))
	}
}
