//go:build linux

package hooks

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/summit-dev/summit/agents/provider"
)

// A hook has no controlling terminal and cannot open /dev/tty, although summit has one: the
// test runs the hook from a helper process whose controlling terminal is a pty it opened (on
// the old code, Setpgid only, the hook inherited it). A variable the user names passes.
func TestHookHasNoTerminal(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_HOOK_HELPER") != "" {
		return
	}
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no /dev/ptmx")
	}
	defer m.Close()
	n, _ := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go io.Copy(io.Discard, m)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHookHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "SUMMIT_TEST_HOOK_HELPER=1")
	cmd.Stdin = s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "helper tty_nr=") || strings.Contains(string(out), "helper tty_nr=0\n") {
		t.Fatalf("the helper has no controlling terminal: the test proves nothing\n%s", out)
	}
	if !strings.Contains(string(out), "hook tty_nr=0\n") || !strings.Contains(string(out), "no /dev/tty") || !strings.Contains(string(out), "MY_PASSED=yes") {
		t.Errorf("the hook reached the terminal, or lost a named variable:\n%s", out)
	}
}

// TestHookHelper is TestHookHasNoTerminal's helper (it does nothing on its own).
func TestHookHelper(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_HOOK_HELPER") == "" {
		return
	}
	b, _ := os.ReadFile("/proc/self/stat")
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	fmt.Printf("helper tty_nr=%s\n", f[4])
	r := New(Options{Environ: []string{"PATH=" + os.Getenv("PATH"), "MY_PASSED=yes"}, PassEnv: []string{"MY_PASSED"}})
	dir := t.TempDir()
	r.Run(context.Background(), provider.Hook{Command: `read -r _ _ _ _ _ _ tty _ < /proc/self/stat; echo "hook tty_nr=$tty" > out.txt; ` +
		`(exec 3<>/dev/tty && echo "opened /dev/tty") 2>/dev/null >> out.txt || echo "no /dev/tty" >> out.txt; echo "MY_PASSED=$MY_PASSED" >> out.txt`}, dir, nil, false)
	out, _ := os.ReadFile(filepath.Join(dir, "out.txt"))
	fmt.Print(string(out))
}
