package imports

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// Headless outputs: what `codex exec --json`, `claude -p --output-format stream-json` and
// `gemini -p --output-format stream-json` print, one JSON event a line. They carry no times
// (Gemini's do): the recording takes the file's modification time. See doc.go.

// streamKind tells a headless output from the tool's session file by its first lines.
type streamKind int

const (
	notStream streamKind = iota
	codexExec
	claudeStream
	geminiStream
)

type streamProbe struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	ThreadID  string          `json:"thread_id"`
	Item      json.RawMessage `json:"item"`
	Usage     json.RawMessage `json:"usage"`
	Role      string          `json:"role"`
	ToolID    string          `json:"tool_id"`
	Stats     json.RawMessage `json:"stats"`
	Model     string          `json:"model"`
	Parent    json.RawMessage `json:"parent_tool_use_id"`
	UUID      string          `json:"uuid"`
	Timestamp string          `json:"timestamp"`
	Content   json.RawMessage `json:"content"`
}

func (p *streamProbe) kind() (Format, streamKind) {
	switch p.Type {
	case "thread.started", "turn.started", "turn.completed", "turn.failed", "item.started", "item.updated", "item.completed":
		return Codex, codexExec
	case "init", "message", "tool_use", "tool_result":
		// Every Gemini event has a timestamp, and a message's content is a string: an early
		// Codex rollout's bare message item has neither.
		if p.Timestamp != "" && (p.SessionID != "" || p.ToolID != "" || p.Role != "" && len(p.Content) > 0 && p.Content[0] == '"') {
			return Gemini, geminiStream
		}
	case "result":
		if len(p.Stats) > 0 {
			return Gemini, geminiStream
		}
		if p.SessionID != "" {
			return Claude, claudeStream
		}
	case "system", "assistant", "user", "stream_event":
		if p.SessionID != "" && p.UUID == "" || len(p.Parent) > 0 {
			return Claude, claudeStream
		}
	}
	return "", notStream
}

// detectStream reads the first lines of head for a headless output.
func detectStream(head []byte) (Format, streamKind) {
	for i, l := range bytes.Split(head, []byte{'\n'}) {
		if i >= 20 {
			break
		}
		var p streamProbe
		if json.Unmarshal(l, &p) != nil {
			continue
		}
		if f, k := p.kind(); k != notStream {
			return f, k
		}
	}
	return "", notStream
}

// fileStream reports whether the file at path is a headless output.
func fileStream(path string) streamKind {
	head, err := readHead(path, 64<<10)
	if err != nil {
		return notStream
	}
	_, k := detectStream(head)
	return k
}

// streamLines reads a headless output's lines, decoding each into T; bad lines go through
// badLine like a session file's.
func streamLines[T any](s *sess, path string, opts Options, each func(l *T, raw []byte)) error {
	return readLines(path, func(b []byte, l *T) error { return json.Unmarshal(b, l) }, func(ln srcLine, l *T, err error) error {
		s.lines++
		if err != nil {
			return s.badLine(path, ln, err, opts)
		}
		each(l, ln.b)
		return nil
	})
}

// codex exec --json: {"type":"thread.started","thread_id"}, turn.started, turn.completed
// {usage}, turn.failed {error}, item.started / item.updated / item.completed {item: {id, type,
// …}}, error {message}.
type cxExecLine struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Usage    *struct {
		Input  int64 `json:"input_tokens"`
		Cached int64 `json:"cached_input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Item *cxExecItem `json:"item"`
}

type cxExecItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Changes          []cxExecChange  `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            json.RawMessage `json:"error"`
	Query            string          `json:"query"`
	Message          string          `json:"message"`
	Items            json.RawMessage `json:"items"`
	// collab_tool_call: a spawned agent (spawn_agent), a message to one, a wait.
	SenderThreadID    string          `json:"sender_thread_id"`
	ReceiverThreadIDs []string        `json:"receiver_thread_ids"`
	Prompt            string          `json:"prompt"`
	AgentsStates      json.RawMessage `json:"agents_states"`
}

type cxExecChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

func readCodexExec(u Unit, opts Options) (*sess, error) {
	s := newSess(Codex, u.Path)
	s.provider = "openai"
	s.version = "exec --json"
	m := s.main()
	var ts time.Time // none in this output
	byThread := map[string]*agent{}
	err := streamLines(s, u.Path, opts, func(l *cxExecLine, raw []byte) {
		switch l.Type {
		case "thread.started":
			if s.sourceID == "" {
				s.sourceID, m.sessionID = l.ThreadID, l.ThreadID
				byThread[l.ThreadID] = m
			}
		case "turn.started":
			s.skipped["turn markers"]++
		case "turn.completed":
			if l.Usage != nil {
				m.tokens.Input += l.Usage.Input
				m.tokens.Output += l.Usage.Output
			}
			s.skipped["turn markers"]++
		case "turn.failed":
			if l.Error != nil {
				m.text(ts, session.TranscriptError, l.Error.Message)
			}
			m.outcome, m.stopNote = session.OutcomeFailure, "the turn failed"
		case "error":
			m.text(ts, session.TranscriptError, l.Message)
		case "item.started", "item.updated":
			s.skipped["item starts and updates (the completed item is replayed)"]++
		case "item.completed":
			if l.Item != nil {
				codexExecItem(s, m, byThread, l.Item, raw)
			}
		default:
			s.unknownLine(m, ts, fmt.Sprintf("codex exec event %q", l.Type), raw)
		}
	})
	if err != nil {
		return nil, err
	}
	if m.task == "" {
		s.sessionNote(ts, "headless output", "codex exec --json does not print the prompt it was given")
	}
	return s, nil
}

