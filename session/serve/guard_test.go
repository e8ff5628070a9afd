package serve

import (
	"net"
	"os"
	"testing"
	"time"
)

// What a Host (or an Origin's host) may be, for each kind of listening address.
func TestHostSet(t *testing.T) {
	for _, c := range []struct {
		addr  string
		allow []string
		yes   []string
		no    []string
	}{
		{"127.0.0.1:8787", nil,
			[]string{"127.0.0.1:8787", "127.0.0.1", "localhost:8787", "LOCALHOST.:8787", "[::1]:8787", "127.0.0.2:8787"},
			[]string{"evil.example:8787", "evil.example", "127.0.0.1:8788", "10.0.0.1:8787", "localhost:1", ""}},
		{"localhost:8787", []string{"summit.test", "proxy.test:443"},
			[]string{"localhost:8787", "127.0.0.1:8787", "summit.test:9", "Summit.Test", "proxy.test:443"},
			[]string{"proxy.test:444", "proxy.test", "evil.example:8787"}},
		{"0.0.0.0:8787", nil,
			[]string{"10.1.2.3:8787", "[fe80::1]:8787", "10.1.2.3"},
			[]string{"localhost:8787", "myhost:8787", "10.1.2.3:80"}},
		{"10.1.2.3:8787", nil,
			[]string{"10.1.2.3:8787"},
			[]string{"10.1.2.4:8787", "localhost:8787", "127.0.0.1:8787"}},
		{"summit.internal:8787", nil,
			[]string{"summit.internal:8787", "summit.internal"},
			[]string{"10.1.2.3:8787", "localhost:8787"}},
	} {
		hs, err := newHostSet(c.addr, c.allow)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range c.yes {
			if !hs.ok(h) {
				t.Errorf("serving %s (allow %v): Host %q refused", c.addr, c.allow, h)
			}
		}
		for _, h := range c.no {
			if hs.ok(h) {
				t.Errorf("serving %s (allow %v): Host %q accepted", c.addr, c.allow, h)
			}
		}
	}
	for _, bad := range []string{"", "http://x", "x/y", "*.example", "a b"} {
		if CheckAllowHost(bad) == nil {
			t.Errorf("--allow-host %q accepted", bad)
		}
	}
}

// One client address gets at most perClient connections; a closed one frees its place.
func TestLimitListenerPerClient(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logged := make(chan string, 10)
	ln := LimitListener(inner, 10, 2, func(l string) { logged <- l })
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := dial(), dial()
	sa, sb := <-accepted, <-accepted
	third := dial()
	third.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := third.Read(make([]byte, 1)); n != 0 || err == nil || os.IsTimeout(err) {
		t.Errorf("a third connection from one address: read %d, %v; want it closed", n, err)
	}
	select {
	case c := <-accepted:
		t.Errorf("a third connection was handed out: %v", c.RemoteAddr())
	default:
	}
	sa.Close()
	a.Close()
	fourth := dial()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Error("a closed connection did not free its place")
	}
	fourth.Close()
	b.Close()
	sb.Close()
	third.Close()
	if l := <-logged; l != "refused 1 connection(s) from 127.0.0.1: 2 open, the limit per client (--max-conns-per-client)" {
		t.Errorf("logged %q", l)
	}
}
