package sessiontest

import (
	"time"

	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
)

// Builder stamps events the way the orchestrator does: gap-free seq, one session id, a clock
// that advances 10 ms an event.
type Builder struct {
	Seq uint64
	TS  time.Time
	SID string
	Evs []session.Event
}

func NewBuilder() *Builder {
	return &Builder{SID: "s-test", TS: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func (b *Builder) Add(sub string, d session.Data) session.Event {
	b.Seq++
	b.TS = b.TS.Add(10 * time.Millisecond)
	e := session.New(sub, d)
	e.Seq, e.TS, e.SessionID = b.Seq, b.TS, b.SID
	b.Evs = append(b.Evs, e)
	return e
}

func ptr[T any](v T) *T { return &v }

// FullSession is a session that uses every event type of schema v1: three subagents, a
// monitor handoff, a transfer-control handoff, a permission granted and one denied, a merge
// convergence with a hunk conflict resolved by hand, a delta batch applied to the playbook.
func FullSession() []session.Event {
	b := NewBuilder()
	b.Add("", session.SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/w", PermissionMode: "acceptEdits",
		AllowedTools: []string{"read_file", "glob", "write_file", "run_shell_command"}, Provider: "script", AgentsDigest: "abc",
		WorkspaceTrust: "untrusted", UntrustedIgnored: []string{"mcp_servers.fs"}, TrustItems: []string{"mcp_servers.fs: runs ./fs.sh"}})
	b.Add("", session.CommandIssued{Line: "/delegate find todos --agent-type analyzer", Command: "delegate", Args: map[string]any{"task": "find todos"}})
	b.Add("", session.CommandRejected{Line: "/converge sa-1 --stratgy merge", Error: "unknown flag --stratgy (did you mean --strategy?)", Usage: "/converge <id1> <id2> ..."})
	b.Add("", session.UserNote{Text: "looking at the tree first"})
	for i, typ := range []string{"analyzer", "builder", "builder"} {
		id := []string{"sa-1", "sa-2", "sa-3"}[i]
		b.Add(id, session.SubagentSpawned{AgentType: typ, AgentName: typ, ParentSessionID: "s-test", ParentSessionRef: "s-test",
			PermissionMode: "plan", Tools: []string{"read_file"}, TaskDescription: "task of " + id, TimeoutS: 300, InheritContext: true})
		b.Add(id, session.SubagentActive{InitialState: "running"})
		b.Add(id, session.TranscriptEvent{EventType: session.TranscriptStart, Text: "task of " + id})
	}
	b.Add("sa-1", session.ModelRouted{Requested: "gemini-3-pro-preview", Provider: "claude", Model: "claude-sonnet-4-5",
		Why:       "gemini-3-pro-preview is a gemini model and no provider of its family is configured; it is a default-tier model, so claude-sonnet-4-5, the default-tier model of claude",
		Fallbacks: []string{"claude/claude-haiku-4-5"}, Dropped: []string{"temperature: extended thinking is on for claude, which requires the default temperature"}})
	b.Add("sa-1", session.ModelSwitched{FromProvider: "claude", FromModel: "claude-sonnet-4-5", ToProvider: "claude", ToModel: "claude-haiku-4-5",
		Reason: "claude: HTTP 404: model: claude-sonnet-4-5"})
	b.Add("sa-1", session.HandoffInitiated{ParentSessionID: "s-test", HandoffMode: session.HandoffMonitor, TimeoutS: 600, OnFailure: "escalate"})
	b.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptThinking, Text: "where are the todos"})
	b.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "Scanning "})
	b.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToken, Text: "for TODO markers."})
	b.Add("sa-1", session.ModelTurn{Turn: 1, Attempt: 1, Tokens: session.Tokens{Input: 900, Output: 40}, Stop: "tool_use", Model: "claude-haiku-4-5"})
	b.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c1", Tool: "search_file_content", Args: map[string]any{"pattern": "TODO"}})
	b.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c1", Tool: "search_file_content", Result: "main.go:3: // TODO"})
	b.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptPolicyDenied, Tool: "write_file", Reason: "write_file is denied in plan"})
	b.Add("sa-1", session.PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command", Args: map[string]any{"command": "ls"}, Reason: "shell asks each time"})
	b.Add("sa-1", session.PermissionGranted{RequestID: "pr-1", Scope: "once", By: "user"})
	b.Add("sa-1", session.PermissionRequested{RequestID: "pr-2", Tool: "run_shell_command", Args: map[string]any{"command": "rm -rf x"}})
	b.Add("sa-1", session.PermissionDenied{RequestID: "pr-2", Reason: "not that", By: "user"})
	b.Add("sa-1", session.SubagentError{Error: "upstream overloaded", Retryable: true, Attempt: 1})
	b.Add("sa-1", session.TranscriptEvent{EventType: session.TranscriptMessage, Text: "Found 1 TODO."})
	b.Add("sa-1", session.HookRan{HookEvent: "SubagentStop", Command: "./scripts/check-todos.sh", Source: "workspace", ExitCode: 2,
		Outcome: session.HookBlocked, DurationMS: 41, Reason: "name the file and line of each TODO", Stderr: "name the file and line of each TODO"})
	b.Add("sa-1", session.UserNote{Text: "name the file and line of each TODO"})
	b.Add("sa-1", session.SubagentStop{Outcome: session.OutcomeSuccess, Capsule: &protocols.Capsule{Summary: "1 TODO in main.go", Confidence: ptr(0.8),
		Findings: []protocols.Finding{{Severity: "low", Summary: "TODO in main.go", FileRefs: []string{"main.go:3"}}}},
		ToolInvocationCount: 1, DurationMS: 1200, Tokens: session.Tokens{Input: 300, Output: 40}})
	b.Add("sa-1", session.HandoffComplete{Outcome: session.OutcomeSuccess})
	b.Add("sa-1", session.HandoffResolved{Outcome: session.OutcomeSuccess, Action: "none"})
	b.Add("sa-2", session.HandoffInitiated{ParentSessionID: "s-test", HandoffMode: session.HandoffTransferControl, TimeoutS: 600, OnFailure: "retry"})
	b.Add("sa-2", session.UserNote{Text: "use the existing helper"})
	b.Add("sa-2", session.TranscriptEvent{EventType: session.TranscriptError, Text: "tool crashed"})
	b.Add("sa-2", session.SubagentIsolated{Base: "base-1", BaseCommit: "0123456789abcdef0123", Worktree: "/cache/summit/worktrees/s-test/sa-2"})
	b.Add("sa-2", session.SubagentChanges{Base: "base-1", BaseCommit: "0123456789abcdef0123", ResultCommit: "fedcba9876543210fedc", Added: 1, Removed: 1,
		Files: []session.FileChange{{Path: "a.go", Kind: session.ChangeModified, Added: 1, Removed: 1, Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"},
			{Path: "run.sh", Kind: session.ChangeMode, OldMode: "100644", NewMode: "100755"}, {Path: "logo.png", Kind: session.ChangeAdded, Binary: true}}})
	b.Add("sa-2", session.SubagentStop{Outcome: session.OutcomeSuccess, DurationMS: 2000, Capsule: &protocols.Capsule{Summary: "patched a.go",
		PatchSuggestions: []protocols.PatchSuggestion{{Paths: []string{"a.go"}, Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"}}}})
	b.Add("sa-2", session.HandoffComplete{Outcome: session.OutcomeSuccess})
	b.Add("sa-3", session.SubagentTimeout{TimeoutS: 300})
	b.Add("sa-3", session.SubagentStop{Outcome: session.OutcomeTimeout, DurationMS: 300000})
	b.Add("", session.ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-2", "sa-3"}, Strategy: "merge",
		ConflictResolution: "manual", OutputFormat: "delta_batch"})
	b.Add("", session.ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk", File: "a.go", Lines: &session.LineRange{Start: 1, End: 3},
		Sides: []session.ConflictSide{{SubagentID: "sa-2", Value: "+y"}, {SubagentID: "sa-3", Value: "+z", Confidence: ptr(0.4)}}})
	b.Add("", session.ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1"})
	b.Add("", session.ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1"}})
	b.Add("", session.ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Method: "manual", Choice: "sa-2", Note: "keeps the helper", Overridden: []string{"sa-3"}})
	b.Add("", session.ConvergedResult{ConvergenceID: "cv-1", Format: "delta_batch", Output: `{"patches":1}`})
	b.Add("", session.DeltaBatch{ConvergenceID: "cv-1", Reasoning: "one patch", Operations: []session.PlaybookOp{{Type: session.OpAdd, BulletID: "pb-1", Section: "style", Content: "prefer helpers"}},
		Patches: []session.Patch{{Path: "a.go", Diff: "--- a/a.go\n+++ b/a.go\n"}}})
	b.Add("", session.ConvergenceComplete{ConvergenceID: "cv-1", Outcome: "merged", ConflictCount: 1, ResolutionCount: 1, OutputSize: 13})
	b.Add("", session.VerifyRan{Target: "cv-1", Command: "go test ./...", Source: "flag", ExitCode: 1, Outcome: session.VerifyFailed,
		DurationMS: 3100, Output: "--- FAIL: TestTotal\nFAIL", Files: []string{"a.go"}, Forced: true})
	b.Add("", session.DeltaBatchApplied{ConvergenceID: "cv-1", Files: []string{"a.go"}})
	b.Add("sa-2", session.VerifyRan{Target: "sa-2", Command: "go vet ./...", Source: "config", ExitCode: 0, Outcome: session.VerifyPassed,
		DurationMS: 900, Files: []string{"a.go", "logo.png", "run.sh"}})
	b.Add("", session.ChangesApplied{ApplyID: "apply-1", Source: "sa-2", Files: []string{"a.go", "logo.png", "run.sh"}, PreCommit: "aaaa", PostCommit: "bbbb"})
	b.Add("", session.ApplyUndone{ApplyID: "apply-1", Files: []string{"a.go", "logo.png", "run.sh"}})
	b.Add("sa-2", session.ChangesRebased{ConvergenceID: "cv-1", SubagentChanges: session.SubagentChanges{Base: "base-2", BaseCommit: "2222", ResultCommit: "3333",
		Files: []session.FileChange{{Path: "a.go", Kind: session.ChangeModified, Added: 1, Removed: 1}}, Added: 1, Removed: 1}})
	b.Add("sa-2", session.WorktreeDiscarded{Reason: "discarded by the user"})
	b.Add("sa-4", session.SubagentSpawned{AgentType: "retriever", AgentName: "retriever", ParentSessionID: "s-test", PermissionMode: "plan", TaskDescription: "fetch docs", TimeoutS: 60, Queued: true})
	b.Add("sa-4", session.SubagentCancelled{Reason: "cancelled by user"})
	b.Add("sa-4", session.SubagentStop{Outcome: session.OutcomeCancelled})
	b.Add("", session.WorkspaceTrusted{Workspace: "/w", Items: []string{"mcp_servers.fs: runs ./fs.sh"}, Applied: true})
	b.Add("", session.SessionEnded{Reason: "quit", DurationMS: 1000})
	return b.Evs
}
