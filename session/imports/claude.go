package imports

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// Claude Code: ~/.claude/projects/<project>/<session>.jsonl, one JSON object a line. See
// doc.go for the mapping.

type ccLine struct {
	Type           string     `json:"type"`
	Subtype        string     `json:"subtype"`
	UUID           string     `json:"uuid"`
	ParentUUID     string     `json:"parentUuid"`
	SessionID      string     `json:"sessionId"`
	Timestamp      string     `json:"timestamp"`
	Version        string     `json:"version"`
	Cwd            string     `json:"cwd"`
	IsSidechain    bool       `json:"isSidechain"`
	IsMeta         bool       `json:"isMeta"`
	IsCompact      bool       `json:"isCompactSummary"`
	AgentID        string     `json:"agentId"`
	IsAPIError     bool       `json:"isApiErrorMessage"`
	PermissionMode string     `json:"permissionMode"`
	Message        *ccMessage `json:"message"`
	// ToolUseResult is decoded only where the mapping needs it (an Edit/Write patch, a
	// Task's agent): most hold a whole file read, which is not worth decoding.
	ToolUseResult   json.RawMessage `json:"toolUseResult"`
	Content         ccText          `json:"content"`
	Level           string          `json:"level"`
	Summary         string          `json:"summary"`
	ParentToolUseID string          `json:"parentToolUseID"`
	Data            *ccProgress     `json:"data"`
	Attachment      *struct {
		Type string `json:"type"`
	} `json:"attachment"`
	CustomTitle string `json:"customTitle"`
	// claude -p --output-format stream-json: snake_case keys, no times; a subagent's
	// messages carry the id of the Task call that started it.
	StreamSessionID string          `json:"session_id"`
	ParentToolUse   *string         `json:"parent_tool_use_id"`
	StreamResult    json.RawMessage `json:"tool_use_result"`
	Model           string          `json:"model"`
	CodeVersion     string          `json:"claude_code_version"`
	Result          string          `json:"result"`
	IsError         bool            `json:"is_error"`
	NumTurns        int             `json:"num_turns"`
	AITitle         string          `json:"aiTitle"`
	AgentName       string          `json:"agentName"`

	// tur is ToolUseResult decoded by toolUseResult when turDone: done with the line's
	// decoding, on every core, rather than by the mapping.
	tur     ccToolResult
	turOK   bool
	turDone bool
}

// decodeCC decodes a Claude Code line, its tool result included.
func decodeCC(b []byte, l *ccLine) error {
	if err := json.Unmarshal(b, l); err != nil {
		return err
	}
	l.tur, l.turOK = toolUseResult(l.ToolUseResult)
	l.turDone = true
	return nil
}

type ccMessage struct {
	ID      string    `json:"id"`
	Model   string    `json:"model"`
	Content ccContent `json:"content"`
	Usage   *ccUsage  `json:"usage"`
}

type ccUsage struct {
	Input       int64 `json:"input_tokens"`
	Output      int64 `json:"output_tokens"`
	CacheCreate int64 `json:"cache_creation_input_tokens"`
	CacheRead   int64 `json:"cache_read_input_tokens"`
}

// ccContent is a message's content: a string, or a list of blocks.
type ccContent struct {
	Text   string
	Blocks []ccBlock
}

func (c *ccContent) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var err error
		c.Text, err = jsonString(b)
		return err
	}
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &c.Blocks)
	}
	return nil
}

