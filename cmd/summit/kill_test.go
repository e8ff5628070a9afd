package main

// Kill -9 loops: whatever summit showed before it was killed is in its recording. The
// orchestrator writes each event to the kernel (Append and Flush) before it folds it and
// before OnEvent prints or draws it, so a SIGKILL at any moment loses nothing that was shown;
// at most the line being written is torn.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/live"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

// churnFixture is a workspace with an agent that reads, is refused and asks for the shell
// many times, and a script that starts three of it at once.
func churnFixture(t *testing.T, turns int) (ws, tapes, script string) {
	t.Helper()
	ws, tapes = t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit", "agents"), 0o755)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".summit", "agents", "churn.md"), []byte("---\nname: churn\ndescription: reads, is refused and asks, many times\n"+
		"tools: [read_file, run_shell_command]\nmax_turns: 1000\n---\nChurn.\n"), 0o644)
	var b strings.Builder
	b.WriteString("tapes:\n  - name: churn\n    match: {agent: churn}\n    steps:\n")
	for i := range turns {
		fmt.Fprintf(&b, "      - say: \"turn %d: reading, being refused and asking\"\n", i)
		for range 3 {
			b.WriteString("      - tool: read_file\n        args: {path: a.txt}\n")
			b.WriteString("      - tool: glob\n        args: {pattern: \"*.txt\"}\n") // not among its tools: refused
		}
		if i%5 == 0 {
			b.WriteString("      - tool: run_shell_command\n        args: {command: \"true\"}\n") // asks; --approve all grants
		}
	}
	b.WriteString("      - capsule: {summary: \"churned\"}\n")
	os.WriteFile(filepath.Join(tapes, "churn.yaml"), []byte(b.String()), 0o644)
	script = filepath.Join(t.TempDir(), "churn.summit")
	os.WriteFile(script, []byte("/delegate \"churn one\" --agent-type churn\n/delegate \"churn two\" --agent-type churn\n/delegate \"churn three\" --agent-type churn\n"), 0o644)
	return ws, tapes, script
}

// killRun is one run of the loop.
type killRun struct {
	stderr   []byte
	events   []session.Event
	report   record.ReadReport
	readErr  error
	exited   bool // the run had ended before the signal
	wall     time.Duration
	recorded bool // the file holds at least one event
	ended    bool // the file holds the SessionEnded
}

// killAt is when the loop kills a run: once its stderr has shown Lines whole lines, and After
// more on the clock (so the signal lands anywhere in what the process does next, a write
// included). A point in the run's own output, not a time since its start: on a loaded machine a
// run's wall time swings by 2x between runs, and kill times drawn from a calibration run then
// fell mostly after the end (15 of 24 at load 20-30), which proved little.
type killAt struct {
	Lines int
	After time.Duration
}

// noKill lets the run finish.
var noKill = killAt{Lines: -1}

// lineGate is a run's stderr: it keeps the bytes and closes reached once lines whole lines
// have been written.
type lineGate struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	lines   int
	want    int
	reached chan struct{}
}

func (g *lineGate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.buf.Write(p)
	if g.want >= 0 && g.lines < g.want {
		g.lines += bytes.Count(p, []byte("\n"))
		if g.lines >= g.want {
			close(g.reached)
		}
	}
	return len(p), nil
}

// runAndKill starts a headless run and sends SIGKILL at k (never, for noKill).
func runAndKill(t *testing.T, bin string, args []string, env []string, rec string, k killAt) killRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	g := &lineGate{want: k.Lines, reached: make(chan struct{})}
	if k.Lines == 0 {
		close(g.reached)
	}
	cmd.Stderr = g
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return killRun{readErr: err}
	}
	var r killRun
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	if k.Lines >= 0 {
		select {
		case <-g.reached:
			time.Sleep(k.After)
			if cmd.Process.Signal(syscall.SIGKILL) != nil {
				r.exited = true // os: process already finished
			}
			err = <-waited
		case err = <-waited: // it ended before showing that many lines
		}
	} else {
		err = <-waited
	}
	r.wall = time.Since(start)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
		r.exited = true
	} else if k.Lines < 0 {
		t.Errorf("the run was killed: %v", err)
	}
	g.mu.Lock()
	r.stderr = bytes.Clone(g.buf.Bytes())
	g.mu.Unlock()
	if _, err := os.Stat(rec); err == nil {
		r.events, r.report, r.readErr = record.ReadAll(rec, record.ReadOptions{})
	}
	r.recorded = len(r.events) > 0
	for _, ev := range r.events {
		if _, ok := ev.Data.(session.SessionEnded); ok {
			r.ended = true
		}
	}
	return r
}

