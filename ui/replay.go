package ui

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// Replay drives the workbench from a recording: the same views over the same fold.
//
// The recording is indexed once (offsets, seq, ts, type: no decoding), so opening a large
// file costs one read of it and the first frame decodes one event. Moving forward decodes
// and folds only the events passed; a checkpoint (a clone of the state) is kept every
// checkpointEvery events, so seeking backwards restores the nearest one and folds forward at
// most that many events.
type Replay struct {
	ra    io.ReaderAt
	close func() error
	ix    *record.Index
	pos   int // events applied
	st    *session.State
	ckpt  map[int]*session.State
	marks []int // event indexes of markers

	Playing bool
	Speed   float64       // 0.25× … 16×
	IdleCap time.Duration // longest pause between events while playing (default 2 s)
	err     string
}

const checkpointEvery = 4096

// speeds are the replay speeds +/- step through.
var speeds = []float64{0.25, 0.5, 1, 2, 4, 8, 16}

// markerTypes are the events that make a timeline marker.
var markerTypes = map[session.Type]bool{
	session.TypeSubagentSpawned: true, session.TypeHandoffInitiated: true, session.TypePermissionRequested: true,
	session.TypeConflictDetected: true, session.TypeSubagentStop: true, session.TypeConvergenceComplete: true,
}

// OpenReplay indexes a recording and shows its first event.
func OpenReplay(path string, opts record.ReadOptions) (*Replay, error) {
	ix, err := record.BuildIndexFile(path, opts)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := newReplay(ix, f, f.Close)
	if ix.Len() > 0 {
		if err := r.Seek(1); err != nil {
			f.Close()
			return nil, err
		}
	}
	return r, nil
}

func newReplay(ix *record.Index, ra io.ReaderAt, closer func() error) *Replay {
	r := &Replay{ra: ra, close: closer, ix: ix, st: &session.State{}, ckpt: map[int]*session.State{0: {}}, Speed: 1, IdleCap: 2 * time.Second}
	for i := 0; i < ix.Len(); i++ {
		if markerTypes[ix.Type(i)] {
			r.marks = append(r.marks, i)
		}
	}
	return r
}

// Close releases the recording.
func (r *Replay) Close() error {
	if r.close != nil {
		return r.close()
	}
	return nil
}

// State is the state after the events applied so far.
func (r *Replay) State() *session.State { return r.st }

// Pos and Len: events applied, and events in the recording.
func (r *Replay) Pos() int { return r.pos }
func (r *Replay) Len() int { return r.ix.Len() }

// Seek moves to the point where pos events have been applied.
func (r *Replay) Seek(pos int) error {
	pos = max(0, min(pos, r.ix.Len()))
	if pos < r.pos {
		base := pos / checkpointEvery * checkpointEvery
		for base > 0 && r.ckpt[base] == nil {
			base -= checkpointEvery
		}
		r.st, r.pos = r.ckpt[base].Clone(), base
	}
	for r.pos < pos {
		to := min(pos, (r.pos/checkpointEvery+1)*checkpointEvery)
		evs, err := r.ix.ReadRange(r.ra, r.pos, to)
		for _, e := range evs {
			if aerr := session.Apply(r.st, e); aerr != nil && r.err == "" {
				r.err = fmt.Sprintf("seq %d: %v", e.Seq, aerr)
			}
		}
		if err != nil {
			return err
		}
		r.pos = to
		if r.pos%checkpointEvery == 0 && r.ckpt[r.pos] == nil {
			r.ckpt[r.pos] = r.st.Clone()
		}
	}
	return nil
}

// SeekSeq moves to just after the event with that seq.
func (r *Replay) SeekSeq(seq uint64) error {
	i, ok := r.ix.Find(seq)
	if !ok {
		return fmt.Errorf("no event with seq %d (the recording has seq %d to %d)", seq, r.ix.Seq(0), r.ix.Seq(r.ix.Len()-1))
	}
	return r.Seek(i + 1)
}

// nextDelay is how long to wait before the next event while playing.
func (r *Replay) nextDelay() time.Duration {
	if r.pos == 0 || r.pos >= r.ix.Len() {
		return 0
	}
	d := r.ix.TS(r.pos).Sub(r.ix.TS(r.pos - 1))
	d = time.Duration(float64(d) / r.Speed)
	if r.IdleCap > 0 {
		d = min(d, r.IdleCap)
	}
	return max(d, 0)
}

// Marker returns the position (events applied) of the next or previous marker.
func (r *Replay) Marker(next bool) int {
	if next {
		for _, i := range r.marks {
			if i+1 > r.pos {
				return i + 1
			}
		}
		return r.ix.Len()
	}
	for k := len(r.marks) - 1; k >= 0; k-- {
		if r.marks[k]+1 < r.pos {
			return r.marks[k] + 1
		}
	}
	return min(1, r.ix.Len())
}

type replayTickMsg struct{ at int }

// frame is the longest a playing replay batches events into one update.
const frame = 16 * time.Millisecond

