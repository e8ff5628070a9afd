package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// Split is the replay of two recordings side by side (`summit replay A --beside B`): each
// recording is a whole replay Model (its own Replay, fold, checkpoints, tree and transcript),
// drawn in one column. The focused recording leads: keys go to it, it plays, and after each
// move the other follows to the synchronised point: the same seq (SyncSeq), the same time
// since its start (SyncTime), or nowhere (SyncOff, each moves alone). The node selected in
// the leader's tree is selected in the other's too when it has one of that id.
//
// The panes are plain Models: their timers come back wrapped in a paneMsg naming the pane,
// so two replays' ticks never cross.
type Split struct {
	panes [2]*Model
	names [2]string
	focus int
	sync  SyncMode
	w, h  int
	sty   styles
	keys  SplitKeyMap
}

// SyncMode is how the follower pane follows the leader.
type SyncMode int

const (
	SyncSeq  SyncMode = iota // to the last event with a seq at most the leader's
	SyncTime                 // to the last event at most as long after its start as the leader's
	SyncOff                  // not at all
)

var syncNames = []string{"seq", "time", "off"}

func (s SyncMode) String() string { return syncNames[s] }

// ParseSync reads a --sync value.
func ParseSync(v string) (SyncMode, error) {
	for i, n := range syncNames {
		if v == n {
			return SyncMode(i), nil
		}
	}
	return 0, fmt.Errorf("--sync is seq, time or off, got %q", v)
}

// SplitKeyMap are the keys a split replay adds to the replay's own.
type SplitKeyMap struct {
	Switch, Sync key.Binding
}

// DefaultSplitKeyMap is the split replay's key map.
func DefaultSplitKeyMap() SplitKeyMap {
	return SplitKeyMap{
		Switch: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "other recording (it leads)")),
		Sync:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sync: seq → time → off")),
	}
}

// paneMsg is a message one pane's timers sent, for that pane alone.
type paneMsg struct {
	pane int
	msg  tea.Msg
}

// NewSplit shows replay a (the left pane, which leads first) beside replay b. names label the
// panes (file names); o is applied to both panes (Replay and After are set per pane).
func NewSplit(a, b *Replay, names [2]string, sync SyncMode, o Options) *Split {
	after := o.After
	if after == nil {
		after = func(d time.Duration, msg tea.Msg) tea.Cmd {
			return tea.Tick(d, func(time.Time) tea.Msg { return msg })
		}
	}
	s := &Split{names: names, sync: sync, sty: newStyles(o.Dark), keys: DefaultSplitKeyMap(), w: 100, h: 30}
	for i, r := range []*Replay{a, b} {
		po := o
		po.Replay = r
		po.After = func(d time.Duration, msg tea.Msg) tea.Cmd { return after(d, paneMsg{pane: i, msg: msg}) }
		s.panes[i] = New(po)
	}
	s.follow()
	return s
}

// Pane is the model of pane i (0: A, 1: B), for tests.
func (s *Split) Pane(i int) *Model { return s.panes[i] }

// Focus is the pane that leads.
func (s *Split) Focus() int { return s.focus }

// Sync is how the panes follow each other now.
func (s *Split) Sync() SyncMode { return s.sync }

// Init starts both panes (the theme question once).
func (s *Split) Init() tea.Cmd {
	return tea.Batch(tea.RequestBackgroundColor, s.panes[0].replayTick(), s.panes[1].replayTick())
}

// Update routes a message: a size to both panes (a column each), a pane's own timer to that
// pane, keys to the leader (but the split's own), and after the leader moved, the follower
// to it.
func (s *Split) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		s.w, s.h = msg.Width, msg.Height
		for _, p := range s.panes {
			p.Update(tea.WindowSizeMsg{Width: s.colWidth(), Height: msg.Height})
		}
		return s, nil
	case tea.BackgroundColorMsg:
		s.sty = newStyles(msg.IsDark())
		for _, p := range s.panes {
			p.Update(msg)
		}
		return s, nil
	case paneMsg:
		_, cmd := s.panes[msg.pane].Update(msg.msg)
		if msg.pane == s.focus {
			cmd = tea.Batch(cmd, s.follow())
		}
		return s, cmd
	case tea.KeyPressMsg:
		return s, s.key(msg)
	}
	return s, nil
}

