package ui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// Backend runs what the user asks in a live session. Submit is called inside a tea.Cmd,
// never from Update, and may block (a /wait).
type Backend interface {
	Submit(line string) Reply
}

// Reply is the answer to one submitted line.
type Reply struct {
	Rejected bool   // refused whole: the line stays in the input, Error on the notice line
	Error    string // why (with the usage line)
	Output   string // text to show (status, help, agents)
	Quit     bool
}

// EventsMsg carries events to the model, in seq order, about one message per frame (see
// Bridge). The model folds them into its own State with session.Apply: the same fold a
// replay runs.
type EventsMsg []session.Event

// NoticeMsg puts a line on the notice line (the guided demo's steps).
type NoticeMsg string

// Options configure a Model.
type Options struct {
	Backend Backend // live sessions; nil in a replay
	Replay  *Replay // replays; nil live
	// History is the input history, oldest first; SaveHistory persists a new line (called
	// inside a Cmd).
	History     []string
	SaveHistory func(line string)
	Agents      []string         // agent names, for completion
	Now         func() time.Time // default time.Now; tests fix it
	Dark        bool             // initial theme, until the terminal reports its background
	Keys        KeyMap
	// Runners lists the live runners' names, for --on completion (nil: no NATS). It may ask
	// NATS, so completion calls it only for a line that has --on.
	Runners func() []string
	// Grace is how long after the inbox opened by itself a key still counts as typed for
	// something else (default 400 ms): such keys go to the input, never to the inbox.
	Grace time.Duration
	// Demo is shown on the notice line at start (the guided demo's first hint).
	Demo string
	// After delivers msg after d (default tea.Tick). Tests that drive Update directly pass
	// their own, so no Cmd sleeps.
	After func(d time.Duration, msg tea.Msg) tea.Cmd
	// Reattach names the subagents a replayed session that did not end still runs on remote
	// runners ("sa-2 on gpu-1 as job J"); a replay then opens with the reattach question
	// (reattach.go).
	Reattach []string
}

// Focus targets.
const (
	focusInput = iota
	focusTree
	focusTranscript
)

// Model is the workbench. It renders a session.State and turns keys into intents: slash
// commands sent to the Backend, or replay controls. It never touches the orchestrator.
type Model struct {
	o    Options
	st   *session.State
	w, h int
	sty  styles
	keys KeyMap

	focus     int
	sel       string // selected node: "" session, sa-N, cv-N, cf-N
	treeW     int    // tree pane width; 0 = automatic
	filter    string
	filtering bool // typing the tree filter (f)
	// groupBy is the tree's grouping ("", runner, type, state; g cycles); collapsed the
	// groups folded (by grouping and name); treeGen counts the folds, for the tree's memo.
	groupBy   string
	collapsed map[string]bool
	treeGen   int
	// forkArmed is the seq the first F of a replay named; forkSeq the one a second F chose.
	forkArmed, forkSeq uint64
	views              map[string]*tview
	thinking           bool
	expanded           bool // tool calls expanded in the transcript
	md                 *mdCache
	searching          bool
	search             string

	// ra is the open reattach question (reattach.go); reattached the choice to reattach.
	ra         *reattachAsk
	reattached bool

	notice    string
	noticeErr bool
	in        textinput.Model
	hist      []string
	histPos   int
	draft     string
	cands     []commands.Candidate
	candIdx   int
	candLine  string // the input after the last candidate was applied
	candOrig  string // the input the candidates were computed for
	// inSel: the input holds a rejected line, selected (shown highlighted): a printable key or
	// a paste replaces it whole, any other key deselects it and edits as usual. Without it the
	// next command typed is glued to the rejected one.
	inSel bool

	seeking  bool // replay: typing a seq to seek to
	seekText string

	ib          *inbox            // the open approvals inbox; nil = closed (docked)
	dismissed   map[string]bool   // closed with esc: it does not open by itself again
	answered    map[string]bool   // answered here; the decision is on its way
	notes       map[string]string // review notes typed in the inbox, by conflict id
	lastKey     time.Time         // when the user last pressed a key (the inbox waits for quiet)
	waitMemo    []session.Waiting // waiting(), kept for waitMemoKey
	waitMemoKey waitKey

	help       bool
	helpTop    int
	panel      []string // a command's multi-line output, shown over the body
	panelName  string
	panelTop   int
	waits      []string // ids a /wait in flight waits for
	waitLine   string
	quitArm    bool // ctrl+c pressed once while subagents run
	frame      int
	ticking    bool
	busy       int      // submits in flight or waiting their turn
	pending    []string // lines waiting for the reply to the one before (dispatch)
	submitting bool     // a line sent in turn has no reply yet
	quitting   bool
	foldErr    string

	treeLines lineCache[rowKey] // the tree's rows drawn for the last frame
	treeMemo  treeMemo          // the tree's rows and column layout, for one state (tree.go)
	// still is set by an Update that changed nothing on screen: View returns the last frame.
	still     bool
	lastFrame tea.View
	drawn     bool              // lastFrame holds a frame
	eventsAt  time.Time         // when the last EventsMsg was folded (wall clock)
	rowMemo   map[string]*saRow // each subagent's row pieces, with what they were made from
	treeShape treeShape         // the tree's order and each node's memo, while its shape holds (tree.go)
	// treeAt is st.LastSeq after the last event fold folded that changes more of the tree than
	// figures; foldedTo is st.LastSeq after fold's last batch (a replay folds elsewhere).
	treeAt, foldedTo uint64
}

