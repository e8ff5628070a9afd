package gitws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Default caps on the unified diffs a ChangeSet carries; the result ref keeps the full change.
const (
	DefaultMaxFileDiff  = 256 << 10
	DefaultMaxTotalDiff = 4 << 20
)

// Options configure Open.
type Options struct {
	// SessionID names the session in refs and directories: letters, digits, '.', '_' and '-',
	// starting with a letter or digit. Required.
	SessionID string
	// CacheDir holds worktrees, session records and private git dirs. It must not be inside the
	// workspace. Default: DefaultCacheDir().
	CacheDir string
	// Git is the git binary to run (default "git", looked up in PATH).
	Git string
	// MaxFileDiff and MaxTotalDiff cap the diff text of one file and of a whole ChangeSet, in
	// bytes. Zero means DefaultMaxFileDiff and DefaultMaxTotalDiff.
	MaxFileDiff, MaxTotalDiff int
	// BasesUsed and AppliesUsed are the highest base-N and apply-N the session already holds
	// (a fork holds its parent's): the next snapshot and apply are numbered after them.
	BasesUsed, AppliesUsed int
}

// DefaultCacheDir is os.UserCacheDir()/summit.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("gitws: no cache dir: %w", err)
	}
	return filepath.Join(d, "summit"), nil
}

// Base is a snapshot of the workspace that subagents start from.
type Base struct {
	ID     string // "base-N"
	Commit string
	Tree   string
}

// Repo is one session's view of one workspace. Its methods are safe for concurrent use;
// operations on the main workspace (Snapshot, Apply, Undo) run one at a time.
type Repo struct {
	git       string
	session   string
	cacheDir  string
	workspace string // absolute, symlinks resolved
	top       string // work tree top: the repository's, or the workspace for a private dir
	prefix    string // workspace relative to top, "" or "sub/dir/"
	gitDir    string // git dir of the workspace's work tree (where its index lives)
	common    string // common git dir: objects, refs, info/exclude, worktrees/
	private   bool
	excludes  string // the user's global excludes file, "" when none
	maxFile   int
	maxTotal  int

	sessDir string // <cache>/sessions/<session>
	tmpDir  string
	wtDir   string // <cache>/worktrees/<session>
	lock    *os.File

	mu     sync.Mutex
	closed bool
	// walk orders git runs that walk every ref of the common dir (a fetch's connectivity
	// check is `rev-list --not --all`, which reads each worktree's HEAD) against
	// `git worktree add`, which writes a new worktree's HEAD as the null id before its commit:
	// a walk then dies with "bad object worktrees/NAME/HEAD". Adds hold it exclusively,
	// walks shared.
	walk      sync.RWMutex
	baseN     int
	applyN    int
	lastBase  *Base
	worktrees map[string]*Worktree
}

var idRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

func validID(what, s string) error {
	if !idRe().MatchString(s) || strings.Contains(s, "..") || strings.HasSuffix(s, ".lock") || strings.HasSuffix(s, ".") {
		return fmt.Errorf("gitws: invalid %s %q: use letters, digits, '.', '_' and '-'", what, s)
	}
	return nil
}

// record is what a session's lock file says about it, for Leftovers.
type record struct {
	Session   string    `json:"session"`
	PID       int       `json:"pid"`
	Workspace string    `json:"workspace"`
	GitDir    string    `json:"git_dir"` // common git dir holding refs/summit/<session>
	Private   bool      `json:"private"`
	Started   time.Time `json:"started"`
	Kept      bool      `json:"kept,omitempty"`
}