type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   ccText          `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ccText is a tool result's content (a string, or blocks whose text is joined) or a system
// line's content.
type ccText string

func (t *ccText) UnmarshalJSON(b []byte) error {
	text, err := partsText(b)
	*t = ccText(text)
	return err
}

// ccProgress is a progress line's data. Claude Code 2.1.x streams each message of a running
// subagent into the main file as {"type":"agent_progress","agentId","prompt","message":{type,
// uuid,timestamp,message}}; when the subagent has no file of its own (2.1.3x), these are the
// only record of its work.
type ccProgress struct {
	Type    string  `json:"type"`
	AgentID string  `json:"agentId"`
	Prompt  string  `json:"prompt"`
	Message *ccLine `json:"message"`
}

// ccToolResult is the toolUseResult of a user line, as far as the import reads it: the
// subagent a Task/Agent call ran, and the patch of an Edit/Write.
type ccToolResult struct {
	AgentID         string   `json:"agentId"`
	Status          string   `json:"status"`
	FilePath        string   `json:"filePath"`
	Kind            string   `json:"type"`
	StructuredPatch []ccHunk `json:"structuredPatch"`
	Content         ccText   `json:"content"`
}

var (
	keyAgentID = []byte(`"agentId"`)
	keyPatch   = []byte(`"structuredPatch"`)
)

// toolUseResult decodes raw when it is an object that names an agent or holds a patch.
func toolUseResult(raw []byte) (ccToolResult, bool) {
	var r ccToolResult
	if len(raw) == 0 || raw[0] != '{' || !bytes.Contains(raw, keyAgentID) && !bytes.Contains(raw, keyPatch) {
		return r, false
	}
	return r, json.Unmarshal(raw, &r) == nil
}

type ccHunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// claudeChildren finds a session's subagent transcripts: <session>/subagents/agent-*.jsonl
// (Claude Code 2.1.2 and later) and, from earlier versions, agent-*.jsonl beside the session
// whose lines name its session id.
func claudeChildren(path string) []string {
	dir, base := filepath.Split(path)
	stem := strings.TrimSuffix(base, ".jsonl")
	if strings.HasPrefix(stem, "agent-") {
		return nil
	}
	out, _ := filepath.Glob(filepath.Join(dir, stem, "subagents", "agent-*.jsonl"))
	old, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
	for _, p := range old {
		if firstSessionID(p) == stem {
			out = append(out, p)
		}
	}
	return out
}

// firstSessionID reads the sessionId of a Claude Code file's first lines.
func firstSessionID(path string) string {
	head, err := readHead(path, 64<<10)
	if err != nil {
		return ""
	}
	for _, l := range bytes.Split(head, []byte{'\n'}) {
		var v struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(l, &v) == nil && v.SessionID != "" {
			return v.SessionID
		}
	}
	return ""
}

// taskCall is a Task/Agent tool call: the subagent it starts is linked by its id.
type taskCall struct {
	by    *agent
	ts    time.Time
	input struct {
		Description  string `json:"description"`
		Prompt       string `json:"prompt"`
		SubagentType string `json:"subagent_type"`
		Name         string `json:"name"`
		Model        string `json:"model"`
		Mode         string `json:"mode"`
	}
}

// hashSet is a set of hashes that is filled, then mostly read: 8 bytes an entry while it is
// filled (a slice), sorted at the first look-up; what is added after that goes in a map.
type hashSet struct {
	list   []uint64
	sorted bool
	more   map[uint64]bool
}

func (h *hashSet) add(x uint64) {
	if !h.sorted {
		h.list = append(h.list, x)
		return
	}
	if h.more == nil {
		h.more = map[uint64]bool{}
	}
	h.more[x] = true
}

func (h *hashSet) has(x uint64) bool {
	if !h.sorted {
		slices.Sort(h.list)
		h.sorted = true
	}
	_, ok := slices.BinarySearch(h.list, x)
	return ok || h.more[x]
}

// ccCall is a tool call as later lines look it up.
type ccCall struct {
	name  string
	owner *agent
	off   int64
}

// intern is name as a string of its own, one per distinct name.
func (r *ccReader) intern(name string) string {
	if v, ok := r.names[name]; ok {
		return v
	}
	v := strings.Clone(name)
	r.names[v] = v
	return v
}

// ccReader carries what links a Claude Code session's files together.
type ccReader struct {
	s    *sess
	opts Options
	// calls holds, by the hash of its tool_use id, each tool call's name, the agent that made
	// it and its event in the spool (its input is read back from there when a refusal asks
	// for it). Hashes and interned names: a kept string would keep its whole line alive.
	calls  map[uint64]ccCall
	names  map[string]string    // tool names, interned
	tasks  map[string]*taskCall // Task/Agent tool_use id -> the call
	links  map[string]string    // subagent key -> the tool_use id that started it
	status map[string]string    // subagent key -> the status its call reported
	prompt map[string]string    // subagent key -> its first prompt (to link old sidechains)
	chain  map[uint64]string    // hash of the uuid of a sidechain line -> its subagent key
	// seen holds the uuids of the lines read so far and owner the agent that made each tool
	// call: a subagent file that starts with a copy of the main history (an aside question
	// forks the conversation) repeats them, and those lines are not the subagent's work.
	seen hashSet
	// progress holds the messages agent_progress lines carried, per subagent id, in order
	// (repeats by uuid dropped); those of a subagent without a file of its own are replayed
	// as its transcript once every file is read.
	progress map[string][]int64 // subagent id -> its progress lines, spooled raw
	progSeen map[uint64]bool
	progOrd  []string
	// alone is set when the file imported is a subagent's transcript without its session: its
	// lines are the main agent's, and the recording says whose subagent it was.
	alone bool
}

func readClaude(u Unit, opts Options) (*sess, error) {
	r := &ccReader{s: newSess(Claude, u.Path), opts: opts, calls: map[uint64]ccCall{}, names: map[string]string{}, tasks: map[string]*taskCall{},
		links: map[string]string{}, status: map[string]string{}, prompt: map[string]string{}, chain: map[uint64]string{},
		progress: map[string][]int64{}, progSeen: map[uint64]bool{}}
	r.s.provider = "anthropic"
	r.alone = strings.HasPrefix(filepath.Base(u.Path), "agent-")
	if err := r.file(u.Path, ""); err != nil {
		return nil, err
	}
	for _, c := range u.Children {
		key := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(c), "agent-"), ".jsonl")
		a := r.s.agent(key)
		if err := r.meta(a, strings.TrimSuffix(c, ".jsonl")+".meta.json"); err != nil {
			return nil, err
		}
		if err := r.file(c, key); err != nil {
			return nil, err
		}
	}
	if err := r.replayProgress(); err != nil {
		return nil, err
	}
	r.link()
	return r.s, nil
}

// meta reads agent-<id>.meta.json (its agent type and description), when there is one.
func (r *ccReader) meta(a *agent, path string) error {
	f, _, err := openRegular(path)
	if err != nil {
		return nil
	}
	b, err := readAll(f, nil)
	f.Close()
	if err != nil {
		return nil
	}
	var m struct {
		AgentType   string `json:"agentType"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return lineErr(path, lineAt(b, offsetOf(err)), "%s", jsonMsg(err))
	}
	if m.AgentType != "" {
		a.typ = m.AgentType
	}
	if m.Description != "" {
		a.name = m.Description
	}
	return nil
}

