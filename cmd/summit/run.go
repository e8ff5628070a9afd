package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/agents/mcp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/inventory"
	"github.com/summit-dev/summit/session/live"
	"github.com/summit-dev/summit/session/otelexport"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
	"github.com/summit-dev/summit/session/runners"
)

// sessionFlags are the options every live session takes (summit, summit run).
type sessionFlags struct {
	workspace string
	mode      string
	provider  string
	agentDirs []string
	record    string
	recordDir string // where the default recording goes ("" = <workspace>/.summit/sessions)
	noRecord  bool
	tapes     string
	approve   string
	parallel  int
	// keepWorktrees leaves the worktrees when the session ends.
	keepWorktrees bool
	// allowUnconfinedShell lets subagents' shells run where they cannot be confined (no
	// Landlock); passEnv are the user config's env_passthrough (set by run, read by hooks.go).
	allowUnconfinedShell bool
	passEnv              []string
	// trustWorkspace trusts the workspace's own config, agent files and hooks for this run
	// only (--trust-workspace; session/trust).
	trustWorkspace bool
	// interactive sessions run on the wall clock (a person watches them stream) and ask the
	// user about permission requests instead of deciding by --approve.
	interactive bool
	// served runs (summit serve) run on the wall clock too (a client follows them as they
	// happen), decide by --approve, record meta in their SessionStarted config and report
	// model usage to onUsage (a budget).
	served  bool
	meta    map[string]any
	onUsage func(subagentID string, tokens session.Tokens, costUSD float64, known bool)
	// fork makes the session a fork of a recording (summit fork, the replay's fork key): it
	// runs in a restored copy of the workspace; --workspace is where its config, agents and
	// recording come from.
	fork *forkFlags
	// resume restarts the session on its own recording (summit resume, resume.go).
	resume *resumeFlags
	// otelEndpoint exports the session as OpenTelemetry traces while it runs (or the
	// OTEL_EXPORTER_OTLP_* variables, when set).
	otelEndpoint string
	// demoPace slows the embedded demo-* tapes for summit demo (demo.go, paceTapes); 0 plays
	// every tape as written.
	demoPace float64
	// recorded is set by wire to the recording's path (summit demo keeps its snapshots
	// beside it when it quits).
	recorded string
	// nats connects the session to remote runners (runner.go, session/runners): --nats,
	// --creds, --insecure; runnerClient is the connection wire made.
	nats, natsCreds string
	natsInsecure    bool
	// runnerJob is a job's own session on a runner (runner.go): it places nothing on other
	// runners, so the runner machine's runners: config is not read for it.
	runnerJob bool
	// natsFrom is the config file whose runners: section gave nats ("" = --nats).
	natsFrom     string
	runnerClient *runners.Client
	// job is the job a runner's job session runs (runner.go, runner_models.go), and
	// jobModels the transport of its model calls to the session (nil: the runner's own).
	job       *runners.Job
	jobModels http.RoundTripper
	// jobRelay points an ACP agent of the job at its loopback model relay (runner.go).
	jobRelay *acp.Relay
}

func (f *sessionFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.workspace, "workspace", ".", "the workspace directory the subagents work in")
	fl.StringVar(&f.mode, "permission-mode", "acceptEdits", "the session's permission ceiling: plan, acceptEdits or bypassPermissions")
	fl.StringVar(&f.provider, "provider", "", "force one provider: "+strings.Join(provider.Forcible(), ", ")+" or a name from .summit/config.yaml")
	fl.StringArrayVar(&f.agentDirs, "agents", nil, "an extra directory of agent definitions (repeatable; searched last)")
	fl.StringVar(&f.record, "record", "", "write the recording to FILE (default .summit/sessions/<session_id>.jsonl)")
	fl.BoolVar(&f.noRecord, "no-record", false, "do not record the session")
	fl.StringVar(&f.tapes, "tapes", "", "script tapes: a directory of *.yaml (or one file) instead of the embedded demo tapes")
	fl.IntVar(&f.parallel, "max-parallel", 8, "subagents running at once; the rest wait as queued")
	fl.BoolVar(&f.allowUnconfinedShell, "allow-unconfined-shell", false, "run subagents' shells even where they cannot be confined to their worktree (no Landlock): they can then write wherever you can")
	fl.BoolVar(&f.keepWorktrees, "keep-worktrees", false, "leave the subagents' git worktrees when the session ends (summit gc lists and removes them)")
	fl.StringVar(&f.otelEndpoint, "otel-endpoint", "", "export the session as OpenTelemetry traces while it runs, to this OTLP collector URL (default: the OTEL_EXPORTER_OTLP_* variables, when set)")
	fl.StringVar(&f.nats, "nats", "", "connect to remote runners (summit runner) through this NATS server, for /delegate --on")
	fl.StringVar(&f.natsCreds, "creds", "", "NATS credentials: a .creds file, an nkey seed file, or a file of one line user:password")
	fl.BoolVar(&f.natsInsecure, "insecure", false, "allow NATS without credentials (loopback only)")
	fl.BoolVar(&f.trustWorkspace, "trust-workspace", false, "trust the workspace's .summit/config.yaml, agent files and hook scripts for this run only (summit trust records it)")
	// --trust-hooks trusted only the hooks; the trust is the workspace's now, so it is the same.
	fl.BoolVar(&f.trustWorkspace, "trust-hooks", false, "deprecated: --trust-workspace")
	_ = fl.MarkDeprecated("trust-hooks", "use --trust-workspace")
}

