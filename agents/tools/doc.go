// Package tools implements the tools a subagent may call, confined to the workspace.
//
// A Sandbox is rooted at one workspace directory, resolved once to an absolute, symlink-free
// path. Sandbox.Call takes a canonical tool name and the raw JSON argument object the model
// wrote. Malformed JSON, a value of the wrong type, a missing required key or an unknown key
// each give an error Result that names the problem; bad input never panics. A null optional
// value counts as absent. Specs describes the tools to a model, with JSON Schemas built from
// the same declarations that decode and check the arguments.
//
// # Arguments
//
//	read_file            {path, offset?, limit?}    offset: first line, 0-based; limit: number of lines
//	glob                 {pattern, path?}           doublestar pattern relative to path (default ".")
//	search_file_content  {pattern, path?, include?} RE2, matched line by line; include: glob filter
//	                                                (no "/": on file names at any depth; else relative to path)
//	write_file           {path, content}
//	replace              {path, old_string, new_string, expected_replacements?}  (default 1)
//	run_shell_command    {command, timeout_s?, description?}
//	web_fetch            {url}                      http or https, GET
//	web_search           {query}                    no backend: always an error result
//
// Paths are relative to the root (an absolute path inside the root is accepted too); results
// name files by workspace-relative slash paths, and Result.Written lists what write_file and
// replace changed.
//
// A ranged read_file (offset or limit given) reads the file only up to the end of its range:
// the lines before it are counted a buffer at a time, and nothing after it is read, so its
// cost grows with the offset, not with the file. Its header is "[f: lines 3-4 of 5]" when the
// range reaches the end of the file, else "[f: lines 3-4; more follow, continue with offset 4]".
// The output holds whole lines: a range that would pass Options.MaxResult ends before the line
// that does not fit, and says where to continue; only a single line longer than that is cut.
//
// # Confinement invariants
//
//   - Every path argument is resolved before use: a relative path is joined to the root, the
//     result is cleaned, and it must lie inside the root (compared on a separator boundary,
//     so /ws2 is not inside /ws). Then every symlink along it is followed, including the
//     final component and a dangling link, with a missing tail joined as it is; the result
//     must still lie inside the root. So "..", absolute paths elsewhere, symlinked files and
//     symlinked directories that lead out are all refused, with a message naming the path
//     and saying it is outside the workspace. A path holding a NUL byte is refused.
//   - Every file operation then goes through an os.Root opened on the root, which refuses to
//     leave it even if the tree changes between the check and the use.
//   - glob and search_file_content never follow a symlink while walking (symlinks are
//     skipped), always skip .git directories, and honour .gitignore files at the root, in
//     the directories above the starting path and below it, with git's semantics (anchoring,
//     "**", directory-only patterns, "!" negation, last match wins).
//   - Writes are atomic: a temporary file in the same directory, then a rename. An existing
//     file keeps its permission bits. A write never goes through a hard link: the rename puts
//     a new file in place, and every other link to the old one keeps the old content.
//   - No tool reads the content of a regular file with more than one hard link (read_file and
//     replace refuse it, search_file_content lists it as not read, a .gitignore so linked adds
//     no rules): another link may be outside the workspace, and nothing says where the others
//     are. The message says so and points to the shell, which the user approves command by
//     command. The known cost: pnpm's node_modules are hard links into its store (as are
//     `cp -al` copies), so their files are out of read_file's and search's reach.
//   - Content is opened non-blocking and checked on the open descriptor (a regular file, one
//     link), so it cannot be swapped between the check and the read, and a FIFO or device is
//     refused instead of blocking.
//   - read_file, replace and search_file_content refuse or skip binary files (a NUL byte in
//     the first 8 KiB, or more than a tenth of it invalid UTF-8), and read_file refuses
//     directories, devices and FIFOs.
//   - run_shell_command runs `bash -c` in the root with stdin from /dev/null and its output on
//     a pipe, in a session of its own (see "Process confinement"), with Options.Environ
//     reduced to an allow-list (AllowEnv: PATH, HOME, the locale, TERM, TMPDIR, USER, the tool
//     caches' variables, and the names of Options.PassEnv). On timeout or cancellation the
//     group gets SIGTERM, then SIGKILL two seconds later; when the command ends by itself,
//     what is left of its group gets SIGKILL. No child outlives the call and no goroutine
//     outlives it either.
//   - Every Output is capped at Options.MaxResult bytes, cut on a UTF-8 boundary with a
//     trailing marker giving the full size, and is valid UTF-8. Shell output, file reads and
//     fetched bodies are capped while they are read, so a flood never sits in memory.
//
// # Process confinement
//
// Every process summit starts (the shell tool, hooks, MCP servers, ACP agents) goes through
// summit's own image again (confinedCommand: /proc/self/exe with SUMMIT_CONFINE_SPEC), which
// confines itself in an init function before it execs the command, so the confinement holds
// for the command and everything it starts and cannot be lifted by them. Two levels:
//
// The terminal guard (GuardedCommand; hooks, MCP servers of a session without isolation, the
// shell of a session without isolation: the user's own or trusted commands). The process starts with Setsid: a session
// of its own, so it has no controlling terminal and opening /dev/tty fails with ENXIO, and a
// process group named by its pid, so the group kill on timeout still reaches everything that
// stayed in it. Its stdin is /dev/null or a pipe, its stdout and stderr pipes, never summit's
// terminal. A seccomp filter makes ioctl(TIOCSTI) and ioctl(TIOCLINUX) fail with EPERM, even
// as root and even on a descriptor of the terminal it got somehow (the kernel lets root push
// input into any terminal: /proc/sys/dev/tty/legacy_tiocsti only covers the unprivileged).
// Landlock (where there is one) grants it reading and writing everything but /dev, of which
// only /dev/null, zero, full, random, urandom, tty, ptmx and /dev/shm: no pty of the user's by
// path (/dev/pts/N, or /proc/<pid>/fd/0 of a process that has one), no console, no disk.
// Without Landlock a guarded process can still write to a pty by path; it is the user's own
// command. The cost: seccomp and Landlock need no_new_privs, so nothing a guarded or jailed
// process runs gains privileges (sudo and other setuid programs run without them), and
// Landlock forbids mounting.
//
// The jail (Options.ConfineWrites; a subagent's shell, its ACP agent process and the MCP
// servers run for it, through Sandbox.ConfinedCommand and ConfinedCommandNet, which grants
// the network to one command besides Options.Network: an MCP server whose config says
// network: true). The session's shared MCP servers get it too, from a sandbox rooted at the
// server's own temp dir with Options.PrivateDir inside it: a read-only jail, writing only
// there (see agents/mcp, "Jails"). On top of the guard:
//
//   - Namespaces. Stage 1 starts stage 2 in new mount, PID and IPC namespaces, a network
//     namespace unless Options.Network, and, unless summit runs as root, a user namespace,
//     which makes the rest possible without privileges (same uid inside; the capabilities
//     stage 2 needs to mount live only in those namespaces and are dropped before the
//     command runs). Stage 2 is pid 1: it mounts its own /proc (summit and every other
//     process are invisible: kill -0 <summit pid> fails, /proc/<summit pid>/environ does not
//     exist), a /dev of its own (a read-only tmpfs with the harmless devices bound in, a
//     devpts instance of its own with its ptmx, so Gemini CLI's forkpty works and no other
//     pty exists, and an empty /dev/shm), brings up its own loopback (a test server of its
//     own works; the host's 127.0.0.1, a local `summit serve` included, is not there), runs
//     the command as its child and reaps orphans; when the command exits everything left in
//     the namespace is killed by the kernel, even a child that left the process group. A
//     kernel that refuses the namespaces leaves Landlock alone (below), and doctor says so.
//     Stage 1 exists because a Go program is multi-threaded (it cannot unshare a user
//     namespace) and because summit is not dumpable (HardenProcess), which keeps it from
//     writing a child's uid map; stage 1, freshly exec'd, is dumpable.
//   - Landlock. Read and execute everywhere but below Options.Hidden (the workspace's
//     .summit/, summit's config and data dirs, what summit knows of other workspaces and
//     subagents) and /dev; write only below the root, the per-call temp dir and the sandbox's
//     private directory (its caches), and the devices above (its own /dev/pts in the
//     namespace; without it, /dev/ptmx only: a pty from it is reached with TIOCGPTPEER, not
//     by path). Walking to a hidden path grants its siblings, never it; symlinks met get no
//     rule of their own (their target is granted where it is), so a symlink loop anywhere
//     (the workspace, TMPDIR, HOME, an ancestor of a hidden path) breaks nothing. Landlock
//     also forbids mount and umount, so the namespace's mounts cannot be undone, and its
//     scopes (ABI 6) refuse signals to processes outside the jail and connections to their
//     abstract unix sockets. Where there is no network namespace and no Options.Network,
//     Landlock's TCP rules (ABI 4) refuse every TCP connect and bind, and the seccomp filter
//     refuses IPPROTO_MPTCP sockets, which those rules do not see. UDP is not covered there.
//   - Capabilities. Root's CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_SYS_MODULE, CAP_SYS_RAWIO,
//     CAP_SYS_BOOT and CAP_MKNOD leave the bounding set. Landlock stops /proc/<pid>/mem of a
//     process outside the jail but, on the kernels tried, not /proc/<pid>/environ: the PID
//     namespace is what hides summit's environment from root; an unprivileged jail cannot
//     read it anyway, summit being not dumpable.
//   - Caches. The shared Go module and build caches are never writable (a poisoned module in
//     them is trusted by every later build on the machine). The subagent gets its own
//     GOCACHE, GOMODCACHE, npm, pip and XDG caches in the sandbox's private directory
//     (removed by Sandbox.Close, when the subagent stops), with
//     GOPROXY=file://<shared GOMODCACHE>/cache/download,<the user's GOPROXY>: modules come
//     from the shared cache's downloads without the network (and verified against go.sum as
//     any proxy's), so builds keep working offline; the cost is one extraction per subagent
//     and a cold build cache. cargo's registry is read only.
//   - git. In a linked worktree (summit's), git commit works: the subagent's copy of its
//     per-worktree git dir (<common>/worktrees/<id>: HEAD, index, logs) is mounted over the
//     real one in its namespace, and GIT_OBJECT_DIRECTORY points at objects of its own with
//     the shared objects as alternates, read only. So the user's HEAD, index, refs and
//     objects are never written and no existing object can be replaced; a branch or tag it
//     makes is refused (the common refs are read only). summit reads a worktree's changes
//     from its files, never from its HEAD, so these commits change nothing of that. Without
//     namespaces, git commit fails in the jail (the real git dir is not writable).
//   - No Landlock (ConfinementAvailable false; SUMMIT_SIMULATE_NO_LANDLOCK simulates it):
//     run_shell_command is refused with a message that says why and how to opt in
//     (Options.AllowUnconfined, --allow-unconfined-shell); opted in, the namespaces and the
//     seccomp filter still hold, the file system rules do not.
//
// ProbeConfinement starts a guarded or jailed process for real and reports what it could do
// (TIOCSTI on a pty summit hands it, opening that pty by path, /dev/tty, the network
// confinement had): summit doctor prints it. SUMMIT_SIMULATE_NO_NAMESPACES makes summit act
// as on a kernel that refuses the namespaces, for tests.
package tools
