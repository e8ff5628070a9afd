// Command fakeagent is an ACP agent for tests, driven by a script. It answers initialize,
// session/new (modes default, plan, acceptEdits), session/set_mode and authenticate, and runs
// one section of its script per session/prompt. What it observes (the client's capabilities,
// its permission answers, file contents, terminal results, the prompts) goes to a log file,
// one line each, so a test can check what the client told it.
//
// Environment:
//
//	FAKE_ACP_SCRIPT  the script file: sections separated by lines "---", one per prompt
//	FAKE_ACP_LOG     the log file (appended)
//	FAKE_ACP_AUTH    "1": session/new needs authenticate first; methods oauth-personal,
//	                 gemini-api-key (_meta api-key provider google), and gateway (when the
//	                 client offers gateways)
//	FAKE_ACP_NAME    agentInfo.name (default fakeagent)
//	FAKE_ACP_ON_INIT exit | hang | garbage: misbehave on initialize
//
// Script steps (one per line; # comments; \n in text is a newline):
//
//	say TEXT | think TEXT
//	plan STATUS:CONTENT|STATUS:CONTENT...
//	tool ID KIND TITLE              a tool_call (pending; execute: rawInput.command = TITLE)
//	done ID TEXT | failed ID TEXT   a tool_call_update with text content
//	diff ID PATH OLD NEW            a completed update with a diff ("-" as OLD: a new file)
//	ask ID KIND OPTS TITLE          session/request_permission; OPTS "all" or kinds a,b
//	askpath ID KIND PATH            the same about one file (its location), all options
//	read PATH [LINE LIMIT] | write PATH TEXT
//	term CMD | termkill CMD         terminal/create … output, wait_for_exit or kill, release
//	direct PATH TEXT                the agent writes a file itself (relative to its cwd)
//	switch MODE                     a current_mode_update: the agent changes its own mode
//	model KIND TEXT                 a model call of the agent's own over its provider's HTTP API
//	                                (KIND anthropic, openai or gemini: ANTHROPIC_BASE_URL and
//	                                ANTHROPIC_API_KEY, OPENAI_…, GOOGLE_GEMINI_BASE_URL and
//	                                GEMINI_API_KEY), TEXT the user message; it says the model's
//	                                text, or "model error: …", and logs (and thinks) the URL and
//	                                key it used
//	stderr TEXT | child | sleep MS
//	exit CODE | hang | garbage | huge BYTES
//	stop REASON                     the turn's stop reason (default end_turn)
//
// Child sessions (ACP subagents; written raw, the SDK has no types for them):
//
//	sub PARENT ID TITLE|DESCRIPTION announce child ID on PARENT ("-": the session), cancellable
//	as ID STEP                      run STEP on child ID's session
//	substate ID STATE [STOP [ERR]]  a subagent_update with state {state, stopReason, error}
//	msg ON FROM TO TEXT             a session_message on session ON, from FROM to TO ("-": the session)
//	waitcancel ID MS                wait up to MS for a session/cancel of child ID, then report
//	                                it idle, cancelled (or, without one, end_turn)
//
// Codex (codex-acp 2.6.0, to a client that declares no _meta capabilities) runs commands in its
// own sandbox and reports them in _meta; these steps send exactly its shapes (wire logs of the
// real agent in session/live/acp_real_codex_test.go):
//
//	codexsay TEXT                   model text: an agent_message_chunk with a messageId
//	codexwarn TEXT                  a warning: a chunk "Warning: TEXT\n\n" with no messageId
//	codexexec ID CMD                runs sh -c CMD: tool_call (execute, in_progress, content
//	                                [{terminal ID}], rawInput {command, cwd}, _meta.terminal_info),
//	                                then one update: completed (exit 0) or failed, _meta
//	                                terminal_output_delta (all the output) and terminal_exit
//	codexstream ID CMD              the same, each line of output its own update (_meta
//	                                terminal_output_delta only), then the end (terminal_exit only)
//	codexread ID PATH               a read: tool_call (read, "Read file 'PATH'", locations), then
//	                                completed, rawOutput {exit_code: 0}, the file's text as
//	                                _meta.terminal_output_delta
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

