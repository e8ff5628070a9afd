package gitws

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crash drops a session the way a killed process would: its lock goes, nothing is cleaned.
func crash(r *Repo) {
	unlockSession(r.lock)
	r.closed = true
}

func TestGCRemovesLeftoversOfCrashedSession(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	nongit := t.TempDir()
	write(t, nongit, "f.txt", "f\n")
	cache := t.TempDir()
	before := userState(t, ws)

	dead := open(t, ws, "dead", cache)
	base, _ := dead.Snapshot(ctx)
	wt, err := dead.AddWorktree(ctx, base, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt.Root(), "x.txt", "x\n")
	if _, err := dead.Changes(ctx, wt); err != nil {
		t.Fatal(err)
	}
	deadPrivate := open(t, nongit, "dead2", cache)
	pb, _ := deadPrivate.Snapshot(ctx)
	if _, err := deadPrivate.AddWorktree(ctx, pb, "sa-1"); err != nil {
		t.Fatal(err)
	}
	crash(dead)
	crash(deadPrivate)
	// A folder that is not a repository and is gone leaves its private git dir behind; one
	// that exists keeps it (its repository, not a leftover).
	if err := os.RemoveAll(nongit); err != nil {
		t.Fatal(err)
	}
	stays := t.TempDir()
	write(t, stays, "g.txt", "g\n")
	if err := open(t, stays, "ended", cache).Close(ctx, false); err != nil {
		t.Fatal(err)
	}

	live := open(t, ws, "live", cache)
	defer live.Close(ctx, false)
	lb, _ := live.Snapshot(ctx)
	liveWT, err := live.AddWorktree(ctx, lb, "sa-1")
	if err != nil {
		t.Fatal(err)
	}

	ls, err := Leftovers(ctx, cache)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Leftover{}
	for _, l := range ls {
		got[l.SessionID] = l
		t.Log(l)
	}
	if _, ok := got["live"]; ok {
		t.Fatal("a running session listed as leftover")
	}
	d := got["dead"]
	if d.Reason != "crashed" || len(d.Worktrees) != 1 || len(d.Refs) != 2 || d.Workspace != live.Workspace() {
		t.Fatalf("dead: %+v", d)
	}
	if p := got["dead2"]; p.Reason != "crashed" || !p.Private || len(p.Worktrees) != 1 {
		t.Fatalf("dead2: %+v", p)
	}
	if u, ok := got[""]; !ok || u.Reason != "unused" || u.Workspace != deadPrivate.Workspace() || u.Bytes <= 0 {
		t.Fatalf("unused private dir: %+v", u)
	}
	if len(ls) != 3 {
		t.Fatalf("%d leftovers, want dead, dead2 and the gone folder's private dir", len(ls))
	}
	// Listing changed nothing.
	if !exists(d.Worktrees[0], "x.txt") {
		t.Fatal("Leftovers removed something")
	}

	if err := GC(ctx, cache, ls); err != nil {
		t.Fatal(err)
	}
	if exists(d.Worktrees[0], "") || exists(cache, "sessions/dead") || exists(cache, "worktrees/dead2") || len(listDirs(filepath.Join(cache, "repos"))) != 1 {
		t.Fatal("leftovers remain in the cache")
	}
	if refs := gitT(t, ws, "for-each-ref", "refs/summit/dead/"); refs != "" {
		t.Fatalf("refs remain: %s", refs)
	}
	wl := gitT(t, ws, "worktree", "list", "--porcelain")
	if strings.Contains(wl, "/dead/") || !strings.Contains(wl, liveWT.Path) {
		t.Fatalf("worktree list after gc:\n%s", wl)
	}
	// The live session is intact and works.
	if !exists(liveWT.Root(), "main.go") || gitT(t, ws, "for-each-ref", "refs/summit/live/") == "" {
		t.Fatal("gc touched the live session")
	}
	if ls2, _ := Leftovers(ctx, cache); len(ls2) != 0 {
		t.Fatalf("leftovers after gc: %+v", ls2)
	}
	live.Close(ctx, false)
	if after := userState(t, ws); after != before {
		t.Fatalf("user state changed:\n%s\nvs\n%s", before, after)
	}
	if exists(stays, ".git") {
		t.Fatal(".git in the non-git workspace")
	}
}

func TestCloseKeepLeavesWorktreesForGC(t *testing.T) {
	t.Parallel()
	ws := newRepo(t)
	cache := t.TempDir()
	r := open(t, ws, "s", cache)
	base, _ := r.Snapshot(ctx)
	wt, _ := r.AddWorktree(ctx, base, "sa-1")
	if err := r.Close(ctx, true); err != nil {
		t.Fatal(err)
	}
	if !exists(wt.Root(), "main.go") {
		t.Fatal("kept worktree removed")
	}
	ls, err := Leftovers(ctx, cache)
	if err != nil || len(ls) != 1 || ls[0].Reason != "kept" || len(ls[0].Worktrees) != 1 {
		t.Fatalf("%+v %v", ls, err)
	}
	// A worktree whose directory vanished: its metadata is still removed, nothing else pruned.
	must(t, os.RemoveAll(wt.Path))
	if err := GC(ctx, cache, ls); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(ws, ".git", "worktrees")); len(ents) != 0 {
		t.Fatalf("metadata left: %v", ents)
	}
}

func mustCanon(t *testing.T, p string) string {
	c, err := canonical(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
