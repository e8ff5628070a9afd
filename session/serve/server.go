package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/live"
)

// Session is one run's live session, as the Runner started it.
type Session struct {
	X *live.Orchestrator
	// Recording is the path of its recording ("" when it is not recorded: then it has no
	// event stream).
	Recording string
	// Closed, when set, runs after the session closed (the caller's bookkeeping).
	Closed func()
}

// Runner is what the server needs from summit: the agents it serves and a way to start a
// session for one run.
type Runner interface {
	// Agents lists the ids of the agents that may be invoked, sorted.
	Agents() []string
	// Manifest is an agent's manifest.
	Manifest(agentID string) (protocols.Manifest, bool)
	// Start starts the session of run runID: meta goes in its SessionStarted config (run id,
	// agent, trace id, budget), the hooks see its events and its subagents' model usage.
	Start(runID string, meta map[string]any, hooks Hooks) (*Session, error)
}

// Hooks are what a run watches in its session (live.Options.OnEvent and OnUsage).
type Hooks struct {
	OnEvent func(session.Event)
	OnUsage func(subagentID string, tokens session.Tokens, costUSD float64, known bool)
}

// Options bound what the server accepts.
type Options struct {
	Token      string        // required in every request's Authorization header when set
	MaxBody    int64         // bytes of one request body (default 1 MiB)
	MaxRuns    int           // runs at once (default 4)
	RunTimeout time.Duration // a run's limit (default 30 min); the delegation's timeout too
	// Addr is the address the server listens on (host:port, as the listener reports it): a
	// request's Host, and its Origin when it has one, must name it (or an AllowHosts entry).
	// Empty turns the Host and Origin checks off (a handler served by something else).
	Addr string
	// AllowHosts are other names the server is reached by (a proxy's, a DNS name): each a
	// host, any port, or host:port.
	AllowHosts []string
	// BodyTimeout is how long a request's body may take to arrive, from the end of its
	// headers (0: no limit of its own; http.Server's limits apply).
	BodyTimeout time.Duration
	// Log gets one line per request and per run (never a token or a body).
	Log func(string)
}

// Server serves the agents of a Runner.
type Server struct {
	o  Options
	r  Runner
	mu sync.Mutex
	// runs are every run of this server, by id; active counts those still running.
	runs   map[string]*run
	order  []string // run ids, oldest first: finished runs beyond MaxKept are forgotten
	active int
	closed bool
	wg     sync.WaitGroup
}

// New makes a server; Handler serves it.
func New(r Runner, o Options) *Server {
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.MaxRuns <= 0 {
		o.MaxRuns = 4
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = 30 * time.Minute
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
	return &Server{o: o, r: r, runs: map[string]*run{}}
}

// MaxKept is how many runs the server remembers for agent.status and their event streams:
// beyond it the oldest finished ones are forgotten (their recordings stay).
const MaxKept = 1000

// forget drops the oldest finished runs beyond MaxKept. s.mu is held.
func (s *Server) forget() {
	for i := 0; len(s.runs) > MaxKept && i < len(s.order); {
		id := s.order[i]
		if rn := s.runs[id]; rn != nil && !rn.isEnded() {
			i++
			continue
		}
		delete(s.runs, id)
		s.order = append(s.order[:i], s.order[i+1:]...)
	}
}

// Server-defined JSON-RPC error codes.
const (
	CodeUnauthorized = -32001
	CodeBusy         = -32002
)

// Handler is the HTTP interface (see the package doc).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) { s.rpc(w, r, "") })
	mux.HandleFunc("POST /agents/{agent}/rpc", func(w http.ResponseWriter, r *http.Request) { s.rpc(w, r, r.PathValue("agent")) })
	mux.HandleFunc("GET /runs/{run}/events", s.events)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(w, r) {
			_, _ = io.WriteString(w, "ok\n")
		}
	})
	g := &guard{body: s.o.BodyTimeout, maxBody: s.o.MaxBody, next: mux, disabled: s.o.Addr == ""}
	hosts, err := newHostSet(s.o.Addr, s.o.AllowHosts)
	if !g.disabled && err != nil {
		// Fail closed: summit serve checks its flags first, so this is a caller's mistake.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeRPC(w, http.StatusForbidden, nil, nil, &protocols.RPCError{Code: CodeForbidden, Message: "the server's host check: " + err.Error()})
		})
	}
	g.hosts = hosts
	return g
}

// Shutdown cancels the runs still going and waits (until ctx ends) for their sessions to
// close, so each recording ends cleanly.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for _, rn := range s.runs {
		rn.stop("the server is shutting down")
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// authorized checks the bearer token; it answers 401 itself when the check fails.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.o.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.o.Token)) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="summit"`)
	msg := "a bearer token is required (Authorization: Bearer <SUMMIT_SERVE_TOKEN>)"
	if ok {
		msg = "the bearer token is wrong"
	}
	writeRPC(w, http.StatusUnauthorized, nil, nil, &protocols.RPCError{Code: CodeUnauthorized, Message: msg})
	return false
}

