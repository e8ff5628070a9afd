package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

const schemaBody = `{"jsonrpc":"2.0","method":"agent.schema","params":{"agentId":"deep-researcher"},"id":1}`

// rawPost sends schemaBody to a server with the given Host, Origin and Content-Type headers
// ("" leaves one out), over a connection from the local address from ("" any), and returns
// the HTTP status and body.
func rawPost(t *testing.T, url, from, host, origin, ctype, token string) (int, string) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	req, _ := http.NewRequest(http.MethodPost, url+"/rpc", strings.NewReader(schemaBody))
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST (Host %q, Origin %q, Content-Type %q): %v", host, origin, ctype, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeGuard is the cross-site case of issue 26 against a real `summit serve`: a server on
// loopback without a token starts only with --no-token, and its banner says that is unsafe;
// a web page's request (a foreign Host after DNS rebinding, a foreign Origin, a text/plain
// "simple request") is refused before it reaches an agent, while curl's (no Origin) and the
// names --allow-host lists are served.
func TestServeGuard(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	// No token, no --no-token: refused on loopback too (the old server started, and then
	// this call would only end at its timeout).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--workspace", runWorkspace(t))
	cmd.Env = append(os.Environ(), serveTokenEnv+"=")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); ctx.Err() != nil || code != 2 || !strings.Contains(string(out), "--no-token") || !strings.Contains(string(out), serveTokenEnv) {
		t.Errorf("serve on loopback without a token: exit %d (%v), want 2 naming --no-token and %s:\n%s", code, err, serveTokenEnv, out)
	}
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0", "--no-token"}, "", "only on a loopback address"},
		{[]string{"--addr", "127.0.0.1:0", "--no-token"}, "a-token", "both given"},
		{[]string{"--addr", "127.0.0.1:0", "--allow-host", "http://evil.example/"}, "a-token", "not a URL"},
		{[]string{"--addr", "127.0.0.1:0", "--read-body-timeout", "0s"}, "a-token", "must be positive"},
	} {
		cmd := exec.CommandContext(ctx, bin, append([]string{"serve"}, c.args...)...)
		cmd.Env = append(os.Environ(), serveTokenEnv+"="+c.env)
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: exit %d, want 2 and %q:\n%s", c.args, cmd.ProcessState.ExitCode(), c.want, out)
		}
	}

	s := startServe(t, bin, "", "--no-token", "--allow-host", "summit.test", "--allow-host", "proxy.test:443")
	if banner := s.stderr.String(); !strings.Contains(banner, "UNSAFE") || !strings.Contains(banner, "--no-token") {
		t.Errorf("the banner of a token-less server does not say it is unsafe:\n%s", banner)
	}
	port := s.url[strings.LastIndex(s.url, ":")+1:]
	const js = "application/json"
	for _, c := range []struct {
		name, host, origin, ctype string
		status                    int
		msg                       string
	}{
		{"curl", "", "", js, 200, `"apiVersion":"summit.io/v1"`},
		{"curl by name", "localhost:" + port, "", "application/json; charset=utf-8", 200, `"apiVersion"`},
		{"same origin", "", "http://127.0.0.1:" + port, js, 200, `"apiVersion"`},
		{"allowed name", "summit.test:" + port, "", js, 200, `"apiVersion"`},
		{"allowed name and origin", "summit.test", "https://summit.test", js, 200, `"apiVersion"`},
		{"allowed host:port", "proxy.test:443", "", js, 200, `"apiVersion"`},
		{"DNS rebinding", "evil.example:" + port, "", js, 403, `Host \"evil.example:` + port},
		{"rebinding with its origin", "evil.example:" + port, "http://evil.example:" + port, js, 403, "-32003"},
		{"another port", "127.0.0.1:1", "", js, 403, "is not this server's address"},
		{"allowed name, wrong port", "proxy.test:444", "", js, 403, "-32003"},
		{"cross-site", "", "https://evil.example", js, 403, `Origin \"https://evil.example\" is foreign`},
		{"null origin", "", "null", js, 403, "is foreign"},
		{"cross-site simple request", "", "https://evil.example", "text/plain", 403, "-32003"},
		{"text/plain", "", "", "text/plain", 415, `Content-Type \"text/plain\": send application/json`},
		{"form", "", "", "application/x-www-form-urlencoded", 415, "-32600"},
		{"no content type", "", "", "", 415, "send application/json"},
	} {
		status, body := rawPost(t, s.url, "", c.host, c.origin, c.ctype, "")
		if status != c.status || !strings.Contains(body, c.msg) {
			t.Errorf("%s (Host %q, Origin %q, %q): HTTP %d %s; want %d with %s", c.name, c.host, c.origin, c.ctype, status, body, c.status, c.msg)
		}
	}
	// Nothing refused reached an agent: no run was started, so no recording exists.
	if entries, _ := os.ReadDir(s.ws + "/.summit/sessions"); len(entries) != 0 {
		t.Errorf("refused requests left %d recordings", len(entries))
	}
}

