// Package imports reads the session files of other agent tools — Claude Code, Codex and
// Gemini CLI — and writes each session as a summit recording (`summit import`). It has one
// job: foreign formats in, summit events out. The events go through record.Recorder (so
// secrets are redacted as in a live session) into a temporary file beside the destination,
// each folded with session.Apply as it is appended, and the file is renamed into place only
// when every event folded: a session that cannot be read leaves no recording behind.
//
// # The recording
//
//   - Session id: "s-<format>-<source session id>" (only [A-Za-z0-9._-] kept, at most 64 of
//     them), so importing a session again writes the same file; the file is <id>.jsonl.
//   - SessionStarted: workspace = the source's cwd; permission_mode = the source's first mode
//     (acceptEdits when it names none); provider = the model provider; program_version =
//     "summit import (<tool> <version>)"; config.imported_from = {format, tool, path (absolute),
//     session_id, tool_version}. No new event type or field.
//   - The tool's main agent is sa-1, agent_type claude-code, codex or gemini-cli, agent_name
//     "main", its task the first prompt. Each foreign subagent is a SubagentSpawned with
//     parent_subagent_id = the summit id of the agent that started it (at any depth), its
//     agent_type the source's (Explore, general-purpose, worker, codebase_investigator…),
//     agent_session_id the source's id of its transcript. Ids are given depth first in spawn
//     order. Every agent gets SubagentActive, ModelRouted (the source's model, why "imported:
//     …"), its transcript, SubagentChanges when it edited files, and SubagentStop (tokens
//     summed from the source, tool calls counted, outcome from the source or success), and the
//     session ends with SessionEnded reason "imported".
//   - Times are the source's. Each agent's events are made non-decreasing (an event earlier
//     than the one before it takes that one's time), a subagent starts at its spawning tool
//     call (or its first line) and no earlier than its parent, and a parent stops no earlier
//     than its children; the streams are then merged by time into one seq order, which the fold
//     accepts (a child spawns while its parent runs). Lines without a time take the previous.
//   - User prompts are UserNotes to the agent (subagent_id set); model text is a transcript
//     message, thinking a thinking event, tool calls and results tool_call / tool_result, API
//     errors error events.
//   - File edits: the diff goes into the edit's tool_result text, and all of an agent's edits
//     into one SubagentChanges before its stop: per file the kind (added, modified, deleted,
//     renamed), the lines added and removed, and the edits' diffs in order (each against the
//     file as it was then, so together a history, not one patch git could apply; cut past 64
//     KiB per file with truncated set). base is "imported" and base_commit / result_commit are
//     empty: nothing was committed, so replay and --print show the changes but /apply cannot
//     land them.
//   - Permissions the source records become PermissionRequested (request ids pr-1, pr-2, …)
//     and PermissionGranted / PermissionDenied by "user"; a request the source never answered
//     whose call did not run is denied at the agent's stop with reason "imported: no decision
//     recorded…".
//   - Anything else the source holds is kept: as a transcript message "[imported: <what>]
//     <text>" (system lines, injected context, unknown line types with their first 2 KiB), a
//     session UserNote "[imported: <what>] …" (summaries, titles, rewound messages, malformed
//     lines skipped with Lenient, a torn last line), or, for lines that only repeat others or
//     carry bookkeeping, a count in the closing note "[imported: summary] not replayed one by
//     one: N <kind>; …". Nothing is dropped without being counted.
//
// # Claude Code
//
// ~/.claude/projects/<project>/<session>.jsonl, one JSON object a line, with the subagents in
// <session>/subagents/agent-<id>.jsonl and agent-<id>.meta.json ({"agentType", "description"};
// Claude Code 2.1.2 and later), in agent-<id>.jsonl beside the session whose lines name its
// sessionId (2.0.x), or as isSidechain lines in the session file itself (1.0.x: grouped by
// agentId, else by their parentUuid chain).
//
//   - user: string content or text blocks → UserNote (isMeta → "[imported: meta]",
//     isCompactSummary → "[imported: compact summary]"); tool_result blocks → tool_result
//     (the tool named by its tool_use); a result refused by the user ("doesn't want to
//     proceed…") → PermissionRequested + PermissionDenied; toolUseResult {filePath,
//     structuredPatch} of Edit/MultiEdit/Write (type "create": the content as added lines) →
//     an edit; toolUseResult.agentId of a Task/Agent call → links that subagent; permissionMode
//     → the agent's mode (a later change is a note).
//   - assistant: text → message, thinking → thinking, tool_use / server_tool_use → tool_call,
//     *_tool_result blocks → tool_result; message.usage counted once per message.id (Claude
//     Code repeats it on each content-block line; the last counts), input = input +
//     cache_creation + cache_read tokens; message.model → ModelRouted; isApiErrorMessage →
//     error. redacted_thinking is counted.
//   - Task/Agent tool_use: the subagent it started (by toolUseResult.agentId, by a progress
//     line's parentToolUseID and data.agentId, or, for 1.0.x sidechains, by its first prompt)
//     gets parent = the calling agent, spawn time = the call's, agent_type = subagent_type
//     (general-purpose when none; the meta file's agentType wins), name = description, task =
//     prompt; toolUseResult.status failed/cancelled → that outcome.
//   - system → "[imported: system] <subtype>: <content>" (level error → an error event);
//     summary, custom-title, ai-title, agent-name → session notes; progress, file-history-
//     snapshot, queue-operation, last-prompt, attachment, pr-link, permission-mode,
//     agent-setting, bridge-session, worktree-state → counted; any other type → kept as a note.
//
// # Codex
//
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl: lines {"timestamp", "type",
// "payload"}. Rollouts before that wrapper (mid 2025) start with {"id", "timestamp",
// "instructions"} and hold bare response items and {"record_type":"state"} lines; both are read.
// A spawned thread has its own rollout whose session_meta.source is {"subagent":
// {"thread_spawn": {"parent_thread_id", "depth", "agent_nickname", "agent_role"}}}; the rollouts
// in the session's folder whose parent is in the tree are its subagents, at any depth.
//
//   - session_meta → the session (id, cwd, cli_version, model_provider) or a subagent (type =
//     agent_role, name = nickname); turn_context → the agent's model and mode (sandbox
//     read-only → plan, workspace-write → acceptEdits, danger-full-access → bypassPermissions;
//     a later change is a note), otherwise counted.
//   - response_item: message user → UserNote (the context Codex injects — environment_context,
//     user_instructions, AGENTS.md — and developer/system messages → notes), assistant →
//     message; reasoning summary and content → thinking (encrypted only → counted);
//     function_call, custom_tool_call, local_shell_call, web_search_call → tool_call (arguments
//     decoded); function_call_output, custom_tool_call_output → tool_result (the older
//     {output, metadata.exit_code} string unwrapped; a non-zero exit or success:false is an
//     error); apply_patch (custom tool, function, or shell ["apply_patch", patch]) → edits from
//     its patch, kept when the patch applied.
//   - event_msg: token_count → the agent's tokens (the last total_token_usage); exec/patch
//     approval requests → PermissionRequested, granted when the call then runs, denied when its
//     output says it was rejected; patch_apply_end → settles the edits (its changes map when
//     the call's patch was not seen); collab_agent_spawn_end → links the new thread (parent,
//     spawn time of the spawn_agent call, role, nickname, prompt); other collab_* → notes;
//     error, stream_error → error; turn_aborted, warning, context_compacted and the like →
//     notes; user_message, agent_message, agent_reasoning*, exec/patch/mcp/web-search begin
//     and end, task and turn markers → counted (they repeat response items); any other → note.
//   - compacted → a note with its message.
//
// # Gemini CLI
//
// ~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.jsonl (April 2026 on): a metadata
// line {sessionId, projectHash, startTime, kind}, message records {id, timestamp, type,
// content, toolCalls, thoughts, tokens, model}, {"$set": …} metadata updates and {"$rewindTo":
// id} rewinds; a record whose id was seen replaces that message, and a rewind drops the
// messages from the one it names on (each kept as a session note "rewound"). Before that, the
// same ConversationRecord as one JSON document, session-*.json. /chat save checkpoints
// (checkpoint-<tag>.json) are the model history, a list of {role, parts}, with no times (the
// file's modification time is used). A subagent's chat is chats/<parent session id>/<id>.jsonl
// (or .json, whole-JSON);
// a chat named <tool>-<suffix> is the subagent that tool call ran (type = the tool, spawn time
// = the call's).
//
//   - user → UserNote; gemini → thoughts ("**subject** description") → thinking, text parts
//     → message, toolCalls → tool_call + tool_result (functionResponse output or error; status
//     error → an error result, cancelled → PermissionRequested + PermissionDenied; a successful
//     replace / write_file whose resultDisplay is a FileDiff {fileDiff, fileName,
//     originalContent, newContent} → an edit with that diff, added when there was no original
//     content), tokens →
//     summed, model → ModelRouted; error → error; info, warning → notes; other types → notes.
//
// # Headless outputs
//
// What the tools print when run in CI, saved to a file, one JSON event a line; detected by
// content (--format auto) and read as the tool's format:
//
//   - codex exec --json: thread.started (the session id), item.completed items — agent_message
//     → message, reasoning → thinking, command_execution → shell call + result (error on a
//     non-zero exit), file_change → apply_patch call and edits (kind only: the output holds no
//     diff), mcp_tool_call → <server>.<tool>, web_search, todo_list → note, error → error,
//     collab_tool_call spawn_agent → a subagent per receiver thread (task = its prompt; the
//     output holds none of its work) — turn.completed usage → tokens, turn.failed → failure;
//     item.started / item.updated and turn markers counted. The prompt is not in the output.
//   - claude -p --output-format stream-json (with or without --verbose): snake_case lines —
//     system init (session id, cwd, model, permission mode, version), assistant / user lines
//     read like the transcript's, a line with parent_tool_use_id is the Task subagent's that
//     call started (keyed by the call id), result → a note with its text (an error subtype →
//     failure), stream_event partial messages counted.
//   - gemini -p --output-format stream-json: init, message (user → prompt; assistant deltas
//     joined into one message), tool_use / tool_result, error (warning → note), result (stats
//     → tokens, status error → failure).
//
// A source with no time at all takes the file's modification time.
//
// # Dropped and copied lines
//
// A subagent file's lines whose uuid the session already held, or whose tool call another
// agent made (an aside question forks the whole history into its file), are counted, not
// replayed: the subagent holds only its own work. Claude Code agent_progress lines carry the
// messages of a running subagent; for a subagent with no file of their own (2.1.3x) they are
// its transcript (repeats by uuid counted), otherwise they are counted. A forked Codex thread's
// rollout starts with its parent's history up to the parent's spawn_agent call; it is counted
// when the parent is imported with it, and kept as notes "[imported: history copied from the
// parent thread]" when the thread is imported alone. Empty thinking and text blocks are counted.
//
// # Sources named twice, alone
//
// Plan imports each file once however often it is named (by a folder and by itself, or by a
// glob naming a session and its subagent files): a file that is a child of a unit is not a unit
// of its own. A subagent file named alone is its own session: its lines are the main agent's,
// its first prompt its task, the session id "<parent session id>-agent-<agent id>" (Claude
// Code), and a note "[imported: parent missing]" (Claude Code) or "[imported: parent thread]"
// (Codex) says whose it was.
//
// A --format that the content does not match is an error naming the file and the format it
// looks like; nothing is written. Named pipes, sockets and devices are refused by their mode
// before any open (an open of a FIFO without a writer blocks), and files are opened with
// O_NONBLOCK and checked again.
//
// # Bad input
//
// A source line is at most MaxLineBytes (64 MiB) and a file at most MaxFileBytes: past them
// the file fails with its line. A malformed line fails its file with "file:line: malformed
// JSON …" (with Options.Lenient it is skipped and noted); a torn last line (a tool killed
// mid-write) is skipped with a warning. A file whose format cannot be told fails naming the
// formats tried.
//
// # Streaming: memory and speed
//
// An import holds per source event about 4-6 bytes, never the event (its time and spool
// offset, each as a zigzag varint of its difference from the agent's previous event), and
// per Gemini CLI message 8 read in one pass (its id's hash) or about 60 in two (16 packed,
// the rest its id's entry in a map), so what grows with the file is small and the write holds only the batches in flight (a 1 GB
// Claude Code session imports in about 210 MB of RSS, 65-70 MB of it the binary's own
// pages). Nearly everything an import allocates is garbage at once, so `summit import` turns
// the GC's pacing off (debug.SetGCPercent(-1)) under a 160 MiB soft Go memory limit
// (debug.SetMemoryLimit): the heap fills to the limit and is collected then, instead of at
// every doubling of a small live heap. An explicit GOMEMLIMIT (or GOGC) wins. The limit is a
// backstop, not a cap: past it the GC only runs more often.
//
//   - Source files are read a 1 MiB block at a time (readLines). The lines of a block are
//     decoded on every core (goccy/go-json into structs of the fields the mapping reads; a
//     Claude Code line's toolUseResult with it) while the previous block is mapped, in order,
//     on one goroutine; decoding copies what it keeps, so a block is reused once mapped. A
//     Gemini CLI content (a string, a part or a list of them) and a function response are
//     read by hand in the shapes Gemini CLI writes (gmparts.go: jsonScan, eight bytes at a
//     time through strings): the general decoder's exact shortcut, which declines anything
//     it would not read the same (a key in another case or twice, a null, a nested list, a
//     string to unescape is unescaped by the general decoder) and leaves it, errors and all,
//     to the general decoder (FuzzGmPartsFast, TestGmPartsFastMatches).
//   - Each event the mapping makes goes at once to the spool, one unlinked temporary file in
//     $TMPDIR (os.TempDir; it needs about the recording's size there), spool.go: a kind byte
//     and length-prefixed fields, tool arguments as the source's raw JSON, decoded only when
//     written. An agent keeps its events' times and spool offsets as delta varints in
//     chunks (evList, read forward only: an event earlier than the one before takes its
//     time as the stream is read, not by rewriting the list); what later lines look up is kept by a 64-bit hash of the id (uuids in
//     a sorted list, tool calls in a map with interned names), never as a string that would
//     keep its line alive. Edits are folded into the agent's changes as they come (at most
//     64 KiB of diff per file); agent_progress lines wait in the spool until the end says
//     whether their subagent has a file of its own.
//   - Gemini CLI JSONL chats are read in one pass (gmReader.stream): each line is decoded
//     whole once, on every core, with its texts worked out there; a later record with the
//     same id replaces a message and a rewind drops messages, so the last gmWindow (1,024)
//     messages, at most 16 MiB of lines, are held decoded, and an older one is final and is
//     mapped. Only the held messages' ids are kept by position; each record that starts a
//     message lists its id's hash, and an id listed twice once the chat is read is a record
//     that named a message no longer held. Gemini CLI rewrites only the message it is
//     writing, so that is every chat it writes; a record that changes a message already
//     mapped (a rewind far back, a hand-edited file) reads the session again the old way, in
//     two passes: records spools
//     the lines a 1 MiB block at a time (one write a block, each message found by offset
//     and length), decoding only ids, rewinds and metadata, and replay decodes the surviving
//     messages on every core, a batch ahead of the mapping. Both ways write the same bytes
//     (TestGeminiOnePassMatchesTwo, 60 random chats); a record that is JSON but not a
//     message fails once the chat is read, at its line, either way. The whole-JSON sessions
//     of Gemini CLI before JSONL are streamed (encoding/json's Decoder walks the top-level
//     object; each element of "messages" is spooled as its raw JSON and replayed), so memory
//     holds one message at a time. /chat save checkpoints (a list of {role, parts}, written
//     by hand-sized saves) are read whole.
//   - When every file is read, the tree and times are settled on the 16-byte records and the
//     recording is written in three stages (encode.go): one goroutine merges the agents'
//     streams (a heap of their heads, each stream read forward from the spool) into batches
//     of 256 events with their seq (a batch the caller is done with comes back with its
//     buffers, so their room is grown once, not for every batch); every core decodes a batch's spooled records and encodes
//     its events as the recorder writes them (record.Recorder.Encode: encoded, secrets
//     redacted, cut, respelled; each line whole, so redaction sees every secret entire);
//     the caller takes the batches back in seq order, appends the lines
//     (Recorder.AppendEncoded) and folds each event into a counting state
//     (session.State.SetCountOnly: the same fold and errors, nothing kept per transcript
//     event; SetForgetDecided: a decided permission request is dropped, the import's ids
//     pr-1, pr-2, … being unique by construction). Session notes (Gemini's rewound
//     messages: one per rewound message) are sorted in place and streamed from that list.
//     The closing note counts at most 256 kinds of unknown line one by one, the rest
//     together, so a source with a new type on every line does not grow it. The file is byte for byte what appending the events one by one writes.
//
// Figures: testdata/perf/import.sh COUNT SIZE_MB FORMAT builds SIZE_MB from a fixture
// repeated with varied ids and times `summit import` beside `jq -c .` on the same file,
// medians of COUNT, and an import with GOMAXPROCS=1 (MEMORY_ONLY=1: the imports alone, for
// the peak RSS of a 1 GB input); BenchmarkImport*Fixture do the same at 40 MB in
// `go test -bench`. Measured on a shared 2-core machine whose load moves the absolute rates,
// so only the ratios in one run compare (see the README's import section for the figures).
package imports
