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
// Real changes. A member with Changes (what summit recorded it really changed in its
// isolated worktree, session.SubagentChanges) contributes that change set, not its capsule's
// patch_suggestions; a capsule that claims other paths than it really changed (or claims
// patches while nothing changed) is noted; one that claims no patches is not (a claim of
// nothing is no mismatch, and noting it on every writer hid the real ones). A member whose
// Changes carry an Error is left out like a failed member. Members without Changes
// (read-only agents) propose through patch_suggestions as before. A recorded text edit is
// split into hunks like a proposal, so hunk conflicts come from real overlapping edits; every
// other file change (add, delete, rename, binary, symlink, cut diff) is taken or left whole,
// and two members' different whole changes of one path, or one member's whole change meeting
// another's edits of that path (a rename links its old and new path), are a file conflict
// (kind file, File set): modify versus delete, two different adds, rename versus modify or
// versus another rename, differing binaries (two binary changes whose content cannot be told
// equal, by the full blob id or binary patch in the diff, count as different). Mode changes
// of one path to different modes are a file conflict too; a mode change and another member's
// text edits of that file combine. Choices are each side's id and none: the chosen side's
// changes of those paths are taken whole.
//
// Bases. The engine cannot rebase: it compares diffs as recorded. Under merge, members whose
// Changes were made on different bases are not merged silently: each member that is not on
// the newest base (the highest base-N of the members with changes; Changes.BaseCommit, when
// set, decides what is the same base, since two base-N may share a snapshot) is one base
// conflict (kind base) whose sides are that member and the first member on the newest base.
// Taking the member keeps its changes as recorded against its older base (the three-way
// /apply checks them); taking the other side or none leaves them out, everywhere in the
// output. The caller (session/live) may instead rebase a member's changes with git onto the
// newest base first: it then passes the rebased change set as Changes and sets
// Member.Rebased, and the engine takes that member as being on the newest base. vote and
// consensus output one member's result and never merge across bases; they note when bases
// differ.
//
// Resolution: manual (every conflict is listed for review; no output until each is resolved),
// auto_accept_latest (the side that finished last), prefer_higher_confidence (the most
// confident side; a side without confidence, or a tie, falls back to manual with the reason).
//
// Choice edit (ChooseEdit, after none in the choices): the reviewer writes a hunk conflict's
// lines by hand. EditTemplate is the conflicted region with git's diff3 conflict markers (each
// side's lines for it, labelled by subagent id, and the base); ResolveEdit records the text
// (ConflictResolved.Content; Resolve refuses edit without it); Output replaces the region's
// base lines with it, merged with the file's other hunks, as a combined change (Sources
// "merged"), and the notes and the conflict list say the lines were edited by the reviewer.
// Only hunk conflicts that change one region of an existing file offer it (see edit.go).
//
// Playbook operations follow their member's whole change (issue 27). A member's Downstream
// Context describes the change it made, so under merge its playbook operations land only
// when every one of its change units lands: a choice that drops any of its hunks or file
// changes (another side here or another side's whole file, none, a base conflict leaving it
// out) drops its operations too, with a note. Taking sa-3 in the demo therefore leaves only
// sa-3's pattern, not two contradictory ones. An operation several members gave lands when
// one of them lands whole (a TAG counts only those); a hunk conflict settled by edit keeps
// both sides' operations (the reviewer's lines stand for both); operations that are the
// sides of a playbook conflict follow that conflict's choice; a member without changes keeps
// its operations. Each review outcome lists the operations that land and are dropped with
// the choice (ChoiceOutcome.PlaybookLands/PlaybookDrops), as far as that choice decides: the
// file's other conflicts and changes outside the file count as landing. Every resolution,
// automatic ones included, records the same: what it kept and dropped, the other sides'
// hunks that still land in the file with a region choice (ConflictResolved.AlsoLands), and
// the playbook operations kept and dropped; a vote or consensus choice records the chosen
// member's whole result as kept and the other sides' as dropped.
//
// Output is json (Document), markdown (Document.Markdown) or delta_batch: per-file unified
// diffs (hunks sorted, context trimmed so hunks never overlap) plus playbook operations in
// ACE's DeltaBatch shape built from the members' Downstream Context (see playbook.go). With
// recorded changes, the Patches hold only what a plain text patch can express (text edits,
// text adds and deletes); Result.Files holds the whole resolved change set, one FileChange
// per path (the winner's as recorded, or combined from hunks with a git-style diff), and
// Result.Sources says whose each is ("merged" for combined ones), so session/live can land
// it with git, taking a binary's or a cut diff's content from that member's result commit.
//
// vote and consensus compare members with recorded changes by their normalised change sets:
// files sorted by path, each as kind, path, old path, new mode and the diff's + and - lines
// (no @@ headers, index or context lines).
//
// Plan applies patches in memory, all or nothing, naming the hunk that no longer fits.
// Unified diffs are parsed with github.com/bluekeyes/go-gitdiff; application is our own
// because that library places zero-context insertions ("@@ -N,0") before line N instead of
// after it, and cannot follow lines that moved.
package converge
