package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// Transient answers (503 and 429 with Retry-After, a dropped connection) are retried with the
// wait they ask for; a JSON-RPC error is not; the token goes in every request.
func TestCallRetries(t *testing.T) {
	var n atomic.Int32
	var waits []time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("request %d without the token", n.Load())
		}
		io.Copy(io.Discard, r.Body)
		switch n.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "3")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32002,"message":"busy"},"id":null}`)
		case 3:
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close() // the connection drops
		default:
			fmt.Fprint(w, `{"jsonrpc":"2.0","result":{"status":"running","runId":"r1"},"id":1}`)
		}
	}))
	defer srv.Close()
	c := &Client{Endpoint: srv.URL + "/rpc", Token: "tok", Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	r, err := c.Status(context.Background(), "r1")
	if err != nil || r.Status != "running" || n.Load() != 4 {
		t.Fatalf("status %+v, %v after %d tries", r, err, n.Load())
	}
	if len(waits) != 3 || waits[0] != 3*time.Second || waits[1] != time.Second || waits[2] <= 0 || waits[2] > time.Second {
		t.Errorf("waits %v: want 3s (Retry-After), 1s, then a short backoff", waits)
	}

	// A JSON-RPC error is the answer: no retry.
	n.Store(0)
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"unknown runId \"x\"","data":{"path":"runId"}},"id":1}`)
	}))
	defer srv2.Close()
	c2 := &Client{Endpoint: srv2.URL}
	_, err = c2.Status(context.Background(), "x")
	var re *protocols.RPCError
	if !errors.As(err, &re) || re.Code != -32602 || n.Load() != 1 {
		t.Errorf("a JSON-RPC error: %v after %d tries", err, n.Load())
	}
	// An answer that is not JSON-RPC says what it was.
	srv3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>proxy error</html>", http.StatusForbidden)
	}))
	defer srv3.Close()
	_, err = (&Client{Endpoint: srv3.URL}).Status(context.Background(), "x")
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 403 || !strings.Contains(he.Body, "proxy error") {
		t.Errorf("a non-JSON-RPC answer: %v", err)
	}
}

// Follow delivers a run's events in order and the final result; a resume asks for the events
// after the last one received; a stream that ends early is ErrStreamEnded.
func TestFollow(t *testing.T) {
	line := func(seq int, typ, data string) string {
		return fmt.Sprintf(`{"v":1,"seq":%d,"ts":"2026-11-23T10:00:00.000000Z","session_id":"s-1","type":"%s","subagent_id":"sa-1","data":%s}`, seq, typ, data)
	}
	var afters []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		afters = append(afters, r.URL.Query().Get("after"))
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: summit\ndata: %s\n\n", line(5, "TranscriptEvent", `{"event_type":"token","text":"hello"}`))
		if r.URL.Query().Get("after") == "" {
			return // the stream breaks before the end
		}
		fmt.Fprintf(w, "event: summit\ndata: %s\n\n", line(6, "TranscriptEvent", `{"event_type":"token","text":" world"}`))
		fmt.Fprint(w, "event: end\ndata: {\"status\":\"completed\",\"output\":{\"summary\":\"done\"}}\n\n")
	}))
	defer srv.Close()
	c := &Client{Endpoint: srv.URL}
	var got []string
	var last uint64
	fn := func(e session.Event) error {
		last = e.Seq
		got = append(got, e.Data.(session.TranscriptEvent).Text)
		return nil
	}
	_, err := c.Follow(context.Background(), "r1", 0, fn)
	if !errors.Is(err, ErrStreamEnded) || last != 5 {
		t.Fatalf("a broken stream: %v, last %d", err, last)
	}
	res, err := c.Follow(context.Background(), "r1", last, fn)
	if err != nil || res.Status != "completed" || res.Output["summary"] != "done" {
		t.Fatalf("resumed: %+v %v", res, err)
	}
	if strings.Join(afters, ",") != ",5" || strings.Join(got, "|") != "hello|hello| world" {
		t.Errorf("afters %v, events %q", afters, got)
	}
}
