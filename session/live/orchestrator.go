// Package live is the orchestrator of a live session (DESIGN §1): it runs parsed commands, owns
// subagent lifecycles, approvals, handoffs and timeouts, and is the only place that creates
// events.
//
// Every event goes through one serialising path (Orchestrator.emit): it takes the next seq,
// stamps the clock's time, is written by the recorder (which redacts secrets), and only then
// is folded into the state with session.Apply: the state never shows anything that is not on
// disk, and seq has no gaps.
//
// Concurrency: each subagent runs as a participant of the session Clock (see Clock); the
// orchestrator's state is guarded by one mutex that is never held while waiting.
//
// Isolation (isolate.go, DESIGN §11): a subagent whose tools can change files gets its own git
// worktree (session/gitws) when it is delegated: SubagentSpawned, SubagentIsolated{base,
// worktree}, then the run with every tool rooted in the worktree; just before SubagentStop,
// SubagentChanges records what it really changed. /apply sa-N and /apply cv-N land real
// changes with a three-way merge (ChangesApplied), /undo takes the last one back
// (ApplyUndone), /discard drops a worktree (WorktreeDiscarded). Read-only subagents work in the
// workspace. A subagent that changed nothing converges on its capsule's proposals.
//
// Headless scripts (RunScript) read as people type: a line that names a convergence still
// computing waits for it to reach its review or its end (scriptwait.go). A fork (fork.go) takes
// over the reviews that were waiting at its fork point (forkreview.go). /blame reads the
// session's own recording (blame.go, session/blame).
package live

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/acp"
	"github.com/summit-dev/summit/agents/mcp"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/gitws"
	"github.com/summit-dev/summit/session/hooks"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
	"github.com/summit-dev/summit/session/runners"
)

// Approval policies of headless runs (--approve).
const (
	ApproveNone  = "none"  // every request is denied
	ApproveShell = "shell" // run_shell_command is allowed once per call; the rest denied
	ApproveAll   = "all"   // everything is allowed once per call, bypassPermissions included
)

// Options configure a session.
type Options struct {
	Workspace string
	// ACPAgents are the config's acp_agents (external agents run over ACP), as the caller
	// gated them; nil = none.
	ACPAgents map[string]provider.ACPAgent
	// Remotes are the config's remotes (agents served elsewhere over the Summit Agent ABI),
	// as the caller gated them; nil = none.
	Remotes map[string]provider.Remote
	// Runners connects the session to remote runners over NATS (runner.go, session/runners);
	// nil = /delegate --on is refused.
	Runners *runners.Client
	// Models makes a placed subagent's model calls for its runner with this session's keys
	// (runnermodels.go); nil = runners use their own model configuration.
	Models *provider.Router
	// Inherited is the context chain a runner's job brings from its session (runnermodels.go):
	// an --inherit-context prompt shows it before this session's own.
	Inherited *runners.ContextChain
	// ACPRelay points this session's ACP agents' model calls at a runner job's loopback relay
	// (session/runners' ModelRelay): set on a runner for a job whose models come from the
	// session; nil = the agents call their models with their own environment.
	ACPRelay *acp.Relay
	// ChangedFiles are the agent and config files that changed since the last session (see
	// session/inventory); SessionStarted records them and /status names them.
	ChangedFiles []session.AgentFileChange
	// SessionID; "" = a new time-ordered random id.
	SessionID      string
	ProgramVersion string
	Ceiling        agents.PermissionMode // default acceptEdits
	AllowedTools   []string              // the session's tools; nil = every canonical tool but task
	Catalogue      *agents.Catalogue
	// Route picks a subagent's provider and concrete model from its definition.
	Route        func(def *agents.Definition) (provider.Provider, string, error)
	ProviderName string // recorded in SessionStarted
	Config       map[string]any
	Clock        Clock // default RealClock
	Recorder     *record.Recorder
	MaxParallel  int // running subagents at once; default 8
	// Approve decides permission requests without asking ("none", "shell", "all"); "" waits
	// for /approve or /deny.
	Approve string
	Tools   tools.Options
	// OnEvent is called after each event is folded, outside the lock, in seq order.
	OnEvent func(session.Event)
	// OnUsage, when set, is told a subagent's model usage so far after each model turn: its
	// tokens, and its cost when every model it used is priced (known). A budget watches it.
	OnUsage func(subagentID string, tokens session.Tokens, costUSD float64, known bool)
	// Backoff between retries of a transient provider failure (default 500ms·2^(n-1)).
	Backoff func(attempt int) time.Duration
	// NoIsolation runs every subagent in the workspace itself (no git worktrees). Only for
	// tests of the shared-workspace behaviour: parallel writers then overwrite each other.
	NoIsolation bool
	// CacheDir holds worktrees and private git dirs (default gitws.DefaultCacheDir()).
	CacheDir string
	// KeepWorktrees leaves the worktrees when the session closes (summit gc lists them).
	KeepWorktrees bool
	// MCP runs the MCP servers whose tools subagents may call (nil = none); the session
	// closes it when it ends.
	MCP *mcp.Manager
	// Fork starts the session as a fork of a recording (fork.go); nil = a new session.
	Fork *ForkStart
	// Resume restarts the session on its own recording (runnerresume.go); nil = a new session.
	Resume *ResumeStart
	// Hooks runs the user's hooks on session events (hooks.go); nil = none. The caller
	// decides which hooks it holds (a workspace's only once trusted).
	Hooks *hooks.Runner
	// Verify is the config's verify: command, run by every /apply on the merged result
	// before it lands (verify.go); zero = none. The caller drops an untrusted workspace's.
	Verify provider.Verify
	// WorkspaceTrust, UntrustedIgnored and TrustItems are recorded in SessionStarted (see
	// session/trust): the caller gated the config, catalogue, MCP servers, hooks and tools it
	// passes here; the session reads no config file itself.
	WorkspaceTrust   string
	UntrustedIgnored []string
	TrustItems       []string
	// TrustWorkspace records that the user trusts the workspace (/trust, the workbench's
	// trust inbox item); nil refuses /trust (headless runs: --trust-workspace instead).
	TrustWorkspace func() error
}

