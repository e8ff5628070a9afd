//go:build linux

package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// confineEnv carries, from summit to its own re-executed image, the path of a file holding
// how the command is to be confined (JSON, see confinement; a file because the read rules can
// outgrow what one environment variable may hold). See confinedCommand.
const confineEnv = "SUMMIT_CONFINE_SPEC"

// stageEnv marks the second stage (see init): "ns" when it runs inside the namespaces the
// first stage made, with statusEnv the descriptor it reports the command's end on.
const (
	stageEnv  = "SUMMIT_CONFINE_STAGE"
	statusEnv = "SUMMIT_CONFINE_STATUS"
)

// Simulation hooks for tests (read by summit, the parent, never by a confined process, whose
// environment summit builds): SUMMIT_SIMULATE_NO_LANDLOCK makes summit behave as on a kernel
// without Landlock; SUMMIT_SIMULATE_NO_NAMESPACES as on one that refuses the namespaces
// (unprivileged user namespaces disabled).
const (
	simNoLandlock   = "SUMMIT_SIMULATE_NO_LANDLOCK"
	simNoNamespaces = "SUMMIT_SIMULATE_NO_NAMESPACES"
)

// probeName is the command name that, instead of running a program, makes the confined
// process report what it can reach (ProbeConfinement). It cannot name a real program.
const probeName = "summit:probe"

// init runs before anything else in a summit process (or a test binary of a package that
// imports this one). When it was started as a confined process (confineEnv), it confines
// itself and becomes the command; nothing of summit runs after that. See doc.go, "Process
// confinement", for what each step is for.
//
// Stage 1 (summit's direct child, already in a session of its own): when the spec asks for
// namespaces, it starts stage 2 in new mount, PID and IPC namespaces (and a network
// namespace when the command may not use the network; and a user namespace, which makes the
// others possible without privileges, unless it runs as root), and waits for it, forwarding signals
// and passing its end on; a kernel that refuses the namespaces leaves stage 1 to confine
// itself with Landlock alone. It is a separate process because a multi-threaded process (any
// Go program) cannot unshare a user namespace, and because summit itself is not dumpable
// (PR_SET_DUMPABLE 0, see HardenProcess), which keeps it from writing a direct child's uid
// map; stage 1, freshly exec'd, is.
//
// Stage 2 (pid 1 of the new PID namespace): mounts its own /proc, a /dev holding only the
// harmless devices and a private devpts, brings up its own loopback, then restricts itself
// (Landlock, seccomp) and runs the command as its child, reaping orphans; when the command
// exits, stage 2 exits and the kernel kills whatever is left in the namespace.
func init() {
	ref, ok := os.LookupEnv(confineEnv)
	if !ok {
		return
	}
	// "path#sha256": the file is in the shared temp dir, where a process of the user's (a
	// hook, an MCP server) could rewrite it before it is read; the hash, which came in the
	// environment summit gave this process, makes a rewritten spec refused.
	path, sum, _ := strings.Cut(ref, "#")
	// seccomp and the ambient capabilities are per thread: keep this goroutine on the thread
	// that execs or forks the command.
	runtime.LockOSThread()
	os.Unsetenv(confineEnv)
	inside := os.Getenv(stageEnv) == "ns"
	os.Unsetenv(stageEnv)
	status := os.Getenv(statusEnv)
	os.Unsetenv(statusEnv)
	spec, err := os.ReadFile(path)
	var c confinement
	if err != nil || specSum(spec) != sum || json.Unmarshal(spec, &c) != nil || len(os.Args) < 2 {
		os.Remove(path)
		fmt.Fprintln(os.Stderr, "summit: bad confinement request")
		os.Exit(126)
	}
	if !inside && c.Namespaces && !c.NoNamespaces {
		stage2(ref, path, c) // returns only when the kernel refused the namespaces
	}
	os.Remove(path)
	st := jailState{landlock: !c.NoLandlock && abi() >= 1}
	if inside {
		st = enterNamespaces(c, st)
	}
	if err := restrict(c, st); err != nil {
		fmt.Fprintf(os.Stderr, "summit: cannot confine %s: %v\n", os.Args[1], err)
		os.Exit(126)
	}
	if os.Args[1] == probeName {
		probe(c, st)
		os.Exit(0)
	}
	bin, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "summit: %s: %v\n", os.Args[1], err)
		os.Exit(127)
	}
	if inside {
		reap(bin, os.Args[1:], status)
	}
	err = syscall.Exec(bin, os.Args[1:], os.Environ())
	fmt.Fprintf(os.Stderr, "summit: %s: %v\n", os.Args[1], err)
	os.Exit(127)
}

