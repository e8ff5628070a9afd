//go:build linux

package ttytest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Run runs the test named helper of this test binary (os.Args[0] -test.run=^helper$) with
// env added to the environment, in a new session whose controlling terminal is a new
// pseudo-terminal, and returns its combined output. It fails t when the helper fails or did
// not report a controlling terminal (Self), and skips when the system has no /dev/ptmx.
func Run(t testing.TB, helper string, env ...string) string {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no /dev/ptmx")
	}
	defer m.Close()
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go io.Copy(io.Discard, m) // what the helper writes to the terminal never blocks it
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "helper tty_nr=") || strings.Contains(string(out), "helper tty_nr=0\n") {
		t.Fatalf("the helper has no controlling terminal: the test proves nothing\n%s", out)
	}
	return string(out)
}

// Self prints the helper's own "helper tty_nr=N" line, which Run checks.
func Self(t testing.TB) {
	t.Helper()
	fmt.Printf("helper tty_nr=%d\n", TTYNr(t, os.Getpid()))
}

// TTYNr is the tty_nr of process pid (/proc/PID/stat, field 7): 0 when it has no
// controlling terminal.
func TTYNr(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: count after it.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 5 {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	n, err := strconv.Atoi(f[4])
	if err != nil {
		t.Fatalf("/proc/%d/stat: %v", pid, err)
	}
	return n
}
