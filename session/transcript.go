package session

// Transcript is one subagent's stream, kept in an append-only store: a byte arena holding every
// item's text back to back, and a slice of items pointing into it. Streaming a token appends
// bytes and moves the last item's end; nothing is ever rebuilt into one big string, so folding
// a token costs the same at the first event and the millionth.
//
// Invariant: items[i].start <= items[i].end <= items[i+1].start, and the last item ends at
// len(arena). Only the last item ever grows (token and thinking deltas coalesce into it).
type Transcript struct {
	arena []byte
	items []Item
}

// Item is one entry of a transcript: a coalesced run of token deltas (Kind "token"), a
// coalesced thinking run, a message, a tool call or result, a policy denial, an error, the
// subagent_start line, or a user message sent to the subagent (Kind "user").
type Item struct {
	Seq     uint64 // the seq of the event that opened the item
	Kind    string // a TranscriptEvent event_type, or ItemUser
	Tool    string
	CallID  string
	Args    map[string]any
	IsError bool
	start   int
	end     int
}

// ItemUser is the Kind of a user message sent to a subagent during a transfer-control handoff.
const ItemUser = "user"

// Len is the number of items.
func (t *Transcript) Len() int {
	if t == nil {
		return 0
	}
	return len(t.items)
}

// Item returns item i.
func (t *Transcript) Item(i int) Item { return t.items[i] }

// Text returns the text of item i (for a tool result, the result).
func (t *Transcript) Text(i int) string {
	it := t.items[i]
	return string(t.arena[it.start:it.end])
}

// Bytes is the total size of the stored text.
func (t *Transcript) Bytes() int {
	if t == nil {
		return 0
	}
	return len(t.arena)
}

// add appends a new item holding text.
func (t *Transcript) add(it Item, text string) {
	it.start = len(t.arena)
	t.arena = append(t.arena, text...)
	it.end = len(t.arena)
	t.items = append(t.items, it)
}

// extend appends a delta to the last item when it is of the same kind, else opens a new item.
// It reports whether a new item was opened.
func (t *Transcript) extend(seq uint64, kind, delta string) bool {
	if n := len(t.items); n > 0 && t.items[n-1].Kind == kind {
		t.arena = append(t.arena, delta...)
		t.items[n-1].end = len(t.arena)
		return false
	}
	t.add(Item{Seq: seq, Kind: kind}, delta)
	return true
}

// clone returns a copy that shares the arena's bytes but can never see the original's later
// appends (and the original never sees the clone's): both slices are capped at their length,
// so the next append on either side reallocates.
func (t *Transcript) clone() *Transcript {
	if t == nil {
		return nil
	}
	return &Transcript{
		arena: t.arena[:len(t.arena):len(t.arena)],
		items: append([]Item(nil), t.items...),
	}
}
