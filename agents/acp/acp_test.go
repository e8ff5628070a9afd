package acp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// The end-to-end tests (a fake agent through a real session) are in session/live/acp_test.go;
// these check the parts on their own.

// chunks feeds its input n bytes per Read (n = 0: whole).
type chunks struct {
	s string
	n int
}

func (c *chunks) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := len(c.s)
	if c.n > 0 && c.n < n {
		n = c.n
	}
	n = copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// lineReader delivers whole lines, as the input has them.
type lineReader struct{ lines []string }

func (l *lineReader) Read(p []byte) (int, error) {
	if len(l.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.lines[0])
	if l.lines[0] = l.lines[0][n:]; l.lines[0] == "" {
		l.lines = l.lines[1:]
	}
	return n, nil
}

// readGuard reads everything through a guard as the SDK does (a line scanner).
func readGuard(r io.Reader, max int) ([]string, *lineGuard, error) {
	g := newLineGuard(r, max)
	g.open()
	sc := bufio.NewScanner(g)
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, g, sc.Err()
}

const update = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`

// The guard passes the same lines whether the input comes whole, line by line or in 2-byte
// chunks, and stops at garbage or a line over the cap, whichever way it comes.
func TestLineGuard(t *testing.T) {
	good := update + "\n\n" + `{"jsonrpc":"2.0","method":"session/update","params":{"bad":` + "[1]}}\n" + `{"jsonrpc":"2.0","id":1,"result":{}}`
	feeds := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return &chunks{s: s} },
		"by line":  func(s string) io.Reader { return &lineReader{lines: strings.SplitAfter(s, "\n")} },
		"2 bytes":  func(s string) io.Reader { return &chunks{s: s, n: 2} },
		"7 bytes":  func(s string) io.Reader { return &chunks{s: s, n: 7} },
		"1 byte":   func(s string) io.Reader { return &chunks{s: s, n: 1} },
		"64k each": func(s string) io.Reader { return &chunks{s: s, n: 64 << 10} },
	}
	for name, feed := range feeds {
		lines, g, err := readGuard(feed(good), 0)
		if err != nil || len(lines) != 4 || lines[0] != update || lines[1] != "" || lines[3] != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Errorf("%s: %q %v", name, lines, err)
		}
		if g.Updates() != 2 { // the second update's params decode too: unknown fields are ignored
			t.Errorf("%s: %d updates counted", name, g.Updates())
		}
		for _, bad := range []struct{ in, want string }{
			{update + "\nnpm WARN deprecated\n" + update + "\n", `not JSON-RPC on stdout: "npm WARN deprecated"`},
			{"[1,2]\n", "not JSON-RPC"},
			{`{"jsonrpc":"2.0"` + "\n", "not JSON-RPC"},
			{update + "\n" + `{"x":"` + strings.Repeat("y", 300) + `"}` + "\n", "a line of more than 200 bytes on stdout"},
		} {
			lines, g, err := readGuard(feed(bad.in), 200)
			var bo *BadOutput
			if !errors.As(err, &bo) || !strings.Contains(err.Error(), bad.want) || g.Err() == nil {
				t.Errorf("%s: %q: %v (lines %q)", name, bad.in[:20], err, lines)
			}
			select {
			case <-g.bad:
			default:
				t.Errorf("%s: bad not closed", name)
			}
		}
	}
}

// Authentication takes a gateway the environment names, else an API key it holds, never a
// login.
func TestChooseAuth(t *testing.T) {
	desc := "Log in with your Google account"
	methods := []sdk.AuthMethod{
		{Agent: &sdk.AuthMethodAgent{Id: "oauth-personal", Name: "Log in with Google", Description: &desc}},
		{Agent: &sdk.AuthMethodAgent{Id: "gemini-api-key", Name: "Gemini API key", Meta: map[string]any{"api-key": map[string]any{"provider": "google"}}}},
		{Agent: &sdk.AuthMethodAgent{Id: "gateway", Name: "AI API Gateway", Meta: map[string]any{"gateway": map[string]any{"protocol": "google"}}}},
		{Terminal: &sdk.AuthMethodTerminalInline{Id: "claude-login", Name: "Claude"}},
		{EnvVar: &sdk.AuthMethodEnvVarInline{Id: "env", Name: "Env", Vars: []sdk.AuthEnvVar{{Name: "MY_TOKEN"}}}},
	}
	for _, tc := range []struct {
		env  []string
		id   string
		meta string
	}{
		{[]string{"GEMINI_API_KEY=k"}, "gemini-api-key", ""},
		{[]string{"GEMINI_API_KEY=k", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:1"}, "gateway", "http://127.0.0.1:1"},
		{[]string{"ANTHROPIC_BASE_URL=http://x"}, "", ""}, // the gateway speaks google
		{[]string{"SUMMIT_ACP_GATEWAY_URL=http://g"}, "gateway", "http://g"},
		{[]string{"OPENAI_API_KEY=k"}, "", ""}, // not the provider this method names
		{[]string{"MY_TOKEN=t"}, "env", ""},
		{nil, "", ""},
	} {
		c, how, ok := chooseAuth(methods, tc.env)
		if ok != (tc.id != "") || c.id != tc.id {
			t.Errorf("%v: %q %q %v", tc.env, c.id, how, ok)
		}
		if tc.meta != "" && c.meta["gateway"].(map[string]any)["baseUrl"] != tc.meta {
			t.Errorf("%v: meta %v", tc.env, c.meta)
		}
		if !ok && (!strings.Contains(how, "oauth-personal (Log in with Google Log in with your Google account)") || !strings.Contains(how, "claude-login (a terminal login)")) {
			t.Errorf("%v: %s", tc.env, how)
		}
	}
	// A method named for keys, with no provider, takes any *_API_KEY.
	m := []sdk.AuthMethod{{Agent: &sdk.AuthMethodAgent{Id: "apikey", Name: "Use an API Key"}}}
	if c, _, ok := chooseAuth(m, []string{"ACME_API_KEY=1"}); !ok || c.id != "apikey" {
		t.Errorf("generic key: %v %v", c, ok)
	}
	if gatewayMeta([]string{"ANTHROPIC_BASE_URL=http://x"})["gateway"] != true || gatewayMeta([]string{"HOME=/h"}) != nil {
		t.Error("gatewayMeta")
	}
}

func TestLineRange(t *testing.T) {
	text := "a\nb\nc\nd"
	p := func(n int) *int { return &n }
	for _, tc := range []struct {
		line, limit *int
		want        string
	}{
		{nil, nil, text},
		{p(2), nil, "b\nc\nd"},
		{p(2), p(2), "b\nc\n"},
		{nil, p(1), "a\n"},
		{p(9), nil, ""},
		{p(4), p(5), "d"},
		{p(0), p(0), ""},
	} {
		if got := lineRange(text, tc.line, tc.limit); got != tc.want {
			t.Errorf("%v %v: %q", tc.line, tc.limit, got)
		}
	}
}

func TestShellLine(t *testing.T) {
	root := t.TempDir()
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		p    sdk.CreateTerminalRequest
		want string
		err  string
	}{
		{sdk.CreateTerminalRequest{Command: "ls -la | wc"}, "ls -la | wc", ""},
		{sdk.CreateTerminalRequest{Command: "git", Args: []string{"commit", "-m", "it's done"}}, `git commit -m 'it'\''s done'`, ""},
		{sdk.CreateTerminalRequest{Command: "make", Cwd: s(root)}, "make", ""},
		{sdk.CreateTerminalRequest{Command: "make", Cwd: s(root + "/sub")}, "cd " + root + "/sub && make", ""},
		{sdk.CreateTerminalRequest{Command: "make", Cwd: s("/")}, "", "outside the workspace"},
		{sdk.CreateTerminalRequest{Command: "make", Cwd: s(root + "/../x")}, "", "outside the workspace"},
		{sdk.CreateTerminalRequest{Command: "env", Env: []sdk.EnvVariable{{Name: "A", Value: "1 2"}}}, "export A='1 2'; env", ""},
		{sdk.CreateTerminalRequest{Command: "env", Env: []sdk.EnvVariable{{Name: "A;rm", Value: "1"}}}, "", "not a variable name"},
		{sdk.CreateTerminalRequest{Command: " "}, "", "empty"},
	} {
		got, err := shellLine(root, tc.p)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: %q %v", tc.p, got, err)
		}
	}
	if c := commandCandidates(sdk.CreateTerminalRequest{Command: "bash", Args: []string{"-c", "go test"}}); !slices.Equal(c, []string{"bash -c go test", "go test"}) {
		t.Errorf("candidates %q", c)
	}
}