func offsetOf(err error) int64 {
	if se, ok := err.(*json.SyntaxError); ok {
		return se.Offset
	}
	return 0
}

// file reads one transcript: the main session (key "") or a subagent's.
func (r *ccReader) file(path, key string) error {
	// Read a block at a time (see readLines): the structs of a block (and the raw tool
	// results they hold) are garbage once mapped. The agent_progress messages kept are their
	// own allocations.
	return readLines(path, decodeCC, func(ln srcLine, l *ccLine, err error) error {
		r.s.lines++
		if err != nil {
			return r.s.badLine(path, ln, err, r.opts)
		}
		r.line(key, l, ln.b)
		return nil
	})
}

// badLine handles a line that does not decode: a torn last line is a warning, any other an
// error unless Lenient.
func (s *sess) badLine(path string, ln srcLine, err error, opts Options) error {
	msg := jsonMsg(err)
	if ln.last && !opts.Lenient {
		w := fmt.Sprintf("%s:%d: the last line is cut short (%s); skipped", path, ln.n, msg)
		s.warn = append(s.warn, w)
		s.sessionNote(time.Time{}, "torn last line", w)
		return nil
	}
	if !opts.Lenient {
		return lineErr(path, ln.n, "%s", msg)
	}
	s.skipped["malformed lines (skipped with --lenient)"]++
	s.sessionNote(time.Time{}, "malformed line", fmt.Sprintf("%s:%d: %s", path, ln.n, msg))
	return nil
}

