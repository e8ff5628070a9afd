package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
)

// Defaults of Options.
const (
	DefaultMaxResult    = 64 << 10 // like the tools' (tools.Options.MaxResult)
	DefaultStartTimeout = 60 * time.Second
	DefaultCallTimeout  = 120 * time.Second
)

// Options configure a Manager; zero values mean the defaults.
type Options struct {
	// Dir is the working directory of stdio servers (the workspace).
	Dir string
	// Environ is the base environment of stdio servers (default os.Environ()), reduced to an
	// allow-list (tools.AllowEnv with PassEnv); a server's env adds to it.
	Environ []string
	// PassEnv names variables of Environ passed besides the allow-list (env_passthrough).
	PassEnv []string
	// Command builds a stdio server's command (default tools.GuardedCommand: a session of its
	// own, no controlling terminal, no terminal device). It must start the process in a
	// session or process group of its own, led by it: stopping a server kills that group.
	Command func(env []string, name string, args ...string) (*exec.Cmd, error)
	// Getenv reads the variables that config values name (default os.Getenv).
	Getenv func(string) string
	// MaxResult caps a call's output in bytes (default DefaultMaxResult).
	MaxResult int
	// StartTimeout bounds a server's start: the process (or connection) and the handshake
	// and the tool list (default DefaultStartTimeout).
	StartTimeout time.Duration
	// CallTimeout bounds a call when the server sets no timeout_s (default DefaultCallTimeout).
	CallTimeout time.Duration
	// HTTPClient is the base client of HTTP servers (default http.DefaultClient's transport).
	HTTPClient *http.Client
}

// JailFunc starts a stdio server run for one subagent (Manager.Confine), as
// agents/tools.Sandbox.ConfinedCommandNet does: it may write only below the subagent's
// worktree, its private caches and rw (the server's own temp dir), reads none of the hidden
// paths, and has the network when network is true (the server's config says network: true)
// or the subagent's jail grants it. Like Options.Command, the process leads a session or
// process group of its own.
type JailFunc func(rw, env []string, network bool, name string, args ...string) (*exec.Cmd, error)

// Tool is one tool a server offers.
type Tool struct {
	Server      string         // the server's name (as the agent or config names it)
	Name        string         // the server's own name for it
	Qualified   string         // mcp__<server>__<name>
	Description string         //
	InputSchema map[string]any // a JSON Schema object (never nil)
	// ReadOnly is the tool's annotations.readOnlyHint: the server says it changes nothing.
	// Every other tool may write, and its subagent works in a worktree (Writes).
	ReadOnly bool
}

// Result is what a call produced: the content as text, capped, and whether the server said
// the call failed.
type Result struct {
	Output  string
	IsError bool
}

// Manager runs a session's MCP servers: each starts on first use, is shared by every
// subagent, and stops at Close. A nil *Manager has no servers. It is safe for concurrent use.
type Manager struct {
	o      Options
	ctx    context.Context // the servers' lifetime; cancelled by Close
	cancel context.CancelFunc
	starts sync.WaitGroup // start attempts in flight

	mu      sync.Mutex
	servers map[string]*server // by id: the name, or name@hash for an agent's own variant
	config  map[string]provider.MCPServer
	jails   map[string]JailFunc // by worktree (Confine)
	closed  bool
}

