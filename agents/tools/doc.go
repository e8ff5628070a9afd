// Package tools holds the tools a subagent may call, confined to the workspace.
//
// A Sandbox is rooted at one workspace directory (resolved to an absolute, symlink-free path).
// Sandbox.Call takes a canonical tool name and the raw JSON argument object the model wrote;
// malformed JSON, wrong types, missing or unknown keys all give an error Result, never a panic.
//
// Tools and arguments:
//
//	read_file            {path, offset?, limit?}       offset: first line (0-based); limit: lines
//	glob                 {pattern, path?}              doublestar pattern under path (default ".")
//	search_file_content  {pattern, path?, include?}    RE2 pattern; include: doublestar file filter
//	write_file           {path, content}
//	replace              {path, old_string, new_string, expected_replacements?}  (default 1)
//	run_shell_command    {command, timeout_s?, description?}
//	web_fetch            {url}                         http and https only
//	web_search           {query}                       no backend: always an error result
//
// Confinement invariants:
//   - Every path is resolved inside the root: relative paths join the root, an absolute path
//     must already lie inside it, and the deepest existing ancestor is resolved with
//     EvalSymlinks and must stay inside the root (so "..", absolute paths, symlinked files and
//     symlinked directories that lead out are all refused). A final-component symlink is
//     resolved too, so write_file never writes through a link to outside. NUL bytes are refused.
//   - glob and search never follow symlinks while walking, skip .git, and honour .gitignore
//     files (root and nested).
//   - Writes are atomic: a temporary file in the same directory, then rename; an existing
//     file keeps its mode.
//   - run_shell_command runs `bash -c` in the root with stdin from /dev/null, in its own process
//     group, with the environment minus every variable whose name looks secret
//     (session.IsSecretEnvName). Cancellation or the timeout sends SIGTERM to the whole group,
//     then SIGKILL two seconds later, so no child outlives the call.
//   - Every result is capped at Options.MaxResult bytes (cut on a UTF-8 boundary, with a marker
//     giving the full size) before it reaches a model or the log; shell output is capped while
//     it is read, so a flood never sits in memory.
package tools
