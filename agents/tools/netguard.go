package tools

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
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
