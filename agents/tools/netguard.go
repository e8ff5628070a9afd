package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
)

// guardedClient is web_fetch's default client: it connects only to public addresses. Each
// connection (the first, and every redirect's) resolves the host itself and refuses loopback,
// private, link-local, multicast and unspecified addresses, then dials the address it checked,
// so a DNS answer cannot change between the check and the connection. Hosts in allow (exact
// names or literal IPs) are exempt: a user's own internal documentation server, say.
func guardedClient(allow []string) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a proxy would connect on our behalf, past the check
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if slices.Contains(allow, strings.ToLower(host)) {
			return d.DialContext(ctx, network, addr)
		}
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			if why := notPublic(ip); why != "" {
				return nil, fmt.Errorf("%s resolves to %s, a %s address: web_fetch reaches public addresses only (allow the host in .summit/config.yaml)", host, ip, why)
			}
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("%s has no address", host)
		}
		return d.DialContext(ctx, network, net.JoinHostPort(ips[0].String(), port))
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// notPublic names the kind of a non-public address, or "" for a public one.
func notPublic(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case netip.MustParsePrefix("100.64.0.0/10").Contains(ip):
		return "shared (carrier-grade NAT)"
	}
	return ""
}

// FetchHost returns the host a web_fetch call (its raw JSON arguments) would fetch, and whether
// the config's web_allow_hosts names it. In plan mode the runtime asks before fetching any other
// host. Arguments that do not name an absolute http(s) URL report ok: the tool refuses them
// without touching the network.
func (s *Sandbox) FetchHost(rawArgs string) (host string, ok bool) {
	var a struct {
		URL string `json:"url"`
	}
	if json.Unmarshal([]byte(rawArgs), &a) != nil {
		return "", true
	}
	u, err := url.Parse(a.URL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", true
	}
	host = strings.ToLower(u.Hostname())
	return host, slices.Contains(s.o.AllowHosts, host)
}

type fetchHostsKey struct{}

// WithFetchHosts bounds the hosts a web_fetch run with ctx may reach, redirects included: the
// approved host and web_allow_hosts, when the runtime asked before fetching (plan mode). A
// redirect elsewhere is refused rather than followed without asking.
func WithFetchHosts(ctx context.Context, hosts ...string) context.Context {
	return context.WithValue(ctx, fetchHostsKey{}, hosts)
}

// checkRedirect follows at most 10 redirects, and within the hosts of WithFetchHosts if set.
func checkRedirect(ctx context.Context) func(*http.Request, []*http.Request) error {
	hosts, bounded := ctx.Value(fetchHostsKey{}).([]string)
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if h := strings.ToLower(req.URL.Hostname()); bounded && !slices.Contains(hosts, h) {
			return fmt.Errorf("redirected to %s, which was not approved (fetch %s itself to ask for it)", h, req.URL.Redacted())
		}
		return nil
	}
}

// AllowedHosts returns a copy of the config's web_allow_hosts.
func (s *Sandbox) AllowedHosts() []string { return slices.Clone(s.o.AllowHosts) }
