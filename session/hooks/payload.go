package hooks

import (
	"encoding/json"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// Input is the JSON object a hook reads on stdin (documented in doc.go). Fields are added,
// never renamed.
type Input struct {
	HookEvent string `json:"hook_event_name"`
	SessionID string `json:"session_id"`
	Workspace string `json:"workspace"`
	// Cwd is where the hook runs: always the main workspace (never a subagent's worktree,
	// whose files the subagent could have rewritten); Worktree is the isolated subagent's.
	Cwd        string `json:"cwd"`
	SubagentID string `json:"subagent_id,omitempty"`
	AgentType  string `json:"agent_type,omitempty"`
	AgentName  string `json:"agent_name,omitempty"`
	Worktree   string `json:"worktree,omitempty"`
	// Event is the triggering event as it is recorded (one line of the recording, the summit
	// envelope with its data). A SubagentStop hook run before the stop gets the stop summit
	// is about to record, with seq 0.
	Event json.RawMessage `json:"event,omitempty"`

	// SubagentStop only.
	Outcome        string `json:"outcome,omitempty"`
	LastMessage    string `json:"last_message,omitempty"`
	CapsuleSummary string `json:"capsule_summary,omitempty"`
	// StopHookActive is true when a SubagentStop hook already blocked this subagent's stop
	// (BlockCount times): the hook can let it stop now rather than loop.
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
	BlockCount     *int  `json:"block_count,omitempty"`
	MaxBlocks      int   `json:"max_blocks,omitempty"`
}

// Marshal is the stdin payload of in with ev (its Event) encoded as the recorder writes it.
func (in Input) Marshal(ev session.Event) ([]byte, error) {
	if ev.Data != nil {
		line, err := record.AppendLine(nil, ev)
		if err != nil {
			return nil, err
		}
		in.Event = json.RawMessage(line[:len(line)-1])
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// EventName is the hook event an event of the session runs, "" for none. SubagentStart is
// SubagentActive, when the subagent starts to run (a queued one waits first).
func EventName(t session.Type) string {
	switch t {
	case session.TypeSubagentActive:
		return "SubagentStart"
	case session.TypeSubagentStop:
		return "SubagentStop"
	case session.TypePermissionRequested:
		return "PermissionRequested"
	case session.TypeConflictDetected:
		return "ConflictDetected"
	case session.TypeConvergenceComplete:
		return "ConvergenceComplete"
	case session.TypeSessionEnded:
		return "SessionEnded"
	}
	return ""
}
