package tools

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// baseEnv are the variables every process summit starts inherits from summit's environment
// (AllowEnv): where things are, the locale, and the tool caches' settings. Nothing else
// passes unless the user names it (Options.PassEnv, the config's env_passthrough): an
// allow-list, because secrets hide under names no pattern can guess (GITHUB_PAT,
// DATABASE_URL, PW). Proxies are left out too: their URLs may hold a password.
var baseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR",
	"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS", "GOPRIVATE", "GONOPROXY",
	"GONOSUMDB", "GOSUMDB", "GOTOOLCHAIN", "GOTOOLDIR", "CGO_ENABLED", "CARGO_HOME", "RUSTUP_HOME",
	"npm_config_cache", "NPM_CONFIG_CACHE", "PIP_CACHE_DIR", "XDG_CACHE_HOME", "NVM_DIR", "NVM_BIN",
	"VOLTA_HOME", "PYENV_ROOT", "JAVA_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"}

// AllowEnv is environ reduced to an allow-list: the base variables (baseEnv and LC_*) and
// those named in pass (the user's choice: passed even when the name looks secret), with
// HOME added from summit's own environment when missing (git and go need it). The shell
// tool, hooks, MCP servers and ACP agents start from it.
func AllowEnv(environ, pass []string) []string {
	env := make([]string, 0, len(baseEnv)+len(pass))
	home := false
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" || !(slices.Contains(baseEnv, name) || strings.HasPrefix(name, "LC_") || slices.Contains(pass, name)) {
			continue
		}
		home = home || name == "HOME"
		env = append(env, kv)
	}
	if h := os.Getenv("HOME"); !home && h != "" {
		env = append(env, "HOME="+h)
	}
	return env
}

// PassEnv are the names the user passes besides the allow-list (Options.PassEnv), for a
// caller that builds a process's environment itself (an ACP agent's).
func (s *Sandbox) PassEnv() []string { return slices.Clone(s.o.PassEnv) }

// ScrubEnv is AllowEnv with no extra names.
//
// Deprecated: kept for callers of the old deny-list; use AllowEnv with the user's names.
func ScrubEnv(environ []string) []string { return AllowEnv(environ, nil) }

// setEnv is env with each of kvs ("NAME=value") replacing any entry of that name.
func setEnv(env []string, kvs ...string) []string {
	out := slices.Clone(env)
	for _, kv := range kvs {
		name, _, _ := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		out = append(out, kv)
	}
	return out
}

// privateDir is the sandbox's own directory for what belongs to this subagent alone (its build
// caches, its copy of its worktree's git dir), made on first use and removed by Close. It is
// not below the root, so nothing of it shows in the subagent's changes.
func (s *Sandbox) privateDir() string {
	s.privMu.Lock()
	defer s.privMu.Unlock()
	switch {
	case s.priv != "":
	case s.o.PrivateDir != "":
		if os.MkdirAll(s.o.PrivateDir, 0o700) == nil {
			s.priv = s.o.PrivateDir
		}
	default:
		if d, err := os.MkdirTemp("", "summit-private-"); err == nil {
			s.priv = d
		}
	}
	return s.priv
}

// Close removes the sandbox's private directory (its caches), if it made one. The sandbox
// may still be used: the next jailed command starts with empty caches.
func (s *Sandbox) Close() error {
	s.privMu.Lock()
	defer s.privMu.Unlock()
	if s.priv == "" {
		return nil
	}
	err := os.RemoveAll(s.priv)
	s.priv = ""
	return err
}

// writable lists where a jailed process may write besides what its caller adds: the root and
// the sandbox's private directory (its caches; the caller adds a temp dir of its own). Not
// the shared temp dir, nor the user's caches: workspaces and summit's worktrees live there,
// and a writable shared module or build cache is a poisoned module trusted by every later
// build on the machine.
func (s *Sandbox) writable() []string {
	rw := []string{s.root}
	if p := s.privateDir(); p != "" {
		rw = append(rw, p)
	}
	return rw
}

