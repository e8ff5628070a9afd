package serve

import (
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// LimitListener bounds the connections ln hands out: at most total at once (further ones wait
// in the kernel's backlog, golang.org/x/net/netutil), and at most perClient from one client
// IP: a connection over that is closed as soon as it is accepted, so that one client holding
// many connections (slow bodies, idle keep-alives) cannot starve the others. 0 is no limit.
// log, when set, hears of refusals, at most once a second.
func LimitListener(ln net.Listener, total, perClient int, log func(string)) net.Listener {
	if total > 0 {
		ln = netutil.LimitListener(ln, total)
	}
	if perClient <= 0 {
		return ln
	}
	return &clientLimit{Listener: ln, max: perClient, open: map[string]int{}, log: log}
}

type clientLimit struct {
	net.Listener
	max     int
	log     func(string)
	mu      sync.Mutex
	open    map[string]int // connections open, by client IP
	refused int            // refused since the last log line
	logged  time.Time
}

func (l *clientLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := c.RemoteAddr().String()
		if host, _, err := net.SplitHostPort(ip); err == nil {
			ip = host
		}
		l.mu.Lock()
		if l.open[ip] >= l.max {
			l.refused++
			var line string
			if l.log != nil && time.Since(l.logged) >= time.Second {
				line = fmt.Sprintf("refused %d connection(s) from %s: %d open, the limit per client (--max-conns-per-client)", l.refused, ip, l.open[ip])
				l.refused, l.logged = 0, time.Now()
			}
			l.mu.Unlock()
			c.Close()
			if line != "" {
				l.log(line)
			}
			continue
		}
		l.open[ip]++
		l.mu.Unlock()
		return &clientConn{Conn: c, l: l, ip: ip}, nil
	}
}

type clientConn struct {
	net.Conn
	l    *clientLimit
	ip   string
	once sync.Once
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.l.open[c.ip]--; c.l.open[c.ip] <= 0 {
			delete(c.l.open, c.ip)
		}
		c.l.mu.Unlock()
	})
	return err
}
