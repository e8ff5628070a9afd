package ui

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
)

// teaScreen does per frame what Bubble Tea v2.0.10's renderer (cursedRenderer.flush) does
// with a changed frame in the alternate screen: wrap the View's string, count its lines,
// clear the cell buffer, parse the string into it (uv.StyledString.Draw), and diff the cells
// against the terminal's into an output buffer (uv.TerminalRenderer Render and Flush). The
// pinned Bubble Tea cannot be changed; this is the part of a frame's cost our View's string
// decides, measured without a terminal.
type teaScreen struct {
	cells uv.ScreenBuffer
	scr   *uv.TerminalRenderer
	out   bytes.Buffer
}

func newTeaScreen(w, h int, p colorprofile.Profile) *teaScreen {
	s := &teaScreen{cells: uv.NewScreenBuffer(w, h)}
	s.scr = uv.NewTerminalRenderer(&s.out, []string{"TERM=tmux-256color"})
	s.scr.SetColorProfile(p)
	s.scr.SetTabStops(-1)
	s.scr.SetScrollOptim(true)
	// enterAltScreen's settings.
	s.scr.SetFullscreen(true)
	s.scr.SetRelativeCursor(false)
	s.scr.Erase()
	return s
}

// frame draws content and returns the bytes it writes to the terminal.
func (s *teaScreen) frame(content string) int {
	ss := uv.NewStyledString(content)
	_ = ss.Height()
	s.cells.Clear()
	ss.Draw(s.cells, s.cells.Bounds())
	s.scr.Render(s.cells.RenderBuffer)
	_ = s.scr.Flush()
	n := s.out.Len()
	s.out.Reset()
	return n
}

// keyModel is the workbench at 200×60 with subs subagents that streamed a while and ended
// (subs 0: an empty session), the input focused, as live.sh types into it.
func keyModel(subs int) *Model {
	g := &evGen{}
	m := New(Options{Backend: &fakeBackend{}, Now: func() time.Time { return t0.Add(time.Hour) }, Dark: true, After: noTimer})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	m.Update(EventsMsg(g.start(subs)))
	if subs > 0 {
		for f := 0; f < 50; f++ {
			m.Update(EventsMsg(frameEvents(g, subs, 50000/FrameRate, f)))
		}
		var evs []session.Event
		for i := 1; i <= subs; i++ {
			evs = append(evs, g.ev("sa-"+strconv.Itoa(i), session.SubagentStop{Outcome: session.OutcomeSuccess, ArtifactPaths: []string{}}))
		}
		m.Update(EventsMsg(evs))
	}
	_ = m.View()
	return m
}

// BenchmarkRendererFrame: the renderer's work (teaScreen.frame) for the frames a keystroke
// makes: one letter typed into the input, then erased, alternately, at 200×60 in an empty
// session and with 200 and 1,000 ended subagents. "key" is the whole keystroke as the
// program runs it (Update, View and the renderer's frame); "renderer" the frame alone on
// the same two View strings. "plain" is the reference: the renderer's frame for a screen of
// unstyled ASCII letters of the same size (one letter changing), the least any 200×60 frame
// costs it, whatever we put in it. Reported: CPU p50 per op (thread CPU clock), bytes of the
// View string and bytes written to the terminal per frame.
func BenchmarkRendererFrame(b *testing.B) {
	b.Run("plain", func(b *testing.B) { rendererFrame(b, -1, "renderer") })
	for _, subs := range []int{0, 200, 1000} {
		for _, mode := range []string{"renderer", "key"} {
			b.Run(fmt.Sprintf("subagents=%d/%s", subs, mode), func(b *testing.B) { rendererFrame(b, subs, mode) })
		}
	}
}

func rendererFrame(b *testing.B, subs int, mode string) {
	keys := []tea.KeyPressMsg{{Code: 'a', Text: "a"}, {Code: tea.KeyBackspace}}
	var views [2]string
	var m *Model
	if subs < 0 {
		line := strings.Repeat("abcd ", 40)
		views[0] = strings.TrimSuffix(strings.Repeat(line+"\n", 60), "\n")
		views[1] = views[0][:len(views[0])-1] + "x"
	} else {
		m = keyModel(subs)
		for i := range views {
			m.Update(keys[i])
			views[i] = m.View().Content
		}
	}
	s := newTeaScreen(200, 60, colorprofile.TrueColor)
	s.frame(views[1])
	runtime.LockOSThread() // threadCPU: see frameBusy
	defer runtime.UnlockOSThread()
	var cpus []time.Duration
	var written, viewBytes int
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tc := threadCPU()
		v := views[i%2]
		if mode == "key" {
			m.Update(keys[i%2])
			v = m.View().Content
		}
		written += s.frame(v)
		viewBytes += len(v)
		cpus = append(cpus, threadCPU()-tc)
	}
	slices.Sort(cpus)
	b.ReportMetric(float64(cpus[len(cpus)/2].Microseconds())/1000, "cpu-p50-ms")
	b.ReportMetric(float64(viewBytes)/float64(b.N), "view-B")
	b.ReportMetric(float64(written)/float64(b.N), "written-B")
}

// TestRendererCellsShowView: the cells Bubble Tea's renderer parses a frame into (what
// BenchmarkRendererFrame measures, and what the terminal is sent) read as the View's text,
// line by line, for the frames a keystroke makes: nothing of the frame wraps, shifts or is
// lost in the parse, whatever ultraviolet version draws it.
func TestRendererCellsShowView(t *testing.T) {
	for _, subs := range []int{0, 200} {
		m := keyModel(subs)
		s := newTeaScreen(200, 60, colorprofile.TrueColor)
		for i, k := range []tea.KeyPressMsg{{Code: 'a', Text: "a"}, {Code: tea.KeyBackspace}, {Code: 'b', Text: "b"}} {
			m.Update(k)
			v := m.View().Content
			if n := s.frame(v); n == 0 {
				t.Fatalf("subagents=%d key %d: the frame wrote nothing", subs, i)
			}
			want := strings.Split(ansi.Strip(v), "\n")
			if len(want) != 60 {
				t.Fatalf("subagents=%d: the View has %d lines, want 60", subs, len(want))
			}
			for y, w := range want {
				if got, w := strings.TrimRight(s.cells.Line(y).String(), " "), strings.TrimRight(w, " "); got != w {
					t.Fatalf("subagents=%d key %d line %d:\n cells %q\n  view %q", subs, i, y, got, w)
				}
			}
		}
		if !strings.Contains(s.cells.Line(58).String(), "› b") {
			t.Errorf("subagents=%d: the typed letter is not on the input line: %q", subs, s.cells.Line(58).String())
		}
	}
}
