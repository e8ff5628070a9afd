package runners

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
)

// Protocol is the wire version a job carries (Summit-Protocol).
const Protocol = 1

// The fixed names of the package doc.
const (
	RunnersBucket = "summit_runners"
	BundlesStore  = "summit_bundles"
	JobsStream    = "SUMMIT_JOBS"
	// LeaseTTL is how long a registration lives without a refresh: a dead runner's key is gone
	// after it, and its subagents fail within LeaseTTL plus one watch interval and the probes.
	// Short on purpose: the lease only starts the probes, which decide (a runner that is slow to
	// re-put its key still answers them), so a short lease costs no false deaths and leaves the
	// 15 s a killed runner's subagents must fail within room for a loaded machine (at 10 s, a
	// runner killed just after a re-put failed its subagents 15.5-27 s later at load 20-50).
	LeaseTTL = 6 * time.Second
	// ProbeTimeout is how long a liveness request (AliveSubject) waits for the runner's reply.
	ProbeTimeout = 2 * time.Second
	// UnreachableMax is how long a runner whose lease expired may stay unreachable (NATS
	// still holds its connection, but it answers nothing) before its subagents fail.
	UnreachableMax = 3 * time.Minute
	// RegistrationsFresh is how long the session reuses the registrations it read (Client.
	// Runners): a burst of /delegate --on lines (each is checked, then placed) reads the bucket
	// once instead of twice a line.
	RegistrationsFresh = 500 * time.Millisecond
	// JobAPICalls is how many jobs a session sets up or cleans up at once (Client.Submit,
	// Follow's consumer, Forget): the rest wait their turn.
	JobAPICalls = 8

	hdrJob       = "Summit-Job"
	hdrProtocol  = "Summit-Protocol"
	hdrSigner    = "Summit-Signer"
	hdrSignature = "Summit-Signature"
	hdrKind      = "Summit-Kind"
	kindEvent    = "event"
	kindEnd      = "end"
)

// nameRE is compiled on first use: package initialisers run in every summit process, `summit
// version` included (issue 28 measures its start).
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// ValidName reports whether s may name a runner.
func ValidName(s string) error {
	if !nameRE().MatchString(s) {
		return fmt.Errorf("runner name %q: want 1 to 64 of A-Z a-z 0-9 _ -", s)
	}
	return nil
}

// AliveSubject is runner name's liveness subject (core NATS): the runner answers every
// request on it with an empty reply while its connection is up.
func AliveSubject(name string) string { return "summit.runner." + name + ".alive" }

// JobSubject is the work-queue subject of jobs for runner name.
func JobSubject(name string) string { return "summit.jobs." + name }

// JobStream is the per-job stream of job id.
func JobStream(id string) string { return "SUMMIT_JOB_" + id }

// EventSubject and ControlSubject are the per-job stream's two subjects.
func EventSubject(id string) string   { return "summit.job." + id + ".ev" }
func ControlSubject(id string) string { return "summit.job." + id + ".ctl" }

// BaseObject and ResultObject name a job's bundles in the object store.
func BaseObject(id string) string   { return "base/" + id + ".bundle" }
func ResultObject(id string) string { return "result/" + id + ".bundle" }

// Registration is a runner's value in the summit_runners bucket.
type Registration struct {
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels,omitempty"`
	Slots    int               `json:"slots"`
	Free     int               `json:"free"`
	Version  string            `json:"version,omitempty"`
	Protocol int               `json:"protocol"`
	Started  time.Time         `json:"started"`
	Jobs     []string          `json:"jobs,omitempty"`
}