// agentOf finds the agent a line belongs to. In the main file, sidechain lines (Claude Code
// before subagent files) are a subagent's: by their agentId, else by the chain of uuids
// from the first line of the sidechain.
func (r *ccReader) agentOf(key string, l *ccLine) *agent {
	if key != "" {
		return r.s.byKey[key]
	}
	if !l.IsSidechain || r.alone {
		return r.s.main()
	}
	k := l.AgentID
	if k == "" {
		k = r.chain[r.s.sp.hash(l.ParentUUID)]
		if k == "" {
			k = "sidechain-" + l.UUID
		}
	}
	if l.UUID != "" {
		k = strings.Clone(k)
		r.chain[r.s.sp.hash(l.UUID)] = k
	}
	return r.s.agent(k)
}

func (r *ccReader) line(key string, l *ccLine, raw []byte) {
	s := r.s
	if l.StreamSessionID != "" && key == "" {
		if !r.stream(l, raw) {
			return
		}
	}
	if key != "" && r.copied(l) {
		s.skipped["lines a subagent file copied from the history it was forked from"]++
		return
	}
	if l.UUID != "" {
		r.seen.add(r.s.sp.hash(l.UUID))
	}
	ts := parseTS(l.Timestamp)
	if key == "" && (!l.IsSidechain || r.alone) {
		if s.sourceID == "" && l.SessionID != "" {
			s.sourceID = l.SessionID
			if r.alone {
				// Not the session's id: the session's own recording has that one.
				s.sourceID = l.SessionID + "-agent-" + orDefault(l.AgentID, strings.TrimPrefix(strings.TrimSuffix(filepath.Base(s.path), ".jsonl"), "agent-"))
				s.sessionNote(ts, "parent missing", fmt.Sprintf("this is the transcript of subagent %s of Claude Code session %s, whose session file was not imported with it: its parent and the call that started it are unknown", l.AgentID, l.SessionID))
				s.warn = append(s.warn, fmt.Sprintf("%s: a subagent transcript imported without its session %s (its parent is unknown)", s.path, l.SessionID))
			}
		}
		if s.version == "" {
			s.version = l.Version
		}
		if s.cwd == "" {
			s.cwd = l.Cwd
		}
		if s.start.IsZero() {
			s.start = ts
		}
	}
	a := r.agentOf(key, l)
	if a.sessionID == "" && a != s.main() {
		a.sessionID = l.AgentID
	}
	if l.PermissionMode != "" {
		p := permMode(l.PermissionMode)
		if a.perm == "" {
			a.perm = p
			if a == s.main() && s.perm == "" {
				s.perm = p
			}
		} else if p != a.perm {
			a.note(ts, "permission mode", "the user switched to "+l.PermissionMode)
			a.perm = p
		}
	}
	switch l.Type {
	case "user":
		r.user(a, ts, l)
	case "assistant":
		r.assistant(a, ts, l)
	case "system":
		text := string(l.Content)
		if l.Subtype != "" {
			text = strings.TrimSpace(l.Subtype + ": " + text)
		}
		if l.Level == "error" {
			a.text(ts, session.TranscriptError, "[imported: system] "+text)
		} else {
			a.note(ts, "system", text)
		}
	case "summary":
		s.sessionNote(ts, "summary", l.Summary)
	case "custom-title", "ai-title":
		s.sessionNote(ts, "title", l.CustomTitle+l.AITitle)
	case "agent-name":
		s.sessionNote(ts, "agent name", l.AgentName)
	case "progress":
		if l.Data != nil && l.Data.AgentID != "" && l.ParentToolUseID != "" {
			if _, ok := r.links[l.Data.AgentID]; !ok {
				r.links[l.Data.AgentID] = l.ParentToolUseID
			}
		}
		if d := l.Data; d != nil && d.Type == "agent_progress" && d.AgentID != "" && d.Message != nil && key == "" {
			r.keepProgress(d, raw)
			return
		}
		s.skipped["progress lines (streamed updates of what the transcripts hold)"]++
	case "file-history-snapshot":
		s.skipped["file-history snapshots (Claude Code's file backups)"]++
	case "queue-operation":
		s.skipped["queue operations (input typed while the agent worked; it reappears as a user message)"]++
	case "last-prompt":
		s.skipped["last-prompt markers"]++
	case "attachment":
		what := "attachments (hook results, context files, reminders)"
		if l.Attachment != nil && l.Attachment.Type != "" {
			what = "attachments of type " + l.Attachment.Type
		}
		s.skipped[what]++
	case "pr-link", "permission-mode", "agent-setting", "bridge-session", "worktree-state":
		s.skipped[l.Type+" lines"]++
	default:
		s.unknownLine(a, ts, fmt.Sprintf("claude-code line type %q", l.Type), raw)
	}
}