// NewManager prepares the servers of the config; none starts until it is needed.
func NewManager(servers map[string]provider.MCPServer, o Options) *Manager {
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.MaxResult <= 0 {
		o.MaxResult = DefaultMaxResult
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	m := &Manager{o: o, servers: map[string]*server{}, config: map[string]provider.MCPServer{}, jails: map[string]JailFunc{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for name, c := range servers {
		m.config[name] = c
		m.servers[name] = &server{id: name, name: name, cfg: c}
	}
	return m
}

// Servers lists the configured servers' names, sorted.
func (m *Manager) Servers() []string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedKeys(m.config)
}

// Configured is the config's server name, when it names one.
func (m *Manager) Configured(name string) (provider.MCPServer, bool) { return m.configured(name) }

// configured reports whether the config names server name.
func (m *Manager) configured(name string) (provider.MCPServer, bool) {
	if m == nil {
		return provider.MCPServer{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.config[name]
	return c, ok
}

// register returns the id of the server an agent defines inline: the configured server when
// the definition is the same, else one run for that definition.
func (m *Manager) register(name string, c provider.MCPServer) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cc, ok := m.config[name]; ok && sameServer(cc, c) {
		return name
	}
	b, _ := json.Marshal(c)
	id := fmt.Sprintf("%s@%08x", name, fnv32(b))
	if _, ok := m.servers[id]; !ok {
		m.servers[id] = &server{id: id, name: name, cfg: c}
	}
	return id
}

// At returns the id of the server id run in dir, a subagent's worktree: a process of its own
// started there (its working directory) and offered dir as its one MCP root, so what its
// tools write lands in the worktree, where the subagent's changes are recorded, and never in
// the workspace. Release stops it. A url server is one process elsewhere: it is shared.
func (m *Manager) At(id, dir string) (string, error) {
	s, err := m.get(id)
	if err != nil || dir == "" || s.cfg.Command == "" {
		return id, err
	}
	in := id + "@" + dir
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.servers[in]; !ok {
		m.servers[in] = &server{id: in, name: s.name, cfg: s.cfg, dir: dir}
	}
	return in, nil
}

// Confine makes every stdio server run in dir (At), from its next start on, start through
// jail: the jail of the subagent that works there (see doc.go, "Isolation"), with a temp dir
// of its own as its TMPDIR, removed when it exits. A server run in dir with no jail given
// starts through Options.Command. Release forgets the jail.
//
// Confine("", jail) does the same for the session's own instances (the shared ones, run in
// Options.Dir): summit gives them a read-only jail (see doc.go, "Isolation").
func (m *Manager) Confine(dir string, jail JailFunc) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if jail == nil {
		delete(m.jails, dir)
		return
	}
	m.jails[dir] = jail
}

// Release stops the servers run in dir (At) and forgets them and dir's jail: the subagent that
// worked there has stopped.
func (m *Manager) Release(dir string) {
	if m == nil || dir == "" {
		return
	}
	m.mu.Lock()
	delete(m.jails, dir)
	var gone []*server
	for id, s := range m.servers {
		if s.dir == dir {
			gone = append(gone, s)
			delete(m.servers, id)
		}
	}
	m.mu.Unlock()
	for _, s := range gone {
		s.mu.Lock()
		a := s.cur
		s.mu.Unlock()
		if a == nil {
			continue
		}
		<-a.done // a start in flight ends (it is bounded by the start timeout)
		if a.sess != nil {
			a.stop()
		}
	}
}

func sameServer(a, b provider.MCPServer) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func fnv32(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

func (m *Manager) get(id string) (*server, error) {
	if m == nil {
		return nil, fmt.Errorf("MCP server %q is not configured (no MCP servers are)", id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("the session's MCP servers are stopped")
	}
	s := m.servers[id]
	if s == nil {
		return nil, fmt.Errorf("MCP server %q is not configured%s", id, configuredList(sortedKeys(m.config)))
	}
	return s, nil
}

func configuredList(names []string) string {
	if len(names) == 0 {
		return " (no MCP servers are)"
	}
	return " (configured: " + strings.Join(names, ", ") + ")"
}

// Tools lists the tools of the server with this id (a configured server's name), starting it
// if it is not running.
func (m *Manager) Tools(ctx context.Context, id string) ([]Tool, error) {
	s, err := m.get(id)
	if err != nil {
		return nil, err
	}
	a, err := m.running(ctx, s)
	if err != nil {
		return nil, err
	}
	return a.tools, nil
}

// Call calls tool (the server's own name) of the server with this id with args, the JSON
// object text the model wrote, sent as written. The error is for a call that did not reach an
// answer (the server could not start, died, timed out, or refused the request); a tool that
// ran and failed is a Result with IsError.
func (m *Manager) Call(ctx context.Context, id, tool, args string) (Result, error) {
	s, err := m.get(id)
	if err != nil {
		return Result{}, err
	}
	a, err := m.running(ctx, s)
	if err != nil {
		return Result{}, err
	}
	timeout, whose := m.o.CallTimeout, "summit's default; the server's timeout_s sets another"
	if s.cfg.TimeoutS > 0 {
		timeout, whose = time.Duration(s.cfg.TimeoutS)*time.Second, "its timeout_s"
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var raw json.RawMessage
	if strings.TrimSpace(args) == "" {
		raw = json.RawMessage("{}")
	} else {
		raw = json.RawMessage(args)
	}
	res, err := a.sess.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: raw})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return Result{}, fmt.Errorf("MCP server %s: the call was stopped: %w", s.name, ctx.Err())
		case cctx.Err() != nil:
			return Result{}, fmt.Errorf("MCP server %s did not answer within %s (%s)", s.name, timeout, whose)
		case errors.As(err, new(*jsonrpc.Error)): // the server answered with an error
		case a.diedWithin(200 * time.Millisecond): // a lost connection is usually a dying server
			return Result{}, fmt.Errorf("MCP server %s stopped during the call%s", s.name, a.exitNote())
		}
		return Result{}, fmt.Errorf("MCP server %s: %v", s.name, err)
	}
	out, isErr := render(res)
	return Result{Output: clip(out, m.o.MaxResult), IsError: isErr}, nil
}

// PIDs lists the process ids of the stdio servers running now (each leads its process
// group), sorted.
func (m *Manager) PIDs() []int {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	all := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		all = append(all, s)
	}
	m.mu.Unlock()
	var out []int
	for _, s := range all {
		s.mu.Lock()
		a := s.cur
		s.mu.Unlock()
		if a == nil || a.proc == nil {
			continue
		}
		select {
		case <-a.done:
			if a.err == nil && !a.isDead() {
				out = append(out, a.proc.pid())
			}
		default:
		}
	}
	sort.Ints(out)
	return out
}

