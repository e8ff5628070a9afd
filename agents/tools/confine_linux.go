//go:build linux

package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// confineEnv carries, from summit to its own re-executed image, the path of a file holding
// what a shell command may reach (JSON, see confinement; a file because the read rules can
// outgrow what one environment variable may hold). See confinedCommand.
const confineEnv = "SUMMIT_CONFINE_SPEC"

// init runs before anything else in a summit process (or a test binary of this package). When
// it was started as a confined shell, it restricts itself with Landlock (read and execute
// everywhere, write only in the listed directories), then becomes the shell: the restriction
// holds for the shell and every process it starts, and cannot be lifted by them.
func init() {
	path, ok := os.LookupEnv(confineEnv)
	if !ok {
		return
	}
	os.Unsetenv(confineEnv)
	spec, err := os.ReadFile(path)
	os.Remove(path)
	var c confinement
	if err != nil || json.Unmarshal(spec, &c) != nil || len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "summit: bad confined shell request")
		os.Exit(126)
	}
	err = landlock.V5.BestEffort().RestrictPaths(landlock.RODirs(c.RODirs...).IgnoreIfMissing(),
		landlock.ROFiles(c.ROFiles...).IgnoreIfMissing(), landlock.RWDirs(c.RW...).IgnoreIfMissing())
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

// confinement is what a confined shell may reach: read and execute below RODirs and ROFiles,
// read and write below RW; nothing else.
type confinement struct {
	RODirs, ROFiles, RW []string
}

// readable grants reading everywhere but below each hidden path: the walk from / to a hidden
// path grants every sibling on the way and never the path itself.
func readable(hidden []string) (dirs, files []string) {
	var keep []string
	for _, h := range hidden {
		if real, err := filepath.EvalSymlinks(h); err == nil {
			h = real
		}
		keep = append(keep, filepath.Clean(h))
	}
	if len(keep) == 0 {
		return []string{"/"}, nil
	}
	onPath := func(p string) (on, hiddenHere bool) {
		for _, h := range keep {
			if p == h {
				return true, true
			}
			if strings.HasPrefix(h, strings.TrimSuffix(p, "/")+"/") {
				on = true
			}
		}
		return on, false
	}
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			on, hid := onPath(p)
			switch {
			case hid:
			case on && e.IsDir():
				walk(p)
			case e.IsDir():
				dirs = append(dirs, p)
			default:
				files = append(files, p)
			}
		}
	}
	walk("/")
	return dirs, files
}

// confinedCommand is name args run through summit's own image, which confines itself (Linux
// Landlock; a kernel without Landlock runs it unconfined) before it becomes name: it may write
// only below rw, and read everywhere but below hidden.
func confinedCommand(rw, hidden []string, env []string, name string, args ...string) (*exec.Cmd, error) {
	c := confinement{RW: rw}
	c.RODirs, c.ROFiles = readable(hidden)
	spec, _ := json.Marshal(c)
	f, err := os.CreateTemp("", "summit-confine-*.json")
	if err != nil {
		return nil, err
	}
	_, err = f.Write(spec)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe", append([]string{name}, args...)...)
	cmd.Env = append(env, confineEnv+"="+f.Name())
	return cmd, nil
}

// ConfinementAvailable reports whether this kernel can confine a shell's writes.
func ConfinementAvailable() bool {
	v, _, errno := syscall.Syscall(444 /* landlock_create_ruleset */, 0, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */)
	return errno == 0 && int(v) >= 1
}