func codexExecItem(s *sess, m *agent, byThread map[string]*agent, it *cxExecItem, raw []byte) {
	var ts time.Time
	a := m
	if p := byThread[it.SenderThreadID]; p != nil {
		a = p
	}
	failed := it.Status == "failed" || it.Status == "declined"
	switch it.Type {
	case "agent_message":
		a.text(ts, session.TranscriptMessage, it.Text)
	case "reasoning":
		a.text(ts, session.TranscriptThinking, it.Text)
	case "command_execution":
		a.call(ts, it.ID, "shell", map[string]any{"command": it.Command})
		a.result(ts, it.ID, "shell", it.AggregatedOutput, failed || it.ExitCode != nil && *it.ExitCode != 0)
	case "file_change":
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Kind+" "+c.Path)
		}
		a.call(ts, it.ID, "apply_patch", map[string]any{"changes": paths})
		a.result(ts, it.ID, "apply_patch", strings.Join(paths, "\n"), failed)
		if !failed {
			for _, c := range it.Changes {
				e := edit{path: c.Path, kind: session.ChangeModified}
				switch c.Kind {
				case "add":
					e.kind = session.ChangeAdded
				case "delete":
					e.kind = session.ChangeDeleted
				}
				a.addEdits(e)
			}
		}
	case "mcp_tool_call":
		name := it.Server + "." + it.Tool
		a.call(ts, it.ID, name, rawArgs(it.Arguments))
		res := string(it.Result)
		if len(it.Error) > 0 && string(it.Error) != "null" {
			res, failed = string(it.Error), true
		}
		a.result(ts, it.ID, name, res, failed)
	case "web_search":
		a.call(ts, it.ID, "web_search", map[string]any{"query": it.Query})
	case "todo_list":
		a.note(ts, "plan", string(it.Items))
	case "error":
		a.text(ts, session.TranscriptError, it.Message)
	case "collab_tool_call":
		a.call(ts, it.ID, it.Tool, map[string]any{"prompt": it.Prompt, "receiver_thread_ids": it.ReceiverThreadIDs})
		a.result(ts, it.ID, it.Tool, string(it.AgentsStates), failed)
		if it.Tool == "spawn_agent" {
			for _, id := range it.ReceiverThreadIDs {
				c := s.agent(id)
				c.parentKey, c.sessionID, c.typ, c.task, c.name = a.key, id, "codex", it.Prompt, id
				byThread[id] = c
			}
		}
	default:
		s.unknownLine(a, ts, fmt.Sprintf("codex exec item %q", it.Type), raw)
	}
}

// gemini -p --output-format stream-json: init {session_id, model}, message {role, content,
// delta}, tool_use {tool_name, tool_id, parameters}, tool_result {tool_id, status, output,
// error}, error {severity, message}, result {status, error, stats}; each with a timestamp.
type gmStreamLine struct {
	Type       string          `json:"type"`
	Timestamp  string          `json:"timestamp"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Severity   string          `json:"severity"`
	Message    string          `json:"message"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		Input  int64 `json:"input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"stats"`
}

func readGeminiStream(u Unit, opts Options) (*sess, error) {
	s := newSess(Gemini, u.Path)
	s.provider, s.version = "gemini", "-p stream-json"
	m := s.main()
	calls := map[string]string{}
	// Assistant text comes in deltas: joined into one message until anything else comes.
	var text strings.Builder
	var textAt time.Time
	flush := func() {
		if text.Len() > 0 {
			m.text(textAt, session.TranscriptMessage, text.String())
			text.Reset()
		}
	}
	err := streamLines(s, u.Path, opts, func(l *gmStreamLine, raw []byte) {
		ts := parseTS(l.Timestamp)
		if l.Type != "message" || l.Role != "assistant" {
			flush()
		}
		switch l.Type {
		case "init":
			s.sourceID, m.sessionID, s.start = l.SessionID, l.SessionID, ts
			if l.Model != "" {
				m.model, m.provider = l.Model, "gemini"
			}
		case "message":
			if l.Role == "user" {
				m.add(ts, session.UserNote{Text: l.Content})
				if m.task == "" {
					m.task = clip(l.Content, 200)
				}
				return
			}
			if text.Len() == 0 {
				textAt = ts
			}
			text.WriteString(l.Content)
			if l.Delta {
				s.skipped["message deltas (joined into one message)"]++
			}
		case "tool_use":
			calls[l.ToolID] = l.ToolName
			m.call(ts, l.ToolID, l.ToolName, rawArgs(l.Parameters))
		case "tool_result":
			out := l.Output
			if l.Error != nil && l.Error.Message != "" {
				out = l.Error.Message
			}
			m.result(ts, l.ToolID, calls[l.ToolID], out, l.Status == "error")
		case "error":
			if l.Severity == "warning" {
				m.note(ts, "warning", l.Message)
			} else {
				m.text(ts, session.TranscriptError, l.Message)
			}
		case "result":
			if l.Stats != nil {
				m.tokens = session.Tokens{Input: l.Stats.Input, Output: l.Stats.Output}
			}
			if l.Status == "error" {
				m.outcome, m.stopNote = session.OutcomeFailure, "gemini reported status error"
				if l.Error != nil {
					m.text(ts, session.TranscriptError, l.Error.Message)
				}
			}
		default:
			s.unknownLine(m, ts, fmt.Sprintf("gemini stream event %q", l.Type), raw)
		}
	})
	flush()
	if err != nil {
		return nil, err
	}
	return s, nil
}
