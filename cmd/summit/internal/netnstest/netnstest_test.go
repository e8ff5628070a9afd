package netnstest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is also the plain process run in the namespaces: with helperEnv set it does
// what its arguments say and exits.
const helperEnv = "NETNSTEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helper(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helper: "dial ADDR MSG" writes MSG to ADDR; "listen ADDR" prints the first connection's
// bytes; "stream ADDR" writes a numbered line every 50 ms until the connection fails (exit 3);
// "sleep" sleeps; "setsid-sleep" starts a sleep in a session of its own and sleeps.
func helper(args []string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	switch args[0] {
	case "dial":
		c, err := net.DialTimeout("tcp", args[1], 2*time.Second)
		if err != nil {
			return fail(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, args[2]); err != nil {
			return fail(err)
		}
	case "listen":
		ln, err := net.Listen("tcp", args[1])
		if err != nil {
			return fail(err)
		}
		fmt.Println("listening")
		c, err := ln.Accept()
		if err != nil {
			return fail(err)
		}
		b, _ := io.ReadAll(c)
		fmt.Printf("got %s\n", b)
	case "stream":
		c, err := net.DialTimeout("tcp", args[1], 2*time.Second)
		if err != nil {
			return fail(err)
		}
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(c, "%d\n", i); err != nil {
				return fail(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	case "sleep":
		time.Sleep(time.Hour)
	case "setsid-sleep":
		cmd := exec.Command("sleep", "3600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return fail(err)
		}
		fmt.Println(cmd.Process.Pid)
		time.Sleep(time.Hour)
	}
	return 0
}

func require(t *testing.T) {
	if err := Require(); err != nil {
		if os.Getenv("SUMMIT_E2E") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// run starts the helper in s (nil: the root namespace) and returns its end and output.
func run(t *testing.T, n *Net, s *NS, limit time.Duration, args ...string) (*Proc, *Buffer, *Buffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	os.Setenv(helperEnv, "1")
	defer os.Unsetenv(helperEnv)
	var out, errOut Buffer
	var p *Proc
	if s == nil {
		p, err = n.StartHost(t.Context(), limit, &out, &errOut, self, args...)
	} else {
		p, err = s.Start(t.Context(), limit, &out, &errOut, self, args...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, &out, &errOut
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

// accept returns what the first connection to ln sends, or fails after 10 s.
func accept(t *testing.T, ln net.Listener) string {
	t.Helper()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, _ := io.ReadAll(c)
	return string(b)
}

// TestReach: a namespace reaches the bridge's address and another namespace, and not the root
// namespace's loopback (the server on 127.0.0.1 there is not what its 127.0.0.1 is).
func TestReach(t *testing.T) {
	require(t)
	n := New(t)
	a, b := n.Add(), n.Add()
	if a.IP == b.IP || a.IP == n.HostIP() {
		t.Fatalf("addresses %s %s %s", n.HostIP(), a.IP, b.IP)
	}
	ln, err := net.Listen("tcp", n.HostIP()+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p, _, errOut := run(t, n, a, 10*time.Second, "dial", ln.Addr().String(), "from-a")
	if got := accept(t, ln); got != "from-a" {
		t.Errorf("the bridge got %q, want from-a", got)
	}
	if err := p.Wait(); err != nil {
		t.Errorf("dial: %v %s", err, errOut)
	}

	lo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Close()
	p, _, errOut = run(t, n, a, 10*time.Second, "dial", lo.Addr().String(), "leak")
	if code := exitCode(p.Wait()); code != 3 || !strings.Contains(errOut.String(), "connection refused") {
		t.Errorf("a namespace dialled the root namespace's loopback: exit %d %s", code, errOut)
	}

	l, out, _ := run(t, n, b, 10*time.Second, "listen", b.IP+":7000")
	waitOutput(t, out, "listening")
	d, _, errOut := run(t, n, a, 10*time.Second, "dial", b.IP+":7000", "a-to-b")
	if err := d.Wait(); err != nil {
		t.Errorf("a to b: %v %s", err, errOut)
	}
	if err := l.Wait(); err != nil || !strings.Contains(out.String(), "got a-to-b") {
		t.Errorf("b got %q (%v)", out, err)
	}
}

func waitOutput(t *testing.T, b *Buffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(b.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %q", want, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPartition: while partitioned a namespace cannot connect, and a connection it had stalls
// without being reset; once healed, the same connection carries on.
func TestPartition(t *testing.T) {
	require(t)
	n := New(t)
	a := n.Add()
	ln, err := net.Listen("tcp", n.HostIP()+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stream, _, streamErr := run(t, n, a, 60*time.Second, "stream", ln.Addr().String())
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lines := make(chan int, 1000)
	go func() {
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			i, _ := strconv.Atoi(sc.Text())
			lines <- i
		}
		close(lines)
	}()
	next := func(within time.Duration) (int, bool) {
		select {
		case i, ok := <-lines:
			return i, ok
		case <-time.After(within):
			return -1, false
		}
	}
	if _, ok := next(5 * time.Second); !ok {
		t.Fatal("no line before the partition")
	}
	if err := a.Partition(); err != nil {
		t.Fatal(err)
	}
	// Drain what was in flight, then nothing arrives.
	for {
		if _, ok := next(time.Second); !ok {
			break
		}
	}
	p, _, errOut := run(t, n, a, 10*time.Second, "dial", ln.Addr().String(), "x")
	if code := exitCode(p.Wait()); code != 3 {
		t.Errorf("a partitioned namespace connected: exit %d %s", code, errOut)
	}
	if err := a.Heal(); err != nil {
		t.Fatal(err)
	}
	// The same connection resumes (TCP retransmits what the partition dropped), in order.
	last := -1
	for range 5 {
		i, ok := next(10 * time.Second)
		if !ok {
			t.Fatalf("the connection did not resume after the heal: %s", streamErr)
		}
		if last >= 0 && i != last+1 {
			t.Errorf("line %d after %d", i, last)
		}
		last = i
	}
	select {
	case <-stream.Done():
		t.Errorf("the streaming process ended: %v %s", stream.Wait(), streamErr)
	default:
	}
}

// TestBounded: a process that would sleep for an hour ends at its limit by itself, and
// Kill9 kills the command, not the wrapper, as kill -9 of its pid would.
func TestBounded(t *testing.T) {
	require(t)
	n := New(t)
	a := n.Add()
	t0 := time.Now()
	p, _, _ := run(t, n, a, time.Second, "sleep")
	err := p.Wait()
	if code := exitCode(err); code != 124 || time.Since(t0) > 10*time.Second {
		t.Errorf("the bounded sleep ended with %v (exit %d) after %v; want timeout's 124 after about 1 s", err, code, time.Since(t0))
	}

	p, _, _ = run(t, n, a, time.Minute, "sleep")
	pid, err := p.PID()
	if err != nil {
		t.Fatal(err)
	}
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); !strings.HasPrefix(string(comm), "netnstest") {
		t.Errorf("PID is %d (%s), not the helper", pid, comm)
	}
	if err := p.Kill9(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
		// timeout passes its command's death by a signal on by raising it on itself.
		var ee *exec.ExitError
		if err := p.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("after kill -9, the process ended with %v, want killed", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("kill -9 did not end the process")
	}
}

// TestCleanup: when the test ends, its namespaces and bridge are gone and so is every process
// in them, even one in a session of its own (out of the group's reach).
func TestCleanup(t *testing.T) {
	require(t)
	var ns, bridge string
	var orphan int
	t.Run("net", func(t *testing.T) {
		n := New(t)
		a := n.Add()
		ns, bridge = a.Name, n.Bridge
		_, out, _ := run(t, n, a, time.Minute, "setsid-sleep")
		waitOutput(t, out, "\n")
		orphan, _ = strconv.Atoi(strings.TrimSpace(out.String()))
		if syscall.Kill(orphan, 0) != nil {
			t.Fatalf("the sleep %d is not running", orphan)
		}
	})
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), ns) {
		t.Errorf("namespace %s is left: %s", ns, out)
	}
	if exec.Command("ip", "link", "show", bridge).Run() == nil {
		t.Errorf("bridge %s is left", bridge)
	}
	// Killed; reaped by init (or still a zombie for an instant).
	time.Sleep(200 * time.Millisecond)
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", orphan)); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Errorf("process %d in the namespace outlived it: %s", orphan, st)
	}
}

// TestSweep: leftovers of a test process that no longer runs are deleted; those of a running
// one are not.
func TestSweep(t *testing.T) {
	require(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	deadNS, deadBr := fmt.Sprintf("smt%dx1y1", dead), fmt.Sprintf("smb%dx1", dead)
	liveNS := fmt.Sprintf("smt%dx999y1", os.Getpid())
	for _, args := range [][]string{{"netns", "add", deadNS}, {"link", "add", deadBr, "type", "bridge"}, {"netns", "add", liveNS}} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ip("netns", "del", liveNS)
		ip("netns", "del", deadNS)
		ip("link", "del", deadBr)
	})
	Sweep()
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), deadNS) || exec.Command("ip", "link", "show", deadBr).Run() == nil {
		t.Errorf("a dead process's namespace or bridge is left: %s", out)
	}
	if !strings.Contains(string(out), liveNS) {
		t.Errorf("a running process's namespace was swept")
	}
}