// wired is a session ready to run, and what to release after it.
type wired struct {
	x         *live.Orchestrator
	clock     live.Clock
	recording string
	workspace string
	agents    []string // agent names, for completion
	provider  string   // the routing, as recorded ("script" on the tapes)
	ownTapes  bool     // the tapes came from --tapes
	inventory string   // the workspace's inventory of agent and config files
	changed   string   // which of them changed since the last session ("" = none)
	// trust is what an untrusted workspace's ignored files are, for the notice line ("" =
	// nothing ignored).
	trust string
	// hookNote is the notice line's word on hook entries that load with no effect ("" =
	// none); summit run prints each on stderr instead.
	hookNote string
	// forkedInto is a fork's own workspace, restored from its parent's recording.
	forkedInto string
	// otel exports the session's spans while it runs (nil: not asked for); closed ends it.
	otel   *otelexport.Live
	stderr io.Writer
	// late is the interactive start's work that waits for the first frame (tui.go, frameOut).
	late *lateNotes
}

// wire builds the catalogue, the providers, the clock and the recorder, and starts the session.
// seed, when the provider is the script provider, makes the session id reproducible.
func (f *sessionFlags) wire(seed string, stderr io.Writer, onEvent func(session.Event)) (_ *wired, err error) {
	if f.record != "" && f.noRecord {
		return nil, usageErr("--record and --no-record exclude each other")
	}
	mode, err := agents.ParseMode(f.mode)
	if err != nil {
		return nil, usageErr("--permission-mode: %v", err)
	}
	if f.parallel < 1 {
		return nil, usageErr("--max-parallel must be at least 1, got %d", f.parallel)
	}
	switch {
	case f.interactive && f.approve == "":
	case f.approve == live.ApproveNone, f.approve == live.ApproveShell, f.approve == live.ApproveAll:
	default:
		return nil, usageErr("--approve %q: want none, shell or all", f.approve)
	}
	ws, err := filepath.Abs(f.workspace)
	if err != nil {
		return nil, usageErr("--workspace: %v", err)
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return nil, usageErr("--workspace %s is not a directory", f.workspace)
	}
	// The workbench's leftovers scan (a git subprocess and a walk of the cache) waits until
	// its first frame is on the screen (tui.go, frameOut); its line is printed where it always
	// showed, above the alt screen's output once the terminal is back.
	var late lateNotes
	if f.interactive {
		late.add(func(out io.Writer) { noteLeftovers(ws, out) })
		defer func() {
			if err != nil { // no frame: said now, before the error
				late.print(stderr)
			}
		}()
	} else {
		noteLeftovers(ws, stderr)
	}
	// The tapes (the embedded demo's, or --tapes) are parsed beside the catalogue and the
	// config, which do not depend on them: a few milliseconds off the workbench's first frame
	// on a 2-core machine. Their error is reported where it always was, after the others.
	type loadedTapes struct {
		tapes []*provider.Tape
		err   error
	}
	tapesCh := make(chan loadedTapes, 1)
	tapesDir, pace := f.tapes, f.demoPace
	go func() {
		var l loadedTapes
		if tapesDir != "" {
			l.tapes, l.err = provider.LoadTapes(tapesDir)
		} else {
			l.tapes, l.err = provider.DemoTapes()
			if l.err == nil && pace > 0 {
				paceTapes(l.tapes, pace)
			}
		}
		tapesCh <- l
	}()
	userDir := userConfigDir()
	// The workspace's own config and agent files take effect only once it is trusted
	// (trust.go, session/trust).
	gate, err := workspaceGate(ws, f.agentDirs, f.trustWorkspace)
	if err != nil {
		return nil, err
	}
	if n := gate.notice(); n != "" && !f.interactive && !f.served { // serve said it once at its start
		fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(n))
	}
	if !f.interactive && !f.served {
		hookWarnings(stderr, gate.cfg.Hooks) // hooks.go: entries that load with no effect
	}
	agentOpts := gate.agents
	// The files that steer the session are read once, now; what changed since the last
	// session is named (a file written during that one takes effect only here).
	started := time.Now()
	invPath := inventory.Path(ws)
	var prevInv *inventory.Inventory
	var invErr error
	if f.fork == nil { // a fork's inventory is its own folder's, which is new (see below)
		prevInv, invErr = inventory.Load(invPath)
	}
	if invErr != nil {
		fmt.Fprintf(stderr, "summit: %s\n", session.Sanitize(invErr.Error()))
	}
	steering := inventory.Take(append(agents.SourceFiles(agentOpts), provider.ConfigFiles(ws, userDir)...))
	changed := inventory.Compare(prevInv, steering)
	cat := f.jobCatalogue(agents.Load(agentOpts)) // runner_models.go
	for _, p := range cat.Problems() {
		if p.Level == agents.LevelError {
			fmt.Fprintf(stderr, "summit: agents: %s\n", session.Sanitize(p.String()))
		}
	}
	cfg := gate.cfg
	// runners: in the config names the NATS server when --nats does not (a workspace's counts
	// only when it is trusted: an untrusted one's config never reaches cfg).
	if f.nats == "" && cfg.Runners.NATS != "" && !f.runnerJob {
		f.nats, f.natsFrom = cfg.Runners.NATS, cfg.Runners.File
		f.natsInsecure = f.natsInsecure || cfg.Runners.Insecure
		if f.natsCreds == "" {
			home, _ := os.UserHomeDir()
			f.natsCreds = cfg.Runners.CredsPath(home)
		}
	}
	// Whether Ollama answers on localhost decides the routing (recorded in SessionStarted,
	// shown in the header), so it is known before the session starts; the probe (an HTTP
	// request, up to 300 ms) runs while the catalogue, the tapes and the rest are read.
	var ollama chan bool
	if f.provider == "" && cfg.Empty() && f.tapes == "" {
		if _, used := provider.FromEnvironment(os.Getenv); len(used) == 0 {
			ollama = make(chan bool, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				ollama <- provider.DetectOllama(ctx, "http://localhost:11434")
			}()
		}
	}
	// env_passthrough counts from the user's own config only (a workspace's is ignored).
	if userCfg, err := provider.LoadConfig("", userDir); err == nil {
		f.passEnv = userCfg.EnvPassthrough
	}
	if f.allowUnconfinedShell && !tools.ConfinementAvailable() {
		fmt.Fprintln(stderr, "summit: --allow-unconfined-shell: this system has no Landlock, so subagents' shells run unconfined: they can write wherever you can, read .summit/ and reach the network")
	}
	loaded := <-tapesCh
	tapes := loaded.tapes
	if loaded.err != nil {
		return nil, usageErr("--tapes: %v", loaded.err)
	}

	// The clock must exist before the script provider (its sleeps run on it), and whether it
	// is simulated depends on the routing: decide the routing first with a probe.
	var clock live.Clock = live.RealClock{}
	sleep := func(ctx context.Context, d time.Duration) error { return clock.Sleep(ctx, d) }
	script := provider.NewScript(provider.ScriptConfig{Tapes: tapes, Sleep: sleep, Now: func() time.Time { return clock.Now() }})
	router := provider.NewRouter(cfg, script, os.Getenv)
	switch {
	case f.provider != "":
		if err := router.Force(f.provider); err != nil {
			return nil, usageErr("--provider: %v", err)
		}
	case cfg.Empty() && f.tapes == "":
		if env, used := provider.FromEnvironment(os.Getenv); len(used) > 0 {
			cfg, router = env, provider.NewRouter(env, script, os.Getenv)
			fmt.Fprintf(stderr, "summit: no config, so the keys in the environment choose: %s ('summit models' shows every agent's model)\n", strings.Join(used, ", "))
			break
		}
		if ollama != nil && <-ollama {
			_ = router.Force("ollama")
			fmt.Fprintln(stderr, "summit: using Ollama on localhost:11434 (nothing else is configured)")
		}
	}
	if router, err = f.jobRouter(router, script); err != nil { // runner_models.go
		return nil, badFile(err)
	}
	describe := router.Describe()
	id := ""
	if describe == "script" && !f.interactive && !f.served && f.nats == "" { // runners run on the wall clock
		sim := live.NewSimClock(time.Now())
		clock = sim
		id = live.DeterministicSessionID(seed)
	}
	if id == "" {
		id = live.NewSessionID(time.Now())
	}
	if f.resume != nil {
		id = f.resume.state.SessionID // the same session, on the same recording
	}

	w := &wired{clock: clock, workspace: ws, provider: describe, ownTapes: f.tapes != "", inventory: invPath,
		changed: render.ChangedFilesText(changed, ws), trust: gate.notice(), late: &late}
	if n := len(gate.cfg.Hooks.Warnings); n > 0 {
		// The workbench has no stderr to print them on: the notice line says how many and
		// where to see each (a pasted Claude Code block often holds events summit lacks).
		w.hookNote = session.Plural(n, "hook entry") + " of the config " + map[bool]string{true: "has", false: "have"}[n == 1] +
			" no effect (Claude Code events summit lacks): summit hooks check names them"
	}
	for _, d := range cat.List() {
		w.agents = append(w.agents, d.Name)
	}
	for _, a := range acp.NewSet(cfg.ACPAgents, nil).List() { // for completion
		if !slices.Contains(w.agents, a.Name) {
			w.agents = append(w.agents, a.Name)
		}
	}
	for name := range cfg.Remotes { // remote ABI agents
		if !slices.Contains(w.agents, name) {
			w.agents = append(w.agents, name)
		}
	}
	var otel *otelexport.Live
	if f.otelEndpoint != "" || otelexport.EnvEnabled(os.Getenv) {
		// Spans are exported as they end, from a queue: a slow or absent collector drops
		// spans (counted, said at the end), never stalls the session.
		otel, err = otelexport.NewLive(context.Background(), otelexport.LiveConfig{Config: otelexport.Config{Endpoint: f.otelEndpoint}, Version: version})
		if err != nil {
			return nil, usageErr("--otel-endpoint: %v", err)
		}
		if next := onEvent; next != nil {
			onEvent = func(ev session.Event) { otel.Observe(ev); next(ev) }
		} else {
			onEvent = otel.Observe
		}
		w.otel, w.stderr = otel, stderr
	}
	runIn := ws
	var forkStart *live.ForkStart
	if f.fork != nil {
		if forkStart, runIn, err = f.fork.restore(id, stderr); err != nil {
			closeOtel(otel)
			return nil, badFile(err)
		}
		w.forkedInto = runIn
		// A fork's .summit/ (recording, inventory, input history) is its own folder's: the
		// parent's workspace, or the folder the fork was started from, is never written.
		invPath = inventory.Path(runIn)
		w.inventory = invPath
	}
	var rec *record.Recorder
	if !f.noRecord {
		opts := record.RecorderOptions{Environ: os.Environ()}
		if f.resume != nil {
			rec, err = f.resume.reopen(opts, stderr)
		} else if f.record != "" {
			rec, err = record.OpenRecorderFile(f.record, opts)
		} else {
			dir := f.recordDir
			if dir == "" {
				dir = filepath.Join(runIn, ".summit", "sessions")
			}
			rec, err = openDefaultRecording(dir, id, opts)
		}
		if err != nil {
			closeOtel(otel)
			if forkStart != nil {
				removeForkDir(runIn, f.fork.into == "")
			}
			return nil, badFile(err)
		}
		w.recording = rec.Path()
		f.recorded = w.recording
	}
	if f.nats != "" && f.runnerClient == nil {
		if f.runnerClient, err = connectRunners(f); err != nil {
			closeOtel(otel)
			if rec != nil {
				rec.Close()
			}
			return nil, err
		}
	}
	x, err := live.Start(live.Options{
		Runners:   f.runnerClient,
		Fork:      forkStart,
		Resume:    f.resume.start(),
		Workspace: runIn, SessionID: id, ProgramVersion: programVersion(), Ceiling: mode, Catalogue: cat,
		Route: func(def *agents.Definition) (provider.Provider, string, error) {
			model, fallbacks := f.jobModel(def) // runner_models.go
			return router.ResolveModel(model, fallbacks)
		},
		Models: router, Inherited: f.jobContext(), ACPRelay: f.jobRelay,
		ProviderName: describe, Clock: clock, Recorder: rec, MaxParallel: f.parallel, ChangedFiles: changed,
		ACPAgents: cfg.ACPAgents, Remotes: cfg.Remotes,
		Approve: f.approve, OnEvent: onEvent, KeepWorktrees: f.keepWorktrees,
		Tools:   tools.Options{AllowHosts: cfg.WebAllowHosts, PassEnv: f.passEnv, AllowUnconfined: f.allowUnconfinedShell},
		MCP:     mcp.NewManager(cfg.MCPServers, mcp.Options{Dir: ws, PassEnv: f.passEnv}), // MCP hook: servers start on first use
		Config:  f.config(),
		OnUsage: f.onUsage,
		Hooks:   f.hookRunner(cfg.Hooks), // hooks.go: the gated config's hooks
		// The gated config's verify: (a workspace's only when it is trusted).
		Verify: cfg.Verify,

		WorkspaceTrust: gate.trust.Status, UntrustedIgnored: gate.trust.Ignored(), TrustItems: trustItems(gate.trust),
		TrustWorkspace: f.recordTrust(gate.trust), // trust.go: the workbench's trust inbox item
	})
	if err != nil {
		closeOtel(otel)
		if rec != nil {
			rec.Close()
			if forkStart != nil {
				os.Remove(rec.Path()) // a fork that could not start records nothing worth keeping
			}
		}
		if forkStart != nil {
			removeForkDir(runIn, f.fork.into == "")
		}
		return nil, badFile(err)
	}
	w.x = x
	saveInv := func(out io.Writer) {
		if err := inventory.Save(invPath, inventory.Inventory{Session: id, Started: started.UTC(), Files: steering}); err != nil {
			fmt.Fprintf(out, "summit: keeping the list of agent and config files: %s\n", session.Sanitize(err.Error()))
		}
	}
	if f.interactive {
		late.add(saveInv) // after the first frame, and always before closed marks the end
	} else {
		saveInv(stderr)
	}
	if !f.interactive && w.changed != "" {
		fmt.Fprintf(stderr, "summit: %s\n", w.changed)
	}
	return w, nil
}

