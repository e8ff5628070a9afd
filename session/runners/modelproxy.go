package runners

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/nats-io/nuid"
)

// Model calls through the session (the package doc's Models): the runner's providers send
// their HTTP requests through ModelTransport, which carries each one over core NATS to the
// session that placed the job; the session (ServeModels) makes the real call with its own
// keys and streams the response back in signed, numbered chunks.

// ModelSubject is the core NATS subject job id's model calls go to (not part of its stream).
func ModelSubject(id string) string { return "summit.job." + id + ".model" }

// Limits of a model call over NATS.
const (
	// ModelChunk is the largest payload of one message of a call (both ways): well under
	// NATS's default max_payload of 1 MiB (a smaller server limit lowers it).
	ModelChunk = 256 << 10
	// MaxModelRequest and MaxModelResponse bound a call's request and response bodies.
	MaxModelRequest  = 32 << 20
	MaxModelResponse = 64 << 20
	// ModelIdle is how long the runner waits for the session's next message of a call; the
	// session sends a "wait" every ModelKeepalive while the model has not answered, so only a
	// session that is gone or cut off goes quiet that long.
	ModelIdle      = 30 * time.Second
	ModelKeepalive = 5 * time.Second
	// ModelWait is how long a runner's call waits, by default, for a session that serves no
	// model calls (down, and about to be resumed), sending it again every ModelRetry.
	ModelWait  = 60 * time.Second
	ModelRetry = time.Second
	// maxModelCalls is how many calls of one job the session makes at once.
	maxModelCalls = 16

	hdrCall = "Summit-Call"
	hdrSeq  = "Summit-Seq"
	hdrPart = "Summit-Part"
)

// ModelCall is a runner's model request as the session receives it: the provider's name in
// the job's route (its first path segment on the runner), and the request without
// credentials. Path is the rest of the URL path with its query ("v1/messages",
// "chat/completions", "v1beta/models/M:streamGenerateContent?alt=sse").
type ModelCall struct {
	Provider string      `json:"provider"`
	Method   string      `json:"method"`
	Path     string      `json:"path"`
	Header   http.Header `json:"header,omitempty"`
	Body     []byte      `json:"-"`
}

// ModelDoer makes a model call with the session's own configuration and keys.
type ModelDoer func(ctx context.Context, call ModelCall) (*http.Response, error)

// credentialHeaders never leave the runner and are never taken from it: the session adds
// its own key.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key", "Cookie", "Set-Cookie"}

// hopHeaders are the connection's own, not the request's.
var hopHeaders = []string{"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length", "Accept-Encoding"}

// CleanHeader is h without credentials and hop-by-hop headers.
func CleanHeader(h http.Header) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	for _, k := range append(credentialHeaders, hopHeaders...) {
		out.Del(k)
	}
	return out
}

// modelSig is the signed text of a response message: the call, its seq and part, and body.
func modelSig(call string, seq int, part string, body []byte) []byte {
	b := make([]byte, 0, len(call)+len(part)+len(body)+24)
	b = append(b, call...)
	b = append(b, '\n')
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, '\n')
	b = append(b, part...)
	b = append(b, '\n')
	return append(b, body...)
}

// ModelTransport is the runner's http.RoundTripper for a job whose models come from the
// session: the request's first path segment names the provider; credentials are dropped; the
// response is accepted only when every message of it is signed by Signer, the key that signed
// the job.
type ModelTransport struct {
	NC     *nats.Conn
	Job    string
	Signer string // the job's signer (a public nkey)
	// Wait is how long a call waits for a session to serve the job while none does (0:
	// ModelWait; negative: not at all).
	Wait time.Duration
}

func (t *ModelTransport) chunk() int {
	n := ModelChunk
	if mp := int(t.NC.MaxPayload()); mp > 0 && mp-8<<10 < n {
		n = max(mp-8<<10, 1<<10)
	}
	return n
}