// confinement is how a process is confined.
//
// Confine false is the terminal guard every process summit starts gets (hooks, MCP servers,
// the shell of a session without isolation): it may read and write all its user may, but no
// terminal device (Dirs and Files, everything but /dev, are granted in full; of /dev only the
// harmless devices), and TIOCSTI is refused.
//
// Confine true is a subagent's jail: read and execute below Dirs and Files (everything but
// the hidden paths and /dev), write below RW only (directories, or single files).
type confinement struct {
	Confine     bool
	Dirs, Files []string
	RW          []string
	// Network lets the process use the network; else it is cut (a network namespace, or
	// Landlock's TCP rules where there is none).
	Network bool
	// Namespaces asks for the user, mount, PID, IPC (and network) namespaces (Confine only).
	Namespaces bool
	// GitDir and GitPrivate: see gitLayout (Confine with namespaces only).
	GitDir, GitPrivate string
	// BuildCache is the private Go build cache (GOCACHE in privateEnv) and SharedBuildCache
	// the user's: with namespaces, the shared one is the lower, read-only layer of an overlay
	// mounted on the private one (see overlayBuildCache). Empty: no overlay.
	BuildCache, SharedBuildCache string
	// Set from the simulation hooks.
	NoLandlock, NoNamespaces bool
}

// jailState is what a confined process ended up with.
type jailState struct {
	landlock bool // Landlock restricts it
	ns       bool // stage 2: in new mount, PID and IPC namespaces (and a user one, but for root)
	netns    bool // in a network namespace of its own
	proc     bool // its own /proc (its PID namespace's)
	dev      bool // its own /dev, with a private devpts
	git      bool // its worktree's git dir is its private copy
	cache    bool // its Go build cache is an overlay over the shared one
}

// network says how the network is cut, for doctor.
func (st jailState) network(c confinement) string {
	switch {
	case c.Network:
		return "allowed"
	case st.netns:
		return "namespace"
	case st.landlock && abi() >= 4:
		return "landlock-tcp"
	}
	return "none"
}

// stage2 starts this image again in new namespaces and exits with its end; it returns only
// when the namespaces could not be made.
func stage2(ref, path string, c confinement) {
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return
	}
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if os.Args[1] == probeName {
		cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(3, "pty")) // the probe's terminal stays fd 3
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, statusW)
	cmd.Env = append(os.Environ(), confineEnv+"="+ref, stageEnv+"=ns", statusEnv+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
	flags := uintptr(unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC)
	if !c.Network {
		flags |= unix.CLONE_NEWNET
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		// A user namespace makes the rest possible without privileges: the same user
		// inside, which keeps, across the exec of stage 2, the capabilities (in its own
		// namespaces only) it needs to mount and bring up its loopback, and drops them
		// before the command runs. Root has them already, and needs no user namespace
		// (restrict drops what the command must not have).
		flags |= unix.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
	}
	cmd.SysProcAttr.Cloneflags = flags
	// Signals summit sends the group reach stage 2 and the command directly; those sent to
	// this process alone are passed on. Caught rather than ignored: an ignored signal would
	// stay ignored in everything exec'd below.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		signal.Reset()
		statusR.Close()
		statusW.Close()
		return
	}
	statusW.Close()
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	end, _ := io.ReadAll(statusR)
	err = cmd.Wait()
	os.Remove(path)
	var kind string
	var n int
	if _, e := fmt.Sscanf(string(end), "%s %d", &kind, &n); e != nil {
		// Stage 2 died before it could say (SIGKILL): its own end is the command's.
		kind, n = "exit", cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			kind, n = "signal", int(ws.Signal())
		} else if err != nil && n < 0 {
			n = 126
		}
	}
	if kind == "signal" {
		signal.Reset()
		syscall.Kill(os.Getpid(), syscall.Signal(n))
		n = 128 + n // a signal that does not kill (SIGCHLD…): exit as a shell would
	}
	os.Exit(n)
}