type agent struct {
	cur      acp.SessionId            // the session the running step speaks for ("" the session)
	parents  map[string]acp.SessionId // child → the session it was announced on
	canceled map[string]chan struct{} // child → closed by its session/cancel
	conn     *acp.AgentSideConnection
	turns    [][]string
	turn     int
	mu       sync.Mutex
	authed   bool
	gate     bool // the client offers gateways
	cancel   context.CancelFunc
	sid      acp.SessionId
	msgs     int // messages sent with an id (codexsay)
}

var logMu sync.Mutex

func logf(format string, args ...any) {
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(os.Getenv("FAKE_ACP_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", args...)
}

func main() {
	a := &agent{}
	if p := os.Getenv("FAKE_ACP_SCRIPT"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeagent:", err)
			os.Exit(2)
		}
		cur := []string{}
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			switch {
			case l == "---":
				a.turns = append(a.turns, cur)
				cur = []string{}
			case l != "" && !strings.HasPrefix(l, "#"):
				cur = append(cur, l)
			}
		}
		a.turns = append(a.turns, cur)
	}
	logf("pid %d", os.Getpid())
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		logf("pidns %s", ns) // in summit's jail the pids above are the namespace's own
	}
	fmt.Fprintln(os.Stderr, "fakeagent: started")
	a.conn = acp.NewAgentSideConnection(a, out, &capsLog{r: os.Stdin})
	<-a.conn.Done()
}

// out is stdout for the SDK and for raw lines alike: one whole message per Write, never two
// at once.
var out = &lockedWriter{}

type lockedWriter struct{ mu sync.Mutex }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return os.Stdout.Write(b)
}

// raw writes a session/update whose update the SDK cannot build.
func (a *agent) raw(sid acp.SessionId, update map[string]any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
		"params": map[string]any{"sessionId": sid, "update": update}})
	out.Write(append(b, '\n'))
}

// capsLog logs the subagents client capability, which the SDK does not decode.
type capsLog struct {
	r    *os.File
	seen bool
}

func (c *capsLog) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if !c.seen && strings.Contains(string(p[:n]), `"method":"initialize"`) {
		c.seen = true
		logf("subagents capability=%v", strings.Contains(string(p[:n]), `"subagents":{}`))
	}
	return n, err
}

// session is the session the running step speaks for.
func (a *agent) session() acp.SessionId {
	if a.cur != "" {
		return a.cur
	}
	return a.sid
}

// sessionOf is a script's session name: "-" the session, else a child id.
func (a *agent) sessionOf(name string) acp.SessionId {
	if name == "-" || name == "" {
		return a.sid
	}
	return acp.SessionId(name)
}

func (a *agent) Initialize(_ context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	cc := p.ClientCapabilities
	a.gate = cc.Auth.Meta["gateway"] == true
	logf("initialize fs=%v/%v terminal=%v gateway=%v client=%s", cc.Fs.ReadTextFile, cc.Fs.WriteTextFile, cc.Terminal, a.gate, p.ClientInfo.Name)
	switch os.Getenv("FAKE_ACP_ON_INIT") {
	case "exit":
		fmt.Fprintln(os.Stderr, "fakeagent: giving up at initialize")
		os.Exit(7)
	case "hang":
		select {}
	case "garbage":
		os.Stdout.WriteString("Welcome to fakeagent!\n")
		select {}
	}
	name := os.Getenv("FAKE_ACP_NAME")
	if name == "" {
		name = "fakeagent"
	}
	resp := acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber, AgentInfo: &acp.Implementation{Name: name, Version: "1.0"},
		AuthMethods: []acp.AuthMethod{}}
	if os.Getenv("FAKE_ACP_AUTH") == "1" {
		desc := "Log in with your Google account"
		resp.AuthMethods = append(resp.AuthMethods,
			acp.AuthMethod{Agent: &acp.AuthMethodAgent{Id: "oauth-personal", Name: "Log in with Google", Description: &desc}},
			acp.AuthMethod{Agent: &acp.AuthMethodAgent{Id: "gemini-api-key", Name: "Gemini API key",
				Meta: map[string]any{"api-key": map[string]any{"provider": "google"}}}})
		if a.gate {
			resp.AuthMethods = append(resp.AuthMethods, acp.AuthMethod{Agent: &acp.AuthMethodAgent{Id: "gateway", Name: "AI API Gateway",
				Meta: map[string]any{"gateway": map[string]any{"protocol": "google"}}}})
		}
	}
	return resp, nil
}

