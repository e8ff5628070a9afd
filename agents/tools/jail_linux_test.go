//go:build linux

package tools

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// jailVariants runs f with namespaces (where the kernel allows them) and without (Landlock
// alone, as on a kernel that refuses user namespaces): each must hold on its own.
func jailVariants(t *testing.T, f func(t *testing.T)) {
	t.Run("namespaces", f)
	t.Run("landlock-only", func(t *testing.T) {
		t.Setenv(simNoNamespaces, "1")
		f(t)
	})
}

// A subagent's shell reaches nothing of the user's: no loopback listener, no signal to or
// environment of summit, no shared module or build cache, no /dev/shm, no terminal (by
// /dev/tty or by its pty's path), no secret variable. Each case fails on the old code
// (Setpgid only, a deny-list environment, /dev and the shared caches writable, no network
// rule), and the control at the end shows the same listener is reachable when the network
// is granted, so the refusals are the jail's doing.
func TestJailShellReachesNothing(t *testing.T) {
	if !ConfinementAvailable() {
		t.Skip("this kernel has no Landlock")
	}
	// As summit does first thing in main: without it, a process of the same user (root
	// included) reads /proc/<pid>/environ, which Landlock alone does not stop.
	if err := HardenProcess(); err != nil {
		t.Fatal(err)
	}
	jailVariants(t, func(t *testing.T) {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		accepted := make(chan struct{}, 16)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- struct{}{}
				c.Close()
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		shared := t.TempDir()
		t.Setenv("GOMODCACHE", filepath.Join(shared, "mod"))
		t.Setenv("GOCACHE", filepath.Join(shared, "build"))
		for _, d := range []string{"mod", "build"} {
			os.MkdirAll(filepath.Join(shared, d), 0o755)
		}
		master, slave, pts, err := openPty()
		if err != nil {
			t.Fatal(err)
		}
		defer master.Close()
		defer slave.Close()
		shm := fmt.Sprintf("/dev/shm/summit-jail-test-%d", os.Getpid())
		defer os.Remove(shm)
		environ := append(os.Environ(), "GITHUB_PAT=ghp-jail-secret", "DATABASE_URL=postgres://x:dburl-jail@h/db")
		s, _ := fixture(t, Options{ConfineWrites: true, Environ: environ})
		defer s.Close()
		pid := strconv.Itoa(os.Getpid())
		var cases []struct{ name, cmd string }
		for _, c := range []struct{ name, cmd string }{
			{"loopback connect", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)},
			{"signal summit", "kill -0 " + pid},
			{"summit's memory", "head -c1 /proc/" + pid + "/mem"},
			{"shared module cache", "touch " + filepath.Join(shared, "mod", "poisoned")},
			{"shared build cache", "touch " + filepath.Join(shared, "build", "poisoned")},
			{"/dev/shm", "touch " + shm},
			{"/dev/tty", "exec 3<>/dev/tty"},
			{"the user's pty by path", "echo pwned > " + pts},
			{"read the user's pty", "head -c1 < " + pts},
		} {
			cases = append(cases, c)
		}
		// Landlock alone does not stop root reading a non-dumpable process's environment
		// (this kernel lets it, without CAP_SYS_PTRACE): summit runs root's jail in PID and
		// mount namespaces, which need no user namespace, so this holds wherever root runs
		// summit; only the simulation of a kernel without namespaces lacks it.
		if !strings.HasSuffix(t.Name(), "landlock-only") || os.Getuid() != 0 {
			cases = append(cases, struct{ name, cmd string }{"summit's environment", "cat /proc/" + pid + "/environ"})
		}
		for _, c := range cases {
			r := s.Call(context.Background(), "run_shell_command", jsonArgs("command", c.cmd, "timeout_s", 10))
			if !r.IsError {
				t.Errorf("%s: %q was allowed: %s", c.name, c.cmd, r.Output)
			}
		}
		for _, p := range []string{filepath.Join(shared, "mod", "poisoned"), filepath.Join(shared, "build", "poisoned"), shm} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s was created", p)
			}
		}
		if pending(master) {
			t.Errorf("something reached the user's pty")
		}
		select {
		case <-accepted:
			t.Errorf("the listener accepted a connection from the jail")
		default:
		}
		r := s.Call(context.Background(), "run_shell_command", jsonArgs("command", "env; echo $GOMODCACHE $GOCACHE > caches.txt && go env GOMODCACHE 2>/dev/null; true"))
		if r.IsError || strings.Contains(r.Output, "jail-secret") || strings.Contains(r.Output, "dburl-jail") || strings.Contains(r.Output, "GITHUB_PAT") {
			t.Errorf("environment: %+v", r)
		}
		if b, _ := os.ReadFile(filepath.Join(s.Root(), "caches.txt")); !strings.Contains(string(b), s.privateDir()) {
			t.Errorf("the caches are not the subagent's own: %q (private dir %s)", b, s.privateDir())
		}
		// Control: with the network granted, the same connection gets through.
		s.o.Network = true
		if r := s.Call(context.Background(), "run_shell_command", jsonArgs("command", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port))); r.IsError {
			t.Errorf("with the network granted, the loopback connection failed: %s", r.Output)
		}
	})
}

