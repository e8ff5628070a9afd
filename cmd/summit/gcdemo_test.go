package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/fork"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/ui"
)

// quitDemo runs the demo's tour headless with summit demo's own session (demoSession: a
// temporary sample workspace, the recording in the demo folder), then ends it as summit demo
// does when the user quits (demoCleanup, then the workspace removed). It returns the recording
// and the workspace's files at the end.
func quitDemo(t *testing.T) (rec string, final map[string]string) {
	t.Helper()
	return endDemo(t, true)
}

// endDemo is quitDemo; without cleanup, it ends as summit demo did before it kept bundles
// (the workspace removed, its private git dir left).
func endDemo(t *testing.T, cleanup bool) (rec string, final map[string]string) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir()) // the demo's temporary workspace
	f, err := demoSession(1)
	if err != nil {
		t.Fatal(err)
	}
	f.approve = "all"
	script := filepath.Join(t.TempDir(), "demo.summit")
	os.WriteFile(script, []byte(demoScript("usage")), 0o644)
	var out, errb bytes.Buffer
	if err := headless(f, script, &out, &errb); err != nil {
		if ee := (*exitError)(nil); !errors.As(err, &ee) || ee.code != 1 { // the tester's run may fail: part of the tour
			t.Fatalf("demo run: %v\n%s", err, errb.String())
		}
	}
	if f.recorded == "" {
		t.Fatalf("the demo recorded nothing\n%s", errb.String())
	}
	final = files(t, f.workspace)
	if !cleanup {
		os.RemoveAll(f.workspace)
		return f.recorded, final
	}
	demoCleanup(f, &errb)
	os.RemoveAll(f.workspace)
	if strings.Contains(errb.String(), "could not be kept") {
		t.Fatalf("demo cleanup: %s", errb.String())
	}
	return f.recorded, final
}