// Job is what a runner needs to run one subagent (the package doc's Job). It carries no
// secret: Env names variables the runner passes from its own environment.
type Job struct {
	ID             string   `json:"id"`
	Protocol       int      `json:"protocol"`
	SessionID      string   `json:"session_id"`
	SubagentID     string   `json:"subagent_id"`
	Task           string   `json:"task"`
	AgentType      string   `json:"agent_type"`
	PermissionMode string   `json:"permission_mode,omitempty"`
	Tools          []string `json:"tools,omitempty"`
	InheritContext bool     `json:"inherit_context,omitempty"`
	TimeoutS       int      `json:"timeout_s"`
	BaseCommit     string   `json:"base_commit,omitempty"`
	BaseBundle     string   `json:"base_bundle,omitempty"`
	Models         string   `json:"models,omitempty"`
	Env            []string `json:"env,omitempty"`
	// Route is the session's routing of the subagent's model when Models is "session" (no
	// endpoint, key or header in it; provider.JobRoute).
	Route *provider.JobRoute `json:"route,omitempty"`
	// Agent is the effective agent definition after the session's policy (jobdef.go): the
	// runner runs it instead of looking AgentType up in its own catalogue.
	Agent *agents.Definition `json:"agent,omitempty"`
	// Context is the context chain the prompt inherits (--inherit-context): the session's
	// playbook and its finished subagents' downstream contexts.
	Context *ContextChain `json:"context,omitempty"`
}

// Models values of a Job.
const (
	ModelsSession = "session" // model calls come back to the session (ModelSubject)
	ModelsRunner  = "runner"  // the runner's own configuration (--local-models, --tapes)
)

// End is a job's last message.
type End struct {
	Outcome    string   `json:"outcome"`
	Error      string   `json:"error,omitempty"`
	Runner     string   `json:"runner"`
	Base       string   `json:"base,omitempty"`
	Head       string   `json:"head,omitempty"`
	Result     string   `json:"result,omitempty"`
	ToolCalls  int      `json:"tool_calls,omitempty"`
	Artifacts  []string `json:"artifacts,omitempty"`
	CostUSD    *float64 `json:"cost_usd,omitempty"`
	SubagentID string   `json:"subagent_id,omitempty"` // the runner session's own id of it
}

// OutcomeRefused is an End's outcome for a job the runner would not run.
const OutcomeRefused = "refused"