// The jail's own loopback works (a test server of the subagent's), while the host's is not
// reachable (above).
func TestJailOwnLoopback(t *testing.T) {
	if !ConfinementAvailable() {
		t.Skip("this kernel has no Landlock")
	}
	s, _ := fixture(t, Options{ConfineWrites: true, Environ: os.Environ()})
	defer s.Close()
	r := s.Call(context.Background(), "run_shell_command", jsonArgs("command", "ip -o link show lo 2>/dev/null || cat /sys/class/net/lo/operstate"))
	if r.IsError || !(strings.Contains(r.Output, "UP") || strings.Contains(r.Output, "unknown")) {
		t.Errorf("lo in the jail: %+v", r)
	}
}

// TIOCSTI is refused to a confined process even when it holds the terminal's descriptor and
// runs as root, in the jail and under the terminal guard, and nothing reaches the terminal;
// it cannot open the terminal by path nor /dev/tty. As root, the control shows TIOCSTI works
// from an unconfined process on this kernel, so the test can fail.
func TestProbeTIOCSTIBlocked(t *testing.T) {
	if os.Getuid() == 0 {
		m, s, _, err := openPty()
		if err != nil {
			t.Fatal(err)
		}
		if err := tiocsti(s); err != nil {
			t.Logf("control: TIOCSTI refused to root here too (%v): the kernel blocks it already", err)
		} else if !pending(m) {
			t.Errorf("control: TIOCSTI succeeded but nothing reached the master")
		}
		m.Close()
		s.Close()
	}
	for _, jail := range []bool{true, false} {
		for _, noNS := range []bool{false, true} {
			if noNS {
				t.Setenv(simNoNamespaces, "1")
			} else {
				os.Unsetenv(simNoNamespaces)
			}
			r, err := ProbeConfinement(jail)
			if err != nil {
				t.Fatalf("jail %t: %v", jail, err)
			}
			if !r.TIOCSTIBlocked || !r.TTYBlocked || (ConfinementAvailable() && !r.PtyBlocked) {
				t.Errorf("jail %t, no namespaces %t: %+v\n%s", jail, noNS, r, r.Output)
			}
			if jail && !noNS && (!r.Namespaces || r.Network != "namespace") {
				t.Logf("namespaces not had here: %+v", r)
			}
			if jail && noNS && ConfinementAvailable() && LandlockABI() >= 4 && r.Network != "landlock-tcp" {
				t.Errorf("without user namespaces the network should be cut by Landlock: %+v", r)
			}
		}
	}
}

