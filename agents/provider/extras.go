package provider

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
)

// clientFor returns the HTTP client a provider's requests go through: base (nil: a default
// client), plus the provider's configured headers, query parameters, body fields and key
// header when it has any. With none it returns base as it is.
func clientFor(c ProviderConfig, getenv func(string) string, base *http.Client) *http.Client {
	if c.via != nil && base == nil {
		base = &http.Client{Transport: c.via}
	}
	if len(c.Headers) == 0 && len(c.Query) == 0 && len(c.Body) == 0 && c.KeyHeader == "" {
		return base
	}
	if base == nil {
		base = &http.Client{}
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	cl := *base
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	cl.Transport = &extraTransport{base: rt, c: c, getenv: getenv}
	return &cl
}

// HTTPClient is clientFor for a configured (or built-in) provider: what `summit doctor` uses
// so its model-list requests carry the same headers and query as a session's.
func (r *Router) HTTPClient(name string, base *http.Client) *http.Client {
	return clientFor(r.config(name), r.getenv, base)
}

// extraTransport adds a provider's configured extras to every request (see ProviderConfig).
type extraTransport struct {
	base   http.RoundTripper
	c      ProviderConfig
	getenv func(string) string
}

func (t *extraTransport) expand(v string) string { return os.Expand(v, t.getenv) }

func (t *extraTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.c.Headers {
		req.Header.Set(k, t.expand(v))
	}
	if len(t.c.Query) > 0 {
		q := req.URL.Query()
		for k, v := range t.c.Query {
			q.Set(k, t.expand(v))
		}
		req.URL.RawQuery = q.Encode()
	}
	if t.c.KeyHeader != "" {
		// Move the key from the header the SDK put it in to the one the server reads.
		key := ""
		for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
			if v := req.Header.Get(h); v != "" {
				key = strings.TrimPrefix(v, "Bearer ")
				req.Header.Del(h)
			}
		}
		if key != "" && key != "none" {
			req.Header.Set(t.c.KeyHeader, key)
		}
	}
	if len(t.c.Body) > 0 && req.Body != nil && req.Method == http.MethodPost {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) == nil && m != nil {
			for k, v := range t.c.Body {
				if enc, err := json.Marshal(v); err == nil {
					m[k] = enc
				}
			}
			if merged, err := json.Marshal(m); err == nil {
				data = merged
			}
		}
		req.Body = io.NopCloser(bytes.NewReader(data))
		req.ContentLength = int64(len(data))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	return t.base.RoundTrip(req)
}