// key handles the split's keys, unless the leader is typing (a filter, a search, a seq) or
// shows its help: then every key is the leader's.
func (s *Split) key(k tea.KeyPressMsg) tea.Cmd {
	lead := s.panes[s.focus]
	typing := lead.filtering || lead.searching || lead.seeking || lead.help
	switch {
	case key.Matches(k, lead.keys.Quit):
		return tea.Quit
	case !typing && key.Matches(k, s.keys.Switch):
		// The other pane leads now, and plays if the leader was playing.
		other := s.panes[1-s.focus]
		other.o.Replay.Playing, lead.o.Replay.Playing = lead.o.Replay.Playing, false
		s.focus = 1 - s.focus
		return other.replayTick()
	case !typing && key.Matches(k, s.keys.Sync):
		s.sync = (s.sync + 1) % SyncMode(len(syncNames))
		return s.follow()
	}
	_, cmd := lead.Update(k)
	return tea.Batch(cmd, s.follow())
}

// follow moves the follower to the leader's point and selects the leader's node in it.
func (s *Split) follow() tea.Cmd {
	lead, f := s.panes[s.focus], s.panes[1-s.focus]
	if f.st.Subagent(lead.sel) != nil || f.st.Convergence(lead.sel) != nil || f.st.Conflict(lead.sel) != nil || lead.sel == "" {
		f.sel = lead.sel
	}
	if s.sync == SyncOff {
		return nil
	}
	to := SyncPos(lead.o.Replay, f.o.Replay, s.sync)
	if to == f.o.Replay.Pos() {
		return nil
	}
	f.o.Replay.Playing = false
	return f.seek(to)
}

// SyncPos is where follower f is synchronised with leader l: the number of f's events to
// apply. By seq, every event of f with a seq at most that of l's last applied event; by time,
// every event of f at most as long after f's first event as l's last applied event is after
// l's first. Nothing applied in l is nothing in f.
func SyncPos(l, f *Replay, mode SyncMode) int {
	if l.Pos() == 0 || f.Len() == 0 {
		return 0
	}
	switch mode {
	case SyncSeq:
		seq := l.ix.Seq(l.Pos() - 1)
		return sort.Search(f.Len(), func(i int) bool { return f.ix.Seq(i) > seq })
	case SyncTime:
		d := l.ix.TS(l.Pos() - 1).Sub(l.ix.TS(0))
		t0 := f.ix.TS(0)
		return sort.Search(f.Len(), func(i int) bool { return f.ix.TS(i).Sub(t0) > d })
	}
	return f.Pos()
}

// colWidth is one pane's width: half the screen, the divider column left out.
func (s *Split) colWidth() int { return (s.w - 1) / 2 }

// View draws the screen.
func (s *Split) View() tea.View {
	v := tea.NewView(s.Render())
	v.AltScreen = true
	v.WindowTitle = "summit · replay side by side"
	return v
}

// Render is the screen as text: a header; each recording's name, then its tree and transcript
// (side by side in a wide column, else the tree above the transcript), in two columns; the
// leader's notice; each pane's position and timeline; the keys.
func (s *Split) Render() string {
	if s.w < minW || s.h < minH {
		return truncate(fmt.Sprintf("summit needs at least %d×%d for a side-by-side replay; this terminal is %d×%d", minW, minH, s.w, s.h), max(1, s.w), "…")
	}
	cw := s.colWidth()
	bodyH := s.h - 6 // header, names, notice, status, timeline, footer
	cols := [2][]string{}
	for i, p := range s.panes {
		cols[i] = s.column(i, p, cw, bodyH)
	}
	div := s.sty.border.Render("│")
	row := func(a, b string) string {
		a = truncate(a, cw, "…")
		return a + strings.Repeat(" ", max(0, cw-textWidth(a))) + div + truncate(b, s.w-cw-1, "…")
	}
	lines := []string{s.header()}
	lines = append(lines, row(s.name(0, cw), s.name(1, s.w-cw-1)))
	for r := 0; r < bodyH; r++ {
		lines = append(lines, cols[0][r]+div+cols[1][r])
	}
	lead := s.panes[s.focus]
	lines = append(lines, truncate(lead.noticeLine(), s.w, "…"))
	lines = append(lines, row(s.status(0), s.status(1)))
	lines = append(lines, row(s.sty.marker.Render(s.panes[0].timeline(cw)), s.sty.marker.Render(s.panes[1].timeline(s.w-cw-1))))
	lines = append(lines, s.footer())
	for i, l := range lines {
		lines[i] = truncate(l, s.w, "…")
	}
	return strings.Join(lines, "\n")
}