// RoundTrip sends req to the session and returns its response as it streams in. While no
// session serves the job (NATS says "no responders": the session is down, e.g. between a kill
// and `summit resume`), it sends the request again every ModelRetry up to Wait, so a session
// that comes back takes the call; the request's context ends the wait.
func (t *ModelTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	pk, err := nkeys.FromPublicKey(t.Signer)
	if err != nil {
		return nil, fmt.Errorf("model call: the job's signer %q is not a public nkey", t.Signer)
	}
	path := strings.TrimPrefix(req.URL.Path, "/")
	prov, rest, _ := strings.Cut(path, "/")
	if prov == "" {
		return nil, errors.New("model call: no provider in the path")
	}
	if req.URL.RawQuery != "" {
		rest += "?" + req.URL.RawQuery
	}
	var body []byte
	if req.Body != nil {
		body, err = io.ReadAll(io.LimitReader(req.Body, MaxModelRequest+1))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if len(body) > MaxModelRequest {
			return nil, fmt.Errorf("model call: the request is over %d MiB", MaxModelRequest>>20)
		}
	}
	head, _ := json.Marshal(ModelCall{Provider: prov, Method: req.Method, Path: rest, Header: CleanHeader(req.Header)})
	wait := t.Wait
	if wait == 0 {
		wait = ModelWait
	}
	deadline := time.Now().Add(wait)
	for {
		res, err := t.call(ctx, pk, head, body, req)
		if !errors.Is(err, errNoSession) || wait < 0 || !time.Now().Before(deadline) {
			if errors.Is(err, errNoSession) {
				err = fmt.Errorf("model call: the session serves no model calls for job %s (it ended, gave the job up, or was down for over %s)", t.Job, max(wait, 0))
			}
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(ModelRetry, time.Until(deadline))):
		}
	}
}

// errNoSession is NATS's "no responders" for a call: no session subscribes to the job's subject.
var errNoSession = errors.New("model call: no session serves the job's model calls (no responders)")

// call sends one request of a call and reads the head of its response.
func (t *ModelTransport) call(ctx context.Context, pk nkeys.KeyPair, head, body []byte, req *http.Request) (*http.Response, error) {
	call := nuid.Next()
	inbox := t.NC.NewInbox() // its own subject: not under the connection's request mux
	sub, err := t.NC.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("model call: %w", err)
	}
	seq := 0
	send := func(part string, data []byte) error {
		m := nats.NewMsg(ModelSubject(t.Job))
		m.Reply, m.Data = inbox, data
		m.Header.Set(hdrCall, call)
		m.Header.Set(hdrSeq, strconv.Itoa(seq))
		m.Header.Set(hdrPart, part)
		seq++
		return t.NC.PublishMsg(m)
	}
	err = send("head", head)
	for n := t.chunk(); err == nil && len(body) > 0; body = body[min(n, len(body)):] {
		err = send("body", body[:min(n, len(body))])
	}
	if err == nil {
		err = send("end", nil)
	}
	if err == nil {
		fctx, cancel := context.WithTimeout(ctx, ModelIdle)
		err = t.NC.FlushWithContext(fctx)
		cancel()
	}
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("model call: sending the request to the session: %w", err)
	}
	r := &modelReader{t: t, sub: sub, call: call, pk: pk, ctx: ctx, cancel: func() {
		_ = send("cancel", nil)
	}}
	var h struct {
		Status int         `json:"status"`
		Header http.Header `json:"header"`
	}
	part, data, err := r.next()
	switch {
	case err != nil:
		r.Close()
		return nil, err
	case part == "error":
		r.Close()
		return nil, fmt.Errorf("model call through the session: %s", data)
	case part != "head" || json.Unmarshal(data, &h) != nil || h.Status < 100:
		r.Close()
		return nil, fmt.Errorf("model call: the session's reply began with %q", part)
	}
	return &http.Response{Status: fmt.Sprintf("%d %s", h.Status, http.StatusText(h.Status)), StatusCode: h.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h.Header, Body: r, ContentLength: -1, Request: req}, nil
}