func (r *ccReader) user(a *agent, ts time.Time, l *ccLine) {
	if l.Message == nil {
		return
	}
	c := l.Message.Content
	prompt := func(text string) {
		switch {
		case l.IsCompact:
			a.note(ts, "compact summary", text)
		case l.IsMeta:
			a.note(ts, "meta", text)
		default:
			if _, ok := r.prompt[a.key]; !ok && a != r.s.main() {
				r.prompt[a.key] = text
			}
			if a.task == "" && a == r.s.main() {
				a.task = clip(text, 200)
			}
			a.add(ts, session.UserNote{Text: text})
		}
	}
	if c.Text != "" {
		prompt(c.Text)
	}
	for _, b := range c.Blocks {
		switch b.Type {
		case "text":
			prompt(b.Text)
		case "tool_result":
			r.toolResult(a, ts, l, &b)
		case "image", "document":
			a.note(ts, b.Type, "the user attached a "+b.Type)
		default:
			r.s.unknown["claude-code user content block "+fmt.Sprintf("%q", b.Type)]++
			a.note(ts, "user content block "+b.Type, "")
		}
	}
}

// refused is the text Claude Code gives a tool call the user did not allow.
func refused(text string) bool {
	return strings.Contains(text, "doesn't want to proceed with this tool use") ||
		strings.Contains(text, "tool use was rejected") || strings.HasPrefix(text, "Permission to use ")
}

func (r *ccReader) toolResult(a *agent, ts time.Time, l *ccLine, b *ccBlock) {
	call, known := r.calls[r.s.sp.hash(b.ToolUseID)]
	tool := call.name
	text := string(b.Content)
	if b.IsError && refused(text) {
		var args map[string]any
		if known {
			if d, err := r.s.sp.get(call.off); err == nil {
				args = d.(session.TranscriptEvent).Args
			}
		}
		r.s.ask(a, ts, b.ToolUseID, tool, args, "imported: Claude Code asked the user")
		r.s.decide(a, ts, b.ToolUseID, false, clip(text, 512))
	}
	if !l.turDone {
		l.tur, l.turOK = toolUseResult(l.ToolUseResult)
		l.turDone = true
	}
	if tr, ok := l.tur, l.turOK; ok {
		if tr.AgentID != "" {
			if _, ok := r.links[tr.AgentID]; !ok {
				r.links[tr.AgentID] = b.ToolUseID
			}
			r.status[tr.AgentID] = tr.Status
		}
		if tr.FilePath != "" && (len(tr.StructuredPatch) > 0 || tr.Kind == "create") && !b.IsError {
			e := r.edit(&tr)
			a.addEdits(e)
			if e.diff != "" {
				text += "\n" + e.diff
			}
		}
	}
	a.result(ts, b.ToolUseID, tool, text, b.IsError)
}

// edit turns an Edit/Write result's structured patch into a unified diff.
func (r *ccReader) edit(tr *ccToolResult) edit {
	path := tr.FilePath
	if cwd := r.s.cwd; cwd != "" {
		if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
			path = rel
		}
	}
	e := edit{path: path, kind: session.ChangeModified}
	var b strings.Builder
	from := "a/" + path
	if tr.Kind == "create" {
		e.kind, from = session.ChangeAdded, "/dev/null"
	}
	fmt.Fprintf(&b, "--- %s\n+++ b/%s\n", from, path)
	if len(tr.StructuredPatch) == 0 && tr.Kind == "create" {
		body := string(tr.Content)
		n := strings.Count(body, "\n")
		if body != "" && !strings.HasSuffix(body, "\n") {
			n++
		}
		fmt.Fprintf(&b, "@@ -0,0 +1,%d @@\n", n)
		for l := range strings.Lines(body) {
			b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		e.added = n
	}
	for _, h := range tr.StructuredPatch {
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			b.WriteString(l)
			b.WriteByte('\n')
			switch {
			case strings.HasPrefix(l, "+"):
				e.added++
			case strings.HasPrefix(l, "-"):
				e.removed++
			}
		}
	}
	e.diff = b.String()
	return e
}

