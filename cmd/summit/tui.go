package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/cmd/summit/internal/idlecores"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/live"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/ui"
)

// backend adapts the orchestrator to the UI: every intent is a line of the command grammar.
type backend struct{ x *live.Orchestrator }

func (b backend) Submit(line string) ui.Reply {
	r, err := b.x.Submit(context.Background(), line)
	if err != nil {
		return ui.Reply{Error: err.Error()}
	}
	return ui.Reply{Rejected: r.Rejected, Error: r.Error, Output: r.Output, Quit: r.Quit}
}

func needTerminal() error {
	if !term.IsTerminal(os.Stdout.Fd()) || !term.IsTerminal(os.Stdin.Fd()) {
		self := selfCommand()
		return usageErr("the workbench needs a terminal; for scripts use '%s run --script FILE' or '%s replay FILE --print'", self, self)
	}
	return nil
}

// historyFile is the per-workspace input history.
func historyFile(ws string) string { return filepath.Join(ws, ".summit", "history") }

func loadHistory(ws string) []string {
	f, err := os.Open(historyFile(ws))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// The file is in the workspace, which a cloned repository can bring: a recalled line
		// lands in the input as it reads, so what a terminal would act on or hide is escaped.
		if l := session.Sanitize(strings.TrimSpace(sc.Text())); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > 1000 {
		out = out[len(out)-1000:]
	}
	return out
}

func saveHistory(ws string) func(string) {
	red := record.NewRedactor(os.Environ())
	return func(line string) {
		if strings.ContainsAny(line, "\r\n") {
			return
		}
		// Keys and tokens typed in a line are kept redacted, as in the recording.
		line = red.RedactText(line)
		_ = os.MkdirAll(filepath.Dir(historyFile(ws)), 0o755)
		f, err := os.OpenFile(historyFile(ws), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return
		}
		defer f.Close()
		fmt.Fprintln(f, line)
	}
}

// workbench runs the live UI until the user quits; guide, when set, drives a scripted
// tour alongside (summit demo).
func workbench(f *sessionFlags, stderr io.Writer, hint string, guide func(x *live.Orchestrator, p *tea.Program)) error {
	if err := needTerminal(); err != nil {
		return err
	}
	f.interactive = true
	// A library that logs (the genai SDK warns on stderr when two key variables are set)
	// would write into the screen: its lines are kept and printed after the terminal is back.
	var logged bytes.Buffer
	log.SetOutput(&syncWriter{w: &logged})
	defer func() {
		log.SetOutput(os.Stderr)
		for _, l := range strings.Split(strings.TrimRight(logged.String(), "\n"), "\n") {
			if l != "" {
				fmt.Fprintln(stderr, session.Sanitize(l))
			}
		}
	}()
	bridge := ui.NewBridge()
	if err := f.resume.show(bridge.Push); err != nil { // resume.go: what the recording holds
		return err
	}
	w, err := f.wire("", stderr, bridge.Push)
	if err != nil {
		return err
	}
	startupMark("wired")
	home := w.workspace // where the input history is kept: a fork's is its own folder's
	if w.forkedInto != "" {
		home = w.forkedInto
	}
	m := ui.New(ui.Options{Backend: backend{w.x}, History: loadHistory(home), SaveHistory: saveHistory(home),
		Agents: w.agents, Runners: w.x.RunnerNames, Demo: joinNotice(warnNotice(w.trust), warnNotice(w.changed), warnNotice(w.hookNote), w.startHint(hint))})
	// What does not draw the first frame (the leftovers scan, saving the inventory) starts
	// once that frame is written (frameOut).
	out := &frameOut{File: os.Stdout, then: w.late.start}
	// summit handles the signals itself: Bubble Tea's own handler, racing with ours, can block
	// sending to an event loop that already ended and hang the shutdown (v2.0.10).
	// A workbench with nothing to show runs on one core (see idlecores): Bubble Tea's frame
	// timer wakes it every frame regardless, and on one P each wake-up costs less.
	cores := idlecores.New(time.Second, nil)
	defer cores.Stop()
	p := tea.NewProgram(m, tea.WithOutput(out), tea.WithoutSignalHandler(), tea.WithFPS(ui.FrameRate), tea.WithColorProfile(colorProfile()),
		tea.WithFilter(cores.Filter))
	done := make(chan struct{})
	go bridge.Run(p.Send, done)
	if guide != nil {
		go guide(w.x, p)
	}
	// A closed terminal (SIGHUP, tmux kill-session), SIGTERM, SIGINT (kill -INT; ctrl+c is a
	// key here) or SIGQUIT ends the session as cleanly as quitting: the program restores the
	// terminal, the recording gets SessionEnded with reason signal, and summit exits 1.
	// SIGQUIT must be caught too: Go's default handler dumps every goroutine and exits 2,
	// leaving the terminal in the alt screen and the recording without its end.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	var signalled atomic.Value // os.Signal
	go func() {
		if sig, ok := <-sigs; ok {
			signalled.Store(sig)
			p.Quit()
		}
	}()
	startupMark("program")
	_, runErr := p.Run()
	cores.Stop() // every core for closing the session
	reason := "quit"
	sig, _ := signalled.Load().(os.Signal)
	if sig != nil {
		reason, runErr = "signal", nil // the terminal may be gone: its write errors do not matter
	}
	cerr := w.x.Close(reason)
	w.closed()
	close(done)
	w.late.print(stderr) // where these lines stood before the workbench opened
	if w.recording != "" && !errors.Is(cerr, record.ErrRecordingReplaced) {
		fmt.Fprint(stderr, recordedNote(w.recording))
	}
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) {
		return badFile(runErr)
	}
	if cerr != nil {
		return badFile(cerr)
	}
	if sig != nil {
		return &exitError{exitBad, fmt.Errorf("the session ended on %s", sigName(sig))}
	}
	return nil
}

