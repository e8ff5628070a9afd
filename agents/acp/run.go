package acp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// Grant is a decision on something an agent asked for.
type Grant struct {
	Allowed bool
	// Always is set when the user allowed it for the rest of the subagent (summit's "allow
	// for sa-N"): the agent may be told to stop asking.
	Always bool
	Reason string // why not, when denied
}

// Config is one external agent's run.
type Config struct {
	Agent Agent
	// Sandbox is where the agent works: its root is the agent's cwd and its session's cwd;
	// fs/read_text_file, fs/write_text_file and the terminals go through it, confined as
	// summit's own tools are.
	Sandbox *tools.Sandbox
	// Environ is summit's environment, the source of what the agent inherits (nil:
	// os.Environ()).
	Environ []string
	// Mode is the subagent's permission mode; Decide applies its policy to a canonical tool.
	Mode   agents.PermissionMode
	Decide func(tool string) agents.Decision
	// Approve asks the user (or --approve) about a call the policy says asks; it records the
	// request and the decision. ctx ends when the agent withdraws the request.
	Approve func(ctx context.Context, tool string, args map[string]any, reason string) (Grant, error)
	// Emit records one event about the subagent.
	Emit func(session.Data) error
	// MCP are the MCP servers the agent gets in session/new, by name (see mcp.go).
	MCP map[string]provider.MCPServer
	// Child records a subagent the agent started itself (an ACP child session, see child.go)
	// as a summit subagent; nil: children are not shown, and their updates are dropped.
	Child func(ChildInfo) (ChildSink, error)
	// CancelGrace is how long a cancelled turn may take to end before the process group is
	// killed (default 5 s).
	CancelGrace time.Duration
	// MaxLine bounds one line of the agent's stdout (default DefaultMaxLine).
	MaxLine int
	// Coalesce is how long message and thought chunks are gathered into one event (default
	// 30 ms, as the native runtime does).
	Coalesce time.Duration
	// Version is summit's, sent as clientInfo.
	Version string
	// Quiet is how long an agent whose last word was an error may then do nothing before the
	// run fails naming that error (default 40 s); QuietFinal the same after an error it said it
	// will not retry (default 10 s). Both keep the failure within a minute of the agent's last
	// error, where the subagent's timeout would leave it minutes in silence.
	Quiet, QuietFinal time.Duration
	// Relay, when set, points the agent's model calls at a loopback relay (relay.go): a
	// runner's, for an agent whose models come from the session.
	Relay *Relay
}

// Run is a started agent: its process (a process group of its own), the ACP connection and
// the session. Every Run must be Closed, which kills the group whatever happened.
type Run struct {
	c      Config
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File // our end of its stdin
	stdout *os.File // our end of its stdout
	guard  *lineGuard
	stderr *tail
	lines  *stderrLines // stderr as transcript notes, through the tail
	conn   *sdk.ClientSideConnection
	cl     *client
	sid    sdk.SessionId
	info   sdk.InitializeResponse

	// mark is RunMarkVar=<id> in the agent's environment, inherited by everything it starts:
	// how the kill finds what left its process group (see killAll).
	mark    string
	exited  chan struct{} // closed when the process has been reaped
	exitErr error
	mu      sync.Mutex
	killed  bool // summit killed it (a cancellation, the end of the run)
	closed  bool
}

// Turn is how one session/prompt ended.
type Turn struct {
	StopReason sdk.StopReason
	// Text is the agent's message of the turn (its agent_message_chunk text).
	Text  string
	Usage *sdk.Usage
}

// ErrCancelled is returned by Prompt when its context ended: the turn was cancelled.
var ErrCancelled = errors.New("cancelled")