// A terminal's exit is read from the closing note of summit's shell.
func TestTerminalResult(t *testing.T) {
	for _, tc := range []struct {
		res  tools.Result
		out  string
		code int
		sig  string
	}{
		{tools.Result{Output: "hi\n"}, "hi\n", 0, ""},
		{tools.Result{Output: "no\n[exit code 3]", IsError: true}, "no", 3, ""},
		{tools.Result{Output: "x\n[killed by signal killed]", IsError: true}, "x", -1, "SIGKILL"},
		{tools.Result{Output: "x\n[cancelled; the command and its process group were killed]", IsError: true}, "x\n[cancelled]", -1, "SIGKILL"},
		{tools.Result{Output: "run_shell_command: fork failed", IsError: true}, "run_shell_command: fork failed", 1, ""},
	} {
		term := &terminal{res: tc.res, done: make(chan struct{})}
		close(term.done)
		out, code, sig := term.result()
		gotCode, gotSig := -1, ""
		if code != nil {
			gotCode = *code
		}
		if sig != nil {
			gotSig = *sig
		}
		if out != tc.out || gotCode != tc.code || gotSig != tc.sig {
			t.Errorf("%q: %q %d %q", tc.res.Output, out, gotCode, gotSig)
		}
	}
	if s, cut := tailBytes("héllo", 4); s != "llo" || !cut {
		t.Errorf("tail %q %v", s, cut)
	}
}