// replyLine is a line of the script's own output (its echo, the replies, summit's notes):
// everything on stderr that is not an event's progress line.
var replyLine = regexp.MustCompile(`^(» |summit: |  delegated to sa-\d+)`)

// checkShown fails unless every progress line printed is in the multiset of the recording's
// progress lines. It returns how many lines it checked and whether the output ended mid-line.
func checkShown(t *testing.T, i int, r killRun) (checked int, partial bool) {
	t.Helper()
	if r.readErr != nil {
		t.Errorf("run %d: the recording cannot be read (a torn line before the last?): %v", i, r.readErr)
	}
	inFile := map[string]int{}
	for _, ev := range r.events {
		if l := live.Progress(ev); l != "" {
			inFile[l]++
		}
	}
	lines := strings.Split(string(r.stderr), "\n")
	if last := lines[len(lines)-1]; last != "" {
		partial = true // killed mid-write: the line is not whole, it is not checked
	}
	lines = lines[:len(lines)-1]
	for _, l := range lines {
		if l == "" || replyLine.MatchString(l) {
			continue
		}
		checked++
		if inFile[l] == 0 {
			t.Errorf("run %d: stderr showed %q, which the recording does not hold (%d events, torn tail %v)", i, l, len(r.events), r.report.Torn)
			continue
		}
		inFile[l]--
	}
	return checked, partial
}

// TestKillNineHeadless kills 'summit run' with SIGKILL at a random moment, over and over, and
// checks each time that every progress line it printed on stderr is in the recording, and
// that the recording reads with at most its last line torn. SUMMIT_E2E=1 runs 48 kills,
// SUMMIT_SOAK=1 120; without them, 24 (none with -short). Two runs go at once, to keep the
// wall time down; the whole runs the kill points are drawn from (a line of the run's output
// and a moment after it, see killAt) are measured the same way.
func TestKillNineHeadless(t *testing.T) {
	t.Parallel()
	// 48 kills under SUMMIT_E2E (CI) keep cmd/summit's -race run under Go's 10-minute package
	// timeout on a loaded 2-core machine; SUMMIT_SOAK=1 runs the 120 of the original soak.
	kills := 48
	if os.Getenv("SUMMIT_SOAK") != "" {
		kills = 120
	}
	if os.Getenv("SUMMIT_E2E") == "" && os.Getenv("SUMMIT_SOAK") == "" {
		if testing.Short() {
			t.Skip("the kill loop takes seconds; SUMMIT_E2E=1 runs it whole")
		}
		kills = 24
	}
	const workers = 2
	t0 := time.Now()
	bin := buildBinary(t)
	ws, tapes, script := churnFixture(t, 8)
	cfg := t.TempDir()
	dir := t.TempDir()
	runOnce := func(i int, k killAt) killRun {
		rec := filepath.Join(dir, fmt.Sprintf("rec-%d.jsonl", i))
		cache := filepath.Join(dir, fmt.Sprintf("cache-%d", i)) // leftovers of a killed run stay out of the next one
		env := append(os.Environ(), "XDG_CACHE_HOME="+cache, "XDG_CONFIG_HOME="+cfg)
		return runAndKill(t, bin, []string{"run", "--script", script, "--tapes", tapes, "--approve", "all", "--workspace", ws, "--record", rec}, env, rec, k)
	}
	// parallel runs f(0..n-1) on the workers.
	parallel := func(n int, f func(i int)) {
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					f(i)
				}
			}()
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
	}

	// Calibration: whole runs, unkilled, print exactly the recording's progress lines.
	var mu sync.Mutex
	var walls []time.Duration
	var outLines []int // each whole run's stderr lines
	parallel(2*workers, func(i int) {
		r := runOnce(-1-i, noKill)
		if !r.ended || r.report.Torn {
			t.Errorf("a whole run did not end its recording (ended %v, torn %v):\n%s", r.ended, r.report.Torn, r.stderr)
			return
		}
		n, _ := checkShown(t, -1-i, r)
		want := 0
		for _, ev := range r.events {
			if live.Progress(ev) != "" {
				want++
			}
		}
		if n != want {
			t.Errorf("a whole run printed %d progress lines, its recording makes %d", n, want)
		}
		mu.Lock()
		walls = append(walls, r.wall)
		outLines = append(outLines, bytes.Count(r.stderr, []byte("\n")))
		if len(walls) == 1 {
			t.Logf("a whole run: %d events, %d progress lines, %v", len(r.events), n, r.wall.Round(time.Millisecond))
		}
		mu.Unlock()
	})
	if t.Failed() {
		return
	}
	slices.Sort(walls)
	typical := walls[len(walls)/2]
	// The kill points are drawn from the whole run's output (its fewest lines, so every point
	// is one every run reaches), and a moment after it (up to a typical gap between two lines).
	total := slices.Min(outLines)
	gap := typical / time.Duration(max(total, 1))

	var midRun, beforeFirst, afterEnd, finished, torn, partial, lines, events int
	parallel(kills, func(i int) {
		d := killAt{Lines: rand.IntN(max(total-1, 1)), After: time.Duration(rand.Int64N(int64(gap) + 1))}
		r := runOnce(i, d)
		n, p := checkShown(t, i, r)
		mu.Lock()
		defer mu.Unlock()
		lines += n
		events += len(r.events)
		if p {
			partial++
		}
		if r.report.Torn {
			torn++
		}
		switch {
		case r.exited:
			finished++
		case !r.recorded:
			beforeFirst++
		case r.ended:
			afterEnd++
		default:
			midRun++
		}
		if t.Failed() && (n > 0 || r.readErr != nil) {
			t.Logf("run %d killed after line %d and %v; stderr:\n%s", i, d.Lines, d.After, r.stderr)
		}
	})
	t.Logf("%d kills after line [0, %d) of a whole run's output and up to %v (walls of whole runs %v): %d mid-run, %d before the first event, %d while closing (SessionEnded written), %d after the run had ended; "+
		"%d progress lines checked against %d recorded events; %d recordings with a torn last line, %d stderr cut mid-line; %v in all",
		kills, total-1, gap.Round(time.Microsecond), walls, midRun, beforeFirst, afterEnd, finished, lines, events, torn, partial, time.Since(t0).Round(time.Millisecond))
	if midRun < kills/2 {
		t.Errorf("only %d of %d kills landed mid-run: the loop proves little", midRun, kills)
	}
}

