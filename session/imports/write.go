package imports

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// Options configures Import.
type Options struct {
	// Lenient skips malformed lines (each kept as a note) instead of failing the file.
	Lenient bool
	// Environ is the environment whose secret values the recorder redacts (nil: os.Environ()).
	Environ []string
	// Written, when set, maps each recording written so far in this run to what was written: a
	// second source of the same session (a copy, a torn backup) replaces that recording only
	// when it holds more events, and is refused, naming both, otherwise. Import adds what it
	// writes.
	Written map[string]Result

	// twoPass reads Gemini CLI JSONL chats in two passes, as a chat that changes an old
	// message is read (tests compare the two ways).
	twoPass bool
}

// Result describes one written recording.
type Result struct {
	Path      string   `json:"path"`
	Source    string   `json:"source"`
	Format    Format   `json:"format"`
	SessionID string   `json:"session_id"`
	SourceID  string   `json:"source_session_id,omitempty"`
	Subagents int      `json:"subagents"` // foreign subagents, the main agent not counted
	Events    int      `json:"events"`
	Lines     int      `json:"lines"` // source lines read, subagent files included
	Notes     int      `json:"unknown_kept_as_notes"`
	Warnings  []string `json:"warnings,omitempty"`
}

// Read reads a unit into a session, ready to write.
func read(u Unit, opts Options) (*sess, error) {
	switch u.Format {
	case Claude:
		return readClaude(u, opts)
	case Codex:
		if fileStream(u.Path) == codexExec {
			return readCodexExec(u, opts)
		}
		return readCodex(u, opts)
	case Gemini:
		if fileStream(u.Path) == geminiStream {
			return readGeminiStream(u, opts)
		}
		return readGemini(u, opts)
	}
	return nil, lineErr(u.Path, 0, "unknown format %q", u.Format)
}

// MemLimit is the soft Go memory limit TuneGC sets.
const MemLimit = 160 << 20

// TuneGC sets the Go GC for a run of imports and returns what restores it. What an import
// holds is bounded by the sources' index (see "Streaming" in the package doc: a few bytes
// per event), and nearly all it allocates is garbage at once (decoded lines, encoded
// events). So the GC's pacing is turned off and a soft memory limit of MemLimit alone
// starts a collection: the heap fills to the limit and is collected then, rather than at
// every doubling of a small live heap (the GC's marking and stack scans were ~15% of a
// Gemini CLI import's CPU). The limit is a backstop, not a cap: past it the GC only runs
// more often. An explicit GOMEMLIMIT leaves both alone, an explicit GOGC the pacing.
func TuneGC() (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := debug.SetMemoryLimit(MemLimit)
	pacing := os.Getenv("GOGC") == ""
	var pct int
	if pacing {
		pct = debug.SetGCPercent(-1)
	}
	return func() {
		debug.SetMemoryLimit(limit)
		if pacing {
			debug.SetGCPercent(pct)
		}
	}
}

// Import reads u and writes its recording. out is a file (ending in .jsonl) or a folder, in
// which the recording is <session_id>.jsonl; an existing recording there is replaced, so
// importing a session again rewrites the same file.
//
// The recording is written to a temporary file beside its destination, every event folded
// with session.Apply as it is appended (the recorder's event, as a replay will read it), and
// renamed into place only when all of it folded: a failure leaves no file behind.
func Import(u Unit, out string, opts Options) (Result, error) {
	s, err := read(u, opts)
	if err != nil {
		return Result{}, err
	}
	defer s.sp.close()
	id := sessionID(s.format, s.sourceID, s.path)
	dest := out
	if filepath.Ext(out) != ".jsonl" {
		dest = filepath.Join(out, id+".jsonl")
	}
	prev, dup := opts.Written[dest]
	if dup && prev.Source != u.Path {
		// The fuller copy wins, whichever came first: the count is what write will record
		// (the events, the start, the summary note and the end).
		if s.build().total+3 <= prev.Events {
			return Result{}, fmt.Errorf("%s: the same session (%s) as %s, which holds more; kept that recording (import this file on its own to replace it)", u.Path, s.sourceID, prev.Source)
		}
	}
	res := Result{Path: dest, Source: u.Path, Format: s.format, SessionID: id, SourceID: s.sourceID,
		Subagents: len(s.agents) - 1, Lines: s.lines, Warnings: s.warn}
	if dup && prev.Source != u.Path {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: the same session (%s) as %s, which holds less: its recording is replaced by this one", u.Path, s.sourceID, prev.Source))
	}
	for _, n := range s.unknown {
		res.Notes += n
	}
	n, err := s.write(dest, id, opts)
	if err != nil {
		return Result{}, err
	}
	res.Events = n
	if opts.Written != nil {
		opts.Written[dest] = res
	}
	return res, nil
}