func (r *ccReader) assistant(a *agent, ts time.Time, l *ccLine) {
	m := l.Message
	if m == nil {
		return
	}
	if a.model == "" && m.Model != "" && m.Model != "<synthetic>" {
		a.model = m.Model
		a.provider = "anthropic"
	}
	if u := m.Usage; u != nil {
		a.useTokens(m.ID, session.Tokens{Input: u.Input + u.CacheCreate + u.CacheRead, Output: u.Output})
	}
	if m.Content.Text != "" {
		if l.IsAPIError {
			a.text(ts, session.TranscriptError, m.Content.Text)
		} else {
			a.text(ts, session.TranscriptMessage, m.Content.Text)
		}
	}
	for i := range m.Content.Blocks {
		b := &m.Content.Blocks[i]
		switch b.Type {
		case "text":
			if b.Text == "" {
				r.s.skipped["empty text blocks"]++
				continue
			}
			if l.IsAPIError {
				a.text(ts, session.TranscriptError, b.Text)
			} else {
				a.text(ts, session.TranscriptMessage, b.Text)
			}
		case "thinking":
			if b.Thinking == "" {
				// Claude Code keeps only the signature of thinking it does not show.
				r.s.skipped["empty thinking blocks (only their signature kept by Claude Code)"]++
				continue
			}
			a.text(ts, session.TranscriptThinking, b.Thinking)
		case "redacted_thinking":
			r.s.skipped["redacted thinking blocks (encrypted by the model's provider)"]++
		case "tool_use", "server_tool_use":
			off := a.callRaw(ts, b.ID, b.Name, b.Input)
			r.calls[r.s.sp.hash(b.ID)] = ccCall{name: r.intern(b.Name), owner: a, off: off}
			if b.Name == "Task" || b.Name == "Agent" {
				t := &taskCall{by: a, ts: ts}
				_ = json.Unmarshal(b.Input, &t.input)
				r.tasks[b.ID] = t
			}
		case "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result", "advisor_tool_result":
			a.result(ts, b.ToolUseID, r.calls[r.s.sp.hash(b.ToolUseID)].name, string(b.Content), false)
		default:
			r.s.unknown["claude-code assistant content block "+fmt.Sprintf("%q", b.Type)]++
			a.note(ts, "assistant content block "+b.Type, "")
		}
	}
}

// link puts each subagent under the agent whose Task/Agent call started it, and takes its
// type, task and outcome from that call.
func (r *ccReader) link() {
	byPrompt := map[string]string{}
	for id, t := range r.tasks {
		if t.input.Prompt != "" {
			byPrompt[t.input.Prompt] = id
		}
	}
	for _, a := range r.s.agents[1:] {
		id, ok := r.links[a.key]
		if !ok {
			id, ok = byPrompt[r.prompt[a.key]]
		}
		t := r.tasks[id]
		if !ok || t == nil {
			continue
		}
		a.parentKey, a.spawnAt = t.by.key, t.ts
		if a.typ == "subagent" {
			// Claude Code's Task tool runs general-purpose when no type is named.
			a.typ = orDefault(t.input.SubagentType, "general-purpose")
		}
		if a.name == "" {
			a.name = t.input.Description
		}
		a.task = t.input.Prompt
		if t.input.Mode != "" {
			a.perm = permMode(t.input.Mode)
		}
		switch st := r.status[a.key]; st {
		case "", "completed", "success":
		case "failed", "error":
			a.outcome, a.stopNote = session.OutcomeFailure, "the Task call reported "+st
		case "cancelled", "killed", "interrupted":
			a.outcome, a.stopNote = session.OutcomeCancelled, "the Task call reported "+st
		default:
			a.stopNote = "the Task call reported status " + st
		}
	}
	for _, a := range r.s.agents[1:] {
		if a.task == "" {
			// Not started by a call the session holds (an aside question): its own first prompt.
			a.task = clip(r.prompt[a.key], 200)
		}
		if a.name == "" {
			a.name = a.key
		}
	}
}