// readerFixture is a workspace with an agent that streams slowly on the wall clock (the
// workbench is interactive): each turn says "say-N …" and globs "turn-N-*.go".
func readerFixture(t *testing.T) (ws, tapes string) {
	t.Helper()
	ws, tapes = t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".summit", "agents"), 0o755)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".summit", "agents", "reader.md"), []byte("---\nname: reader\ndescription: reads slowly\n"+
		"tools: [read_file, glob]\npermissionMode: plan\nmax_turns: 1000\n---\nReader.\n"), 0o644)
	var b strings.Builder
	b.WriteString("tapes:\n  - name: reader\n    match: {agent: reader}\n    rate: 60\n    steps:\n")
	for i := range 200 {
		fmt.Fprintf(&b, "      - say: \"say-%d of the reader, streamed a word at a time\"\n", i)
		fmt.Fprintf(&b, "      - tool: glob\n        args: {pattern: \"turn-%d-*.go\"}\n", i)
		b.WriteString("      - tool: read_file\n        args: {path: a.txt}\n")
	}
	b.WriteString("      - capsule: {summary: \"read\"}\n")
	os.WriteFile(filepath.Join(tapes, "reader.yaml"), []byte(b.String()), 0o644)
	return ws, tapes
}

// TestKillNineWorkbench kills the workbench (the summit process, not tmux) while two
// subagents stream, right after the screen was captured, several times; what the screen
// showed is in the recording: every subagent in the tree, each one's token figure (the fold
// of some prefix of the recording gives it), and every say-N and glob turn-N of the
// transcript on screen.
func TestKillNineWorkbench(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	ws, tapes := readerFixture(t)
	cfg := t.TempDir()
	const kills = 6
	var shownIDs, shownTokens, shownSays, shownGlobs, tornTails int
	for k := range kills {
		rec := filepath.Join(t.TempDir(), "rec.jsonl")
		tm := newTerm(t, 140, 40, "cd "+ws+" && XDG_CONFIG_HOME="+cfg+" exec "+bin+" --tapes "+tapes+" --record "+rec)
		tm.waitFor(`type /help`, 10*time.Second)
		tm.keys(`/delegate "read one" --agent-type reader`, "Enter")
		tm.waitFor(`sa-1 reader`, 10*time.Second)
		tm.keys(`/delegate "read two" --agent-type reader`, "Enter")
		tm.waitFor(`sa-2 reader`, 10*time.Second)
		// sa-1's transcript, following its tail.
		tm.keys("Escape")
		tm.waitFor(`┏━ tree`, 5*time.Second)
		tm.keys("Down", "Enter")
		time.Sleep(time.Duration(200+rand.IntN(2500)) * time.Millisecond)
		pid, err := strconv.Atoi(strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{pane_pid}")))
		if err != nil {
			t.Fatal(err)
		}
		screen := tm.screen()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %d: %v", pid, err)
		}
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}

		events, rep, err := record.ReadAll(rec, record.ReadOptions{})
		if err != nil {
			t.Fatalf("kill %d: the recording cannot be read: %v", k, err)
		}
		if rep.Torn {
			tornTails++
		}
		// Every token figure each subagent had after some prefix of the recording.
		st := &session.State{}
		tokens := map[string]map[string]bool{}
		glob := map[string]map[string]bool{}
		says := map[string]string{}
		for _, ev := range events {
			if err := session.Apply(st, ev); err != nil {
				t.Fatalf("kill %d: fold: %v", k, err)
			}
			for _, sa := range st.Subagents {
				if tokens[sa.ID] == nil {
					tokens[sa.ID] = map[string]bool{}
				}
				tokens[sa.ID][render.FormatTokens(sa)] = true
			}
			if te, ok := ev.Data.(session.TranscriptEvent); ok {
				switch te.EventType {
				case session.TranscriptToolCall:
					if glob[ev.SubagentID] == nil {
						glob[ev.SubagentID] = map[string]bool{}
					}
					if p, ok := te.Args["pattern"].(string); ok {
						glob[ev.SubagentID][p] = true
					}
				case session.TranscriptToken:
					says[ev.SubagentID] += te.Text
				}
			}
		}
		rows := regexp.MustCompile(`(sa-\d+) reader[^│┃]*?\d\d:\d\d (~?[\d.]+k?)`).FindAllStringSubmatch(screen, -1)
		if len(rows) == 0 {
			t.Errorf("kill %d: no subagent row on the screen:\n%s", k, screen)
		}
		for _, m := range rows {
			shownIDs++
			if st.Subagent(m[1]) == nil {
				t.Errorf("kill %d: the tree showed %s, the recording never spawned it", k, m[1])
				continue
			}
			shownTokens++
			if !tokens[m[1]][m[2]] {
				t.Errorf("kill %d: the tree showed %s with %s tokens; no prefix of the recording gives that (it gives %v)", k, m[1], m[2], tokens[m[1]])
			}
		}
		for _, m := range regexp.MustCompile(`say-(\d+) `).FindAllStringSubmatch(body(screen), -1) {
			shownSays++
			if !strings.Contains(says["sa-1"], "say-"+m[1]+" ") {
				t.Errorf("kill %d: sa-1's transcript showed say-%s, the recording does not hold it", k, m[1])
			}
		}
		for _, m := range regexp.MustCompile(`glob pattern=(turn-\d+-\*\.go)`).FindAllStringSubmatch(screen, -1) {
			shownGlobs++
			if !glob["sa-1"][m[1]] {
				t.Errorf("kill %d: sa-1's transcript showed glob %s, the recording does not hold it", k, m[1])
			}
		}
		if t.Failed() {
			t.Logf("kill %d: the screen:\n%s", k, screen)
			break
		}
	}
	t.Logf("%d workbench kills: %d subagent rows, %d token figures, %d say-N and %d glob calls on screen, all in the recordings; %d torn last lines",
		kills, shownIDs, shownTokens, shownSays, shownGlobs, tornTails)
	if shownSays == 0 || shownGlobs == 0 {
		t.Errorf("the screens showed no transcript to check (say-N %d, glob %d)", shownSays, shownGlobs)
	}
}