// write writes the recording to dest and returns the number of events.
func (s *sess) write(dest, id string, opts Options) (int, error) {
	mg := s.build()
	start, end := mg.start, mg.end
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return 0, fmt.Errorf("create %s: %w", filepath.Dir(dest), err)
	}
	tmp := fmt.Sprintf("%s.import-%d.tmp", dest, os.Getpid())
	os.Remove(tmp) // a leftover of a killed import with the same pid
	rec, err := record.OpenRecorderFile(tmp, record.RecorderOptions{Environ: opts.Environ})
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int, error) {
		rec.Close()
		os.Remove(tmp)
		return 0, err
	}
	// A counting state: the same fold, rules and errors, but it holds nothing per transcript
	// event, nor a decided permission request (the ids are pr-1, pr-2, … from s.permSeq,
	// unique by construction), so checking a recording of any length takes the same memory.
	st := &session.State{}
	st.SetCountOnly()
	st.SetForgetDecided()
	seq := uint64(0)
	appendEv := func(ts time.Time, sub string, d session.Data) error {
		seq++
		e := session.New(sub, d)
		e.Seq, e.TS, e.SessionID = seq, ts, id
		got, err := rec.Append(e)
		if err != nil {
			return err
		}
		if err := session.Apply(st, textless(got)); err != nil {
			return fmt.Errorf("%s: the recording would not replay: %w", s.path, err)
		}
		return nil
	}
	info := session.SessionStarted{
		Schema:         session.SchemaVersion,
		ProgramVersion: "summit import (" + s.format.agentType() + " " + s.version + ")",
		Workspace:      s.cwd,
		PermissionMode: s.perm,
		AllowedTools:   []string{},
		Provider:       s.provider,
		Config: map[string]any{"imported_from": map[string]any{
			"format": string(s.format), "tool": s.format.agentType(), "path": absPath(s.path),
			"session_id": s.sourceID, "tool_version": s.version,
		}},
	}
	if info.PermissionMode == "" {
		info.PermissionMode = "acceptEdits"
	}
	if err := appendEv(start, "", info); err != nil {
		return fail(err)
	}
	fold := func(e session.Event) error {
		if err := session.Apply(st, e); err != nil {
			return fmt.Errorf("%s: the recording would not replay: %w", s.path, err)
		}
		return nil
	}
	next, err := encodeMerged(mg, s.sp, rec, id, seq+1, fold)
	if err != nil {
		return fail(err)
	}
	seq = next - 1
	if sum := s.summary(); sum != "" {
		if err := appendEv(end, "", session.UserNote{Text: "[imported: summary] " + sum}); err != nil {
			return fail(err)
		}
	}
	if err := appendEv(end, "", session.SessionEnded{Reason: "imported", DurationMS: end.Sub(start).Milliseconds()}); err != nil {
		return fail(err)
	}
	if err := rec.Close(); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	if err := os.Rename(tmp, dest); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return int(seq), nil
}

// textless is e without what the model and the tools said: the fold's checks do not read it,
// and the import's state need not hold a copy of the whole session.
func textless(e session.Event) session.Event {
	switch d := e.Data.(type) {
	case session.TranscriptEvent:
		d.Text, d.Result, d.Args = "", "", nil
		e.Data = d
	case session.UserNote:
		d.Text = ""
		e.Data = d
	case session.SubagentChanges:
		d.Files = nil
		e.Data = d
	}
	return e
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