// Control is a message on a job's control subject.
type Control struct {
	Type    string `json:"type"` // "decision" or "cancel"
	Request string `json:"request,omitempty"`
	Grant   bool   `json:"grant,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// ConnOptions say how to reach NATS.
type ConnOptions struct {
	URL      string
	Creds    string // a .creds file, an nkey seed file, or "user:password" in a file
	Insecure bool   // no credentials, loopback only
	Name     string // the connection's name, for the server's monitoring
}

// Connect dials NATS as the package doc's Authentication says: without credentials only on
// loopback and only with Insecure. It reconnects forever (a partition is not an end).
func Connect(o ConnOptions) (*nats.Conn, error) {
	if o.URL == "" {
		return nil, errors.New("no NATS URL (--nats URL, or runners: {nats: URL} in the user config)")
	}
	opts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(5 * time.Second), nats.PingInterval(2 * time.Second), nats.MaxPingsOutstanding(2)}
	if o.Creds != "" {
		opt, err := credsOption(o.Creds)
		if err != nil {
			return nil, err
		}
		opts = append(opts, opt)
	} else {
		if !loopbackURL(o.URL) {
			return nil, fmt.Errorf("NATS at %s without credentials: give --creds FILE (a .creds file, an nkey seed or user:password); an unauthenticated NATS is refused off loopback", o.URL)
		}
		if !o.Insecure {
			return nil, fmt.Errorf("NATS at %s without credentials: give --creds FILE, or --insecure (loopback only: every local process can then place and take jobs)", o.URL)
		}
	}
	nc, err := nats.Connect(o.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("NATS at %s: %w", o.URL, err)
	}
	return nc, nil
}

func loopbackURL(raw string) bool {
	for _, u := range strings.Split(raw, ",") {
		if !strings.Contains(u, "://") {
			u = "nats://" + u
		}
		p, err := url.Parse(strings.TrimSpace(u))
		if err != nil {
			return false
		}
		h := p.Hostname()
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return true
}

// credsOption reads a credentials file: a .creds (JWT and seed), a bare nkey seed, or one
// line user:password. Its content is never logged.
func credsOption(path string) (nats.Option, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--creds: %w", err)
	}
	s := strings.TrimSpace(string(b))
	switch {
	case strings.Contains(s, "BEGIN NATS USER JWT"):
		return nats.UserCredentials(path), nil
	case strings.HasPrefix(s, "SU"):
		opt, err := nats.NkeyOptionFromSeed(path)
		if err != nil {
			return nil, fmt.Errorf("--creds %s: not a valid nkey seed", path)
		}
		return opt, nil
	}
	user, pass, ok := strings.Cut(s, ":")
	if !ok || user == "" || strings.ContainsAny(s, "\n") {
		return nil, fmt.Errorf("--creds %s: want a .creds file, an nkey seed (SU…) or one line user:password", path)
	}
	return nats.UserInfo(user, pass), nil
}

// Ensure creates the shared streams, bucket and store when they are missing.
func Ensure(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, jetstream.ObjectStore, error) {
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: JobsStream, Subjects: []string{"summit.jobs.*"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: time.Hour}); err != nil {
		return nil, nil, fmt.Errorf("NATS: the %s stream: %w", JobsStream, err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: RunnersBucket, TTL: LeaseTTL, Storage: jetstream.FileStorage})
	if err != nil {
		return nil, nil, fmt.Errorf("NATS: the %s bucket: %w", RunnersBucket, err)
	}
	obj, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: BundlesStore, Storage: jetstream.FileStorage, TTL: 7 * 24 * time.Hour})
	if err != nil {
		return nil, nil, fmt.Errorf("NATS: the %s object store: %w", BundlesStore, err)
	}
	return kv, obj, nil
}

// KeyFile is where a session's signing key lives: runner.nk in the user config directory.
func KeyFile() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "summit", "runner.nk"), nil
}

// LoadKey reads the nkey seed at path, creating it (mode 0600) when missing.
func LoadKey(path string) (nkeys.KeyPair, error) {
	if b, err := os.ReadFile(path); err == nil {
		kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(b))))
		if err != nil {
			return nil, fmt.Errorf("%s: not an nkey seed", path)
		}
		return kp, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Write(append(seed, '\n')); err != nil {
		return nil, err
	}
	return kp, nil
}

// signJob is the job's message with its signature headers.
func signJob(kp nkeys.KeyPair, runner string, j Job) (*nats.Msg, error) {
	body, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	sig, err := kp.Sign(body)
	if err != nil {
		return nil, err
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	m := nats.NewMsg(JobSubject(runner))
	m.Data = body
	m.Header.Set(hdrJob, j.ID)
	m.Header.Set(hdrProtocol, fmt.Sprint(Protocol))
	m.Header.Set(hdrSigner, pub)
	m.Header.Set(hdrSignature, base64.RawURLEncoding.EncodeToString(sig))
	m.Header.Set(nats.MsgIdHdr, j.ID)
	return m, nil
}

// verifyJob checks a job message's signature against the trusted keys and decodes it.
func verifyJob(h nats.Header, body []byte, trusted []string) (Job, error) {
	var j Job
	signer := h.Get(hdrSigner)
	sig, err := base64.RawURLEncoding.DecodeString(h.Get(hdrSignature))
	if signer == "" || err != nil || len(sig) == 0 {
		return j, errors.New("the job is not signed")
	}
	known := false
	for _, t := range trusted {
		known = known || t == signer
	}
	if !known {
		return j, fmt.Errorf("the job is signed by %s, a session this runner does not trust (--trust KEY)", signer)
	}
	pk, err := nkeys.FromPublicKey(signer)
	if err != nil {
		return j, fmt.Errorf("the job's signer %q is not a public nkey", signer)
	}
	if err := pk.Verify(body, sig); err != nil {
		return j, errors.New("the job's signature does not verify")
	}
	if err := json.Unmarshal(body, &j); err != nil {
		return j, fmt.Errorf("the job: %v", err)
	}
	if j.Protocol != Protocol {
		return j, fmt.Errorf("the job speaks protocol %d; this runner speaks %d", j.Protocol, Protocol)
	}
	return j, nil
}