// Start runs the agent in c.Sandbox's root and opens a session: initialize (fs and terminal
// capabilities), session/new (cwd the root, no MCP servers), authenticate when the agent says
// it must and offers a method that needs no browser, then the agent's mode set to match the
// subagent's permission mode where it offers one. On an error the Run is still returned (nil
// only when the process could not start) and must be Closed; its Stderr says what the agent
// printed.
func Start(ctx context.Context, c Config) (*Run, error) {
	if c.Environ == nil {
		c.Environ = os.Environ()
	}
	if c.CancelGrace <= 0 {
		c.CancelGrace = 5 * time.Second
	}
	if c.Coalesce <= 0 {
		c.Coalesce = 30 * time.Millisecond
	}
	if c.Quiet <= 0 {
		c.Quiet = 40 * time.Second
	}
	if c.QuietFinal <= 0 {
		c.QuietFinal = 10 * time.Second
	}
	if err := c.refuseUnasked(); err != nil {
		return nil, err
	}
	r := &Run{c: c, stderr: &tail{max: 16 << 10}, exited: make(chan struct{})}
	r.lines = &stderrLines{tail: r.stderr}
	if err := r.spawn(); err != nil {
		return nil, err
	}
	r.cl = newClient(r)
	r.lines.start(r.cl)
	r.conn = sdk.NewClientSideConnection(r.cl, &capsWriter{w: r.stdin}, r.guard)
	// The SDK logs to slog.Default (the terminal) unless told otherwise; what it would say is
	// said by our own errors.
	r.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.guard.open()

	hello, err := call(r, ctx, func(ctx context.Context) (sdk.InitializeResponse, error) {
		return r.conn.Initialize(ctx, sdk.InitializeRequest{
			ProtocolVersion: sdk.ProtocolVersionNumber,
			ClientInfo:      &sdk.Implementation{Name: "summit", Version: c.Version},
			ClientCapabilities: sdk.ClientCapabilities{
				Fs:       sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
				Terminal: true,
				// A gateway (a local model endpoint) is offered only when the agent's
				// environment names one: agents then list a "gateway" auth method.
				Auth: sdk.AuthCapabilities{Meta: gatewayMeta(c.agentEnv())},
			},
		})
	})
	if err != nil {
		return r, fmt.Errorf("initialize: %w", err)
	}
	r.info = hello
	if hello.ProtocolVersion != sdk.ProtocolVersionNumber {
		return r, fmt.Errorf("the agent speaks ACP version %d; summit speaks %d", hello.ProtocolVersion, sdk.ProtocolVersionNumber)
	}
	servers, err := mcpServers(c.MCP, hello.AgentCapabilities.McpCapabilities, func(k string) string { return envValue(c.Environ, k) })
	if err != nil {
		return r, err
	}
	if len(servers) > 0 {
		r.cl.note(mcpNote(servers))
	}
	newSession := func(ctx context.Context) (sdk.NewSessionResponse, error) {
		return r.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: c.Sandbox.Root(), McpServers: servers, Meta: sessionMeta()})
	}
	sess, err := call(r, ctx, newSession)
	if isAuthRequired(err) {
		m, how, ok := chooseAuth(hello.AuthMethods, c.agentEnv())
		if !ok {
			return r, fmt.Errorf("the agent needs authentication and offers no method that works without a browser: %s", how)
		}
		_, aerr := call(r, ctx, func(ctx context.Context) (sdk.AuthenticateResponse, error) {
			return r.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: m.id, Meta: m.meta})
		})
		if aerr != nil {
			return r, fmt.Errorf("authenticate (%s): %w", how, aerr)
		}
		r.cl.note("authenticated with " + how)
		sess, err = call(r, ctx, newSession)
	}
	if err != nil {
		return r, fmt.Errorf("session/new: %w", err)
	}
	r.sid = sess.SessionId
	r.cl.setSession(sess.SessionId)
	if sess.Modes != nil {
		r.setMode(ctx, *sess.Modes)
	}
	return r, nil
}