func (a *agent) Authenticate(_ context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	b, _ := json.Marshal(p.Meta)
	logf("authenticate %s meta=%s key=%v", p.MethodId, b, os.Getenv("GEMINI_API_KEY") != "")
	a.mu.Lock()
	a.authed = true
	a.mu.Unlock()
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if os.Getenv("FAKE_ACP_AUTH") == "1" && !a.authed {
		logf("session/new: authentication required")
		return acp.NewSessionResponse{}, acp.NewAuthRequired(nil)
	}
	wd, _ := os.Getwd()
	logf("session/new cwd=%s wd=%s mcp=%d", p.Cwd, wd, len(p.McpServers))
	for _, m := range p.McpServers {
		if st := m.Stdio; st != nil {
			env := []string{}
			for _, e := range st.Env {
				env = append(env, e.Name+"="+e.Value)
			}
			logf("mcp stdio %s: %s %s env %s", st.Name, st.Command, strings.Join(st.Args, " "), strings.Join(env, " "))
		}
		if h := m.Http; h != nil {
			logf("mcp http %s: %s headers %d", h.Name, h.Url, len(h.Headers))
		}
	}
	a.sid = "fake-session-1"
	return acp.NewSessionResponse{SessionId: a.session(), Modes: &acp.SessionModeState{CurrentModeId: "default",
		AvailableModes: []acp.SessionMode{{Id: "default", Name: "Default"}, {Id: "plan", Name: "Plan"}, {Id: "acceptEdits", Name: "Accept edits"}}}}, nil
}

func (a *agent) SetSessionMode(_ context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	logf("mode %s", p.ModeId)
	return acp.SetSessionModeResponse{}, nil
}

func (a *agent) Cancel(_ context.Context, n acp.CancelNotification) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n.SessionId != a.sid {
		logf("cancel child %s", n.SessionId)
		if ch := a.canceled[string(n.SessionId)]; ch != nil {
			close(ch)
			delete(a.canceled, string(n.SessionId))
		}
		return nil
	}
	logf("cancel")
	if a.cancel != nil {
		a.cancel()
	}
	return nil
}

func (a *agent) Prompt(_ context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	a.cancel = cancel
	n := a.turn
	a.turn++
	a.mu.Unlock()
	defer cancel()
	var text strings.Builder
	for _, b := range p.Prompt {
		if b.Text != nil {
			text.WriteString(b.Text.Text)
		}
	}
	logf("prompt %d: %q", n+1, text.String())
	var steps []string
	if n < len(a.turns) {
		steps = a.turns[n]
	}
	stop := acp.StopReasonEndTurn
	for _, s := range steps {
		if ctx.Err() != nil {
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
		if r := a.step(ctx, s); r != "" {
			stop = acp.StopReason(r)
		}
	}
	if ctx.Err() != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	return acp.PromptResponse{StopReason: stop, Usage: &acp.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120}}, nil
}

func unescape(s string) string { return strings.ReplaceAll(s, `\n`, "\n") }

func (a *agent) update(ctx context.Context, u acp.SessionUpdate) {
	if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: a.session(), Update: u}); err != nil {
		logf("update error: %v", err)
	}
}

