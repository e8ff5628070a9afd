package gitws

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmarks share one generated repository of 10k files (~100 MB), made once per run and
// removed by TestMain. Run them with, for example:
//
//	go test ./session/gitws/ -run '^$' -bench . -benchtime=5x -count=3
//
// BenchmarkAddWorktree vs BenchmarkPlainWorktreeAdd gives the cost of isolation as a ratio to a
// plain `git worktree add`; both report the worktree's extra disk (extra-disk-B/op).
const (
	benchFiles    = 10_000
	benchFileSize = 10 << 10 // ~100 MB in all
)

var (
	benchOnce sync.Once
	benchRoot string
	benchRepo string
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// benchWorkspace returns the generated repository: 100 directories of 100 text files, committed
// and packed (as a real repository of that size would be), with a few uncommitted edits and untracked files (what a user's workspace looks like).
func benchWorkspace(b *testing.B) string {
	b.Helper()
	if testing.Short() {
		b.Skip("generates a 100 MB repository")
	}
	benchOnce.Do(func() {
		benchRoot, benchErr = os.MkdirTemp("", "gitws-bench-")
		if benchErr != nil {
			return
		}
		benchRepo = filepath.Join(benchRoot, "repo")
		benchErr = generateRepo(benchRepo)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchRepo
}

func generateRepo(dir string) error {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("func return if else for range var const type struct map slice int string error nil true false package import go defer select case switch")
	line := func() string {
		var sb strings.Builder
		sb.WriteString("\t")
		for range 6 + rng.IntN(8) {
			sb.WriteString(words[rng.IntN(len(words))])
			fmt.Fprintf(&sb, "%d ", rng.IntN(100000))
		}
		sb.WriteString("\n")
		return sb.String()
	}
	for i := range benchFiles {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("f%03d.go", i%100))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		var sb strings.Builder
		for sb.Len() < benchFileSize {
			sb.WriteString(line())
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n"), 0o644); err != nil {
		return err
	}
	ctx := context.Background()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "generated"}, {"gc", "-q", "--prune=now"}} {
		if _, _, err := runGit(ctx, "git", gitCmd{dir: dir, args: args}); err != nil {
			return err
		}
	}
	// The user's uncommitted work: 10 edited files, 5 untracked ones.
	for i := range 10 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d/f%03d.go", i, i))
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(f, "// user edit %d\n", i)
		f.Close()
	}
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("untracked%d.txt", i)), []byte("new\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// dirSize is the apparent size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// extraDisk is what one worktree costs: its directory and its metadata in the git dir.
func extraDisk(common, wt string) int64 {
	n := dirSize(wt)
	if c := worktreeCommonDir(wt); c != "" {
		b, _ := os.ReadFile(filepath.Join(wt, ".git"))
		n += dirSize(strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir: ")))
	}
	return n
}

func BenchmarkPlainWorktreeAdd(b *testing.B) {
	ws := benchWorkspace(b)
	ctx := context.Background()
	dir := b.TempDir()
	var disk int64
	settle()
	b.ResetTimer()
	for i := range b.N {
		path := filepath.Join(dir, fmt.Sprintf("plain-%d", i))
		if _, _, err := runGit(ctx, "git", gitCmd{dir: ws, args: []string{"worktree", "add", "--detach", "--", path, "HEAD"}}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		disk = extraDisk(filepath.Join(ws, ".git"), path)
		if _, _, err := runGit(ctx, "git", gitCmd{dir: ws, args: []string{"worktree", "remove", "--force", "--", path}}); err != nil {
			b.Fatal(err)
		}
		settle()
		b.StartTimer()
	}
	b.ReportMetric(float64(disk), "extra-disk-B/op")
}

// BenchmarkAddWorktree is what isolating one subagent costs: a snapshot of the workspace
// (uncommitted edits and untracked files included) and a worktree at it.
func BenchmarkAddWorktree(b *testing.B) {
	ws := benchWorkspace(b)
	ctx := context.Background()
	r, err := Open(ctx, ws, Options{SessionID: fmt.Sprintf("bench-add-%d", b.N), CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { b.StopTimer(); r.Close(ctx, false) }() // cleanup is not timed
	var disk int64
	var snap time.Duration
	settle()
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		base, err := r.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		snap += time.Since(t0)
		wt, err := r.AddWorktree(ctx, base, fmt.Sprintf("sa-%d", i))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		disk = extraDisk(r.common, wt.Path)
		if err := r.Remove(ctx, wt); err != nil {
			b.Fatal(err)
		}
		settle()
		b.StartTimer()
	}
	b.ReportMetric(float64(disk), "extra-disk-B/op")
	b.ReportMetric(float64(snap.Nanoseconds())/float64(b.N), "snapshot-ns/op")
}

// BenchmarkIsolationRatio measures the ratio directly: each iteration makes a plain worktree
// and an isolated one (snapshot + AddWorktree) back to back, in alternating order, so both see
// the same machine; "ratio" is the isolated time over the plain time.
func BenchmarkIsolationRatio(b *testing.B) {
	ws := benchWorkspace(b)
	ctx := context.Background()
	r, err := Open(ctx, ws, Options{SessionID: fmt.Sprintf("bench-ratio-%d", b.N), CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { b.StopTimer(); r.Close(ctx, false) }() // cleanup is not timed
	dir := b.TempDir()
	var plain, isolated time.Duration
	plainOnce := func(i int) {
		path := filepath.Join(dir, fmt.Sprintf("plain-%d", i))
		t0 := time.Now()
		if _, _, err := runGit(ctx, "git", gitCmd{dir: ws, args: []string{"worktree", "add", "--detach", "--", path, "HEAD"}}); err != nil {
			b.Fatal(err)
		}
		plain += time.Since(t0)
		if _, _, err := runGit(ctx, "git", gitCmd{dir: ws, args: []string{"worktree", "remove", "--force", "--", path}}); err != nil {
			b.Fatal(err)
		}
		settle()
	}
	isolatedOnce := func(i int) {
		t0 := time.Now()
		base, err := r.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		wt, err := r.AddWorktree(ctx, base, fmt.Sprintf("sa-%d", i))
		if err != nil {
			b.Fatal(err)
		}
		isolated += time.Since(t0)
		if err := r.Remove(ctx, wt); err != nil {
			b.Fatal(err)
		}
		settle()
	}
	settle()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			plainOnce(i)
			isolatedOnce(i)
		} else {
			isolatedOnce(i)
			plainOnce(i)
		}
	}
	b.ReportMetric(float64(isolated)/float64(plain), "ratio")
	b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "plain-ns/op")
	b.ReportMetric(float64(isolated.Nanoseconds())/float64(b.N), "isolated-ns/op")
}

// BenchmarkChanges50Files captures a 50-file change set (45 edited files, 5 new ones) in a
// worktree of the 10k-file repository.
func BenchmarkChanges50Files(b *testing.B) {
	ws := benchWorkspace(b)
	ctx := context.Background()
	r, err := Open(ctx, ws, Options{SessionID: fmt.Sprintf("bench-changes-%d", b.N), CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { b.StopTimer(); r.Close(ctx, false) }() // cleanup is not timed
	base, err := r.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, base, "sa-1")
	if err != nil {
		b.Fatal(err)
	}
	// A subagent works for a while before it stops: long enough for AddWorktree's background
	// index refresh (see refreshIndex) to be over, which takes about a second and a half here.
	time.Sleep(1100 * time.Millisecond)
	wt.stopRefresh()
	settle()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for k := range 45 {
			p := filepath.Join(wt.Root(), fmt.Sprintf("d%02d/f%03d.go", 50+k, k))
			old, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			s := string(old)
			mid := strings.IndexByte(s[len(s)/2:], '\n') + len(s)/2 + 1
			edit := fmt.Sprintf("\t// edit %d of iteration %d\n", k, i)
			if err := os.WriteFile(p, []byte(s[:mid]+edit+s[mid:]), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		for k := range 5 {
			p := filepath.Join(wt.Root(), fmt.Sprintf("new/n%d.go", k))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(fmt.Sprintf("package n\n// %d %d\n", k, i)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		settle()
		b.StartTimer()
		cs, err := r.Changes(ctx, wt)
		if err != nil {
			b.Fatal(err)
		}
		if len(cs.Files) != 50 {
			b.Fatalf("%d files changed, want 50", len(cs.Files))
		}
	}
}
