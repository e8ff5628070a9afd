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
//   - run_shell_command runs `bash -c` in the root with stdin from /dev/null, in its own
//     process group, with Options.Environ minus every variable whose name looks secret
//     (record.IsSecretEnvName). On timeout or cancellation the group gets SIGTERM, then
//     SIGKILL two seconds later; when the command ends by itself, what is left of its group
//     gets SIGKILL. No child outlives the call and no goroutine outlives it either.
//   - Every Output is capped at Options.MaxResult bytes, cut on a UTF-8 boundary with a
//     trailing marker giving the full size, and is valid UTF-8. Shell output, file reads and
//     fetched bodies are capped while they are read, so a flood never sits in memory.
package tools