func TestDiffText(t *testing.T) {
	old := "a\nb\nc\n"
	if got := diffText("f.go", &old, "a\nB\nc\n"); got != "--- f.go\n+++ f.go\n@@ -2,1 +2,1 @@\n-b\n+B" {
		t.Errorf("diff:\n%s", got)
	}
	if got := diffText("n.go", nil, "x\ny"); got != "--- /dev/null\n+++ n.go\n+x\n+y" {
		t.Errorf("new file:\n%s", got)
	}
}

func TestPlanEvent(t *testing.T) {
	e := planEvent([]sdk.PlanEntry{{Content: "read", Status: "completed"}, {Content: "write  it", Status: "pending"}, {Content: "test", Status: "pending"}})
	if e.Tool != session.PlanTool || e.Text != "plan:\n✓ read\n· write it\n· test" || e.Args["step"] != "write  it" || e.Args["done"] != 1 {
		t.Errorf("%+v", e)
	}
	if e := planEvent([]sdk.PlanEntry{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}}); e.Args["step"] != "b" {
		t.Errorf("%+v", e)
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 16}
	io.WriteString(tl, "first line\nsecond line\nthird\n")
	if got := tl.String(); got != "…\nthird" {
		t.Errorf("%q", got)
	}
	tl = &tail{max: 100}
	io.WriteString(tl, "only\n")
	if got := tl.String(); got != "only" {
		t.Errorf("%q", got)
	}
}

// An agent gets the minimal environment, its built-in's keys, its env with $VAR read from
// summit's, and never another provider's key.
func TestEnviron(t *testing.T) {
	summit := []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=o", "GEMINI_API_KEY=g", "SECRET_TOKEN=s", "TERM=xterm"}
	gem := Builtins()[2]
	env := gem.Environ(summit)
	if !slices.Equal(env, []string{"GEMINI_API_KEY=g", "GEMINI_CLI_TRUST_WORKSPACE=true", "HOME=/h", "NO_BROWSER=1", "PATH=/bin"}) {
		t.Errorf("gemini: %q", env)
	}
	a := Agent{Env: map[string]string{"TOKEN": "${SECRET_TOKEN}", "MODE": "x$NOPE", "NO_BROWSER": "0"}}
	if env := a.Environ(summit); !slices.Equal(env, []string{"HOME=/h", "MODE=x", "NO_BROWSER=0", "PATH=/bin", "TOKEN=s"}) {
		t.Errorf("config agent: %q", env)
	}
}

