// Package netnstest gives a test its own small network on this machine: a Linux bridge in the
// root network namespace with an address of its own, and network namespaces, each joined to the
// bridge by a veth pair, with an address on the bridge's /24 and its own loopback up. A process
// started in a namespace reaches the bridge's address (where the test starts a server) and the
// other namespaces, never the root namespace's loopback; taking the veth's host side down
// partitions it, as a pulled cable does (no reset: its TCP connections stall until the link
// is back or they time out).
//
// Everything is made with iproute2 (`ip`), as root, and is the test's alone: the names carry
// the test process's pid (bridge "smb<pid>x<n>", namespaces "smt<pid>x<n>y<i>", veths
// "smh…"/"smp…"), each network gets its own /24 out of 10.231.0.0/16, and t.Cleanup kills
// every process in a namespace and deletes the namespaces and the bridge. A test process that
// was killed before its cleanup leaves them behind: the next New deletes whatever a dead pid
// left (Sweep). Processes started here are bounded twice: by their context (killed at its
// end) and by coreutils' timeout around them, so one outlives a killed test by its limit at
// most.
//
// The addresses are on the bridge alone: nothing is routed, forwarded or NATed, so no traffic
// leaves the machine.
package netnstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Require returns why this machine cannot make networks (not root, no ip or timeout, no
// network namespaces), or nil.
func Require() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root")
	}
	for _, p := range []string{"ip", "timeout"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s is missing (apt-get install iproute2 coreutils): %v", p, err)
		}
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("this kernel has no network namespaces: %v", err)
	}
	return nil
}

// Net is one test's bridge and the namespaces on it.
type Net struct {
	t      testing.TB
	id     string // "<pid>x<n>"
	Bridge string
	prefix string // the /24's first three octets
	mu     sync.Mutex
	nss    []*NS
}

// NS is a network namespace on a Net.
type NS struct {
	net  *Net
	Name string // the namespace, for ip netns exec
	Host string // the veth's end in the root namespace (on the bridge)
	Peer string // its end in the namespace
	IP   string
}

var (
	counter  int
	counterM sync.Mutex
)