// Every process a guarded or jailed command starts has no controlling terminal and cannot
// open /dev/tty, although summit has one: the test runs the shell from a helper process whose
// controlling terminal is a pty the test opened (on the old code, Setpgid only, the command
// inherited it: tty_nr was the pty's and /dev/tty opened).
func TestNoControllingTerminal(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_CTTY_HELPER") != "" {
		return // the helper's own run is TestCttyHelper
	}
	master, slave, _, err := openPty()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	go io.Copy(io.Discard, master) // keep the pty drained
	for _, jail := range []string{"", "1"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCttyHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "SUMMIT_TEST_CTTY_HELPER=1", "SUMMIT_TEST_CTTY_JAIL="+jail)
		cmd.Stdin = slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("jail %q: %v\n%s", jail, err, out)
		}
		if !strings.Contains(string(out), "helper tty_nr=") || strings.Contains(string(out), "helper tty_nr=0") {
			t.Fatalf("the helper has no controlling terminal: the test proves nothing\n%s", out)
		}
		if !strings.Contains(string(out), "shell tty_nr=0\n") || !strings.Contains(string(out), "no /dev/tty") {
			t.Errorf("jail %q: the shell reached the terminal:\n%s", jail, out)
		}
	}
}

// TestCttyHelper is the helper of TestNoControllingTerminal (it does nothing on its own).
func TestCttyHelper(t *testing.T) {
	if os.Getenv("SUMMIT_TEST_CTTY_HELPER") == "" {
		return
	}
	if os.Getenv("SUMMIT_TEST_CTTY_JAIL") != "" && !ConfinementAvailable() {
		os.Setenv(simNoLandlock, "")
	}
	b, _ := os.ReadFile("/proc/self/stat")
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	fmt.Printf("helper tty_nr=%s\n", f[4])
	s, _ := fixture(t, Options{ConfineWrites: os.Getenv("SUMMIT_TEST_CTTY_JAIL") != "", AllowUnconfined: true, Environ: os.Environ()})
	defer s.Close()
	r := s.Call(context.Background(), "run_shell_command", jsonArgs("command",
		`read -r _ _ _ _ _ _ tty _ < /proc/self/stat; echo "shell tty_nr=$tty"; (exec 3<>/dev/tty && echo "opened /dev/tty") 2>/dev/null || echo "no /dev/tty"`))
	fmt.Print(r.Output)
}

// A self-referencing symlink in the workspace, the temp dir, HOME or an ancestor of a hidden
// path does not break the jail (it made every command fail "cannot confine bash").
func TestJailSymlinkLoops(t *testing.T) {
	if !ConfinementAvailable() {
		t.Skip("this kernel has no Landlock")
	}
	home := t.TempDir()
	tmp := t.TempDir()
	for _, d := range []string{home, tmp} {
		if err := os.Symlink("loop", filepath.Join(d, "loop")); err != nil {
			t.Fatal(err)
		}
	}
	hidden := filepath.Join(home, ".config", "summit")
	os.MkdirAll(hidden, 0o700)
	os.Symlink("loop", filepath.Join(home, ".config", "loop"))
	t.Setenv("TMPDIR", tmp)
	s, _ := fixture(t, Options{ConfineWrites: true, Environ: append(os.Environ(), "HOME="+home), Hidden: []string{hidden}})
	defer s.Close()
	os.Symlink("loop", filepath.Join(s.Root(), "loop"))
	r := s.Call(context.Background(), "run_shell_command", jsonArgs("command", "echo ok"))
	if r.IsError || r.Output != "ok\n" {
		t.Errorf("with symlink loops around: %+v", r)
	}
}

