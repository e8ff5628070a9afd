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
//	stderr TEXT | child | sleep MS
//	exit CODE | hang | garbage | huge BYTES
//	stop REASON                     the turn's stop reason (default end_turn)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

type agent struct {
	conn   *acp.AgentSideConnection
	turns  [][]string
	turn   int
	mu     sync.Mutex
	authed bool
	gate   bool // the client offers gateways
	cancel context.CancelFunc
	sid    acp.SessionId
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
	fmt.Fprintln(os.Stderr, "fakeagent: started")
	a.conn = acp.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	<-a.conn.Done()
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
	a.sid = "fake-session-1"
	return acp.NewSessionResponse{SessionId: a.sid, Modes: &acp.SessionModeState{CurrentModeId: "default",
		AvailableModes: []acp.SessionMode{{Id: "default", Name: "Default"}, {Id: "plan", Name: "Plan"}, {Id: "acceptEdits", Name: "Accept edits"}}}}, nil
}

func (a *agent) SetSessionMode(_ context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	logf("mode %s", p.ModeId)
	return acp.SetSessionModeResponse{}, nil
}

func (a *agent) Cancel(_ context.Context, _ acp.CancelNotification) error {
	logf("cancel")
	a.mu.Lock()
	defer a.mu.Unlock()
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
	if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: a.sid, Update: u}); err != nil {
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
		resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{SessionId: a.sid, ToolCall: tu, Options: opts})
		switch {
		case err != nil:
			logf("ask %s: error %v", arg(0), err)
		case resp.Outcome.Selected != nil:
			logf("ask %s: %s", arg(0), resp.Outcome.Selected.OptionId)
		default:
			logf("ask %s: cancelled", arg(0))
		}
	case "read":
		req := acp.ReadTextFileRequest{SessionId: a.sid, Path: arg(0)}
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
		_, err := a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: a.sid, Path: arg(0), Content: after(1)})
		if re, ok := err.(*acp.RequestError); ok {
			logf("write %s: error %d %s", arg(0), re.Code, re.Message)
		} else {
			logf("write %s: ok", arg(0))
		}
	case "term", "termkill":
		limit := 64
		t, err := a.conn.CreateTerminal(ctx, acp.CreateTerminalRequest{SessionId: a.sid, Command: unescape(rest), OutputByteLimit: &limit})
		if err != nil {
			logf("term: error %v", err)
			return ""
		}
		id := t.TerminalId
		if verb == "termkill" {
			time.Sleep(100 * time.Millisecond)
			_, err := a.conn.KillTerminal(ctx, acp.KillTerminalRequest{SessionId: a.sid, TerminalId: id})
			logf("term %s: killed err=%v", id, err)
		}
		w, err := a.conn.WaitForTerminalExit(ctx, acp.WaitForTerminalExitRequest{SessionId: a.sid, TerminalId: id})
		if err != nil {
			logf("term %s: wait error %v", id, err)
		}
		o, err := a.conn.TerminalOutput(ctx, acp.TerminalOutputRequest{SessionId: a.sid, TerminalId: id})
		code, sig := -1, ""
		if w.ExitCode != nil {
			code = *w.ExitCode
		}
		if w.Signal != nil {
			sig = *w.Signal
		}
		logf("term %s: exit=%d signal=%s output=%q truncated=%v err=%v", id, code, sig, o.Output, o.Truncated, err)
		if _, err := a.conn.ReleaseTerminal(ctx, acp.ReleaseTerminalRequest{SessionId: a.sid, TerminalId: id}); err != nil {
			logf("term %s: release error %v", id, err)
		}
		if _, err := a.conn.TerminalOutput(ctx, acp.TerminalOutputRequest{SessionId: a.sid, TerminalId: id}); err != nil {
			logf("term %s: released", id)
		}
	case "direct": // written by the agent itself, as Claude Code does
		err := os.WriteFile(arg(0), []byte(after(1)), 0o644)
		logf("direct %s: err=%v", arg(0), err)
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
	case "stop":
		return arg(0)
	default:
		logf("unknown step %q", line)
	}
	return ""
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