// New makes a bridge with the first address of a free /24 and removes it (and every namespace
// added to it) when the test ends. It fails the test when the machine cannot (Require).
func New(t testing.TB) *Net {
	t.Helper()
	if err := Require(); err != nil {
		t.Fatal(err)
	}
	Sweep()
	counterM.Lock()
	defer counterM.Unlock()
	counter++
	id := fmt.Sprintf("%dx%d", os.Getpid(), counter)
	n := &Net{t: t, id: id, Bridge: "smb" + id}
	// A /24 no route on this machine covers yet, chosen under the lock (parallel tests of
	// this process) starting from the pid (other test processes).
	start := (os.Getpid()*7 + counter*13) % 254
	for i := range 254 {
		p := fmt.Sprintf("10.231.%d", (start+i)%254+1)
		if out, err := exec.Command("ip", "-4", "route", "show", "match", p+".1").Output(); err == nil && !strings.Contains(string(out), "10.231.") {
			n.prefix = p
			break
		}
	}
	if n.prefix == "" {
		t.Fatal("netnstest: no free /24 in 10.231.0.0/16")
	}
	t.Cleanup(n.close)
	for _, args := range [][]string{
		{"link", "add", n.Bridge, "type", "bridge"},
		{"addr", "add", n.HostIP() + "/24", "dev", n.Bridge},
		{"link", "set", n.Bridge, "up"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// HostIP is the bridge's address: where a server in the root namespace listens for the
// namespaces.
func (n *Net) HostIP() string { return n.prefix + ".1" }

// Add makes a namespace with its loopback up and a veth to the bridge, addressed .2, .3, ….
func (n *Net) Add() *NS {
	n.t.Helper()
	n.mu.Lock()
	i := len(n.nss) + 1
	s := &NS{net: n, Name: fmt.Sprintf("smt%sy%d", n.id, i), Host: fmt.Sprintf("smh%sy%d", n.id, i), Peer: fmt.Sprintf("smp%sy%d", n.id, i), IP: fmt.Sprintf("%s.%d", n.prefix, i+1)}
	n.nss = append(n.nss, s)
	n.mu.Unlock()
	for _, args := range [][]string{
		{"netns", "add", s.Name},
		{"link", "add", s.Host, "type", "veth", "peer", "name", s.Peer, "netns", s.Name},
		{"link", "set", s.Host, "master", n.Bridge},
		{"link", "set", s.Host, "up"},
		{"-n", s.Name, "link", "set", "lo", "up"},
		{"-n", s.Name, "addr", "add", s.IP + "/24", "dev", s.Peer},
		{"-n", s.Name, "link", "set", s.Peer, "up"},
	} {
		if err := ip(args...); err != nil {
			n.t.Fatal(err)
		}
	}
	return s
}

// Partition takes the namespace's link down (its host end): packets to and from it are
// dropped, no connection is reset.
func (s *NS) Partition() error { return ip("link", "set", s.Host, "down") }

// Heal brings the link back.
func (s *NS) Heal() error { return ip("link", "set", s.Host, "up") }

// Proc is a process started by Start: the command runs under timeout, under ip netns exec.
type Proc struct {
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start runs name with args in the namespace, for at most limit (then TERM, and KILL 5 s
// later) and at most until ctx ends (then KILL). The command is in a process group of its
// own; the namespace's cleanup kills whatever is left in it. stdout and stderr may be nil.
func (s *NS) Start(ctx context.Context, limit time.Duration, stdout, stderr io.Writer, name string, args ...string) (*Proc, error) {
	return start(ctx, s, limit, stdout, stderr, name, args...)
}

// StartHost is Start in the root namespace (a server the namespaces reach at HostIP). Its
// process group is killed when ctx ends or at the test's cleanup.
func (n *Net) StartHost(ctx context.Context, limit time.Duration, stdout, stderr io.Writer, name string, args ...string) (*Proc, error) {
	return StartHost(n.t, ctx, limit, stdout, stderr, name, args...)
}

// StartHost starts a bounded process in the root namespace for a test that needs no bridge
// (loopback only); t's cleanup kills its process group.
func StartHost(t testing.TB, ctx context.Context, limit time.Duration, stdout, stderr io.Writer, name string, args ...string) (*Proc, error) {
	p, err := start(ctx, nil, limit, stdout, stderr, name, args...)
	if err == nil {
		t.Cleanup(func() {
			p.killGroup()
			<-p.done
		})
	}
	return p, err
}

func start(ctx context.Context, s *NS, limit time.Duration, stdout, stderr io.Writer, name string, args ...string) (*Proc, error) {
	secs := strconv.FormatFloat(limit.Seconds(), 'f', 3, 64)
	argv := append([]string{"timeout", "-k", "5", secs, name}, args...)
	if s != nil {
		argv = append([]string{"ip", "netns", "exec", s.Name}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			p.killGroup()
		case <-p.done:
		}
	}()
	return p, nil
}

// Buffer collects a process's output; a test may read it while the process still writes.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *Buffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// String is what was written so far.
func (w *Buffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (p *Proc) killGroup() {
	if p.Cmd.Process != nil {
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Done is closed when the process (the timeout wrapper, so the command) has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Wait waits for the end and returns it (exec's error: an *exec.ExitError for a non-zero exit
// or a signal).
func (p *Proc) Wait() error {
	<-p.done
	return p.err
}

// PID is the command's own pid (timeout's child), which Kill9 kills; it waits up to 5 s for
// timeout to have started it (forked and exec'd).
func (p *Proc) PID() (int, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		pid := p.Cmd.Process.Pid
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if f := strings.Fields(string(b)); err == nil && len(f) == 1 {
			// Right after the fork the child is still timeout: wait for its exec.
			wrapper, err1 := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			child, err2 := os.Readlink(fmt.Sprintf("/proc/%s/exe", f[0]))
			if err1 == nil && err2 == nil && child != wrapper {
				return strconv.Atoi(f[0])
			}
		}
		select {
		case <-p.done:
			return 0, errors.New("the process has ended")
		default:
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("timeout (pid %d) started no command within 5 s", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill9 sends SIGKILL to the command itself, as `kill -9 PID` would: what it started is left
// as the kernel leaves it (its children are reparented; the group dies at cleanup).
func (p *Proc) Kill9() error {
	pid, err := p.PID()
	if err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}

// Stop sends SIGTERM to the command (the timeout wrapper passes it on), and SIGKILL to its
// group if it has not ended within grace.
func (p *Proc) Stop(grace time.Duration) error {
	syscall.Kill(p.Cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.killGroup()
		<-p.done
	}
	return p.err
}

// close kills every process in the namespaces, then deletes them and the bridge.
func (n *Net) close() {
	n.mu.Lock()
	nss := n.nss
	n.mu.Unlock()
	for _, s := range nss {
		killNetns(s.Name)
		if err := ip("netns", "del", s.Name); err != nil {
			n.t.Errorf("netnstest cleanup: %v", err)
		}
	}
	if err := ip("link", "del", n.Bridge); err != nil {
		n.t.Errorf("netnstest cleanup: %v", err)
	}
}

// killNetns kills every process whose network namespace is name: the ones started there, and
// what they started in new sessions or groups (which a group kill does not reach).
func killNetns(name string) {
	for range 10 {
		out, err := exec.Command("ip", "netns", "pids", name).Output()
		pids := strings.Fields(string(out))
		if err != nil || len(pids) == 0 {
			return
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var leftover = regexp.MustCompile(`^sm[bt](\d+)x\d+(y\d+)?$`)

// Sweep deletes the namespaces and bridges that a test process which no longer runs left
// behind (it was killed before its cleanup); those of running processes are theirs.
func Sweep() {
	dead := func(name string) bool {
		m := leftover.FindStringSubmatch(name)
		if m == nil {
			return false
		}
		_, err := os.Stat(filepath.Join("/proc", m[1]))
		return errors.Is(err, os.ErrNotExist)
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) > 0 && dead(f[0]) {
				killNetns(f[0])
				ip("netns", "del", f[0])
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link", "show", "type", "bridge").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			// "12: smb123x1: <BROADCAST,…"
			if f := strings.Fields(l); len(f) > 1 && dead(strings.TrimSuffix(f[1], ":")) {
				ip("link", "del", strings.TrimSuffix(f[1], ":"))
			}
		}
	}
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
