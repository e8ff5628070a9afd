package ui

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/record/recordgen"
	"github.com/summit-dev/summit/session/render"
)

// shownState is everything a state shows: the rendering and every transcript item and text.
func shownState(s *session.State) string {
	var b strings.Builder
	b.WriteString(render.Render(s))
	for _, sa := range s.Subagents {
		for i := 0; i < sa.Transcript.Len(); i++ {
			fmt.Fprintf(&b, "%s %d %+v %q\n", sa.ID, i, sa.Transcript.Item(i), sa.Transcript.Text(i))
		}
	}
	return b.String()
}

// TestReplaySeekEquivalence: after random seeks back and forth (digits, the end, seqs, steps
// back, before and after the background fold has caught up, some left pending and completed
// by Poll), the replay's state always equals a straight fold to the same position, with
// checkpoints and the sync bound small enough that every path is taken.
func TestReplaySeekEquivalence(t *testing.T) {
	defer func(a, c int64, b, d int) {
		checkpointBytes, syncBytes, checkpointEvents, foldBatch = a, c, b, d
	}(checkpointBytes, syncBytes, checkpointEvents, foldBatch)
	checkpointBytes, syncBytes, checkpointEvents, foldBatch = 64<<10, 160<<10, 700, 100
	var data bytes.Buffer
	if err := recordgen.Generate(&data, 3<<20, 5); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, data.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	evs, _, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(evs)
	rng := rand.New(rand.NewPCG(1, 2))
	var targets []int
	for range 40 {
		switch p := rng.IntN(n + 1); rng.IntN(4) {
		case 0:
			targets = append(targets, p, max(0, p-1), max(0, p-2))
		case 1:
			targets = append(targets, n, rng.IntN(10)*n/10)
		default:
			targets = append(targets, p)
		}
	}
	// The straight fold, once, noting what each target position shows.
	want := map[int]string{}
	sorted := slices.Sorted(slices.Values(targets))
	st := &session.State{}
	k := 0
	for pos := 0; pos <= n; pos++ {
		for k < len(sorted) && sorted[k] == pos {
			want[pos] = shownState(st)
			k++
		}
		if pos < n {
			if err := session.Apply(st, evs[pos]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The background fold takes one batch per token until the walk is half done.
	tokens := make(chan struct{})
	foldHook = func() { <-tokens }
	defer func() { foldHook = nil }()
	free := false
	r, err := OpenReplay(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !free {
			close(tokens)
		}
		r.Close()
	}()
	pending := 0
	for i, p := range targets {
		if i == len(targets)/2 {
			close(tokens)
			free = true
			r.WaitCaughtUp()
		}
		if err := r.Seek(p); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.Pending(); ok {
			pending++
			for {
				if !free {
					tokens <- struct{}{}
				}
				done, err := r.Poll()
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
			}
		}
		if r.Pos() != p {
			t.Fatalf("seek %d: at %d", p, r.Pos())
		}
		if got := shownState(r.State()); got != want[p] {
			t.Fatalf("seek %d (#%d of the walk): the replay shows a different state from a straight fold", p, i)
		}
	}
	t.Logf("%d events, %d seeks, %d left pending first", n, len(targets), pending)
}

// perfRecording is the recording the replay benchmarks use: $SUMMIT_PERF_RECORDING (for
// instance a 1 GB one from testdata/perf/seek.sh), else a 128 MB one generated once.
var perfRecording = sync.OnceValues(func() (string, error) {
	if p := os.Getenv("SUMMIT_PERF_RECORDING"); p != "" {
		return p, nil
	}
	dir, err := os.MkdirTemp("", "summit-perf-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "r128.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := recordgen.Generate(f, 128<<20, 1); err != nil {
		return "", err
	}
	return path, f.Close()
})

func perfFile(b *testing.B) (string, int64) {
	path, err := perfRecording()
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

func replayModel(b *testing.B, path string) (*Replay, *Model) {
	r, err := OpenReplay(path, record.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	m := New(Options{Replay: r, Now: func() time.Time { return t0 }, Dark: true, After: noTimer})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	_ = m.Render()
	return r, m
}

// BenchmarkReplayFirstFrame: open a recording (index it) and draw the first frame. Target on
// 1 GB: < 1 s.
func BenchmarkReplayFirstFrame(b *testing.B) {
	path, size := perfFile(b)
	b.SetBytes(size)
	for b.Loop() {
		r, _ := replayModel(b, path)
		b.StopTimer()
		r.Close()
		b.StartTimer()
	}
}

// BenchmarkReplayCatchUp: open, draw the first frame, and wait for the background fold to
// reach the end. Target on 1 GB: < 6 s.
func BenchmarkReplayCatchUp(b *testing.B) {
	path, size := perfFile(b)
	b.SetBytes(size)
	for b.Loop() {
		r, _ := replayModel(b, path)
		r.WaitCaughtUp()
		b.StopTimer()
		r.Close()
		b.StartTimer()
	}
}

// BenchmarkReplaySeek: every kind of seek once the background fold has caught up, key press
// to drawn frame. Target: < 100 ms each.
func BenchmarkReplaySeek(b *testing.B) {
	path, _ := perfFile(b)
	r, m := replayModel(b, path)
	defer r.Close()
	r.WaitCaughtUp()
	rng := rand.New(rand.NewPCG(3, 4))
	run := func(name string, keys func() []string) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				ks := keys()
				b.StartTimer()
				press(m, ks...)
				_ = m.Render()
				if _, ok := r.Pending(); ok {
					b.Fatal("a seek after catch-up was left pending")
				}
			}
		})
	}
	run("digit", func() []string { return []string{fmt.Sprint(rng.IntN(10))} })
	run("end", func() []string { m.seek(rng.IntN(r.Len())); return []string{"$"} })
	run("seq", func() []string {
		return append(append([]string{":"}, strings.Split(fmt.Sprint(1+rng.IntN(r.Len())), "")...), "enter")
	})
	run("stepback", func() []string { m.seek(1 + rng.IntN(r.Len())); return []string{","} })
}

// TestReplayPendingSeek: a seek far beyond the background fold does not block: the key
// returns at once with the old frame and a progress notice, other keys keep working, and the
// poll tick lands the seek once the fold comes near.
func TestReplayPendingSeek(t *testing.T) {
	defer func(a, c int64, b, d int) {
		checkpointBytes, syncBytes, checkpointEvents, foldBatch = a, c, b, d
	}(checkpointBytes, syncBytes, checkpointEvents, foldBatch)
	checkpointBytes, syncBytes, checkpointEvents, foldBatch = 64<<10, 160<<10, 700, 100
	var data bytes.Buffer
	if err := recordgen.Generate(&data, 2<<20, 9); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, data.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	foldHook = func() { <-gate }
	defer func() { foldHook = nil }()
	r, err := OpenReplay(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opened := false
	defer func() {
		if !opened {
			close(gate)
		}
		r.Close()
	}()
	var armed []tea.Msg
	after := func(_ time.Duration, msg tea.Msg) tea.Cmd {
		armed = append(armed, msg)
		return func() tea.Msg { return msg }
	}
	m := New(Options{Replay: r, Now: func() time.Time { return t0 }, Dark: true, After: after})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	press(m, "9")
	if _, ok := r.Pending(); !ok || r.Pos() != 1 {
		t.Fatalf("a seek beyond the fold: pending %v at %d", ok, r.Pos())
	}
	if !strings.Contains(m.notice, "seeking to event") {
		t.Errorf("no progress shown: %q", m.notice)
	}
	press(m, "]") // keys stay live: a near seek moves at once and drops the far one
	if _, ok := r.Pending(); ok || r.Pos() <= 1 {
		t.Fatalf("a near seek while one was pending: pending %v at %d", ok, r.Pos())
	}
	press(m, "$")
	if _, ok := r.Pending(); !ok {
		t.Fatal("the end should wait for the fold")
	}
	close(gate)
	opened = true
	r.WaitCaughtUp()
	_, cmd := m.Update(replayTickMsg{poll: true})
	runCmd(m, cmd)
	if _, ok := r.Pending(); ok || r.Pos() != r.Len() || m.st != r.State() {
		t.Fatalf("the poll did not land the seek: at %d of %d", r.Pos(), r.Len())
	}
	if len(armed) == 0 {
		t.Error("no poll tick was armed")
	}
}