// stream reads a line of claude -p stream-json into the transcript form: the session id and
// tool result under their transcript names, a subagent's message (parent_tool_use_id set) as
// a sidechain line of the subagent keyed by that call. It handles the init and result lines
// itself and reports whether the line goes on as a transcript line.
func (r *ccReader) stream(l *ccLine, raw []byte) bool {
	s := r.s
	l.SessionID = l.StreamSessionID
	if len(l.ToolUseResult) == 0 {
		l.ToolUseResult, l.turDone = l.StreamResult, false
	}
	if l.ParentToolUse != nil && *l.ParentToolUse != "" {
		l.IsSidechain, l.AgentID = true, *l.ParentToolUse
		if _, ok := r.links[l.AgentID]; !ok {
			r.links[l.AgentID] = l.AgentID
		}
	}
	switch {
	case l.Type == "system" && l.Subtype == "init":
		if s.sourceID == "" {
			s.sourceID, s.cwd = l.StreamSessionID, l.Cwd
			s.version = orDefault(l.CodeVersion, "-p stream-json")
			if p := permMode(l.PermissionMode); p != "" {
				s.perm, s.main().perm = p, p
			}
			if l.Model != "" {
				s.main().model, s.main().provider = l.Model, "anthropic"
			}
		}
		s.skipped["init lines (their session, cwd and model are the recording's)"]++
		return false
	case l.Type == "result":
		if s.sourceID == "" {
			s.sourceID = l.StreamSessionID
		}
		m := s.main()
		if l.IsError || l.Subtype != "" && l.Subtype != "success" {
			m.outcome, m.stopNote = session.OutcomeFailure, "claude -p reported "+orDefault(l.Subtype, "an error")
		}
		m.note(time.Time{}, "result", fmt.Sprintf("%s after %d turns: %s", orDefault(l.Subtype, "done"), l.NumTurns, l.Result))
		return false
	case l.Type == "stream_event":
		s.skipped["stream events (partial messages; the whole message follows)"]++
		return false
	}
	if s.version == "" {
		s.version = "-p stream-json"
	}
	return true
}

// copied reports whether a line of a subagent's file repeats the history it was forked from:
// a uuid already read, or a model message whose tool call another agent made.
func (r *ccReader) copied(l *ccLine) bool {
	if l.UUID != "" && r.seen.has(r.s.sp.hash(l.UUID)) {
		return true
	}
	if l.Type == "assistant" && l.Message != nil {
		for _, b := range l.Message.Content.Blocks {
			if b.Type == "tool_use" && b.ID != "" {
				if o := r.calls[r.s.sp.hash(b.ID)].owner; o != nil && o.key != l.AgentID {
					return true
				}
			}
		}
	}
	return false
}

// keepProgress keeps an agent_progress message until it is known whether its subagent has a
// file of its own.
func (r *ccReader) keepProgress(d *ccProgress, raw []byte) {
	m := d.Message
	if m.UUID != "" {
		if r.progSeen[r.s.sp.hash(m.UUID)] {
			r.s.skipped["agent_progress lines that repeat a message"]++
			return
		}
		r.progSeen[r.s.sp.hash(m.UUID)] = true
	}
	if _, ok := r.progress[d.AgentID]; !ok {
		r.progOrd = append(r.progOrd, strings.Clone(d.AgentID))
	}
	// The line itself waits in the spool, decoded again if it is replayed.
	r.progress[d.AgentID] = append(r.progress[d.AgentID], r.s.sp.putBlob(raw))
}

// replayProgress builds the subagents that only agent_progress lines record; for one with a
// file of its own, the lines repeated that file and are counted.
func (r *ccReader) replayProgress() error {
	for _, id := range r.progOrd {
		offs := r.progress[id]
		if r.s.byKey[id] != nil {
			r.s.skipped["progress lines (streamed updates of what the transcripts hold)"] += len(offs)
			continue
		}
		a := r.s.agent(id)
		a.sessionID = id
		for _, off := range offs {
			raw, err := r.s.sp.blob(off)
			if err != nil {
				return err
			}
			var l ccLine
			if err := json.Unmarshal(raw, &l); err != nil || l.Data == nil || l.Data.Message == nil {
				return fmt.Errorf("%s: import spool: a progress line does not decode again", r.s.path)
			}
			m := l.Data.Message
			m.AgentID, m.IsSidechain = id, true
			r.line(id, m, nil)
		}
	}
	return nil
}
