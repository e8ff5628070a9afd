// Package render turns a folded session.State into text for people: the plain-text rendering
// of a session (Print, Render), which `replay --print` and the end of `run --script` write and
// compare byte for byte (TextSpool prints a recording of any size that way in bounded memory:
// the fold counts transcript items without keeping them, the spool keeps them and the log as
// streams, in a temporary file past a limit), the session metrics (ComputeMetrics),
// and the display helpers the workbench and the orchestrator share (StatusGlyph,
// FormatDuration, ChangeStat, WaitingText, ...). It only reads the state: the event schema
// and the fold are package session's.
package render