func TestSetAndDefinitions(t *testing.T) {
	look := func(c string) (string, error) {
		if c == "gemini" || c == "codex-acp" {
			return "/bin/" + c, nil
		}
		return "", errors.New("not found")
	}
	s := NewSet(map[string]provider.ACPAgent{"codex": {Command: "my-codex", File: "/ws/.summit/config.yaml"}, "mine": {Command: "agent", Args: []string{"acp"}}}, look)
	var names []string
	for _, a := range s.List() {
		names = append(names, a.Name+" "+a.Command)
	}
	if !slices.Equal(names, []string{"codex my-codex", "gemini-cli gemini", "mine agent"}) {
		t.Errorf("set: %q", names)
	}
	a, _ := s.Get("mine")
	d := a.Definition()
	if d.Kind != Kind || d.Description != "external agent over ACP: agent acp" || d.Tools != nil {
		t.Errorf("definition: %+v", d)
	}
	file := &agents.Definition{Name: "f", Kind: Kind, Unknown: map[string]any{"command": "x", "args": []any{"--acp"}, "env": map[string]any{"K": "v"}}}
	if a, ok, err := FromDefinition(file); !ok || err != nil || a.Command != "x" || !slices.Equal(a.Args, []string{"--acp"}) || a.Env["K"] != "v" {
		t.Errorf("file: %+v %v %v", a, ok, err)
	}
	if _, ok, err := FromDefinition(&agents.Definition{Name: "f", Kind: Kind}); !ok || err == nil {
		t.Errorf("no command: %v %v", ok, err)
	}
	if _, ok, _ := FromDefinition(&agents.Definition{Name: "f"}); ok {
		t.Error("a native agent read as ACP")
	}
	for _, b := range Builtins() {
		if b.Install == "" || !strings.HasPrefix(b.Install, "npm install -g ") {
			t.Errorf("%s: install %q", b.Name, b.Install)
		}
	}
}

// Options are picked by kind; none offered is a cancellation.
func TestPick(t *testing.T) {
	opts := []sdk.PermissionOption{{Kind: "allow_always", OptionId: "a"}, {Kind: "reject_once", OptionId: "r"}}
	if r := pick(opts, "allow_once", "allow_always"); r.Outcome.Selected == nil || r.Outcome.Selected.OptionId != "a" {
		t.Errorf("%+v", r)
	}
	if r := pick(opts, "reject_always"); r.Outcome.Cancelled == nil {
		t.Errorf("%+v", r)
	}
}

// runFake runs the fake agent (testdata/fakeagent) through one prompt of script, as the agent
// named name, and returns what was recorded and the turn.
func runFake(t *testing.T, name, script string) ([]session.TranscriptEvent, Turn) {
	t.Helper()
	dir := t.TempDir()
	bin, err := fakeAgentBin() // built once per test process (main_test.go)
	if err != nil {
		t.Fatalf("building the fake agent: %v", err)
	}
	sp := filepath.Join(dir, "script")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "ws")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := tools.New(root, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []session.TranscriptEvent
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Start(ctx, Config{
		Agent: Agent{Name: "fake", Command: bin, Env: map[string]string{
			"FAKE_ACP_SCRIPT": sp, "FAKE_ACP_LOG": filepath.Join(dir, "log"), "FAKE_ACP_NAME": name}},
		Sandbox: sb,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
		Mode:    agents.ModeBypass,
		Decide:  func(string) agents.Decision { return agents.Decision{Verdict: agents.Allow} },
		Approve: func(context.Context, string, map[string]any, string) (Grant, error) { return Grant{Allowed: true}, nil },
		Emit: func(d session.Data) error {
			mu.Lock()
			defer mu.Unlock()
			if e, ok := d.(session.TranscriptEvent); ok {
				events = append(events, e)
			}
			return nil
		},
		Version: "test",
	})
	if r != nil {
		defer r.Close()
	}
	if err != nil {
		t.Fatalf("start: %v (stderr %s)", err, r.Stderr())
	}
	turn, err := r.Prompt(ctx, "go")
	if err != nil {
		t.Fatalf("prompt: %v (stderr %s)", err, r.Stderr())
	}
	r.Close()
	mu.Lock()
	defer mu.Unlock()
	return append([]session.TranscriptEvent(nil), events...), turn
}

