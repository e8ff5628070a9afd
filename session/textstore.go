package session

import (
	"container/list"
	"fmt"
	"sync"
)

// Loc is where an event's line lies in its recording: the byte offset of the line and its
// length, newline included.
type Loc struct {
	Off int64
	Len int
}

// TextSource reads events back from the recording a state was folded from. It is the only
// I/O behind a State, and the fold never calls it: only Transcript.Text and Transcript.Item
// do, when something is shown. Implementations must be safe for concurrent use
// (record.NewFileSource is).
type TextSource interface {
	// ReadEvents decodes the events whose lines are at locs, in order.
	ReadEvents(locs []Loc) ([]Event, error)
}

// TextStore keeps transcript text out of memory: a state given one (SetTextStore) stores, for
// each transcript event, where its line lies in the recording (see ApplyAt) instead of its
// text, and reads the text back through the source when it is asked for, keeping the texts
// read last in a cache bounded by bytes. Clones of a state share its store, so a text read
// for one checkpoint is cached for all.
//
// It is safe for concurrent use.
type TextStore struct {
	src TextSource
	max int

	mu   sync.Mutex
	size int
	m    map[int64]*list.Element
	lru  list.List // of *cachedText, most recent first
	// Reads counts the source reads (tests and diagnostics).
	reads int
}

type cachedText struct {
	key   int64 // offset of the item's first line
	count uint32
	text  string
	args  map[string]any
	cost  int
}

// DefaultTextCache is a good cache size for a TextStore: a few screens of every transcript.
const DefaultTextCache = 16 << 20

// NewTextStore returns a store reading from src with a cache of at most maxBytes of text
// (DefaultTextCache when ≤ 0).
func NewTextStore(src TextSource, maxBytes int) *TextStore {
	if maxBytes <= 0 {
		maxBytes = DefaultTextCache
	}
	return &TextStore{src: src, max: maxBytes, m: map[int64]*list.Element{}}
}

// SetTextStore gives the state a TextStore: the transcript events folded from now on keep
// their place in the recording (ApplyAt says where each event is), not their text. Set it
// before the first event; nil (the default) keeps every text in memory.
func (s *State) SetTextStore(ts *TextStore) { s.text = ts }

// SetCountOnly makes s a counting state, for a reader that wants the counters and the tree
// but not the transcripts (`summit inspect`): the fold is the same Apply, with the same rules,
// errors and counters, but each transcript keeps only its length (Len), its size (Bytes) and
// the kind of its last item (which decides whether the next delta extends it), not its items;
// the parent log (Log) is not kept; a permission request keeps its id, subagent, tool and
// decision, not its arguments and reason. So what the state holds grows with the subagents,
// handoffs, convergences and permission requests, never with the number of transcript events
// or items: a recording of any length folds in the same memory. Transcript.Item, Text and
// TextLen must not be called on a counting state's transcripts (they panic), nor Print.
// Set it before the first event.
func (s *State) SetCountOnly() { s.countOnly = true }

// SetForgetDecided makes s forget each permission request once it is decided: Permissions
// stays empty and Permission returns nil for a decided request, so what s holds grows with the
// requests still pending, not with all the requests of the recording. The fold is otherwise
// the same Apply with the same counters; what it can no longer refuse is a request id that
// reuses a decided one (or a second decision of it, refused as unknown rather than as already
// decided). It is for a writer that checks its own recording as it writes it and numbers its
// request ids itself, so they are unique by construction (`summit import`: pr-1, pr-2, …).
// Set it before the first event.
func (s *State) SetForgetDecided() { s.forgetDecided = true }

// CountOnly reports whether s is a counting state (SetCountOnly).
func (s *State) CountOnly() bool { return s.countOnly }

// SetCountItems makes s's transcripts count their items as a counting state's do (Len, Bytes
// and the kind of the last item, no items) and keeps everything else a full state keeps: the
// parent log, with its mirror items (whose Ref names an item the transcript does not hold),
// and the permission requests' arguments and reasons. It is for a reader that takes each
// item as it is folded and keeps it itself, out of the state: render.TextSpool, which prints
// a recording of any length (`summit replay --print`) from an Apply whose state holds nothing
// per transcript event. Such a reader may also take the log's items as they come and empty
// Log between events (the fold only ever appends to it), so that nothing in the state grows
// with the recording's length. Transcript.Item, Text and TextLen must not be called on its
// transcripts (they panic). Set it before the first event.
func (s *State) SetCountItems() { s.countItems = true }

