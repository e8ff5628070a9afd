package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents/provider"
)

func newManager(t *testing.T, servers map[string]provider.MCPServer, o Options) *Manager {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	m := NewManager(servers, o)
	t.Cleanup(func() { m.Close() })
	return m
}

// pids reads the pids the test server wrote to file.
func pids(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// alive reports whether pid is a running process (a zombie is not: in a container nobody may
// reap an orphan, but it runs no more).
func alive(pid int) bool {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
			return s[i+2] != 'Z'
		}
		return true
	} else if _, err := os.Stat("/proc/self"); err == nil {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

// gone waits a little for pid to end.
func gone(pid int) bool {
	for i := 0; i < 100; i++ {
		if !alive(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func TestListAndCall(t *testing.T) {
	m := newManager(t, map[string]provider.MCPServer{"t": testServer(nil)}, Options{})
	ctx := context.Background()
	tools, err := m.Tools(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Qualified)
		if tl.Server != "t" || tl.InputSchema["type"] != "object" {
			t.Errorf("tool %+v", tl)
		}
	}
	if got := strings.Join(names, " "); got != "mcp__t__add mcp__t__big mcp__t__echo mcp__t__fail mcp__t__image mcp__t__slow mcp__t__write" {
		t.Errorf("tools %s", got)
	}
	for _, tl := range tools {
		if tl.Name == "echo" {
			props, _ := tl.InputSchema["properties"].(map[string]any)
			if _, ok := props["text"]; !ok || tl.Description != "Echo the text back." {
				t.Errorf("echo's schema %v, description %q", tl.InputSchema, tl.Description)
			}
		}
	}
	for _, c := range []struct {
		tool, args, want string
		isErr            bool
	}{
		{"echo", `{"text":"hi there"}`, "echo: hi there", false},
		{"add", `{"a": 2, "b": 3.5}`, "5.5", false},
		{"fail", `{}`, "the fail tool failed, as it always does", true},
		{"fail", ``, "the fail tool failed, as it always does", true},
		{"image", `{}`, "a picture:\n[image: image/png, 14 bytes]\n[resource: file:///notes.txt (text/plain)]\nnote text\n" +
			"[resource: file:///blob.bin, application/octet-stream, 3 bytes]\n[resource link: https://example.com/doc (doc, text/html)]", false},
	} {
		r, err := m.Call(ctx, "t", c.tool, c.args)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if r.Output != c.want || r.IsError != c.isErr {
			t.Errorf("%s(%s) = %q (error %v), want %q (error %v)", c.tool, c.args, r.Output, r.IsError, c.want, c.isErr)
		}
	}
	// Arguments the server's schema refuses are its error, not a broken call.
	r, err := m.Call(ctx, "t", "add", `{"a": "two"}`)
	if err == nil && !r.IsError {
		t.Errorf("bad arguments gave %+v", r)
	}
	// A tool the server does not have.
	if _, err := m.Call(ctx, "t", "nosuch", `{}`); err == nil || !strings.Contains(err.Error(), "MCP server t") {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err := m.Tools(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `"nope" is not configured (configured: t)`) {
		t.Errorf("unknown server: %v", err)
	}
}

func TestResultCapped(t *testing.T) {
	m := newManager(t, map[string]provider.MCPServer{"t": testServer(nil)}, Options{MaxResult: 1000})
	r, err := m.Call(context.Background(), "t", "big", `{"bytes": 5000}`)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("x", 1000) + "\n[... truncated: 5000 bytes total, showing the first 1000]"
	if r.Output != want {
		t.Errorf("capped output is %d bytes: ...%q", len(r.Output), r.Output[max(0, len(r.Output)-80):])
	}
	// A cut never splits a rune, and the output is valid UTF-8.
	if got := clip(strings.Repeat("é", 10), 5); got != "éé\n[... truncated: 20 bytes total, showing the first 4]" {
		t.Errorf("clip of runes: %q", got)
	}
	if got := clip("a\xffb", 10); got != "a\uFFFDb" {
		t.Errorf("clip of invalid UTF-8: %q", got)
	}
}

// A server that dies at start is a clear error naming it, its exit status and the end of its
// stderr, at once, not a hang; the next use tries again.
func TestCrashAtStart(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	m := newManager(t, map[string]provider.MCPServer{"crashy": testServer(map[string]string{
		"MCP_TEST_CRASH": "fatal: GITHUB_TOKEN is not set", "MCP_TEST_PIDFILE": pidfile})}, Options{})
	start := time.Now()
	_, err := m.Tools(context.Background(), "crashy")
	if err == nil {
		t.Fatal("a crashing server started")
	}
	for _, want := range []string{"MCP server crashy: could not start it", "exit status 3", "its stderr ends:\nstarting test server\nfatal: GITHUB_TOKEN is not set"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the failure took %s", d)
	}
	if _, err := m.Tools(context.Background(), "crashy"); err == nil || len(pids(t, pidfile)) != 2 {
		t.Errorf("second use: %v, %d starts", err, len(pids(t, pidfile)))
	}
	// A command that does not exist.
	m2 := newManager(t, map[string]provider.MCPServer{"nope": {Command: "summit-no-such-mcp-server"}}, Options{})
	if _, err := m2.Tools(context.Background(), "nope"); err == nil || !strings.Contains(err.Error(), "MCP server nope: could not start it") {
		t.Errorf("missing command: %v", err)
	}
}

// A server that never answers the handshake is stopped at the start timeout, process group
// and all. The timeout is 3 s, not less: the error must carry the server's stderr line, and
// under -race at a load of 16 the shell had not written it after 500 ms.
func TestStartTimeout(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	m := newManager(t, map[string]provider.MCPServer{"mute": {Command: "sh", Args: []string{"-c", `echo $$ >> "$PF"; echo waiting forever >&2; sleep 60 & echo $! >> "$PF"; wait`},
		Env: map[string]string{"PF": pidfile}}}, Options{StartTimeout: 3 * time.Second})
	start := time.Now()
	_, err := m.Tools(context.Background(), "mute")
	if err == nil || !strings.Contains(err.Error(), "no answer within 3s") || !strings.Contains(err.Error(), "waiting forever") {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	ps := pids(t, pidfile)
	if len(ps) != 2 {
		t.Fatalf("pids %v", ps)
	}
	for _, p := range ps {
		if !gone(p) {
			t.Errorf("process %d outlived the failed start", p)
		}
	}
}

// A call the server does not answer in time is a tool error; the server goes on serving.
func TestCallTimeout(t *testing.T) {
	c := testServer(nil)
	c.TimeoutS = 1
	m := newManager(t, map[string]provider.MCPServer{"t": c}, Options{})
	ctx := context.Background()
	start := time.Now()
	_, err := m.Call(ctx, "t", "slow", `{"seconds": 30}`)
	if err == nil || err.Error() != "MCP server t did not answer within 1s (its timeout_s)" {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	if r, err := m.Call(ctx, "t", "echo", `{"text":"still here"}`); err != nil || r.Output != "echo: still here" {
		t.Errorf("after a timeout: %+v %v", r, err)
	}
	// The caller's own end is said as such.
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if _, err := m.Call(cctx, "t", "slow", `{"seconds": 30}`); err == nil || !strings.Contains(err.Error(), "the call was stopped") {
		t.Errorf("cancelled call: %v", err)
	}
}

// Servers start on first use, once, however many callers need them at once; Close stops the
// process and what it started.
func TestLazySharedStopped(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	m := NewManager(map[string]provider.MCPServer{"t": testServer(map[string]string{"MCP_TEST_PIDFILE": pidfile, "MCP_TEST_CHILD": "1"}),
		"unused": testServer(map[string]string{"MCP_TEST_PIDFILE": pidfile + ".unused"})}, Options{Dir: t.TempDir()})
	defer m.Close()
	time.Sleep(100 * time.Millisecond)
	if ps := pids(t, pidfile); len(ps) != 0 {
		t.Fatalf("started before use: %v", ps)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := m.Call(context.Background(), "t", "echo", `{"text":"x"}`)
			if err == nil && r.Output != "echo: x" {
				err = os.ErrInvalid
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ps := pids(t, pidfile)
	if len(ps) != 2 { // the server and its child
		t.Fatalf("pids %v: want one server and its child", ps)
	}
	for _, p := range ps {
		if !alive(p) {
			t.Fatalf("process %d is not running", p)
		}
	}
	if _, err := os.Stat(pidfile + ".unused"); err == nil {
		t.Errorf("a server nobody used was started")
	}
	m.Close()
	for _, p := range ps {
		if !gone(p) {
			t.Errorf("process %d outlived Close", p)
		}
	}
	if _, err := m.Tools(context.Background(), "t"); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("use after Close: %v", err)
	}
	if m.Close() != nil {
		t.Errorf("a second Close failed")
	}
}

// A server that dies is a tool error naming it; the next use starts it again.
func TestServerDiesAndRestarts(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	m := newManager(t, map[string]provider.MCPServer{"t": testServer(map[string]string{"MCP_TEST_PIDFILE": pidfile})}, Options{})
	ctx := context.Background()
	if _, err := m.Call(ctx, "t", "echo", `{"text":"1"}`); err != nil {
		t.Fatal(err)
	}
	first := pids(t, pidfile)[0]
	syscall.Kill(first, syscall.SIGKILL)
	if !gone(first) {
		t.Fatal("the server did not die")
	}
	_, err := m.Call(ctx, "t", "echo", `{"text":"2"}`)
	if err != nil && !strings.Contains(err.Error(), "MCP server t") {
		t.Errorf("call to a dead server: %v", err)
	}
	var r Result
	for i := 0; i < 2; i++ { // the death may be noticed by the call above or only after it
		if r, err = m.Call(ctx, "t", "echo", `{"text":"3"}`); err == nil {
			break
		}
	}
	if err != nil || r.Output != "echo: 3" || len(pids(t, pidfile)) != 2 {
		t.Errorf("after a restart: %+v %v, pids %v", r, err, pids(t, pidfile))
	}
}
