package main

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
	"github.com/summit-dev/summit/ui"
)

// forkEnv keeps summit's cache (worktrees, private git dirs) and data dir in the test, for a
// test that looks into them (gc, leftovers). It makes the test serial (t.Setenv), so a test
// that needs only isolation from the developer's dirs uses TestMain's (t.Parallel) instead.
func forkEnv(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
}

// demoParent runs the demo's tour headless (demoScript: the conflict settled for sa-3, the
// builder told "usage") on the demo's sample files in a new workspace (a git
// repository when git is set) and returns the workspace and the recording.
func demoParent(t *testing.T, git bool) (ws, rec string) {
	t.Helper()
	ws = t.TempDir()
	for name, body := range demoFiles {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if git {
		gitRun(t, ws, "init", "-q")
		gitRun(t, ws, "add", ".")
		gitRun(t, ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "sample")
	}
	script := filepath.Join(t.TempDir(), "demo.summit")
	os.WriteFile(script, []byte(demoScript("usage")), 0o644)
	rec = filepath.Join(t.TempDir(), "demo.jsonl")
	code, _, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--approve", "all", "--record", rec)
	if code != 0 && code != 1 { // the tester's run fails on the tapes; that is part of the tour
		t.Fatalf("demo run: exit %d\n%s", code, errOut)
	}
	return ws, rec
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// forkRun forks rec at seq headless with script and returns the exit code, stderr, the fork's
// recording and its workspace.
func forkRun(t *testing.T, ws, rec string, seq uint64, script string, extra ...string) (int, string, string, string) {
	t.Helper()
	dir := t.TempDir()
	sf := filepath.Join(dir, "next.summit")
	os.WriteFile(sf, []byte(script), 0o644)
	out, into := filepath.Join(dir, "fork.jsonl"), filepath.Join(dir, "ws")
	args := append([]string{"fork", rec, "--at", strconv.FormatUint(seq, 10), "--script", sf, "--workspace", ws,
		"--approve", "all", "--record", out, "--into", into}, extra...)
	code, _, errOut := summit(t, args...)
	return code, errOut, out, into
}

// stateAt folds the recording at path up to seq and prints it without its header (the session
// id, workspace and lineage lines, which a fork has of its own).
func stateAt(t *testing.T, path string, seq uint64) string {
	t.Helper()
	st := &session.State{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = record.ForEach(f, record.ReadOptions{}, func(e session.Event) error {
		if e.Seq > seq {
			return io.EOF
		}
		return session.Apply(st, e)
	})
	if err != nil && err != io.EOF {
		t.Fatalf("%s: %v", path, err)
	}
	var b bytes.Buffer
	if err := render.Print(&b, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if i := strings.Index(out, "\n== tree =="); i >= 0 {
		return out[i:]
	}
	t.Fatalf("no tree in\n%s", out)
	return ""
}

// files maps every file under dir (but .summit/ and .git/) to its sha256.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (rel == ".summit" || rel == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			m[rel] = hex.EncodeToString(sum[:])
		}
		return nil
	})
	return m
}

