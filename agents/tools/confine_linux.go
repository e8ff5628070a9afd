//go:build linux

package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// confineEnv carries, from summit to its own re-executed image, the directories a shell
// command may write (a JSON list). See confinedCommand.
const confineEnv = "SUMMIT_CONFINE_WRITES"

// init runs before anything else in a summit process (or a test binary of this package). When
// it was started as a confined shell, it restricts itself with Landlock (read and execute
// everywhere, write only in the listed directories), then becomes the shell: the restriction
// holds for the shell and every process it starts, and cannot be lifted by them.
func init() {
	spec, ok := os.LookupEnv(confineEnv)
	if !ok {
		return
	}
	os.Unsetenv(confineEnv)
	var rw []string
	if err := json.Unmarshal([]byte(spec), &rw); err != nil || len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "summit: bad confined shell request")
		os.Exit(126)
	}
	err := landlock.V5.BestEffort().RestrictPaths(landlock.RODirs("/"), landlock.RWDirs(rw...).IgnoreIfMissing())
	if err != nil {
		fmt.Fprintf(os.Stderr, "summit: cannot confine the shell to its workspace: %v\n", err)
		os.Exit(126)
	}
	bin, err := exec.LookPath(os.Args[1])
	if err == nil {
		err = syscall.Exec(bin, os.Args[1:], os.Environ())
	}
	fmt.Fprintf(os.Stderr, "summit: %s: %v\n", os.Args[1], err)
	os.Exit(127)
}

// confinedCommand is name args run through summit's own image, which confines its writes to
// rw before it becomes name (Linux Landlock; a kernel without Landlock runs it unconfined).
func confinedCommand(rw []string, env []string, name string, args ...string) *exec.Cmd {
	spec, _ := json.Marshal(rw)
	cmd := exec.Command("/proc/self/exe", append([]string{name}, args...)...)
	cmd.Env = append(env, confineEnv+"="+string(spec))
	return cmd
}

// ConfinementAvailable reports whether this kernel can confine a shell's writes.
func ConfinementAvailable() bool {
	v, _, errno := syscall.Syscall(444 /* landlock_create_ruleset */, 0, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */)
	return errno == 0 && int(v) >= 1
}
