package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// maxShellTimeout is the ceiling of every shell timeout, configured or asked for.
const maxShellTimeout = 600 * time.Second

// Options configure a Sandbox; zero values mean the defaults shown.
type Options struct {
	MaxResult    int           // bytes of a tool result handed to the model/log; default 64 KiB
	MaxRead      int64         // read_file (and replace) refuse larger files unless a range is asked; default 4 MiB
	MatchCap     int           // glob / search_file_content matches listed; default 200
	ShellTimeout time.Duration // default 120 s; timeout_s may lower it; never above 600 s
	Environ      []string      // base environment of run_shell_command, reduced to an allow-list (AllowEnv); default os.Environ()
	// PassEnv names variables of Environ that run_shell_command gets besides the allow-list
	// (the user's config, env_passthrough), even when the name looks secret.
	PassEnv []string
	// HTTPClient is web_fetch's client; default one with a 30 s timeout that connects to
	// public addresses only (see guardedClient), after DNS and after every redirect.
	HTTPClient *http.Client
	// AllowHosts are hosts web_fetch may reach even on a private or loopback address.
	AllowHosts []string
	// ConfineWrites jails run_shell_command (and everything it starts): it writes only inside
	// the root, its temp dir and its private caches, reads nothing of Hidden, has no network
	// without Network, cannot see or signal summit (see doc.go, "Process confinement"): a
	// subagent's shell cannot write the main workspace or another subagent's worktree.
	ConfineWrites bool
	// Hidden are absolute paths outside the root that a confined shell cannot read either
	// (the main workspace's .summit/ for a subagent working in a worktree).
	Hidden []string
	// Network lets a confined shell (and ConfinedCommand) use the network: the subagent may
	// fetch (web_fetch) or was granted it. Without it a confined process has no network at
	// all, loopback included (see doc.go, "Process confinement").
	Network bool
	// PrivateDir is where the sandbox's private caches go (default a fresh directory in the
	// temp dir); Close removes it.
	PrivateDir string
	// AllowUnconfined lets run_shell_command run where ConfineWrites cannot be had (a kernel
	// without Landlock): the user opted in (--allow-unconfined-shell). Without it the shell
	// is refused there, with a message that says why and how to opt in.
	AllowUnconfined bool
}

// Sandbox runs tools confined to one workspace root. It holds no open resources, only, once a
// jailed command ran, a private directory of caches that Close removes; it is safe for
// concurrent use (each call opens what it needs).
type Sandbox struct {
	root string // absolute, clean, symlink-free
	o    Options

	privMu  sync.Mutex
	priv    string // privateDir, once made (until Close)
	gitOnce sync.Once
	gitDir  string // gitLayout's per-worktree git dir, once found
}

// New resolves root (must exist and be a directory) to an absolute, symlink-free path.
func New(root string, o Options) (*Sandbox, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace root %s is not a directory", root)
	}
	if o.MaxResult <= 0 {
		o.MaxResult = 64 << 10
	}
	if o.MaxRead <= 0 {
		o.MaxRead = 4 << 20
	}
	if o.MatchCap <= 0 {
		o.MatchCap = 200
	}
	if o.ShellTimeout <= 0 {
		o.ShellTimeout = 120 * time.Second
	}
	o.ShellTimeout = min(o.ShellTimeout, maxShellTimeout)
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = guardedClient(o.AllowHosts)
	}
	return &Sandbox{root: real, o: o}, nil
}

// Root returns the resolved workspace root.
func (s *Sandbox) Root() string { return s.root }

// Result is what a tool call produced. Output is already size-capped. Written lists
// workspace-relative slash paths the call created or changed (for artifact_paths).
type Result struct {
	Output  string
	IsError bool
	Written []string
}

func errResult(format string, a ...any) Result {
	return Result{Output: fmt.Sprintf(format, a...), IsError: true}
}

// Call runs one tool. tool is a canonical name; args is the raw JSON object text the model
// produced. Bad input of any kind gives an error Result naming the problem. Cancelling ctx
// stops the call.
func (s *Sandbox) Call(ctx context.Context, tool, args string) Result {
	t, ok := registry[tool]
	if !ok {
		return errResult("unknown tool %q (known: %s)", tool, strings.Join(names(), ", "))
	}
	a, err := decode(args, t.params)
	if err != nil {
		return errResult("%s: %v", tool, err)
	}
	if err := ctx.Err(); err != nil {
		return errResult("%s: not run: %v", tool, err)
	}
	r := t.run(ctx, s, a)
	if !t.capped {
		r.Output = clip(r.Output, int64(len(r.Output)), s.o.MaxResult)
	}
	// Results go to a model API and a JSON log: both need valid UTF-8.
	r.Output = strings.ToValidUTF8(r.Output, "\uFFFD")
	return r
}

// clip cuts text, the first bytes of something total bytes long, to at most max bytes on a
// rune boundary and says how much there was. Callers that capped while reading keep at least
// max+utf8.UTFMax bytes when there is more, so a rune cut by their buffer is dropped here.
// total < 0 means "more than len(text)", for a source read only up to a ceiling.
func clip(text string, total int64, max int) string {
	if total >= 0 && total <= int64(max) && total == int64(len(text)) {
		return text
	}
	cut := runeCut(text, max)
	if total < 0 {
		return text[:cut] + fmt.Sprintf("\n[... truncated: more than %d bytes total, showing the first %d]", len(text), cut)
	}
	return text[:cut] + fmt.Sprintf("\n[... truncated: %d bytes total, showing the first %d]", total, cut)
}

