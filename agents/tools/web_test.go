package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestWebFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<h1>hello docs</h1>")
		case "/missing":
			http.Error(w, "no such page", http.StatusNotFound)
		case "/redirect":
			http.Redirect(w, r, "/doc", http.StatusFound)
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
		case "/big":
			w.Write([]byte(strings.Repeat("a", 5000)))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			fmt.Fprintf(w, "method %s", r.Method)
		}
	}))
	defer srv.Close()
	s, _ := fixture(t, Options{MaxResult: 1000, HTTPClient: srv.Client()})
	for _, c := range []struct {
		name, url string
		wantErr   bool
		want      string
	}{
		{"html as is", srv.URL + "/doc", false, "<h1>hello docs</h1>"},
		{"GET", srv.URL + "/", false, "method GET"},
		{"redirect followed", srv.URL + "/redirect", false, "<h1>hello docs</h1>"},
		{"404", srv.URL + "/missing", true, "web_fetch: " + srv.URL + "/missing returned 404 Not Found\nno such page\n"},
		{"binary", srv.URL + "/image", true, "web_fetch: " + srv.URL + "/image returned binary content (image/png, 16 bytes)"},
		{"big", srv.URL + "/big", false, strings.Repeat("a", 1000) + "\n[... truncated: 5000 bytes total, showing the first 1000]"},
		{"file scheme", "file:///etc/passwd", true, `web_fetch: "file:///etc/passwd" is not an absolute http or https URL`},
		{"ftp", "ftp://example.com/x", true, "is not an absolute http or https URL"},
		{"no scheme", "example.com/x", true, "is not an absolute http or https URL"},
		{"no host", "http:///x", true, "is not an absolute http or https URL"},
		{"bad url", "http://[::1", true, "web_fetch: parse"},
	} {
		r := call(s, "web_fetch", jsonArgs("url", c.url))
		if r.Output != c.want && !(c.wantErr && strings.Contains(r.Output, c.want)) || r.IsError != c.wantErr {
			t.Errorf("%s: got %q (error %v), want %q", c.name, r.Output, r.IsError, c.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	check(t, "cancelled", s.Call(ctx, "web_fetch", jsonArgs("url", srv.URL+"/slow")), true, "context deadline exceeded")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("cancel took %v", took)
	}
}

func TestWebSearch(t *testing.T) {
	s, _ := fixture(t, Options{})
	r := call(s, "web_search", `{"query": "golang"}`)
	if !r.IsError || r.Output != "web_search has no search backend configured" {
		t.Errorf("web_search: %+v", r)
	}
}

// The default client reaches public addresses only: loopback, by name or number, and a
// redirect to it are refused; a host on the allowlist is reached.
func TestWebFetchRefusesPrivateAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "http://localhost:"+r.Host[strings.LastIndex(r.Host, ":")+1:]+"/secret", http.StatusFound)
			return
		}
		w.Write([]byte("internal secret"))
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	s, _ := fixture(t, Options{})
	ctx := context.Background()
	for _, u := range []string{srv.URL + "/secret", "http://localhost:" + port + "/secret", "http://0.0.0.0:" + port + "/secret", "http://[::1]:" + port + "/"} {
		r := s.Call(ctx, "web_fetch", jsonArgs("url", u))
		if !r.IsError || strings.Contains(r.Output, "internal secret") || !strings.Contains(r.Output, "public addresses only") {
			t.Errorf("%s: %+v", u, r)
		}
	}
	allowed, _ := fixture(t, Options{AllowHosts: []string{"127.0.0.1"}})
	if r := allowed.Call(ctx, "web_fetch", jsonArgs("url", srv.URL+"/secret")); r.IsError || r.Output != "internal secret" {
		t.Errorf("allowed host: %+v", r)
	}
	// Allowed for the first hop, a redirect to localhost is a new connection and is checked.
	if r := allowed.Call(ctx, "web_fetch", jsonArgs("url", srv.URL+"/hop")); !r.IsError || strings.Contains(r.Output, "internal secret") {
		t.Errorf("redirect to localhost: %+v", r)
	}
}
