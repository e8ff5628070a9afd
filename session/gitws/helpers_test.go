package gitws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// gitT runs git in dir as the user would (clean config, fixed identity) and returns stdout.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, _, err := runGit(context.Background(), "git", gitCmd{dir: dir, args: args})
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(dir, rel string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil
}

const mainGo = `package main

import "fmt"

func greet() string {
	return "hello"
}

func other() int {
	return 1
}

func main() {
	fmt.Println(greet(), other())
}
`

// newRepo makes a committed repository with a .gitignore, a tracked file and a stash entry.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	write(t, dir, "main.go", mainGo)
	write(t, dir, "README.md", "readme\n")
	write(t, dir, "pkg/util.go", "package pkg\n\nfunc Util() {}\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "init")
	gitT(t, dir, "tag", "v1")
	// A stash entry, so the test sees the stash kept.
	write(t, dir, "README.md", "stashed edit\n")
	gitT(t, dir, "stash", "-q")
	return dir
}

func open(t testing.TB, ws, sess, cache string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), ws, Options{SessionID: sess, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// userState fingerprints everything of the user's git state the package must not touch, and
// the working tree (content and mode of every file outside .git and .summit).
func userState(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	headFile, _ := os.ReadFile(filepath.Join(dir, ".git", "HEAD"))
	b.WriteString("HEAD file: " + string(headFile))
	b.WriteString("HEAD: " + gitT(t, dir, "rev-parse", "HEAD"))
	idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	b.WriteString("index: " + sum(idx) + "\n")
	for _, l := range strings.Split(gitT(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(l, "refs/summit/") {
			b.WriteString("ref: " + l + "\n")
		}
	}
	b.WriteString("stash: " + gitT(t, dir, "stash", "list"))
	b.WriteString(treeSum(t, dir))
	return b.String()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// treeSum lists every file under dir (but .git and .summit) with its mode and content hash.
func treeSum(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Name() == ".git" && p != dir || d.IsDir() && d.Name() == ".summit" {
			if !d.IsDir() {
				return nil
			}
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := rel + " " + fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + sum(b)
		} else if fi.Mode()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			line += " -> " + l
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// showFile reads path at commit from the repository around dir.
func showFile(t testing.TB, r *Repo, commit, path string) (string, bool) {
	t.Helper()
	out, _, err := runGit(context.Background(), r.git, gitCmd{dir: r.top, env: r.repoEnv(false), args: []string{"show", commit + ":" + path}})
	if err != nil {
		return "", false
	}
	return string(out), true
}

func lsTree(t testing.TB, r *Repo, commit string) []string {
	t.Helper()
	out, _, err := runGit(context.Background(), r.git, gitCmd{dir: r.top, env: r.repoEnv(false), args: []string{"ls-tree", "-r", "--name-only", commit}})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}

func sh(t testing.TB, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh %q: %v\n%s", script, err, out)
	}
}

func fileOf(cs ChangeSet, path string) *FileChange {
	for i := range cs.Files {
		if cs.Files[i].Path == path {
			return &cs.Files[i]
		}
	}
	return nil
}

// gitDirState fingerprints every file in dir/.git except objects (which summit may add) and
// info/exclude (which Open may append to): the hard invariant says nothing else changes once a
// session is closed.
func gitDirState(t testing.TB, dir string, skip ...string) string {
	t.Helper()
	gd := filepath.Join(dir, ".git")
	var lines []string
	err := filepath.WalkDir(gd, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(gd, p)
		if rel == "objects" || slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		if rel == filepath.Join("info", "exclude") {
			return nil
		}
		line := rel
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + sum(b)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