// New returns a model over an empty session (events arrive as EventsMsg), or over a replay.
func New(o Options) *Model {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Grace == 0 {
		o.Grace = 400 * time.Millisecond
	}
	if o.After == nil {
		o.After = func(d time.Duration, msg tea.Msg) tea.Cmd {
			return tea.Tick(d, func(time.Time) tea.Msg { return msg })
		}
	}
	if o.Keys.Quit.Keys() == nil {
		o.Keys = DefaultKeyMap()
	}
	in := textinput.New()
	in.Prompt = ""
	in.Placeholder = "type /help, a /command, or a note"
	in.CharLimit = commands.MaxLine
	in.Focus()
	m := &Model{o: o, st: &session.State{}, sty: newStyles(o.Dark), keys: o.Keys, views: map[string]*tview{},
		md: newMDCache(o.Dark), in: in, hist: o.History, histPos: len(o.History), dismissed: map[string]bool{},
		answered: map[string]bool{}, notes: map[string]string{},
		w: 100, h: 30, notice: o.Demo}
	m.in.SetStyles(textinput.DefaultStyles(o.Dark))
	if o.Replay != nil {
		m.st = o.Replay.State()
		m.focus = focusTree
		m.in.Blur()
		if len(o.Reattach) > 0 {
			m.ra = &reattachAsk{}
		}
	}
	return m
}

// State is the state the model renders (for tests and the final screen).
func (m *Model) State() *session.State { return m.st }

// Init asks for the terminal background (for the theme).
//
// Bubble Tea calls it once its frame timer runs, and draws the first frame on the timer's
// first tick (1/FrameRate later). That frame is the first to measure a rune above U+0300 (a
// border, "·") with ansi's WcWidth, and go-runewidth then fills its width table of every code
// point (two 1.1 MB tables, about 15 ms on a 2-core machine; testdata/perf/startup.sh,
// first_frame): Init has it built in that wait instead (under runewidth's sync.Once, so safe
// beside the renderer).
func (m *Model) Init() tea.Cmd {
	go ansi.StringWidthWc("─")
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if m.o.Replay != nil {
		cmds = append(cmds, m.replayTick())
	}
	return tea.Batch(cmds...)
}

type tickMsg struct{}

// graceMsg redraws the inbox when its grace period ends, and looks again for a waiting item
// once the user has stopped typing (nothing else may be happening).
type graceMsg struct{}