// Open prepares workspace for session opts.SessionID: it finds (or, for a folder that is not a
// repository, creates under CacheDir) the git dir, makes sure .summit/ is excluded, and takes the
// session's lock. It fails when git is missing or older than MinGitVersion (ErrGitMissing), when
// the session is already open, or when CacheDir is inside the workspace.
func Open(ctx context.Context, workspace string, opts Options) (*Repo, error) {
	if err := validID("session id", opts.SessionID); err != nil {
		return nil, err
	}
	bin, err := findGit(ctx, opts.Git)
	if err != nil {
		return nil, err
	}
	ws, err := canonical(workspace)
	if err != nil {
		return nil, fmt.Errorf("gitws: workspace: %w", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("gitws: workspace %s is not a directory", ws)
	}
	cache := opts.CacheDir
	if cache == "" {
		if cache, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return nil, fmt.Errorf("gitws: cache dir: %w", err)
	}
	if cache, err = canonical(cache); err != nil {
		return nil, fmt.Errorf("gitws: cache dir: %w", err)
	}
	r := &Repo{
		git: bin, session: opts.SessionID, cacheDir: cache, workspace: ws,
		maxFile: opts.MaxFileDiff, maxTotal: opts.MaxTotalDiff,
		worktrees: map[string]*Worktree{}, baseN: opts.BasesUsed, applyN: opts.AppliesUsed,
	}
	if r.maxFile <= 0 {
		r.maxFile = DefaultMaxFileDiff
	}
	if r.maxTotal <= 0 {
		r.maxTotal = DefaultMaxTotalDiff
	}
	if err := r.locate(ctx); err != nil {
		return nil, err
	}
	if within(r.top, cache) {
		return nil, fmt.Errorf("gitws: cache dir %s is inside the work tree %s; worktrees must live outside it", cache, r.top)
	}
	if err := r.ensureExclude(); err != nil {
		return nil, err
	}
	r.excludes = globalExcludes(ctx, bin)
	r.sessDir = filepath.Join(cache, "sessions", r.session)
	r.tmpDir = filepath.Join(r.sessDir, "tmp")
	r.wtDir = filepath.Join(cache, "worktrees", r.session)
	if err := os.MkdirAll(r.tmpDir, 0o700); err != nil {
		return nil, fmt.Errorf("gitws: %w", err)
	}
	lf, err := lockSession(filepath.Join(r.sessDir, "lock"))
	if err != nil {
		return nil, fmt.Errorf("gitws: session %s: %w", r.session, err)
	}
	r.lock = lf
	rec := record{Session: r.session, PID: os.Getpid(), Workspace: ws, GitDir: r.common, Private: r.private, Started: time.Now().UTC()}
	if err := writeRecord(lf, rec); err != nil {
		unlockSession(lf)
		return nil, err
	}
	if err := r.loadRefs(ctx); err != nil {
		unlockSession(lf)
		return nil, err
	}
	return r, nil
}

// Workspace is the absolute workspace path.
func (r *Repo) Workspace() string { return r.workspace }

// Private reports whether the workspace is not a repository and uses a private git dir.
func (r *Repo) Private() bool { return r.private }

// canonical is the absolute path with symlinks resolved.
func canonical(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(a)
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// locate finds the repository of the workspace, or sets up its private git dir.
func (r *Repo) locate(ctx context.Context) error {
	out, _, err := runGit(ctx, r.git, gitCmd{dir: r.workspace, args: []string{
		"rev-parse", "--path-format=absolute", "--is-inside-work-tree", "--show-toplevel", "--git-dir", "--git-common-dir", "--show-prefix"}})
	if err == nil {
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) >= 4 && lines[0] == "true" {
			r.top, r.gitDir, r.common = lines[1], lines[2], lines[3]
			if len(lines) >= 5 {
				r.prefix = lines[4]
			}
			for _, p := range []*string{&r.top, &r.gitDir, &r.common} {
				if c, err := canonical(*p); err == nil {
					*p = c
				}
			}
			return nil
		}
		return fmt.Errorf("gitws: %s is inside a git dir, not a work tree", r.workspace)
	}
	var ge *GitError
	if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "not a git repository") {
		return err
	}
	// Not a repository: a private bare git dir under the cache, used with GIT_DIR/GIT_WORK_TREE.
	dir := privateDir(r.cacheDir, r.workspace)
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return fmt.Errorf("gitws: %w", err)
		}
		if _, _, err := runGit(ctx, r.git, gitCmd{dir: r.cacheDir, args: []string{"init", "--bare", "-q", "--template=", "--", dir}}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "summit-workspace"), []byte(r.workspace+"\n"), 0o600); err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	r.private, r.top, r.gitDir, r.common, r.prefix = true, r.workspace, dir, dir, ""
	return nil
}

// excludePaths are the .summit directories kept out of every snapshot, relative to the top.
func (r *Repo) excludePaths() []string {
	if r.prefix == "" {
		return []string{".summit"}
	}
	return []string{".summit", r.prefix + ".summit"}
}

