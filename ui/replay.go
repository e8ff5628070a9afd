package ui

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// Replay drives the workbench from a recording: the same views over the same fold.
//
// The recording is indexed once (offsets, seq, ts, type: no decoding), so opening a large
// file costs one read of it and the first frame decodes one event. The state keeps transcript
// text in the recording (a session.TextStore reading it back through a bounded cache), so a
// state and a clone of it are small. A background goroutine folds the whole recording ahead
// (two goroutines decode ahead, one folds), and keeps a checkpoint every checkpointBytes of
// the recording (session.State.Checkpoint: it shares what has not changed since the previous
// one, so checkpoints cost memory linear in the recording); a seek restores the nearest
// checkpoint at or before its target (Clone) and folds forward at most that far, decoding in
// two halves at once. A seek beyond what the background fold has reached, and farther than
// syncBytes from its last checkpoint, does not block: it waits (Pending) while the keys stay
// live, and completes on a later Poll.
type Replay struct {
	ra    io.ReaderAt
	close func() error
	ix    *record.Index
	text  *session.TextStore
	pos   int // events applied
	st    *session.State
	marks []int // event indexes of markers
	// pending is the target of a seek waiting for the background fold (-1: none).
	pending int
	polling bool // a poll tick is armed (ui)
	bg      *folder

	Playing bool
	Speed   float64       // 0.25× … 16×
	IdleCap time.Duration // longest pause between events while playing (default 2 s)
	err     string
}

// checkpointBytes is the recording between two checkpoints (and checkpointEvents the most
// events): a seek folds at most that much. syncBytes is the most a seek folds before it
// answers; a seek that would fold more waits for the background fold.
// (Variables for tests.)
var (
	checkpointBytes  int64 = 2 << 20
	checkpointEvents       = 1 << 15
	syncBytes        int64 = 6 << 20
	foldBatch              = 1024
	// foldHook, when set, runs before the background fold folds each batch (tests slow it).
	foldHook func()
)

// checkpoint is the state after pos events, and the first fold error before it.
type checkpoint struct {
	pos int
	st  *session.State
	err string
}

// folder is the background fold: it folds the recording from the start, once, keeping a
// checkpoint every checkpointBytes.
type folder struct {
	mu     sync.Mutex
	ckpts  []checkpoint // ascending pos; ckpts[0] is the empty state
	folded int          // events folded so far
	ioErr  error        // a read error that stopped it
	stop   chan struct{}
	done   chan struct{}
	// caughtUp is closed when it has folded every event (or stopped).
	caughtUp chan struct{}
	// saved is the state a replay sidecar holds (replay_sidecar.go), once loaded: a
	// checkpoint at saved.pos that the fold may not have reached yet (pos 0: none).
	// sidecarDone is closed when the sidecar has been looked for and, if it fits, loaded.
	saved       checkpoint
	sidecarDone chan struct{}
	// id is the recording as opened, for its sidecar (path "": none is read or written).
	id recordingID
	// caughtUpClosed: run closed caughtUp before saving the sidecar (run's goroutine only).
	caughtUpClosed bool
}

// speeds are the replay speeds +/- step through.
var speeds = []float64{0.25, 0.5, 1, 2, 4, 8, 16}

// markerTypes are the events that make a timeline marker.
var markerTypes = []session.Type{
	session.TypeSubagentSpawned, session.TypeHandoffInitiated, session.TypePermissionRequested,
	session.TypeConflictDetected, session.TypeSubagentStop, session.TypeConvergenceComplete,
}

// MarkerTypes are the event types that make a replay's timeline markers (] and [ step through
// them), for tools that act at each marker.
func MarkerTypes() []session.Type { return slices.Clone(markerTypes) }