// Orchestrator runs one session.
type Orchestrator struct {
	o       Options
	clock   Clock
	sandbox *tools.Sandbox
	ctx     context.Context
	stop    context.CancelFunc

	// The git layer of isolation, opened on first use (repo).
	repoMu  sync.Mutex
	git     *gitws.Repo
	gitErr  error
	applied []*gitws.Applied // /apply of real changes, in order (guarded by mu)
	// applyReviews are the reviews of applies that overlapped the workspace, by cv id (mu).
	applyReviews map[string]*applyReview

	// bases are placed subagents' bases, shared within a burst (runnerbase.go).
	bases runnerBases

	acpOnce sync.Once
	acpReg  *acpRegistry // the session's ACP agents (see acpAgents)
	// remoteOnce and remoteR are the session's remote ABI agents (see remotes).
	remoteOnce sync.Once
	remoteR    *remoteReg

	emitMu sync.Mutex // the serialising path: held from seq assignment to the OnEvent call
	// batching and batch (guarded by emitMu): events recorded and folded but not yet written
	// or shown, which emitBatch writes with one write call (runnerresume.go).
	batching bool
	batch    []session.Event
	// heldCursors (guarded by emitMu) are the cursors of runners' deltas that stream
	// redaction holds back, by subagent: the event that releases them records the cursor.
	heldCursors map[string]session.RunnerCursor
	// red redacts the streamed deltas (streams, by subagent, guarded by emitMu) before they are
	// recorded, and whole events when there is no recorder to do it.
	red     *record.Redactor
	streams map[string]*deltaStream
	mu      sync.Mutex // guards everything below and state
	state   *session.State
	err     error // first recording or fold failure; the session cannot go on after it

	subs      map[string]*sub
	convs     map[string]*conv
	queue     []*sub
	running   int
	handoffs  map[string]*handoff
	requests  map[string]*request
	grants    map[string]map[string]bool // subagent → tools approved for the whole subagent
	nextPR    int
	rejected  int
	startedAt time.Time
	ended     bool
	// inherited are a fork's parent's subagent and convergence ids (mu; nil otherwise).
	inherited map[string]bool

	// Hooks in flight (hooks.go): each run's done event; hookCtx ends to kill them.
	hookMu   sync.Mutex
	hookRuns []*Event
	hookCtx  context.Context
	hookStop context.CancelFunc
}

