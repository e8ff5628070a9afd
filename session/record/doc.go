// Package record reads and writes session recordings, the JSONL files a session's events live
// in: the line codec (AppendLine, DecodeLine), the Recorder and the secret redaction it applies
// (Redactor, StreamRedactor), the streaming Reader, the prefix Index, LoadFile (a recording
// folded with session.Apply) and OpenRegular for every file summit reads. The event types,
// their payloads and the fold are package session's.
//
// # Wire format (schema v1)
//
// A recording is UTF-8 JSONL: one JSON object per line, each line ending in "\n":
//
//	{"v":1,"seq":17,"ts":"2026-11-22T10:00:00.123456Z","session_id":"s-01J…","type":"SubagentSpawned","subagent_id":"sa-2","data":{…}}
//
// The envelope keys always come first and in this order: v (schema version), seq (from 1, no
// gaps), ts (RFC 3339 UTC with microseconds), session_id, type, subagent_id (omitted when
// empty), then data (the typed payload, snake_case keys). Because the order is fixed, an index
// reads (offset, seq, type, subagent_id) from the line prefix without decoding the rest.
//
// One line, one event, holds at most MaxEventLine = 16 MiB (16,777,216 bytes) before its
// newline. Readers stop at the cap: a longer line is the error "line N: an event line longer
// than 16 MiB (the cap)" (skipped with Lenient), never a read of the whole line, so a damaged
// or hostile file costs memory in proportion to the cap, not to its longest line. A writer
// never produces a longer line: the Recorder cuts an event that would be longer (its longest
// string values halved until it fits, each ending "… [cut by summit: N bytes, over the line
// cap]") and returns the event as cut, which is what the caller folds and shows.
//
// # Durability and secrets
//
// The Recorder writes each event to the kernel before it is shown, fsyncs every 100 ms and at
// once on lifecycle events, and redacts secrets (API key shapes, bearer tokens, the values of
// *_API_KEY, *_TOKEN, *_SECRET and *_PASSWORD variables) before anything reaches the disk. The
// event it returns is the event as recorded, and that is what the caller folds. It holds the
// file open for the whole session and checks, after each sync tick with writes and at Close,
// that the path still names it: a recording replaced or removed during the session fails it
// with ErrRecordingReplaced instead of being silently trusted. A recording has one writer:
// OpenRecorderFile and ReopenRecorderFile take an exclusive flock(2) on it (unix; dropped
// when the file closes or its process dies, kill -9 included), so a recording a running summit
// writes is not reopened (ErrRecordingInUse: summit resume, a replay's reattach) and Busy
// tells a reader it is being written.
//
// A secret split across streamed token or thinking deltas is redacted whole: the orchestrator
// passes each subagent's deltas through a StreamRedactor, which holds back only a tail that
// could still become a secret ("sk", "Bearer ", the start of a secret value) until the next
// delta or the subagent's next event decides it. So a delta may be recorded shorter or later
// than the model sent it, never with a piece of a secret.
//
// # Reading
//
// The Reader streams. A torn last line (a crash mid-write) is reported and skipped; a
// malformed line elsewhere is an error naming its line number, or with Lenient skipped and
// counted. ForEach (and ReadAll, LoadFile, FoldFile on it) reads the same way on every core:
// one goroutine reads big chunks cut at newlines (ReadAll, LoadFile and FoldFile, which open
// the file, slice them from a mapping of it on Linux: no copy), GOMAXPROCS goroutines decode
// them, and the callback (the fold) runs on the caller's goroutine, in file order; a few
// chunks are in flight at once, so memory does not grow with the file. The lines the
// Recorder writes are decoded by hand (the envelope, and the payload of TranscriptEvent, nine
// lines in ten), anything else by the general JSON decoder, with the same results and errors.
// ReadOptions.NoText leaves out what the model and the tools said (inspect needs counts only).
//
// The Index is built from line prefixes so a viewer can seek and decode only what it
// shows; BuildIndexFile indexes a large file in two halves at once. Entries are packed
// (~12 bytes an event) and carry each line's offset and length (Index.Loc).
//
// A state whose transcript text stays in the recording (session.TextStore) reads it back
// through a FileSource (an open recording, as replay holds) or a PathSource (opened per read,
// as a live session's state uses while the recording grows). Recorder.NextOffset tells a
// live session where the line of the event it appends lies.
package record
