package imports

import (
	"bufio"
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// Gemini CLI: ~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.jsonl (a metadata line,
// then message records, "$set" metadata updates and "$rewindTo" rewinds; a record with an id
// already seen replaces it), the whole-JSON session-*.json that versions before April 2026
// wrote, and /chat save checkpoints (checkpoint-<tag>.json: the model history, a list of
// {role, parts}). Subagents' chats are chats/<parent session id>/<id>.jsonl. See doc.go.

type gmRecord struct {
	SessionID   string      `json:"sessionId"`
	ProjectHash string      `json:"projectHash"`
	StartTime   string      `json:"startTime"`
	Kind        string      `json:"kind"`
	Summary     string      `json:"summary"`
	Messages    []gmMessage `json:"messages"`
	Set         *gmRecord   `json:"$set"`
	RewindTo    string      `json:"$rewindTo"`
	gmMessage
}

// gmSet is what a $set record's head carries.
type gmSet struct {
	SessionID string `json:"sessionId"`
	Summary   string `json:"summary"`
}

// gmHead is what records reads of each line of a JSONL chat: enough to know which messages
// stay (ids, rewinds) and the session's metadata. The messages that stay are decoded whole
// once, by replay; a line that is valid JSON but not a valid message fails there, at its
// line, as it would have here. stream reads it of a line that does not decode as a record.
type gmHead struct {
	SessionID string `json:"sessionId"`
	StartTime string `json:"startTime"`
	Kind      string `json:"kind"`
	Summary   string `json:"summary"`
	Set       *gmSet `json:"$set"`
	RewindTo  string `json:"$rewindTo"`
	ID        string `json:"id"`
}

// gmSpooled is a message record waiting in the spool for replay: where it lies and the
// source line it came from (its number, and whether it is a torn last line).
type gmSpooled struct {
	off  int64
	n    int
	last bool
	// at is where the message starts in a whole-JSON session (-1 in a JSONL chat): its line
	// is counted only when it fails.
	at int64
	// size is the length of a JSONL chat's line, which lies at off in a block of lines
	// spooled whole (spool.putRaw); 0 for a whole-JSON session's message, spooled as a blob.
	size int
}

// read reads m back from the spool.
func (m gmSpooled) read(sp *spool) ([]byte, error) {
	if m.size > 0 {
		return sp.span(m.off, m.size)
	}
	return sp.blob(m.off)
}

// gmList is a chat's messages, spooled, in chunks of gmChunk (the first one smaller: most
// subagents' chats are short): past the first chunk it grows without copying, and without
// the slack and the copy of a doubling slice (a long chat holds millions of messages).
type gmList struct {
	chunks [][]gmPacked
	n      int
}

// gmPacked is a gmSpooled in 16 bytes, not 40: pos is its at when gmAt is set, else its
// line n in the low 32 bits and its size in the 27 above, and gmLast is its last. An offset
// in a file is below MaxFileBytes (2^32), and so is a line number; a size is at most
// MaxLineBytes (2^26): all far below the flags.
type gmPacked struct {
	off, pos int64
}

const (
	gmAt   = 1 << 61
	gmLast = 1 << 62
)

func pack(m gmSpooled) gmPacked {
	p := gmPacked{off: m.off, pos: int64(m.n) | int64(m.size)<<32}
	if m.at >= 0 {
		p.pos = m.at | gmAt
	}
	if m.last {
		p.pos |= gmLast
	}
	return p
}

func (p gmPacked) unpack() gmSpooled {
	m := gmSpooled{off: p.off, at: -1, last: p.pos&gmLast != 0}
	if pos := p.pos &^ (gmAt | gmLast); p.pos&gmAt != 0 {
		m.at = pos
	} else {
		m.n, m.size = int(pos&(1<<32-1)), int(pos>>32)
	}
	return m
}

const gmChunk = 4096

func (l *gmList) push(m gmSpooled) {
	ci := l.n / gmChunk
	if ci == len(l.chunks) {
		size := gmChunk
		if ci == 0 {
			size = 16 // append doubles it up to gmChunk
		}
		l.chunks = append(l.chunks, make([]gmPacked, 0, size))
	}
	// A chunk past a truncation point may hold old messages: they are written over.
	l.chunks[ci] = append(l.chunks[ci][:l.n%gmChunk], pack(m))
	l.n++
}

// at is message i (< n).
func (l *gmList) at(i int) gmSpooled { return l.chunks[i/gmChunk][i%gmChunk].unpack() }

// set replaces message i (< n).
func (l *gmList) set(i int, m gmSpooled) { l.chunks[i/gmChunk][i%gmChunk] = pack(m) }

type gmMessage struct {
	ID        string       `json:"id"`
	Timestamp string       `json:"timestamp"`
	Type      string       `json:"type"`
	Content   gmParts      `json:"content"`
	ToolCalls []gmToolCall `json:"toolCalls"`
	Thoughts  []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
		Timestamp   string `json:"timestamp"`
	} `json:"thoughts"`
	Tokens *struct {
		Input  int64 `json:"input"`
		Output int64 `json:"output"`
	} `json:"tokens"`
	Model string `json:"model"`

	// contentText is Content.text(), set by prepare where the message is decoded (on every
	// core), not where it is mapped (on one).
	contentText string
}