// reap runs the command as the child of stage 2 (pid 1 of its namespace), reaps whatever is
// orphaned in the namespace, and when the command ends writes how on the status descriptor
// and exits, which ends every process left in the namespace.
func reap(bin string, argv []string, status string) {
	var out *os.File
	if fd, err := strconv.Atoi(status); err == nil {
		unix.CloseOnExec(fd)
		out = os.NewFile(uintptr(fd), "status")
	}
	// What the command runs gets no capability, even in these namespaces.
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	wd, _ := os.Getwd()
	pid, err := syscall.ForkExec(bin, argv, &syscall.ProcAttr{Dir: wd, Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "summit: %s: %v\n", argv[0], err)
		os.Exit(127)
	}
	go func() {
		for s := range sigs {
			syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || got == pid {
			kind, n := "exit", ws.ExitStatus()
			if ws.Signaled() {
				kind, n = "signal", int(ws.Signal())
			}
			if out != nil {
				fmt.Fprintf(out, "%s %d", kind, n)
			}
			if kind == "signal" {
				n += 128
			}
			os.Exit(n)
		}
	}
}

// devFiles are the devices every confined process may read and write: they reach no
// terminal, disk or other process.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// restrict applies Landlock (where there is one) and the seccomp filter to this process.
func restrict(c confinement, st jailState) error {
	cut := !c.Network && !st.netns // Landlock's TCP rules are the network confinement
	if err := denyTerminalIoctls(cut); err != nil && !strings.HasPrefix(err.Error(), "no seccomp filter") {
		return err
	}
	if c.Confine {
		// Root's capabilities that would reach past the jail go from the bounding set, so the
		// command cannot have them (an unprivileged user has none to lose): CAP_SYS_PTRACE
		// reads a non-dumpable summit's /proc/<pid>/environ, which Landlock's ptrace rule lets
		// through for reading (it stops /proc/<pid>/mem), CAP_SYS_ADMIN pushes input into a
		// terminal and mounts, the others reach devices and the kernel.
		for _, cp := range []uintptr{unix.CAP_SYS_PTRACE, unix.CAP_SYS_ADMIN, unix.CAP_SYS_MODULE, unix.CAP_SYS_RAWIO,
			unix.CAP_SYS_BOOT, unix.CAP_MKNOD} {
			unix.Prctl(unix.PR_CAPBSET_DROP, cp, 0, 0, 0)
		}
	}
	if !st.landlock {
		return nil
	}
	var rules []landlock.Rule
	if c.Confine {
		rules = append(rules, landlock.RODirs(c.Dirs...).IgnoreIfMissing(), landlock.ROFiles(c.Files...).IgnoreIfMissing())
		rules = append(rules, writeRules(c.RW)...)
	} else {
		rules = append(rules, writeRules(append(append([]string{}, c.Dirs...), c.Files...))...)
		rules = append(rules, writeRules([]string{"/dev/shm"})...) // the user's own commands may share memory
	}
	devs := append([]string{}, devFiles...)
	switch {
	case st.dev:
		// Its own devpts: the ptys it opens (Gemini CLI runs commands on one), and nobody else's.
		rules = append(rules, writeRules([]string{"/dev/pts"})...)
	default:
		// The system's devpts holds the user's terminal: not a single pty there. A program
		// may still open /dev/ptmx and reach the other end with TIOCGPTPEER.
		devs = append(devs, "/dev/ptmx")
	}
	rules = append(rules, landlock.RWFiles(devs...).WithIoctlDev().IgnoreIfMissing())
	cfg := landlock.V6
	if !cut {
		cfg.HandledAccessNet = 0
	}
	if !c.Confine {
		cfg.Scoped = 0 // the user's own commands may signal what they like
	}
	if abi() < 2 {
		// Asked of a kernel of ABI 1, refer would make BestEffort give up confining at all.
		cfg = landlock.V1
	}
	return cfg.BestEffort().Restrict(rules...)
}

// writeRules grants reading and writing below each directory of rw, and reading and writing
// (in place: no rename over it, which needs its directory) each file of rw; a path that does
// not exist is left out. It runs in the process being confined, just before the restriction,
// so a file or directory is taken as it is then. A symlink is followed (a symlink loop is left
// out, as missing: one must not make every command fail).
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

// LandlockABI is the kernel's Landlock ABI version, 0 when it has none (or summit simulates
// that: SUMMIT_SIMULATE_NO_LANDLOCK).
func LandlockABI() int {
	if os.Getenv(simNoLandlock) != "" {
		return 0
	}
	return abi()
}

// readable lists what may be read: everything but below each hidden path. The walk from / to
// a hidden path grants every sibling on the way and never the path itself. Symlinks met on the
// way get no rule: what they lead to is granted (or not) where it is, and a symlink loop must
// not make every command fail.
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
			case e.Type()&os.ModeSymlink != 0:
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

// confinedCommand is name args run through summit's own image, which confines itself as c
// says before it becomes name. It runs in a session of its own (no controlling terminal, its
// own process group, named by its pid); stdin, stdout and stderr are the caller's to set
// (never summit's terminal).
func confinedCommand(c confinement, env []string, name string, args ...string) (*exec.Cmd, error) {
	c.NoLandlock = os.Getenv(simNoLandlock) != ""
	c.NoNamespaces = os.Getenv(simNoNamespaces) != ""
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
	cmd.Env = append(env, confineEnv+"="+f.Name()+"#"+specSum(spec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, nil
}

// specSum is the hex SHA-256 of a spec.
func specSum(spec []byte) string {
	h := sha256.Sum256(spec)
	return hex.EncodeToString(h[:])
}

// guardSpec is the terminal guard (confinement with Confine false).
func guardSpec() confinement {
	dirs, files := readable([]string{"/dev"})
	return confinement{Dirs: dirs, Files: files, Network: true}
}

// GuardedCommand is name args as every process summit starts for the user's own commands
// (hooks, MCP servers) runs: in a session of its own, with no controlling terminal, unable to
// open a terminal device or push input into one (see confinement), with env as its whole
// environment. Its process group is named by its pid, as with Setpgid. Stdin, stdout and
// stderr are the caller's to set (pipes or /dev/null, never summit's terminal); the caller
// may set Dir, and must not replace SysProcAttr (it may set fields of it).
func GuardedCommand(env []string, name string, args ...string) (*exec.Cmd, error) {
	return confinedCommand(guardSpec(), env, name, args...)
}

// ConfinementAvailable reports whether this kernel can confine a shell's writes.
func ConfinementAvailable() bool { return LandlockABI() >= 1 }

// jailSpec is the subagent's jail for a command that may write below rw (plus the sandbox's
// own writable places).
func (s *Sandbox) jailSpec(rw []string, network bool) confinement {
	c := confinement{Confine: true, Network: network, Namespaces: true}
	c.Dirs, c.Files = readable(append(append([]string{}, s.o.Hidden...), "/dev"))
	c.RW = append(s.writable(), rw...)
	c.GitDir, c.GitPrivate = s.gitLayout()
	if c.GitPrivate != "" {
		// The copy is mounted over the real git dir: Landlock walks up from there through the
		// real git dir's parents, so the copy's own root needs its rule.
		c.RW = append(c.RW, c.GitPrivate, filepath.Join(c.GitPrivate, "gitdir"))
	}
	if p, shared := s.privateDir(), sharedBuildCache(); p != "" && shared != "" {
		c.BuildCache, c.SharedBuildCache = filepath.Join(p, "go-build"), shared
	}
	return c
}

// ConfinedCommand is name args run confined as the sandbox's shell is, for a long-running
// process of a subagent's own (an external ACP agent): with Options.ConfineWrites it, and
// every process it starts, may write only in the root, its private caches and the
// directories and files of rw (env's TMPDIR is the caller's to list), may read everywhere
// but below Options.Hidden, and reaches the network only with Options.Network; the
// restriction cannot be lifted by anything it runs. Without ConfineWrites it gets the
// terminal guard only (GuardedCommand). Either way it runs in a session of its own with no
// controlling terminal. The command has no Dir nor stdio: the caller sets them; its process
// is the leader of its own process group (the caller must not replace SysProcAttr).
//
// A path of rw that is, holds or lies below a hidden path is refused (an error): a write
// rule cannot be narrowed, and what is hidden stays out of reach whoever asks.
func (s *Sandbox) ConfinedCommand(rw, env []string, name string, args ...string) (*exec.Cmd, error) {
	return s.ConfinedCommandNet(rw, env, false, name, args...)
}

// ConfinedCommandNet is ConfinedCommand with the network granted when network is true, besides
// when Options.Network grants it (an MCP server whose config says network: true, in the jail
// of a subagent that may not fetch).
func (s *Sandbox) ConfinedCommandNet(rw, env []string, network bool, name string, args ...string) (*exec.Cmd, error) {
	if !s.o.ConfineWrites {
		return GuardedCommand(env, name, args...)
	}
	for _, p := range rw {
		for _, h := range s.o.Hidden {
			if a, b := realPath(p), realPath(h); a == b || within(a, b) || within(b, a) {
				return nil, fmt.Errorf("%s may not be writable: it reaches %s, which a subagent may not", p, h)
			}
		}
	}
	return confinedCommand(s.jailSpec(rw, s.o.Network || network), s.privateEnv(env), name, args...)
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
