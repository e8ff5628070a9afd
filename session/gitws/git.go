package gitws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// MinGitVersion is the oldest git this package works with: git merge-tree --write-tree appeared
// in 2.38.
const MinGitVersion = "2.38"

// ErrGitMissing is wrapped by the error Open returns when no git (or too old a git) is found.
var ErrGitMissing = errors.New("gitws: git " + MinGitVersion + " or newer is required")

const installHint = "install git " + MinGitVersion + " or newer (https://git-scm.com/downloads; " +
	"for example `apt install git`, `dnf install git`, `brew install git`) and make sure it is on PATH"

// fixedDate is the author and committer date of every commit summit writes. With fixed names and
// dates a commit is determined by its tree, parents and message, so the same workspace gives the
// same snapshot commit in every run.
const fixedDate = "946684800 +0000"

// configArgs go before every git subcommand. They pin behaviour that a repository's config could
// otherwise change, and switch off everything that could write outside what the package promises
// to write (hooks, reflogs, auto gc, fsmonitor daemons, split index files).
var configArgs = []string{
	"-c", "core.autocrlf=false",
	"-c", "core.safecrlf=false",
	"-c", "core.quotepath=false",
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "core.fsmonitor=false",
	"-c", "core.splitIndex=false",
	"-c", "core.ignoreStat=false",
	"-c", "core.logAllRefUpdates=false",
	"-c", "core.pager=cat",
	"-c", "color.ui=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "commit.gpgSign=false",
	"-c", "submodule.recurse=false",
	"-c", "advice.detachedHead=false",
	"-c", "advice.addEmbeddedRepo=false",
	"-c", "advice.addIgnoredFile=false",
	"-c", "init.defaultBranch=main",
}

// cleanEnv is the whole environment of a git process: nothing of the caller's GIT_* variables,
// config, locale or identity leaks in.
func cleanEnv(extra ...string) []string {
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_CONFIG_COUNT=0",
		"LC_ALL=C",
		"LANG=C",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=summit",
		"GIT_AUTHOR_EMAIL=summit@localhost",
		"GIT_AUTHOR_DATE=" + fixedDate,
		"GIT_COMMITTER_NAME=summit",
		"GIT_COMMITTER_EMAIL=summit@localhost",
		"GIT_COMMITTER_DATE=" + fixedDate,
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_EDITOR=:",
	}
	for _, k := range []string{"PATH", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// GitError is a git command that failed.
type GitError struct {
	Args   []string // the git arguments after the fixed -c options
	Code   int      // exit code, -1 when git did not run or was killed
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("gitws: git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// gitCmd describes one git invocation.
type gitCmd struct {
	dir   string   // working directory
	env   []string // extra environment (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE)
	stdin io.Reader
	args  []string
	ok    []int // exit codes besides 0 that are not errors (merge-tree: 1 = conflicts)
}

// runGit runs git and returns its stdout and exit code.
func runGit(ctx context.Context, bin string, c gitCmd) ([]byte, int, error) {
	args := append(append([]string{}, configArgs...), c.args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = c.dir
	cmd.Env = cleanEnv(c.env...)
	cmd.Stdin = c.stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil {
		return out.Bytes(), 0, nil
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		for _, k := range c.ok {
			if code == k && ctx.Err() == nil {
				return out.Bytes(), code, nil
			}
		}
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return out.Bytes(), code, &GitError{Args: c.args, Code: code, Stderr: errb.String(), Err: err}
}

var (
	gitMu    sync.Mutex
	gitFound = map[string]string{} // name as given -> resolved path, once its version passed
)

var versionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`) })

// findGit resolves the git binary and checks its version once per process.
func findGit(ctx context.Context, name string) (string, error) {
	if name == "" {
		name = "git"
	}
	gitMu.Lock()
	defer gitMu.Unlock()
	if p, ok := gitFound[name]; ok {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %q was not found (%v); %s", ErrGitMissing, name, err, installHint)
	}
	out, _, err := runGit(ctx, p, gitCmd{args: []string{"version"}})
	if err != nil {
		return "", fmt.Errorf("%w: running %s version failed: %v; %s", ErrGitMissing, p, err, installHint)
	}
	v := strings.TrimSpace(string(out))
	m := versionRe().FindStringSubmatch(v)
	if m == nil {
		return "", fmt.Errorf("%w: cannot read the version of %s from %q; %s", ErrGitMissing, p, v, installHint)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < 2 || major == 2 && minor < 38 {
		return "", fmt.Errorf("%w: %s is %q; %s", ErrGitMissing, p, v, installHint)
	}
	gitFound[name] = p
	return p, nil
}

// splitZ splits NUL-terminated records.
func splitZ(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.Split(string(b), "\x00")
	if s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	return s
}