// CountsItems reports whether s's transcripts count their items without keeping them
// (SetCountItems or SetCountOnly).
func (s *State) CountsItems() bool { return s.countItems || s.countOnly }

// TextStore is the state's store, or nil.
func (s *State) TextStore() *TextStore { return s.text }

// ApplyAt is Apply for a state with a TextStore: at is where e's line lies in the recording
// (a zero Loc: nowhere, the text is kept in memory). It is the same fold; the state only
// records at, it never reads it.
func ApplyAt(s *State, e Event, at Loc) error {
	s.at = at
	err := Apply(s, e)
	s.at = Loc{}
	return err
}

// ref is where the event being folded lies, for the transcript.
func (s *State) ref() textRef {
	if s.text == nil {
		return textRef{}
	}
	return textRef{ts: s.text, at: s.at}
}

// readBatch bounds the events decoded at once when a long item is read back.
const readBatch = 4096

// read returns the text (and a tool call's args) of span item i of t.
func (ts *TextStore) read(t *Transcript, i int, it *item) (string, map[string]any) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var c *cachedText
	if it.flags&flagNoKey == 0 {
		// A hit costs the first span's decoding, not the whole list's.
		if el := ts.m[t.firstSpan(i, it).Off]; el != nil {
			c = el.Value.(*cachedText)
			ts.lru.MoveToFront(el)
			if c.count >= it.count && int64(len(c.text)) >= it.textLen {
				return c.text[:it.textLen], c.args
			}
		}
	}
	sp := t.spans(i, it)
	if len(sp) == 0 {
		return "", nil
	}
	from, text := 0, ""
	if c != nil && int(c.count) <= len(sp) {
		from, text = int(c.count), c.text
	}
	buf := []byte(text)
	var args map[string]any
	var locs []Loc
	flush := func() error {
		if len(locs) == 0 {
			return nil
		}
		ts.reads++
		evs, err := ts.src.ReadEvents(locs)
		if err != nil {
			return err
		}
		for _, e := range evs {
			s, a := eventText(e)
			buf = append(buf, s...)
			if a != nil {
				args = a
			}
		}
		locs = locs[:0]
		return nil
	}
	for _, s := range sp[from:] {
		if s.at.Len == 0 {
			if err := flush(); err != nil {
				return readFailed(err), nil
			}
			buf = append(buf, s.lit...)
			continue
		}
		locs = append(locs, s.at)
		if len(locs) == readBatch {
			if err := flush(); err != nil {
				return readFailed(err), nil
			}
		}
	}
	if err := flush(); err != nil {
		return readFailed(err), nil
	}
	if c != nil && args == nil {
		args = c.args
	}
	out := string(buf)
	if int64(len(out)) < it.textLen {
		return readFailed(fmt.Errorf("the recording holds %d bytes of this text, the fold counted %d", len(out), it.textLen)), nil
	}
	if it.flags&flagNoKey == 0 {
		ts.put(sp[0].at.Off, uint32(len(sp)), out, args)
	}
	return out[:it.textLen], args
}

func readFailed(err error) string {
	return fmt.Sprintf("[summit: this text could not be read back from the recording: %v]", err)
}

// put caches a text, evicting the least recently used ones past the bound. ts.mu is held.
func (ts *TextStore) put(key int64, count uint32, text string, args map[string]any) {
	cost := len(text) + 128
	if args != nil {
		cost += 256
	}
	if el := ts.m[key]; el != nil {
		c := el.Value.(*cachedText)
		ts.size -= c.cost
		c.count, c.text, c.args, c.cost = count, text, args, cost
		ts.size += cost
		ts.lru.MoveToFront(el)
	} else {
		ts.m[key] = ts.lru.PushFront(&cachedText{key: key, count: count, text: text, args: args, cost: cost})
		ts.size += cost
	}
	for ts.size > ts.max && ts.lru.Len() > 1 {
		el := ts.lru.Back()
		c := el.Value.(*cachedText)
		ts.lru.Remove(el)
		delete(ts.m, c.key)
		ts.size -= c.cost
	}
}

// CacheStats reports the cached bytes and the reads from the source so far.
func (ts *TextStore) CacheStats() (bytes, reads int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.size, ts.reads
}