// TestDemoQuitLeavesNothingAndForksAfterGC: after summit demo ends, nothing is left in the
// cache (no private git dir: no leftover is reported, by a start or by gc), its snapshots are
// kept in a bundle beside its recording, and after summit gc, forking the demo recording at
// every marker still restores its files, and /apply of the parent's convergence works in a
// fork; without the bundle, a fork says in words that the snapshot is gone. Old code: the demo
// left its private git dir (a leftover every start reported), gc removed the snapshots forks
// rebuild from, and /apply in such a fork failed with git's raw "fatal:".
func TestDemoQuitLeavesNothingAndForksAfterGC(t *testing.T) {
	forkEnv(t)
	rec, final := quitDemo(t)
	cache := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "summit")
	if repos, _ := filepath.Glob(filepath.Join(cache, "repos", "*")); len(repos) > 0 {
		t.Errorf("the demo left private git dirs: %v", repos)
	}
	if _, err := os.Stat(fork.BundlePath(rec)); err != nil {
		t.Fatalf("no bundle beside the demo's recording: %v", err)
	}
	if code, out, _ := summit(t, "gc", "--dry-run"); code != 0 || !strings.Contains(out, "nothing to clean") {
		t.Errorf("gc --dry-run after the demo: %d\n%s", code, out)
	}
	other := t.TempDir()
	if _, _, errOut, _ := runScript(t, other, "/agents\n"); strings.Contains(errOut, "leftover") {
		t.Errorf("a start after the demo reports leftovers:\n%s", errOut)
	}
	if code, _, errb := summit(t, "gc"); code != 0 {
		t.Fatalf("gc: %d\n%s", code, errb)
	}
	if _, err := os.Stat(fork.BundlePath(rec)); err != nil {
		t.Fatalf("gc removed the bundle of a recording on disk: %v", err)
	}

	orig := map[string]string{}
	for name, body := range demoFiles {
		sum := sha256.Sum256([]byte(body))
		orig[name] = hex.EncodeToString(sum[:])
	}
	ix, err := record.BuildIndexFile(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]uint64{}
	var cvDone uint64
	for i := 0; i < ix.Len(); i++ {
		switch ix.Type(i) {
		case session.TypeChangesApplied:
			e, _ := ix.ReadEvent(mustOpen(t, rec), i)
			for _, f := range e.Data.(session.ChangesApplied).Files {
				applied[f] = e.Seq
			}
		case session.TypeConvergenceComplete:
			cvDone = ix.Seq(i)
		}
	}
	if applied["cart.go"] == 0 || applied["README.md"] == 0 || cvDone == 0 {
		t.Fatalf("the demo applied %v, cv-1 completed at #%d", applied, cvDone)
	}
	// Each fork's workspace, as summit fork makes it (forkFlags.restore; a whole fork session
	// per marker would cost seconds each: TestForkAtEveryMarker runs those).
	marks := ix.Positions(ui.MarkerTypes()...)
	for _, i := range marks {
		seq := ix.Seq(i)
		p, err := fork.Load(rec, seq)
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		_, into, err := (&forkFlags{plan: p, into: filepath.Join(t.TempDir(), "ws")}).restore("s-fork-"+strconv.FormatUint(seq, 10), &errb)
		if err != nil {
			t.Fatalf("fork at #%d: %v", seq, err)
		}
		if errOut := errb.String(); strings.Contains(errOut, "is gone") || strings.Contains(errOut, "empty folder") {
			t.Errorf("fork at #%d did not restore its snapshot:\n%s", seq, errOut)
		}
		got := files(t, into)
		for name := range demoFiles {
			want := orig[name]
			if at := applied[name]; at != 0 && seq >= at {
				want = final[name]
			}
			if got[name] != want {
				t.Errorf("fork at #%d: %s is not as the demo's workspace had it there", seq, name)
			}
		}
	}
	// The parent's merged fix lands in a fork made before its /apply: the subagents' result
	// commits are in the bundle too.
	code, errOut, _, into := forkRun(t, t.TempDir(), rec, cvDone, "/apply cv-1\n")
	if code != 0 || files(t, into)["cart.go"] != final["cart.go"] {
		t.Errorf("/apply cv-1 in a fork at #%d: exit %d, cart.go fixed %v\n%s", cvDone, code, files(t, into)["cart.go"] == final["cart.go"], errOut)
	}

	// Without the bundle the snapshots are gone: a fork says so in words, starts from what it
	// can, and /apply of the parent's changes there fails with a sentence, not git's "fatal:
	// failed to unpack tree object".
	if err := os.Remove(fork.BundlePath(rec)); err != nil {
		t.Fatal(err)
	}
	var sa5Stop uint64
	for i := 0; i < ix.Len(); i++ {
		if ix.Type(i) == session.TypeSubagentStop && ix.SubagentID(i) == "sa-5" {
			sa5Stop = ix.Seq(i)
		}
	}
	if sa5Stop == 0 {
		t.Fatal("sa-5 did not stop")
	}
	code, errOut, out, _ := forkRun(t, t.TempDir(), rec, sa5Stop, "/apply sa-5\n")
	if code == 0 {
		t.Fatalf("/apply of commits that are gone succeeded\n%s", errOut)
	}
	if !strings.Contains(errOut, "is gone from its repository") {
		t.Errorf("the fork does not say its snapshot is gone:\n%s", errOut)
	}
	b, _ := os.ReadFile(out)
	if bytes.Contains(b, []byte("unpack tree")) || bytes.Contains(b, []byte("fatal:")) {
		t.Errorf("the fork's /apply shows git's raw error:\n%s", errOut)
	}
	if !bytes.Contains(b, []byte("no longer in the repository")) {
		t.Errorf("the fork's /apply does not say the commit is gone:\n%s", errOut)
	}
}

