package imports

import (
	"bytes"
	"io"

	json "github.com/goccy/go-json"
)

// detectHead is how much of a file Detect reads.
const detectHead = 256 << 10

// probe holds the keys that tell the formats apart.
type probe struct {
	Type        string          `json:"type"`
	Payload     json.RawMessage `json:"payload"`
	RecordType  string          `json:"record_type"`
	ID          string          `json:"id"`
	Timestamp   string          `json:"timestamp"`
	SessionID   string          `json:"sessionId"`
	ProjectHash string          `json:"projectHash"`
	UUID        string          `json:"uuid"`
	LeafUUID    string          `json:"leafUuid"`
	Set         json.RawMessage `json:"$set"`
	RewindTo    string          `json:"$rewindTo"`
	Role        string          `json:"role"`
	Parts       json.RawMessage `json:"parts"`
}

var claudeTypes = map[string]bool{"user": true, "assistant": true, "system": true, "summary": true,
	"file-history-snapshot": true, "queue-operation": true, "progress": true, "attachment": true,
	"custom-title": true, "ai-title": true, "agent-name": true, "last-prompt": true, "pr-link": true,
	"permission-mode": true, "agent-setting": true, "bridge-session": true, "worktree-state": true}

var codexTypes = map[string]bool{"session_meta": true, "response_item": true, "event_msg": true,
	"turn_context": true, "compacted": true}

// codexItems are the bare response items of rollouts written before the type/payload wrapper.
var codexItems = map[string]bool{"message": true, "reasoning": true, "function_call": true,
	"function_call_output": true, "local_shell_call": true, "custom_tool_call": true, "web_search_call": true}

// Detect tells a session file's format by its content: the keys of its first lines (JSONL),
// or its shape (a Gemini CLI whole-JSON session or checkpoint).
func Detect(path string) (Format, error) {
	head, err := readHead(path, detectHead)
	if err != nil {
		return "", lineErr(path, 0, "%v", unwrapPath(err))
	}
	if fm, ok := detect(head); ok {
		return fm, nil
	}
	return "", lineErr(path, 0, "not a session file of a format summit imports (tried %s: %s)", formatList(), detectWhy(head))
}

func formatList() string {
	return "claude (Claude Code JSONL, claude -p stream-json), codex (Codex rollout JSONL, codex exec --json), gemini (Gemini CLI chat JSON/JSONL or checkpoint, gemini -p stream-json)"
}

func detectWhy(head []byte) string {
	t := bytes.TrimSpace(head)
	switch {
	case len(t) == 0:
		return "the file is empty"
	case t[0] != '{' && t[0] != '[':
		return "it does not start with JSON"
	}
	return "no line has the keys of any of them"
}

func detect(head []byte) (Format, bool) {
	t := bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	if len(t) == 0 {
		return "", false
	}
	if t[0] == '[' {
		// A checkpoint: a list of {role, parts}.
		var first []probe
		end := len(t)
		if i := bytes.Index(t, []byte("},")); i > 0 && len(t) == len(head) {
			end = i + 1
		}
		if json.Unmarshal(t, &first) == nil && len(first) > 0 && first[0].Role != "" && len(first[0].Parts) > 0 {
			return Gemini, true
		}
		if bytes.Contains(t[:end], []byte(`"role"`)) && bytes.Contains(t, []byte(`"parts"`)) {
			return Gemini, true
		}
		return "", false
	}
	if f, k := detectStream(t); k != notStream {
		return f, true
	}
	lines := bytes.Split(t, []byte{'\n'})
	if len(lines) > 1 && len(bytes.TrimSpace(lines[0])) == 1 {
		// Pretty-printed JSON: Gemini CLI's whole-JSON session.
		if bytes.Contains(t, []byte(`"projectHash"`)) || bytes.Contains(t, []byte(`"messages"`)) && bytes.Contains(t, []byte(`"sessionId"`)) {
			return Gemini, true
		}
		return "", false
	}
	for i, l := range lines {
		if i >= 50 {
			break
		}
		var p probe
		if json.Unmarshal(l, &p) != nil {
			continue
		}
		switch {
		case codexTypes[p.Type] && len(p.Payload) > 0, p.RecordType != "":
			return Codex, true
		case i == 0 && p.Type == "" && p.ID != "" && p.Timestamp != "" && p.SessionID == "":
			return Codex, true // an unwrapped rollout's session meta
		case p.ProjectHash != "" || len(p.Set) > 0 || p.RewindTo != "":
			return Gemini, true
		case claudeTypes[p.Type] && (p.UUID != "" || p.SessionID != "" || p.LeafUUID != "" || p.Type == "summary" || p.Type == "file-history-snapshot"):
			return Claude, true
		case codexItems[p.Type] && p.SessionID == "":
			return Codex, true
		}
	}
	return "", false
}

// readHead is the first n bytes of the file at path (all of it when shorter): what detection
// and the links between a session's files are read from.
func readHead(path string, n int) ([]byte, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return head[:k], nil
}