// privateEnv is env pointed at the subagent's private caches (see doc.go, "Caches"): a Go
// build cache and module cache of its own, the module cache filled from the shared one
// (GOPROXY file:// first, read only; then the user's proxy, which needs the network), npm,
// pip and XDG caches of its own, and, in a linked worktree, git objects of its own.
func (s *Sandbox) privateEnv(env []string) []string {
	p := s.privateDir()
	if p == "" {
		return env
	}
	get := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	proxy := get("GOPROXY")
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	if shared := sharedModCache(); shared != "" {
		proxy = "file://" + filepath.Join(shared, "cache", "download") + "," + proxy
	}
	kvs := []string{"GOCACHE=" + filepath.Join(p, "go-build"), "GOMODCACHE=" + filepath.Join(p, "gomod"), "GOPROXY=" + proxy,
		"npm_config_cache=" + filepath.Join(p, "npm"), "PIP_CACHE_DIR=" + filepath.Join(p, "pip"),
		"XDG_CACHE_HOME=" + filepath.Join(p, "cache")}
	if gitDir, priv := s.gitLayout(); gitDir != "" && priv != "" {
		kvs = append(kvs, "GIT_OBJECT_DIRECTORY="+filepath.Join(priv, "objects"),
			"GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(gitCommon(gitDir), "objects"),
			// gc would write in the common dir, which it may not.
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0")
	}
	return setEnv(env, kvs...)
}

// sharedBuildCache is the user's Go build cache, as go finds it without running go env; ""
// when it is off or relative.
func sharedBuildCache() string {
	d := os.Getenv("GOCACHE")
	if d == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		d = filepath.Join(c, "go-build")
	}
	if d == "off" || !filepath.IsAbs(d) {
		return ""
	}
	return d
}

// sharedModCache is the user's Go module cache, as go finds it without running go env.
func sharedModCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		return filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, "go", "pkg", "mod")
	}
	return ""
}

// gitLayout finds, when the root lies in a linked git worktree (summit's worktrees are), its
// per-worktree git dir (<common>/worktrees/<id>: HEAD, index, logs) and prepares the
// subagent's private copy of it in its private directory (private/gitdir, and
// private/objects for the objects it writes). Inside its mount namespace the copy is mounted
// over the real one, so `git commit` works there: new objects go to private/objects (the
// shared ones are read as alternates, never written: no existing object can be replaced), and
// HEAD, the index and the logs it moves are the copy's. The user's refs, HEAD, index and
// objects are never written, and a branch or tag it makes is refused (the common refs are
// read-only). The copy is made again when the real HEAD moved (summit rebased the worktree).
// It returns "" when the root is in no linked worktree.
func (s *Sandbox) gitLayout() (gitDir, private string) {
	s.gitOnce.Do(func() {
		for d := s.root; ; d = filepath.Dir(d) {
			b, err := os.ReadFile(filepath.Join(d, ".git"))
			if err == nil {
				g, ok := strings.CutPrefix(strings.TrimSpace(string(bytes.SplitN(b, []byte("\n"), 2)[0])), "gitdir: ")
				if ok {
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					if _, err := os.Stat(filepath.Join(g, "commondir")); err == nil {
						s.gitDir = filepath.Clean(g)
					}
				}
				break
			}
			if _, err := os.Stat(filepath.Join(d, ".git")); err == nil || filepath.Dir(d) == d {
				break
			}
		}
	})
	if s.gitDir == "" || s.privateDir() == "" {
		return "", ""
	}
	priv := filepath.Join(s.privateDir(), "git")
	head, _ := os.ReadFile(filepath.Join(s.gitDir, "HEAD"))
	if seeded, err := os.ReadFile(filepath.Join(priv, "seeded-head")); err != nil || !bytes.Equal(seeded, head) {
		os.RemoveAll(filepath.Join(priv, "gitdir"))
		if err := copyTree(s.gitDir, filepath.Join(priv, "gitdir")); err != nil {
			return "", ""
		}
		os.MkdirAll(filepath.Join(priv, "objects"), 0o700)
		os.WriteFile(filepath.Join(priv, "seeded-head"), head, 0o600)
	}
	return s.gitDir, priv
}

// gitCommon is the common git dir of a per-worktree git dir (its commondir file).
func gitCommon(gitDir string) string {
	f, err := os.Open(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	c := strings.TrimSpace(sc.Text())
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}

// copyTree copies the regular files and directories below src to dst (a per-worktree git
// dir: small files only).
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case fi.IsDir():
			return os.MkdirAll(to, 0o700)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, fi.Mode().Perm()|0o200)
		}
		return nil
	})
}
