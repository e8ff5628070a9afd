package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/internal/sessiontest"
)

// manualTicks returns options whose sync loop runs only when the test says so, and a function
// that runs one tick and returns whether it fsynced.
func manualTicks(opts RecorderOptions) (RecorderOptions, func() bool) {
	tick := make(chan time.Time)
	done := make(chan bool)
	opts.tick = tick
	opts.afterTick = func(synced bool) { done <- synced }
	return opts, func() bool {
		tick <- time.Time{}
		return <-done
	}
}

func mustAppend(t *testing.T, r *Recorder, e session.Event) session.Event {
	t.Helper()
	got, err := r.Append(e)
	if err != nil {
		t.Fatalf("append %v: %v", e, err)
	}
	return got
}

// stamp gives e the envelope the orchestrator would.
func stamp(e session.Event, seq uint64) session.Event {
	e.Seq, e.SessionID = seq, "s-rec"
	e.TS = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Add(time.Duration(seq) * 1234567 * time.Nanosecond)
	return e
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end in a newline: a half line was written", path)
	}
	return strings.Split(string(b[:len(b)-1]), "\n")
}

func TestRecorderModes(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	root := t.TempDir()
	dir := filepath.Join(root, "ws", ".summit", "sessions")
	r, err := OpenRecorder(dir, "s-01", RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Path() != filepath.Join(dir, "s-01.jsonl") {
		t.Errorf("path %s", r.Path())
	}
	for _, d := range []string{filepath.Join(root, "ws"), filepath.Join(root, "ws", ".summit"), dir} {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, err %v; want 0700 even with umask 0", d, st.Mode().Perm(), err)
		}
	}
	st, err := os.Stat(r.Path())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("recording mode %v, err %v; want 0600", st.Mode().Perm(), err)
	}

	// A restrictive umask cannot make the directory unusable either.
	syscall.Umask(0o277)
	r2, err := OpenRecorderFile(filepath.Join(root, "other", "rec.jsonl"), RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	r2.Close()
	if st, _ := os.Stat(filepath.Join(root, "other")); st.Mode().Perm() != 0o700 {
		t.Errorf("dir under umask 0277: %v", st.Mode().Perm())
	}
	if st, _ := os.Stat(r2.Path()); st.Mode().Perm() != 0o600 {
		t.Errorf("file under umask 0277: %v", st.Mode().Perm())
	}
}