// Codex runs commands in its own sandbox and reports them in _meta (terminal_info,
// terminal_output_delta, terminal_exit; a read's exit code in rawOutput): the fake agent sends
// exactly codex-acp 2.6.0's shapes, for commands it really runs. Each call records its command,
// and its result the output and how it ended, capped; never a "[terminal …]" placeholder.
// Codex's warning, a message chunk without a message id, is a notice, not turn text.
func TestCodexOwnCommands(t *testing.T) {
	const warning = "Model metadata for `gpt-5.1-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."
	script := "codexwarn " + warning + `
codexsay Writing greeting.txt.\n
codexexec call_1 echo hello from codex > greeting.txt; echo wrote it; echo careful >&2
codexstream call_2 echo one; echo two; exit 3
codexread call_3 greeting.txt
codexread call_4 missing.txt
codexexec call_5 head -c 100000 /dev/zero | tr '\0' x
codexexec call_6 true
codexsay Done.
`
	events, turn := runFake(t, codexACP, script)
	calls, results := map[string]session.TranscriptEvent{}, map[string]session.TranscriptEvent{}
	var notices []string
	tokens := ""
	for _, e := range events {
		switch e.EventType {
		case session.TranscriptToolCall:
			calls[e.CallID] = e
		case session.TranscriptToolResult:
			results[e.CallID] = e
		case session.TranscriptMessage:
			notices = append(notices, e.Text)
		case session.TranscriptToken:
			tokens += e.Text
		}
		if strings.Contains(e.Result, "[terminal ") {
			t.Errorf("a terminal placeholder: %+v", e)
		}
	}
	if turn.Text != "Writing greeting.txt.\nDone." || tokens != turn.Text {
		t.Errorf("turn text %q, tokens %q", turn.Text, tokens)
	}
	if !slices.Contains(notices, "Warning: "+warning) {
		t.Errorf("the warning is not a notice: %q", notices)
	}

	for id, want := range map[string]struct {
		tool, command, result string
		isErr                 bool
	}{
		"call_1": {"run_shell_command", "echo hello from codex > greeting.txt; echo wrote it; echo careful >&2",
			"$ echo hello from codex > greeting.txt; echo wrote it; echo careful >&2\nwrote it\ncareful", false},
		"call_2": {"run_shell_command", "echo one; echo two; exit 3", "$ echo one; echo two; exit 3\none\ntwo\n[exit code 3]", true},
		"call_3": {"read_file", "", "hello from codex", false},
		"call_4": {"read_file", "", "cat: missing.txt: No such file or directory\n[exit code 1]", true},
		"call_6": {"run_shell_command", "true", "$ true\n", false},
	} {
		c, r := calls[id], results[id]
		if c.Tool != want.tool || r.Tool != want.tool || r.Result != want.result || r.IsError != want.isErr {
			t.Errorf("%s: call %+v\nresult %+v", id, c, r)
		}
		in, _ := c.Args["input"].(map[string]any)
		if want.command != "" && (in["command"] != want.command || c.Args["title"] != want.command) {
			t.Errorf("%s: the call does not record its command: %v", id, c.Args)
		}
	}
	// A flood of output is cut to maxResult, the cut said, the end of the command kept.
	r := results["call_5"]
	if len(r.Result) > maxResult || !strings.HasPrefix(r.Result, "$ head -c 100000 /dev/zero | tr '\\0' x\nxxxx") ||
		!strings.Contains(r.Result, "\n[... cut: 100000 bytes of output, showing the first ") || r.IsError {
		t.Errorf("call_5: %d bytes, ends %q", len(r.Result), r.Result[max(0, len(r.Result)-80):])
	}

	// Another agent's chunk like it is its answer: the mark is Codex's.
	if _, turn := runFake(t, "fakeagent", "codexwarn "+warning+"\n"); !strings.HasPrefix(turn.Text, "Warning: Model metadata") {
		t.Errorf("another agent's text taken for a notice: %q", turn.Text)
	}
}

// TestGeminiTrustsItsWorktree: the built-in Gemini CLI is started trusting its folder (summit's
// worktree for the subagent), so it does not fall back to its restricted "untrusted folder"
// mode that asks for every edit; nothing in summit's environment turns that off.
func TestGeminiTrustsItsWorktree(t *testing.T) {
	var gemini Agent
	for _, a := range Builtins() {
		if a.Name == "gemini-cli" {
			gemini = a
		}
	}
	if gemini.Name == "" {
		t.Fatal("no built-in gemini-cli")
	}
	env := gemini.Environ([]string{"GEMINI_CLI_TRUST_WORKSPACE=false", "GEMINI_API_KEY=k", "HOME=/h"})
	if !slices.Contains(env, "GEMINI_CLI_TRUST_WORKSPACE=true") || slices.Contains(env, "GEMINI_CLI_TRUST_WORKSPACE=false") {
		t.Fatalf("gemini-cli environment %q: want GEMINI_CLI_TRUST_WORKSPACE=true", env)
	}
	for _, a := range Builtins() {
		if a.Name != "gemini-cli" && slices.ContainsFunc(a.Environ(nil), func(kv string) bool { return strings.HasPrefix(kv, "GEMINI_CLI_TRUST") }) {
			t.Fatalf("%s is given Gemini's folder trust", a.Name)
		}
	}
}
