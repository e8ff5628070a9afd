package session

import (
	"time"

	"github.com/summit-dev/summit/protocols"
)

// builder stamps events the way the orchestrator does: gap-free seq, one session id, a clock
// that advances 10 ms an event.
type builder struct {
	seq uint64
	ts  time.Time
	sid string
	evs []Event
}

func newBuilder() *builder {
	return &builder{sid: "s-test", ts: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func (b *builder) add(sub string, d Data) Event {
	b.seq++
	b.ts = b.ts.Add(10 * time.Millisecond)
	e := New(sub, d)
	e.Seq, e.TS, e.SessionID = b.seq, b.ts, b.sid
	b.evs = append(b.evs, e)
	return e
}

func ptr[T any](v T) *T { return &v }

// fullSession is a session that uses every event type of schema v1: three subagents, a
// monitor handoff, a transfer-control handoff, a permission granted and one denied, a merge
// convergence with a hunk conflict resolved by hand, a delta batch applied to the playbook.
func fullSession() []Event {
	b := newBuilder()
	b.add("", SessionStarted{Schema: 1, ProgramVersion: "test", Workspace: "/w", PermissionMode: "acceptEdits",
		AllowedTools: []string{"read_file", "glob", "write_file", "run_shell_command"}, Provider: "script", AgentsDigest: "abc"})
	b.add("", CommandIssued{Line: "/delegate find todos --agent-type analyzer", Command: "delegate", Args: map[string]any{"task": "find todos"}})
	b.add("", CommandRejected{Line: "/converge sa-1 --stratgy merge", Error: "unknown flag --stratgy (did you mean --strategy?)", Usage: "/converge <id1> <id2> ..."})
	b.add("", UserNote{Text: "looking at the tree first"})
	for i, typ := range []string{"analyzer", "builder", "builder"} {
		id := []string{"sa-1", "sa-2", "sa-3"}[i]
		b.add(id, SubagentSpawned{AgentType: typ, AgentName: typ, ParentSessionID: "s-test", ParentSessionRef: "s-test",
			PermissionMode: "plan", Tools: []string{"read_file"}, TaskDescription: "task of " + id, TimeoutS: 300, InheritContext: true})
		b.add(id, SubagentActive{InitialState: "running"})
		b.add(id, TranscriptEvent{EventType: TranscriptStart, Text: "task of " + id})
	}
	b.add("sa-1", ModelRouted{Requested: "gemini-3-pro-preview", Provider: "claude", Model: "claude-sonnet-4-5",
		Why:       "gemini-3-pro-preview is a gemini model and no provider of its family is configured; it is a default-tier model, so claude-sonnet-4-5, the default-tier model of claude",
		Fallbacks: []string{"claude/claude-haiku-4-5"}, Dropped: []string{"temperature: extended thinking is on for claude, which requires the default temperature"}})
	b.add("sa-1", ModelSwitched{FromProvider: "claude", FromModel: "claude-sonnet-4-5", ToProvider: "claude", ToModel: "claude-haiku-4-5",
		Reason: "claude: HTTP 404: model: claude-sonnet-4-5"})
	b.add("sa-1", HandoffInitiated{ParentSessionID: "s-test", HandoffMode: HandoffMonitor, TimeoutS: 600, OnFailure: "escalate"})
	b.add("sa-1", TranscriptEvent{EventType: TranscriptThinking, Text: "where are the todos"})
	b.add("sa-1", TranscriptEvent{EventType: TranscriptToken, Text: "Scanning "})
	b.add("sa-1", TranscriptEvent{EventType: TranscriptToken, Text: "for TODO markers."})
	b.add("sa-1", TranscriptEvent{EventType: TranscriptToolCall, CallID: "c1", Tool: "search_file_content", Args: map[string]any{"pattern": "TODO"}})
	b.add("sa-1", TranscriptEvent{EventType: TranscriptToolResult, CallID: "c1", Tool: "search_file_content", Result: "main.go:3: // TODO"})
	b.add("sa-1", TranscriptEvent{EventType: TranscriptPolicyDenied, Tool: "write_file", Reason: "write_file is denied in plan"})
	b.add("sa-1", PermissionRequested{RequestID: "pr-1", Tool: "run_shell_command", Args: map[string]any{"command": "ls"}, Reason: "shell asks each time"})
	b.add("sa-1", PermissionGranted{RequestID: "pr-1", Scope: "once", By: "user"})
	b.add("sa-1", PermissionRequested{RequestID: "pr-2", Tool: "run_shell_command", Args: map[string]any{"command": "rm -rf x"}})
	b.add("sa-1", PermissionDenied{RequestID: "pr-2", Reason: "not that", By: "user"})
	b.add("sa-1", SubagentError{Error: "upstream overloaded", Retryable: true, Attempt: 1})
	b.add("sa-1", TranscriptEvent{EventType: TranscriptMessage, Text: "Found 1 TODO."})
	b.add("sa-1", SubagentStop{Outcome: OutcomeSuccess, Capsule: &protocols.Capsule{Summary: "1 TODO in main.go", Confidence: ptr(0.8),
		Findings: []protocols.Finding{{Severity: "low", Summary: "TODO in main.go", FileRefs: []string{"main.go:3"}}}},
		ToolInvocationCount: 1, DurationMS: 1200, Tokens: Tokens{Input: 300, Output: 40}})
	b.add("sa-1", HandoffComplete{Outcome: OutcomeSuccess})
	b.add("sa-1", HandoffResolved{Outcome: OutcomeSuccess, Action: "none"})
	b.add("sa-2", HandoffInitiated{ParentSessionID: "s-test", HandoffMode: HandoffTransferControl, TimeoutS: 600, OnFailure: "retry"})
	b.add("sa-2", UserNote{Text: "use the existing helper"})
	b.add("sa-2", TranscriptEvent{EventType: TranscriptError, Text: "tool crashed"})
	b.add("sa-2", SubagentIsolated{Base: "base-1", BaseCommit: "0123456789abcdef0123", Worktree: "/cache/summit/worktrees/s-test/sa-2"})
	b.add("sa-2", SubagentChanges{Base: "base-1", BaseCommit: "0123456789abcdef0123", ResultCommit: "fedcba9876543210fedc", Added: 1, Removed: 1,
		Files: []FileChange{{Path: "a.go", Kind: ChangeModified, Added: 1, Removed: 1, Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"},
			{Path: "run.sh", Kind: ChangeMode, OldMode: "100644", NewMode: "100755"}, {Path: "logo.png", Kind: ChangeAdded, Binary: true}}})
	b.add("sa-2", SubagentStop{Outcome: OutcomeSuccess, DurationMS: 2000, Capsule: &protocols.Capsule{Summary: "patched a.go",
		PatchSuggestions: []protocols.PatchSuggestion{{Paths: []string{"a.go"}, Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"}}}})
	b.add("sa-2", HandoffComplete{Outcome: OutcomeSuccess})
	b.add("sa-3", SubagentTimeout{TimeoutS: 300})
	b.add("sa-3", SubagentStop{Outcome: OutcomeTimeout, DurationMS: 300000})
	b.add("", ConvergenceInitiated{ConvergenceID: "cv-1", SubagentIDs: []string{"sa-2", "sa-3"}, Strategy: "merge",
		ConflictResolution: "manual", OutputFormat: "delta_batch"})
	b.add("", ConflictDetected{ConvergenceID: "cv-1", ConflictID: "cf-1", Kind: "hunk", File: "a.go", Lines: &LineRange{1, 3},
		Sides: []ConflictSide{{SubagentID: "sa-2", Value: "+y"}, {SubagentID: "sa-3", Value: "+z", Confidence: ptr(0.4)}}})
	b.add("", ConflictReviewRequest{ConvergenceID: "cv-1", ConflictID: "cf-1"})
	b.add("", ManualReviewRequired{ConvergenceID: "cv-1", ConflictIDs: []string{"cf-1"}})
	b.add("", ConflictResolved{ConvergenceID: "cv-1", ConflictID: "cf-1", Method: "manual", Choice: "sa-2", Note: "keeps the helper", Overridden: []string{"sa-3"}})
	b.add("", ConvergedResult{ConvergenceID: "cv-1", Format: "delta_batch", Output: `{"patches":1}`})
	b.add("", DeltaBatch{ConvergenceID: "cv-1", Reasoning: "one patch", Operations: []PlaybookOp{{Type: OpAdd, BulletID: "pb-1", Section: "style", Content: "prefer helpers"}},
		Patches: []Patch{{Path: "a.go", Diff: "--- a/a.go\n+++ b/a.go\n"}}})
	b.add("", ConvergenceComplete{ConvergenceID: "cv-1", Outcome: "merged", ConflictCount: 1, ResolutionCount: 1, OutputSize: 13})
	b.add("", DeltaBatchApplied{ConvergenceID: "cv-1", Files: []string{"a.go"}})
	b.add("", ChangesApplied{ApplyID: "apply-1", Source: "sa-2", Files: []string{"a.go", "logo.png", "run.sh"}, PreCommit: "aaaa", PostCommit: "bbbb"})
	b.add("", ApplyUndone{ApplyID: "apply-1", Files: []string{"a.go", "logo.png", "run.sh"}})
	b.add("sa-2", ChangesRebased{ConvergenceID: "cv-1", SubagentChanges: SubagentChanges{Base: "base-2", BaseCommit: "2222", ResultCommit: "3333",
		Files: []FileChange{{Path: "a.go", Kind: ChangeModified, Added: 1, Removed: 1}}, Added: 1, Removed: 1}})
	b.add("sa-2", WorktreeDiscarded{Reason: "discarded by the user"})
	b.add("sa-4", SubagentSpawned{AgentType: "retriever", AgentName: "retriever", ParentSessionID: "s-test", PermissionMode: "plan", TaskDescription: "fetch docs", TimeoutS: 60, Queued: true})
	b.add("sa-4", SubagentCancelled{Reason: "cancelled by user"})
	b.add("sa-4", SubagentStop{Outcome: OutcomeCancelled})
	b.add("", SessionEnded{Reason: "quit", DurationMS: 1000})
	return b.evs
}