// TestForkWritesOnlyItsFolder: a fork's recording, inventory and history go into its own
// folder's .summit/ (--into), never into the directory it was started from (--workspace here,
// where its config comes from). Old code wrote .summit/ there.
func TestForkWritesOnlyItsFolder(t *testing.T) {
	t.Parallel()
	ws := runWorkspace(t)
	code, _, errOut, rec := runScript(t, ws, "/delegate \"change the greeting\" --agent-type builder\n/wait sa-1\n")
	if code != 0 {
		t.Fatalf("parent: exit %d\n%s", code, errOut)
	}
	here := t.TempDir()
	into := filepath.Join(t.TempDir(), "fork")
	sf := filepath.Join(t.TempDir(), "next.summit")
	os.WriteFile(sf, []byte("/status\n"), 0o644)
	code, _, errOut = summit(t, "fork", rec, "--at", strconv.Itoa(5), "--script", sf, "--workspace", here, "--into", into)
	if code != 0 {
		t.Fatalf("fork: %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(here, ".summit")); err == nil {
		t.Errorf("the fork wrote .summit/ into the directory it was started from")
	}
	ms, _ := filepath.Glob(filepath.Join(into, ".summit", "sessions", "*.jsonl"))
	if len(ms) != 1 {
		t.Errorf("the fork's recording is not in its folder: %v\n%s", ms, errOut)
	}
	if _, err := os.Stat(filepath.Join(into, ".summit", "inventory.json")); err != nil {
		t.Errorf("the fork's inventory is not in its folder: %v", err)
	}
}

// TestLeftoversNoticeOncePerWorkspace: the start notice names only the workspace's own
// leftovers, with their size, once; a start elsewhere (or in a folder that does not exist)
// says nothing about them. Old code told every start about every workspace's leftovers.
func TestLeftoversNoticeOncePerWorkspace(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ws := runWorkspace(t)
	if code, _, errOut, _ := runScript(t, ws, "/delegate \"change the greeting\" --agent-type builder\n/wait sa-1\n", "--keep-worktrees"); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if _, _, errOut, _ := runScript(t, runWorkspace(t), "/agents\n"); strings.Contains(errOut, "leftover") {
		t.Errorf("a start in another workspace names this one's leftovers:\n%s", errOut)
	}
	if _, _, errOut := summit(t, "run", "--script", "-", "--workspace", filepath.Join(ws, "nonexistent")); strings.Contains(errOut, "leftover") {
		t.Errorf("a start in a missing folder names leftovers:\n%s", errOut)
	}
	_, _, errOut, _ := runScript(t, ws, "/agents\n")
	if !regexp.MustCompile(`left 1 leftover \([0-9.]+ (B|KB|MB)\)`).MatchString(errOut) {
		t.Errorf("the workspace's next start does not name its leftover with its size:\n%s", errOut)
	}
	if _, _, errOut, _ := runScript(t, ws, "/agents\n"); strings.Contains(errOut, "leftover") {
		t.Errorf("the notice came twice:\n%s", errOut)
	}
}

// TestGCStaleReplaySidecars: a replay that folded a recording to its end leaves its sidecar in
// the cache dir; gc keeps it while its recording is there, and lists (with its size) and
// removes it once the recording is gone.
func TestGCStaleReplaySidecars(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	b, err := os.ReadFile(rec + "valid.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	os.WriteFile(path, b, 0o600)
	r, err := ui.OpenReplay(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.WaitCaughtUp()
	r.Close()
	cars, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "summit", "replay", "*.ckpt"))
	if len(cars) != 1 {
		t.Fatalf("replay sidecars: %v", cars)
	}
	if _, out, _ := summit(t, "gc", "--dry-run"); !strings.Contains(out, "nothing to clean") {
		t.Errorf("gc lists the sidecar of a recording that is there:\n%s", out)
	}
	os.Remove(path)
	code, out, errb := summit(t, "gc")
	if code != 0 || !regexp.MustCompile(`replay sidecar .* \(its recording is gone\), [0-9.]+ (B|KB|MB)`).MatchString(out) {
		t.Fatalf("gc: %d\n%s\n%s", code, out, errb)
	}
	if _, err := os.Stat(cars[0]); err == nil {
		t.Error("gc left the sidecar of a recording that is gone")
	}
}

// TestGCOldDemoLeftover: the private git dir an older summit demo left (its workspace gone, its
// recording in the demo folder) is not lost to gc: gc writes the snapshots the recording names
// into a bundle beside it, then removes the git dir, and a fork of the recording still restores
// its files. Old code: gc removed the git dir, and forks started empty.
func TestGCOldDemoLeftover(t *testing.T) {
	forkEnv(t)
	rec, final := endDemo(t, false)
	cache := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "summit")
	if repos, _ := filepath.Glob(filepath.Join(cache, "repos", "*")); len(repos) != 1 {
		t.Fatalf("private git dirs: %v", repos)
	}
	code, out, errb := summit(t, "gc")
	if code != 0 || !strings.Contains(out, "kept the snapshots of") {
		t.Fatalf("gc: %d\n%s\n%s", code, out, errb)
	}
	if repos, _ := filepath.Glob(filepath.Join(cache, "repos", "*")); len(repos) != 0 {
		t.Errorf("gc left the private git dir: %v", repos)
	}
	st, _, err := record.LoadFile(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := fork.Load(rec, st.LastSeq-1)
	if err != nil {
		t.Fatal(err)
	}
	var e bytes.Buffer
	_, into, err := (&forkFlags{plan: p, into: filepath.Join(t.TempDir(), "ws")}).restore("s-fork-end", &e)
	if err != nil {
		t.Fatal(err)
	}
	if got := files(t, into); got["cart.go"] != final["cart.go"] || got["README.md"] != final["README.md"] {
		t.Errorf("a fork at the end after gc does not restore the demo's files:\n%s", e.String())
	}
}