func (m *Model) graceTick() tea.Cmd {
	var left time.Duration
	switch {
	case m.ib != nil:
		left = m.ib.grace - m.o.Now().Sub(m.ib.opened)
	case m.o.Replay == nil && len(m.waiting()) > 0:
		left = typingQuiet - m.o.Now().Sub(m.lastKey)
	}
	if left <= 0 {
		return nil
	}
	return m.o.After(left+10*time.Millisecond, graceMsg{})
}

type replyMsg struct {
	line    string
	reply   Reply
	ordered bool // sent in turn (send): the next waiting line goes when this reply is in
}

// tick keeps spinners and elapsed times moving while something runs; it stops when the
// session is idle, so an idle workbench costs nothing.
func (m *Model) tick() tea.Cmd {
	if m.ticking || (m.st.Running() == 0 && m.busy == 0) {
		return nil
	}
	m.ticking = true
	return m.o.After(tickEvery, tickMsg{})
}

// tickEvery is the spinner's step: while something runs, the tree's spinners, elapsed times
// and figures move at it.
const tickEvery = 120 * time.Millisecond

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.still = false
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		return m, nil
	case tea.BackgroundColorMsg:
		dark := msg.IsDark()
		m.sty, m.md = newStyles(dark), newMDCache(dark)
		m.treeLines = lineCache[rowKey]{}
		for _, v := range m.views {
			v.cache = map[int]wrapped{} // drawn in the old theme's colours
		}
		m.in.SetStyles(textinput.DefaultStyles(dark))
		return m, nil
	case EventsMsg:
		m.eventsAt = time.Now()
		m.fold(msg)
		m.followHandoff(msg)
		m.waitProgress()
		m.autoPrompt()
		return m, tea.Batch(m.tick(), m.graceTick())
	case NoticeMsg:
		m.setNotice(string(msg), false)
		return m, nil
	case tickMsg:
		m.ticking = false
		m.frame++
		ib, notice := m.ib, m.notice
		m.autoPrompt()
		// While events stream, the next batch comes within a frame (FrameRate) and shows the spinner's
		// step: this tick draws nothing of its own.
		m.still = m.ib == ib && m.notice == notice && time.Since(m.eventsAt) < 50*time.Millisecond
		return m, tea.Batch(m.tick(), m.graceTick())
	case graceMsg:
		m.autoPrompt()
		return m, m.graceTick() // a redraw: the inbox's keys are live now (or its grace starts)
	case replyMsg:
		cmd := m.onReply(msg)
		m.waitDone(msg.line)
		m.autoPrompt()
		return m, tea.Batch(cmd, m.graceTick())
	case replayTickMsg:
		return m, m.onReplayTick(msg)
	case editReadyMsg, editDoneMsg, editReadMsg:
		return m, m.onEdit(msg)
	case tea.PasteMsg:
		// A paste is text for the input (or the inbox's text field), never an answer.
		m.lastKey = m.o.Now()
		switch {
		case m.ib != nil && m.ib.typing:
			m.ib.text += session.Sanitize(strings.ReplaceAll(msg.Content, "\n", " "))
		case m.o.Replay == nil:
			m.dock()
			m.panel, m.help = nil, false
			m.typeOver()
			m.in, _ = m.in.Update(msg)
		}
		return m, nil
	case tea.KeyPressMsg:
		cmd := m.key(msg)
		return m, tea.Batch(cmd, m.graceTick())
	}
	m.still = true // a message the workbench does not use (terminal reports, a nil result)
	return m, nil
}

// fold applies events to the model's state. A fold error means the event stream and the
// fold disagree, which would be a bug; it is shown, and later events still apply.
func (m *Model) fold(evs []session.Event) {
	for _, e := range evs {
		if err := session.Apply(m.st, e); err != nil {
			m.foldErr = err.Error()
		}
		if !figuresOnly(e) {
			m.treeAt = m.st.LastSeq
		}
	}
	m.foldedTo = m.st.LastSeq
}

