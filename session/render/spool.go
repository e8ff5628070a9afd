package render

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"unicode/utf8"

	"github.com/summit-dev/summit/session"
)

// TextSpool keeps the text of transcripts out of a folded state, for printing a recording of
// any size in bounded memory (`summit replay --print`). Fold every event with its Apply
// instead of session.Apply: it folds the event without its text (the transcript keeps its
// items, kinds and tools, not what the model and the tools said, nor a tool call's
// arguments) and keeps the text itself, per subagent, in memory up to a limit and past it in
// an unnamed temporary file. Print then writes what Print would write for the state folded
// with the text, byte for byte (TestSpoolPrintMatchesPrint), reading the text back in order.
//
// A TextSpool serves one state, on one goroutine. Close removes its file.
type TextSpool struct {
	limit int      // memory for text before it goes to the file
	used  int      // memory the blocks holding text take now
	free  [][]byte // blocks to reuse
	subs  map[*session.Subagent]*spooled
	byID  map[string]*spooled
	last  *spooled // the subagent of the last transcript event
	file  *os.File
	size  int64 // bytes in the file
	err   error

	block    []byte // the last block read back from the file
	blockOff int64
}

// spooled is the text of one subagent's transcript: the texts of its items back to back.
type spooled struct {
	sa       *session.Subagent
	ends     []int64   // ends[i] is where item i's text ends (items past the end have none)
	total    int64     // bytes of text
	segs     []segment // the text in the file, in order; then the blocks
	blocks   [][]byte  // the text not yet in the file, [total-inMem, total): full blocks, then one
	inMem    int64
	streamed int // the bytes of its token deltas (Subagent.StreamedBytes of a fold with text)
}

// segment is a part of a subagent's text in the file: at is its place in the text.
type segment struct{ at, off, n int64 }

// DefaultSpoolMemory is how much memory a TextSpool's text may take.
const DefaultSpoolMemory = 16 << 20

// spoolBlock is the read size of the file, memBlock the size of the blocks text is held in
// (variables for the tests).
var (
	spoolBlock int64 = 256 << 10
	memBlock         = 32 << 10
)

// NewTextSpool returns a spool that holds up to memory bytes of text in memory (≤ 0: the
// default) and the rest in a temporary file, created when needed.
func NewTextSpool(memory int) *TextSpool {
	if memory <= 0 {
		memory = DefaultSpoolMemory
	}
	return &TextSpool{limit: memory, subs: map[*session.Subagent]*spooled{}, byID: map[string]*spooled{}}
}

// Apply folds e into st as session.Apply does, keeping a transcript event's text (and a tool
// call's arguments) in the spool instead of in st.
func (sp *TextSpool) Apply(st *session.State, e session.Event) error {
	d, ok := e.Data.(session.TranscriptEvent)
	if !ok {
		return session.Apply(st, e)
	}
	if sp.err != nil {
		return sp.err
	}
	var text string
	switch d.EventType {
	case session.TranscriptToolCall:
		// What the item prints of its arguments; the fold keeps them only in the item.
		text = compactJSON(d.Args)
	case session.TranscriptToolResult:
		text = d.Result
	case session.TranscriptPolicyDenied:
		text = d.Reason
	default:
		text = d.Text
	}
	streamed := len(d.Text)
	e.Data = bare(d)
	if err := session.Apply(st, e); err != nil {
		return err
	}
	s := sp.last
	if s == nil || s.sa.ID != e.SubagentID {
		if s = sp.byID[e.SubagentID]; s == nil {
			s = &spooled{sa: st.Subagent(e.SubagentID)}
			sp.byID[e.SubagentID], sp.subs[s.sa] = s, s
		}
		sp.last = s
	}
	if d.EventType == session.TranscriptToken {
		s.streamed += streamed
	}
	i := s.sa.Transcript.Len() - 1
	for len(s.ends) <= i {
		s.ends = append(s.ends, s.total)
	}
	if text != "" {
		sp.put(s, text)
		s.ends[i] = s.total
		if sp.used > sp.limit {
			sp.spill()
		}
	}
	return sp.err
}

// put appends text to s's blocks.
func (sp *TextSpool) put(s *spooled, text string) {
	s.total += int64(len(text))
	s.inMem += int64(len(text))
	for len(text) > 0 {
		n := len(s.blocks)
		if n == 0 || len(s.blocks[n-1]) == cap(s.blocks[n-1]) {
			var b []byte
			if k := len(sp.free); k > 0 {
				b, sp.free = sp.free[k-1][:0], sp.free[:k-1]
			} else {
				b = make([]byte, 0, memBlock)
			}
			sp.used += cap(b)
			s.blocks = append(s.blocks, b)
			n++
		}
		b := s.blocks[n-1]
		k := min(len(text), cap(b)-len(b))
		s.blocks[n-1] = append(b, text[:k]...)
		text = text[k:]
	}
}