// TestForkAtEveryMarker: the demo recording is forked at every marker of its timeline. Each
// fork's state at the fork point equals the parent's there (replay --print of both, up to that
// seq, differs only in the header), the fork replays and inspects on its own, its workspace
// holds the files as the parent's workspace had them at that point, and the parent's
// workspace is not touched.
func TestForkAtEveryMarker(t *testing.T) {
	t.Parallel()
	ws, rec := demoParent(t, false)
	final := files(t, ws)
	orig := map[string]string{}
	for name, body := range demoFiles {
		sum := sha256.Sum256([]byte(body))
		orig[name] = hex.EncodeToString(sum[:])
	}
	ix, err := record.BuildIndexFile(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Where the parent applied: cart.go by cv-1's apply, README.md by sa-5's.
	applied := map[string]uint64{}
	for i := 0; i < ix.Len(); i++ {
		if ix.Type(i) == session.TypeChangesApplied {
			e, _ := ix.ReadEvent(mustOpen(t, rec), i)
			for _, f := range e.Data.(session.ChangesApplied).Files {
				applied[f] = e.Seq
			}
		}
	}
	if applied["cart.go"] == 0 || applied["README.md"] == 0 {
		t.Fatalf("the demo applied %v", applied)
	}
	marks := ix.Positions(ui.MarkerTypes()...)
	if len(marks) < 10 {
		t.Fatalf("%d markers", len(marks))
	}
	for _, i := range marks {
		seq := ix.Seq(i)
		code, errOut, out, into := forkRun(t, ws, rec, seq, "/status\n")
		if code != 0 {
			t.Fatalf("fork at #%d: exit %d\n%s", seq, code, errOut)
		}
		if got, want := stateAt(t, out, seq), stateAt(t, rec, seq); got != want {
			t.Errorf("fork at #%d: its state there differs from the parent's:\n--- fork\n%s\n--- parent\n%s", seq, got, want)
		}
		st, _, err := record.LoadFile(out, record.ReadOptions{})
		if err != nil {
			t.Fatalf("fork at #%d does not replay alone: %v", seq, err)
		}
		if st.Fork == nil || st.Fork.Parent.Seq != seq || st.Fork.Parent.SessionID == st.SessionID || len(st.Fork.Parent.SHA256) != 64 {
			t.Errorf("fork at #%d: lineage %+v", seq, st.Fork)
		}
		for _, sa := range st.Subagents {
			if !sa.Terminal() {
				t.Errorf("fork at #%d: %s is still %s after the fork's start", seq, sa.ID, sa.Status)
			}
		}
		if code, text, _ := summit(t, "inspect", out); code != 0 || !strings.Contains(text, "forked from") {
			t.Errorf("inspect of the fork at #%d: %d\n%s", seq, code, text)
		}
		got := files(t, into)
		for name := range demoFiles {
			want := orig[name]
			if at := applied[name]; seq >= at {
				want = final[name]
			}
			if got[name] != want {
				t.Errorf("fork at #%d: %s is not as the parent's workspace had it there", seq, name)
			}
		}
		if _, err := os.Stat(filepath.Join(into, ".git")); err == nil {
			t.Errorf("fork at #%d: a .git was made in the fork's workspace", seq)
		}
	}
	if after := files(t, ws); !sameMap(after, final) {
		t.Error("forking changed the parent's workspace")
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestForkInterruptedRetry: forked while the builders ran, in a git repository: they show as
// interrupted (not as this session's failures), /retry runs sa-2's task again as sa-4, whose
// change /apply lands in the fork's workspace; the user's HEAD, index, refs and stash are
// exactly as before, and no summit ref is left.
func TestForkInterruptedRetry(t *testing.T) {
	t.Parallel()
	ws, rec := demoParent(t, true)
	gitState := func() string {
		idx, _ := os.ReadFile(filepath.Join(ws, ".git", "index"))
		sum := sha256.Sum256(idx)
		return gitRun(t, ws, "rev-parse", "HEAD") + gitRun(t, ws, "for-each-ref") + gitRun(t, ws, "stash", "list") + hex.EncodeToString(sum[:])
	}
	before := gitState()
	parentFiles := files(t, ws)
	// The first event after all three subagents are active.
	var at uint64
	active := 0
	f := mustOpen(t, rec)
	record.ForEach(f, record.ReadOptions{}, func(e session.Event) error {
		if e.Type == session.TypeSubagentActive {
			active++
		}
		if active == 3 && at == 0 && e.Type == session.TypeTranscriptEvent {
			at = e.Seq
		}
		return nil
	})
	if at == 0 {
		t.Fatal("no point where the three subagents run")
	}
	code, errOut, out, into := forkRun(t, ws, rec, at, "/retry sa-2\n/retry sa-3 --agent-type explore\n/wait sa-4 sa-5\n/apply sa-4\n")
	if code != 0 {
		t.Fatalf("exit %d (interrupted subagents are not the fork's failures)\n%s", code, errOut)
	}
	st, _, err := record.LoadFile(out, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"sa-1", "sa-2", "sa-3"} {
		if sa := st.Subagent(id); sa == nil || sa.Status != session.StatusInterrupted {
			t.Errorf("%s: %+v", id, sa)
		}
	}
	sa4, sa5 := st.Subagent("sa-4"), st.Subagent("sa-5")
	if sa4 == nil || sa4.Outcome != session.OutcomeSuccess || sa4.Task != "fix rounding in cart.go, variant A" || sa4.AgentType != "builder" {
		t.Fatalf("the retry of sa-2: %+v", sa4)
	}
	if sa5 == nil || sa5.AgentType != "explore" || sa5.Task != "fix rounding in cart.go, variant B" {
		t.Errorf("the retry of sa-3 with another agent: %+v", sa5)
	}
	if len(st.Applies) != 1 || st.Applies[0].Source != "sa-4" {
		t.Fatalf("applies %+v", st.Applies)
	}
	cart, _ := os.ReadFile(filepath.Join(into, "cart.go"))
	if string(cart) == demoFiles["cart.go"] {
		t.Error("/apply sa-4 did not land in the fork's workspace")
	}
	if after := files(t, ws); !sameMap(after, parentFiles) {
		t.Error("the fork changed the parent's workspace")
	}
	if after := gitState(); after != before {
		t.Errorf("the user's git state changed:\n%s\n---\n%s", before, after)
	}
	if refs := gitRun(t, ws, "for-each-ref", "refs/summit/"); refs != "" {
		t.Errorf("summit refs left: %s", refs)
	}
	_, text, _ := summit(t, "replay", out, "--print")
	if !strings.Contains(text, "↯ sa-2 builder · interrupted") {
		t.Errorf("the tree does not show sa-2 interrupted:\n%s", text)
	}
}

// TestForkOfFork: a fork of a fork names both parents; bad input is refused with the reason and
// nothing restored or recorded.
func TestForkOfFork(t *testing.T) {
	t.Parallel()
	ws, rec := demoParent(t, false)
	code, errOut, first, _ := forkRun(t, ws, rec, 30, "/retry sa-2\n/wait sa-4\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	code, errOut, second, _ := forkRun(t, ws, first, 40, "/status\n")
	if code != 0 {
		t.Fatalf("fork of a fork: exit %d\n%s", code, errOut)
	}
	st, _, err := record.LoadFile(second, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parent, _, _ := record.LoadFile(first, record.ReadOptions{})
	if st.Fork.Parent.SessionID != parent.SessionID || len(st.Fork.Parent.Lineage) != 1 || st.Fork.Parent.Lineage[0].Seq != 30 {
		t.Errorf("lineage %+v", st.Fork.Parent)
	}
	_, text, _ := summit(t, "inspect", second)
	if strings.Count(text, "forked from") != 2 {
		t.Errorf("inspect shows the lineage:\n%s", text)
	}
	// Exported as a trace, the fork's root span names its parent and the parent's trace.
	if code, spans, errOut := summit(t, "export", "otel", second, "--stdout"); code != 0 ||
		!strings.Contains(spans, `"summit.fork.parent_session_id":"`+parent.SessionID+`"`) || !strings.Contains(spans, "summit.fork.parent_trace_id") {
		t.Errorf("export of a fork: %d %s\n%.600s", code, errOut, spans)
	}

	last := func() uint64 {
		s, _, _ := record.LoadFile(rec, record.ReadOptions{})
		return s.LastSeq
	}()
	nonEmpty := t.TempDir()
	os.WriteFile(filepath.Join(nonEmpty, "keep.txt"), []byte("mine"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fork", rec}, 2, "fork needs --at SEQ"},
		{[]string{"fork", rec, "--at", "0"}, 1, "seqs start at 1"},
		{[]string{"fork", rec, "--at", "100000"}, 1, "holds no event #100000 (its events are #1 to #"},
		{[]string{"fork", rec, "--at", strconv.FormatUint(last, 10)}, 1, "is the session's end"},
		{[]string{"fork", filepath.Join(t.TempDir(), "none.jsonl"), "--at", "3"}, 1, "no such file"},
		{[]string{"fork", rec, "--at", "30", "--script", "-", "--into", nonEmpty, "--workspace", ws}, 1, "is not empty"},
	} {
		code, _, errOut := summit(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(nonEmpty, "keep.txt")); string(b) != "mine" {
		t.Error("a refused fork touched the folder")
	}
	ents, _ := os.ReadDir(nonEmpty)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "keep.txt" {
		t.Errorf("the refused --into holds %v", names)
	}
}

// TestTerminalReplayFork: in the interactive replay, F twice at 50 % of the demo recording
// leaves the replay for the workbench on a fork of it, which shows the lineage in its header,
// takes commands, and records a fork that names its parent, in a workspace under the data dir.
func TestTerminalReplayFork(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws, rec := demoParent(t, false)
	before := files(t, filepath.Join(ws, ".summit"))
	// The replay's fork lands under its own data dir; the cache (the parent's snapshots) is
	// TestMain's, where demoParent ran.
	data := t.TempDir()
	env := "env XDG_DATA_HOME=" + data
	tm := newTerm(t, 120, 32, "cd "+ws+" && exec "+env+" "+bin+" replay "+rec)
	tm.waitFor(`play`, 10*time.Second)
	tm.keys("5")
	tm.keys("F")
	tm.waitFor(`fork at #\d+: F again`, 10*time.Second)
	tm.keys("F")
	tm.waitFor(`⑂ fork of s-`, 15*time.Second)
	tm.keys("/status", "Enter")
	tm.waitFor(`acceptEdits · \d+ running`, 10*time.Second)
	tm.keys("/quit", "Enter")
	// The fork's recording is in its own folder's .summit/, not in the directory the replay
	// was run from (the parent's workspace here).
	var forkRec string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && forkRec == ""; time.Sleep(100 * time.Millisecond) {
		ms, _ := filepath.Glob(filepath.Join(data, "summit", "forks", "*", ".summit", "sessions", "*.jsonl"))
		for _, m := range ms {
			if b, _ := os.ReadFile(m); bytes.Contains(b, []byte(`"type":"SessionForked"`)) && bytes.Contains(b, []byte(`"type":"SessionEnded"`)) {
				forkRec = m
			}
		}
	}
	if forkRec == "" {
		t.Fatalf("no ended fork recording in the fork's folder; screen:\n%s", tm.screen())
	}
	if after := files(t, filepath.Join(ws, ".summit")); !sameMap(after, before) {
		t.Errorf("the fork wrote into the directory it was started from: %v, before %v", after, before)
	}
	st, _, err := record.LoadFile(forkRec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if abs, _ := filepath.Abs(rec); st.Fork == nil || st.Fork.Parent.Path != abs {
		t.Fatalf("fork lineage %+v", st.Fork)
	}
	want := filepath.Join(data, "summit", "forks", st.SessionID)
	if st.Info.Workspace != want {
		t.Errorf("the fork ran in %s, want %s", st.Info.Workspace, want)
	}
	if _, err := os.Stat(filepath.Join(want, "cart.go")); err != nil {
		t.Errorf("the fork's workspace: %v", err)
	}
}

// TestForkImported: sessions imported from Claude Code, Codex and Gemini CLI fork at every
// marker like native recordings: the fork's state there is the parent's, its subagent tree
// (children under their parents) included, and, with no workspace to rebuild, it starts in an
// empty folder and says so.
func TestForkImported(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	if code, _, errOut := summit(t, "import", "-o", out, importFixtures+"claude", importFixtures+"codex", importFixtures+"gemini"); code != 0 {
		t.Fatalf("import: %d\n%s", code, errOut)
	}
	recs, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	if len(recs) < 6 {
		t.Fatalf("%d recordings imported", len(recs))
	}
	ws := t.TempDir()
	forks := 0
	for _, rec := range recs {
		ix, err := record.BuildIndexFile(rec, record.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range ix.Positions(ui.MarkerTypes()...) {
			seq := ix.Seq(i)
			if ix.Type(i) == session.TypeSessionEnded {
				continue
			}
			code, errOut, fork, into := forkRun(t, ws, rec, seq, "/status\n")
			if code != 0 {
				t.Fatalf("%s at #%d: exit %d\n%s", filepath.Base(rec), seq, code, errOut)
			}
			if got, want := stateAt(t, fork, seq), stateAt(t, rec, seq); got != want {
				t.Errorf("%s at #%d: the fork's state differs:\n%s\n---\n%s", filepath.Base(rec), seq, got, want)
			}
			st, _, err := record.LoadFile(fork, record.ReadOptions{})
			if err != nil || !strings.Contains(st.Fork.Restored, "an empty folder") {
				t.Errorf("%s at #%d: %v %+v", filepath.Base(rec), seq, err, st.Fork)
			}
			if ents, _ := os.ReadDir(into); len(ents) > 1 { // .summit/ at most
				t.Errorf("%s at #%d: the fork's folder holds %d entries", filepath.Base(rec), seq, len(ents))
			}
			forks++
		}
	}
	if forks < 10 {
		t.Errorf("only %d forks", forks)
	}
}

// TestForkOfSubfolderWorkspace: a parent whose workspace was a folder inside a repository forks
// into a workspace holding that folder's files at its top; the parent's subagents' commits
// (which hold the whole repository) are refused by /apply, naming /retry, which works.
func TestForkOfSubfolderWorkspace(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	app := filepath.Join(repo, "app")
	os.MkdirAll(app, 0o755)
	for name, body := range demoFiles {
		os.WriteFile(filepath.Join(app, name), []byte(body), 0o644)
	}
	os.WriteFile(filepath.Join(repo, "TOP.md"), []byte("top\n"), 0o644)
	gitRun(t, repo, "init", "-q")
	gitRun(t, repo, "add", ".")
	gitRun(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
	script := filepath.Join(t.TempDir(), "s.summit")
	os.WriteFile(script, []byte("/delegate \"fix rounding in cart.go, variant A\" --agent-type builder\n/wait sa-1\n"), 0o644)
	rec := filepath.Join(t.TempDir(), "p.jsonl")
	if code, _, errOut := summit(t, "run", "--script", script, "--workspace", app, "--record", rec); code != 0 {
		t.Fatalf("parent: %d\n%s", code, errOut)
	}
	st, _, _ := record.LoadFile(rec, record.ReadOptions{})
	code, errOut, out, into := forkRun(t, app, rec, st.LastSeq-1, "/apply sa-1\n/retry sa-1\n/wait sa-2\n/apply sa-2\n")
	if code != 1 || !strings.Contains(errOut, "do not fit this fork's workspace; /retry sa-1") {
		t.Fatalf("exit %d (the /apply of the parent's change is rejected):\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(into, "cart.go")); err != nil {
		t.Errorf("the fork's workspace lacks the folder's files at its top: %v", err)
	}
	if _, err := os.Stat(filepath.Join(into, "TOP.md")); err == nil {
		t.Error("the fork's workspace holds the repository's top, not the folder")
	}
	fst, _, err := record.LoadFile(out, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fst.Applies) != 1 || fst.Applies[0].Source != "sa-2" || len(fst.Fork.Notes) == 0 {
		t.Errorf("applies %+v notes %v", fst.Applies, fst.Fork.Notes)
	}
	if b, _ := os.ReadFile(filepath.Join(into, "cart.go")); string(b) == demoFiles["cart.go"] {
		t.Error("the retried subagent's change did not land in the fork")
	}
}

// TestForkImportedWorkspace: an imported session whose folder still exists forks with a copy of
// it when it is a repository (bounded by git's ignore files), and into an empty folder when
// it is not (nothing bounds what a copy would take), saying which.
func TestForkImportedWorkspace(t *testing.T) {
	t.Parallel()
	plain, repo := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(plain, "big.bin"), []byte("not copied"), 0o644)
	os.WriteFile(filepath.Join(repo, "kept.txt"), []byte("copied"), 0o644)
	gitRun(t, repo, "init", "-q")
	gitRun(t, repo, "add", ".")
	gitRun(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
	for _, c := range []struct {
		cwd, file, restored string
		copied              bool
		named               string // the --workspace given ("": the session's folder)
	}{
		{plain, "big.bin", "is not a repository", false, ""},
		{repo, "kept.txt", "as it is now", true, ""},
		// Another folder named: the source's cwd (another repository) is not followed.
		{repo, "kept.txt", "summit copies it only when you name it", false, t.TempDir()},
	} {
		src := filepath.Join(t.TempDir(), "proj")
		os.MkdirAll(src, 0o755)
		line := func(typ, uuid, body string) string {
			return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"cwd":%q,"sessionId":"imp-1","version":"2.0.50","type":%q,"uuid":%q,"timestamp":"2026-01-01T10:00:0%sZ",%s}`,
				c.cwd, typ, uuid, uuid[1:], body)
		}
		data := line("user", "u1", `"message":{"role":"user","content":"hello"}`) + "\n" +
			line("assistant", "u2", `"message":{"model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3,"output_tokens":1}}`) + "\n"
		os.WriteFile(filepath.Join(src, "imp-1.jsonl"), []byte(data), 0o644)
		out := t.TempDir()
		if code, _, errOut := summit(t, "import", "-o", out, src); code != 0 {
			t.Fatalf("import: %d %s", code, errOut)
		}
		rec := filepath.Join(out, "s-claude-imp-1.jsonl")
		code, errOut, fork, into := forkRun(t, cmp.Or(c.named, c.cwd), rec, 3, "/status\n")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", c.cwd, code, errOut)
		}
		st, _, err := record.LoadFile(fork, record.ReadOptions{})
		if err != nil || !strings.Contains(st.Fork.Restored, c.restored) {
			t.Errorf("%s: %v restored %q", c.cwd, err, st.Fork.Restored)
		}
		if _, err := os.Stat(filepath.Join(into, c.file)); (err == nil) != c.copied {
			t.Errorf("%s: %s copied = %v, want %v", c.cwd, c.file, err == nil, c.copied)
		}
	}
}

// TestForkOddSubagentIDs: a recording made by hand, whose subagent id is not sa-N, forks
// (its running subagent interrupted) instead of crashing on the id's shape.
func TestForkOddSubagentIDs(t *testing.T) {
	t.Parallel()
	ev := func(seq int, typ, sub, data string) string {
		return fmt.Sprintf(`{"v":1,"seq":%d,"ts":"2026-01-01T00:00:0%dZ","session_id":"s-odd","type":%q,"subagent_id":%q,"data":%s}`+"\n", seq, seq, typ, sub, data)
	}
	rec := filepath.Join(t.TempDir(), "odd.jsonl")
	os.WriteFile(rec, []byte(ev(1, "SessionStarted", "", `{"schema":1,"workspace":"","permission_mode":"acceptEdits","allowed_tools":[],"provider":"script"}`)+
		ev(2, "SubagentSpawned", "x", `{"agent_type":"explore","agent_name":"explore","permission_mode":"plan","tools":[],"task_description":"t","timeout_s":10}`)+
		ev(3, "SubagentActive", "x", `{"initial_state":"running"}`)+
		ev(4, "UserNote", "", `{"text":"n"}`)), 0o644)
	code, errOut, out, _ := forkRun(t, t.TempDir(), rec, 4, "/status\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	st, _, err := record.LoadFile(out, record.ReadOptions{})
	if err != nil || st.Subagent("x") == nil || st.Subagent("x").Status != session.StatusInterrupted {
		t.Fatalf("%v %+v", err, st.Subagent("x"))
	}
}