// spawn starts the process in its own process group with pipes of our own: Wait returns when
// it exits, whatever its children hold open, and closing our ends stops every read.
func (r *Run) spawn() error {
	a := r.c.Agent
	path, err := exec.LookPath(a.Command)
	if err != nil {
		msg := fmt.Sprintf("%s: cannot start %s: %v", a.Name, a.Command, err)
		if a.Install != "" {
			msg += "; install it with " + a.Install
		}
		return errors.New(msg)
	}
	// The process is confined as the sandbox's shell is (tools.Sandbox.ConfinedCommand): in a
	// worktree it writes only there, in a temp dir of its own (its TMPDIR: the shared one may
	// hold the workspace), /dev, the build caches and its own state (a.Writable), and cannot
	// read .summit/ nor summit's own directories. Claude Code and Codex write files and run
	// commands themselves, not over fs/* and terminal/*: this, not the sandbox's tools, is
	// what keeps them in their worktree, and everything they start inherits it.
	env := a.Environ(r.c.Environ)
	// The names the user passes (env_passthrough) reach the agent too; the rest of summit's
	// environment does not (Environ is an allow-list).
	for _, kv := range tools.AllowEnv(r.c.Environ, r.c.Sandbox.PassEnv()) {
		if k, _, _ := strings.Cut(kv, "="); slices.Contains(r.c.Sandbox.PassEnv(), k) {
			env = append(slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") }), kv)
		}
	}
	if r.c.Relay != nil {
		env = r.c.Relay.Env(env) // after the pass-through: a passed key does not reach it either
	}
	var rw []string
	tmp := ""
	if r.c.Sandbox.ConfinesWrites() {
		tmp, err = os.MkdirTemp("", "summit-acp-")
		if err != nil {
			return fmt.Errorf("%s: cannot start %s: %v", a.Name, a.Command, err)
		}
		env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+tmp)
		dirs, other := a.WritablePaths(env)
		for _, d := range dirs {
			// A fresh account has no state directory yet, and the agent could not create it
			// in a HOME it cannot write.
			_ = os.MkdirAll(d, 0o700)
		}
		rw = append(append([]string{tmp}, dirs...), other...)
		if !tools.ConfinementAvailable() && r.c.Emit != nil {
			_ = r.c.Emit(session.TranscriptEvent{EventType: session.TranscriptMessage,
				Text: a.Name + " is not confined to its worktree: this system has no Landlock, so it can write wherever you can"})
		}
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	r.mark = RunMarkVar + "=" + hex.EncodeToString(id[:])
	env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, RunMarkVar+"=") }), r.mark)
	cmd, err := r.c.Sandbox.ConfinedCommand(rw, env, path, a.Args...)
	var inR, inW, outR, outW *os.File
	if err == nil {
		inR, inW, err = os.Pipe()
	}
	if err == nil {
		if outR, outW, err = os.Pipe(); err != nil {
			inR.Close()
			inW.Close()
		}
	}
	if err != nil {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		return fmt.Errorf("%s: cannot start %s: %v", a.Name, a.Command, err)
	}
	cmd.Dir = r.c.Sandbox.Root()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, r.lines
	// ConfinedCommand started it in a session of its own (Setsid: no controlling terminal,
	// its own process group, killed as one); its stdin is our pipe, never a terminal.
	// Stderr is copied by exec: a process that left the group (setsid) and holds it open must
	// not keep Wait from returning.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		return fmt.Errorf("%s: cannot start %s: %v", a.Name, a.CommandLine(), err)
	}
	r.cmd, r.pgid, r.stdin, r.stdout = cmd, cmd.Process.Pid, inW, outR
	r.guard = newLineGuard(outR, r.c.MaxLine)
	go func() {
		r.exitErr = cmd.Wait()
		// What it left running (a child holding stdout open, a command in a session of its
		// own, say) goes with it, and so does its temp dir, before Close returns.
		r.killAll()
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		close(r.exited)
	}()
	return nil
}

// Pid is the agent process's id (its process group's too).
func (r *Run) Pid() int { return r.pgid }

// Info is what the agent said about itself in initialize.
func (r *Run) Info() sdk.InitializeResponse { return r.info }

// Stderr is the tail of what the agent wrote on stderr.
func (r *Run) Stderr() string { return r.stderr.String() }