// figuresOnly reports whether an event changes no more of the tree than a subagent's figures
// (a streamed token's count): the tree shows those at its next tick (treeRows), not with
// each batch of events.
func figuresOnly(e session.Event) bool {
	d, ok := e.Data.(session.TranscriptEvent)
	return ok && (d.EventType == session.TranscriptToken || d.EventType == session.TranscriptThinking)
}

func (m *Model) onReply(r replyMsg) tea.Cmd {
	m.busy--
	var next tea.Cmd
	if r.ordered {
		m.submitting = false
		if r.reply.Quit {
			m.pending = nil // quitting: what was typed after /quit is not sent
		}
		if len(m.pending) > 0 {
			next = m.dispatch(m.pending[0])
			m.pending = m.pending[1:]
		}
	}
	return tea.Batch(m.reply(r), next)
}

func (m *Model) reply(r replyMsg) tea.Cmd {
	rep := r.reply
	switch {
	case rep.Quit:
		m.quitting = true
		return tea.Quit
	case rep.Rejected:
		// The line stays so it can be fixed; nothing was sent.
		if m.in.Value() == "" {
			m.in.SetValue(r.line)
			m.in.CursorEnd()
			m.inSel = true
		}
		m.setNotice(rep.Error, true)
		if first, rest, ok := strings.Cut(strings.TrimRight(rep.Error, "\n"), "\n"); ok && !strings.HasPrefix(rest, "usage:") {
			// A long refusal (the files an /apply overlaps, with their merge) is shown whole.
			m.panel = strings.Split(first+"\n"+rest, "\n")
			m.panelName, m.panelTop = "✗ "+r.line, 0
		}
	case rep.Error != "":
		m.setNotice(rep.Error, true)
	case strings.Contains(strings.TrimRight(rep.Output, "\n"), "\n") || ansi.StringWidth(rep.Output) > m.w:
		// A long answer (/status, /agents, /help) gets a panel over the body, wrapped and
		// scrollable, until esc.
		m.panel = strings.Split(strings.TrimRight(rep.Output, "\n"), "\n")
		m.panelName, m.panelTop = r.line, 0
	case rep.Output != "":
		m.setNotice(strings.TrimRight(rep.Output, "\n"), false)
	}
	return m.tick()
}

func (m *Model) setNotice(s string, isErr bool) {
	m.notice, m.noticeErr = s, isErr
}

// submit sends a typed line to the backend in a Cmd and keeps it in the history.
func (m *Model) submit(line string) tea.Cmd { return m.send(line, true) }

// send sends a line; answers given in prompts are not history.
func (m *Model) send(line string, keep bool) tea.Cmd {
	if m.o.Backend == nil {
		m.setNotice("this is a replay: commands cannot run here", true)
		return nil
	}
	m.busy++
	cmds := []tea.Cmd{m.tick()}
	if m.submitting && !isWait(line) {
		m.pending = append(m.pending, line)
	} else {
		cmds = append(cmds, m.dispatch(line))
	}
	if save := m.o.SaveHistory; save != nil && keep {
		cmds = append(cmds, func() tea.Msg { save(line); return nil })
	}
	return tea.Batch(cmds...)
}

// dispatch submits a line in a Cmd. Lines reach the backend in the order they were sent, each
// after the reply to the one before (Cmds run concurrently: lines typed quickly, a /delegate
// then a /converge of what it starts, would otherwise race); a /wait, which may block for
// long, goes at once and holds nothing up.
func (m *Model) dispatch(line string) tea.Cmd {
	b := m.o.Backend
	ordered := !isWait(line)
	if ordered {
		m.submitting = true
	}
	return func() tea.Msg { return replyMsg{line: line, reply: b.Submit(line), ordered: ordered} }
}

func isWait(line string) bool {
	c, err := commands.Parse(line)
	return err == nil && c.Name() == "wait"
}
