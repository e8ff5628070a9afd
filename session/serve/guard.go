package serve

import (
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/summit-dev/summit/protocols"
)

// CodeForbidden answers a request whose Host or Origin is not the server's (HTTP 403).
const CodeForbidden = -32003

// guard checks what every request must satisfy before any handler sees it: a Host that names
// the served address (or a name the user allowed), no foreign Origin, the JSON media type for
// a POST, and a deadline for any request's body. It exists because a server on
// loopback is reachable from every web page the user opens: a page can POST cross-site (a
// text/plain "simple request" needs no CORS preflight) and can rebind its own DNS name to
// 127.0.0.1 (then its requests carry Host: its-name). A browser always sends the Host it
// resolved and, cross-origin, an Origin; a CLI client sends no Origin at all.
type guard struct {
	hosts    hostSet
	body     time.Duration
	maxBody  int64
	next     http.Handler
	disabled bool // no Addr: the Host and Origin checks are off (see Options.Addr)
}

// hostSet is what a Host (or an Origin's host) may be.
type hostSet struct {
	ip       net.IP // the listening IP (unspecified: every local address; nil: a name)
	loopback bool   // the server listens on loopback: "localhost" is the served address too
	port     string
	allow    map[string]bool // --allow-host names (lower case), with or without a port
}

// CheckAllowHost reports what is wrong with an --allow-host value (nil when it is usable): a
// bare host name or IP, optionally with :port.
func CheckAllowHost(name string) error {
	if name == "" || strings.ContainsAny(name, "/@?#* \t") {
		return fmt.Errorf("%q: want a host name such as summit.example.com (optionally :PORT), not a URL or pattern", name)
	}
	if _, err := url.Parse("http://" + name); err != nil {
		return fmt.Errorf("%q: %v", name, err)
	}
	return nil
}

func newHostSet(addr string, allow []string) (hostSet, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return hostSet{}, fmt.Errorf("Addr %q: %w", addr, err)
	}
	hs := hostSet{port: port, allow: map[string]bool{}}
	switch ip := net.ParseIP(host); {
	case strings.EqualFold(host, "localhost"):
		hs.ip, hs.loopback = net.IPv4(127, 0, 0, 1), true
	case ip == nil:
		// A name: it is the served address by itself.
		hs.allow[strings.ToLower(host)] = true
	case host == "":
		hs.ip = net.IPv4zero
	default:
		hs.ip, hs.loopback = ip, ip.IsLoopback()
	}
	for _, a := range allow {
		if err := CheckAllowHost(a); err != nil {
			return hostSet{}, err
		}
		hs.allow[strings.ToLower(strings.TrimSuffix(a, "."))] = true
	}
	return hs, nil
}

// ok reports whether hostport (a Host header, or an Origin's host) names this server.
// An IP literal is never the product of DNS rebinding, so on a wildcard address any IP the
// request reached us by is accepted; a name must be localhost (on loopback) or allowed.
func (h hostSet) ok(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h.allow[host] || (port != "" && h.allow[host+":"+port]) {
		return true
	}
	if port != "" && port != h.port {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		switch {
		case h.ip == nil:
			return false
		case h.ip.IsUnspecified():
			return true
		case h.loopback:
			return ip.IsLoopback()
		}
		return ip.Equal(h.ip)
	}
	return host == "localhost" && h.loopback
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A body must arrive within the limit from now: a client that sends its headers and then
	// trickles or stalls its body holds a connection and a goroutine otherwise. Set first, so
	// that it bounds net/http's draining of the body of a request refused below too. readBody
	// lifts it once the body is in, so that a long agent.invoke is not cut by it (net/http's
	// background read would cancel the request's context).
	if g.body > 0 && r.ContentLength != 0 {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(g.body))
	}
	if !g.disabled {
		if !g.hosts.ok(r.Host) {
			writeRPC(w, http.StatusForbidden, nil, nil, &protocols.RPCError{Code: CodeForbidden,
				Message: fmt.Sprintf("Host %q is not this server's address (summit serve --allow-host NAME accepts another name)", r.Host)})
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.sameOrigin(o) {
			writeRPC(w, http.StatusForbidden, nil, nil, &protocols.RPCError{Code: CodeForbidden,
				Message: fmt.Sprintf("Origin %q is foreign: cross-site requests are refused", o)})
			return
		}
	}
	if r.Method == http.MethodPost {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeRPC(w, http.StatusUnsupportedMediaType, nil, nil, &protocols.RPCError{Code: protocols.CodeInvalidRequest,
				Message: fmt.Sprintf("Content-Type %q: send application/json", r.Header.Get("Content-Type"))})
			return
		}
		if r.ContentLength > g.maxBody {
			writeRPC(w, http.StatusRequestEntityTooLarge, nil, nil, &protocols.RPCError{Code: protocols.CodeInvalidRequest,
				Message: fmt.Sprintf("the request body is over %d bytes (the server's limit)", g.maxBody)})
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// sameOrigin: an Origin is ours when it is http(s) and its host names this server.
func (g *guard) sameOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false // "null" (a sandboxed page, a file://) included
	}
	return g.hosts.ok(u.Host)
}

// readBody reads a request body of at most max+1 bytes within the guard's deadline, then
// lifts the deadline. A body that does not arrive in time is an os.ErrDeadlineExceeded.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err == nil {
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
	return body, err
}
