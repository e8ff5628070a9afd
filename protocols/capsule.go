// Package protocols holds the text contracts between summit and its subagents: the result
// capsule a subagent ends with, and (in later work) the embedded protocol documents, the Task
// Report / Downstream Context parsers and the Summit Agent ABI types.
//
// The capsule is recorded verbatim in the SubagentStop event, so its JSON field names are part
// of the JSONL schema v1: add fields freely, never rename or drop one.
package protocols

// Capsule is the structured result a subagent ends with (DESIGN §6).
type Capsule struct {
	AgentName string `json:"agent_name,omitempty"`
	// Status is the Task Report's status: success, partial or failure ("" when not given).
	Status           string            `json:"status,omitempty"`
	Summary          string            `json:"summary"`
	Findings         []Finding         `json:"findings,omitempty"`
	PatchSuggestions []PatchSuggestion `json:"patch_suggestions,omitempty"`
	PolicyNotes      []string          `json:"policy_notes,omitempty"`
	// Confidence is optional: nil means the subagent did not say, which is different from 0.
	Confidence   *float64      `json:"confidence,omitempty"`
	Verification *Verification `json:"verification,omitempty"`
	// TaskReport and DownstreamContext are the Markdown sections a subagent may write; they
	// are kept as text so the context chain can pass them on unchanged.
	TaskReport        string `json:"task_report,omitempty"`
	DownstreamContext string `json:"downstream_context,omitempty"`
	// ParseWarnings says how the capsule was recovered when the final message was not a
	// well-formed capsule (for example "no fenced JSON capsule; summary is the final text").
	ParseWarnings []string `json:"parse_warnings,omitempty"`
}

// Finding is one observation in a capsule.
type Finding struct {
	Severity    string   `json:"severity,omitempty"`
	Summary     string   `json:"summary"`
	FileRefs    []string `json:"file_refs,omitempty"`
	EvidenceIDs []string `json:"evidence_ids,omitempty"`
}

// PatchSuggestion is a unified diff the subagent proposes, touching Paths.
type PatchSuggestion struct {
	Paths []string `json:"paths,omitempty"`
	Diff  string   `json:"diff"`
}

// Verification is the self-check block of the Summit Agent ABI (seed 002): a status, an
// optional score and named checks; Output keeps a Task Report's validation output.
type Verification struct {
	Status string   `json:"status,omitempty"` // passed | failed | flagged | skipped
	Score  *float64 `json:"score,omitempty"`
	Checks []Check  `json:"checks,omitempty"`
	Output string   `json:"output,omitempty"`
}

// Check is one named verification check.
type Check struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
}