// Without Landlock the subagent's shell is refused, saying why and how to opt in; opted in,
// it runs.
func TestShellRefusedWithoutLandlock(t *testing.T) {
	t.Setenv(simNoLandlock, "1")
	s, _ := fixture(t, Options{ConfineWrites: true, Environ: os.Environ()})
	defer s.Close()
	r := s.Call(context.Background(), "run_shell_command", `{"command": "echo ran > ran.txt"}`)
	check(t, "refused", r, true, "no Landlock", "--allow-unconfined-shell")
	if _, err := os.Stat(filepath.Join(s.Root(), "ran.txt")); err == nil {
		t.Errorf("the refused command ran")
	}
	s.o.AllowUnconfined = true
	r = s.Call(context.Background(), "run_shell_command", `{"command": "echo ran"}`)
	check(t, "opted in", r, false, "ran\n")
	// A shell that is not to be confined (no isolation) is not refused.
	free, _ := fixture(t, Options{Environ: os.Environ()})
	check(t, "unconfined", free.Call(context.Background(), "run_shell_command", `{"command": "echo ran"}`), false, "ran\n")
}

// git commit works in the subagent's own linked worktree; the user's HEAD, index, refs and
// objects are untouched, and a branch it makes is refused.
func TestJailGitCommitInWorktree(t *testing.T) {
	if !ConfinementAvailable() {
		t.Skip("this kernel has no Landlock")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	repo, wt := filepath.Join(base, "repo"), filepath.Join(base, "wt")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.MkdirAll(repo, 0o755)
	git(repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	git(repo, "add", "a.txt")
	git(repo, "commit", "-q", "-m", "first")
	git(repo, "worktree", "add", "-q", "--detach", wt)
	head := git(repo, "rev-parse", "HEAD")
	refs := git(repo, "for-each-ref")
	wtHead, _ := os.ReadFile(filepath.Join(repo, ".git", "worktrees", "wt", "HEAD"))
	index, _ := os.ReadFile(filepath.Join(repo, ".git", "index"))
	objects := countFiles(t, filepath.Join(repo, ".git", "objects"))

	s, err := New(wt, Options{ConfineWrites: true, Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Call(context.Background(), "run_shell_command", jsonArgs("command",
		"echo b > b.txt && git add b.txt && git -c user.name=sub -c user.email=s@e commit -q -m second && git log --format=%s"))
	if r.IsError || !strings.Contains(r.Output, "second\nfirst") {
		t.Fatalf("git commit in the worktree: %+v", r)
	}
	// A later command sees its commit still.
	if r := s.Call(context.Background(), "run_shell_command", jsonArgs("command", "git log -1 --format=%s")); r.Output != "second\n" {
		t.Errorf("the next command: %+v", r)
	}
	if r := s.Call(context.Background(), "run_shell_command", jsonArgs("command", "git branch evil && git update-ref refs/heads/main HEAD")); !r.IsError {
		t.Errorf("a branch in the user's refs was allowed: %s", r.Output)
	}
	if got := git(repo, "rev-parse", "HEAD"); got != head {
		t.Errorf("the user's HEAD moved: %s -> %s", head, got)
	}
	if got := git(repo, "for-each-ref"); got != refs {
		t.Errorf("the user's refs changed:\n%s\n->\n%s", refs, got)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "worktrees", "wt", "HEAD")); string(b) != string(wtHead) {
		t.Errorf("the worktree's real HEAD moved: %q -> %q", wtHead, b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "index")); string(b) != string(index) {
		t.Errorf("the user's index changed")
	}
	if n := countFiles(t, filepath.Join(repo, ".git", "objects")); n != objects {
		t.Errorf("the user's object store changed: %d -> %d files", objects, n)
	}
	git(repo, "fsck", "--no-progress")
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// AllowEnv keeps the allow-list and the names passed, drops the rest.
func TestAllowEnv(t *testing.T) {
	got := AllowEnv([]string{"PATH=/bin", "HOME=/h", "LC_TIME=C", "TERM=xterm", "GOFLAGS=-mod=mod", "AWS_SECRET_ACCESS_KEY=x",
		"PW=hunter2", "MY_VAR=1", "=weird", "NOEQUALS"}, []string{"MY_VAR"})
	want := "PATH=/bin HOME=/h LC_TIME=C TERM=xterm GOFLAGS=-mod=mod MY_VAR=1"
	if strings.Join(got, " ") != want {
		t.Errorf("AllowEnv = %q, want %q", got, want)
	}
}

func tiocsti(f *os.File) error {
	b := byte('#')
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.TIOCSTI, int(b))
}

// BenchmarkShellStart is the cost of one run_shell_command `true`: unjailed (the terminal
// guard: summit's image once, then bash), jailed with namespaces (two stages, then bash), and
// jailed with Landlock alone.
func BenchmarkShellStart(b *testing.B) {
	for _, v := range []struct {
		name    string
		confine bool
		noNS    string
	}{{"guard", false, ""}, {"jail", true, ""}, {"jail-landlock-only", true, "1"}} {
		b.Run(v.name, func(b *testing.B) {
			if v.confine && !ConfinementAvailable() {
				b.Skip("no Landlock")
			}
			b.Setenv(simNoNamespaces, v.noNS)
			if v.noNS == "" {
				os.Unsetenv(simNoNamespaces)
			}
			dir := b.TempDir()
			s, err := New(dir, Options{ConfineWrites: v.confine, Environ: os.Environ()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				if r := s.Call(context.Background(), "run_shell_command", `{"command": "true"}`); r.IsError {
					b.Fatal(r.Output)
				}
			}
		})
	}
}

// A spec rewritten between summit writing it and the confined process reading it (by a
// process of the user's that can write the temp dir) is refused: the command does not run.
func TestJailRefusesATamperedSpec(t *testing.T) {
	s, _ := fixture(t, Options{ConfineWrites: true, Environ: os.Environ()})
	defer s.Close()
	cmd, err := confinedCommand(s.jailSpec(nil, false), os.Environ(), "bash", "-c", "echo ran")
	if err != nil {
		t.Fatal(err)
	}
	var path string
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, confineEnv+"="); ok {
			path, _, _ = strings.Cut(v, "#")
		}
	}
	if err := os.WriteFile(path, []byte(`{"Confine":false,"Dirs":["/"],"Network":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "ran") || !strings.Contains(string(out), "bad confinement request") {
		t.Errorf("a tampered spec: %v %s", err, out)
	}
}

// With namespaces, the jail's Go build cache is an overlay over the user's: what the user's
// builds compiled is there to reuse (a demo's `go test` does not compile the standard library
// again), and what the jail writes lands in its own layer, never in the shared cache. Fails
// without the overlay: the private cache starts empty, so the shared entry is not seen.
func TestJailBuildCacheOverlay(t *testing.T) {
	if !ConfinementAvailable() {
		t.Skip("this kernel has no Landlock")
	}
	shared := t.TempDir()
	t.Setenv("GOCACHE", shared)
	if err := os.WriteFile(filepath.Join(shared, "entry-from-the-user"), []byte("compiled"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := fixture(t, Options{ConfineWrites: true, Environ: os.Environ()})
	defer s.Close()
	r := s.Call(context.Background(), "run_shell_command", jsonArgs("command",
		`cat "$GOCACHE/entry-from-the-user" && echo poison > "$GOCACHE/entry-from-the-user" && touch "$GOCACHE/new-entry" && echo WROTE`, "timeout_s", 20))
	if r.IsError || !strings.Contains(r.Output, "compiled") || !strings.Contains(r.Output, "WROTE") {
		t.Fatalf("the jail's build cache does not layer the shared one: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(shared, "entry-from-the-user")); string(b) != "compiled" {
		t.Errorf("the shared cache entry was rewritten: %q", b)
	}
	if _, err := os.Stat(filepath.Join(shared, "new-entry")); err == nil {
		t.Errorf("the jail wrote into the shared cache")
	}
}