// sigName is SIGTERM, SIGINT, SIGHUP, as a person knows them.
func sigName(s os.Signal) string {
	switch s {
	case syscall.SIGHUP:
		return "SIGHUP (the terminal closed)"
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return s.String()
}

// replayUI opens a recording in the workbench (and, when its session did not end while
// subagents ran on runners, asks whether to reattach them: reattach.go).
func replayUI(path string, lenient bool, speed float64, from uint64, nats natsOnly) error {
	if err := needTerminal(); err != nil {
		return err
	}
	r, err := ui.OpenReplay(path, record.ReadOptions{Lenient: lenient})
	if err != nil {
		return badFile(err)
	}
	defer r.Close()
	r.Speed = speed
	if from > 0 {
		if err := r.SeekSeq(from); err != nil {
			return usageErr("--from: %v", err)
		}
	}
	resume, subs := reattachOffer(path)
	m := ui.New(ui.Options{Replay: r, Reattach: subs})
	// Idle on one core, as the workbench, once the background fold has caught up.
	cores := idlecores.New(time.Second, func() bool { return !r.CaughtUp() })
	_, err = tea.NewProgram(m, tea.WithFPS(ui.FrameRate), tea.WithColorProfile(colorProfile()), tea.WithFilter(cores.Filter)).Run()
	cores.Stop() // before a fork's workbench starts, which must find every core
	if err != nil {
		return badFile(err)
	}
	if m.Reattach() && resume != nil {
		// "reattach" typed and confirmed: the session goes on live on its recording.
		r.Close()
		return reattachWorkbench(resume, nats, os.Stderr)
	}
	if seq := m.ForkSeq(); seq > 0 {
		// F twice: the replay ends and a live session continues from that event.
		r.Close()
		return forkWorkbench(path, seq, os.Stderr)
	}
	return nil
}

// colorProfile is the terminal's colour profile as Bubble Tea would detect it (the
// environment, NO_COLOR, the terminfo entry), but without asking tmux: inside tmux,
// colorprofile.Detect runs `tmux info` to learn whether tmux passes 24-bit colour, a child
// process on every start. There the profile is what TERM's terminfo entry says (256 colours,
// or 24-bit when it has Tc or RGB).
func colorProfile() colorprofile.Profile {
	env := os.Environ()
	kept := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX=") {
			kept = append(kept, kv)
		}
	}
	return colorprofile.Detect(os.Stdout, kept)
}

func newWorkbenchFlags(root *cobra.Command) *sessionFlags {
	f := &sessionFlags{}
	f.register(root)
	return f
}

// joinNotice puts the start notices on the one notice line, the first (most urgent) first.
func joinNotice(notes ...string) string {
	var kept []string
	for _, n := range notes {
		if n != "" {
			kept = append(kept, n)
		}
	}
	return strings.Join(kept, " · ")
}

func warnNotice(s string) string {
	if s == "" {
		return ""
	}
	return "⚠ " + s
}

// syncWriter serialises writes to w (the standard logger may be used from many goroutines).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// frameOut is the workbench's terminal output: the first write that enters the alt screen
// carries the first frame (Bubble Tea's renderer writes both in one flush), and then runs
// then, once. It embeds the *os.File, so Bubble Tea still finds the terminal (term.File).
type frameOut struct {
	*os.File
	once sync.Once
	then func()
}

func (o *frameOut) Write(b []byte) (int, error) {
	n, err := o.File.Write(b)
	if bytes.Contains(b, []byte(ansi.SetModeAltScreenSaveCursor)) {
		o.once.Do(func() { startupMark("frame"); o.then() })
	}
	return n, err
}

func (o *frameOut) WriteString(s string) (int, error) { return o.Write([]byte(s)) }

// lateNotes is the interactive start's work that the first frame does not need. It runs in
// the background once that frame is on the screen (start); what each piece has to say is
// kept and printed when the terminal is back (print), since a line written to the terminal
// under the alt screen would garble it.
type lateNotes struct {
	jobs []func(io.Writer)
	once sync.Once
	done chan struct{}
	buf  bytes.Buffer
}

// add queues job; only before start.
func (l *lateNotes) add(job func(io.Writer)) { l.jobs = append(l.jobs, job) }

// start runs the jobs in the background, in order, once.
func (l *lateNotes) start() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		l.done = make(chan struct{})
		go func() {
			defer close(l.done)
			for _, j := range l.jobs {
				j(&l.buf)
			}
		}()
	})
}

// wait starts the jobs if nothing did (the program ended before its first frame) and waits
// for them.
func (l *lateNotes) wait() {
	if l == nil {
		return
	}
	l.start()
	<-l.done
}

// print waits for the jobs and writes what they said to w.
func (l *lateNotes) print(w io.Writer) {
	if l == nil {
		return
	}
	l.wait()
	_, _ = w.Write(l.buf.Bytes())
	l.buf.Reset()
}