// config is what SessionStarted.config records of the flags (and of a served run, its meta).
func (f *sessionFlags) config() map[string]any {
	c := map[string]any{"approve": f.approve, "max_parallel": f.parallel, "tapes": f.tapes != ""}
	if f.meta != nil {
		c["serve"] = f.meta
	}
	return c
}

// closed notes in the inventory that the session ended, so the next one can tell a file
// written during it from one written after.
func (w *wired) closed() {
	w.late.wait() // the inventory is saved before its end is marked
	_ = inventory.MarkEnded(w.inventory, w.x.SessionID(), time.Now())
	if w.otel != nil {
		// What is queued goes out now; a collector that does not answer in 10 s loses it.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := w.otel.Close(ctx)
		cancel()
		if n := w.otel.Dropped(); err != nil || n > 0 {
			fmt.Fprintf(w.stderr, "summit: OpenTelemetry export: %s exported, %d dropped%s\n", session.Plural(w.otel.Exported(), "span"), n, errSuffix(err))
		}
	}
}

// closeOtel stops an export whose session did not start.
func closeOtel(l *otelexport.Live) {
	if l != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		l.Close(ctx)
		cancel()
	}
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + session.Sanitize(err.Error())
}

// openDefaultRecording opens <dir>/<id>.jsonl, or <id>.2.jsonl, ... when a reproducible run
// already left one there.
func openDefaultRecording(dir, id string, opts record.RecorderOptions) (*record.Recorder, error) {
	path := filepath.Join(dir, id+".jsonl")
	for i := 2; ; i++ {
		if _, err := os.Lstat(path); os.IsNotExist(err) || i > 1000 {
			return record.OpenRecorderFile(path, opts)
		}
		path = filepath.Join(dir, fmt.Sprintf("%s.%d.jsonl", id, i))
	}
}