// OpenReplay indexes a recording and shows its first event.
func OpenReplay(path string, opts record.ReadOptions) (*Replay, error) {
	id, _ := statRecording(path, opts.Lenient) // before indexing: an append after it changes the time
	ix, err := record.BuildIndexFile(path, opts)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := newReplayOf(ix, f, f.Close, id)
	if ix.Len() > 0 {
		if err := r.Seek(1); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

func newReplay(ix *record.Index, ra io.ReaderAt, closer func() error) *Replay {
	return newReplayOf(ix, ra, closer, recordingID{})
}

// newReplayOf starts a replay of the recording id (a path "": no sidecar).
func newReplayOf(ix *record.Index, ra io.ReaderAt, closer func() error, id recordingID) *Replay {
	text := session.NewTextStore(record.NewFileSource(ra), 0)
	empty := &session.State{}
	empty.SetTextStore(text)
	r := &Replay{ra: ra, close: closer, ix: ix, text: text, st: empty.Clone(), pending: -1, Speed: 1, IdleCap: 2 * time.Second}
	r.marks = ix.Positions(markerTypes...)
	r.bg = &folder{ckpts: []checkpoint{{pos: 0, st: empty}}, stop: make(chan struct{}), done: make(chan struct{}), caughtUp: make(chan struct{}),
		sidecarDone: make(chan struct{}), id: id}
	if id.path != "" && ix.Len() > 0 {
		// The sidecar is read beside the fold: the first frame does not wait for it, and a
		// seek near the end left pending lands as soon as it is in.
		go func() {
			defer close(r.bg.sidecarDone)
			ck, ok := loadSidecar(id, ra, text, ix.Len(), func(pos int) (int64, uint64) {
				off, n := ix.Loc(pos - 1)
				return off + int64(n), ix.Seq(pos - 1)
			})
			if ok {
				r.bg.mu.Lock()
				r.bg.saved = ck
				r.bg.mu.Unlock()
			}
		}()
	} else {
		close(r.bg.sidecarDone)
	}
	go func() {
		// The fold starts once the sidecar is in (at once when there is none): reading it
		// is what a seek to the end waits for, and the fold's three goroutines would take
		// the cores from it.
		select {
		case <-r.bg.sidecarDone:
		case <-r.bg.stop:
		}
		r.bg.run(ix, ra, empty.Clone())
	}()
	return r
}

// SidecarLoaded waits until the replay's sidecar has been looked for, and reports whether one
// fitting the recording was loaded (tests, benchmarks).
func (r *Replay) SidecarLoaded() bool {
	<-r.bg.sidecarDone
	r.bg.mu.Lock()
	defer r.bg.mu.Unlock()
	return r.bg.saved.st != nil
}

// saveSidecar writes the state after all n events for the next replay of the recording,
// unless the sidecar already holds it. It runs at the end of the background fold.
func (f *folder) saveSidecar(ix *record.Index, ra io.ReaderAt, n int, ck checkpoint) {
	<-f.sidecarDone
	f.mu.Lock()
	have := f.saved.pos == n
	f.mu.Unlock()
	if f.id.path == "" || have || n == 0 {
		return
	}
	off, ln := ix.Loc(n - 1)
	_ = writeSidecar(f.id, ra, off+int64(ln), n, ix.Seq(n-1), ck.err, ck.st) // a cache: failing to write costs the next open its speed only
}

// run folds every event into st, keeping checkpoints, until done or stopped. Two goroutines
// read and decode batches ahead (decoding is most of the cost), this one folds them in order.
func (f *folder) run(ix *record.Index, ra io.ReaderAt, st *session.State) {
	defer close(f.done)
	defer func() {
		if !f.caughtUpClosed {
			close(f.caughtUp)
		}
	}()
	type batch struct {
		from int
		evs  []session.Event
		err  error
	}
	n := ix.Len()
	var lanes [2]chan batch
	var wg sync.WaitGroup
	for d := range lanes {
		lanes[d] = make(chan batch, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(lanes[d])
			for k := d; k*foldBatch < n; k += len(lanes) {
				from := k * foldBatch
				evs, err := ix.ReadRange(ra, from, min(n, from+foldBatch))
				select {
				case lanes[d] <- batch{from: from, evs: evs, err: err}:
				case <-f.stop:
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	defer wg.Wait()
	pos, last, ferr := 0, 0, ""
	lastOff := int64(0)
	var prev *session.State
	for k := 0; pos < n; k++ {
		var b batch
		var ok bool
		select {
		case <-f.stop:
			return
		case b, ok = <-lanes[k%len(lanes)]:
		}
		if !ok {
			return
		}
		if foldHook != nil {
			foldHook()
		}
		for j, e := range b.evs {
			off, ln := ix.Loc(b.from + j)
			if aerr := session.ApplyAt(st, e, session.Loc{Off: off, Len: ln}); aerr != nil && ferr == "" {
				ferr = fmt.Sprintf("seq %d: %v", e.Seq, aerr)
			}
		}
		if b.err != nil {
			f.mu.Lock()
			f.ioErr = b.err
			f.mu.Unlock()
			return
		}
		pos = b.from + len(b.evs)
		off, _ := ix.Loc(pos - 1)
		mark := pos-last >= checkpointEvents || off-lastOff >= checkpointBytes
		var ck *session.State
		if mark && pos < n {
			ck = st.Checkpoint(prev)
			prev, last, lastOff = ck, pos, off
		}
		f.mu.Lock()
		f.folded = pos
		if ck != nil {
			f.ckpts = append(f.ckpts, checkpoint{pos: pos, st: ck, err: ferr})
		}
		f.mu.Unlock()
	}
	// The final state is a checkpoint too: the folder no longer changes it.
	f.mu.Lock()
	if n > 0 && f.ckpts[len(f.ckpts)-1].pos < n {
		f.ckpts = append(f.ckpts, checkpoint{pos: n, st: st, err: ferr})
	}
	final := f.ckpts[len(f.ckpts)-1]
	f.mu.Unlock()
	if pos == n {
		close(f.caughtUp)
		f.caughtUpClosed = true
		f.saveSidecar(ix, ra, n, final)
	}
}

// foldRange reads and folds events [from, to) into st. msg is the first fold error, err a
// read error.
func foldRange(ix *record.Index, ra io.ReaderAt, st *session.State, from, to int) (msg string, err error) {
	evs, err := ix.ReadRange(ra, from, to)
	for k, e := range evs {
		off, n := ix.Loc(from + k)
		if aerr := session.ApplyAt(st, e, session.Loc{Off: off, Len: n}); aerr != nil && msg == "" {
			msg = fmt.Sprintf("seq %d: %v", e.Seq, aerr)
		}
	}
	return msg, err
}

// base is the latest checkpoint at or before pos (the sidecar's included), and how far the
// background fold has got.
func (f *folder) base(pos int) (checkpoint, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := sort.Search(len(f.ckpts), func(i int) bool { return f.ckpts[i].pos > pos }) - 1
	if s := f.saved; s.st != nil && s.pos <= pos && s.pos > f.ckpts[i].pos {
		return s, f.folded
	}
	return f.ckpts[i], f.folded
}

// Close stops the background fold and releases the recording.
func (r *Replay) Close() error {
	if r.bg != nil {
		select {
		case <-r.bg.stop:
		default:
			close(r.bg.stop)
		}
		<-r.bg.done
	}
	if r.close != nil {
		err := r.close()
		r.close = nil
		return err
	}
	return nil
}

// State is the state after the events applied so far.
func (r *Replay) State() *session.State { return r.st }

// Pos and Len: events applied, and events in the recording.
func (r *Replay) Pos() int { return r.pos }
func (r *Replay) Len() int { return r.ix.Len() }

// Folded is how many events the background fold has applied; it equals Len once it has
// caught up.
func (r *Replay) Folded() int {
	r.bg.mu.Lock()
	defer r.bg.mu.Unlock()
	return r.bg.folded
}

// CaughtUp reports whether the background fold has folded every event or stopped. It is safe
// to call from any goroutine.
func (r *Replay) CaughtUp() bool {
	select {
	case <-r.bg.caughtUp:
		return true
	default:
		return false
	}
}

// WaitCaughtUp blocks until the background fold has folded every event or stopped.
func (r *Replay) WaitCaughtUp() { <-r.bg.caughtUp }

// Pending is the target of a seek waiting for the background fold, and false when none is.
func (r *Replay) Pending() (int, bool) { return r.pending, r.pending >= 0 }

// cost is the bytes of recording between events from and to.
func (r *Replay) cost(from, to int) int64 {
	if to <= from {
		return 0
	}
	a, _ := r.ix.Loc(from)
	b, n := r.ix.Loc(to - 1)
	return b + int64(n) - a
}

// Seek moves to the point where pos events have been applied. When that needs more folding
// than syncBytes from the nearest state (the current one or a checkpoint) it does not wait:
// the seek is left Pending, and Poll completes it once the background fold comes near.
func (r *Replay) Seek(pos int) error {
	pos = max(0, min(pos, r.ix.Len()))
	ck, _ := r.bg.base(pos)
	fromCur := pos >= r.pos && r.pos >= ck.pos
	if fromCur && r.cost(r.pos, pos) <= syncBytes || !fromCur && r.cost(ck.pos, pos) <= syncBytes {
		r.pending = -1
		return r.seekNow(pos, ck, fromCur)
	}
	r.pending = pos
	r.bg.mu.Lock()
	err := r.bg.ioErr
	r.bg.mu.Unlock()
	return err
}

// Poll completes a pending seek when it can be done without waiting; it reports whether the
// state changed.
func (r *Replay) Poll() (bool, error) {
	if r.pending < 0 {
		return false, nil
	}
	pos := r.pending
	if err := r.Seek(pos); err != nil {
		r.pending = -1
		return false, err
	}
	return r.pending < 0, nil
}

// seekNow moves to pos from the current state (fromCur) or from the checkpoint.
func (r *Replay) seekNow(pos int, ck checkpoint, fromCur bool) error {
	if !fromCur {
		r.st, r.pos = ck.st.Clone(), ck.pos
		if r.err == "" {
			r.err = ck.err
		}
	}
	for r.pos < pos {
		// Big steps decode in two halves at once (the background fold is done or waiting).
		to := min(pos, r.pos+8*foldBatch)
		mid := to
		if to-r.pos > 2*foldBatch {
			mid = r.pos + (to-r.pos)/2
		}
		var late []session.Event
		var lateErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			if mid < to {
				late, lateErr = r.ix.ReadRange(r.ra, mid, to)
			}
		}()
		msg, err := foldRange(r.ix, r.ra, r.st, r.pos, mid)
		<-done
		if r.err == "" {
			r.err = msg
		}
		if err != nil {
			return err
		}
		r.pos = mid
		for k, e := range late {
			off, n := r.ix.Loc(mid + k)
			if aerr := session.ApplyAt(r.st, e, session.Loc{Off: off, Len: n}); aerr != nil && r.err == "" {
				r.err = fmt.Sprintf("seq %d: %v", e.Seq, aerr)
			}
		}
		if lateErr != nil {
			return lateErr
		}
		r.pos = to
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

// replayTickMsg arms the next step of a playing replay (at: the position it was armed at),
// or with poll the next look at a pending seek.
type replayTickMsg struct {
	at   int
	poll bool
}

// frame is the longest a playing replay batches events into one update.
const frame = 16 * time.Millisecond

// pollEvery is how often a pending seek looks at the background fold.
const pollEvery = 50 * time.Millisecond

func (m *Model) replayTick() tea.Cmd {
	r := m.o.Replay
	if r == nil {
		return nil
	}
	if _, ok := r.Pending(); ok {
		return m.pollTick() // a seek made before the program started (--from) polls too
	}
	if !r.Playing || r.pos >= r.ix.Len() {
		return nil
	}
	at := r.pos
	return m.o.After(max(r.nextDelay(), time.Millisecond), replayTickMsg{at: at})
}

// onReplayTick applies the next event and every following one due within a frame, or
// completes a pending seek.
func (m *Model) onReplayTick(t replayTickMsg) tea.Cmd {
	r := m.o.Replay
	if r == nil {
		return nil
	}
	if t.poll {
		r.polling = false
		if _, ok := r.Pending(); !ok {
			return nil
		}
		done, err := r.Poll()
		switch {
		case err != nil:
			m.setNotice("replay: "+err.Error(), true)
		case done:
			m.st = r.State()
			m.setNotice("", false)
			return m.replayTick()
		default:
			m.pendingNotice()
			return m.pollTick()
		}
		return nil
	}
	if !r.Playing || t.at != r.pos {
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
	cmd := m.seek(to)
	if r.pos >= r.ix.Len() {
		r.Playing = false
	}
	return tea.Batch(cmd, m.replayTick())
}

// seek moves the replay; a seek left pending shows its progress and polls until it lands.
func (m *Model) seek(pos int) tea.Cmd {
	r := m.o.Replay
	if err := r.Seek(pos); err != nil {
		m.setNotice("replay: "+err.Error(), true)
	}
	m.st = r.State()
	if _, ok := r.Pending(); ok {
		r.Playing = false
		m.pendingNotice()
		return m.pollTick()
	}
	return nil
}

// pollTick arms the next look at a pending seek, unless one is armed already.
func (m *Model) pollTick() tea.Cmd {
	r := m.o.Replay
	if r.polling {
		return nil
	}
	cmd := m.o.After(pollEvery, replayTickMsg{poll: true})
	r.polling = cmd != nil
	return cmd
}

// pendingNotice says how far the background fold is from a pending seek's target.
func (m *Model) pendingNotice() {
	r := m.o.Replay
	to, _ := r.Pending()
	m.setNotice(fmt.Sprintf("seeking to event %d of %d: folded %d%% so far (keys stay live)", to, r.ix.Len(), r.Folded()*100/max(1, r.ix.Len())), false)
}

// replayKey handles the replay controls; ok is false for keys it leaves to the panes.
func (m *Model) replayKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	r := m.o.Replay
	if cmd, ok := m.forkKey(k); ok {
		return cmd, true
	}
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
			if _, ok := r.Pending(); ok {
				m.pendingNotice()
				return m.pollTick(), true
			}
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
		var cmd tea.Cmd
		if r.pos >= r.ix.Len() {
			cmd = m.seek(0)
		}
		r.Playing = !r.Playing
		return tea.Batch(cmd, m.replayTick()), true
	case ".":
		r.Playing = false
		return m.seek(r.pos + 1), true
	case ",":
		r.Playing = false
		return m.seek(r.pos - 1), true
	case "]", "[":
		return tea.Batch(m.seek(r.Marker(s == "]")), m.replayTick()), true
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
		return m.seek(r.ix.Len()), true
	case ":":
		m.seeking, m.seekText = true, ""
		m.setNotice("seek to seq: ", false)
		return nil, true
	}
	if s := k.String(); len(s) == 1 && s[0] >= '0' && s[0] <= '9' {
		return tea.Batch(m.seek(int(s[0]-'0')*r.ix.Len()/10), m.replayTick()), true
	}
	return nil, false
}

// timeline draws the position and the markers across width w.
func (m *Model) timeline(w int) string {
	r := m.o.Replay
	n := max(1, r.ix.Len())
	bar := []rune(strings.Repeat("─", w))
	for _, i := range r.marks {
		x := min(w-1, int(int64(i)*int64(w)/int64(n)))
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

// forkKey is F: the first press names the event a fork would continue from, a second one
// ends the replay asking for that fork (ForkSeq); any other key calls it off. Two presses,
// because a stray key must not leave the replay for a live session.
func (m *Model) forkKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	if !key.Matches(k, m.keys.Fork) {
		if m.forkArmed != 0 {
			m.forkArmed = 0
			m.setNotice("", false)
		}
		return nil, false
	}
	st := m.o.Replay.State()
	seq := st.LastSeq
	if st.Ended && seq > 1 {
		seq-- // the end itself cannot be continued: the event before it can
	}
	switch {
	case seq == 0:
		m.setNotice("fork: step to an event first (. steps, 0-9 seek)", true)
	case m.forkArmed == seq:
		m.forkSeq = seq
		return tea.Quit, true
	default:
		m.forkArmed = seq
		m.setNotice(fmt.Sprintf("fork at #%d: F again starts a live session from here (in a new workspace copy); any other key goes on", seq), false)
	}
	return nil, true
}

// ForkSeq is the event the replay was left to fork from (F twice), 0 when it was not.
func (m *Model) ForkSeq() uint64 { return m.forkSeq }

// replayEmpty is the session log of a replay before its first logged event: a replay takes
// no commands, so it names its own keys (from the key map, so it cannot drift from them), as
// one paragraph that stays short in a side-by-side pane.
func (m *Model) replayEmpty() []string {
	k := m.keys
	var keys []string
	for _, b := range []key.Binding{k.Play, k.Step, k.Markers, k.Seek, k.Fork, k.Focus, k.Help} {
		h := b.Help()
		desc, _, _ := strings.Cut(h.Desc, " (") // the parenthesis is for the help screen
		keys = append(keys, h.Key+" "+desc)
	}
	return []string{"Nothing logged yet. A replay takes keys, not commands: " + strings.Join(keys, " · ")}
}