// step runs one script line; it returns a stop reason when the line sets one.
func (a *agent) step(ctx context.Context, line string) string {
	verb, rest, _ := strings.Cut(line, " ")
	f := strings.Fields(rest)
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	after := func(n int) string { // the text after the first n fields
		s := rest
		for i := 0; i < n; i++ {
			s = strings.TrimSpace(s)
			if j := strings.IndexByte(s, ' '); j >= 0 {
				s = s[j+1:]
			} else {
				s = ""
			}
		}
		return unescape(s)
	}
	switch verb {
	case "say":
		a.update(ctx, acp.UpdateAgentMessageText(unescape(rest)))
	case "think":
		a.update(ctx, acp.UpdateAgentThoughtText(unescape(rest)))
	case "switch": // the agent changes its own mode, asking nobody
		a.update(ctx, acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: acp.SessionModeId(rest), SessionUpdate: "current_mode_update"}})
	case "plan":
		var es []acp.PlanEntry
		for _, e := range strings.Split(rest, "|") {
			st, c, _ := strings.Cut(e, ":")
			es = append(es, acp.PlanEntry{Content: c, Status: acp.PlanEntryStatus(st), Priority: acp.PlanEntryPriorityMedium})
		}
		a.update(ctx, acp.UpdatePlan(es...))
	case "tool":
		tc := &acp.SessionUpdateToolCall{ToolCallId: acp.ToolCallId(arg(0)), Kind: acp.ToolKind(arg(1)), Title: after(2),
			Status: acp.ToolCallStatusPending, Locations: []acp.ToolCallLocation{{Path: "main.go"}}}
		if tc.Kind == acp.ToolKindExecute {
			tc.RawInput = map[string]any{"command": after(2)}
		}
		a.update(ctx, acp.SessionUpdate{ToolCall: tc})
	case "done", "failed":
		st := acp.ToolCallStatusCompleted
		if verb == "failed" {
			st = acp.ToolCallStatusFailed
		}
		a.update(ctx, acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: acp.ToolCallId(arg(0)), Status: &st,
			Content: []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(after(1)))}}})
	case "diff":
		st := acp.ToolCallStatusCompleted
		c := acp.ToolDiffContent(arg(1), unescape(arg(3)), unescape(arg(2)))
		if arg(2) == "-" {
			c = acp.ToolDiffContent(arg(1), unescape(arg(3)))
		}
		a.update(ctx, acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: acp.ToolCallId(arg(0)), Status: &st,
			Content: []acp.ToolCallContent{c}}})
	case "ask", "askpath":
		kind, title := acp.ToolKind(arg(1)), after(3)
		var locs []acp.ToolCallLocation
		if verb == "askpath" { // ask ID KIND PATH: about a file, with all the options
			title, locs = "touch "+arg(2), []acp.ToolCallLocation{{Path: arg(2)}}
			f[2] = "all"
		}
		all := []acp.PermissionOption{
			{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "allow"},
			{Kind: acp.PermissionOptionKindAllowAlways, Name: "Always allow", OptionId: "always"},
			{Kind: acp.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject"},
			{Kind: acp.PermissionOptionKindRejectAlways, Name: "Never", OptionId: "never"},
		}
		var opts []acp.PermissionOption
		for _, o := range all {
			if arg(2) == "all" || strings.Contains(","+arg(2)+",", ","+string(o.Kind)+",") {
				opts = append(opts, o)
			}
		}
		st := acp.ToolCallStatusPending
		tu := acp.ToolCallUpdate{ToolCallId: acp.ToolCallId(arg(0)), Title: &title, Kind: &kind, Status: &st, Locations: locs}
		if kind == acp.ToolKindExecute {
			tu.RawInput = map[string]any{"command": title}
		}
		resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{SessionId: a.session(), ToolCall: tu, Options: opts})
		switch {
		case err != nil:
			logf("ask %s: error %v", arg(0), err)
		case resp.Outcome.Selected != nil:
			logf("ask %s: %s", arg(0), resp.Outcome.Selected.OptionId)
		default:
			logf("ask %s: cancelled", arg(0))
		}
	case "read":
		req := acp.ReadTextFileRequest{SessionId: a.session(), Path: arg(0)}
		if arg(1) != "" {
			l, _ := strconv.Atoi(arg(1))
			n, _ := strconv.Atoi(arg(2))
			req.Line, req.Limit = &l, &n
		}
		resp, err := a.conn.ReadTextFile(ctx, req)
		if re, ok := err.(*acp.RequestError); ok {
			logf("read %s: error %d %s", arg(0), re.Code, re.Message)
		} else if err != nil {
			logf("read %s: error %v", arg(0), err)
		} else {
			logf("read %s: %q", arg(0), resp.Content)
		}
	case "write":
		_, err := a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: a.session(), Path: arg(0), Content: after(1)})
		if re, ok := err.(*acp.RequestError); ok {
			logf("write %s: error %d %s", arg(0), re.Code, re.Message)
		} else {
			logf("write %s: ok", arg(0))
		}
	case "term", "termkill":
		limit := 64
		t, err := a.conn.CreateTerminal(ctx, acp.CreateTerminalRequest{SessionId: a.session(), Command: unescape(rest), OutputByteLimit: &limit})
		if err != nil {
			logf("term: error %v", err)
			return ""
		}
		id := t.TerminalId
		if verb == "termkill" {
			time.Sleep(100 * time.Millisecond)
			_, err := a.conn.KillTerminal(ctx, acp.KillTerminalRequest{SessionId: a.session(), TerminalId: id})
			logf("term %s: killed err=%v", id, err)
		}
		w, err := a.conn.WaitForTerminalExit(ctx, acp.WaitForTerminalExitRequest{SessionId: a.session(), TerminalId: id})
		if err != nil {
			logf("term %s: wait error %v", id, err)
		}
		o, err := a.conn.TerminalOutput(ctx, acp.TerminalOutputRequest{SessionId: a.session(), TerminalId: id})
		code, sig := -1, ""
		if w.ExitCode != nil {
			code = *w.ExitCode
		}
		if w.Signal != nil {
			sig = *w.Signal
		}
		logf("term %s: exit=%d signal=%s output=%q truncated=%v err=%v", id, code, sig, o.Output, o.Truncated, err)
		if _, err := a.conn.ReleaseTerminal(ctx, acp.ReleaseTerminalRequest{SessionId: a.session(), TerminalId: id}); err != nil {
			logf("term %s: release error %v", id, err)
		}
		if _, err := a.conn.TerminalOutput(ctx, acp.TerminalOutputRequest{SessionId: a.session(), TerminalId: id}); err != nil {
			logf("term %s: released", id)
		}
	case "direct": // written by the agent itself, as Claude Code does
		err := os.WriteFile(arg(0), []byte(after(1)), 0o644)
		logf("direct %s: err=%v", arg(0), err)
	case "model": // a model call of its own, as Claude Code, Codex and Gemini CLI make
		a.update(ctx, acp.UpdateAgentMessageText(modelCall(ctx, a, arg(0), after(1))))
	case "stderr":
		fmt.Fprintln(os.Stderr, unescape(rest))
	case "child":
		c := exec.Command("sleep", "300")
		if err := c.Start(); err == nil {
			logf("child %d", c.Process.Pid)
		}
	case "sleep":
		ms, _ := strconv.Atoi(arg(0))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
		}
	case "exit":
		code, _ := strconv.Atoi(arg(0))
		os.Exit(code)
	case "hang":
		select {} // deaf to session/cancel: the client must kill it
	case "garbage":
		os.Stdout.WriteString("Traceback (most recent call last): oops\n")
		select {}
	case "huge":
		n, _ := strconv.Atoi(arg(0))
		os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"x":"` + strings.Repeat("a", n) + `"}}` + "\n")
		select {}
	case "codexsay":
		a.msgs++
		id := fmt.Sprintf("msg_%024d", a.msgs)
		a.update(ctx, acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{MessageId: &id,
			Content: acp.TextBlock(unescape(rest))}})
	case "codexwarn":
		a.update(ctx, acp.UpdateAgentMessageText("Warning: "+unescape(rest)+"\n\n"))
	case "codexexec", "codexstream":
		a.codexExec(ctx, arg(0), after(1), verb == "codexstream")
	case "codexread":
		id := acp.ToolCallId(arg(0))
		a.update(ctx, acp.SessionUpdate{ToolCall: &acp.SessionUpdateToolCall{ToolCallId: id, Kind: acp.ToolKindRead,
			Title: "Read file '" + arg(1) + "'", Status: acp.ToolCallStatusInProgress, Locations: []acp.ToolCallLocation{{Path: arg(1)}}}})
		b, err := os.ReadFile(arg(1))
		code, st := 0, acp.ToolCallStatusCompleted
		if err != nil {
			b, code, st = []byte("cat: "+arg(1)+": No such file or directory\n"), 1, acp.ToolCallStatusFailed
		}
		a.update(ctx, acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: id, Status: &st,
			RawOutput: map[string]any{"exit_code": code},
			Meta:      map[string]any{"terminal_output_delta": map[string]any{"data": string(b), "terminal_id": string(id)}}}})
	case "stop":
		return arg(0)
	case "sub":
		title, desc, _ := strings.Cut(after(2), "|")
		parent := a.sessionOf(arg(0))
		a.mu.Lock()
		if a.parents == nil {
			a.parents, a.canceled = map[string]acp.SessionId{}, map[string]chan struct{}{}
		}
		a.parents[arg(1)] = parent
		a.canceled[arg(1)] = make(chan struct{})
		a.mu.Unlock()
		a.raw(parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": arg(1), "title": title,
			"description": desc, "capabilities": map[string]any{"cancel": map[string]any{}}, "state": map[string]any{"state": "running"}})
	case "as":
		old := a.cur
		a.cur = acp.SessionId(arg(0))
		r := a.step(ctx, after(1))
		a.cur = old
		return r
	case "substate":
		st := map[string]any{"state": arg(1)}
		if arg(2) != "" {
			st["stopReason"] = arg(2)
		}
		if e := after(3); e != "" {
			st["error"] = map[string]any{"code": -32603, "message": e}
		}
		a.mu.Lock()
		parent := a.parents[arg(0)]
		a.mu.Unlock()
		a.raw(parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": arg(0), "state": st})
	case "msg":
		a.raw(a.sessionOf(arg(0)), map[string]any{"sessionUpdate": "session_message", "messageId": "m-" + arg(0) + "-" + arg(2),
			"senderSessionId": a.sessionOf(arg(1)), "recipientSessionId": a.sessionOf(arg(2)),
			"content": []map[string]any{{"type": "text", "text": after(3)}}})
	case "waitcancel":
		ms, _ := strconv.Atoi(arg(1))
		a.mu.Lock()
		ch, parent := a.canceled[arg(0)], a.parents[arg(0)]
		a.mu.Unlock()
		stop := "end_turn"
		select {
		case <-ch:
			stop = "cancelled"
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
		}
		logf("child %s ended: %s", arg(0), stop)
		a.raw(parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": arg(0),
			"state": map[string]any{"state": "idle", "stopReason": stop}})
	default:
		logf("unknown step %q", line)
	}
	return ""
}

// codexExec runs a command as Codex does, in the agent's own process rather than in a client
// terminal, and reports it as codex-acp 2.6.0 does.
func (a *agent) codexExec(ctx context.Context, id, command string, stream bool) {
	wd, _ := os.Getwd()
	tid := acp.ToolCallId(id)
	a.update(ctx, acp.SessionUpdate{ToolCall: &acp.SessionUpdateToolCall{ToolCallId: tid, Kind: acp.ToolKindExecute,
		Title: command, Status: acp.ToolCallStatusInProgress,
		Content:  []acp.ToolCallContent{{Terminal: &acp.ToolCallContentTerminal{Type: "terminal", TerminalId: id}}},
		RawInput: map[string]any{"command": command, "cwd": wd},
		Meta:     map[string]any{"terminal_info": map[string]any{"cwd": wd, "terminal_id": id}}}})
	out := func(data string) map[string]any { return map[string]any{"data": data, "terminal_id": id} }
	cmd := exec.Command("sh", "-c", command)
	pipe, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	var all strings.Builder
	code := -1
	if err := cmd.Start(); err == nil {
		r := bufio.NewReader(pipe)
		for {
			line, err := r.ReadString('\n')
			if line != "" && stream {
				a.update(ctx, acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: tid,
					Meta: map[string]any{"terminal_output_delta": out(line)}}})
			} else {
				all.WriteString(line)
			}
			if err != nil {
				break
			}
		}
		cmd.Wait()
		code = cmd.ProcessState.ExitCode()
	}
	st := acp.ToolCallStatusCompleted
	if code != 0 {
		st = acp.ToolCallStatusFailed
	}
	meta := map[string]any{"terminal_exit": map[string]any{"exit_code": code, "signal": nil, "terminal_id": id}}
	if all.Len() > 0 {
		meta["terminal_output_delta"] = out(all.String())
	}
	a.update(ctx, acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: tid, Status: &st, Meta: meta}})
	logf("codexexec %s: exit=%d", id, code)
}

func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

// modelCall makes one non-streaming model call of kind with text as the user message, from the
// agent's environment, and returns the reply's text (or the error).
func modelCall(ctx context.Context, a *agent, kind, text string) string {
	var url, key string
	var body map[string]any
	h := http.Header{"Content-Type": {"application/json"}}
	switch kind {
	case "anthropic":
		url, key = os.Getenv("ANTHROPIC_BASE_URL")+"/v1/messages", os.Getenv("ANTHROPIC_API_KEY")
		h.Set("X-Api-Key", key)
		h.Set("Anthropic-Version", "2023-06-01")
		body = map[string]any{"model": "claude-fake", "max_tokens": 64, "messages": []any{map[string]any{"role": "user", "content": text}}}
	case "openai":
		url, key = os.Getenv("OPENAI_BASE_URL")+"/chat/completions", os.Getenv("OPENAI_API_KEY")
		h.Set("Authorization", "Bearer "+key)
		body = map[string]any{"model": "gpt-fake", "messages": []any{map[string]any{"role": "user", "content": text}}}
	case "gemini":
		url, key = os.Getenv("GOOGLE_GEMINI_BASE_URL")+"/v1beta/models/gemini-fake:generateContent", os.Getenv("GEMINI_API_KEY")
		h.Set("X-Goog-Api-Key", key)
		body = map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}}}}
	default:
		return "model error: unknown kind " + kind
	}
	logf("model %s url=%s key=%s", kind, url, key)
	// Said too (a confined agent may not write its log): the host it called and the key.
	host := url
	if u, err := neturl.Parse(url); err == nil {
		host = u.Scheme + "://" + u.Host
	}
	a.update(ctx, acp.UpdateAgentThoughtText(fmt.Sprintf("model call to %s with key %s", host, key)))
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return "model error: " + err.Error()
	}
	req.Header = h
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "model error: " + err.Error()
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != 200 {
		return fmt.Sprintf("model error: %d %s", res.StatusCode, out)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return "model error: " + err.Error()
	}
	switch {
	case len(r.Content) > 0:
		return r.Content[0].Text
	case len(r.Choices) > 0:
		return r.Choices[0].Message.Content
	case len(r.Candidates) > 0 && len(r.Candidates[0].Content.Parts) > 0:
		return r.Candidates[0].Content.Parts[0].Text
	}
	return "model error: no text in " + string(out)
}