// runeCut is where clip cuts text to at most max bytes: backed off to the start of a rune, but
// never by more than one rune's worth, so that in invalid UTF-8 a run of continuation bytes
// cannot eat the whole text.
func runeCut(text string, max int) int {
	cut := min(len(text), max)
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]); i++ {
		cut--
	}
	return cut
}

// capBuf keeps the first max bytes written to it and counts all of them, so a flood of
// output costs no memory. It is not safe for concurrent writes.
type capBuf struct {
	buf []byte
	max int
	n   int64
}

func (b *capBuf) Write(p []byte) (int, error) {
	b.n += int64(len(p))
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// resolve maps a path argument to a workspace-relative slash path ("." for the root) whose
// every existing component has been resolved, or says why it may not be used. Invariant: the
// result names a location inside the root, even after following each symlink on the way,
// including a final one and one that dangles. Calls then act on it through an os.Root, which
// refuses to leave the root should the tree change between this check and the use.
func (s *Sandbox) resolve(arg string) (string, error) {
	switch {
	case arg == "":
		return "", errors.New("path is empty")
	case strings.ContainsRune(arg, 0):
		return "", fmt.Errorf("path %q contains a NUL byte", arg)
	}
	full := arg
	if !filepath.IsAbs(full) {
		full = filepath.Join(s.root, full)
	}
	full = filepath.Clean(full)
	if !s.inside(full) {
		return "", fmt.Errorf("%s is outside the workspace %s", arg, s.root)
	}
	real, err := realpath(full)
	if err != nil {
		return "", fmt.Errorf("%s: %w", arg, err)
	}
	if !s.inside(real) {
		return "", fmt.Errorf("%s is outside the workspace %s (a symlink leads to %s)", arg, s.root, real)
	}
	rel, err := filepath.Rel(s.root, real)
	if err != nil {
		return "", err
	}
	rel = filepath.ToSlash(rel)
	if Private(rel) {
		return "", fmt.Errorf("%s: .summit/ holds summit's own state (recordings, config, history) and is out of every tool's reach", arg)
	}
	return rel, nil
}

// PrivateDir is the workspace folder summit keeps its own state in. No tool reaches it: not
// by name, through a symlink, or in a glob or search.
const PrivateDir = ".summit"

// Private reports whether a workspace-relative slash path is PrivateDir or inside it.
func Private(rel string) bool {
	return rel == PrivateDir || strings.HasPrefix(rel, PrivateDir+"/")
}

// inside reports whether the clean absolute path p is the root or below it; the separator
// matters: /ws2 is not inside /ws.
func (s *Sandbox) inside(p string) bool {
	return p == s.root || strings.HasPrefix(p, s.root+string(filepath.Separator)) ||
		s.root == string(filepath.Separator)
}

// realpath resolves every symlink in the absolute, clean path p, as filepath.EvalSymlinks
// does, but tolerates a missing tail: from the first component that does not exist on, the
// rest is joined lexically. A dangling link is thus followed to where it points, so a link
// to a file outside that does not exist yet is caught before write_file creates it.
func realpath(p string) (string, error) {
	sep := string(filepath.Separator)
	todo := strings.Split(p, sep)
	cur, links := sep, 0
	for i := 0; i < len(todo); i++ {
		c := todo[i]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, todo[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = sep
		}
		todo, i = append(strings.Split(target, sep), todo[i+1:]...), -1
	}
	return cur, nil
}

// openRoot opens the workspace as an os.Root for one call.
func (s *Sandbox) openRoot() (*os.Root, error) { return os.OpenRoot(s.root) }

// fileErr names the argument the model wrote in a file error, instead of the absolute path
// the os error carries: "main.go: no such file or directory".
func fileErr(arg string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", arg, pe.Err)
	}
	return fmt.Errorf("%s: %w", arg, err)
}

// errHardLinked is the content read refused for a regular file with more than one hard link:
// any other link may be outside the workspace (a hard link made before summit started, or by
// something outside it), and nothing on the file says where the others are, so reading it
// could show the model a file the workspace does not hold. The shell is the way to such files.
// replace refuses them too: it would copy the content into a file of one link.
//
// The known cost: pnpm's node_modules are hard links into its store, and so are files of
// `cp -al` copies and some backup tools; read_file, replace and search_file_content refuse or
// skip them. write_file is unaffected and safe: it replaces the file by a rename, which leaves
// every other link with the old content.
type errHardLinked struct {
	name  string
	links uint64
}

func (e *errHardLinked) Error() string {
	return fmt.Sprintf("%s has %d hard links; summit cannot tell whether another one is outside the workspace, so it does not read it (ask for the shell if you need it)", e.name, e.links)
}

// openContent opens rel (resolved) to read its content, through root, and returns it with its
// info: a regular file with a single hard link, checked on the open descriptor, so the file
// cannot be swapped between the check and the read. It opens non-blocking, so a FIFO or a
// device is refused instead of blocking the call. arg names the file in errors.
func openContent(root *os.Root, rel, arg string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fileErr(arg, err)
	}
	st, err := f.Stat()
	if err == nil {
		err = checkContent(st, arg)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// checkContent says why the content of a file with info st may not be read, or nil.
func checkContent(st fs.FileInfo, arg string) error {
	switch {
	case st.IsDir():
		return fmt.Errorf("%s is a directory; use glob to list its files", arg)
	case !st.Mode().IsRegular():
		// A FIFO or device would block or never end.
		return fmt.Errorf("%s is not a regular file (%s)", arg, st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return &errHardLinked{name: arg, links: uint64(sys.Nlink)}
	}
	return nil
}