// TestRecorderExistingDirKeepsMode: a directory that already exists is left as it is.
func TestRecorderExistingDirKeepsMode(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRecorder(dir, "s-02", RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o755 {
		t.Errorf("existing dir mode changed to %v", st.Mode().Perm())
	}
}

func TestRecorderRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	r, err := OpenRecorder(dir, "s-1", RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, r, stamp(session.New("", session.SessionStarted{Schema: 1}), 1))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(r.Path())
	if _, err := OpenRecorder(dir, "s-1", RecorderOptions{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second open: %v", err)
	}
	if _, err := OpenRecorderFile(r.Path(), RecorderOptions{}); err == nil {
		t.Fatal("OpenRecorderFile overwrote a recording")
	}
	if after, _ := os.ReadFile(r.Path()); !bytes.Equal(before, after) {
		t.Fatal("the existing recording changed")
	}
	for _, id := range []string{"", ".", "..", "../escape", "a/b", `a\b`} {
		if _, err := OpenRecorder(dir, id, RecorderOptions{}); err == nil {
			t.Errorf("session id %q accepted", id)
		}
	}
}

// TestRecorderRoundTrip: what Append returns is what the Reader reads back, event for event,
// and both fold to the same state (live equals replay).
func TestRecorderRoundTrip(t *testing.T) {
	r, err := OpenRecorder(t.TempDir(), "s-test", RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var live []session.Event
	for i, e := range sessiontest.FullSession() {
		live = append(live, mustAppend(t, r, e))
		if i%5 == 4 {
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	replay, rep, err := ReadAll(r.Path(), ReadOptions{})
	if err != nil || len(rep.Warnings) != 0 {
		t.Fatalf("read back: %v %+v", err, rep)
	}
	if !reflect.DeepEqual(live, replay) {
		for i := range live {
			if i < len(replay) && !reflect.DeepEqual(live[i], replay[i]) {
				t.Fatalf("event %d differs:\nlive   %#v\nreplay %#v", i, live[i], replay[i])
			}
		}
		t.Fatalf("%d events appended, %d read", len(live), len(replay))
	}
	if !reflect.DeepEqual(sessiontest.Fold(t, live), sessiontest.Fold(t, replay)) {
		t.Fatal("live and replayed states differ")
	}
}

// TestRecorderNormalises: Append returns the event as a replay will see it.
func TestRecorderNormalises(t *testing.T) {
	r, err := OpenRecorder(t.TempDir(), "s-n", RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	loc := time.FixedZone("CET", 3600)
	e := session.Event{Seq: 1, SessionID: "s-n", TS: time.Date(2026, 11, 22, 11, 0, 0, 123456789, loc), Data: session.SessionStarted{Schema: 1}}
	got := mustAppend(t, r, e)
	want := session.Event{V: 1, Seq: 1, SessionID: "s-n", Type: session.TypeSessionStarted, TS: time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC), Data: session.SessionStarted{Schema: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	// Nil data is written as {} and returned as the zero payload a replay decodes.
	got = mustAppend(t, r, session.Event{Seq: 2, SessionID: "s-n", Type: session.TypeUserNote})
	if got.Data != (session.UserNote{}) {
		t.Errorf("nil data returned as %#v", got.Data)
	}
	// Inconsistent or typeless events are refused, and the refusal is not sticky.
	if _, err := r.Append(session.Event{Seq: 3, Type: session.TypeUserNote, Data: session.SessionEnded{}}); err == nil {
		t.Error("type/data mismatch accepted")
	}
	if _, err := r.Append(session.Event{Seq: 3}); err == nil {
		t.Error("event without a type accepted")
	}
	if _, err := r.Append(session.Event{V: 2, Seq: 3, Data: session.UserNote{}}); err == nil {
		t.Error("an event of another schema version accepted")
	}
	mustAppend(t, r, stamp(session.New("", session.UserNote{Text: "still fine"}), 3))
}

// TestRecorderLifecycleOnDisk: lifecycle events are written (and fsynced) by Append itself,
// together with whatever was buffered before them; other events wait for Flush.
func TestRecorderLifecycleOnDisk(t *testing.T) {
	opts, _ := manualTicks(RecorderOptions{Environ: []string{}})
	r, err := OpenRecorder(t.TempDir(), "s-l", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mustAppend(t, r, stamp(session.New("", session.SessionStarted{Schema: 1}), 1))
	if n := len(fileLines(t, r.Path())); n != 1 || r.syncs.Load() != 1 {
		t.Fatalf("after SessionStarted: %d lines on disk, %d syncs", n, r.syncs.Load())
	}
	mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "hi"}), 2))
	if n := len(fileLines(t, r.Path())); n != 1 {
		t.Fatalf("a token event was written before Flush (%d lines)", n)
	}
	for seq, d := range []session.Data{
		session.SubagentSpawned{AgentType: "explore"}, session.SubagentStop{Outcome: session.OutcomeSuccess}, session.SubagentError{Error: "x"},
		session.SubagentTimeout{TimeoutS: 1}, session.SubagentCancelled{Reason: "x"}, session.HandoffInitiated{HandoffMode: session.HandoffMonitor},
		session.HandoffComplete{}, session.HandoffResolved{}, session.ConvergenceInitiated{}, session.ConflictDetected{}, session.ConflictResolved{},
		session.ConvergenceComplete{}, session.SessionEnded{Reason: "quit"},
	} {
		syncs := r.syncs.Load()
		mustAppend(t, r, stamp(session.New("sa-1", d), uint64(seq+3)))
		lines := fileLines(t, r.Path())
		if len(lines) != seq+3 || !strings.Contains(lines[len(lines)-1], `"type":"`+string(d.Type())+`"`) {
			t.Fatalf("%s is not on disk right after Append (%d lines)", d.Type(), len(lines))
		}
		if r.syncs.Load() != syncs+1 {
			t.Errorf("%s was not fsynced", d.Type())
		}
	}
	for _, ty := range []session.Type{session.TypeTranscriptEvent, session.TypeUserNote, session.TypeCommandIssued, session.TypePermissionRequested, session.TypeSubagentActive, session.TypeConflictReviewRequest, session.TypeDeltaBatch} {
		if IsLifecycle(ty) {
			t.Errorf("%s is not a lifecycle event", ty)
		}
	}
}

// TestRecorderGroupFsync drives the sync loop tick by tick: it fsyncs only when something was
// written since the last fsync, and writes out lines a caller forgot to flush.
func TestRecorderGroupFsync(t *testing.T) {
	opts, tick := manualTicks(RecorderOptions{Environ: []string{}})
	r, err := OpenRecorder(t.TempDir(), "s-g", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if tick() {
		t.Error("fsynced with nothing written")
	}
	tok := func(seq uint64) session.Event {
		return stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "x"}), seq)
	}
	mustAppend(t, r, tok(1))
	mustAppend(t, r, tok(2))
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if !tick() || r.syncs.Load() != 1 {
		t.Fatalf("no fsync after a flushed write (syncs %d)", r.syncs.Load())
	}
	if tick() || r.syncs.Load() != 1 {
		t.Error("fsynced again with nothing new")
	}
	mustAppend(t, r, tok(3)) // never flushed by the caller
	if !tick() || len(fileLines(t, r.Path())) != 3 || r.syncs.Load() != 2 {
		t.Errorf("the tick did not write and fsync a buffered line (syncs %d)", r.syncs.Load())
	}
	mustAppend(t, r, stamp(session.New("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess}), 4))
	if r.syncs.Load() != 3 || tick() {
		t.Error("a lifecycle fsync must leave nothing for the next tick")
	}
}

// TestRecorderTicker: with the real ticker, a flushed write is fsynced within a few periods.
func TestRecorderTicker(t *testing.T) {
	r, err := OpenRecorder(t.TempDir(), "s-t", RecorderOptions{Environ: []string{}, SyncInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "x"}), 1))
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second) // generous: the machine is shared
	for r.syncs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sync loop never fsynced")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRecorderSleepsWhenIdle: with the real ticker, the sync loop stops ticking once a tick
// finds nothing to write or fsync (an idle workbench must not wake ten times a second), and
// the next Append starts it again: that write is fsynced like any other.
func TestRecorderSleepsWhenIdle(t *testing.T) {
	// syncedTicks counts after ticks does, in the same call: a test that sees a synced tick
	// sees it in ticks too. (r.syncs is raised before afterTick runs, so reading ticks as
	// soon as r.syncs moves could miss the very tick that fsynced.)
	var ticks, syncedTicks atomic.Int64
	opts := RecorderOptions{Environ: []string{}, SyncInterval: 2 * time.Millisecond, afterTick: func(synced bool) {
		ticks.Add(1)
		if synced {
			syncedTicks.Add(1)
		}
	}}
	r, err := OpenRecorder(t.TempDir(), "s-idle", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second) // generous: the machine is shared
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Nothing appended: at most the first tick, then silence for fifty periods.
	time.Sleep(100 * time.Millisecond)
	if n := ticks.Load(); n > 1 {
		t.Fatalf("an idle recorder ticked %d times in 50 periods", n)
	}
	for i := range 3 {
		before := syncedTicks.Load()
		mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "x"}), uint64(i+1)))
		waitFor("an append after a sleep was never fsynced", func() bool { return syncedTicks.Load() == before+1 })
		settled := ticks.Load()
		time.Sleep(100 * time.Millisecond)
		// The tick that fsynced, then one that found nothing and stopped the ticker.
		if n := ticks.Load() - settled; n > 1 {
			t.Fatalf("round %d: %d ticks after the write was fsynced, want at most 1", i, n)
		}
	}
	if got := len(fileLines(t, r.Path())); got != 3 {
		t.Errorf("%d lines on disk, want 3", got)
	}
}

