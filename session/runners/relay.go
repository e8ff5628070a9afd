package runners

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/summit-dev/summit/agents/provider"
)

// ModelRelay is a job's loopback model endpoint on the runner for an ACP agent (the package
// doc's Models): the agent is pointed at it by its provider's base-URL variables, and every
// model request it makes there goes to the session through the job's ModelTransport, as a
// native subagent's does. It listens on 127.0.0.1 on a port of its own, for one job, and its
// URL holds a random path segment: another local process that finds the port gets a 404
// without it. The agent's placeholder key is ignored (ModelTransport drops credential headers
// and the relay a "key" query parameter); the session adds its own.
type ModelRelay struct {
	// URL is the agent's base URL: http://127.0.0.1:PORT/TOKEN (OpenAI's takes /v1 after it).
	URL string
	// Kinds are the APIs relayed (provider kinds), those of the job's route.
	Kinds []string

	srv   *http.Server
	token string
	rt    http.RoundTripper
	route map[string]string // kind → the route's provider of that kind
	slots chan struct{}
}

// RelayKey is the key variable value an ACP agent on a relay is given: not a secret (the
// relay ignores it); some agents refuse to start without one.
const RelayKey = "summit-relay-no-key"

// StartModelRelay serves route's providers through rt (the job's ModelTransport) until Close.
func StartModelRelay(rt http.RoundTripper, route *provider.JobRoute) (*ModelRelay, error) {
	if rt == nil || route == nil || len(route.Providers) == 0 {
		return nil, errors.New("model relay: the job has no model route")
	}
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	r := &ModelRelay{token: hex.EncodeToString(tok[:]), rt: rt, route: map[string]string{},
		slots: make(chan struct{}, maxModelCalls)}
	for name, p := range route.Providers {
		if _, dup := r.route[p.Kind]; !dup {
			r.route[p.Kind] = name
			r.Kinds = append(r.Kinds, p.Kind)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("model relay: %w", err)
	}
	r.URL = "http://" + ln.Addr().String() + "/" + r.token
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// Close stops the relay and ends the calls in flight (their requests' contexts end, which
// cancels them at the session).
func (r *ModelRelay) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		return r.srv.Close()
	}
	return nil
}

// relayError answers as the APIs do, with a JSON error the agents' SDKs show.
func relayError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, "{\"error\":{\"type\":\"summit_relay\",\"message\":%q}}\n", msg)
}

// ServeHTTP relays one model request: POST, under the token, on a model endpoint of a relayed
// API; at most maxModelCalls at once (the session's limit), the rest wait for a slot.
func (r *ModelRelay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rest, ok := strings.CutPrefix(req.URL.Path, "/"+r.token+"/")
	if !ok {
		relayError(w, http.StatusNotFound, "not found")
		return
	}
	kind, path, ok := provider.RelayPath(rest)
	name := r.route[kind]
	switch {
	case req.Method != http.MethodPost:
		relayError(w, http.StatusMethodNotAllowed, req.Method+" is not a model call: only POST is relayed")
		return
	case !ok:
		relayError(w, http.StatusNotFound, "/"+rest+" is not a model endpoint summit relays")
		return
	case name == "":
		relayError(w, http.StatusNotFound, "the session serves no "+kind+" provider to this job")
		return
	}
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-req.Context().Done():
		return
	}
	u, query := provider.SessionBase(name)+path, req.URL.RawQuery
	if q := req.URL.Query(); q.Has("key") {
		q.Del("key") // Gemini's key parameter: the placeholder, never forwarded
		query = q.Encode()
	}
	if query != "" {
		u += "?" + query
	}
	out, err := http.NewRequestWithContext(req.Context(), http.MethodPost, u, req.Body)
	if err != nil {
		relayError(w, http.StatusBadRequest, err.Error())
		return
	}
	out.Header = req.Header.Clone()
	res, err := r.rt.RoundTrip(out)
	if err != nil {
		relayError(w, http.StatusBadGateway, err.Error())
		return
	}
	defer res.Body.Close()
	for k, v := range CleanHeader(res.Header) {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	// Streamed responses (server-sent events) reach the agent as they come.
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				// Broken off: the agent sees a truncated body and retries as for a network error.
				panic(http.ErrAbortHandler)
			}
			return
		}
	}
}
