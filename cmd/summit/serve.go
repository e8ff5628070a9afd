package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/serve"
)

// serveTokenEnv names the variable that holds the bearer token of summit serve.
const serveTokenEnv = "SUMMIT_SERVE_TOKEN"

func newServe(stdout, stderr io.Writer) *cobra.Command {
	f := &sessionFlags{served: true}
	var addr, certFile, keyFile string
	var maxBody int64
	var maxRuns, maxConns, maxConnsPerClient int
	var runTimeout, headerTimeout, bodyTimeout, idleTimeout time.Duration
	var allowHosts []string
	var noToken bool
	c := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8787]",
		Short: "Serve the agents as Summit Agent ABI services over HTTP (JSON-RPC 2.0 at POST /rpc)",
		Long: `Serve exposes the agent catalogue (agent files, config acp_agents, built-ins) as Summit Agent
ABI services: POST /rpc takes agent.invoke, agent.status, agent.schema and agent.cancel
(JSON-RPC 2.0, params.agentId names the agent; POST /agents/{agentId}/rpc too), and
GET /runs/{runId}/events streams a run's events as they are recorded (server-sent events).

Each agent.invoke is a run: a session of its own with one delegation, recorded to
<workspace>/.summit/sessions like any session, with the runtime, policy and isolation of
/delegate. Nobody is at a terminal: --approve decides permission requests (none, shell or all).

The bearer token comes from SUMMIT_SERVE_TOKEN; it is never logged or recorded. The server
refuses to start without one, except on a loopback address with --no-token (unsafe: every
process on this machine can then run your agents); --tls-cert and --tls-key serve HTTPS.

Web pages cannot reach it: a request whose Host is not the served address (nor an
--allow-host name) is refused, as is one with a foreign Origin (clients that send no Origin,
such as curl and summit, are fine), and POSTs must be application/json. Slow clients are cut
off (--read-header-timeout, --read-body-timeout, --idle-timeout), and one client address holds
at most --max-conns-per-client connections.`,
		Example: "  summit serve --tapes agents/provider/tapes\n" +
			"  SUMMIT_SERVE_TOKEN=$(openssl rand -hex 16) summit serve --addr 0.0.0.0:8787 --tls-cert /etc/summit/cert.pem --tls-key /etc/summit/key.pem --approve shell\n" +
			`  curl -s localhost:8787/rpc -H 'Content-Type: application/json' -H "Authorization: Bearer $SUMMIT_SERVE_TOKEN" -d '{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"explore"},"id":1}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token := os.Getenv(serveTokenEnv)
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return usageErr("--addr %q: %v (want host:port, such as 127.0.0.1:8787)", addr, err)
			}
			ip := net.ParseIP(host)
			loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
			switch {
			case noToken && token != "":
				return usageErr("--no-token and %s are both given: unset one", serveTokenEnv)
			case noToken && !loopback:
				return usageErr("--no-token: only on a loopback address (127.0.0.1, ::1, localhost), and --addr %s is not one; set %s to a bearer token", addr, serveTokenEnv)
			case token == "" && !noToken && !loopback:
				return usageErr("--addr %s is not a loopback address: set %s to a bearer token first (anyone who can reach the port could run your agents)", addr, serveTokenEnv)
			case token == "" && !noToken:
				return usageErr("set %s to a bearer token (such as $(openssl rand -hex 16)), or pass --no-token to serve loopback without one (unsafe: every process on this machine could run your agents)", serveTokenEnv)
			}
			for _, h := range allowHosts {
				if err := serve.CheckAllowHost(h); err != nil {
					return usageErr("--allow-host %v", err)
				}
			}
			if (certFile == "") != (keyFile == "") {
				return usageErr("--tls-cert and --tls-key go together")
			}
			if f.record != "" {
				return usageErr("--record: each run is recorded to a file of its own under --workspace's .summit/sessions")
			}
			if maxRuns < 1 || maxBody < 1 || runTimeout < time.Second {
				return usageErr("--max-runs, --max-body and --run-timeout must be positive (--run-timeout at least 1s)")
			}
			if headerTimeout <= 0 || bodyTimeout <= 0 || idleTimeout <= 0 || maxConns < 1 || maxConnsPerClient < 1 {
				return usageErr("--read-header-timeout, --read-body-timeout, --idle-timeout, --max-conns and --max-conns-per-client must be positive")
			}
			f.approve = orDefault(f.approve, "none")
			r, err := newServeRunner(f, stderr)
			if err != nil {
				return err
			}
			log := &syncWriter{w: stderr}
			logf := func(l string) { fmt.Fprintln(log, "summit serve: "+session.Sanitize(l)) }
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErr("--addr: %v", err)
			}
			// The Host check's reference is what was asked for (localhost stays a name that
			// means loopback), with the port the listener got (--addr :0 picks one).
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			srv := serve.New(r, serve.Options{Token: token, MaxBody: maxBody, MaxRuns: maxRuns, RunTimeout: runTimeout,
				Addr: net.JoinHostPort(host, port), AllowHosts: allowHosts, BodyTimeout: bodyTimeout, Log: logf})
			ln = serve.LimitListener(ln, maxConns, maxConnsPerClient, logf)
			scheme := "http"
			if certFile != "" {
				scheme = "https"
			}
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout,
				ErrorLog: stdlog.New(io.Discard, "", 0)} // TLS handshake noise from port scanners
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
			defer stop()
			served := make(chan error, 1)
			go func() {
				if certFile != "" {
					served <- hs.ServeTLS(ln, certFile, keyFile)
				} else {
					served <- hs.Serve(ln)
				}
			}()
			auth := "bearer token required"
			if noToken {
				auth = "UNSAFE: no token (--no-token), every process on this machine can run your agents"
			}
			fmt.Fprintf(log, "summit: serving %s at %s://%s/rpc (%s)\n", session.Plural(len(r.Agents()), "agent"), scheme, ln.Addr(), auth)
			select {
			case err = <-served:
				if errors.Is(err, http.ErrServerClosed) {
					err = nil
				}
				if err != nil {
					return badFile(err)
				}
			case <-ctx.Done():
			}
			// Runs end (cancelled) and their recordings close before the listener goes.
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			_ = hs.Shutdown(sctx)
			fmt.Fprintln(log, "summit: stopped serving")
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&addr, "addr", "127.0.0.1:8787", "the address to listen on")
	fl.BoolVar(&noToken, "no-token", false, "serve without SUMMIT_SERVE_TOKEN (loopback only; unsafe: every local process can run your agents)")
	fl.StringArrayVar(&allowHosts, "allow-host", nil, "another name the server is reached by (a request's Host and Origin must name --addr or one of these); repeatable")
	fl.DurationVar(&headerTimeout, "read-header-timeout", 10*time.Second, "how long a request's headers may take to arrive")
	fl.DurationVar(&bodyTimeout, "read-body-timeout", 30*time.Second, "how long a request's body may take to arrive, after its headers")
	fl.DurationVar(&idleTimeout, "idle-timeout", 2*time.Minute, "how long an idle keep-alive connection stays open")
	fl.IntVar(&maxConns, "max-conns", 256, "connections at once; more wait to be accepted")
	fl.IntVar(&maxConnsPerClient, "max-conns-per-client", 32, "connections at once from one client address; more are closed at once")
	fl.StringVar(&certFile, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	fl.StringVar(&keyFile, "tls-key", "", "the certificate's private key (PEM)")
	fl.Int64Var(&maxBody, "max-body", 1<<20, "the largest request body, in bytes")
	fl.IntVar(&maxRuns, "max-runs", 4, "runs at once; more are refused with 429 and Retry-After")
	fl.DurationVar(&runTimeout, "run-timeout", 30*time.Minute, "a run's time limit")
	fl.StringVar(&f.approve, "approve", "none", "decide permission requests of served runs: none, shell or all")
	f.register(c)
	return c
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// serveRunner is summit for the server: the catalogue read once at start (what a run may
// invoke), and a session per run wired like `summit run`'s.
type serveRunner struct {
	f         *sessionFlags
	stderr    io.Writer
	manifests map[string]protocols.Manifest
	ids       []string
	mu        sync.Mutex // wire reads and writes the workspace's inventory: one at a time
}

func newServeRunner(f *sessionFlags, stderr io.Writer) (*serveRunner, error) {
	ws, err := filepath.Abs(f.workspace)
	if err != nil {
		return nil, usageErr("--workspace: %v", err)
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return nil, usageErr("--workspace %s is not a directory", f.workspace)
	}
	// What a run may invoke, as its trust allows (trust.go); each run is gated again by wire.
	gate, err := workspaceGate(ws, f.agentDirs, f.trustWorkspace)
	if err != nil {
		return nil, err
	}
	if n := gate.notice(); n != "" {
		fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(n))
	}
	cat := agents.Load(gate.agents)
	cfg := gate.cfg
	r := &serveRunner{f: f, stderr: stderr, manifests: map[string]protocols.Manifest{}}
	for _, d := range cat.List() {
		r.manifests[d.Name] = serve.ManifestOf(d)
	}
	for _, a := range acp.NewSet(cfg.ACPAgents, nil).List() {
		if _, ok := r.manifests[a.Name]; !ok {
			r.manifests[a.Name] = serve.ManifestOf(a.Definition())
		}
	}
	for id := range r.manifests {
		r.ids = append(r.ids, id)
	}
	slices.Sort(r.ids)
	return r, nil
}

func (r *serveRunner) Agents() []string { return slices.Clone(r.ids) }

func (r *serveRunner) Manifest(id string) (protocols.Manifest, bool) {
	m, ok := r.manifests[id]
	return m, ok
}

func (r *serveRunner) Start(runID string, meta map[string]any, h serve.Hooks) (*serve.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := *r.f
	f.meta, f.onUsage = meta, h.OnUsage
	w, err := f.wire(runID, r.stderr, h.OnEvent)
	if err != nil {
		return nil, err
	}
	return &serve.Session{X: w.x, Recording: w.recording, Closed: w.closed}, nil
}
