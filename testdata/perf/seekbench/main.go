// Command seekbench measures replay seeking and memory on a generated recording (see
// testdata/perf/seek.sh, which runs it):
//
//	seekbench gen -size 1024 -o rec.jsonl    write a recording of about 1024 MB
//	seekbench replay -f rec.jsonl            open it, draw the first frame, wait for the
//	                                         background fold, then time every kind of seek
//	seekbench end -f rec.jsonl               open it, draw the first frame, press $ at once and
//	                                         time until the end is shown (testdata/perf/endseek.sh)
//	seekbench live -size 1024                stream about 1024 MB through a recorder and the
//	                                         fold the way a live session does
//
// Each run prints one line of key=value pairs, peak RSS (VmHWM) included.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/record/recordgen"
	"github.com/summit-dev/summit/ui"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: seekbench gen|replay|live [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		fs := flag.NewFlagSet("gen", flag.ExitOnError)
		size := fs.Int64("size", 128, "MB")
		out := fs.String("o", "rec.jsonl", "output file")
		fs.Parse(os.Args[2:])
		var f *os.File
		if f, err = os.Create(*out); err == nil {
			err = recordgen.Generate(f, *size<<20, 1)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	case "replay":
		fs := flag.NewFlagSet("replay", flag.ExitOnError)
		file := fs.String("f", "", "recording")
		prof := fs.String("cpuprofile", "", "write a CPU profile")
		memprof := fs.String("memprofile", "", "write a heap profile at the end")
		fs.Parse(os.Args[2:])
		if *prof != "" {
			f, perr := os.Create(*prof)
			if perr != nil {
				err = perr
				break
			}
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		err = replay(*file)
		if *memprof != "" {
			if f, merr := os.Create(*memprof); merr == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	case "end":
		fs := flag.NewFlagSet("end", flag.ExitOnError)
		file := fs.String("f", "", "recording")
		fs.Parse(os.Args[2:])
		err = endAfterOpen(*file)
	case "live":
		fs := flag.NewFlagSet("live", flag.ExitOnError)
		size := fs.Int64("size", 128, "MB")
		dir := fs.String("dir", os.TempDir(), "directory for the recording")
		fs.Parse(os.Args[2:])
		err = live(*size<<20, *dir)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "seekbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// vmHWM is the peak resident set size in MB.
func vmHWM() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

func key(k string) tea.KeyPressMsg {
	if k == "enter" {
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64)
}

func replay(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	t0 := time.Now()
	r, err := ui.OpenReplay(path, record.ReadOptions{})
	if err != nil {
		return err
	}
	defer r.Close()
	m := ui.New(ui.Options{Replay: r, Now: time.Now, Dark: true, After: func(time.Duration, tea.Msg) tea.Cmd { return nil }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	_ = m.Render()
	first := time.Since(t0)
	r.WaitCaughtUp()
	caught := time.Since(t0)
	// Every kind of seek, timed key press to rendered frame.
	press := func(keys ...string) time.Duration {
		t := time.Now()
		for _, k := range keys {
			m.Update(key(k))
		}
		_ = m.Render()
		if _, pending := r.Pending(); pending {
			fmt.Fprintln(os.Stderr, "seekbench: a seek after catch-up was left pending")
		}
		return time.Since(t)
	}
	var digits, steps, seqs []time.Duration
	for _, d := range []string{"5", "0", "9", "1", "8", "2", "7", "3", "6", "4"} {
		digits = append(digits, press(d))
	}
	end := press("$")
	for range 10 {
		steps = append(steps, press(","))
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 10 {
		seq := 1 + rng.IntN(r.Len())
		seqs = append(seqs, press(append(append([]string{":"}, strings.Split(strconv.Itoa(seq), "")...), "enter")...))
	}
	// Step back from the middle of checkpoint intervals.
	for range 10 {
		press(strconv.Itoa(rng.IntN(10)))
		steps = append(steps, press(","))
	}
	runtime.GC()
	var ms2 runtime.MemStats
	runtime.ReadMemStats(&ms2)
	fmt.Printf("file_mb=%d events=%d first_frame_ms=%s catchup_ms=%s seek_digit_max_ms=%s seek_digit_med_ms=%s seek_end_ms=%s seek_seq_max_ms=%s seek_seq_med_ms=%s stepback_max_ms=%s stepback_med_ms=%s heap_mb=%d peak_rss_mb=%.0f\n",
		st.Size()>>20, r.Len(), ms(first), ms(caught), ms(slices.Max(digits)), ms(med(digits)), ms(end), ms(slices.Max(seqs)), ms(med(seqs)),
		ms(slices.Max(steps)), ms(med(steps)), ms2.HeapInuse>>20, vmHWM())
	return nil
}

func med(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// live streams size bytes of generated events through a Recorder and folds each one with its
// place in the recording, as session/live's orchestrator does, reading the last items' text
// back now and then as the screen would.
func live(size int64, dir string) error {
	rdir, err := os.MkdirTemp(dir, "seekbench-live-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(rdir)
	rec, err := record.OpenRecorderFile(filepath.Join(rdir, "live.jsonl"), record.RecorderOptions{Environ: []string{}})
	if err != nil {
		return err
	}
	rf, err := os.Open(rec.Path())
	if err != nil {
		return err
	}
	defer rf.Close()
	st := &session.State{}
	st.SetTextStore(session.NewTextStore(record.NewFileSource(rf), 0))
	var seq uint64
	ts := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var written int64
	t0 := time.Now()
	n := 0
	emit := func(sub string, d session.Data) error {
		seq++
		ts = ts.Add(time.Millisecond)
		before, _ := rec.NextOffset()
		ev, err := rec.Append(session.Event{V: 1, Seq: seq, TS: ts, SessionID: "s-live", Type: d.Type(), SubagentID: sub, Data: d})
		if err == nil {
			err = rec.Flush()
		}
		if err != nil {
			return err
		}
		after, _ := rec.NextOffset()
		written = after
		if err := session.ApplyAt(st, ev, session.Loc{Off: before, Len: int(after - before)}); err != nil {
			return err
		}
		if n++; n%50000 == 0 {
			// The screen: the selected subagent's last items.
			sa := st.Subagents[len(st.Subagents)-1]
			for i := max(0, sa.Transcript.Len()-20); i < sa.Transcript.Len(); i++ {
				_ = sa.Transcript.Text(i)
			}
		}
		return nil
	}
	if err := recordgen.Run(3, emit, func() bool { return written >= size }, func() error { return nil }); err != nil {
		return err
	}
	if err := rec.Close(); err != nil {
		return err
	}
	el := time.Since(t0)
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Printf("streamed_mb=%d events=%d subagents=%d secs=%.1f heap_mb=%d peak_rss_mb=%.0f\n", written>>20, n, len(st.Subagents), el.Seconds(), m.HeapInuse>>20, vmHWM())
	return nil
}

// endAfterOpen is $ right after opening: the first frame, then the seek to the end, timed from
// the key press to the frame that shows the end. A seek left pending is polled every 5 ms
// (the workbench polls every 50 ms). It uses only what every version of the replay has, so
// the same program measures the code before replay sidecars and after.
func endAfterOpen(path string) error {
	t0 := time.Now()
	r, err := ui.OpenReplay(path, record.ReadOptions{})
	if err != nil {
		return err
	}
	defer r.Close()
	m := ui.New(ui.Options{Replay: r, Now: time.Now, Dark: true, After: func(time.Duration, tea.Msg) tea.Cmd { return nil }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	_ = m.Render()
	first := time.Since(t0)
	t1 := time.Now()
	m.Update(key("$"))
	for {
		if _, pending := r.Pending(); !pending {
			break
		}
		time.Sleep(5 * time.Millisecond)
		if _, err := r.Poll(); err != nil {
			return err
		}
	}
	_ = m.Render()
	end := time.Since(t1)
	if r.Pos() != r.Len() {
		return fmt.Errorf("the seek ended at %d of %d", r.Pos(), r.Len())
	}
	fmt.Printf("file_mb=%d events=%d first_frame_ms=%s end_after_open_ms=%s\n", fileMB(path), r.Len(), ms(first), ms(end))
	return nil
}

func fileMB(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size() >> 20
}
