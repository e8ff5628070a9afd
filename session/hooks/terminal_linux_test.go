//go:build linux

package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session/ttytest"
)

// A hook has no controlling terminal and cannot open /dev/tty, although summit has one: the
// test runs the hook from a helper process whose controlling terminal is a pty it opened (on
// the old code, Setpgid only, the hook inherited it). A variable the user names passes.
func TestHookHasNoTerminal(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_HOOK_HELPER") != "" {
		return
	}
	out := ttytest.Run(t, "TestHookHelper", "SUMMIT_TEST_HOOK_HELPER=1")
	if !strings.Contains(out, "hook tty_nr=0\n") || !strings.Contains(out, "no /dev/tty") || !strings.Contains(out, "MY_PASSED=yes") {
		t.Errorf("the hook reached the terminal, or lost a named variable:\n%s", out)
	}
}

// TestHookHelper is TestHookHasNoTerminal's helper (it does nothing on its own).
func TestHookHelper(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_HOOK_HELPER") == "" {
		return
	}
	ttytest.Self(t)
	r := New(Options{Environ: []string{"PATH=" + os.Getenv("PATH"), "MY_PASSED=yes"}, PassEnv: []string{"MY_PASSED"}})
	dir := t.TempDir()
	r.Run(context.Background(), provider.Hook{Command: `read -r _ _ _ _ _ _ tty _ < /proc/self/stat; echo "hook tty_nr=$tty" > out.txt; ` +
		`(exec 3<>/dev/tty && echo "opened /dev/tty") 2>/dev/null >> out.txt || echo "no /dev/tty" >> out.txt; echo "MY_PASSED=$MY_PASSED" >> out.txt`}, dir, nil, false)
	out, _ := os.ReadFile(filepath.Join(dir, "out.txt"))
	fmt.Print(string(out))
}