// Start opens a session: it emits SessionStarted.
func Start(o Options) (*Orchestrator, error) {
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	if o.Ceiling == "" {
		o.Ceiling = agents.ModeAcceptEdits
	}
	if !o.Ceiling.Valid() {
		return nil, fmt.Errorf("unknown permission mode %q (plan, acceptEdits, bypassPermissions)", o.Ceiling)
	}
	if o.MaxParallel <= 0 {
		o.MaxParallel = 8
	}
	if o.AllowedTools == nil {
		for _, t := range agents.CanonicalTools() {
			if agents.ClassOf(t) != agents.ClassTask {
				o.AllowedTools = append(o.AllowedTools, t)
			}
		}
	}
	if o.Catalogue == nil {
		return nil, errors.New("no agent catalogue")
	}
	if o.Route == nil {
		return nil, errors.New("no provider routing")
	}
	switch o.Approve {
	case "", ApproveNone, ApproveShell, ApproveAll:
	default:
		return nil, fmt.Errorf("--approve %q: want none, shell or all", o.Approve)
	}
	sb, err := tools.New(o.Workspace, o.Tools)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if o.SessionID == "" {
		o.SessionID = NewSessionID(o.Clock.Now())
	}
	ctx, stop := context.WithCancel(context.Background())
	x := &Orchestrator{o: o, clock: o.Clock, sandbox: sb, ctx: ctx, stop: stop, streams: map[string]*deltaStream{},
		state: &session.State{}, subs: map[string]*sub{}, convs: map[string]*conv{}, handoffs: map[string]*handoff{}, applyReviews: map[string]*applyReview{},
		requests: map[string]*request{}, grants: map[string]map[string]bool{}}
	x.hookCtx, x.hookStop = context.WithCancel(context.Background())
	if !o.NoIsolation {
		o.MCP.Confine("", x.sharedMCPJail) // MCP hook: the shared servers run in a read-only jail (mcpisolate.go)
	}
	if o.Recorder != nil {
		x.red = o.Recorder.Redactor()
		// Transcript text stays in the recording, read back when shown (a bounded cache):
		// a long session's state holds where each event lies, not what it said.
		if _, ok := o.Recorder.NextOffset(); ok {
			x.state.SetTextStore(session.NewTextStore(record.NewPathSource(o.Recorder.Path()), 0))
		}
	} else {
		x.red = record.NewRedactor(os.Environ())
	}
	x.startedAt = x.clock.Now()
	started := session.SessionStarted{
		Schema: session.SchemaVersion, ProgramVersion: o.ProgramVersion, Workspace: sb.Root(),
		PermissionMode: string(o.Ceiling), AllowedTools: o.AllowedTools, Provider: o.ProviderName,
		AgentsDigest: catalogueDigest(o.Catalogue), Config: o.Config, ChangedFiles: o.ChangedFiles,
		UnconfinedShell: o.Tools.AllowUnconfined && !tools.ConfinementAvailable(),
		WorkspaceTrust:  o.WorkspaceTrust, UntrustedIgnored: o.UntrustedIgnored, TrustItems: o.TrustItems,
	}
	if o.Resume != nil {
		err = x.startResume()
	} else if o.Fork != nil {
		err = x.startFork(started)
	} else {
		_, err = x.emit("", started)
	}
	if err != nil {
		x.closeIsolation()
		stop()
		return nil, err
	}
	return x, nil
}

// NewSessionID returns "s-" + a 26-character time-ordered id (48-bit milliseconds, 80 random
// bits, Crockford base32, like a ULID).
func NewSessionID(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:])
	return "s-" + crockford(b[:])
}

// DeterministicSessionID derives an id from seed text, for reproducible headless runs.
func DeterministicSessionID(seed string) string {
	h := sha256.Sum256([]byte(seed))
	return "s-" + crockford(h[:16])
}

func crockford(b []byte) string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var out []byte
	var acc uint32
	bits := 0
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, alphabet[(acc>>bits)&31])
		}
	}
	if bits > 0 {
		out = append(out, alphabet[(acc<<(5-bits))&31])
	}
	return string(out)
}