// slowClient opens a connection, sends a POST's headers (with a Content-Length it never
// fulfils) and then either trickles the body a byte every 300 ms or stalls; it returns how
// long the server took to answer or close the connection, and the answer's status line
// ("closed" when it closed without one, "held" when it held the connection to max).
func slowClient(addr, token string, trickle bool, max time.Duration) (time.Duration, string) {
	return slowConn(addr, fmt.Sprintf("POST /rpc HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: 4000\r\n\r\n{", addr, token), trickle, max)
}

// slowConn sends first, then trickles a byte every 300 ms (or stalls) until the server
// answers or closes (see slowClient).
func slowConn(addr, first string, trickle bool, max time.Duration) (time.Duration, string) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return time.Since(start), "dial: " + err.Error()
	}
	defer c.Close()
	io.WriteString(c, first)
	buf := make([]byte, 512)
	var got []byte
	for time.Since(start) < max {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			if trickle {
				c.Write([]byte(" "))
			}
			continue
		}
		if err != nil || n > 0 {
			// answered (then closed) or closed
			for err == nil {
				c.SetReadDeadline(time.Now().Add(time.Second))
				n, err = c.Read(buf)
				got = append(got, buf[:n]...)
			}
			line, _, _ := strings.Cut(string(got), "\r\n")
			if line == "" {
				line = "closed"
			}
			return time.Since(start), line
		}
	}
	return max, "held"
}

// TestServeSlowClients is the slow-body case of issue 26 against a real `summit serve`: 100
// clients that send their headers and then trickle or stall their body are all answered 408
// within --read-body-timeout (plus scheduling slack), while a normal request, sent while they
// hang on, is answered at once. One address holding more connections than
// --max-conns-per-client has the extra ones closed at once, and another address is served.
func TestServeSlowClients(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	const token = "slow-token-not-secret-41c7"
	const bodyTimeout = 2 * time.Second
	const slack = 4 * time.Second // a loaded 2-core machine
	s := startServe(t, bin, token, "--read-body-timeout", bodyTimeout.String(), "--read-header-timeout", bodyTimeout.String(), "--max-conns-per-client", "200")
	addr := strings.TrimPrefix(s.url, "http://")
	type result struct {
		took time.Duration
		line string
	}
	results := make([]result, 100)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			took, line := slowClient(addr, token, i%2 == 0, 15*time.Second)
			results[i] = result{took, line}
		})
	}
	// And 10 whose headers never end.
	headers := make([]result, 10)
	for i := range headers {
		wg.Go(func() {
			took, line := slowConn(addr, "POST /rpc HTTP/1.1\r\nHost: "+addr+"\r\nX-Slow: ", i%2 == 0, 15*time.Second)
			headers[i] = result{took, line}
		})
	}
	time.Sleep(500 * time.Millisecond) // the slow ones are in
	t0 := time.Now()
	status, body := rawPost(t, s.url, "", "", "", "application/json", token)
	if took := time.Since(t0); status != 200 || !strings.Contains(body, `"apiVersion"`) || took > 2*time.Second {
		t.Errorf("a normal request while 100 slow ones hang on: HTTP %d in %v: %s", status, took, body)
	}
	wg.Wait()
	var worst time.Duration
	lines := map[string]int{}
	for _, r := range results {
		worst = max(worst, r.took)
		lines[r.line]++
	}
	if worst > bodyTimeout+slack || lines["HTTP/1.1 408 Request Timeout"] != len(results) {
		t.Errorf("100 slow bodies with --read-body-timeout %v: the slowest was cut after %v; answers %v", bodyTimeout, worst, lines)
	}
	t.Logf("100 slow bodies: all cut within %v (--read-body-timeout %v): %v", worst.Round(10*time.Millisecond), bodyTimeout, lines)
	for _, r := range headers {
		if r.took > bodyTimeout+slack || r.line == "held" {
			t.Errorf("slow headers with --read-header-timeout %v: %q after %v", bodyTimeout, r.line, r.took)
		}
	}

	// Per client: 5 connections from 127.0.0.1 are held, the 6th is closed at once, and
	// 127.0.0.2 is served meanwhile.
	s2 := startServe(t, bin, token, "--max-conns-per-client", "5", "--read-body-timeout", "10s")
	addr2 := strings.TrimPrefix(s2.url, "http://")
	held := make(chan result, 5)
	for range 5 {
		go func() {
			took, line := slowClient(addr2, token, false, 20*time.Second)
			held <- result{took, line}
		}()
	}
	time.Sleep(time.Second)
	took, line := slowClient(addr2, token, false, 5*time.Second)
	if line != "closed" || took > 3*time.Second {
		t.Errorf("a 6th connection from one address: %q after %v; want closed at once", line, took)
	}
	if status, body := rawPost(t, s2.url, "127.0.0.2", addr2, "", "application/json", token); status != 200 || !strings.Contains(body, `"apiVersion"`) {
		t.Errorf("another client address while one is at its limit: HTTP %d %s", status, body)
	}
	for range 5 {
		if r := <-held; r.line != "HTTP/1.1 408 Request Timeout" {
			t.Errorf("a held connection: %q after %v", r.line, r.took)
		}
	}
	if !strings.Contains(s2.stderr.String(), "refused 1 connection(s) from 127.0.0.1: 5 open") {
		t.Errorf("the refusal is not logged:\n%s", s2.stderr.String())
	}
}
