// Package compare compares two session recordings of similar work (`summit inspect A B`): their
// figures side by side, the first point where they diverge, and the changes each ended with,
// file by file. It reads; the event schema and the fold are package session's, the metrics
// package render's (render.ComputeMetrics, which the overall row reuses).
//
// # How it reads
//
// Each recording is folded once, streaming (record.FoldFile with Trace.Fold), into a state
// without transcript text, as `summit inspect` folds one. What the comparison needs from the
// transcripts is kept as fingerprints: for each subagent, one 64-bit FNV-1a hash and the seq
// of each tool call (tool and arguments, keys sorted), tool result (tool, error flag, result),
// policy denial, permission request and decision, retrying error and stop. So memory grows by
// 16 bytes an item, never with the text. The two events a divergence names are read back
// from the files afterwards (their prefix index, then those two lines).
//
// # Alignment
//
// The runs are aligned by their command lines (CommandIssued, in order), then subagent by
// subagent: ids are given in spawn order (sa-1, sa-2, …), so after equal commands equal ids
// are the same delegation. A subagent is compared by its spawn (agent type, agent name, task,
// parent) and then item by item. Each difference found is a candidate: the first command that
// differs (or that one side lacks), a subagent spawned differently or on one side only, and
// each subagent's first differing item (or the first item one side lacks). The reported
// divergence is the candidate earliest in A, then in B; where one side has no event there, its
// place is after the last event it had there.
//
// # Final changes
//
// A path's final change on one side is the last change recorded for it (SubagentChanges files,
// DeltaBatch patches), except that a change an apply landed in the workspace (ChangesApplied,
// DeltaBatchApplied) wins over later proposals until it is undone (ApplyUndone). Two sides'
// changes of a path are "same" when their diffs (without git's index lines, which name blob
// hashes), kinds, modes and line counts are equal and both or neither were applied.
//
// # JSON (`summit inspect A B --json`)
//
// One object; field names are stable: fields may be added, never renamed or dropped.
//
//	{
//	  "a": {"path": "a.jsonl", "session_id": "s-…", "events": 120, "commands": 6, "ended": true},
//	  "b": {…the same for B…},
//	  "overall": {
//	    "a":     FIGURES,           // A's
//	    "b":     FIGURES,           // B's
//	    "delta": FIGURES            // B minus A, field by field
//	  },
//	  "by_agent_type": [            // one per agent type either side ran, sorted by type;
//	    {"agent_type": "builder", "a": FIGURES, "b": FIGURES, "delta": FIGURES}   // zeros on a side that ran none
//	  ],
//	  "divergence": null | {
//	    "kind": "command" | "spawn" | "item",
//	    "subagent_id": "sa-4",      // absent for kind command
//	    "command": 5,               // commands both sides issued alike before it
//	    "a": {"seq": 88, "description": "sa-4 run_shell_command result (ok): PASS"},
//	    "b": {"seq": 90, "description": "sa-4 permission pr-1 denied: …"}   // seq 0: that side has no event there
//	  },
//	  "files": [                    // sorted by path
//	    {"path": "cart.go", "status": "a_only" | "b_only" | "same" | "different",
//	     "a": CHANGE, "b": CHANGE}  // a side absent when it did not change the path
//	  ]
//	}
//
// FIGURES:
//
//	{"duration_ms": 12345,          // overall: the session's wall clock; a type: its subagents' running times summed
//	 "subagents": 5, "tokens_in": 1200, "tokens_out": 300,
//	 "cost_usd": 0.0123 | null,     // null: unknown (nothing priced, or a model without a price ran)
//	 "tool_calls": 14, "retries": 1,            // retries: SubagentError with will_retry
//	 "permission_requests": 2, "permissions_granted": 1, "permissions_denied": 1,
//	 "conflicts": 1, "conflicts_resolved": 1,   // a type: conflicts with a side from one of its subagents
//	 "outcomes": {"success": 4, "failure": 1}}  // SubagentStop outcomes; in delta, every outcome of either side
//
// CHANGE:
//
//	{"kind": "modified", "added": 3, "removed": 2, "binary": false,
//	 "source": "sa-2" | "cv-1", "applied": true, "seq": 77}
//
// Descriptions quote the recording (cut to 160 characters); the JSON writer escapes control
// characters, and the text writer (Report.WriteText) sanitises every cell.
package compare