// prepare sets what mapping reads of m that decoding can work out beforehand: its texts.
func (m *gmMessage) prepare() {
	m.contentText = m.Content.text()
	for i := range m.ToolCalls {
		m.ToolCalls[i].resultText = m.ToolCalls[i].Result.text()
	}
}

type gmToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	Result    gmParts         `json:"result"`
	Status    string          `json:"status"`
	Timestamp string          `json:"timestamp"`
	// ResultDisplay is a string for most tools; for replace and write_file it is a FileDiff
	// {fileDiff, fileName, originalContent, newContent}, read by gmEdit.
	ResultDisplay json.RawMessage `json:"resultDisplay"`

	resultText string // Result.text(), set by gmMessage.prepare
}

// gmPart is one part of a Gemini content (a PartListUnion member).
type gmPart struct {
	Text             string              `json:"text"`
	Thought          bool                `json:"thought"`
	FunctionCall     *gmFunctionCall     `json:"functionCall"`
	FunctionResponse *gmFunctionResponse `json:"functionResponse"`
	InlineData       *gmInlineData       `json:"inlineData"`
}

type gmFunctionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gmFunctionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type gmInlineData struct {
	MimeType string `json:"mimeType"`
}

// gmParts is a PartListUnion: a string, a part, or a list of strings and parts.
type gmParts []gmPart

func (p *gmParts) UnmarshalJSON(b []byte) error {
	if v, ok := fastParts(b); ok {
		*p = v // the usual shapes, read by hand (see gmparts.go)
		return nil
	}
	return p.unmarshalGeneral(b)
}

