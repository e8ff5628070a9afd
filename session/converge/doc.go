// Package converge is the convergence engine behind /converge, /resolve and /apply. It is
// pure: the members' ended results go in (capsules, outcomes, completion order), conflicts,
// automatic resolutions and the combined output come out. The live session and a replay run
// the same code on the same inputs, so they agree byte for byte.
//
// Strategies:
//
//   - merge: the union of the members' findings, patch hunks and playbook items. Identical
//     items merge (hunks are compared without their context lines). Hunks of one file whose
//     changed lines overlap, or insertions at one point, from different members are a hunk
//     conflict; findings with the same file refs and summary but different severities are a
//     finding conflict; different UPDATE/REMOVE of one playbook entry are a playbook conflict.
//   - vote: needs 3 or more members; the largest group of equal normalised results wins
//     (a member's set of changes, else its verification verdict, else its summary). A tie
//     between the largest groups is one vote conflict.
//   - consensus: every member must succeed and agree, with confidences inside a 0.1 band.
//     Each member outside the reference group or band is one consensus conflict against the
//     reference.
//   - first_success: the member that finished successfully first (by event order); the
//     others are ignored and that is noted.
//
// Resolution: manual (every conflict is listed for review; no output until each is resolved),
// auto_accept_latest (the side that finished last), prefer_higher_confidence (the most
// confident side; a side without confidence, or a tie, falls back to manual with the reason).
//
// Output is json (Document), markdown (Document.Markdown) or delta_batch: per-file unified
// diffs (hunks sorted, context trimmed so hunks never overlap) plus playbook operations in
// ACE's DeltaBatch shape built from the members' Downstream Context (see playbook.go).
//
// Plan applies patches in memory, all or nothing, naming the hunk that no longer fits.
// Unified diffs are parsed with github.com/bluekeyes/go-gitdiff; application is our own
// because that library places zero-context insertions ("@@ -N,0") before line N instead of
// after it, and cannot follow lines that moved.
package converge