// faultFile fails writes after okBytes bytes, or Sync when syncErr is set.
type faultFile struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	okBytes int
	syncErr error
	closed  bool
}

func (f *faultFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	room := f.okBytes - f.buf.Len()
	if room >= len(p) {
		return f.buf.Write(p)
	}
	n, _ := f.buf.Write(p[:max(room, 0)])
	return n, syscall.ENOSPC
}

func (f *faultFile) Sync() error  { return f.syncErr }
func (f *faultFile) Close() error { f.closed = true; return nil }

func TestRecorderWriteErrors(t *testing.T) {
	opts, _ := manualTicks(RecorderOptions{Environ: []string{}})
	f := &faultFile{okBytes: 300}
	r := newRecorder(f, "fault.jsonl", opts)
	mustAppend(t, r, stamp(session.New("", session.SessionStarted{Schema: 1}), 1)) // ~180 bytes: fits
	mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: strings.Repeat("x", 200)}), 2))
	err := r.Flush()
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "write recording fault.jsonl") {
		t.Fatalf("flush: %v", err)
	}
	// Sticky: nothing is accepted any more, and Close reports it.
	if _, err2 := r.Append(stamp(session.New("", session.UserNote{Text: "x"}), 3)); !errors.Is(err2, syscall.ENOSPC) {
		t.Errorf("append after a failed write: %v", err2)
	}
	if err2 := r.Flush(); !errors.Is(err2, syscall.ENOSPC) {
		t.Errorf("flush after a failed write: %v", err2)
	}
	if err2 := r.Close(); !errors.Is(err2, syscall.ENOSPC) || !f.closed {
		t.Errorf("close after a failed write: %v", err2)
	}

	// A lifecycle event surfaces the error from Append itself.
	opts, _ = manualTicks(RecorderOptions{Environ: []string{}})
	r = newRecorder(&faultFile{okBytes: 10}, "fault.jsonl", opts)
	if _, err := r.Append(stamp(session.New("", session.SessionStarted{Schema: 1}), 1)); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("lifecycle append on a full disk: %v", err)
	}
	r.Close()

	// So does a failed fsync, from Append and from the sync loop.
	boom := errors.New("EIO")
	opts, _ = manualTicks(RecorderOptions{Environ: []string{}})
	r = newRecorder(&faultFile{okBytes: 1 << 20, syncErr: boom}, "fault.jsonl", opts)
	if _, err := r.Append(stamp(session.New("", session.SessionStarted{Schema: 1}), 1)); !errors.Is(err, boom) {
		t.Errorf("lifecycle append with a failing fsync: %v", err)
	}
	r.Close()
	opts, tick := manualTicks(RecorderOptions{Environ: []string{}})
	r = newRecorder(&faultFile{okBytes: 1 << 20, syncErr: boom}, "fault.jsonl", opts)
	mustAppend(t, r, stamp(session.New("", session.UserNote{Text: "x"}), 1))
	if tick() {
		t.Error("a failed fsync reported as done")
	}
	if _, err := r.Append(stamp(session.New("", session.UserNote{Text: "y"}), 2)); !errors.Is(err, boom) {
		t.Errorf("append after the sync loop failed: %v", err)
	}
	if err := r.Close(); !errors.Is(err, boom) {
		t.Errorf("close: %v", err)
	}
}