// Close stops every server: a stdio server's stdin is closed and its process group killed.
// Later calls fail. It waits for starts in flight, so no process outlives it.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	var all []*server
	for _, s := range m.servers {
		all = append(all, s)
	}
	m.mu.Unlock()
	m.cancel()
	m.starts.Wait()
	var wg sync.WaitGroup
	for _, s := range all {
		s.mu.Lock()
		a := s.cur
		s.mu.Unlock()
		if a != nil && a.sess != nil {
			wg.Add(1)
			go func() { defer wg.Done(); a.stop() }()
		}
	}
	wg.Wait()
	return nil
}

// server is one MCP server of the session and its current start attempt.
type server struct {
	id, name string
	cfg      provider.MCPServer
	// dir is the root of a server run for one subagent's worktree (see At): its working
	// directory and the one MCP root it is offered. "" is the session's instance, in
	// Options.Dir, offered no roots.
	dir string
	mu  sync.Mutex
	cur *attempt // the latest start attempt; replaced when it failed or the server died
}

// attempt is one start of a server: done closes when it has succeeded or failed.
type attempt struct {
	done  chan struct{}
	err   error
	sess  *sdk.ClientSession
	tools []Tool
	proc  *proc         // stdio servers
	dead  chan struct{} // closed when the session ended (the server exited or hung up)
}

func (a *attempt) isDead() bool {
	select {
	case <-a.dead:
		return true
	default:
		return false
	}
}

// diedWithin reports whether the session ends within d.
func (a *attempt) diedWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.dead:
		return true
	case <-t.C:
		return false
	}
}

// exitNote is " (exit status 3); its stderr ends: …" for a stdio server.
func (a *attempt) exitNote() string {
	if a.proc == nil {
		return ""
	}
	return a.proc.note()
}

// stop ends the session and, for a stdio server, its process group.
func (a *attempt) stop() {
	_ = a.sess.Close()
	if a.proc != nil {
		a.proc.stop(true)
	}
}

// running returns the server's live attempt, starting one when there is none or the last one
// failed or died. Waiting for a start ends with ctx; the start itself goes on (other subagents
// may need it) until the start timeout or Close.
func (m *Manager) running(ctx context.Context, s *server) (*attempt, error) {
	s.mu.Lock()
	a := s.cur
	stale := a == nil
	if a != nil {
		select {
		case <-a.done:
			stale = a.err != nil || a.isDead()
		default:
		}
	}
	if stale {
		m.mu.Lock()
		closed := m.closed
		if !closed {
			m.starts.Add(1)
		}
		m.mu.Unlock()
		if closed {
			s.mu.Unlock()
			return nil, errors.New("the session's MCP servers are stopped")
		}
		a = &attempt{done: make(chan struct{}), dead: make(chan struct{})}
		s.cur = a
		go func() {
			defer m.starts.Done()
			m.start(s, a)
		}()
	}
	s.mu.Unlock()
	select {
	case <-a.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("MCP server %s: stopped waiting for it to start: %w", s.name, ctx.Err())
	}
	if a.err != nil {
		return nil, a.err
	}
	return a, nil
}

// start connects to the server, lists its tools, and closes a.done.
func (m *Manager) start(s *server, a *attempt) {
	defer close(a.done)
	ctx, cancel := context.WithTimeout(m.ctx, m.o.StartTimeout)
	defer cancel()
	transport, err := m.transport(s, a)
	if err != nil {
		a.err = fmt.Errorf("MCP server %s: %v", s.name, err)
		close(a.dead)
		return
	}
	caps := &sdk.ClientCapabilities{} // no roots, sampling or elicitation
	if s.dir != "" {
		// A server rooted in a worktree is told so: servers that take their allowed
		// directories from the client's roots (the reference filesystem server) then work
		// there, and only there.
		caps.RootsV2 = &sdk.RootCapabilities{}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "summit", Version: "1"}, &sdk.ClientOptions{Capabilities: caps})
	if s.dir != "" {
		client.AddRoots(&sdk.Root{URI: (&url.URL{Scheme: "file", Path: s.dir}).String(), Name: "worktree"})
	}
	sess, err := client.Connect(ctx, transport, nil)
	if err == nil {
		a.sess = sess
		a.tools, err = listTools(ctx, s.name, sess)
	}
	if err != nil {
		why := err.Error()
		switch {
		case m.ctx.Err() != nil:
			why = "the session ended"
		case ctx.Err() != nil:
			why = fmt.Sprintf("no answer within %s", m.o.StartTimeout)
		case a.proc != nil && a.proc.waitExit(time.Second):
			why = "it exited before answering" // the SDK's "connection closed: EOF" says less
		}
		if a.sess != nil {
			_ = a.sess.Close()
		}
		what := "connect to"
		if a.proc != nil {
			what = "start"
			a.proc.stop(false) // it failed: no grace
		}
		a.err = fmt.Errorf("MCP server %s: could not %s it: %s%s", s.name, what, why, a.exitNote())
		close(a.dead)
		return
	}
	go func() {
		_ = sess.Wait()
		close(a.dead)
	}()
}

