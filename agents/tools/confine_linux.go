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
		fmt.Fprintln(os.Stderr, "summit: bad confinement request")
		os.Exit(126)
	}
	err = landlock.V5.BestEffort().RestrictPaths(append([]landlock.Rule{landlock.RODirs(c.RODirs...).IgnoreIfMissing(),
		landlock.ROFiles(c.ROFiles...).IgnoreIfMissing()}, writeRules(c.RW)...)...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "summit: cannot confine %s to its workspace: %v\n", os.Args[1], err)
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
// read and write below RW (directories, or single files); nothing else.
type confinement struct {
	RODirs, ROFiles, RW []string
}

// writeRules grants reading and writing below each directory of rw, and reading and writing
// (in place: no rename over it, which needs its directory) each file of rw; a path that does
// not exist is left out. It runs in the process being confined, just before the restriction,
// so a file or directory is taken as it is then.
//
// Below the directories, a file may also be renamed or linked from one directory to another
// (Landlock's refer right, from ABI 2 on: without it even a rename between two directories of
// the worktree fails with EXDEV, which tools that stage a file and move it into place do not
// expect), and a device opened there takes ioctls (Gemini CLI runs its commands on a
// pseudo-terminal from /dev/ptmx: without them, "forkpty(3) failed"). Both stay within the
// writable directories, which all have the same rights.
func writeRules(rw []string) []landlock.Rule {
	var dirs, files []string
	for _, p := range rw {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	d := landlock.RWDirs(dirs...).WithIoctlDev()
	if abi() >= 2 {
		// Asked of a kernel of ABI 1, refer would make BestEffort give up confining at all.
		d = d.WithRefer()
	}
	// IgnoreIfMissing still: a path may go between the Stat and the rule.
	return []landlock.Rule{d.IgnoreIfMissing(), landlock.RWFiles(files...).IgnoreIfMissing()}
}

// abi is the kernel's Landlock ABI version (0: none).
func abi() int {
	v, _, errno := syscall.Syscall(444 /* landlock_create_ruleset */, 0, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */)
	if errno != 0 {
		return 0
	}
	return int(v)
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
func ConfinementAvailable() bool { return abi() >= 1 }

// ConfinedCommand is name args run confined as the sandbox's shell is, for a long-running
// process of a subagent's own (an external ACP agent): with Options.ConfineWrites it, and
// every process it starts, may write only in the root, /dev, the build caches the shell may
// fill, and the directories and files of rw (env's TMPDIR is the caller's to list), and read
// everywhere but below Options.Hidden; the restriction cannot be lifted by anything it runs.
// Without ConfineWrites, or on a kernel without Landlock (ConfinementAvailable), it runs
// unconfined. The command has no Dir, stdio nor SysProcAttr: the caller sets them, and its
// process is name's (summit's image becomes name in place: same pid, same process group).
//
// A path of rw that is, holds or lies below a hidden path is refused (an error): a write
// rule cannot be narrowed, and what is hidden stays out of reach whoever asks.
func (s *Sandbox) ConfinedCommand(rw, env []string, name string, args ...string) (*exec.Cmd, error) {
	if !s.o.ConfineWrites {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		return cmd, nil
	}
	for _, p := range rw {
		for _, h := range s.o.Hidden {
			if a, b := realPath(p), realPath(h); a == b || within(a, b) || within(b, a) {
				return nil, fmt.Errorf("%s may not be writable: it reaches %s, which a subagent may not", p, h)
			}
		}
	}
	return confinedCommand(append(s.writable(), rw...), s.o.Hidden, env, name, args...)
}

// realPath is p without symlinks as far as it exists (what Landlock's rule would name), clean.
func realPath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if dir := filepath.Dir(p); dir != p {
		return filepath.Join(realPath(dir), filepath.Base(p))
	}
	return p
}

// within reports whether p lies strictly below dir (both clean).
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// ConfinesWrites reports whether the sandbox confines what its shell and ConfinedCommand run
// (Options.ConfineWrites); whether the kernel can is ConfinementAvailable.
func (s *Sandbox) ConfinesWrites() bool { return s.o.ConfineWrites }