func newRun(stdout, stderr io.Writer) *cobra.Command {
	f := &sessionFlags{}
	var scriptPath string
	c := &cobra.Command{
		Use:   "run --script FILE|-",
		Short: "Run a script of commands headless: the same commands, one per line",
		Long: `Run executes a script without a terminal UI: every line is what a user would type (a slash
command or a note); blank lines and lines starting with # are skipped. Subagents run as they
would live, and the session is recorded. Progress goes to stderr; at the end the final state is
printed to stdout, exactly as 'summit replay FILE --print' prints the recording.

Nobody can answer a permission request here: --approve decides (none, shell or all), and each
decision is recorded. On the script provider (the default without a configured model) time is
simulated: tape sleeps and streaming rates cost nothing, and the same script gives the same
events every time, apart from their ts.

Exit codes: 0 every command accepted, every subagent succeeded and no conflict left unresolved;
1 a command was rejected or a subagent did not succeed; 2 usage; 3 conflicts left unresolved.`,
		Example: "  summit run --script testdata/scripts/explore.summit --tapes agents/provider/tapes --no-record\n  echo '/delegate \"map the repo\" --agent-type explore' | summit run --script -",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if scriptPath == "" {
				return usageErr("run needs --script FILE (or - for stdin)\nusage: %s", cmd.UseLine())
			}
			return headless(f, scriptPath, stdout, stderr)
		},
	}
	c.Flags().StringVar(&scriptPath, "script", "", "the script FILE, or - for stdin")
	c.Flags().StringVar(&f.approve, "approve", "none", "decide permission requests: none, shell or all")
	f.register(c)
	return c
}

