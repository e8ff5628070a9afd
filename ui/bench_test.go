package ui

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// evGen builds a well-formed event stream for benchmarks.
type evGen struct{ seq uint64 }

func (g *evGen) ev(sub string, d session.Data) session.Event {
	g.seq++
	return session.Event{V: 1, Seq: g.seq, TS: t0.Add(time.Duration(g.seq) * time.Millisecond), SessionID: "s-bench", Type: d.Type(), SubagentID: sub, Data: d}
}

func (g *evGen) start(n int) []session.Event {
	evs := []session.Event{g.ev("", session.SessionStarted{Schema: 1, ProgramVersion: "bench", Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script", AllowedTools: []string{}})}
	for i := 1; i <= n; i++ {
		id := "sa-" + strconv.Itoa(i)
		evs = append(evs,
			g.ev(id, session.SubagentSpawned{AgentType: "builder", ParentSessionID: "s-bench", ParentSessionRef: "s-bench", PermissionMode: "acceptEdits", Tools: []string{}, TaskDescription: "task " + id, TimeoutS: 300, InheritContext: true}),
			g.ev(id, session.TranscriptEvent{EventType: session.TranscriptStart, Text: "task " + id}),
			g.ev(id, session.SubagentActive{InitialState: "running"}))
	}
	return evs
}

// BenchmarkFrameBusy: 200 subagents streaming a combined 50 k tokens/s, one batch of events
// per 60 Hz frame (the Bridge's rate), on a 200×60 screen. Each op folds one frame's events
// and renders it. Reported: the p99 of View() alone, and the CPU share of one core at 60
// frames a second (fold + render).
func BenchmarkFrameBusy(b *testing.B) {
	const subs, perFrame = 200, 50000 / 60
	g := &evGen{}
	m := New(Options{Backend: &fakeBackend{}, Now: func() time.Time { return t0.Add(time.Hour) }, Dark: true})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	m.Update(EventsMsg(g.start(subs)))
	m.sel = "sa-7"
	// Warm: some history in every transcript.
	for f := 0; f < 50; f++ {
		m.Update(EventsMsg(frameEvents(g, subs, perFrame, f)))
	}
	var views []time.Duration
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		m.Update(EventsMsg(frameEvents(g, subs, perFrame, i)))
		t := time.Now()
		_ = m.View()
		views = append(views, time.Since(t))
	}
	total := time.Since(start)
	b.StopTimer()
	slices.Sort(views)
	b.ReportMetric(float64(views[len(views)*99/100].Microseconds())/1000, "view-p99-ms")
	b.ReportMetric(float64(views[len(views)/2].Microseconds())/1000, "view-p50-ms")
	b.ReportMetric(100*(total.Seconds()/float64(b.N))*60, "cpu%@60fps")
}

func frameEvents(g *evGen, subs, n, f int) []session.Event {
	evs := make([]session.Event, 0, n)
	for k := 0; k < n; k++ {
		id := "sa-" + strconv.Itoa(1+(f*n+k)%subs)
		text := "tok "
		if k%40 == 0 {
			text = "line\n"
		}
		evs = append(evs, g.ev(id, session.TranscriptEvent{EventType: session.TranscriptToken, Text: text}))
	}
	return evs
}

// BenchmarkTranscriptFrame renders the selected transcript at 1 k and at 1 M lines, following
// the tail and scrolled to the middle: the cost must not grow with the transcript.
func BenchmarkTranscriptFrame(b *testing.B) {
	for _, lines := range []int{1_000, 1_000_000} {
		g := &evGen{}
		m := New(Options{Backend: &fakeBackend{}, Now: func() time.Time { return t0 }, Dark: true})
		m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
		m.Update(EventsMsg(g.start(1)))
		evs := make([]session.Event, 0, 4096)
		for i := 0; i < lines/2; i++ {
			// Alternate tool calls and text so every item is a separate line block.
			evs = append(evs, g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: fmt.Sprintf("line %d of the model's answer, long enough to look real\n", i)}),
				g.ev("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: strconv.Itoa(i), Tool: "read_file", Args: map[string]any{"path": "a.go"}}))
			if len(evs) >= 4096 {
				m.fold(evs)
				evs = evs[:0]
			}
		}
		m.fold(evs)
		m.sel = "sa-1"
		for _, mode := range []string{"follow", "scrolled"} {
			b.Run(fmt.Sprintf("%dlines/%s", lines, mode), func(b *testing.B) {
				v := m.view("sa-1")
				v.follow = mode == "follow"
				if !v.follow {
					v.item, v.line = m.st.Subagent("sa-1").Transcript.Len()/2, 0
				}
				_ = m.Render()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_ = m.Render()
				}
			})
		}
	}
}

// BenchmarkOpenReplay opens a ~200 MB recording and draws the first frame: index the file
// (no decoding), decode the first event, render. Reported as the projected time for 1 GB;
// the target is under 1.5 s.
func BenchmarkOpenReplay(b *testing.B) {
	g := &evGen{}
	var data []byte
	for _, e := range g.start(50) {
		data, _ = record.AppendLine(data, e)
	}
	for len(data) < 200<<20 {
		id := "sa-" + strconv.Itoa(1+int(g.seq)%50)
		data, _ = record.AppendLine(data, g.ev(id, session.TranscriptEvent{EventType: session.TranscriptToken, Text: "a streamed token or two "}))
	}
	path := b.TempDir() + "/big.jsonl"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r, err := OpenReplay(path, record.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		m := New(Options{Replay: r, Now: func() time.Time { return t0 }})
		m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
		_ = m.Render()
		r.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)*float64(1<<30)/float64(len(data)), "ms/GB")
}
