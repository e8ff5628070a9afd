package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// The seed's manifest (seed 002), as an agent.yaml.
const seedManifest = `apiVersion: summit.io/v1
kind: Agent
metadata:
  name: "deep-researcher"
  version: "0.1.0"
  description: "Autonomous OSINT investigator with deep web retrieval capabilities."
spec:
  role: "researcher"
  capabilities:
    - "search:google"
    - "browser:headless"
  resources:
    memory: "high"
  interface:
    inputSchema:
      type: object
      required: ["query"]
      properties:
        query: { type: string }
        depth: { type: integer, default: 2 }
    outputSchema:
      type: object
      properties:
        summary: { type: string }
        sources: { type: array, items: { type: string } }
        confidence: { type: number }
`

const serveTapes = `tapes:
  - name: researcher-quantum
    match: {agent: deep-researcher, task: "(?i)quantum"}
    steps:
      - say: "Looking into quantum computing."
      - tool: glob
        args: {pattern: "*"}
      - say: "Summarising what I found."
      - capsule:
          summary: "quantum computing: error correction is the milestone"
          confidence: 0.85
          verification:
            status: passed
            score: 0.9
            checks:
              - {name: hallucination-check, passed: true}
              - {name: safety-policy, passed: true}
  - name: researcher-fusion
    match: {agent: deep-researcher, task: "(?i)fusion"}
    steps:
      - say: "Fusion is further off."
      - capsule: {summary: "fusion: still years away", confidence: 0.4}
  - name: researcher-slow
    match: {agent: deep-researcher, task: "(?i)glacial"}
    steps:
      - say: "Starting a long look."
      - sleep: 60s
      - capsule: {summary: never}
`

// server is a `summit serve` process.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
	ws     string
}

// startServe runs `summit serve` on a free loopback port with the seed's manifest and the
// tapes above in a workspace of its own.
func startServe(t *testing.T, bin, token string, extra ...string) *server {
	t.Helper()
	ws := runWorkspace(t)
	if err := os.MkdirAll(filepath.Join(ws, ".summit", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, ".summit", "agents", "deep-researcher.yaml"), []byte(seedManifest), 0o644)
	tapes := filepath.Join(t.TempDir(), "tapes.yaml")
	os.WriteFile(tapes, []byte(serveTapes), 0o644)
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--workspace", ws, "--tapes", tapes, "--approve", "all"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), serveTokenEnv+"="+token)
	errb := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(errb, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: errb, ws: ws}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		pw.Close()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`at (https?://127\.0\.0\.1:\d+)/rpc`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case s.url = <-found:
	case <-time.After(20 * time.Second):
		t.Fatalf("summit serve did not start:\n%s", errb.String())
	}
	return s
}

// post sends a raw body to /rpc and returns the HTTP status and the JSON-RPC response.
func post(t *testing.T, url, token, body string) (int, protocols.Response) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/rpc", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r protocols.Response
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("not JSON-RPC (HTTP %d): %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, r
}