func TestRecorderClose(t *testing.T) {
	r, err := OpenRecorder(t.TempDir(), "s-c", RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, r, stamp(session.New("", session.SessionStarted{Schema: 1}), 1))
	mustAppend(t, r, stamp(session.New("", session.UserNote{Text: "buffered"}), 2))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	lines := fileLines(t, r.Path())
	if len(lines) != 2 || !strings.Contains(lines[1], "buffered") {
		t.Errorf("Close did not write the buffered line: %q", lines)
	}
	if strings.Contains(strings.Join(lines, "\n"), "SessionEnded") {
		t.Error("Close invented a SessionEnded")
	}
	if _, err := r.Append(stamp(session.New("", session.UserNote{Text: "late"}), 3)); !errors.Is(err, ErrRecorderClosed) {
		t.Errorf("append after close: %v", err)
	}
	if err := r.Flush(); !errors.Is(err, ErrRecorderClosed) {
		t.Errorf("flush after close: %v", err)
	}
}

// TestRecorderConcurrent exercises the mutex against the sync loop under -race.
func TestRecorderConcurrent(t *testing.T) {
	r, err := OpenRecorder(t.TempDir(), "s-x", RecorderOptions{Environ: []string{}, SyncInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				var d session.Data = session.TranscriptEvent{EventType: session.TranscriptToken, Text: "t"}
				if i%100 == 0 {
					d = session.SubagentActive{InitialState: "running"}
				}
				if _, err := r.Append(stamp(session.New("sa-1", d), uint64(g*1000+i+1))); err != nil {
					t.Error(err)
					return
				}
				if i%16 == 0 {
					if err := r.Flush(); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(fileLines(t, r.Path())); n != 2000 {
		t.Fatalf("%d lines, want 2000", n)
	}
}

// TestRecorderRedactsEndToEnd: secrets in a task description, tool arguments and a tool
// result never reach the disk, and Append returns the redacted event, which is what the
// Reader returns too.
func TestRecorderRedactsEndToEnd(t *testing.T) {
	env := []string{"OPENAI_API_KEY=" + fakeOpenAI, "INTERNAL_TOKEN=corp-internal-9f8e7d"}
	r, err := OpenRecorder(t.TempDir(), "s-r", RecorderOptions{Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	evs := []session.Event{
		session.New("", session.SessionStarted{Schema: 1, Config: map[string]any{"api_key": fakeOpenAI}}),
		session.New("sa-1", session.SubagentSpawned{AgentType: "bash", TaskDescription: "deploy with token corp-internal-9f8e7d and " + fakeGHP}),
		session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c1", Tool: "run_shell_command",
			Args: map[string]any{"command": "curl -H 'Authorization: Bearer " + fakeJWT + "' https://x", "env": []any{"AWS=" + fakeAWS}}}),
		session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c1", Tool: "run_shell_command",
			Result: "OPENAI_API_KEY=" + fakeOpenAI + "\nSLACK=" + fakeSlack + "\n"}),
		session.New("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess, Capsule: &protocols.Capsule{Summary: "used " + fakeAnthropic}}),
		session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "nothing secret here"}),
	}
	var got []session.Event
	for i, e := range evs {
		got = append(got, mustAppend(t, r, stamp(e, uint64(i+1))))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	disk, _ := os.ReadFile(r.Path())
	for _, secret := range []string{fakeOpenAI, "corp-internal-9f8e7d", fakeGHP, fakeJWT, fakeAWS, fakeSlack, fakeAnthropic} {
		if bytes.Contains(disk, []byte(secret)) {
			t.Errorf("secret %.12s… reached the disk", secret)
		}
	}
	if task := got[1].Data.(session.SubagentSpawned).TaskDescription; task != "deploy with token [REDACTED:INTERNAL_TOKEN] and [REDACTED]" {
		t.Errorf("returned task %q", task)
	}
	args := got[2].Data.(session.TranscriptEvent).Args
	if args["command"] != "curl -H 'Authorization: Bearer [REDACTED]' https://x" || args["env"].([]any)[0] != "AWS=[REDACTED]" {
		t.Errorf("returned args %v", args)
	}
	if res := got[3].Data.(session.TranscriptEvent).Result; res != "OPENAI_API_KEY=[REDACTED:OPENAI_API_KEY]\nSLACK=[REDACTED]\n" {
		t.Errorf("returned result %q", res)
	}
	if s := got[4].Data.(session.SubagentStop).Capsule.Summary; s != "used [REDACTED]" {
		t.Errorf("returned capsule summary %q", s)
	}
	if got[0].Data.(session.SessionStarted).Config["api_key"] != "[REDACTED:OPENAI_API_KEY]" {
		t.Errorf("returned config %v", got[0].Data.(session.SessionStarted).Config)
	}
	replay, _, err := ReadAll(r.Path(), ReadOptions{})
	if err != nil || !reflect.DeepEqual(replay, got) {
		t.Fatalf("the returned events differ from the recorded ones (err %v)", err)
	}
}

// TestRecorderBufferBound: a caller that never flushes still gets its lines written once the
// buffer passes its bound, and only whole lines.
func TestRecorderBufferBound(t *testing.T) {
	opts, _ := manualTicks(RecorderOptions{Environ: []string{}})
	r, err := OpenRecorder(t.TempDir(), "s-b", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	text := strings.Repeat("y", 1000)
	for i := range 2000 {
		mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: text}), uint64(i+1)))
	}
	st, _ := os.Stat(r.Path())
	if st.Size() < flushThreshold {
		t.Fatalf("only %d bytes on disk after ~2 MB appended without Flush", st.Size())
	}
	fileLines(t, r.Path()) // ends in a newline
	r.mu.Lock()
	buffered := len(r.buf)
	r.mu.Unlock()
	if buffered >= flushThreshold {
		t.Errorf("%d bytes still buffered", buffered)
	}
}

