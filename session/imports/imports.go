package imports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Format names a foreign session format.
type Format string

// The formats Import reads. Auto detects the format of each file by its content.
const (
	Auto   Format = "auto"
	Claude Format = "claude"
	Codex  Format = "codex"
	Gemini Format = "gemini"
)

// Formats lists the concrete formats, in the order detection tries them.
var Formats = []Format{Claude, Codex, Gemini}

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case Auto, Claude, Codex, Gemini:
		return f, nil
	case "claude-code", "claudecode":
		return Claude, nil
	case "gemini-cli":
		return Gemini, nil
	}
	return "", fmt.Errorf("--format %q is not auto, claude, codex or gemini", s)
}

// agentType is the summit agent_type of a format's main agent.
func (f Format) agentType() string {
	switch f {
	case Claude:
		return "claude-code"
	case Codex:
		return "codex"
	case Gemini:
		return "gemini-cli"
	}
	return string(f)
}

// MaxLineBytes caps one line of a source file. A longer line is an error naming it, never a
// read of the whole line into a decoder: real sessions stay far below it (their largest lines
// are whole files read or written by a tool), so a longer one is damage.
const MaxLineBytes = 64 << 20

// MaxFileBytes caps one source file. JSONL files are read a block at a time; only a Gemini
// CLI whole-JSON session or checkpoint is read whole.
const MaxFileBytes = 4 << 30

// LineError is a source file that cannot be read, with the line where it fails (0: the file
// as a whole).
type LineError struct {
	Path string
	Line int
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

func lineErr(path string, line int, format string, args ...any) error {
	return &LineError{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Unit is one foreign session to import: its main file and the files of its subagents
// (Claude Code subagents/agent-*.jsonl and older agent-*.jsonl siblings, Codex child rollouts,
// Gemini CLI subagent chats). One unit makes one recording.
type Unit struct {
	Format Format
	Path   string
	// Children are subagent files found beside Path. Which agent each belongs under is read
	// from the files themselves.
	Children []string
}

// Plan expands paths (files or folders) into units. Folders are walked for the files each
// format writes; a subagent file whose main session is among them joins that session's unit
// instead of making a recording of its own. Errors name the path and stop nothing else.
func Plan(paths []string, format Format) ([]Unit, []error) {
	var units []Unit
	var errs []error
	seen := map[string]bool{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				err = errors.New("no such file or folder")
			}
			errs = append(errs, lineErr(p, 0, "%v", unwrapPath(err)))
			continue
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			// Checked before any open: opening a FIFO with no writer blocks.
			errs = append(errs, lineErr(p, 0, "%v", notRegular(fi)))
			continue
		}
		if !fi.IsDir() {
			if seen[absPath(p)] {
				continue
			}
			seen[absPath(p)] = true
			f, err := detectAs(p, format)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			u := Unit{Format: f, Path: p}
			u.Children = findChildren(u)
			units = append(units, u)
			continue
		}
		us, es := walk(p, format, seen)
		units, errs = append(units, us...), append(errs, es...)
	}
	return dedupe(units), errs
}

// dedupe keeps one unit per session file: a file named twice (by a folder and by itself, or
// by a glob that names a session and its subagent files) is imported once, in the unit of
// the session it belongs to.
func dedupe(units []Unit) []Unit {
	child := map[string]bool{}
	for _, u := range units {
		for _, c := range u.Children {
			child[absPath(c)] = true
		}
	}
	seen := map[string]bool{}
	var out []Unit
	for _, u := range units {
		k := absPath(u.Path)
		if child[k] || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, u)
	}
	return out
}

// detectAs is the format of the file at path: detected (format Auto), or the forced one when
// the content agrees. A forced format the content does not match is an error naming the file
// and what it looks like, so that nothing is written from a file read as what it is not.
func detectAs(path string, format Format) (Format, error) {
	got, err := Detect(path)
	if format == Auto {
		return got, err
	}
	if err != nil {
		var le *LineError
		if errors.As(err, &le) && strings.HasPrefix(le.Msg, "not a session file") {
			return "", lineErr(path, 0, "--format %s, but it is %s", format, le.Msg)
		}
		return "", err
	}
	if got != format {
		return "", lineErr(path, 0, "--format %s, but it looks like a %s session (%s); use --format %s or auto", format, got, looksLike(got), got)
	}
	return got, nil
}

// looksLike names what files of a format are.
func looksLike(f Format) string {
	switch f {
	case Claude:
		return "Claude Code JSONL"
	case Codex:
		return "Codex rollout JSONL"
	case Gemini:
		return "Gemini CLI chat or checkpoint"
	}
	return string(f)
}

// unwrapPath drops the path *os.PathError repeats: the caller names the file itself.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// walk finds the session files under dir. A file whose format cannot be told is an error
// only when it looks like a session file (by name); other files are not ours.
func walk(dir string, format Format, seen map[string]bool) ([]Unit, []error) {
	var files []string
	var errs []error
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, lineErr(p, 0, "%v", unwrapPath(err)))
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if n := d.Name(); strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".json") && !strings.HasSuffix(n, ".meta.json") {
			files = append(files, p)
		}
		return nil
	})
	// Children first: a file that is some unit's child is not a unit of its own.
	type cand struct {
		path string
		f    Format
	}
	var cands []cand
	for _, p := range files {
		if seen[absPath(p)] {
			continue
		}
		f, err := detectAs(p, format)
		if err != nil {
			if sessionName(p) {
				errs = append(errs, err)
			}
			continue
		}
		cands = append(cands, cand{p, f})
	}
	child := map[string]bool{}
	var units []Unit
	for _, c := range cands {
		u := Unit{Format: c.f, Path: c.path}
		u.Children = findChildren(u)
		for _, ch := range u.Children {
			child[ch] = true
		}
		units = append(units, u)
	}
	var out []Unit
	for _, u := range units {
		if child[u.Path] {
			continue
		}
		seen[absPath(u.Path)] = true
		for _, ch := range u.Children {
			seen[absPath(ch)] = true
		}
		out = append(out, u)
	}
	return out, errs
}

// sessionName reports whether a file's name is one the three tools give their sessions.
func sessionName(p string) bool {
	n := filepath.Base(p)
	return strings.HasPrefix(n, "rollout-") || strings.HasPrefix(n, "session-") || strings.HasPrefix(n, "agent-") ||
		strings.HasPrefix(n, "checkpoint-") || strings.HasSuffix(n, ".jsonl") && len(n) == len("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.jsonl")
}

// findChildren lists the subagent files that belong to u's session.
func findChildren(u Unit) []string {
	switch u.Format {
	case Claude:
		return claudeChildren(u.Path)
	case Codex:
		return codexChildren(u.Path)
	case Gemini:
		return geminiChildren(u.Path)
	}
	return nil
}