func (s *Split) header() string {
	parts := []string{s.sty.header.Render("summit"), "replay side by side", "sync " + s.sync.String(),
		fmt.Sprintf("%s leads", "AB"[s.focus:s.focus+1])}
	return strings.Join(parts, s.sty.headerDim.Render(" · "))
}

// name is pane i's label line: A or B, the file, the session id; the leader's marked.
func (s *Split) name(i, w int) string {
	mark := "  "
	st := s.sty.dim
	if i == s.focus {
		mark, st = "▶ ", s.sty.bold
	}
	t := fmt.Sprintf("%s%s · %s", mark, "AB"[i:i+1], session.Sanitize(s.names[i]))
	if id := s.panes[i].st.SessionID; id != "" {
		t += " · " + session.Sanitize(id)
	}
	return st.Render(truncate(t, w, "…"))
}

// column draws pane i's body in w×h. A pane that does not lead shows no focused border.
func (s *Split) column(i int, p *Model, w, h int) []string {
	var out []string
	focus := p.focus
	if i != s.focus {
		p.focus = -1
	}
	switch {
	case p.help:
		// The split's own keys, then the replay's (the pane's help screen, which scrolls).
		var keys []string
		for _, b := range []key.Binding{s.keys.Switch, s.keys.Sync} {
			keys = append(keys, fmt.Sprintf("%-6s %s", b.Help().Key, b.Help().Desc))
		}
		out = append(p.box("side by side", keys, w, true), p.helpBox(w, h-len(keys)-2)...)
	case w >= 90:
		out = p.body(h)
	default:
		th := max(5, h*2/5)
		xh := h - th
		out = append(p.pane(p.treeTitle(), p.renderTree(w-4, th-2), w, th, p.focus == focusTree),
			p.pane(p.transcriptTitle(w-4), p.renderTranscript(w-4, xh-2), w, xh, p.focus == focusTranscript)...)
	}
	p.focus = focus
	for len(out) < h {
		out = append(out, "")
	}
	out = out[:h]
	for r, l := range out {
		l = truncate(l, w, "…")
		out[r] = l + strings.Repeat(" ", max(0, w-textWidth(l)))
	}
	return out
}

// status is pane i's position: playing or not, the speed (the leader's), events applied, the
// last seq and the time since the recording's start.
func (s *Split) status(i int) string {
	r := s.panes[i].o.Replay
	state := "paused"
	switch {
	case r.pos >= r.ix.Len():
		state = "end"
	case r.Playing:
		state = "playing"
	}
	seq, at := uint64(0), time.Duration(0)
	if r.pos > 0 {
		seq, at = r.ix.Seq(r.pos-1), r.ix.TS(r.pos-1).Sub(r.ix.TS(0))
	}
	t := fmt.Sprintf("%s %s %g× · %d/%d · seq %d · +%s", "AB"[i:i+1], state, r.Speed, r.pos, r.ix.Len(), seq, render.FormatDuration(at))
	if r.err != "" {
		t += " · fold error"
	}
	if i == s.focus {
		return s.sty.bold.Render(t)
	}
	return t
}

func (s *Split) footer() string {
	k := s.panes[s.focus].keys
	short := func(b key.Binding, desc string) key.Binding { return key.NewBinding(key.WithHelp(b.Help().Key, desc)) }
	// The split's keys first, then help and quit, so a narrow screen still shows them.
	bs := []key.Binding{short(s.keys.Switch, "other leads"), short(s.keys.Sync, "sync"), short(k.Play, "play"),
		k.Help, short(k.ReplayQuit, "quit"), short(k.Step, "step"), short(k.Markers, "markers"), short(k.Seek, "seek"), short(k.Focus, "pane")}
	var parts []string
	for _, b := range bs {
		h := b.Help()
		parts = append(parts, s.sty.footerKey.Render(h.Key)+" "+s.sty.footer.Render(h.Desc))
	}
	return strings.Join(parts, s.sty.footer.Render(" · "))
}

// ForkAt is the pane (0: the first recording, 1: the second) the split was left from to fork
// it (F twice in the leading pane), and the seq; seq is 0 when it was not.
func (s *Split) ForkAt() (pane int, seq uint64) {
	for i, p := range s.panes {
		if q := p.ForkSeq(); q > 0 {
			return i, q
		}
	}
	return 0, 0
}