// A recording replaced (a forged file renamed over it) or removed during the session fails the
// session at the next sync tick, and again at Close: the events never silently go to a file
// nobody will read.
func TestRecorderDetectsReplacement(t *testing.T) {
	for _, how := range []string{"replaced", "removed"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			opts, tick := manualTicks(RecorderOptions{Environ: []string{}})
			r, err := OpenRecorder(dir, "s-rec", opts)
			if err != nil {
				t.Fatal(err)
			}
			mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "one"}), 1))
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			if !tick() {
				t.Fatal("the first tick should fsync")
			}
			switch how {
			case "replaced":
				forged := filepath.Join(dir, "forged")
				os.WriteFile(forged, []byte(`{"v":1,"seq":1,"type":"SessionStarted"}`+"\n"), 0o600)
				if err := os.Rename(forged, r.Path()); err != nil {
					t.Fatal(err)
				}
			case "removed":
				os.Remove(r.Path())
			}
			mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "two"}), 2))
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			if tick() {
				t.Error("a tick fsynced a replaced recording")
			}
			if _, err := r.Append(stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "three"}), 3)); !errors.Is(err, ErrRecordingReplaced) {
				t.Errorf("Append after the tick: %v, want ErrRecordingReplaced", err)
			}
			if err := r.Close(); !errors.Is(err, ErrRecordingReplaced) {
				t.Errorf("Close: %v, want ErrRecordingReplaced", err)
			}
		})
	}
	// An untouched recording closes cleanly.
	opts, tick := manualTicks(RecorderOptions{Environ: []string{}})
	r, err := OpenRecorder(t.TempDir(), "s-rec", opts)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "one"}), 1))
	r.Flush()
	tick()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// An event over the 16 MiB line cap (a model's tool arguments, a huge streamed delta) is cut to