// modelReader is a call's response body: the session's body chunks, in order, each verified.
type modelReader struct {
	t      *ModelTransport
	sub    *nats.Subscription
	call   string
	pk     nkeys.KeyPair
	ctx    context.Context
	cancel func()
	seq    int
	buf    []byte
	size   int
	err    error
	once   sync.Once
	done   bool
}

// next is the call's next message other than a keepalive: its part and body.
func (r *modelReader) next() (string, []byte, error) {
	for {
		ctx, cancel := context.WithTimeout(r.ctx, ModelIdle)
		m, err := r.sub.NextMsgWithContext(ctx)
		cancel()
		if err != nil && r.ctx.Err() != nil {
			return "", nil, r.ctx.Err()
		}
		if errors.Is(err, nats.ErrNoResponders) || err == nil && m.Header.Get("Status") == "503" {
			return "", nil, errNoSession
		}
		if err != nil {
			return "", nil, fmt.Errorf("model call: nothing from the session for %s (it ended or is cut off): %w", ModelIdle, err)
		}
		part := m.Header.Get(hdrPart)
		sig, err := base64.RawURLEncoding.DecodeString(m.Header.Get(hdrSignature))
		if err != nil || m.Header.Get(hdrCall) != r.call || r.pk.Verify(modelSig(r.call, r.seq, part, m.Data), sig) != nil {
			// Not the session's, or not the next one (core NATS dropped one): the call fails
			// as a transient error, and the runtime retries it.
			return "", nil, fmt.Errorf("model call: a reply not signed by the job's session, or out of order (message %d)", r.seq)
		}
		r.seq++
		if part != "wait" {
			return part, m.Data, nil
		}
	}
}