// rpc answers one JSON-RPC request; pathAgent is the agent of a per-agent path ("" for /rpc).
func (s *Server) rpc(w http.ResponseWriter, r *http.Request, pathAgent string) {
	if !s.authorized(w, r) {
		return
	}
	body, err := readBody(w, r, s.o.MaxBody)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.Header().Set("Connection", "close")
		writeRPC(w, http.StatusRequestTimeout, nil, nil, &protocols.RPCError{Code: protocols.CodeInvalidRequest,
			Message: fmt.Sprintf("the request body did not arrive within %s", s.o.BodyTimeout)})
		return
	}
	if err != nil {
		writeRPC(w, http.StatusBadRequest, nil, nil, &protocols.RPCError{Code: protocols.CodeParseError, Message: "reading the request: " + err.Error()})
		return
	}
	if int64(len(body)) > s.o.MaxBody {
		writeRPC(w, http.StatusRequestEntityTooLarge, nil, nil, &protocols.RPCError{Code: protocols.CodeInvalidRequest,
			Message: fmt.Sprintf("the request body is over %d bytes (the server's limit)", s.o.MaxBody)})
		return
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		writeRPC(w, http.StatusOK, nil, nil, &protocols.RPCError{Code: protocols.CodeInvalidRequest, Message: "batch requests are not supported: send one request per call"})
		return
	}
	req, err := protocols.DecodeRequest(body)
	if err != nil {
		var re *protocols.RPCError
		errors.As(err, &re)
		writeRPC(w, http.StatusOK, req.ID, nil, re)
		return
	}
	s.o.Log(fmt.Sprintf("%s %s", req.Method, r.RemoteAddr))
	var result any
	var rerr *protocols.RPCError
	status := http.StatusOK
	switch req.Method {
	case protocols.MethodSchema:
		var p protocols.SchemaParams
		if rerr = params(req, &p); rerr == nil {
			result, rerr = s.schema(orPath(p.AgentID, pathAgent))
		}
	case protocols.MethodInvoke:
		var p protocols.InvokeParams
		if rerr = params(req, &p); rerr == nil {
			p.AgentID = orPath(p.AgentID, pathAgent)
			result, rerr = s.invoke(r.Context(), p)
			if rerr != nil && rerr.Code == CodeBusy {
				status = http.StatusTooManyRequests
				w.Header().Set("Retry-After", "1")
			}
		}
	case protocols.MethodStatus:
		var p protocols.StatusParams
		if rerr = params(req, &p); rerr == nil {
			result, rerr = s.status(p.RunID)
		}
	case protocols.MethodCancel:
		var p protocols.StatusParams
		if rerr = params(req, &p); rerr == nil {
			result, rerr = s.cancel(p.RunID)
		}
	}
	writeRPC(w, status, req.ID, result, rerr)
}

func orPath(id, path string) string {
	if id == "" {
		return path
	}
	return id
}

// params decodes a request's params strictly: an unknown field is an error, so a typo is not
// silently ignored.
func params(req protocols.Request, v any) *protocols.RPCError {
	if len(req.Params) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(req.Params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &protocols.RPCError{Code: protocols.CodeInvalidParams, Message: "params: " + err.Error()}
	}
	return nil
}

