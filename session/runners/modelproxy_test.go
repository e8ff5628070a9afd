package runners

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func modelClient(t *testing.T, url string, job, signer string) *http.Client {
	return &http.Client{Transport: &ModelTransport{NC: dial(t, url), Job: job, Signer: signer, Wait: -1}}
}

// A model call over NATS: the request (3 MiB, so it travels in chunks) reaches the session
// without its credentials, and the response (5 MiB) streams back whole and in order.
func TestModelCallThroughSession(t *testing.T) {
	url := startNATS(t)
	key := newKey(t)
	c, err := NewClient(context.Background(), dial(t, url), key)
	if err != nil {
		t.Fatal(err)
	}
	reqBody := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
	resBody := bytes.Repeat([]byte("data: {\"x\":1}\n\n"), 5<<16)
	var got ModelCall
	stop, err := c.ServeModels("JOB1", func(ctx context.Context, call ModelCall) (*http.Response, error) {
		got = call
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(resBody))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	req, _ := http.NewRequest(http.MethodPost, "http://summit-session.invalid/laptop/v1/messages?beta=true", bytes.NewReader(reqBody))
	req.Header.Set("Authorization", "Bearer sk-runner")
	req.Header.Set("X-Api-Key", "sk-runner")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	res, err := modelClient(t, url, "JOB1", pub(t, key)).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || !bytes.Equal(body, resBody) {
		t.Fatalf("response %d %v: %d bytes (want %d), err %v", res.StatusCode, res.Header, len(body), len(resBody), err)
	}
	if got.Provider != "laptop" || got.Method != "POST" || got.Path != "v1/messages?beta=true" || !bytes.Equal(got.Body, reqBody) {
		t.Fatalf("the session got %s %s %s with %d bytes", got.Provider, got.Method, got.Path, len(got.Body))
	}
	if got.Header.Get("Authorization") != "" || got.Header.Get("X-Api-Key") != "" || got.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Fatalf("headers at the session: %v", got.Header)
	}
}

// Only the session that signed the job answers: a reply signed by another key is refused; a
// job nobody serves fails at once; a cancelled call is cancelled at the session.
func TestModelCallRefusalsAndCancel(t *testing.T) {
	url := startNATS(t)
	key, other := newKey(t), newKey(t)
	impostor, err := NewClient(context.Background(), dial(t, url), other)
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := impostor.ServeModels("JOB2", func(ctx context.Context, call ModelCall) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("forged"))}, nil
	})
	defer stop()
	post := func(ctx context.Context, job string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://summit-session.invalid/p/chat/completions", strings.NewReader("{}"))
		res, err := modelClient(t, url, job, pub(t, key)).Do(req)
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	if err := post(context.Background(), "JOB2"); err == nil || !strings.Contains(err.Error(), "not signed by the job's session") {
		t.Fatalf("a reply signed by another key: %v", err)
	}
	start := time.Now()
	if err := post(context.Background(), "JOB3"); err == nil || !strings.Contains(err.Error(), "serves no model calls") || time.Since(start) > 10*time.Second {
		t.Fatalf("a job nobody serves: %v after %s", err, time.Since(start))
	}

	c, err := NewClient(context.Background(), dial(t, url), key)
	if err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan struct{})
	stop2, _ := c.ServeModels("JOB4", func(ctx context.Context, call ModelCall) (*http.Response, error) {
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})
	defer stop2()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := post(ctx, "JOB4"); err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the session's call was not cancelled")
	}
}

// While no session serves the job (it is down, about to be resumed), a call waits for one up
// to the transport's Wait: a session that comes back within it answers the call; one that does
// not is a clear error after the bound; a cancelled call stops waiting at once.
func TestModelCallWaitsForSession(t *testing.T) {
	url := startNATS(t)
	key := newKey(t)
	c, err := NewClient(context.Background(), dial(t, url), key)
	if err != nil {
		t.Fatal(err)
	}
	post := func(ctx context.Context, job string, wait time.Duration) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://summit-session.invalid/p/chat/completions", strings.NewReader("{}"))
		cl := &http.Client{Transport: &ModelTransport{NC: dial(t, url), Job: job, Signer: pub(t, key), Wait: wait}}
		res, err := cl.Do(req)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return string(b), err
	}
	// The session comes back 1.5 s after the call was made.
	go func() {
		time.Sleep(1500 * time.Millisecond)
		stop, err := c.ServeModels("JOBW", func(ctx context.Context, call ModelCall) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("answered after the outage"))}, nil
		})
		if err == nil {
			t.Cleanup(stop)
		}
	}()
	start := time.Now()
	body, err := post(context.Background(), "JOBW", 20*time.Second)
	if err != nil || body != "answered after the outage" || time.Since(start) < 1500*time.Millisecond {
		t.Fatalf("a call made while the session was down: %q, %v after %s", body, err, time.Since(start))
	}
	// No session ever comes: the call fails once the bound has passed, saying why.
	start = time.Now()
	_, err = post(context.Background(), "JOBX", 2*time.Second)
	if el := time.Since(start); err == nil || !strings.Contains(err.Error(), "serves no model calls for job JOBX") ||
		!strings.Contains(err.Error(), "down for over 2s") || el < 2*time.Second || el > 15*time.Second {
		t.Fatalf("a call nobody serves, waiting 2s: %v after %s", err, el)
	}
	// The job is cancelled while its call waits: the wait ends with it.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err = post(ctx, "JOBY", time.Minute); err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("a cancelled call: %v after %s", err, time.Since(start))
	}
}
