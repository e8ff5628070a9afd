//go:build linux

package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// enterNamespaces sets up stage 2's namespaces (see init): each step that fails is left out
// and what was had is reported, so that restrict grants only what stands (no private devpts:
// no /dev/pts at all).
func enterNamespaces(c confinement, st jailState) jailState {
	st.ns = true
	st.netns = !c.Network
	if st.netns {
		loopbackUp() // its own loopback: a test server of its own works; the host's is not there
	}
	// Nothing mounted here may reach the parent namespace.
	if unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "") != nil {
		return st
	}
	st.proc = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "") == nil
	st.dev = privateDev() == nil
	if c.GitDir != "" && c.GitPrivate != "" {
		st.git = privateGitDir(c.GitDir, c.GitPrivate) == nil
	}
	if c.BuildCache != "" && c.SharedBuildCache != "" {
		st.cache = overlayBuildCache(c.BuildCache, c.SharedBuildCache) == nil
	}
	return st
}

// overlayBuildCache mounts, in the jail's mount namespace only, an overlay on the private Go
// build cache whose lower layer is the user's shared cache: a build in the jail reuses every
// package the user's builds compiled (the standard library included), and whatever it writes
// goes to an upper layer of its own, so the shared cache is never written (a poisoned entry
// would be trusted by every later build on the machine). The upper layer is this process's
// alone (two overlays on one upper dir are undefined behaviour): commands of one subagent
// share the lower layer, not each other's writes. On failure (an old kernel, a path overlayfs
// options cannot spell) the private cache stays as it was: empty, and merely cold.
func overlayBuildCache(mnt, shared string) error {
	if strings.ContainsAny(mnt+shared, ",:\\") {
		return fmt.Errorf("overlay: %s or %s cannot be spelled in mount options", mnt, shared)
	}
	if st, err := os.Stat(shared); err != nil || !st.IsDir() {
		return fmt.Errorf("overlay: no shared build cache at %s", shared)
	}
	layer, err := os.MkdirTemp(filepath.Dir(mnt), "go-build-layer-")
	if err != nil {
		return err
	}
	upper, work := filepath.Join(layer, "upper"), filepath.Join(layer, "work")
	for _, d := range []string{mnt, upper, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return unix.Mount("overlay", mnt, "overlay", unix.MS_NOSUID|unix.MS_NODEV, "lowerdir="+shared+",upperdir="+upper+",workdir="+work)
}

// privateDev mounts a /dev of its own: the harmless devices (bound from the system's), a
// devpts instance of its own (ptmx included), an empty /dev/shm it cannot write, and the
// usual links. The user's terminal, every other pty, disks and the shared /dev/shm are not
// there.
func privateDev() error {
	fds := map[string]int{}
	for _, d := range devFiles {
		if fd, err := unix.Open(d, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
			fds[d] = fd
		}
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return err
	}
	for d, fd := range fds {
		f, err := os.OpenFile(d, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return err
		}
		f.Close()
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), d, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	for link, target := range map[string]string{"/dev/ptmx": "pts/ptmx", "/dev/fd": "/proc/self/fd",
		"/dev/stdin": "/proc/self/fd/0", "/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	return unix.Mount("", "/dev", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, "")
}

// loopbackUp brings up lo in a fresh network namespace.
func loopbackUp() {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return
	}
	if unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr) != nil {
		return
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// privateGitDir puts the subagent's copy of its worktree's git dir (see gitLayout) over the
// real one, in its mount namespace only.
func privateGitDir(gitDir, private string) error {
	return unix.Mount(filepath.Join(private, "gitdir"), gitDir, "", unix.MS_BIND, "")
}

// probe reports, on stdout, what this confined process can reach: for doctor and the tests.
// fd 3 is a terminal (a pty's other end) the caller opened; os.Args[2], when given, is its
// path.
func probe(c confinement, st jailState) {
	fmt.Printf("landlock: %d\n", map[bool]int{true: abi()}[st.landlock])
	fmt.Printf("namespaces: %t\n", st.ns)
	fmt.Printf("pid namespace: %t\n", st.proc)
	fmt.Printf("private dev: %t\n", st.dev)
	fmt.Printf("network: %s\n", st.network(c))
	report := func(what string, err error) {
		if err != nil {
			fmt.Printf("%s: blocked (%v)\n", what, err)
		} else {
			fmt.Printf("%s: ALLOWED\n", what)
		}
	}
	b := byte('#')
	report("tiocsti", unix.IoctlSetPointerInt(3, unix.TIOCSTI, int(b)))
	if len(os.Args) > 2 {
		fd, err := unix.Open(os.Args[2], unix.O_RDWR|unix.O_NOCTTY, 0)
		if err == nil {
			unix.Close(fd)
		}
		report("open "+os.Args[2], err)
	}
	fd, err := unix.Open("/dev/tty", unix.O_RDWR, 0)
	if err == nil {
		unix.Close(fd)
	}
	report("open /dev/tty", err)
}

// ConfinementReport is what ProbeConfinement found a confined process could do.
type ConfinementReport struct {
	LandlockABI  int    // the Landlock ABI restricting it (0: none)
	Namespaces   bool   // it ran in user, mount, PID and IPC namespaces of its own
	PIDNamespace bool   // with its own /proc: no other process is visible to it
	PrivateDev   bool   // with its own /dev and devpts: no terminal of the user's is there
	Network      string // namespace, landlock-tcp, none (not cut) or allowed
	// TIOCSTIBlocked: ioctl(TIOCSTI) on a terminal it was handed failed, and nothing
	// reached that terminal's input; PtyBlocked and TTYBlocked: it could not open that
	// terminal by path, nor /dev/tty.
	TIOCSTIBlocked, PtyBlocked, TTYBlocked bool
	Output                                 string // the probe's own lines
}

// ProbeConfinement starts a process confined as a subagent's shell is (jail) or as a hook is
// (the terminal guard), hands it a pseudo-terminal summit opened (its descriptor and its
// path), and reports what it could do: a real check, for doctor and the tests.
func ProbeConfinement(jail bool) (ConfinementReport, error) {
	var r ConfinementReport
	master, slave, path, err := openPty()
	if err != nil {
		return r, err
	}
	defer master.Close()
	defer slave.Close()
	c := guardSpec()
	if jail {
		c = confinement{Confine: true, Namespaces: true}
		c.Dirs, c.Files = readable([]string{"/dev"})
	}
	cmd, err := confinedCommand(c, []string{"PATH=/usr/bin:/bin"}, probeName, path)
	if err != nil {
		return r, err
	}
	cmd.ExtraFiles = []*os.File{slave}
	out, err := cmd.Output()
	r.Output = string(out)
	if err != nil {
		return r, fmt.Errorf("the probe failed: %v: %s", err, out)
	}
	injected := pending(master)
	for _, line := range strings.Split(r.Output, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch {
		case k == "landlock":
			r.LandlockABI, _ = strconv.Atoi(v)
		case k == "namespaces":
			r.Namespaces = v == "true"
		case k == "pid namespace":
			r.PIDNamespace = v == "true"
		case k == "private dev":
			r.PrivateDev = v == "true"
		case k == "network":
			r.Network = v
		case k == "tiocsti":
			r.TIOCSTIBlocked = strings.HasPrefix(v, "blocked") && !injected
		case k == "open /dev/tty":
			r.TTYBlocked = strings.HasPrefix(v, "blocked")
		case strings.HasPrefix(k, "open "):
			r.PtyBlocked = strings.HasPrefix(v, "blocked")
		}
	}
	return r, nil
}

// openPty opens a new pseudo-terminal: its master, its slave, the slave's path.
func openPty() (master, slave *os.File, path string, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, "", err
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err != nil {
		m.Close()
		return nil, nil, "", err
	}
	path = "/dev/pts/" + strconv.Itoa(n)
	s, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, "", err
	}
	return m, s, path, nil
}

// pending reports whether the pty master has input waiting (what a TIOCSTI would have pushed
// reads back on the master as echo).
func pending(master *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(master.Fd()), Events: unix.POLLIN}}
	n, _ := unix.Poll(fds, 200)
	return n > 0 && fds[0].Revents&unix.POLLIN != 0
}

// HardenProcess makes summit's own process not dumpable (PR_SET_DUMPABLE 0): another process
// of the same user (a subagent's command that escaped every other confinement) cannot read
// its memory or /proc/<pid>/environ, where the API keys are, nor ptrace it. Call it first
// thing in main. Dumpable returns the current setting, for doctor.
func HardenProcess() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// Dumpable reports whether this process is dumpable.
func Dumpable() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && v != 0
}