// unmarshalGeneral is UnmarshalJSON by the general decoder: every shape, and the errors.
func (p *gmParts) unmarshalGeneral(b []byte) error {
	switch {
	case len(b) == 0:
	case b[0] == '"':
		s, err := jsonString(b)
		if err != nil {
			return err
		}
		*p = gmParts{{Text: s}}
	case b[0] == '{':
		var one gmPart
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*p = gmParts{one}
	case b[0] == '[':
		// Almost always a list of parts: decoded in one call. A list with a string in it
		// fails that, and takes the general way below, member by member.
		var parts []gmPart
		if json.Unmarshal(b, &parts) == nil {
			*p = parts
			return nil
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		for _, r := range raw {
			var q gmParts
			if err := q.unmarshalGeneral(r); err != nil {
				return err
			}
			*p = append(*p, q...)
		}
	}
	return nil
}

// text joins the text parts (thoughts left out); other parts are named.
func (p gmParts) text() string {
	if len(p) == 1 && !p[0].Thought && p[0].InlineData == nil && p[0].FunctionResponse == nil && p[0].FunctionCall == nil {
		return p[0].Text // the usual content: one text part, nothing to join
	}
	var b strings.Builder
	for _, x := range p {
		s := x.Text
		switch {
		case x.Thought:
			continue
		case x.InlineData != nil:
			s = "[imported: inline " + x.InlineData.MimeType + " data]"
		case x.FunctionResponse != nil:
			s = responseText(x.FunctionResponse.Response)
		case x.FunctionCall != nil:
			continue
		}
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}

// responseText is a function response's output, or its error, or the whole response: the
// first of output and error that is a string (each read as raw JSON, so that an output that
// is not a string is never decoded into values only to be dropped).
func responseText(raw json.RawMessage) string {
	if s, ok := fastResponseText(raw); ok {
		return s
	}
	return responseTextGeneral(raw)
}

// responseTextGeneral is responseText by the general decoder.
func responseTextGeneral(raw json.RawMessage) string {
	var v struct {
		Output json.RawMessage `json:"output"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &v) == nil {
		for _, x := range []json.RawMessage{v.Output, v.Error} {
			if len(x) > 0 && x[0] == '"' {
				if s, err := jsonString(x); err == nil {
					return s
				}
			}
		}
	}
	return string(raw)
}

// geminiChildren finds the chats of a session's subagents, at any depth:
// <chats>/<session id>/*.jsonl, and theirs in turn.
func geminiChildren(path string) []string {
	id := geminiSessionID(path)
	if id == "" {
		return nil
	}
	chats := filepath.Dir(path)
	var out []string
	seen := map[string]bool{id: true}
	queue := []string{id}
	for len(queue) > 0 {
		id, queue = queue[0], queue[1:]
		// Subagent chats are JSONL since April 2026 and whole-JSON before it.
		files, _ := filepath.Glob(filepath.Join(chats, id, "*.jsonl"))
		older, _ := filepath.Glob(filepath.Join(chats, id, "*.json"))
		for _, f := range append(files, older...) {
			out = append(out, f)
			if c := geminiSessionID(f); c != "" && !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return out
}

// geminiSessionID reads the sessionId a chat file starts with.
func geminiSessionID(path string) string {
	head, err := readHead(path, 64<<10)
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(head, '\n'); i >= 0 && strings.HasSuffix(path, ".jsonl") {
		head = head[:i]
	}
	var v struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(head, &v) == nil {
		return v.SessionID
	}
	// A whole-JSON session: find the key in its head.
	if i := bytes.Index(head, []byte(`"sessionId"`)); i >= 0 {
		rest := head[i+len(`"sessionId"`):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 {
			rest = rest[j+1:]
			if k := bytes.IndexByte(rest, '"'); k >= 0 {
				return string(rest[:k])
			}
		}
	}
	return ""
}

type gmReader struct {
	s      *sess
	opts   Options
	mainID string
	// calls lists each agent's tool calls by tool name: a subagent's chat is named
	// <agent name>-<suffix>, after the tool that ran it. Each subagent takes the first time
	// left of its name, and the subagents are the child files, so only the first
	// len(children) times of a name are kept: the list does not grow with the session.
	calls    map[*agent]map[string][]time.Time
	children int
	// twoPass reads every JSONL chat with records and replay, not stream.
	twoPass bool
}

func readGemini(u Unit, opts Options) (*sess, error) {
	s, err := readGeminiPasses(u, opts, opts.twoPass)
	if errors.Is(err, errGmRedo) {
		s.sp.close()
		gmRedone.Add(1)
		s, err = readGeminiPasses(u, opts, true)
	}
	if err != nil {
		s.sp.close()
		return nil, err
	}
	return s, nil
}

// readGeminiPasses reads a Gemini CLI session, its JSONL chats in one pass each (stream) or,
// with twoPass, in two (records, replay).
func readGeminiPasses(u Unit, opts Options, twoPass bool) (*sess, error) {
	r := &gmReader{s: newSess(Gemini, u.Path), opts: opts, calls: map[*agent]map[string][]time.Time{}, children: len(u.Children), twoPass: twoPass}
	r.s.provider = "gemini"
	if err := r.file(u.Path, ""); err != nil {
		return r.s, err
	}
	for _, c := range u.Children {
		if err := r.file(c, filepath.Base(filepath.Dir(c))); err != nil {
			return r.s, err
		}
	}
	// A subagent started by a tool call of its name: its type is that name, and it starts
	// when the call does.
	for _, a := range r.s.agents[1:] {
		i := strings.LastIndexByte(a.key, '-')
		if i <= 0 {
			continue
		}
		p := r.s.byKey[a.parentKey]
		if calls := r.calls[p][a.key[:i]]; len(calls) > 0 {
			a.typ, a.spawnAt = a.key[:i], calls[0]
			r.calls[p][a.key[:i]] = calls[1:]
		}
	}
	return r.s, nil
}

// file reads one chat: the main session (parent "") or a subagent's (parent: the session id
// its folder is named after).
func (r *gmReader) file(path, parent string) error {
	head, err := readHead(path, 64<<10)
	if err != nil {
		_, err = readFile(path) // the error, named as every read names it
		return err
	}
	body := bytes.TrimLeft(head, " \t\r\n")
	var meta gmRecord
	var offs *gmList // the messages, spooled (see records)
	switch {
	case len(body) > 0 && body[0] == '[':
		data, err := readFile(path)
		if err != nil {
			return err
		}
		return r.checkpoint(path, data)
	case strings.HasSuffix(path, ".json") || len(body) > 0 && body[0] == '{' && bytes.Contains(body[:min(len(body), 4096)], []byte("\n  \"")):
		// The whole-JSON session of Gemini CLI before JSONL: one document, streamed (its
		// messages spooled one by one, as a JSONL chat's lines are).
		if offs, meta, err = r.document(path); err != nil {
			return err
		}
	default:
		if !r.twoPass {
			return r.stream(path, parent)
		}
		if offs, meta, err = r.records(path); err != nil {
			return err
		}
	}
	a := r.agentFor(path, parent, meta)
	r.settle(a, path, parent, meta)
	if err := r.replay(a, path, offs); err != nil {
		return err
	}
	if a.name == "" {
		a.name = a.key
	}
	return nil
}

// agentFor is the agent a chat's messages go to: the main agent's (parent "") or the
// subagent's its session id (else its file's name) names.
func (r *gmReader) agentFor(path, parent string, meta gmRecord) *agent {
	if parent == "" {
		return r.s.main()
	}
	return r.s.agent(gmKey(path, meta))
}

func gmKey(path string, meta gmRecord) string {
	if meta.SessionID != "" {
		return meta.SessionID
	}
	return strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".jsonl"), ".json")
}

// settle gives a the chat's metadata once it is read whole.
func (r *gmReader) settle(a *agent, path, parent string, meta gmRecord) {
	if parent == "" {
		r.mainID, r.s.sourceID, r.s.start = meta.SessionID, meta.SessionID, parseTS(meta.StartTime)
		a.sessionID = meta.SessionID
		if meta.Summary != "" {
			r.s.sessionNote(parseTS(meta.StartTime), "summary", meta.Summary)
		}
		return
	}
	a.sessionID, a.typ = a.key, "gemini-subagent"
	if parent != r.mainID {
		a.parentKey = parent
	}
	if meta.Summary != "" {
		a.name = meta.Summary
	}
}

// rewound keeps a message a rewind dropped as a session note: the source held it.
func (r *gmReader) rewound(m *gmMessage) {
	r.s.sessionNote(parseTS(m.Timestamp), "rewound", "a "+m.Type+" message the user rewound past: "+clip(m.contentText, 1024))
}

// errGmRedo stops a chat read in one pass (stream) when a record changes a message that was
// mapped already: the session is read again in two (records, replay).
var errGmRedo = errors.New("gemini-cli: a record changes a message already mapped")

// gmRedone counts the sessions read again in two passes (tests read it).
var gmRedone atomic.Int64

// gmWindow and gmWindowBytes bound the messages stream holds unmapped: a record replaces, and
// a rewind drops, the messages of the last few lines (Gemini CLI updates the message it is
// writing), so a message this far back is final.
const (
	gmWindow      = 1024
	gmWindowBytes = 16 << 20
)

// gmLine is a JSONL chat line decoded whole, once: a message (ID set) is mapped from it.
// When it does not decode as a record but its head does (JSON, but not a valid message),
// head says what it is and recErr is its error, met if the message is ever mapped.
type gmLine struct {
	rec    gmRecord
	head   gmHead
	full   bool
	recErr error
}

func decodeGmLine(b []byte, l *gmLine) error {
	err := decodeGm(b, &l.rec)
	if err == nil {
		l.full = true
		return nil
	}
	l.rec, l.recErr = gmRecord{}, err
	return json.Unmarshal(b, &l.head)
}

// gmHeld is a message stream holds until it is final: decoded, or the error its line meets
// when mapped (ln, its line, is then what the error names).
type gmHeld struct {
	m    gmMessage
	err  error
	ln   srcLine
	size int
	key  uint64 // the hash of its id
}

// stream reads a JSONL chat in one pass, its lines decoded once on every core: what records
// and replay do in two, for every chat whose records change only recent messages (as Gemini
// CLI writes them). The last gmWindow messages (at most gmWindowBytes of lines) are held
// decoded; an older one is final and is mapped. A record that replaces or rewinds a message
// mapped already returns errGmRedo (the caller reads the session again in two passes); so
// does a subagent's chat whose session id is set after its messages were mapped to it.
//
// Only the held messages' ids are kept by position (a map of at most gmWindow+1): a map of
// every id of a long chat was a twentieth of the import's CPU, a cache miss a line. A record
// whose id is not held starts a message, and its id's hash is listed; once the chat is read,
// an id listed twice means a record named a message mapped already (or rewound), and the
// chat is read again in two passes, which handle both.
func (r *gmReader) stream(path, parent string) error {
	var meta gmRecord
	win := map[uint64]int{} // the held messages' positions by the hash of their ids
	var fresh []uint64      // the hash of the id of each record that started a message
	h := r.s.sp.hash
	var a *agent
	// The held messages, a ring: positions mapped.. mapped+n-1, position mapped at ring[hd].
	// Never more than gmWindow+1 are held (drain maps the oldest past gmWindow).
	ring := make([]gmHeld, gmWindow+1)
	hd, n := 0, 0
	slot := func(k int) *gmHeld { return &ring[(hd+k)%len(ring)] }
	mapped, held := 0, 0
	// The lines of messages that did not decode, met when mapped: they fail (or are noted)
	// once the chat is read, as replay meets them after records (the same error, the same
	// notes in the same order).
	var bad []gmHeld
	// drain maps the oldest held messages: those past the window, or all of them.
	drain := func(all bool) {
		for n > 0 && (all || n > gmWindow || held > gmWindowBytes) {
			m := slot(0)
			if a == nil {
				a = r.agentFor(path, parent, meta)
			}
			if m.err != nil {
				bad = append(bad, gmHeld{err: m.err, ln: m.ln})
			} else {
				r.message(a, &m.m)
			}
			held -= m.size
			delete(win, m.key)
			*m = gmHeld{}
			hd, n, mapped = (hd+1)%len(ring), n-1, mapped+1
		}
	}
	err := readLines(path, decodeGmLine, func(ln srcLine, l *gmLine, lerr error) error {
		r.s.lines++
		if lerr != nil {
			return r.s.badLine(path, ln, lerr, r.opts)
		}
		rec := &l.head
		if l.full {
			*rec = gmHead{SessionID: l.rec.SessionID, StartTime: l.rec.StartTime, Kind: l.rec.Kind, Summary: l.rec.Summary, RewindTo: l.rec.RewindTo, ID: l.rec.ID}
			if l.rec.Set != nil {
				rec.Set = &gmSet{l.rec.Set.SessionID, l.rec.Set.Summary}
			}
		}
		switch {
		case rec.RewindTo != "":
			j, ok := win[h(rec.RewindTo)]
			if !ok {
				j = 0 // an id not held: mapped already, or unknown (all are dropped)
			}
			if j < mapped {
				return errGmRedo
			}
			for k := j - mapped; k < n; k++ {
				old := slot(k)
				held -= old.size
				delete(win, old.key)
				if old.err != nil {
					if err := r.s.badLine(path, old.ln, old.err, r.opts); err != nil {
						return err
					}
				} else {
					m := &old.m
					r.rewound(m)
				}
				*old = gmHeld{}
			}
			n = j - mapped
		case rec.Set != nil:
			if rec.Set.Summary != "" {
				meta.Summary = rec.Set.Summary
			}
			if rec.Set.SessionID != "" && meta.SessionID == "" {
				meta.SessionID = rec.Set.SessionID
			}
			r.s.skipped["metadata updates"]++
		case rec.ID != "":
			var m *gmHeld
			key := h(rec.ID)
			if j, ok := win[key]; ok {
				m = slot(j - mapped)
				held -= m.size
				r.s.skipped["message records that update an earlier one"]++
			} else {
				win[key] = mapped + n
				fresh = append(fresh, key)
				m = slot(n)
				n++
			}
			*m = gmHeld{m: l.rec.gmMessage, err: l.recErr, ln: srcLine{n: ln.n, last: ln.last}, size: len(ln.b), key: key}
			held += m.size
			drain(false)
			return nil
		case rec.SessionID != "":
			if meta.SessionID == "" {
				meta.SessionID, meta.StartTime, meta.Kind = rec.SessionID, rec.StartTime, rec.Kind
			}
			if rec.Summary != "" {
				meta.Summary = rec.Summary
			}
		default:
			r.s.unknownLine(r.s.main(), time.Time{}, "gemini-cli record", ln.b)
		}
		return nil
	})
	if err != nil {
		return err
	}
	drain(true)
	slices.Sort(fresh)
	for i := 1; i < len(fresh); i++ {
		if fresh[i] == fresh[i-1] {
			return errGmRedo // a record named a message no longer held
		}
	}
	if a == nil {
		a = r.agentFor(path, parent, meta)
	} else if parent != "" && a.key != gmKey(path, meta) {
		return errGmRedo // the session id came after the messages the file name's agent took
	}
	r.settle(a, path, parent, meta)
	for _, m := range bad {
		if err := r.s.badLine(path, m.ln, m.err, r.opts); err != nil {
			return err
		}
	}
	if a.name == "" {
		a.name = a.key
	}
	return nil
}

// records reads a JSONL chat into its final messages, the first of the two passes that read
// a chat stream cannot (see stream): a record whose id was seen replaces that message, a
// rewind drops the messages from the one it names on (each dropped one is kept as a note,
// since the source held it), and $set updates the metadata. The messages are spooled as their
// lines (the offsets returned, in order) and decoded again by replay: which of them stay is
// known only at the end, and holding them decoded would take memory in proportion to the
// chat.
func (r *gmReader) records(path string) (*gmList, gmRecord, error) {
	var meta gmRecord
	msgs := &gmList{}
	at := map[uint64]int{} // by the hash of the message id
	h := r.s.sp.hash
	// Each block of lines is spooled whole, in one write, and a message is where its line
	// lies in it: no copy a line.
	var base int64
	var cur []byte // the block its lines are in, while they are read
	block := func(b []byte) error {
		base, cur = r.s.sp.putRaw(b), b
		return r.s.sp.err
	}
	// read is message m's line: from the block in memory when it is there (a rewind nearly
	// always drops messages of the last few lines), else read back from the spool.
	read := func(m gmSpooled) ([]byte, error) {
		if m.size > 0 && m.off >= base && m.off+int64(m.size) <= base+int64(len(cur)) {
			return cur[m.off-base : m.off-base+int64(m.size)], nil
		}
		return m.read(r.s.sp)
	}
	err := readLinesBlocks(path, decodeGmHead, block, func(ln srcLine, rec *gmHead, lerr error) error {
		r.s.lines++
		if lerr != nil {
			return r.s.badLine(path, ln, lerr, r.opts)
		}
		switch {
		case rec.RewindTo != "":
			j, ok := at[h(rec.RewindTo)]
			if !ok {
				j = 0
			}
			for k := j; k < msgs.n; k++ {
				sm := msgs.at(k)
				var old gmRecord
				raw, err := read(sm)
				if err != nil {
					return fmt.Errorf("%s: import spool: a message does not read back: %v", path, err)
				}
				if err := decodeGm(raw, &old); err != nil {
					// Its id is dropped too: a later record with it starts a message, and
					// does not replace the one that takes this position next.
					var hd gmHead
					if decodeGmHead(raw, &hd) == nil {
						delete(at, h(hd.ID))
					}
					if err := r.s.badLine(path, srcLine{n: sm.n, last: sm.last}, err, r.opts); err != nil {
						return err
					}
					continue
				}
				m := &old.gmMessage
				delete(at, h(m.ID))
				r.rewound(m)
			}
			msgs.n = j
		case rec.Set != nil:
			if rec.Set.Summary != "" {
				meta.Summary = strings.Clone(rec.Set.Summary)
			}
			if rec.Set.SessionID != "" && meta.SessionID == "" {
				meta.SessionID = strings.Clone(rec.Set.SessionID)
			}
			r.s.skipped["metadata updates"]++
		case rec.ID != "":
			sm := gmSpooled{off: base + int64(ln.at), size: len(ln.b), n: ln.n, last: ln.last, at: -1}
			if j, ok := at[h(rec.ID)]; ok {
				msgs.set(j, sm)
				r.s.skipped["message records that update an earlier one"]++
			} else {
				at[h(rec.ID)] = msgs.n
				msgs.push(sm)
			}
		case rec.SessionID != "":
			if meta.SessionID == "" {
				meta.SessionID, meta.StartTime, meta.Kind = strings.Clone(rec.SessionID), strings.Clone(rec.StartTime), strings.Clone(rec.Kind)
			}
			if rec.Summary != "" {
				meta.Summary = strings.Clone(rec.Summary)
			}
		default:
			r.s.unknownLine(r.s.main(), time.Time{}, "gemini-cli record", ln.b)
		}
		return nil
	})
	return msgs, meta, err
}

// document reads a whole-JSON session (Gemini CLI before April 2026) without holding it: the
// top-level object is walked key by key, each element of "messages" is spooled as its raw JSON
// (replay decodes it, as a JSONL chat's lines), and the other keys are the metadata. Memory
// holds one message at a time, whatever the size of the file.
func (r *gmReader) document(path string) (*gmList, gmRecord, error) {
	var meta gmRecord
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, meta, lineErr(path, 0, "%v", unwrapPath(err))
	}
	defer f.Close()
	if fi.Size() > MaxFileBytes {
		return nil, meta, lineErr(path, 0, "%d bytes is over the %d-byte cap of one source file", fi.Size(), int64(MaxFileBytes))
	}
	nl := &newlineCounter{r: f}
	dec := stdjson.NewDecoder(nl)
	// fail names the line of the error. A Token error's offset is the file's; a Decode error's
	// is counted from a point of the decoder's buffer, so the value (from start, the offset
	// before it) is decoded again by a fresh decoder whose offsets are the value's own.
	fail := func(err error, start int64) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return lineErr(path, lineOfFile(path, fi.Size()), "unexpected end of JSON input")
		}
		var se *stdjson.SyntaxError
		if !errors.As(err, &se) {
			return lineErr(path, lineOfFile(path, dec.InputOffset()), "%s", jsonMsg(err))
		}
		if start < 0 {
			return lineErr(path, lineOfFile(path, se.Offset), "%s", jsonMsg(err))
		}
		return lineErr(path, lineOfValue(path, start, syntaxOffset(path, start)), "%s", jsonMsg(err))
	}
	if tok, err := dec.Token(); err != nil {
		return nil, meta, fail(err, -1)
	} else if tok != stdjson.Delim('{') {
		return nil, meta, lineErr(path, 1, "a Gemini CLI session is a JSON object, not %v", tok)
	}
	msgs := &gmList{}
	rest := []byte{'{'} // the keys other than messages, for meta
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, meta, fail(err, -1)
		}
		key, _ := tok.(string)
		if key != "messages" {
			start := dec.InputOffset()
			var raw stdjson.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, meta, fail(err, start)
			}
			if len(rest) > 1 {
				rest = append(rest, ',')
			}
			k, _ := stdjson.Marshal(key)
			rest = append(append(append(rest, k...), ':'), raw...)
			continue
		}
		if tok, err = dec.Token(); err != nil {
			return nil, meta, fail(err, -1)
		} else if tok == nil {
			continue // "messages": null
		} else if tok != stdjson.Delim('[') {
			return nil, meta, lineErr(path, lineOfFile(path, dec.InputOffset()), "messages is not a list")
		}
		for dec.More() {
			var raw stdjson.RawMessage
			start := dec.InputOffset()
			if err := dec.Decode(&raw); err != nil {
				return nil, meta, fail(err, start)
			}
			msgs.push(gmSpooled{off: r.s.sp.putBlob(raw), at: start})
		}
		if _, err := dec.Token(); err != nil {
			return nil, meta, fail(err, -1)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, meta, fail(err, -1)
	}
	if _, err := io.Copy(io.Discard, nl); err != nil {
		return nil, meta, lineErr(path, 0, "%v", unwrapPath(err))
	}
	rest = append(rest, '}')
	if err := json.Unmarshal(rest, &meta); err != nil {
		return nil, meta, lineErr(path, 1, "%s", jsonMsg(err))
	}
	r.s.lines += nl.n + 1
	return msgs, meta, nil
}

// newlineCounter counts the newlines read through it.
type newlineCounter struct {
	r io.Reader
	n int
}

func (c *newlineCounter) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += bytes.Count(p[:k], []byte{'\n'})
	return k, err
}

// syntaxOffset is where the JSON value after start (past commas and spaces) fails to parse,
// counted from the value's first byte.
func syntaxOffset(path string, start int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	br := bufio.NewReader(io.NewSectionReader(f, start, math.MaxInt64-start))
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0
		}
		if !strings.ContainsRune(" \t\r\n,", rune(c)) {
			br.UnreadByte()
			break
		}
	}
	var raw stdjson.RawMessage
	var se *stdjson.SyntaxError
	if err := stdjson.NewDecoder(br).Decode(&raw); errors.As(err, &se) {
		return max(se.Offset-1, 0)
	}
	return 0
}

// lineOfFile is the line of path the byte at off is on.
func lineOfFile(path string, off int64) int { return lineOfValue(path, off, -1) }

// lineOfValue is the line of path the byte rel bytes into the JSON value after start is on
// (the decoder's offset before a value is that of the comma or spaces ahead of it); rel < 0:
// the byte at start.
func lineOfValue(path string, start, rel int64) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	nl := &newlineCounter{r: bufio.NewReader(io.LimitReader(f, max(start, 0)))}
	io.Copy(io.Discard, nl)
	if rel >= 0 {
		br := bufio.NewReader(f)
		for {
			c, err := br.ReadByte()
			if err != nil {
				break
			}
			if c == '\n' {
				nl.n++
			}
			if !strings.ContainsRune(" \t\r\n,", rune(c)) {
				br.UnreadByte()
				if c == '\n' {
					nl.n--
				}
				break
			}
		}
		part := &newlineCounter{r: io.LimitReader(br, rel)}
		io.Copy(io.Discard, part)
		nl.n += part.n
	}
	return nl.n + 1
}

func decodeGm(b []byte, l *gmRecord) error {
	if err := json.Unmarshal(b, l); err != nil {
		return err
	}
	l.gmMessage.prepare()
	return nil
}

func decodeGmHead(b []byte, l *gmHead) error { return json.Unmarshal(b, l) }

// replay maps the messages records spooled. A goroutine reads them back a batch at a time
// and decodes each batch on every core while the batch before it is mapped (mapping needs
// order, so it is the one serial step, and it never waits for a decode it could overlap). The
// reader reads only what was spooled before replay began (the mapping spools on behind it). A
// message that does not decode is a malformed line of path (see sess.badLine).
func (r *gmReader) replay(a *agent, path string, msgs *gmList) error {
	const batch = 1024
	if err := r.s.sp.flush(); err != nil {
		return err
	}
	type decodedBatch struct {
		part  []gmSpooled
		lines []srcLine
		out   []gmRecord
		errs  []error
		err   error
	}
	ch := make(chan decodedBatch, 1)
	stop := make(chan struct{})
	done := make(chan struct{})
	defer func() { close(stop); <-done }()
	go func() {
		defer close(done)
		defer close(ch)
		c := cursor{sp: r.s.sp, end: r.s.sp.n}
		defer c.release()
		for lo := 0; lo < msgs.n; lo += batch {
			d := decodedBatch{part: make([]gmSpooled, 0, min(batch, msgs.n-lo))}
			for i := lo; i < min(lo+batch, msgs.n); i++ {
				d.part = append(d.part, msgs.at(i))
			}
			d.lines = make([]srcLine, len(d.part))
			for i, sm := range d.part {
				var b []byte
				var err error
				if sm.size > 0 {
					b, err = c.span(sm.off, sm.size)
				} else if b, err = c.record(sm.off); err == nil {
					if len(b) == 0 || b[0] != spBlob {
						err = errSpool
					} else {
						b = bytes.Clone(b[1:])
					}
				}
				if err != nil {
					d.err = err
					break
				}
				d.lines[i] = srcLine{n: sm.n, b: b, last: sm.last}
			}
			if d.err == nil {
				d.out = make([]gmRecord, len(d.part))
				d.errs = decodeAll(d.lines, d.out, decodeGm)
			}
			select {
			case ch <- d:
			case <-stop:
				return
			}
			if d.err != nil {
				return
			}
		}
	}()
	for d := range ch {
		if d.err != nil {
			return d.err
		}
		for i, err := range d.errs {
			if err != nil && d.part[i].at >= 0 {
				// A whole-JSON session fails as a whole, at the line in the message.
				return lineErr(path, lineOfValue(path, d.part[i].at, offsetOf(err)), "%s", jsonMsg(err))
			}
			if err != nil {
				if err := r.s.badLine(path, d.lines[i], err, r.opts); err != nil {
					return err
				}
				continue
			}
			r.message(a, &d.out[i].gmMessage)
		}
	}
	return nil
}

func (r *gmReader) message(a *agent, m *gmMessage) {
	ts := parseTS(m.Timestamp)
	text := m.contentText
	switch m.Type {
	case "user":
		if text != "" {
			a.add(ts, session.UserNote{Text: text})
			if a.task == "" {
				a.task = clip(text, 200)
			}
		}
	case "gemini":
		if a.model == "" && m.Model != "" {
			a.model, a.provider = m.Model, "gemini"
		}
		for _, t := range m.Thoughts {
			th := t.Description
			if t.Subject != "" {
				th = "**" + t.Subject + "** " + th
			}
			a.text(parseTS(t.Timestamp), session.TranscriptThinking, th)
		}
		for _, p := range m.Content {
			if p.Thought {
				a.text(ts, session.TranscriptThinking, p.Text)
			}
		}
		a.text(ts, session.TranscriptMessage, text)
		for _, c := range m.ToolCalls {
			cts := parseTS(c.Timestamp)
			if cts.IsZero() {
				cts = ts
			}
			// Spooled raw: rawArgs decodes the arguments on the encoding workers, not here.
			a.callRaw(cts, c.ID, c.Name, c.Args)
			if r.calls[a] == nil {
				r.calls[a] = map[string][]time.Time{}
			}
			if ts := r.calls[a][c.Name]; len(ts) < r.children {
				r.calls[a][c.Name] = append(ts, cts)
			}
			failed := c.Status == "error" || c.Status == "cancelled"
			res := c.resultText
			if c.Status == "cancelled" {
				r.s.ask(a, cts, c.ID, c.Name, nil, "imported: Gemini CLI asked the user")
				r.s.decide(a, cts, c.ID, false, "the user cancelled the call")
			}
			if !failed {
				if e, ok := r.edit(c); ok {
					a.addEdits(e)
					res += "\n" + e.diff
				}
			}
			a.result(cts, c.ID, c.Name, res, failed)
		}
		if m.Tokens != nil {
			a.useTokens("", session.Tokens{Input: m.Tokens.Input, Output: m.Tokens.Output})
		}
	case "error":
		a.text(ts, session.TranscriptError, text)
	case "info", "warning":
		a.note(ts, m.Type, text)
	default:
		r.s.unknown[fmt.Sprintf("gemini-cli message type %q", m.Type)]++
		a.note(ts, "gemini-cli message of type "+m.Type, text)
	}
}

// checkpoint reads a /chat save checkpoint: the model history without times (every event
// gets the file's modification time).
func (r *gmReader) checkpoint(path string, data []byte) error {
	var hist []struct {
		Role  string  `json:"role"`
		Parts gmParts `json:"parts"`
	}
	if err := json.Unmarshal(data, &hist); err != nil {
		return lineErr(path, lineAt(data, offsetOf(err)), "%s", jsonMsg(err))
	}
	r.s.lines += bytes.Count(data, []byte{'\n'}) + 1
	var ts time.Time
	if fi, err := os.Stat(path); err == nil {
		ts = fi.ModTime().UTC()
	}
	r.s.start = ts
	r.s.sourceID = "checkpoint-" + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "checkpoint-"), ".json")
	a := r.s.main()
	names := map[string]string{}
	for _, h := range hist {
		for _, p := range h.Parts {
			switch {
			case p.FunctionCall != nil:
				names[p.FunctionCall.ID] = p.FunctionCall.Name
				a.call(ts, p.FunctionCall.ID, p.FunctionCall.Name, rawArgs(p.FunctionCall.Args))
			case p.FunctionResponse != nil:
				a.result(ts, p.FunctionResponse.ID, p.FunctionResponse.Name, responseText(p.FunctionResponse.Response), false)
			case p.Thought:
				a.text(ts, session.TranscriptThinking, p.Text)
			case p.InlineData != nil:
				a.note(ts, "inline data", p.InlineData.MimeType)
			case h.Role == "user" && p.Text != "":
				a.add(ts, session.UserNote{Text: p.Text})
			case p.Text != "":
				a.text(ts, session.TranscriptMessage, p.Text)
			}
		}
	}
	return nil
}

// edit reads the FileDiff a successful replace / write_file call displays: the file and its
// unified diff (jsdiff's, whose "Index:" and "===" header lines are replaced by summit's).
func (r *gmReader) edit(c gmToolCall) (edit, bool) {
	if len(c.ResultDisplay) == 0 || c.ResultDisplay[0] != '{' {
		return edit{}, false
	}
	var d struct {
		FileDiff        string  `json:"fileDiff"`
		FileName        string  `json:"fileName"`
		OriginalContent *string `json:"originalContent"`
		NewContent      string  `json:"newContent"`
	}
	if json.Unmarshal(c.ResultDisplay, &d) != nil || d.FileDiff == "" {
		return edit{}, false
	}
	var args struct {
		FilePath string `json:"file_path"`
		Path     string `json:"absolute_path"`
	}
	_ = json.Unmarshal(c.Args, &args)
	path := orDefault(args.FilePath, orDefault(args.Path, d.FileName))
	if cwd := r.s.cwd; cwd != "" {
		if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
			path = rel
		}
	}
	e := edit{path: path, kind: session.ChangeModified}
	from := "a/" + path
	if d.OriginalContent == nil || *d.OriginalContent == "" && c.Name == "write_file" {
		e.kind, from = session.ChangeAdded, "/dev/null"
	}
	body := d.FileDiff
	if i := strings.Index(body, "\n@@"); i >= 0 {
		body = body[i+1:]
	} else if !strings.HasPrefix(body, "@@") {
		body = ""
	}
	e.diff = fmt.Sprintf("--- %s\n+++ b/%s\n", from, path) + body
	if !strings.HasSuffix(e.diff, "\n") {
		e.diff += "\n"
	}
	e.added, e.removed = diffStat(body)
	return e, true
}