// fit rather than written as a line every reader refuses: the recording reads back, and the
// event returned (what the caller folds and shows) is the event as written.
func TestRecorderCutsOversizedEvents(t *testing.T) {
	dir := t.TempDir()
	r, err := OpenRecorder(dir, "s-rec", RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("a<\"é", 5<<20) // 25 MiB raw, more escaped
	small := strings.Repeat("b", 100)
	got := mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, Tool: "write_file",
		Args: map[string]any{"path": "x.txt", "content": huge, "note": small}}), 1))
	mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: huge}), 2))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	evs, _, err := ReadAll(r.Path(), ReadOptions{})
	if err != nil || len(evs) != 2 {
		t.Fatalf("read back: %d events, %v", len(evs), err)
	}
	args := evs[0].Data.(session.TranscriptEvent).Args
	content := args["content"].(string)
	if args["path"] != "x.txt" || args["note"] != small || !strings.HasPrefix(content, "a<\"é") ||
		!strings.Contains(content, "[cut by summit: 26214400 bytes, over the line cap]") || len(content) > MaxEventLine {
		t.Errorf("args as read: path %v, note %v, content %d bytes ending %q", args["path"], args["note"], len(content), content[max(0, len(content)-60):])
	}
	if got.Data.(session.TranscriptEvent).Args["content"] != content {
		t.Error("Append returned a different event from the one written")
	}
	if text := evs[1].Data.(session.TranscriptEvent).Text; !strings.Contains(text, "[cut by summit:") || !utf8.ValidString(text) {
		t.Errorf("token text as read: %d bytes", len(text))
	}
}

