package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	var maxRuns int
	var runTimeout time.Duration
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

The bearer token comes from SUMMIT_SERVE_TOKEN; it is never logged or recorded. On an address
other than loopback the server refuses to start without one; --tls-cert and --tls-key serve
HTTPS.`,
		Example: "  summit serve --tapes testdata/tapes\n" +
			"  SUMMIT_SERVE_TOKEN=$(openssl rand -hex 16) summit serve --addr 0.0.0.0:8787 --tls-cert cert.pem --tls-key key.pem --approve shell\n" +
			`  curl -s localhost:8787/rpc -d '{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"explore"},"id":1}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token := os.Getenv(serveTokenEnv)
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return usageErr("--addr %q: %v (want host:port, such as 127.0.0.1:8787)", addr, err)
			}
			if ip := net.ParseIP(host); token == "" && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				return usageErr("--addr %s is not a loopback address: set %s to a bearer token first (anyone who can reach the port could run your agents)", addr, serveTokenEnv)
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
			f.approve = orDefault(f.approve, "none")
			r, err := newServeRunner(f, stderr)
			if err != nil {
				return err
			}
			log := &syncWriter{w: stderr}
			srv := serve.New(r, serve.Options{Token: token, MaxBody: maxBody, MaxRuns: maxRuns, RunTimeout: runTimeout,
				Log: func(l string) { fmt.Fprintln(log, "summit serve: "+session.Sanitize(l)) }})
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErr("--addr: %v", err)
			}
			scheme := "http"
			if certFile != "" {
				scheme = "https"
			}
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			served := make(chan error, 1)
			go func() {
				if certFile != "" {
					served <- hs.ServeTLS(ln, certFile, keyFile)
				} else {
					served <- hs.Serve(ln)
				}
			}()
			fmt.Fprintf(log, "summit: serving %d agents at %s://%s/rpc (%s)\n", len(r.Agents()), scheme, ln.Addr(),
				map[bool]string{true: "bearer token required", false: "no token: loopback only"}[token != ""])
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
	fl.StringVar(&addr, "addr", "127.0.0.1:8787", "the address to listen on (loopback unless SUMMIT_SERVE_TOKEN is set)")
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