// bare is d without what the spool keeps: its text, result and reason, and the arguments of
// a tool call or result (the fold keeps a message's, which may name a plan step). The bare
// forms of most events are alike, and share one boxed value.
func bare(d session.TranscriptEvent) session.Data {
	d.Text, d.Result, d.Reason = "", "", ""
	if d.EventType == session.TranscriptToolCall || d.EventType == session.TranscriptToolResult {
		d.Args = nil
	}
	if d.Args == nil && d.CallID == "" && d.Tool == "" && !d.IsError {
		for i, k := range session.TranscriptEvents {
			if d.EventType == k && i < len(bareEvents) {
				return bareEvents[i]
			}
		}
	}
	return d
}

var bareEvents = func() []session.Data {
	out := make([]session.Data, len(session.TranscriptEvents))
	for i, k := range session.TranscriptEvents {
		out[i] = session.TranscriptEvent{EventType: k}
	}
	return out
}()

// spill moves the text held in memory to the file.
func (sp *TextSpool) spill() {
	if sp.file == nil {
		f, err := os.CreateTemp("", "summit-print-*")
		if err != nil {
			sp.err = fmt.Errorf("keep transcript text in a temporary file: %w", err)
			return
		}
		if runtime.GOOS != "windows" {
			os.Remove(f.Name()) // unnamed: nothing is left behind, whatever happens
		}
		sp.file = f
	}
	for _, s := range sp.byID {
		if s.inMem == 0 {
			continue
		}
		s.segs = append(s.segs, segment{at: s.total - s.inMem, off: sp.size, n: s.inMem})
		for _, b := range s.blocks {
			if _, err := sp.file.WriteAt(b, sp.size); err != nil {
				sp.err = fmt.Errorf("keep transcript text in a temporary file: %w", err)
				return
			}
			sp.size += int64(len(b))
			if len(sp.free) < sp.limit/memBlock {
				sp.free = append(sp.free, b)
			}
		}
		s.blocks, s.inMem = nil, 0
	}
	sp.used = 0
}

// streamed is sa's StreamedBytes as a fold with the text counts it.
func (sp *TextSpool) streamed(sa *session.Subagent) int {
	if s := sp.subs[sa]; s != nil {
		return s.streamed
	}
	return sa.StreamedBytes
}

// each calls fn with the spooled text of item i of sa's transcript, in pieces of at most a
// block, each ending with a whole rune (so each piece can be sanitized on its own).
func (sp *TextSpool) each(sa *session.Subagent, i int, fn func(string)) {
	s := sp.subs[sa]
	if s == nil || i >= len(s.ends) {
		return
	}
	from, to := int64(0), s.ends[i]
	if i > 0 {
		from = s.ends[i-1]
	}
	var carry []byte // the start of a rune the last piece cut
	memAt := s.total - s.inMem
	for from < to && sp.err == nil {
		var b []byte
		if from >= memAt {
			k := int(from-memAt) / memBlock
			off := int(from-memAt) % memBlock
			b = s.blocks[k][off:]
			b = b[:min(int64(len(b)), to-from)]
		} else {
			k := sort.Search(len(s.segs), func(k int) bool { return s.segs[k].at+s.segs[k].n > from })
			seg := s.segs[k]
			if b = sp.read(seg.off+from-seg.at, min(to, seg.at+seg.n)-from); b == nil {
				return
			}
		}
		from += int64(len(b))
		if len(carry) > 0 {
			b = append(carry, b...)
			carry = nil
		}
		if r := lastRuneStart(b); from < to && r >= 0 && !utf8.FullRune(b[r:]) {
			carry = append([]byte(nil), b[r:]...)
			b = b[:r]
		}
		fn(string(b))
	}
}

// lastRuneStart is the index of the last byte of b that is not a UTF-8 continuation byte,
// looking back no further than a rune's length (-1 if none).
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if !utf8.RuneStart(b[i]) {
			continue
		}
		return i
	}
	return -1
}

// read returns up to n bytes of the file at off (at least one), through a block cache.
func (sp *TextSpool) read(off, n int64) []byte {
	if off < sp.blockOff || off >= sp.blockOff+int64(len(sp.block)) {
		size := min(spoolBlock, sp.size-off)
		if int64(cap(sp.block)) < size {
			sp.block = make([]byte, spoolBlock)
		}
		sp.block = sp.block[:size]
		if _, err := sp.file.ReadAt(sp.block, off); err != nil && err != io.EOF {
			sp.err = fmt.Errorf("read back transcript text: %w", err)
			sp.block = sp.block[:0]
			return nil
		}
		sp.blockOff = off
	}
	b := sp.block[off-sp.blockOff:]
	return b[:min(int64(len(b)), n)]
}

// Print writes what Print writes for the state st folded with the text, taking the text of
// its transcripts from the spool.
func (sp *TextSpool) Print(w io.Writer, st *session.State) error {
	return printState(w, st, sp)
}

// Close removes the spool's file.
func (sp *TextSpool) Close() error {
	if sp.file == nil {
		return nil
	}
	err := sp.file.Close()
	if runtime.GOOS == "windows" {
		os.Remove(sp.file.Name())
	}
	sp.file = nil
	return err
}