func (m *Model) replayTick() tea.Cmd {
	r := m.o.Replay
	if r == nil || !r.Playing || r.pos >= r.ix.Len() {
		return nil
	}
	at := r.pos
	return m.o.After(max(r.nextDelay(), time.Millisecond), replayTickMsg{at: at})
}

// onReplayTick applies the next event and every following one due within a frame.
func (m *Model) onReplayTick(t replayTickMsg) tea.Cmd {
	r := m.o.Replay
	if r == nil || !r.Playing || t.at != r.pos {
		return nil // paused or moved since the tick was armed
	}
	to := r.pos + 1
	var acc time.Duration
	for to < r.ix.Len() {
		d := time.Duration(float64(r.ix.TS(to).Sub(r.ix.TS(to-1))) / r.Speed)
		if acc+d > frame {
			break
		}
		acc += d
		to++
	}
	m.seek(to)
	if r.pos >= r.ix.Len() {
		r.Playing = false
	}
	return m.replayTick()
}

func (m *Model) seek(pos int) {
	r := m.o.Replay
	if err := r.Seek(pos); err != nil {
		m.setNotice("replay: "+err.Error(), true)
	}
	m.st = r.State()
}

// replayKey handles the replay controls; ok is false for keys it leaves to the panes.
func (m *Model) replayKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	r := m.o.Replay
	if m.seeking {
		switch s := k.String(); s {
		case "esc":
			m.seeking = false
			m.setNotice("", false)
		case "enter":
			m.seeking = false
			n, err := strconv.ParseUint(strings.TrimSpace(m.seekText), 10, 64)
			if err != nil {
				m.setNotice(fmt.Sprintf("seek: %q is not a seq number", m.seekText), true)
				return nil, true
			}
			if err := r.SeekSeq(n); err != nil {
				m.setNotice("seek: "+err.Error(), true)
				return nil, true
			}
			m.st = r.State()
			m.setNotice("", false)
		case "backspace":
			if m.seekText != "" {
				m.seekText = m.seekText[:len(m.seekText)-1]
			}
			m.setNotice("seek to seq: "+m.seekText, false)
		default:
			if len(k.Text) == 1 && k.Text[0] >= '0' && k.Text[0] <= '9' {
				m.seekText += k.Text
				m.setNotice("seek to seq: "+m.seekText, false)
			}
		}
		return nil, true
	}
	switch s := k.String(); s {
	case "space":
		if r.pos >= r.ix.Len() {
			m.seek(0)
		}
		r.Playing = !r.Playing
		return m.replayTick(), true
	case ".":
		r.Playing = false
		m.seek(r.pos + 1)
		return nil, true
	case ",":
		r.Playing = false
		m.seek(r.pos - 1)
		return nil, true
	case "]", "[":
		m.seek(r.Marker(s == "]"))
		return m.replayTick(), true
	case "+", "=", "-":
		i := slices.Index(speeds, r.Speed)
		if i < 0 {
			i = 2
		}
		if s == "-" {
			i = max(0, i-1)
		} else {
			i = min(len(speeds)-1, i+1)
		}
		r.Speed = speeds[i]
		return nil, true
	case "c":
		caps := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 0}
		i := slices.Index(caps, r.IdleCap)
		r.IdleCap = caps[(i+1)%len(caps)]
		return nil, true
	case "$":
		r.Playing = false
		m.seek(r.ix.Len())
		return nil, true
	case ":":
		m.seeking, m.seekText = true, ""
		m.setNotice("seek to seq: ", false)
		return nil, true
	}
	if s := k.String(); len(s) == 1 && s[0] >= '0' && s[0] <= '9' {
		m.seek(int(s[0]-'0') * r.ix.Len() / 10)
		return m.replayTick(), true
	}
	return nil, false
}

// timeline draws the position and the markers across width w.
func (m *Model) timeline(w int) string {
	r := m.o.Replay
	n := max(1, r.ix.Len())
	bar := []rune(strings.Repeat("─", w))
	for _, i := range r.marks {
		x := min(w-1, i*w/n)
		bar[x] = '┆'
	}
	x := min(w-1, r.pos*w/n)
	bar[x] = '●'
	return string(bar)
}

// replayStatus is the timeline's text part.
func (m *Model) replayStatus() string {
	r := m.o.Replay
	state := "paused"
	if r.Playing {
		state = "playing"
	}
	if r.pos >= r.ix.Len() {
		state = "end"
	}
	seq := uint64(0)
	if r.pos > 0 {
		seq = r.ix.Seq(r.pos - 1)
	}
	idle := "no idle cap"
	if r.IdleCap > 0 {
		idle = "idle ≤ " + r.IdleCap.String()
	}
	s := fmt.Sprintf("▶ %s %g× · %s · %d/%d · seq %d", state, r.Speed, idle, r.pos, r.ix.Len(), seq)
	if r.err != "" {
		s += " · fold error: " + session.Sanitize(r.err)
	}
	return s
}
