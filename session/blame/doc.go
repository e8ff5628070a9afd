// Package blame says, for each line of a file as summit last left it, where the line came
// from: which subagent wrote it, through which convergence and which resolution, with that
// subagent's model, the seqs of the events involved and the tokens and cost of the subagent
// (summit blame FILE, /blame PATH in the workbench). It is pure: it reads a recording's events
// and nothing else (no git, no worktree); the caller may pass the file's current text to
// anchor the result to it.
//
// # How a line is traced
//
// The fold of the recording (session.Apply) is kept alongside, so each landing is read
// with the state it happened in:
//
//   - ChangesApplied of a subagent (source sa-N) lands the subagent's recorded change set
//     (SubagentChanges, or its ChangesRebased when it has one): every added line is that
//     subagent's.
//   - ChangesApplied of a convergence (source cv-N) lands the convergence's DeltaBatch
//     patches. Each added line of a patch is matched to the members whose own change set adds
//     the same text at the same place of the common base (the base line it is inserted
//     before: a convergence splits, merges and re-renders hunks, but that position does not
//     move). Members that added the same line are all named; a conflict of that convergence
//     covering the place names its resolution (method, choice, seq), and a line no member
//     wrote but the reviewer's own text (--choose edit) is the reviewer's. Without a
//     DeltaBatch (an apply review), the members' change sets are matched the same way.
//   - ApplyUndone puts the files of that apply back as they were before it (/undo takes back
//     only the last apply, so the maps kept at each apply are exact).
//   - A deleted file loses its lines; a renamed one keeps them under its new path.
//
// Line positions follow every applied diff hunk by hunk (lines before a hunk shift by the
// hunks above them), so the result is the landed lines with their line numbers, plus the
// context lines the diffs showed (summit did not write them: "unchanged"). Lines that no diff
// ever touched are unchanged too.
//
// # What the recording cannot say
//
// Edits made by hand between applies, and an apply merged over a workspace that had moved
// since the subagent's base, are not in the recording as lines. When the caller passes the
// file's current text, the traced lines are aligned to it (a longest common subsequence of
// the traced lines' text and the file's lines): a traced line found in the file keeps its
// origin at the line where it now is; one that is not there was changed since summit left it
// and is counted in Report.Lost. Without the text, lines whose text the diffs never showed are
// rendered as "(not in the recording)". A diff recorded cut (past 256 KiB) is followed up to
// its cut and noted.
package blame