// Bad requests get JSON-RPC errors with the right codes; the seed's examples round-trip.
func TestServeRPC(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	const token = "serve-token-not-secret-7f3a9c"
	s := startServe(t, bin, token, "--max-body", "4096")
	for _, tc := range []struct {
		name, token, body string
		status, code      int
		msg               string
	}{
		{"no token", "", `{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"deep-researcher"},"id":1}`, 401, -32001, "bearer token is required"},
		{"wrong token", "nope", `{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"deep-researcher"},"id":1}`, 401, -32001, "wrong"},
		{"malformed", token, `{"jsonrpc":"2.0","method":`, 200, -32700, "parse error"},
		{"wrong method", token, `{"jsonrpc":"2.0","method":"agent.fly","id":2}`, 200, -32601, `unknown method "agent.fly"`},
		{"not 2.0", token, `{"jsonrpc":"1.0","method":"agent.schema","id":3}`, 200, -32600, `"jsonrpc" must be "2.0"`},
		{"batch", token, `[{"jsonrpc":"2.0","method":"agent.schema","id":3}]`, 200, -32600, "batch"},
		{"unknown agent", token, `{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"nobody"},"id":4}`, 200, -32602, `unknown agent "nobody"`},
		{"schema violation", token, `{"jsonrpc":"2.0","method":"agent.invoke","params":{"agentId":"deep-researcher","inputs":{"depth":3}},"id":5}`, 200, -32602, "query"},
		{"wrong type", token, `{"jsonrpc":"2.0","method":"agent.invoke","params":{"agentId":"deep-researcher","inputs":{"query":"q","depth":"deep"}},"id":6}`, 200, -32602, "inputs/depth"},
		{"unknown param", token, `{"jsonrpc":"2.0","method":"agent.status","params":{"run":"x"},"id":7}`, 200, -32602, "unknown field"},
		{"unknown run", token, `{"jsonrpc":"2.0","method":"agent.status","params":{"runId":"x"},"id":8}`, 200, -32602, `unknown runId "x"`},
		{"oversized", token, `{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"` + strings.Repeat("a", 5000) + `"},"id":9}`, 413, -32600, "over 4096 bytes"},
	} {
		status, r := post(t, s.url, tc.token, tc.body)
		if status != tc.status || r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.msg) {
			t.Errorf("%s: HTTP %d %+v; want %d, code %d, %q", tc.name, status, r.Error, tc.status, tc.code, tc.msg)
		}
	}
	if _, r := post(t, s.url, token, `{"jsonrpc":"2.0","method":"agent.invoke","params":{"agentId":"deep-researcher","inputs":{"depth":"x"}},"id":5}`); r.Error == nil ||
		r.Error.Data.(map[string]any)["path"] == nil {
		t.Errorf("a schema violation names its path: %+v", r.Error)
	}

	// agent.schema returns the seed's manifest.
	_, r := post(t, s.url, token, `{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"deep-researcher"},"id":10}`)
	var m protocols.Manifest
	if r.Error != nil || json.Unmarshal(r.Result, &m) != nil || m.APIVersion != "summit.io/v1" || m.Kind != "Agent" ||
		m.Metadata.Version != "0.1.0" || m.Spec.Role != "researcher" || len(m.Spec.Capabilities) != 2 ||
		m.Spec.Interface.InputSchema["required"].([]any)[0] != "query" || m.Spec.Interface.OutputSchema["properties"].(map[string]any)["sources"] == nil {
		t.Errorf("agent.schema: %s %+v", r.Result, r.Error)
	}

	// The seed's invoke request, exactly, answers like the seed's response.
	status, r := post(t, s.url, token, `{
  "jsonrpc": "2.0",
  "method": "agent.invoke",
  "params": {
    "agentId": "deep-researcher",
    "inputs": {
      "query": "status of quantum computing in 2026"
    },
    "runId": "run-12345",
    "context": {
      "traceId": "trace-abc",
      "budget": { "usd": 0.50 }
    }
  },
  "id": 1
}`)
	var res protocols.InvokeResult
	if status != 200 || r.Error != nil || string(r.ID) != "1" || json.Unmarshal(r.Result, &res) != nil {
		t.Fatalf("invoke: HTTP %d %+v %s", status, r.Error, r.Result)
	}
	if res.Status != "completed" || res.Output["summary"] != "quantum computing: error correction is the milestone" || res.Output["confidence"] != 0.85 ||
		res.Metrics == nil || res.Metrics.Tokens == 0 || res.Metrics.LatencyMS <= 0 || res.Provenance == nil || res.Provenance.Model == "" ||
		res.Provenance.Timestamp == "" || res.Verification == nil || res.Verification.Status != "passed" || len(res.Verification.Checks) != 2 || res.RunID != "run-12345" {
		t.Errorf("invoke result: %s", r.Result)
	}
	// The run is a recording of its own that replays, with the trace id and the budget.
	st, _, err := record.LoadFile(res.Recording, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	serveMeta, _ := st.Info.Config["serve"].(map[string]any)
	if sa := st.Subagent("sa-1"); sa == nil || sa.Outcome != session.OutcomeSuccess || serveMeta["trace_id"] != "trace-abc" || serveMeta["run_id"] != "run-12345" {
		t.Errorf("the run's recording: %+v, config %v", sa, st.Info.Config)
	}
	// A used runId is refused; agent.status reports the run.
	if _, r := post(t, s.url, token, `{"jsonrpc":"2.0","method":"agent.invoke","params":{"agentId":"deep-researcher","inputs":{"query":"q"},"runId":"run-12345"},"id":11}`); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("a used runId: %+v", r.Error)
	}
	if _, r := post(t, s.url, token, `{"jsonrpc":"2.0","method":"agent.status","params":{"runId":"run-12345"},"id":12}`); r.Error != nil || !strings.Contains(string(r.Result), `"status":"completed"`) {
		t.Errorf("status: %s %+v", r.Result, r.Error)
	}
	// A tokens budget stops the run after its first model turn.
	_, r = post(t, s.url, token, `{"jsonrpc":"2.0","method":"agent.invoke","params":{"agentId":"deep-researcher","inputs":{"query":"quantum again"},"context":{"budget":{"tokens":10}}},"id":13}`)
	res = protocols.InvokeResult{}
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.Status != "failed" || !strings.Contains(res.Error, "budget of 10 tokens is spent") {
		t.Errorf("a budget did not stop the run: %s %+v", r.Result, r.Error)
	}
	// Runs at once are bounded: a second while one goes is 429 with Retry-After; agent.cancel
	// stops the first, and its events stream ends with the result.
	s2 := startServe(t, bin, token, "--max-runs", "1")
	_, r = post(t, s2.url, token, `{"jsonrpc":"2.0","method":"agent.invoke","params":{"agentId":"deep-researcher","inputs":{"query":"a glacial survey"},"runId":"slow-1","wait":false},"id":20}`)
	if r.Error != nil || !strings.Contains(string(r.Result), `"status":"running"`) || !strings.Contains(string(r.Result), `"recording":`) {
		t.Fatalf("a run that does not wait: %s %+v", r.Result, r.Error)
	}
	req, _ := http.NewRequest(http.MethodPost, s2.url+"/rpc", strings.NewReader(`{"jsonrpc":"2.0","method":"agent.invoke","params":{"agentId":"deep-researcher","inputs":{"query":"quantum"}},"id":21}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a run over --max-runs: HTTP %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// The stream is read as it comes; the run is cancelled once its first words were streamed
	// (a fixed wait would cancel it before them on a loaded machine).
	events, started := make(chan string, 1), make(chan struct{})
	go func(started chan struct{}) {
		req, _ := http.NewRequest(http.MethodGet, s2.url+"/runs/slow-1/events", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			close(started)
			events <- err.Error()
			return
		}
		var b []byte
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b = append(b, buf[:n]...)
			if started != nil && bytes.Contains(b, []byte("Starting a long look.")) {
				close(started)
				started = nil
			}
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		if started != nil {
			close(started)
		}
		events <- string(b)
	}(started)
	select {
	case <-started:
	case <-time.After(15 * time.Second):
		t.Error("the run streamed nothing in 15 s")
	}
	_, r = post(t, s2.url, token, `{"jsonrpc":"2.0","method":"agent.cancel","params":{"runId":"slow-1"},"id":22}`)
	if r.Error != nil || !strings.Contains(string(r.Result), `"status":"cancelled"`) {
		t.Errorf("agent.cancel: %s %+v", r.Result, r.Error)
	}
	select {
	case ev := <-events:
		if !strings.Contains(ev, "event: summit\ndata: {\"v\":1,\"seq\":1,") || !strings.Contains(ev, "Starting a long look.") ||
			!strings.Contains(ev, "event: end\ndata: {\"status\":\"cancelled\"") {
			t.Errorf("the event stream:\n%s", ev)
		}
	case <-time.After(15 * time.Second):
		t.Error("the event stream did not end with the run")
	}

	// The token never reaches a log or a recording.
	if strings.Contains(s.stderr.String(), token) {
		t.Error("the token is in the server's log")
	}
	filepath.WalkDir(filepath.Join(s.ws, ".summit", "sessions"), func(p string, d os.DirEntry, err error) error {
		if b, _ := os.ReadFile(p); err == nil && !d.IsDir() && bytes.Contains(b, []byte(token)) {
			t.Errorf("the token is in %s", p)
		}
		return nil
	})
	// Without a token the server refuses any address but loopback.
	code, _, errOut := summit(t, "serve", "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(errOut, "SUMMIT_SERVE_TOKEN") {
		t.Errorf("serve on 0.0.0.0 without a token: %d %s", code, errOut)
	}
}

// Two summit processes: one serves, the other delegates to it (/delegate, /converge). The
// remote run's transcript is in both recordings; its confidence and verification take part
// in the convergence; a killed server fails the client's subagent with a clear error.
func TestServeRemoteDelegation(t *testing.T) {
	bin := buildBinary(t)
	const token = "remote-token-not-secret-2b81"
	s := startServe(t, bin, token)
	t.Setenv("RESEARCH_TOKEN", token)
	ws := runWorkspace(t)
	os.MkdirAll(filepath.Join(ws, ".summit"), 0o755)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("remotes:\n  researcher: {url: \""+s.url+"\", agent: deep-researcher, token_env: RESEARCH_TOKEN}\n"), 0o644)
	trustWS(t, ws)
	code, out, errOut, rec := runScript(t, ws, `/delegate "status of quantum computing in 2026" --agent-type researcher
/delegate "status of fusion power" --agent-type researcher --inputs '{"depth": 3}'
/wait sa-1 sa-2
/converge sa-1 sa-2 --strategy consensus --conflict-resolution prefer_higher_confidence
/wait cv-1
`)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, errOut, out)
	}
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _ := record.LoadFile(rec, record.ReadOptions{})
	sa1 := st.Subagent("sa-1")
	if sa1 == nil || sa1.Outcome != session.OutcomeSuccess || sa1.Capsule == nil || sa1.Capsule.Confidence == nil || *sa1.Capsule.Confidence != 0.85 ||
		sa1.Capsule.Verification == nil || sa1.Capsule.Verification.Status != "passed" || sa1.Isolation != nil {
		t.Fatalf("sa-1: %+v", sa1)
	}
	// The remote runs' verdict and confidences decided the convergence: their results differ
	// (one verified, "verdict passed"), and prefer_higher_confidence took the 0.85 one.
	var detected *session.ConflictDetected
	var resolved *session.ConflictResolved
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.ConflictDetected:
			detected = &d
		case session.ConflictResolved:
			resolved = &d
		}
	}
	if detected == nil || len(detected.Sides) != 2 || !strings.Contains(fmt.Sprint(detected.Sides[0].Value), "verdict passed") ||
		resolved == nil || resolved.Method != "prefer_higher_confidence" || resolved.Choice != "sa-1" {
		t.Errorf("convergence: %+v / %+v", detected, resolved)
	}
	// Every transcript event of the remote run is in both recordings.
	local := transcriptOf(evs, "sa-1")
	var remoteRec string
	for _, te := range local {
		if strings.HasPrefix(te, "message:the server records the run in ") {
			remoteRec = strings.TrimPrefix(te, "message:the server records the run in ")
		}
	}
	revs, _, err := record.ReadAll(remoteRec, record.ReadOptions{})
	if err != nil {
		t.Fatalf("the server's recording %q: %v", remoteRec, err)
	}
	remote := transcriptOf(revs, "sa-1")
	if len(remote) < 4 {
		t.Fatalf("the server's transcript: %v", remote)
	}
	for _, te := range remote {
		if strings.HasPrefix(te, "subagent_start:") {
			continue
		}
		if !containsStr(local, te) {
			t.Errorf("the client's recording lacks the remote %q", te)
		}
	}

	// --inputs reached the server with the task: the run's task holds depth 3.
	var fusionRec string
	for _, te := range transcriptOf(evs, "sa-2") {
		if r, ok := strings.CutPrefix(te, "message:the server records the run in "); ok {
			fusionRec = r
		}
	}
	if fst, _, err := record.LoadFile(fusionRec, record.ReadOptions{}); err != nil || fst.Subagent("sa-1") == nil ||
		!strings.Contains(fst.Subagent("sa-1").Task, `"depth": 3`) || !strings.HasPrefix(fst.Subagent("sa-1").Task, "status of fusion power") {
		t.Errorf("the structured inputs on the server: %v", err)
	}

	// summit doctor reaches the remote agent; with a wrong token it says what the server said.
	if code, out, _ := summit(t, "doctor", "--workspace", ws); !strings.Contains(out, "✓ remotes.researcher: deep-researcher at "+s.url) {
		t.Errorf("doctor (exit %d):\n%s", code, out)
	}
	t.Setenv("RESEARCH_TOKEN", "wrong")
	if code, out, _ := summit(t, "doctor", "--workspace", ws); code == 0 || !strings.Contains(out, "✗ remotes.researcher:") || !strings.Contains(out, "wrong") {
		t.Errorf("doctor with a wrong token (exit %d):\n%s", code, out)
	}
	t.Setenv("RESEARCH_TOKEN", token)

	// The subagent's timeout cancels the remote run too (agent.cancel).
	start := time.Now()
	code, _, errOut, rec = runScript(t, ws, "/delegate \"a glacial survey\" --agent-type researcher --timeout 3\n/wait sa-1\n")
	st, _, _ = record.LoadFile(rec, record.ReadOptions{})
	sa := st.Subagent("sa-1")
	if took := time.Since(start); code != 1 || sa == nil || sa.Outcome != session.OutcomeTimeout || took > 20*time.Second {
		t.Errorf("a remote run past its timeout: exit %d after %v, %+v\n%s", code, took, sa, errOut)
	}
	if !containsStr(transcriptOf(mustEvents(t, rec), "sa-1"), "message:the remote run ended: cancelled") {
		t.Errorf("the remote run was not cancelled: %v", transcriptOf(mustEvents(t, rec), "sa-1"))
	}

	// A killed server: the client's subagent fails with a clear error, and does not hang.
	s2 := startServe(t, bin, token)
	os.WriteFile(filepath.Join(ws, ".summit", "config.yaml"), []byte("remotes:\n  researcher: {url: \""+s2.url+"\", agent: deep-researcher, token_env: RESEARCH_TOKEN}\n"), 0o644)
	trustWS(t, ws)
	go func() {
		time.Sleep(2 * time.Second)
		s2.cmd.Process.Kill()
	}()
	start = time.Now()
	code, _, errOut, rec = runScript(t, ws, "/delegate \"a glacial survey\" --agent-type researcher\n/wait sa-1\n")
	if took := time.Since(start); took > 40*time.Second {
		t.Errorf("the client took %v after the server died", took)
	}
	st, _, _ = record.LoadFile(rec, record.ReadOptions{})
	if sa := st.Subagent("sa-1"); code != 1 || sa == nil || sa.Outcome != session.OutcomeFailure || !strings.Contains(sa.LastError, s2.url) {
		t.Errorf("after the server died: exit %d, %+v\n%s", code, sa, errOut)
	}
}

// transcriptOf lists a subagent's transcript events as kind:text (tool calls by tool).
func transcriptOf(evs []session.Event, id string) []string {
	var out []string
	for _, e := range evs {
		if te, ok := e.Data.(session.TranscriptEvent); ok && e.SubagentID == id {
			text := te.Text
			if te.EventType == session.TranscriptToolCall || te.EventType == session.TranscriptToolResult {
				text = te.Tool
			}
			out = append(out, te.EventType+":"+text)
		}
	}
	return out
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// With a certificate and its key the server speaks HTTPS only.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	s := startServe(t, bin, "tls-token-not-secret", "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("served at %s", s.url)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodPost, s.url+"/rpc", strings.NewReader(`{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"deep-researcher"},"id":1}`))
	req.Header.Set("Authorization", "Bearer tls-token-not-secret")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"apiVersion":"summit.io/v1"`) {
		t.Errorf("over TLS: HTTP %d %s", resp.StatusCode, b)
	}
	if resp, err := http.Post(strings.Replace(s.url, "https", "http", 1)+"/rpc", "application/json", strings.NewReader("{}")); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "jsonrpc") {
			t.Errorf("plain HTTP was answered: %s", b)
		}
	}
}

func mustEvents(t *testing.T, rec string) []session.Event {
	t.Helper()
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