func (r *modelReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		part, data, err := r.next()
		switch {
		case err != nil:
			r.err = err
		case part == "end":
			r.done, r.err = true, io.EOF
		case part == "error":
			r.err = fmt.Errorf("model call through the session: %s", data)
		case part == "body":
			if r.size += len(data); r.size > MaxModelResponse {
				r.err = fmt.Errorf("model call: the response is over %d MiB", MaxModelResponse>>20)
			}
			r.buf = data
		default:
			r.err = fmt.Errorf("model call: unexpected %q from the session", part)
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// Close ends the call; before its end, the session is told to cancel it.
func (r *modelReader) Close() error {
	r.once.Do(func() {
		if !r.done {
			r.cancel()
		}
		_ = r.sub.Unsubscribe()
	})
	return nil
}

// ServeModels answers job id's model calls with do until the returned stop is called (the
// session does so when it forgets the job). Only this session's own jobs have a subscription,
// and every reply is signed with its key, which the runner checks against the job's signer.
func (c *Client) ServeModels(id string, do ModelDoer) (stop func(), err error) {
	s := &modelServer{c: c, do: do, calls: map[string]*serverCall{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	sub, err := c.nc.Subscribe(ModelSubject(id), s.msg)
	if err != nil {
		s.cancel()
		return nil, err
	}
	_ = sub.SetPendingLimits(-1, 2*MaxModelRequest)
	return func() {
		_ = sub.Unsubscribe()
		s.cancel()
		s.wg.Wait()
	}, nil
}

type modelServer struct {
	c      *Client
	do     ModelDoer
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	calls  map[string]*serverCall
}

// serverCall is one call being received or made.
type serverCall struct {
	reply   string
	since   time.Time // when its head came
	seq     int       // the next request message's seq
	head    ModelCall
	body    bytes.Buffer
	cancel  context.CancelFunc
	failed  bool // an error was sent: the rest of the request is ignored
	started bool // the call is being made: only a cancel counts now

	out  sync.Mutex // one response message at a time, numbered in order
	outN int
}

// msg takes one request message (the subscription delivers them in order, one at a time).
func (s *modelServer) msg(m *nats.Msg) {
	id, part := m.Header.Get(hdrCall), m.Header.Get(hdrPart)
	seq, err := strconv.Atoi(m.Header.Get(hdrSeq))
	if id == "" || m.Reply == "" || err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.calls[id]
	if part == "cancel" {
		switch {
		case sc != nil && sc.cancel != nil:
			sc.cancel()
		case sc != nil:
			delete(s.calls, id) // given up before it was made
		}
		return
	}
	if sc == nil {
		if part != "head" || seq != 0 {
			return
		}
		// A request whose end never came (its messages lost, its runner gone) is dropped
		// after ModelIdle: the runner has failed it by then.
		for k, c := range s.calls {
			if !c.started && time.Since(c.since) > ModelIdle {
				delete(s.calls, k)
			}
		}
		if len(s.calls) >= maxModelCalls {
			s.reply(&serverCall{reply: m.Reply}, id, "error", []byte(fmt.Sprintf("over %d model calls of this job at once", maxModelCalls)))
			return
		}
		sc = &serverCall{reply: m.Reply, since: time.Now()}
		s.calls[id] = sc
	}
	fail := func(why string) {
		sc.failed = true
		s.reply(sc, id, "error", []byte(why))
	}
	switch {
	case sc.started:
		return
	case sc.failed:
		if part == "end" {
			delete(s.calls, id)
		}
		return
	case seq != sc.seq:
		fail(fmt.Sprintf("request message %d arrived as %d (a message was lost)", sc.seq, seq))
		return
	}
	sc.seq++
	switch part {
	case "head":
		if json.Unmarshal(m.Data, &sc.head) != nil {
			fail("the request's head is not JSON")
		}
	case "body":
		if sc.body.Len()+len(m.Data) > MaxModelRequest {
			fail(fmt.Sprintf("the request is over %d MiB", MaxModelRequest>>20))
			return
		}
		sc.body.Write(m.Data)
	case "end":
		ctx, cancel := context.WithCancel(s.ctx)
		sc.cancel, sc.started = cancel, true
		call := sc.head
		call.Header = CleanHeader(call.Header)
		call.Body = sc.body.Bytes()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer cancel()
			s.serve(ctx, id, sc, call)
			s.mu.Lock()
			delete(s.calls, id)
			s.mu.Unlock()
		}()
	default:
		fail(fmt.Sprintf("unknown request part %q", part))
	}
}

// reply sends one signed response message of call id.
func (s *modelServer) reply(sc *serverCall, id, part string, data []byte) {
	sc.out.Lock()
	defer sc.out.Unlock()
	sig, err := s.c.key.Sign(modelSig(id, sc.outN, part, data))
	if err != nil {
		return
	}
	sc.outN++
	m := nats.NewMsg(sc.reply)
	m.Data = data
	m.Header.Set(hdrCall, id)
	m.Header.Set(hdrPart, part)
	m.Header.Set(hdrSignature, base64.RawURLEncoding.EncodeToString(sig))
	_ = s.c.nc.PublishMsg(m)
}

// serve makes the call and streams its response back.
func (s *modelServer) serve(ctx context.Context, id string, sc *serverCall, call ModelCall) {
	send := func(part string, data []byte) { s.reply(sc, id, part, data) }
	answered := make(chan struct{})
	go func() {
		t := time.NewTicker(ModelKeepalive)
		defer t.Stop()
		for {
			select {
			case <-answered:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				send("wait", nil)
			}
		}
	}()
	res, err := s.do(ctx, call)
	close(answered)
	if err != nil {
		send("error", []byte(err.Error()))
		return
	}
	defer res.Body.Close()
	head, _ := json.Marshal(struct {
		Status int         `json:"status"`
		Header http.Header `json:"header"`
	}{res.StatusCode, CleanHeader(res.Header)})
	send("head", head)
	buf := make([]byte, ModelChunk)
	total := 0
	for {
		n, err := res.Body.Read(buf)
		if n > 0 {
			if total += n; total > MaxModelResponse {
				send("error", []byte(fmt.Sprintf("the response is over %d MiB", MaxModelResponse>>20)))
				return
			}
			send("body", append([]byte(nil), buf[:n]...))
		}
		if errors.Is(err, io.EOF) {
			send("end", nil)
			return
		}
		if err != nil {
			send("error", []byte("reading the model's response: "+err.Error()))
			return
		}
	}
}