// transport builds the client transport of the server's kind.
func (m *Manager) transport(s *server, a *attempt) (sdk.Transport, error) {
	c := s.cfg
	if c.Command != "" {
		var args []string
		for _, arg := range c.Args {
			args = append(args, expandBraced(arg, m.o.Getenv))
		}
		// The allow-list environment (tools.AllowEnv) and the server's own env.
		env := tools.AllowEnv(m.o.Environ, m.o.PassEnv)
		for _, k := range sortedKeys(c.Env) {
			env = append(env, k+"="+os.Expand(c.Env[k], m.o.Getenv))
		}
		start := m.o.Command
		if start == nil {
			start = tools.GuardedCommand
		}
		m.mu.Lock()
		jail := m.jails[s.dir]
		m.mu.Unlock()
		var cmd *exec.Cmd
		var err error
		tmp := ""
		if jail != nil {
			// Jailed: a temp dir of its own (the shared one may hold the workspace and other
			// worktrees, which it may not write), the one place it may write besides the
			// worktree and its subagent's private caches.
			if tmp, err = os.MkdirTemp("", "summit-mcp-"); err != nil {
				return nil, fmt.Errorf("could not start it: %v", err)
			}
			env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+tmp)
			cmd, err = jail([]string{tmp}, env, c.Network, expandBraced(c.Command, m.o.Getenv), args...)
		} else {
			cmd, err = start(env, expandBraced(c.Command, m.o.Getenv), args...)
		}
		if err != nil {
			if tmp != "" {
				os.RemoveAll(tmp)
			}
			return nil, fmt.Errorf("could not start it: %v", err)
		}
		cmd.Dir = cmp.Or(s.dir, m.o.Dir)
		p, err := startProc(cmd, tmp)
		if err != nil {
			return nil, fmt.Errorf("could not start it: %v", err)
		}
		a.proc = p
		return &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil
	}
	hc := *m.o.HTTPClient
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	headers := map[string]string{}
	for k, v := range c.Headers {
		headers[k] = os.Expand(v, m.o.Getenv)
	}
	hc.Transport = headerTransport{base: base, headers: headers}
	url := os.Expand(c.URL, m.o.Getenv)
	if c.Type == "sse" {
		return &sdk.SSEClientTransport{Endpoint: url, HTTPClient: &hc}, nil
	}
	return &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &hc, DisableStandaloneSSE: true, MaxRetries: 1}, nil
}

// headerTransport adds a server's headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

var bracedVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// expandBraced replaces ${VAR} only: a command's arguments may hold a lone $ for their own use.
func expandBraced(s string, getenv func(string) string) string {
	return bracedVar().ReplaceAllStringFunc(s, func(v string) string { return getenv(v[2 : len(v)-1]) })
}

// listTools reads every page of the server's tools.
func listTools(ctx context.Context, server string, sess *sdk.ClientSession) ([]Tool, error) {
	var out []Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing its tools: %v", err)
		}
		schema, _ := t.InputSchema.(map[string]any)
		if schema == nil {
			schema = map[string]any{}
		}
		// The schema's dialect tag means nothing to a model API, and some refuse the key.
		delete(schema, "$schema")
		if _, ok := schema["type"]; !ok {
			schema["type"] = "object"
		}
		if _, ok := schema["properties"]; !ok {
			schema["properties"] = map[string]any{}
		}
		out = append(out, Tool{Server: server, Name: t.Name, Qualified: Qualify(server, t.Name),
			Description: t.Description, InputSchema: schema, ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
	}
	return out, nil
}

// tail keeps the last bytes a server wrote on stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-tailMax:]...)
	}
	return len(p), nil
}

// last is the end of what was written: its last 10 lines, at most 1 KiB.
func (t *tail) last() string {
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	s = strings.TrimRight(strings.ToValidUTF8(s, "\uFFFD"), "\n\r\t ")
	lines := strings.Split(s, "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	s = strings.Join(lines, "\n")
	if len(s) > 1<<10 {
		s = "…" + s[len(s)-1<<10:]
	}
	return strings.ToValidUTF8(s, "")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