// call runs one request and returns when it answers, ctx ends, the agent exits or its stdout
// is refused, whichever comes first; the error then says which.
func call[T any](r *Run, ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan result, 1)
	go func() {
		v, err := fn(cctx)
		ch <- result{v, err}
	}()
	var zero T
	select {
	case res := <-ch:
		if res.err != nil {
			return res.v, r.explain(res.err)
		}
		return res.v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-r.guard.bad:
		return zero, r.guard.Err()
	case <-r.exited:
		// Whatever the agent sent before it exited may still be in the pipe: give the
		// request a moment to see its answer.
		select {
		case res := <-ch:
			if res.err == nil {
				return res.v, nil
			}
		case <-time.After(200 * time.Millisecond):
		}
		return zero, r.exitError()
	}
}

// explain turns a connection failure into what happened to the agent.
func (r *Run) explain(err error) error {
	if gerr := r.guard.Err(); gerr != nil {
		return gerr
	}
	var re *sdk.RequestError
	if errors.As(err, &re) && re.Code == -32603 && strings.Contains(fmt.Sprint(re.Data), "peer disconnected") {
		select {
		case <-r.exited:
			return r.exitError()
		case <-time.After(time.Second):
			return errors.New("the agent closed its stdout")
		}
	}
	return err
}

// exitError says how the process ended.
func (r *Run) exitError() error {
	<-r.exited
	if err := r.guard.Err(); err != nil {
		return err
	}
	var ee *exec.ExitError
	if errors.As(r.exitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Errorf("the agent was killed by signal %s", ws.Signal())
		}
		return fmt.Errorf("the agent exited with status %d", ee.ExitCode())
	}
	if r.exitErr != nil {
		return fmt.Errorf("the agent ended: %v", r.exitErr)
	}
	return errors.New("the agent exited")
}