// writeRPC writes a JSON-RPC response: the result, or the error.
func writeRPC(w http.ResponseWriter, status int, id json.RawMessage, result any, rerr *protocols.RPCError) {
	resp := protocols.Response{JSONRPC: "2.0", ID: id}
	if len(id) == 0 {
		resp.ID = json.RawMessage("null")
	}
	if rerr != nil {
		resp.Error = rerr
	} else {
		b, err := json.Marshal(result)
		if err != nil {
			resp.Error = &protocols.RPCError{Code: protocols.CodeInternalError, Message: err.Error()}
		} else {
			resp.Result = b
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

// unknownAgent is the error for an agent id the server does not serve, naming the agents.
func (s *Server) unknownAgent(id string) *protocols.RPCError {
	ids := s.r.Agents()
	msg := fmt.Sprintf("unknown agent %q", id)
	if id == "" {
		msg = "params.agentId is required"
	}
	return &protocols.RPCError{Code: protocols.CodeInvalidParams, Message: msg + " (agents: " + strings.Join(ids, ", ") + ")",
		Data: map[string]any{"agents": ids}}
}

func (s *Server) schema(agentID string) (any, *protocols.RPCError) {
	m, ok := s.r.Manifest(agentID)
	if !ok {
		return nil, s.unknownAgent(agentID)
	}
	return m, nil
}

// seqOf reads the seq of a recorded line from its envelope, which starts
// {"v":1,"seq":N (0 when it does not).
func seqOf(line []byte) uint64 {
	i := bytes.Index(line, []byte(`"seq":`))
	if !bytes.HasPrefix(line, []byte(`{"v":`)) || i < 0 || i > 10 {
		return 0
	}
	var n uint64
	for _, c := range line[i+6:] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}

var runIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "run-" + hex.EncodeToString(b)
}

// invoke starts a run (see run.go) and, unless params.wait is false, waits for its end; a
// client that goes away leaves the run going (agent.status finds it).
func (s *Server) invoke(ctx context.Context, p protocols.InvokeParams) (any, *protocols.RPCError) {
	m, ok := s.r.Manifest(p.AgentID)
	if !ok {
		return nil, s.unknownAgent(p.AgentID)
	}
	if p.Inputs == nil {
		p.Inputs = map[string]any{}
	}
	if err := m.ValidateInputs(p.Inputs); err != nil {
		var re *protocols.RPCError
		if errors.As(err, &re) {
			return nil, re
		}
		return nil, &protocols.RPCError{Code: protocols.CodeInternalError, Message: err.Error()}
	}
	b, err := budgetOf(p.Context)
	if err != nil {
		return nil, &protocols.RPCError{Code: protocols.CodeInvalidParams, Message: err.Error(), Data: map[string]any{"path": "context/budget"}}
	}
	if p.RunID != "" && !runIDRE().MatchString(p.RunID) {
		return nil, &protocols.RPCError{Code: protocols.CodeInvalidParams, Message: fmt.Sprintf("runId %q: want 1 to 64 letters, digits, '.', '_' or '-'", p.RunID),
			Data: map[string]any{"path": "runId"}}
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, &protocols.RPCError{Code: CodeBusy, Message: "the server is shutting down"}
	case s.active >= s.o.MaxRuns:
		s.mu.Unlock()
		return nil, &protocols.RPCError{Code: CodeBusy, Message: fmt.Sprintf("%d runs are going, the server's limit; try again when one ends", s.active)}
	case p.RunID != "" && s.runs[p.RunID] != nil:
		s.mu.Unlock()
		return nil, &protocols.RPCError{Code: protocols.CodeInvalidParams, Message: fmt.Sprintf("runId %q is already used; agent.status reports it", p.RunID),
			Data: map[string]any{"path": "runId"}}
	}
	if p.RunID == "" {
		p.RunID = newRunID()
	}
	rn := newRun(p, m, b)
	s.runs[rn.id] = rn
	s.order = append(s.order, rn.id)
	s.active++
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.execute(rn)
		s.mu.Lock()
		s.active--
		s.forget()
		s.mu.Unlock()
	}()
	if p.Wait != nil && !*p.Wait {
		select {
		case <-rn.started:
		case <-ctx.Done():
		}
		return rn.result(), nil
	}
	select {
	case <-rn.done:
	case <-ctx.Done():
	}
	return rn.result(), nil
}

func (s *Server) lookup(id string) (*run, *protocols.RPCError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rn := s.runs[id]
	if rn == nil {
		var ids []string
		for k := range s.runs {
			ids = append(ids, k)
		}
		slices.Sort(ids)
		if len(ids) > 10 {
			ids = append(ids[:10], "…")
		}
		return nil, &protocols.RPCError{Code: protocols.CodeInvalidParams, Message: fmt.Sprintf("unknown runId %q (runs: %s)", id, strings.Join(ids, ", ")),
			Data: map[string]any{"path": "runId"}}
	}
	return rn, nil
}

func (s *Server) status(id string) (any, *protocols.RPCError) {
	rn, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	return rn.result(), nil
}

func (s *Server) cancel(id string) (any, *protocols.RPCError) {
	rn, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	rn.stop("cancelled by the client (agent.cancel)")
	select {
	case <-rn.done:
	case <-time.After(10 * time.Second):
	}
	return rn.result(), nil
}

// budget is a run's limit: tokens (input plus output) and US dollars; 0 is no limit.
type budget struct {
	tokens int64
	usd    float64
}

func budgetOf(c *protocols.InvokeContext) (budget, error) {
	var b budget
	if c == nil {
		return b, nil
	}
	for k, v := range c.Budget {
		if v <= 0 {
			return b, fmt.Errorf("context.budget.%s is %v: want a positive number", k, v)
		}
		switch k {
		case "usd":
			b.usd = v
		case "tokens":
			b.tokens = int64(v)
		default:
			return b, fmt.Errorf("context.budget.%s: want usd or tokens", k)
		}
	}
	return b, nil
}

// events streams a run's recording as server-sent events (see the package doc).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	rn, rerr := s.lookup(r.PathValue("run"))
	if rerr != nil {
		writeRPC(w, http.StatusNotFound, nil, nil, rerr)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			writeRPC(w, http.StatusBadRequest, nil, nil, &protocols.RPCError{Code: protocols.CodeInvalidParams, Message: "after=" + a + ": want a seq"})
			return
		}
		after = n
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	err := rn.follow(r.Context(), func(line []byte) error {
		if seqOf(line) <= after {
			return nil
		}
		if _, err := fmt.Fprintf(w, "event: summit\ndata: %s\n\n", line); err != nil {
			return err
		}
		fl.Flush()
		return nil
	})
	if err != nil {
		return
	}
	end, _ := json.Marshal(rn.result())
	fmt.Fprintf(w, "event: end\ndata: %s\n\n", end)
	fl.Flush()
}