func catalogueDigest(c *agents.Catalogue) string {
	h := sha256.New()
	for _, d := range c.List() {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%v\x00%s\x00", d.Name, d.Source.Path, d.PermissionMode, d.Tools, d.Body)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// SessionID returns the session's id.
func (x *Orchestrator) SessionID() string { return x.o.SessionID }

// Clock returns the session clock.
func (x *Orchestrator) Clock() Clock { return x.clock }

// View calls fn with the state under the lock; fn must not keep it or call the orchestrator.
func (x *Orchestrator) View(fn func(*session.State)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	fn(x.state)
}

// Snapshot returns a deep copy of the state.
func (x *Orchestrator) Snapshot() *session.State {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.state.Clone()
}

// Err returns the first recording or fold failure, or nil.
func (x *Orchestrator) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// deltaStream is one subagent's current run of token or thinking deltas.
type deltaStream struct {
	kind string // session.TranscriptToken or session.TranscriptThinking
	sr   *record.StreamRedactor
}

// emit is the one serialising path: seq, ts, record, fold, notify.
//
// Token and thinking deltas pass through their subagent's StreamRedactor first, so a secret
// split across deltas is redacted whole: a delta may come out shorter, later, or not at all
// (when all of it is held). What is held is released, as a delta of its kind, before the
// subagent's next event of any other kind and before SessionEnded, so the transcript order is
// kept and nothing is lost.
func (x *Orchestrator) emit(subagentID string, d session.Data) (session.Event, error) {
	x.emitMu.Lock()
	defer x.emitMu.Unlock()
	if _, placed := d.(session.RunnerCursor); placed {
		delete(x.heldCursors, subagentID) // a new job: the old one's cursor is over
	} else if cur, ok := x.heldCursors[subagentID]; ok {
		// It releases a runner's held delta: the cursor goes with it (runnerresume.go).
		return x.emitWithCursor(subagentID, d, cur)
	}
	return x.emitHeld(subagentID, d)
}

// emitHeld is emit with x.emitMu held.
func (x *Orchestrator) emitHeld(subagentID string, d session.Data) (session.Event, error) {
	te, isDelta := d.(session.TranscriptEvent)
	isDelta = isDelta && (te.EventType == session.TranscriptToken || te.EventType == session.TranscriptThinking)
	if _, end := d.(session.SessionEnded); end {
		ids := make([]string, 0, len(x.streams))
		for id := range x.streams {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if err := x.releaseStream(id); err != nil {
				return session.Event{}, err
			}
		}
	} else if st := x.streams[subagentID]; st != nil && (!isDelta || st.kind != te.EventType) {
		if err := x.releaseStream(subagentID); err != nil {
			return session.Event{}, err
		}
	}
	if isDelta && x.red != nil {
		st := x.streams[subagentID]
		if st == nil {
			st = &deltaStream{kind: te.EventType, sr: x.red.Stream()}
			x.streams[subagentID] = st
		}
		if te.Text = st.sr.Push(te.Text); te.Text == "" {
			return session.Event{}, nil // held: it goes out with the next delta or event
		}
		d = te
	}
	return x.emitOne(subagentID, d)
}

// releaseStream emits what a subagent's delta stream holds and forgets the stream.
func (x *Orchestrator) releaseStream(subagentID string) error {
	st := x.streams[subagentID]
	delete(x.streams, subagentID)
	if st == nil {
		return nil
	}
	if text := st.sr.Flush(); text != "" {
		_, err := x.emitOne(subagentID, session.TranscriptEvent{EventType: st.kind, Text: text})
		return err
	}
	return nil
}

// emitOne records, folds and shows one event. x.emitMu is held.
func (x *Orchestrator) emitOne(subagentID string, d session.Data) (session.Event, error) {
	x.mu.Lock()
	ev, err := x.emitLocked(subagentID, d)
	x.mu.Unlock()
	if err == nil && x.batching {
		x.batch = append(x.batch, ev) // shown once the batch is written (emitBatch)
		return ev, nil
	}
	if err == nil && x.o.OnEvent != nil {
		x.o.OnEvent(ev)
	}
	if err == nil && x.o.Hooks != nil {
		x.afterEvent(ev) // hooks.go: never waits for a hook
	}
	return ev, err
}

func (x *Orchestrator) emitLocked(subagentID string, d session.Data) (session.Event, error) {
	return x.appendLocked(subagentID, d, x.clock.Now())
}

// appendLocked records and folds one event at ts. x.mu is held.
func (x *Orchestrator) appendLocked(subagentID string, d session.Data, ts time.Time) (session.Event, error) {
	if x.err != nil {
		return session.Event{}, x.err
	}
	if x.ended {
		return session.Event{}, errors.New("the session has ended")
	}
	ev := session.New(subagentID, d)
	ev.Seq = x.state.LastSeq + 1
	ev.TS = ts.UTC().Truncate(time.Microsecond)
	ev.SessionID = x.o.SessionID
	var at session.Loc // where the event's line lies in the recording
	if x.o.Recorder != nil {
		before, known := x.o.Recorder.NextOffset()
		rec, err := x.o.Recorder.Append(ev)
		if err == nil && !x.batching { // a batch is written whole at its end (emitBatch)
			// In the kernel before the fold, the screen or stderr sees it: a kill -9 loses
			// nothing that was shown (the group fsync still bounds what a power cut loses).
			err = x.o.Recorder.Flush()
		}
		if err != nil {
			x.err = fmt.Errorf("recording %s: %w", ev, err)
			return ev, x.err
		}
		ev = rec
		if after, ok := x.o.Recorder.NextOffset(); known && ok && after > before {
			at = session.Loc{Off: before, Len: int(after - before)}
		}
	} else if x.red != nil {
		// Nothing is recorded, but the screen and stdout still never see a secret.
		rec, err := record.RedactEvent(x.red, ev)
		if err != nil {
			x.err = fmt.Errorf("internal error: %s: %w", ev, err)
			return ev, x.err
		}
		ev = rec
	}
	if err := session.ApplyAt(x.state, ev, at); err != nil {
		x.err = fmt.Errorf("internal error: the fold rejected an event the orchestrator made: %w", err)
		return ev, x.err
	}
	if _, ok := d.(session.SessionEnded); ok {
		x.ended = true
	}
	return ev, nil
}

// Reply is what a submitted line produced for the person who typed it.
type Reply struct {
	// Rejected is set when the line was refused whole (a CommandRejected was recorded);
	// Error then says why, with the usage line.
	Rejected bool
	Error    string
	// Output is text to show (status, help, agents); "" for most commands.
	Output string
	// Quit is set by /quit.
	Quit bool
}

// Submit runs one line as typed: a slash command, or plain text (a UserNote, or a message to
// the subagent holding control). A line that cannot run is rejected whole with a
// CommandRejected event and nothing else changes. /wait blocks until its ids settle or ctx
// ends. The error is a recording failure, after which the session cannot go on.
func (x *Orchestrator) Submit(ctx context.Context, line string) (Reply, error) {
	line = strings.TrimRight(line, "\r\n")
	if !commands.IsCommand(line) {
		return x.note(line)
	}
	cmd, err := commands.Parse(line)
	if err != nil {
		var pe *commands.ParseError
		usage := ""
		if errors.As(err, &pe) {
			usage = pe.Usage
		}
		return x.reject(line, err.Error(), usage)
	}
	return x.Run(ctx, line, cmd)
}

func (x *Orchestrator) reject(line, msg, usage string) (Reply, error) {
	x.mu.Lock()
	x.rejected++
	x.mu.Unlock()
	_, err := x.emit("", session.CommandRejected{Line: line, Error: msg, Usage: usage})
	return Reply{Rejected: true, Error: msg}, err
}

// rejectf rejects a parsed command for a reason found while checking it against the session
// (an unknown id, nothing to apply, not allowed now). The line was well formed, so no usage
// line is added: it would make a refusal look like a typo. CommandRejected.Usage stays empty.
func (x *Orchestrator) rejectf(line string, cmd commands.Command, format string, args ...any) (Reply, error) {
	return x.reject(line, "/"+cmd.Name()+": "+fmt.Sprintf(format, args...), "")
}

// rejectUsage rejects a parsed command whose flags do not fit together (a syntax error the
// grammar cannot see alone): the message ends with the usage line, as a parse error's does.
func (x *Orchestrator) rejectUsage(line string, cmd commands.Command, format string, args ...any) (Reply, error) {
	u := commands.Usage(cmd.Name())
	return x.reject(line, "/"+cmd.Name()+": "+fmt.Sprintf(format, args...)+"\nusage: "+u, u)
}

func (x *Orchestrator) issue(line string, cmd commands.Command) error {
	_, err := x.emit("", session.CommandIssued{Line: line, Command: cmd.Name(), Args: cmd.Args()})
	return err
}

// Run executes a parsed command (the UI parses as you type; Submit parses for you).
func (x *Orchestrator) Run(ctx context.Context, line string, cmd commands.Command) (Reply, error) {
	switch c := cmd.(type) {
	case commands.Delegate:
		return x.delegate(line, c)
	case commands.Handoff:
		return x.handoff(line, c)
	case commands.Cancel:
		return x.cancelCmd(line, c)
	case commands.Approve:
		return x.decide(line, c, c.RequestID, true, c.Scope, "")
	case commands.Deny:
		return x.decide(line, c, c.RequestID, false, "", c.Reason)
	case commands.Wait:
		return x.wait(ctx, line, c)
	case commands.Status:
		return x.status(line, c)
	case commands.Inbox:
		return x.inbox(line, c)
	case commands.Trust:
		return x.trustWorkspace(line, c) // trust.go
	case commands.Runners:
		return x.runnersCmd(ctx, line, c) // runner.go
	case commands.Agents:
		if err := x.issue(line, c); err != nil {
			return Reply{}, err
		}
		return Reply{Output: x.agentsText()}, nil
	case commands.Help:
		text, ok := commands.HelpText(c.Topic)
		if c.Topic == "" || !ok {
			text = commands.Overview()
		}
		if err := x.issue(line, c); err != nil {
			return Reply{}, err
		}
		return Reply{Output: text}, nil
	case commands.Quit:
		if err := x.issue(line, c); err != nil {
			return Reply{}, err
		}
		return Reply{Quit: true}, nil
	case commands.Converge:
		return x.converge(line, c)
	case commands.Resolve:
		return x.resolve(line, c)
	case commands.Apply:
		if c.SubagentID != "" {
			return x.applySub(line, c)
		}
		return x.apply(line, c)
	case commands.Diff:
		return x.diffCmd(line, c)
	case commands.Blame:
		return x.blameCmd(line, c)
	case commands.Undo:
		return x.undo(line, c)
	case commands.Discard:
		return x.discard(line, c)
	case commands.Retry:
		return x.retry(line, c)
	}
	return x.rejectUsage(line, cmd, "not supported")
}

// note records plain text: a message to the subagent holding control, else a session note.
func (x *Orchestrator) note(text string) (Reply, error) {
	if strings.TrimSpace(text) == "" {
		return Reply{}, nil
	}
	x.mu.Lock()
	to := x.state.Control
	s := x.subs[to]
	x.mu.Unlock()
	if to != "" && s != nil {
		// UserPromptSubmit hooks (hooks.go) may withhold or annotate it first.
		x.promptHooks(s, text, func(text string) error {
			if _, err := x.emit(to, session.UserNote{Text: text}); err != nil {
				return err
			}
			s.deliver(text)
			return nil
		})
		return Reply{}, nil
	}
	_, err := x.emit("", session.UserNote{Text: text})
	return Reply{}, err
}

// agentsText is the catalogue as a table (tab-separated cells, the first line its header:
// each reader lays it out for its own width, see render.Blocks), then what its mode column means.
func (x *Orchestrator) agentsText() string {
	var b strings.Builder
	row := func(cells ...string) {
		for i, c := range cells {
			cells[i] = cellText(c)
		}
		b.WriteString(strings.Join(cells, "\t") + "\n")
	}
	row("name", "from", "mode", "description")
	for _, d := range x.o.Catalogue.List() {
		mode := string(d.PermissionMode)
		if mode == "" {
			mode = "session's" // the definition sets none: it runs in the session's mode
		}
		row(d.Name, d.Source.Layer, mode, oneLine(d.Description, 100))
		// A definition that replaced another of its name never does so silently.
		if sh := x.o.Catalogue.Shadowing(d.Name, x.o.Workspace); sh != "" {
			row("", "", "", "↳ runs "+sh)
		}
	}
	for _, g := range x.o.Catalogue.Gated() { // an untrusted workspace's agent files (session/trust)
		if g.Ignored {
			row(g.Name, "workspace", "", oneLine("ignored: "+relTo(x.o.Workspace, g.Path)+": "+g.Why+"; the workspace is not trusted", 100))
		}
	}
	// External ACP agents: acp_agents, and the built-ins whose command is on PATH (a catalogue
	// agent of the same name wins over a built-in).
	reg := x.acpAgents()
	for _, m := range []map[string]*agents.Definition{reg.configured, reg.builtin} {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if _, shadowed := x.o.Catalogue.Get(name); shadowed && m[name] != reg.configured[name] {
				continue
			}
			a := reg.agents[m[name]]
			row(name, "acp", "session's", oneLine(a.Description+" ("+a.CommandLine()+")", 100))
		}
	}
	rr := x.remotes() // remote ABI agents (remote.go)
	for _, name := range slices.Sorted(maps.Keys(rr.defs)) {
		row(name, "remote", "session's", oneLine(rr.defs[name].Description, 100))
	}
	fmt.Fprintf(&b, "\nmode: what an agent asks for, never above the session's (%s); session's: it sets none and takes the session's\n",
		x.o.Ceiling)
	return b.String()
}

// cellText is text for a cell of a tab-separated table: sanitised, on one line, without a tab.
func cellText(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(session.Sanitize(s))
}

// relTo is p relative to root when it is inside it.
func relTo(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// status renders one subagent or convergence, or the whole session.
func (x *Orchestrator) status(line string, c commands.Status) (Reply, error) {
	x.mu.Lock()
	known := c.ID == "" || x.state.Subagent(c.ID) != nil || x.state.Convergence(c.ID) != nil
	ids := x.knownIDs()
	x.mu.Unlock()
	if !known {
		return x.rejectf(line, c, "unknown id %s%s", c.ID, didYouMean(c.ID, ids))
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var b strings.Builder
	now := x.clock.Now()
	// Tables are tab-separated lines, the first the header: each reader lays them out for its
	// own width (render.Blocks). A cell never holds a tab: model text goes through cell.
	cell := cellText
	header := func() { b.WriteString("\tid\tagent\tstatus\ttime\tnow\n") }
	row := func(sa *session.Subagent) {
		extra := ""
		switch {
		case sa.PendingRequest != "":
			extra = "waiting for approval " + sa.PendingRequest
		case sa.Status == session.StatusQueued:
			extra = "queued"
		case sa.CurrentTool != "":
			extra = sa.CurrentTool
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", render.StatusGlyph(sa), sa.ID, cell(sa.AgentType), sa.Status,
			sa.Elapsed(now).Round(time.Second), cell(extra))
	}
	switch {
	case c.ID == "":
		fmt.Fprintf(&b, "session %s · %s · %d running\n", x.state.SessionID, x.state.Info.PermissionMode, x.state.Running())
		if t := render.ChangedFilesText(x.state.Info.ChangedFiles, x.state.Info.Workspace); t != "" {
			fmt.Fprintf(&b, "⚠ %s\n", t)
		}
		if t := render.TrustText(x.state); t != "" {
			fmt.Fprintf(&b, "⚠ %s\n", t)
		}
		if len(x.state.Subagents) > 0 {
			header()
		}
		for _, sa := range x.state.Subagents {
			row(sa)
		}
		if len(x.state.Convergences) > 0 {
			b.WriteString("\nconvergence\tstrategy\tmembers\tstatus\n") // a blank line: a table of its own
		}
		for _, cv := range x.state.Convergences {
			fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", cv.ID, cv.Strategy, strings.Join(cv.Members, ", "), cell(render.ConvergenceStatus(x.state, cv)))
		}
	case x.state.Subagent(c.ID) != nil:
		sa := x.state.Subagent(c.ID)
		header()
		row(sa)
		fmt.Fprintf(&b, "task: %s\n", session.Sanitize(oneLine(sa.Task, 200)))
		if sa.Capsule != nil {
			fmt.Fprintf(&b, "capsule: %s\n", session.Sanitize(oneLine(sa.Capsule.Summary, 200)))
		}
		if sa.LastError != "" {
			fmt.Fprintf(&b, "last error: %s\n", session.Sanitize(oneLine(sa.LastError, 200)))
		}
	default:
		cv := x.state.Convergence(c.ID)
		fmt.Fprintf(&b, "%s %s of %s · %s · resolution %s · output %s\n", cv.ID, cv.Strategy, strings.Join(cv.Members, ", "),
			render.ConvergenceStatus(x.state, cv), cv.ConflictResolution, cv.OutputFormat)
		if len(cv.Conflicts) > 0 {
			b.WriteString("conflict\twhere\tstate\n")
		}
		// What an open conflict's choices also land is said under the table, a line each: in a
		// cell it would be flattened into one unreadable row.
		var lands []string
		for _, cf := range cv.Conflicts {
			state := "open: /resolve " + cf.ID + " --choose " + strings.Join(cf.Choices, "|")
			if r := cf.Resolution; r != nil {
				state = "resolved by " + r.Method + ": " + r.Choice
				if r.WholeFile {
					state += "'s whole file"
				}
			} else {
				for _, l := range strings.Split(strings.TrimPrefix(reviewProgress(cf.Review), "\n"), "\n") {
					if l = strings.TrimSpace(l); l != "" {
						lands = append(lands, cf.ID+": "+l)
					}
				}
			}
			fmt.Fprintf(&b, "%s\t%s\t%s\n", cf.ID, cell(session.ConflictWhere(cf.Kind, cf.File, cf.Lines)), cell(state))
		}
		for _, l := range lands {
			b.WriteString(l + "\n")
		}
		for _, n := range cv.Notes {
			fmt.Fprintf(&b, "note: %s\n", session.Sanitize(n))
		}
	}
	return Reply{Output: b.String()}, nil
}

// knownIDs lists the session's ids for suggestions; call with mu held.
func (x *Orchestrator) knownIDs() []string {
	var ids []string
	for _, sa := range x.state.Subagents {
		ids = append(ids, sa.ID)
	}
	for _, cv := range x.state.Convergences {
		ids = append(ids, cv.ID)
		for _, cf := range cv.Conflicts {
			ids = append(ids, cf.ID)
		}
	}
	for _, p := range x.state.Permissions {
		ids = append(ids, p.ID)
	}
	return ids
}

func didYouMean(s string, candidates []string) string {
	if n := commands.Nearest(s, candidates); n != "" {
		return " (did you mean " + n + "?)"
	}
	if len(candidates) == 0 {
		return " (the session has none yet)"
	}
	return ""
}

// Close ends the session: running subagents are cancelled and waited for, and SessionEnded is
// recorded. reason is quit, script_end or error.
func (x *Orchestrator) Close(reason string) error {
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		return x.err
	}
	var live []*sub
	for _, s := range x.subs {
		if !s.stopped.Fired() {
			live = append(live, s)
		}
	}
	x.mu.Unlock()
	sort.Slice(live, func(i, j int) bool { return live[i].n < live[j].n })
	for _, s := range live {
		s.cancel("the session ended")
	}
	for _, s := range live {
		_ = s.stopped.Wait(context.Background())
	}
	// Convergences whose members just stopped finish their analysis before the session
	// ends, so no event follows SessionEnded.
	x.mu.Lock()
	var convs []*conv
	for _, cv := range x.convs {
		convs = append(convs, cv)
	}
	x.mu.Unlock()
	for _, cv := range convs {
		_ = cv.settled.Wait(context.Background())
	}
	// Hooks still running finish and are recorded first (hooks.go); on a signal or an error
	// they are killed.
	kill := reason == "signal" || reason == "error"
	x.waitHooks(kill)
	x.mu.Lock()
	d := x.clock.Now().Sub(x.startedAt)
	x.mu.Unlock()
	end := session.SessionEnded{Reason: reason, DurationMS: d.Milliseconds()}
	x.sessionEndedHooks(end, kill) // recorded before the end itself (hooks.go)
	_, err := x.emit("", end)
	x.hookStop()
	x.stop()
	x.closeIsolation()
	_ = x.o.MCP.Close() // MCP hook: the servers stop with the session
	if x.o.Recorder != nil {
		if cerr := x.o.Recorder.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Summary counts what decides a headless run's exit code.
type Summary struct {
	Rejected   int
	Failed     []string // subagents whose outcome was not success
	Unresolved []string // conflicts without a resolution
}

// Summary reports rejections, failed subagents and unresolved conflicts so far.
func (x *Orchestrator) Summary() Summary {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := Summary{Rejected: x.rejected}
	// A fork's parent's subagents and convergences are its history, not its own outcome.
	for _, sa := range x.state.Subagents {
		if x.inherited[sa.ID] {
			continue
		}
		if sa.Terminal() && sa.Outcome != session.OutcomeSuccess || !sa.Terminal() {
			s.Failed = append(s.Failed, sa.ID)
		}
	}
	for _, cv := range x.state.Convergences {
		if x.inherited[cv.ID] {
			continue
		}
		for _, cf := range cv.Conflicts {
			if cf.Resolution == nil {
				s.Unresolved = append(s.Unresolved, cf.ID)
			}
		}
	}
	return s
}

var _ = io.EOF
var _ = slices.Contains[[]string]
