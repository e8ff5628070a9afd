package imports

import (
	"bufio"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// Codex: ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl. Each line is
// {"timestamp","type","payload"} (RolloutLine); rollouts written before that wrapper (2025)
// have a first line {"id","timestamp","instructions",...} and then bare response items and
// {"record_type":"state"} lines. See doc.go for the mapping.

type cxLine struct {
	Timestamp  string  `json:"timestamp"`
	Type       string  `json:"type"`
	Payload    *cxItem `json:"payload"`
	RecordType string  `json:"record_type"`
	ID         string  `json:"id"`
	// The first line of an unwrapped rollout: its session meta.
	Instructions *string `json:"instructions"`
}

// cxItem is every payload shape the import reads, in one struct: fields are optional and
// those that differ in JSON type between payloads are read leniently.
type cxItem struct {
	Type string `json:"type"`
	// session_meta
	ID            string          `json:"id"`
	Cwd           string          `json:"cwd"`
	CLIVersion    string          `json:"cli_version"`
	Originator    string          `json:"originator"`
	ModelProvider string          `json:"model_provider"`
	Source        json.RawMessage `json:"source"`
	// turn_context
	Model          string          `json:"model"`
	ApprovalPolicy string          `json:"approval_policy"`
	SandboxPolicy  json.RawMessage `json:"sandbox_policy"`
	// response items
	Role      string          `json:"role"`
	Content   cxParts         `json:"content"`
	Summary   cxParts         `json:"summary"`
	Encrypted string          `json:"encrypted_content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	CallID    string          `json:"call_id"`
	Output    cxOutput        `json:"output"`
	Input     string          `json:"input"`
	Status    string          `json:"status"`
	Action    json.RawMessage `json:"action"`
	// event_msg
	Message     string          `json:"message"`
	Text        string          `json:"text"`
	Info        *cxTokenInfo    `json:"info"`
	ExitCode    *int            `json:"exit_code"`
	Success     *bool           `json:"success"`
	Changes     json.RawMessage `json:"changes"`
	Command     json.RawMessage `json:"command"`
	Reason      cxParts         `json:"reason"`
	NewThreadID string          `json:"new_thread_id"`
	Nickname    string          `json:"new_agent_nickname"`
	NewRole     string          `json:"new_agent_role"`
	Prompt      string          `json:"prompt"`
}

type cxTokenInfo struct {
	Total struct {
		Input  int64 `json:"input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"total_token_usage"`
}

// cxParts is a list of {type, text} parts (message content, reasoning summary) or a string;
// anything else reads as empty.
type cxParts string

func (p *cxParts) UnmarshalJSON(b []byte) error {
	text, err := partsText(b)
	*p = cxParts(text)
	return err
}

// cxOutput is a tool call's output: a string (which older Codex made a JSON object with
// output and metadata.exit_code), or {content, success}, or a list of content items.
type cxOutput struct {
	Text    string
	Failed  bool
	present bool
}

func (o *cxOutput) UnmarshalJSON(b []byte) error {
	o.present = true
	switch {
	case len(b) > 0 && b[0] == '"':
		if err := json.Unmarshal(b, &o.Text); err != nil {
			return err
		}
		if strings.HasPrefix(o.Text, "{") {
			var v struct {
				Output   *string `json:"output"`
				Metadata struct {
					ExitCode int `json:"exit_code"`
				} `json:"metadata"`
			}
			if json.Unmarshal([]byte(o.Text), &v) == nil && v.Output != nil {
				o.Text, o.Failed = *v.Output, v.Metadata.ExitCode != 0
			}
		}
	case len(b) > 0 && b[0] == '{':
		var v struct {
			Content cxParts `json:"content"`
			Success *bool   `json:"success"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		o.Text, o.Failed = string(v.Content), v.Success != nil && !*v.Success
	case len(b) > 0 && b[0] == '[':
		var p cxParts
		if err := p.UnmarshalJSON(b); err != nil {
			return err
		}
		o.Text = string(p)
	}
	return nil
}

// codexMeta is what the first line of a rollout says of its thread.
type codexMeta struct {
	id, parent, nickname, role string
}

func readCodexMeta(path string) (codexMeta, bool) {
	f, _, err := openRegular(path)
	if err != nil {
		return codexMeta{}, false
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for len(line) < 4<<20 {
		part, isPrefix, err := br.ReadLine()
		line = append(line, part...)
		if err != nil || !isPrefix {
			break
		}
	}
	var l cxLine
	if json.Unmarshal(line, &l) != nil {
		return codexMeta{}, false
	}
	if l.Type == "session_meta" && l.Payload != nil {
		return metaOf(l.Payload), true
	}
	if l.ID != "" {
		return codexMeta{id: l.ID}, true
	}
	return codexMeta{}, false
}

func metaOf(p *cxItem) codexMeta {
	m := codexMeta{id: p.ID}
	var src struct {
		Subagent struct {
			ThreadSpawn *struct {
				Parent   string `json:"parent_thread_id"`
				Nickname string `json:"agent_nickname"`
				Role     string `json:"agent_role"`
				Type     string `json:"agent_type"`
			} `json:"thread_spawn"`
		} `json:"subagent"`
	}
	if len(p.Source) > 0 && p.Source[0] == '{' && json.Unmarshal(p.Source, &src) == nil && src.Subagent.ThreadSpawn != nil {
		ts := src.Subagent.ThreadSpawn
		m.parent, m.nickname, m.role = ts.Parent, ts.Nickname, ts.Role
		if m.role == "" {
			m.role = ts.Type
		}
	}
	return m
}

// codexChildren finds the rollouts of the threads a session spawned, at any depth: the
// rollouts in its folder whose session_meta names a parent thread of the tree.
func codexChildren(path string) []string {
	main, ok := readCodexMeta(path)
	if !ok || main.id == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "rollout-*.jsonl"))
	parent := map[string]string{}
	file := map[string]string{}
	for _, f := range files {
		if f == path {
			continue
		}
		if m, ok := readCodexMeta(f); ok && m.parent != "" {
			parent[m.id], file[m.id] = m.parent, f
		}
	}
	in := map[string]bool{main.id: true}
	var out []string
	for changed := true; changed; {
		changed = false
		for id, p := range parent {
			if in[p] && !in[id] {
				in[id], changed = true, true
				out = append(out, file[id])
			}
		}
	}
	return out
}

type cxReader struct {
	s      *sess
	opts   Options
	mainID string
	// calls is every tool call by the hash of its call_id (see spool.hash): its tool name
	// (interned) and when it was made; a kept id string would cost its bytes and a map entry
	// per call, which a 1 GB rollout's half a million calls make hundreds of MB.
	calls   map[uint64]cxCall
	pending map[string][]edit // call_id of an apply_patch -> its edits, until it is known to have applied
	settled map[uint64]struct{}
	sandbox map[*agent]string
	names   map[string]string // tool names, interned
}

func readCodex(u Unit, opts Options) (*sess, error) {
	r := &cxReader{s: newSess(Codex, u.Path), opts: opts, calls: map[uint64]cxCall{},
		pending: map[string][]edit{}, settled: map[uint64]struct{}{}, sandbox: map[*agent]string{}, names: map[string]string{}}
	r.s.provider = "openai"
	if err := r.file(u.Path, true); err != nil {
		return nil, err
	}
	for _, c := range u.Children {
		if err := r.file(c, false); err != nil {
			return nil, err
		}
	}
	for _, a := range r.s.agents[1:] {
		if a.parentKey == r.mainID {
			a.parentKey = ""
		}
		if a.name == "" {
			a.name = a.key
		}
	}
	return r.s, nil
}

func (r *cxReader) file(path string, isMain bool) error {
	fork := 0
	if m, ok := readCodexMeta(path); !ok || m.parent != "" {
		var err error
		if fork, err = forkPoint(path); err != nil {
			return err
		}
	}
	a := r.s.main()
	i := -1
	return readLines(path, decodeCx, func(ln srcLine, l *cxLine, lerr error) error {
		i++
		r.s.lines++
		if i < fork && lerr == nil && l.Type != "session_meta" {
			// The history a forked thread copied from its parent: the parent's own rollout
			// holds it when imported with it; alone, it is kept as notes, not as the thread's
			// work (its first prompt is the parent's, not its task).
			if !isMain {
				r.s.skipped["lines a spawned thread's rollout copied from its parent"]++
				return nil
			}
			if p := l.Payload; l.Type == "response_item" && p != nil && p.Type == "message" && p.Content != "" {
				a.note(parseTS(l.Timestamp), "history copied from the parent thread", p.Role+": "+string(p.Content))
			} else {
				r.s.skipped["lines of the history copied from the parent thread"]++
			}
			return nil
		}
		if lerr != nil {
			if err := r.s.badLine(path, ln, lerr, r.opts); err != nil {
				return err
			}
			return nil
		}
		ts := parseTS(l.Timestamp)
		p := l.Payload
		if p == nil && l.Type == "" && l.RecordType == "" && l.ID != "" && i == 0 {
			// Unwrapped rollout: its first line is the session meta.
			p, l.Type = &cxItem{ID: l.ID}, "session_meta"
		} else if p == nil && l.RecordType != "" {
			r.s.skipped["rollout state records"]++
			return nil
		} else if p == nil && l.Type != "" {
			// Unwrapped rollout: a bare response item.
			var it cxItem
			if err := json.Unmarshal(ln.b, &it); err != nil {
				if err := r.s.badLine(path, ln, err, r.opts); err != nil {
					return err
				}
				return nil
			}
			p, l.Type = &it, "response_item"
		}
		if p == nil {
			r.s.unknownLine(a, ts, fmt.Sprintf("codex line of type %q", l.Type), ln.b)
			return nil
		}
		if l.Type == "session_meta" {
			a = r.meta(a, p, ts, isMain)
			return nil
		}
		r.item(a, ts, l.Type, p, ln.b)
		return nil
	})
}

func decodeCx(b []byte, l *cxLine) error { return json.Unmarshal(b, l) }

// forkPoint is the index of the first line of a spawned thread's own work when its rollout
// starts with a copy of its parent's history (Codex forks the context into the thread): the
// copy ends with the parent's spawn_agent call, and the thread's own first prompt is that
// call's message. 0 when the rollout is not a forked thread's.
func forkPoint(path string) (int, error) {
	want := map[string]bool{}
	fork, i, run := 0, -1, 0 // run: the turn_context lines just before line i
	errFound := errors.New("found")
	err := readLines(path, decodeCx, func(_ srcLine, l *cxLine, lerr error) error {
		i++
		if i == 0 {
			if lerr != nil || l.Type != "session_meta" || l.Payload == nil || metaOf(l.Payload).parent == "" {
				return errFound
			}
			return nil
		}
		p := l.Payload
		tc := l.Type == "turn_context"
		defer func() {
			if tc {
				run++
			} else {
				run = 0
			}
		}()
		if lerr != nil || p == nil || l.Type != "response_item" {
			return nil
		}
		switch {
		case p.Type == "function_call" && p.Name == "spawn_agent":
			var args struct {
				Message string `json:"message"`
				Prompt  string `json:"prompt"`
			}
			if json.Unmarshal([]byte(p.Arguments), &args) == nil && args.Message+args.Prompt != "" {
				want[args.Message+args.Prompt] = true
			}
		case p.Type == "message" && p.Role == "user" && len(want) > 0 && want[string(p.Content)]:
			// Its turn context, when written just before the prompt, is the thread's too.
			fork = i - run
			return errFound
		}
		return nil
	})
	if err != nil && err != errFound {
		return 0, err
	}
	return fork, nil
}

// meta starts a file: the main thread, or a spawned thread's agent.
func (r *cxReader) meta(cur *agent, p *cxItem, ts time.Time, isMain bool) *agent {
	m := metaOf(p)
	s := r.s
	if isMain {
		if r.mainID == "" {
			r.mainID, s.sourceID, s.version, s.cwd, s.start = m.id, m.id, p.CLIVersion, p.Cwd, ts
			if p.ModelProvider != "" {
				s.provider = p.ModelProvider
			}
			if m.parent != "" {
				s.sessionNote(ts, "parent thread", "this thread was spawned by thread "+m.parent+", whose rollout was not imported with it")
			}
			s.main().sessionID = m.id
		}
		return s.main()
	}
	a := s.agent(m.id)
	a.sessionID, a.parentKey = m.id, m.parent
	if m.nickname != "" {
		a.name = m.nickname
	}
	if m.role != "" {
		a.typ = m.role
	} else if a.typ == "subagent" {
		a.typ = "codex"
	}
	return a
}

// sandboxMode reads the sandbox policy's mode: "read-only", "workspace-write" or
// "danger-full-access", as a string or as {"type"|"mode": …}.
func sandboxMode(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var v struct {
		Type string `json:"type"`
		Mode string `json:"mode"`
	}
	if json.Unmarshal(raw, &v) == nil {
		return v.Type + v.Mode
	}
	return ""
}

func (r *cxReader) item(a *agent, ts time.Time, typ string, p *cxItem, raw []byte) {
	s := r.s
	switch typ {
	case "turn_context":
		if a.model == "" && p.Model != "" {
			a.model, a.provider = p.Model, s.provider
		} else if p.Model != "" && p.Model != a.model {
			a.note(ts, "model", "the turn runs on "+p.Model)
		}
		sb := sandboxMode(p.SandboxPolicy)
		if prev, ok := r.sandbox[a]; !ok {
			r.sandbox[a] = sb
			a.perm = permMode(sb)
			if a == s.main() {
				s.perm = a.perm
			}
		} else if prev != sb {
			r.sandbox[a] = sb
			a.note(ts, "permissions", fmt.Sprintf("sandbox %s, approval policy %s", sb, p.ApprovalPolicy))
		}
		s.skipped["turn contexts (their model and sandbox are on the subagent)"]++
	case "compacted":
		a.note(ts, "context compacted", p.Message)
	case "response_item":
		r.response(a, ts, p, raw)
	case "event_msg":
		r.event(a, ts, p, raw)
	default:
		s.unknownLine(a, ts, fmt.Sprintf("codex line of type %q", typ), raw)
	}
}

// injected reports whether a user message is context Codex itself adds to each session.
func injected(text string) bool {
	for _, p := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions instructions>", "<user_shell_command>"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

func (r *cxReader) response(a *agent, ts time.Time, p *cxItem, raw []byte) {
	s := r.s
	switch p.Type {
	case "message":
		text := string(p.Content)
		switch p.Role {
		case "user":
			if injected(text) {
				a.note(ts, "context Codex added", text)
			} else {
				a.add(ts, session.UserNote{Text: text})
				if a.task == "" && a == s.main() {
					a.task = clip(text, 200)
				}
			}
		case "assistant":
			a.text(ts, session.TranscriptMessage, text)
		default:
			a.note(ts, p.Role+" message", text)
		}
	case "reasoning":
		t := string(p.Summary)
		if c := string(p.Content); c != "" {
			if t != "" {
				t += "\n"
			}
			t += c
		}
		if t == "" {
			s.skipped["reasoning items with only encrypted content"]++
		}
		a.text(ts, session.TranscriptThinking, t)
	case "function_call":
		if p.Name != "apply_patch" && p.Name != "shell" && p.Name != "container.exec" {
			// The arguments are decoded only when the event is written (see spool).
			r.note(p.CallID, p.Name, ts)
			a.callRaw(ts, p.CallID, p.Name, []byte(p.Arguments))
			return
		}
		args := rawArgs([]byte(p.Arguments))
		r.call(a, ts, p.CallID, p.Name, args)
		if p.Name == "apply_patch" {
			if in, ok := args["input"].(string); ok {
				r.pending[p.CallID] = patchEdits(in)
			}
		}
		if p.Name == "shell" || p.Name == "container.exec" {
			if cmd, ok := args["command"].([]any); ok && len(cmd) >= 2 && cmd[0] == "apply_patch" {
				if in, ok := cmd[1].(string); ok {
					r.pending[p.CallID] = patchEdits(in)
				}
			}
		}
	case "custom_tool_call":
		r.call(a, ts, p.CallID, p.Name, map[string]any{"input": p.Input})
		if p.Name == "apply_patch" {
			r.pending[p.CallID] = patchEdits(p.Input)
		}
	case "local_shell_call":
		r.call(a, ts, p.CallID, "local_shell", rawArgs(p.Action))
	case "web_search_call":
		r.call(a, ts, p.CallID, "web_search", rawArgs(p.Action))
	case "function_call_output", "custom_tool_call_output":
		if strings.Contains(p.Output.Text, "rejected by user") {
			s.decide(a, ts, p.CallID, false, clip(p.Output.Text, 512))
		}
		a.result(ts, p.CallID, r.calls[r.s.sp.hash(p.CallID)].name, p.Output.Text, p.Output.Failed)
		r.applied(a, p.CallID, !p.Output.Failed)
	default:
		s.unknownLine(a, ts, fmt.Sprintf("codex response item %q", p.Type), raw)
	}
}

func (r *cxReader) call(a *agent, ts time.Time, id, name string, args map[string]any) {
	r.note(id, name, ts)
	a.call(ts, id, name, args)
}

// cxCall is a tool call as later lines look it up.
type cxCall struct {
	name string
	at   time.Time
}

// note keeps a call's tool and time by the hash of its id: the name interned, since a kept
// string would keep its whole line alive, and the names are few.
func (r *cxReader) note(id, name string, ts time.Time) {
	n, ok := r.names[name]
	if !ok {
		n = strings.Clone(name)
		r.names[n] = n
	}
	r.calls[r.s.sp.hash(id)] = cxCall{name: n, at: ts}
}

// applied settles an apply_patch call's edits once: kept when it applied, dropped when not.
func (r *cxReader) applied(a *agent, call string, ok bool) {
	h := r.s.sp.hash(call)
	if _, done := r.settled[h]; done {
		return
	}
	if e, has := r.pending[call]; has {
		r.settled[h] = struct{}{}
		if ok {
			a.addEdits(e...)
		}
		delete(r.pending, call)
	}
}

func (r *cxReader) event(a *agent, ts time.Time, p *cxItem, raw []byte) {
	s := r.s
	switch p.Type {
	case "token_count":
		if p.Info != nil {
			a.tokens = session.Tokens{Input: p.Info.Total.Input, Output: p.Info.Total.Output}
		}
		s.skipped["token counts (the last total is the subagent's tokens)"]++
	case "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content", "agent_reasoning_section_break":
		s.skipped["event messages that repeat a response item"]++
	case "exec_command_begin", "exec_command_end", "patch_apply_begin", "mcp_tool_call_begin", "mcp_tool_call_end",
		"web_search_begin", "web_search_end", "view_image_tool_call", "exec_command_output_delta":
		s.decide(a, ts, p.CallID, true, "")
		s.skipped["tool events that repeat a tool call or its output"]++
	case "patch_apply_end":
		s.decide(a, ts, p.CallID, true, "")
		ok := p.Success == nil || *p.Success
		_, settled := r.settled[r.s.sp.hash(p.CallID)]
		if _, has := r.pending[p.CallID]; !has && ok && !settled {
			r.pending[p.CallID] = changeEdits(p.Changes)
		}
		r.applied(a, p.CallID, ok)
		s.skipped["tool events that repeat a tool call or its output"]++
	case "exec_approval_request":
		var cmd any
		_ = json.Unmarshal(p.Command, &cmd)
		s.ask(a, ts, p.CallID, "shell", map[string]any{"command": cmd}, "imported: "+orDefault(string(p.Reason), "Codex asked for approval"))
	case "apply_patch_approval_request":
		s.ask(a, ts, p.CallID, "apply_patch", nil, "imported: "+orDefault(string(p.Reason), "Codex asked for approval"))
	case "task_started", "task_complete", "turn_started", "turn_complete", "item_started", "item_completed", "plan_update":
		s.skipped["turn and item markers"]++
	case "turn_aborted":
		a.note(ts, "turn aborted", string(p.Reason))
	case "error", "stream_error":
		a.text(ts, session.TranscriptError, p.Message)
	case "warning", "background_event", "context_compacted", "thread_rolled_back", "entered_review_mode", "exited_review_mode", "undo_completed":
		a.note(ts, p.Type, orDefault(p.Message, clip(string(raw), 1024)))
	case "collab_agent_spawn_end":
		if p.NewThreadID != "" {
			c := s.agent(p.NewThreadID)
			c.parentKey, c.sessionID = a.key, p.NewThreadID
			if a == s.main() {
				c.parentKey = r.mainID
			}
			c.spawnAt = ts
			if c0, ok := r.calls[r.s.sp.hash(p.CallID)]; ok {
				c.spawnAt = c0.at
			}
			if p.Nickname != "" {
				c.name = p.Nickname
			}
			if p.NewRole != "" {
				c.typ = p.NewRole
			} else if c.typ == "subagent" {
				c.typ = "codex"
			}
			c.task = p.Prompt
		}
		s.skipped["collab spawn events (the spawned thread is a subagent)"]++
	case "collab_agent_spawn_begin":
		s.skipped["collab spawn events (the spawned thread is a subagent)"]++
	default:
		if strings.HasPrefix(p.Type, "collab_") {
			a.note(ts, p.Type, clip(string(raw), 1024))
			return
		}
		s.unknownLine(a, ts, fmt.Sprintf("codex event %q", p.Type), raw)
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// patchEdits reads an apply_patch patch ("*** Begin Patch" … "*** End Patch") into edits, one
// per file, each with a unified diff of its hunks (apply_patch hunks carry no line numbers,
// so neither do these).
func patchEdits(patch string) []edit {
	var out []edit
	var cur *edit
	var b strings.Builder
	hunk := false // the current file has a hunk header
	flush := func() {
		if cur != nil {
			cur.diff = b.String()
			out = append(out, *cur)
		}
		cur = nil
		b.Reset()
		hunk = false
	}
	for l := range strings.Lines(patch) {
		l = strings.TrimRight(l, "\r\n")
		switch {
		case strings.HasPrefix(l, "*** Add File: "):
			flush()
			p := strings.TrimPrefix(l, "*** Add File: ")
			cur = &edit{path: p, kind: session.ChangeAdded}
			fmt.Fprintf(&b, "--- /dev/null\n+++ b/%s\n", p)
		case strings.HasPrefix(l, "*** Delete File: "):
			flush()
			p := strings.TrimPrefix(l, "*** Delete File: ")
			cur = &edit{path: p, kind: session.ChangeDeleted}
			fmt.Fprintf(&b, "--- a/%s\n+++ /dev/null\n", p)
		case strings.HasPrefix(l, "*** Update File: "):
			flush()
			p := strings.TrimPrefix(l, "*** Update File: ")
			cur = &edit{path: p, kind: session.ChangeModified}
			fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", p, p)
		case strings.HasPrefix(l, "*** Move to: ") && cur != nil:
			cur.oldPath, cur.path, cur.kind = cur.path, strings.TrimPrefix(l, "*** Move to: "), session.ChangeRenamed
		case strings.HasPrefix(l, "*** "):
			// Begin Patch, End Patch, End of File
		case cur == nil:
		case strings.HasPrefix(l, "@@"):
			b.WriteString(l + "\n")
			hunk = true
		default:
			if !hunk {
				b.WriteString("@@ @@\n")
				hunk = true
			}
			b.WriteString(l + "\n")
			switch {
			case strings.HasPrefix(l, "+"):
				cur.added++
			case strings.HasPrefix(l, "-"):
				cur.removed++
			}
		}
	}
	flush()
	return out
}

// changeEdits reads the changes of a patch_apply event: {path: {"type": "add"|"delete"|
// "update", content | unified_diff, move_path}} (or the externally tagged {path: {"add": …}}).
func changeEdits(raw json.RawMessage) []edit {
	type change struct {
		Type     string `json:"type"`
		Content  string `json:"content"`
		Diff     string `json:"unified_diff"`
		MovePath string `json:"move_path"`
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []edit
	for _, path := range sortedKeys(m) {
		var c change
		_ = json.Unmarshal(m[path], &c)
		if c.Type == "" {
			var tagged map[string]change
			if json.Unmarshal(m[path], &tagged) == nil {
				for k, v := range tagged {
					c, c.Type = v, k
				}
			}
		}
		e := edit{path: path}
		switch c.Type {
		case "add":
			e.kind = session.ChangeAdded
			e.diff = fmt.Sprintf("--- /dev/null\n+++ b/%s\n@@ @@\n", path)
			for l := range strings.Lines(c.Content) {
				e.diff += "+" + strings.TrimSuffix(l, "\n") + "\n"
				e.added++
			}
		case "delete":
			e.kind = session.ChangeDeleted
			e.removed = strings.Count(c.Content, "\n")
		default:
			e.kind = session.ChangeModified
			if c.MovePath != "" {
				e.oldPath, e.path, e.kind = path, c.MovePath, session.ChangeRenamed
			}
			e.diff = fmt.Sprintf("--- a/%s\n+++ b/%s\n", path, e.path) + c.Diff
			e.added, e.removed = diffStat(c.Diff)
		}
		out = append(out, e)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
