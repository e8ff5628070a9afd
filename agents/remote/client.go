// Package remote is the client side of the Summit Agent ABI over HTTP (seed 002; the server is
// session/serve): an agent that lives elsewhere, reached by its endpoint. Calls are JSON-RPC
// 2.0 POSTs to <endpoint>/rpc with the bearer token; a run's events come from
// GET <endpoint>/runs/<runId>/events (server-sent events, `event: summit` with one recorded
// event per data line, then `event: end` with the final result), resumed after the last seq
// received (?after=SEQ) when the stream breaks.
//
// Transient failures are retried: connection errors, HTTP 429, 502, 503 and 504, waiting what
// Retry-After says (seconds or an HTTP date, at most MaxWait) or a backoff. A JSON-RPC error is
// an *protocols.RPCError and never retried.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// Client reaches one endpoint.
type Client struct {
	Endpoint string // http(s)://host:port[/prefix]; a trailing /rpc is dropped
	Token    string // the bearer token ("" sends none)
	HTTP     *http.Client
	Retries  int           // transient failures retried per call (default 4)
	MaxWait  time.Duration // the longest wait between tries (default 30 s)
	// Sleep waits between tries (default: a timer, ending with ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	id    atomic.Int64
}

// HTTPError is an answer that is not JSON-RPC: its status and the start of its body.
type HTTPError struct {
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, http.StatusText(e.Status), e.Body)
}

func (c *Client) base() string {
	return strings.TrimSuffix(strings.TrimSuffix(c.Endpoint, "/"), "/rpc")
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// transient reports whether a try may be repeated, and how long to wait first ("" header:
// the backoff).
func transient(resp *http.Response, err error) (bool, string) {
	if err != nil {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded), ""
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, resp.Header.Get("Retry-After")
	}
	return false, ""
}

// wait is how long to wait before try n (1-based) given a Retry-After header.
func (c *Client) wait(n int, retryAfter string) time.Duration {
	maxWait := c.MaxWait
	if maxWait <= 0 {
		maxWait = 30 * time.Second
	}
	d := time.Duration(200<<min(n-1, 8)) * time.Millisecond
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(retryAfter); err == nil {
		d = time.Until(t)
	}
	return min(max(d, 0), maxWait)
}

// do sends one request with the retries; the response is open when err is nil.
func (c *Client) do(ctx context.Context, build func() (*http.Request, error)) (*http.Response, error) {
	retries := c.Retries
	if retries <= 0 {
		retries = 4
	}
	for n := 1; ; n++ {
		req, err := build()
		if err != nil {
			return nil, err
		}
		if c.Token != "" {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
		resp, err := c.http().Do(req)
		again, after := transient(resp, err)
		if !again || n > retries {
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.base(), err)
			}
			return resp, nil
		}
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		if err := c.sleep(ctx, c.wait(n, after)); err != nil {
			return nil, err
		}
	}
}

// Call runs one JSON-RPC method; out gets the result.
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	req, err := protocols.NewRequest(method, params, c.id.Add(1))
	if err != nil {
		return err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	resp, err := c.do(ctx, func() (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base()+"/rpc", bytes.NewReader(body))
		if err == nil {
			r.Header.Set("Content-Type", "application/json")
		}
		return r, err
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", c.base(), err)
	}
	var rr protocols.Response
	if err := json.Unmarshal(raw, &rr); err != nil || rr.JSONRPC != "2.0" {
		return &HTTPError{Status: resp.StatusCode, Body: strings.TrimSpace(string(raw[:min(len(raw), 300)]))}
	}
	if rr.Error != nil {
		return rr.Error
	}
	if out != nil {
		if err := json.Unmarshal(rr.Result, out); err != nil {
			return fmt.Errorf("%s: %s result: %w", c.base(), method, err)
		}
	}
	return nil
}

// Schema is agent.schema: the agent's manifest.
func (c *Client) Schema(ctx context.Context, agentID string) (protocols.Manifest, error) {
	var m protocols.Manifest
	err := c.Call(ctx, protocols.MethodSchema, protocols.SchemaParams{AgentID: agentID}, &m)
	if err == nil {
		err = m.Check()
	}
	return m, err
}

// Invoke is agent.invoke.
func (c *Client) Invoke(ctx context.Context, p protocols.InvokeParams) (protocols.InvokeResult, error) {
	var r protocols.InvokeResult
	return r, c.Call(ctx, protocols.MethodInvoke, p, &r)
}

// Status is agent.status.
func (c *Client) Status(ctx context.Context, runID string) (protocols.InvokeResult, error) {
	var r protocols.InvokeResult
	return r, c.Call(ctx, protocols.MethodStatus, protocols.StatusParams{RunID: runID}, &r)
}

// Cancel is agent.cancel.
func (c *Client) Cancel(ctx context.Context, runID string) (protocols.InvokeResult, error) {
	var r protocols.InvokeResult
	return r, c.Call(ctx, protocols.MethodCancel, protocols.StatusParams{RunID: runID}, &r)
}

// ErrStreamEnded is returned by Follow when the stream ended without its end event.
var ErrStreamEnded = errors.New("the event stream ended before the run did")

// Follow calls fn with each event of run runID recorded after seq `after`, in order, and
// returns the final result at the end event. A broken stream is an error (ErrStreamEnded or
// the transport's); the caller resumes with the last seq it got.
func (c *Client) Follow(ctx context.Context, runID string, after uint64, fn func(session.Event) error) (protocols.InvokeResult, error) {
	var final protocols.InvokeResult
	resp, err := c.do(ctx, func() (*http.Request, error) {
		u := c.base() + "/runs/" + url.PathEscape(runID) + "/events"
		if after > 0 {
			u += "?after=" + strconv.FormatUint(after, 10)
		}
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err == nil {
			r.Header.Set("Accept", "text/event-stream")
		}
		return r, err
	})
	if err != nil {
		return final, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var rr protocols.Response
		if json.Unmarshal(raw, &rr) == nil && rr.Error != nil {
			return final, rr.Error
		}
		return final, &HTTPError{Status: resp.StatusCode, Body: strings.TrimSpace(string(raw))}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), record.MaxEventLine+1024)
	kind := ""
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			kind = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			data := line[len("data: "):]
			switch kind {
			case "end":
				if err := json.Unmarshal(data, &final); err != nil {
					return final, fmt.Errorf("%s: the run's end: %w", c.base(), err)
				}
				return final, nil
			case "summit":
				ev, err := record.DecodeLine(data)
				if err != nil {
					return final, fmt.Errorf("%s: an event of run %s: %w", c.base(), runID, err)
				}
				if err := fn(ev); err != nil {
					return final, err
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return final, fmt.Errorf("%s: %w", c.base(), err)
	}
	return final, ErrStreamEnded
}