// headless runs the script at scriptPath ("-": stdin) in the session f describes, printing
// progress to stderr and the final state to stdout (summit run, summit fork --script).
func headless(f *sessionFlags, scriptPath string, stdout, stderr io.Writer) error {
	var src io.Reader = os.Stdin
	if scriptPath != "-" {
		file, err := record.OpenRegular(scriptPath)
		if err != nil {
			return usageErr("--script: %v", err)
		}
		defer file.Close()
		src = file
	}
	data, err := io.ReadAll(io.LimitReader(src, 64<<20))
	if err != nil {
		return usageErr("--script: %v", err)
	}
	seed := strings.Join([]string{string(data), f.workspace, f.tapes, f.mode, f.approve}, "\x00")
	if f.fork != nil { // a fork of a run is another session than the run, whatever its script
		seed += fmt.Sprintf("\x00fork %s %d", f.fork.plan.Parent.SessionID, f.fork.plan.Parent.Seq)
	}
	// Progress lines come from the subagents' goroutines, echoed script lines from this
	// one: each line is written whole, never interleaved with another.
	errw := &syncWriter{w: stderr}
	w, err := f.wire(seed, errw, func(ev session.Event) {
		if f.fork.replayed(ev) {
			return // the parent's events, recorded again: the fork's own progress starts after
		}
		if line := live.Progress(ev); line != "" {
			fmt.Fprintln(errw, line)
		}
	})
	if err != nil {
		return err
	}
	// SIGQUIT as SIGTERM: Go's default would dump goroutines and exit 2 with no SessionEnded.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer stop()
	if sim, ok := w.clock.(*live.SimClock); ok {
		// The script may be parked on the clock behind a subagent that runs a real command:
		// a signal wakes it at once, so the session closes now, not when the command ends.
		defer context.AfterFunc(ctx, sim.Interrupt)()
	}
	code, runErr := live.RunScript(ctx, w.x, strings.NewReader(string(data)), errw)
	w.closed()
	if w.recording != "" && !errors.Is(runErr, record.ErrRecordingReplaced) {
		fmt.Fprintf(errw, "summit: recorded %s\n", session.Sanitize(w.recording))
	}
	if err := render.Print(stdout, w.x.Snapshot()); err != nil {
		return err
	}
	if runErr != nil {
		return &exitError{code, runErr}
	}
	if code != 0 {
		return &exitError{code, silent}
	}
	return nil
}