// ensureExclude appends /.summit/ (and the workspace's own .summit/ when it is a subdirectory)
// to info/exclude of the common git dir when missing, keeping the rest of the file.
func (r *Repo) ensureExclude() error {
	path := filepath.Join(r.common, "info", "exclude")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("gitws: %w", err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add bytes.Buffer
	for _, p := range r.excludePaths() {
		line := "/" + p + "/"
		if !have[line] {
			add.WriteString(line + "\n")
		}
	}
	if add.Len() == 0 {
		return nil
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		add = *bytes.NewBuffer(append([]byte("\n"), add.Bytes()...))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	if _, err := f.Write(add.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("gitws: %w", err)
	}
	return f.Close()
}

func writeRecord(f *os.File, rec record) error {
	b, _ := json.MarshalIndent(rec, "", "  ")
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	if _, err := f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	return nil
}

// sessionRef is refs/summit/<session>/<name>.
func (r *Repo) sessionRef(name string) string { return "refs/summit/" + r.session + "/" + name }

var (
	baseRefRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^base-([0-9]+)$`) })
	applyRefRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^apply-([0-9]+)-(pre|post)$`) })
)

// loadRefs continues the numbering of a session that was opened before and restores its newest
// base, so reopening an unchanged workspace gives that base back.
func (r *Repo) loadRefs(ctx context.Context) error {
	out, err := r.plain(ctx, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(tree)", "--", "refs/summit/"+r.session+"/")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 3 {
			continue
		}
		name := strings.TrimPrefix(f[0], "refs/summit/"+r.session+"/")
		if m := baseRefRe().FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n > r.baseN {
				r.baseN = n
				r.lastBase = &Base{ID: name, Commit: f[1], Tree: f[2]}
			}
		} else if m := applyRefRe().FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[1])
			r.applyN = max(r.applyN, n)
		}
	}
	return nil
}

// repoEnv points git at the workspace's repository (needed for the private dir only: a user's
// repository is found from the working directory).
func (r *Repo) repoEnv(workTree bool) []string {
	if !r.private {
		return nil
	}
	if workTree {
		return []string{"GIT_DIR=" + r.gitDir, "GIT_WORK_TREE=" + r.top}
	}
	return []string{"GIT_DIR=" + r.gitDir}
}

// plain runs a git command against the repository that does not need a work tree or index.
func (r *Repo) plain(ctx context.Context, args ...string) ([]byte, error) {
	out, _, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: r.repoEnv(false), args: args})
	return out, err
}

// plainIn is plain with stdin.
func (r *Repo) plainIn(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	out, _, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: r.repoEnv(false), stdin: bytes.NewReader(stdin), args: args})
	return out, err
}

func trim(b []byte) string { return strings.TrimSpace(string(b)) }

// commit writes a commit of tree with the given parents and returns its id.
func (r *Repo) commit(ctx context.Context, tree, msg string, parents ...string) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		if p != "" {
			args = append(args, "-p", p)
		}
	}
	args = append(args, "-m", msg)
	out, err := r.plain(ctx, args...)
	return trim(out), err
}

// setRefs creates or moves refs (name -> commit) in one transaction.
func (r *Repo) setRefs(ctx context.Context, refs ...string) error {
	var b strings.Builder
	for i := 0; i+1 < len(refs); i += 2 {
		fmt.Fprintf(&b, "update %s %s\n", refs[i], refs[i+1])
	}
	_, err := r.plainIn(ctx, []byte(b.String()), "update-ref", "--stdin")
	return err
}

func (r *Repo) checkOpen() error {
	if r.closed {
		return errors.New("gitws: repo is closed")
	}
	return nil
}

// globalExcludes finds the user's global excludes file, so that snapshots leave out what the
// user's own git status leaves out, although no global config is read otherwise: core.excludesFile
// from ~/.gitconfig or $XDG_CONFIG_HOME/git/config (read with git config --file), else git's
// default $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore).
func globalExcludes(ctx context.Context, bin string) string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var files []string
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	found := ""
	for _, f := range files { // later files win, as in git
		if _, err := os.Stat(f); err != nil {
			continue
		}
		out, _, err := runGit(ctx, bin, gitCmd{dir: filepath.Dir(f), env: []string{"HOME=" + home},
			args: []string{"config", "--file", f, "--path", "--get", "core.excludesFile"}, ok: []int{1}})
		if v := trim(out); err == nil && v != "" {
			found = v
		}
	}
	if found == "" && xdg != "" {
		found = filepath.Join(xdg, "git", "ignore")
	}
	if found == "" || !filepath.IsAbs(found) {
		return ""
	}
	if fi, err := os.Stat(found); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return found
}
