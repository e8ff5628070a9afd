// Package gitws gives each writing subagent its own git worktree of the workspace, records what
// it really changed, and lands those changes back in the main workspace with a three-way merge
// that can be undone. It is the git layer of DESIGN.md §11 ("Isolation and real changes").
//
// Everything goes through the git command line (git >= 2.38, for merge-tree --write-tree); there
// is no git library and no hand-rolled merging. Every invocation runs with a clean environment
// (no system or global config, LC_ALL=C, no prompts, no hooks, fixed author, committer and dates)
// so that the same workspace gives the same commits.
//
// # The user's state is never touched
//
// HEAD, the index, branches, tags, every ref outside refs/summit/, the stash and the working tree
// are left exactly as they are (the working tree changes only through Apply and Undo), and no
// .git is ever created in a folder that is not a repository. The only writes inside the user's
// .git are: new objects; refs under refs/summit/<session>/; the metadata of summit's own linked
// worktrees (.git/worktrees/<id>, written by git worktree add and removed with them); and a line
// "/.summit/" (or "/<prefix>.summit/") appended to .git/info/exclude when missing. Snapshots are
// built in a temporary index file outside .git, seeded by copying the user's index (a copy keeps
// git's stat cache, so only changed files are hashed; its mtime is preserved so racy-git
// detection still holds) or, without one, read-tree HEAD.
//
// # Refs layout (in the user's repository, or the private git dir)
//
//	refs/summit/<session>/base-N          snapshot of the workspace a subagent started from
//	refs/summit/<session>/<name>/result   worktree <name> at its last Changes (parent: its base)
//	refs/summit/<session>/apply-N-pre     the workspace just before the N-th Apply (parent: base)
//	refs/summit/<session>/apply-N-post    the workspace just after it (parent: apply-N-pre)
//
// An Apply that wrote no file and that the session does not record (it refuses an empty apply)
// is taken back with Discard: its two refs go, and N is handed out again.
//
// A snapshot commit's parent is HEAD when there is one. Consecutive snapshots with the same tree
// share one base (subagents delegated while the workspace did not change share a base).
// Worktree names must not look like base-N or apply-N-… so their refs cannot collide.
//
// # On-disk layout (Options.CacheDir, default os.UserCacheDir()/summit)
//
//	<cache>/sessions/<session>/lock       record of a live session (JSON), flock-ed while it runs
//	<cache>/sessions/<session>/tmp/       temporary index files and merge-file inputs
//	<cache>/worktrees/<session>/<name>/   the linked worktree of subagent <name> (detached HEAD)
//	<cache>/repos/<hash>/                 private bare git dir of a non-git workspace; <hash> is
//	                                      the first 16 hex digits of sha256(absolute workspace path)
//
// A non-git workspace is snapshotted with GIT_DIR=<cache>/repos/<hash> and GIT_WORK_TREE=the
// workspace; the private dir's own index file is its stat cache. Apply stages files in
// <workspace>/.summit/tmp/ (same file system, so every file lands with a rename) and removes it.
//
// # A workspace in a subdirectory of a repository
//
// The whole repository work tree is snapshotted (so builds and tools that look for go.mod,
// package.json or .git at the top still work in the worktree), but the subagent is rooted at the
// corresponding subdirectory: Worktree.Root() is <worktree>/<prefix>. Changes reports only files
// under that subdirectory, with paths relative to it; paths changed outside it are listed in
// ChangeSet.Outside and never applied. Apply and Undo write only inside the workspace.
//
// # Worktree index refresh
//
// git (built without USE_NSEC, the default) re-hashes every file whose mtime is not older, in whole
// seconds, than the index; right after a checkout that is every file. AddWorktree therefore
// rewrites the new worktree's index once in the background a second later (git update-index
// --refresh), so a subagent's Changes does not pay ~0.3 s per 100 MB; Changes, Remove and Close
// wait for or call off that refresh.
//
// # Limits
//
//   - Index bits are honoured as git add honours them: edits to an assume-unchanged file are
//     not in a snapshot, and sparse-checkout (skip-worktree) files keep their index version.
//   - Global git config is not read, with one exception: the user's global excludes file
//     (core.excludesFile of ~/.gitconfig or $XDG_CONFIG_HOME/git/config, else
//     ~/.config/git/ignore) is passed explicitly, so snapshots leave out what git status does.
//     Filters defined only globally (git-lfs) do not run, so such files are snapshotted as they
//     sit in the work tree. The repository's own attributes and filters apply, as for git.
//   - Submodules are recorded as their commit and not checked out in worktrees; Apply refuses a
//     change to a submodule.
//   - Apply snapshots the workspace and then writes within milliseconds; an edit made in that
//     window by another program is not detected. A crash while Apply renames leaves the
//     displaced files in <workspace>/.summit/tmp/apply-*; apply-N-pre holds the state before.
//   - A subagent's shell can run git in its worktree. Its commits do not matter (Changes reads
//     the work tree), but branches, tags or stashes made there land in the user's shared refs:
//     keeping the shell from doing that is the job of the tools' confinement.
//
// # Cleanup
//
// Close removes the session's worktrees, its refs and its session dir, unless asked to keep them
// (--keep-worktrees); then its record stays, unlocked. Leftovers finds what sessions that are no
// longer running left behind (a crashed session's lock is no longer held) and GC removes it.
package gitws
