package hooks

import (
	"encoding/json"
	"path/filepath"

	"github.com/summit-dev/summit/agents"
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

	// Claude Code's fields for the same events (doc.go lists which event has which).
	// TranscriptPath is the session's recording (summit's JSONL event log), when it records.
	TranscriptPath string `json:"transcript_path,omitempty"`
	// PermissionMode is the subagent's mode: default, plan, acceptEdits or bypassPermissions.
	PermissionMode string `json:"permission_mode,omitempty"`
	// ToolName is summit's canonical name of the call's tool (run_shell_command, replace, an
	// MCP tool's mcp__server__tool); ToolAlias is Claude Code's name for it (Bash, Edit).
	ToolName  string         `json:"tool_name,omitempty"`
	ToolAlias string         `json:"tool_alias,omitempty"`
	ToolInput map[string]any `json:"tool_input,omitempty"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
	// ToolResponse is the call's result (PostToolUse, PostToolUseFailure).
	ToolResponse *ToolResponse `json:"tool_response,omitempty"`
	// Error is the failed call's result text (PostToolUseFailure), as Claude Code's error.
	Error string `json:"error,omitempty"`
	// Prompt is the user's message to the subagent (UserPromptSubmit).
	Prompt string `json:"prompt,omitempty"`
	// Message and NotificationType say what waits for the user (Notification):
	// permission_prompt, idle_prompt (a subagent waits for a message) or review (a conflict).
	Message          string `json:"message,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`
	// Reason is why the session ended (SessionEnd): SessionEnded's reason.
	Reason string `json:"reason,omitempty"`
}

// ToolResponse is a tool call's result as a PostToolUse hook reads it.
type ToolResponse struct {
	Output  string `json:"output"`
	IsError bool   `json:"is_error"`
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

// claudeNames are Claude Code's names of summit's tools: a tool event's matcher matches the
// canonical name or one of these, and the first is the payload's tool_alias.
var claudeNames = map[string][]string{
	agents.ToolShell:     {"Bash"},
	agents.ToolReplace:   {"Edit", "MultiEdit", "NotebookEdit"},
	agents.ToolWriteFile: {"Write"},
	agents.ToolReadFile:  {"Read", "NotebookRead"},
	agents.ToolGlob:      {"Glob", "LS"},
	agents.ToolSearch:    {"Grep"},
	agents.ToolWebFetch:  {"WebFetch"},
	agents.ToolWebSearch: {"WebSearch"},
	agents.ToolTask:      {"Task", "Agent"},
}

// ClaudeName is Claude Code's name for summit's tool ("" when it has none: an MCP tool's
// mcp__server__tool name is the same in both).
func ClaudeName(tool string) string {
	if n := claudeNames[tool]; len(n) > 0 {
		return n[0]
	}
	return ""
}

// ToolEvents are the hook events about one tool call, whose matcher is on the tool's name.
var ToolEvents = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure"}

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

// ToolInput is a call's arguments as a hook reads them: summit's, plus Claude Code's
// file_path (absolute, in root: the directory the subagent's tools work in) when the call
// names a path, so a formatter hook written for Claude Code finds the file.
func ToolInput(args map[string]any, root string) map[string]any {
	p, ok := args["path"].(string)
	if _, has := args["file_path"]; !ok || has || p == "" {
		return args
	}
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	out["file_path"] = filepath.Clean(p)
	return out
}