// Bidi controls, zero-width characters and C1 controls are written as JSON escapes: the line
// decodes to the same text, and the file holds none of them raw.
func TestRecorderEscapesInvisibles(t *testing.T) {
	r, err := OpenRecorder(t.TempDir(), "s-rec", RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	text := "file MBIDI\u202etxt.exe\u202c, zero\u200bwidth, c1 \u009b31m, naïve ✓"
	got := mustAppend(t, r, stamp(session.New("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: text}), 1))
	r.Close()
	raw, _ := os.ReadFile(r.Path())
	for _, bad := range []string{"\u202e", "\u202c", "\u200b", "\u009b"} {
		if strings.Contains(string(raw), bad) {
			t.Errorf("the file holds %U raw: %s", []rune(bad)[0], raw)
		}
	}
	if !strings.Contains(string(raw), `\u202e`) || !strings.Contains(string(raw), "naïve ✓") {
		t.Errorf("the line: %s", raw)
	}
	evs, _, err := ReadAll(r.Path(), ReadOptions{})
	if err != nil || evs[0].Data.(session.TranscriptEvent).Text != text || got.Data.(session.TranscriptEvent).Text != text {
		t.Errorf("read back %q, %v", evs[0].Data.(session.TranscriptEvent).Text, err)
	}
}

// TestRecorderEncodeMatchesAppend: events encoded on several goroutines by Encode and
// appended in order by AppendEncoded give the file Append gives, byte for byte, with a secret
// redacted, a bidi control respelled and an oversized payload cut, and the same events as
// recorded.
func TestRecorderEncodeMatchesAppend(t *testing.T) {
	env := []string{"SHOP_API_KEY=hunter2-very-secret-value"}
	evs := sessiontest.FullSession()
	extra := []session.Data{
		session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c9", Tool: "Bash", Result: "key is hunter2-very-secret-value, sk-ant-api03-" + strings.Repeat("A", 90)},
		session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "right\u202eto left"},
		session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c10", Tool: "Read", Result: strings.Repeat("x", MaxEventLine+100)},
	}
	last := evs[len(evs)-1]
	evs = evs[:len(evs)-1]
	for _, d := range extra {
		e := session.New("sa-1", d)
		e.SessionID, e.TS = last.SessionID, last.TS
		evs = append(evs, e)
	}
	evs = append(evs, last)
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	dir := t.TempDir()
	a, err := OpenRecorderFile(filepath.Join(dir, "a.jsonl"), RecorderOptions{Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	var want []session.Event
	for _, e := range evs {
		want = append(want, mustAppend(t, a, e))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := OpenRecorderFile(filepath.Join(dir, "b.jsonl"), RecorderOptions{Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	lines := make([][]byte, len(evs))
	got := make([]session.Event, len(evs))
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := w; i < len(evs); i += 3 {
				var err error
				if lines[i], got[i], err = b.Encode(nil, evs[i]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i, l := range lines {
		if err := b.AppendEncoded(l, got[i].Type); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	fa, _ := os.ReadFile(a.Path())
	fb, _ := os.ReadFile(b.Path())
	if !bytes.Equal(fa, fb) || len(fa) == 0 {
		t.Fatalf("Encode+AppendEncoded wrote %d bytes, Append %d, and they differ", len(fb), len(fa))
	}
	if bytes.Contains(fa, []byte("hunter2-very-secret-value")) || !bytes.Contains(fa, []byte(`\u202e`)) {
		t.Fatal("the secret was not redacted or the bidi control not respelled")
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatal("Encode returned other events than Append")
	}
	if _, _, err := b.Encode(nil, session.Event{Seq: 1}); err == nil {
		t.Fatal("an event without a type encoded")
	}
	if err := b.AppendEncoded([]byte("{}\n"), session.TypeUserNote); !errors.Is(err, ErrRecorderClosed) {
		t.Fatalf("AppendEncoded after Close: %v", err)
	}
}