// Prompt sends one session/prompt and waits for its stop reason. When ctx ends first, it sends
// session/cancel, gives the turn CancelGrace to end, then kills the process group, and
// returns ErrCancelled with what the turn had. The agent's updates are recorded meanwhile.
func (r *Run) Prompt(ctx context.Context, text string) (Turn, error) {
	r.cl.startTurn()
	turnCtx, stopTurn := context.WithCancel(context.Background())
	defer stopTurn()
	type result struct {
		resp sdk.PromptResponse
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		resp, err := r.conn.Prompt(turnCtx, sdk.PromptRequest{SessionId: r.sid, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		ch <- result{resp, err}
	}()
	end := func(res result, err error) (Turn, error) {
		t := r.cl.endTurn(err != nil)
		t.StopReason, t.Usage = res.resp.StopReason, res.resp.Usage
		if t.Usage == nil {
			t.Usage = metaUsage(res.resp.Meta)
		}
		return t, err
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var stalled string
wait:
	for {
		select {
		case <-tick.C:
			if stalled = r.cl.stall(r.c.Quiet, r.c.QuietFinal); stalled != "" {
				break wait
			}
			continue
		case res := <-ch:
			if res.err != nil {
				return end(res, r.explain(res.err))
			}
			if msg := r.cl.turnError(); msg != "" && res.resp.StopReason == sdk.StopReasonEndTurn {
				return end(res, fmt.Errorf("the agent's model request failed: %s", msg))
			}
			return end(res, nil)
		case <-r.guard.bad:
			r.kill()
			return end(<-ch, r.guard.Err())
		case <-r.exited:
			// An answer sent just before the exit may still be in the pipe: give it a moment.
			var res result
			select {
			case res = <-ch:
			case <-time.After(time.Second):
				stopTurn()
				res = <-ch
			}
			if res.err == nil {
				return end(res, nil)
			}
			return end(res, r.exitError())
		case <-ctx.Done():
		}
		break
	}
	if stalled != "" {
		// The agent gave up without ending its turn (Codex after its last reconnect): the
		// run fails now, naming what it said, not at the subagent's timeout.
		r.kill()
		stopTurn()
		return end(<-ch, errors.New(stalled))
	}
	// ctx ended: the turn is cancelled.
	// Sent from a goroutine: an agent that stopped reading stdin must not block the kill.
	go func() { _ = r.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: r.sid}) }()
	grace := time.NewTimer(r.c.CancelGrace)
	defer grace.Stop()
	var res result
	select {
	case res = <-ch:
	case <-grace.C:
		r.kill()
		stopTurn()
		res = <-ch
	case <-r.exited:
		stopTurn()
		res = <-ch
	}
	return end(res, ErrCancelled)
}

// kill ends the process group, and whatever the agent started outside it, now.
func (r *Run) kill() {
	r.mu.Lock()
	r.killed = true
	r.mu.Unlock()
	r.killAll()
}

// RunMarkVar is set, to an id of the run's own, in the environment of every agent process:
// what the agent starts inherits it, even in a process group or session of its own.
const RunMarkVar = "SUMMIT_ACP_RUN"

// killAll kills the process group, then every process whose environment holds the run's
// mark: an agent may start its commands outside its group (Claude Code runs each Bash call in
// a session of its own, setsid), where the group's kill does not reach them and they would
// outlive an agent that was killed rather than cancelled, or that died. A process forked
// while the list was read is found the next time round. Where there is no /proc, the group's
// kill is all there is.
func (r *Run) killAll() {
	_ = syscall.Kill(-r.pgid, syscall.SIGKILL)
	if r.mark == "" {
		return
	}
	for range 10 {
		pids := markedProcs(r.mark)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// markedProcs lists the processes whose environment holds kv (a zombie's is empty). Only our
// own processes' environments can be read.
func markedProcs(kv string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, []byte(kv)) {
			continue
		}
		for v := range bytes.SplitSeq(env, []byte{0}) {
			if string(v) == kv {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// Close kills the process group (whatever is left of it), reaps the process, closes the
// pipes and waits for the requests the agent had in flight to settle. It is safe to call
// twice.
func (r *Run) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	r.kill()
	<-r.exited
	r.stdin.Close()
	r.stdout.Close()
	if r.cl != nil {
		r.cl.close()
	}
}

// metaUsage reads the token counts an agent puts in the prompt response's _meta instead of
// usage (Gemini CLI: _meta.quota.token_count.{input_tokens,output_tokens}); nil when absent.
func metaUsage(meta map[string]any) *sdk.Usage {
	q, _ := meta["quota"].(map[string]any)
	tc, _ := q["token_count"].(map[string]any)
	in, ok1 := tc["input_tokens"].(float64)
	out, ok2 := tc["output_tokens"].(float64)
	if !ok1 && !ok2 {
		return nil
	}
	return &sdk.Usage{InputTokens: int(in), OutputTokens: int(out), TotalTokens: int(in + out)}
}

// refuseUnasked refuses, before any process starts, a confined run in which the agent would
// run commands without asking while summit's policy asks for them: its ConfinedModes mode is
// one of its Unasked (Codex's agent-full-access, the only one of its modes whose commands run
// inside summit's confinement) and the subagent's mode is not bypassPermissions. Summit, not
// the agent, decides each command; the message names the modes that work.
func (c Config) refuseUnasked() error {
	a := c.Agent
	m, ok := a.ConfinedModes[c.Mode]
	if !ok || !slices.Contains(a.Unasked, m) || !c.Sandbox.ConfinesWrites() || !tools.ConfinementAvailable() {
		return nil
	}
	decide := c.Decide
	if decide == nil {
		decide = func(tool string) agents.Decision { return agents.Decide(c.Mode, tool) }
	}
	if decide(agents.ToolShell).Verdict == agents.Allow {
		return nil // bypassPermissions: summit too runs its commands without asking
	}
	return fmt.Errorf("%s cannot run in %s confined to its worktree: its own sandbox cannot start inside summit's (Landlock), "+
		"and its only mode that runs commands here (%s) runs them without asking summit, which %s asks about; "+
		"delegate with --permission-mode %s to let it run commands unasked (still confined to its worktree), "+
		"--permission-mode %s to let it only read and propose edits, or use an agent that asks for each command (claude-code, gemini-cli)",
		a.Name, c.Mode, m, c.Mode, agents.ModeBypass, agents.ModePlan)
}
