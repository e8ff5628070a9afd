// Package inventory remembers the files that steer a session — agent definitions and config —
// as a session found them at its start, so the next session can name the ones that appeared or
// changed since.
//
// Summit reads agent files and config once, when a session starts; a file written during a
// session (by a subagent, an /apply, or the user) takes effect only in the next one. That next
// session must not take it silently: it compares what it finds with the inventory the last
// session left and names every file that is new, changed or removed, and whether it changed
// while that session ran.
//
// The inventory is one JSON file, <workspace>/.summit/inventory.json (mode 0600, written
// atomically), which no subagent tool can reach:
//
//	{"session": "s-…", "started": "2026-11-23T10:00:00Z", "ended": "2026-11-23T10:20:00Z",
//	 "files": [{"path": "/ws/.claude/agents/review.md", "size": 812, "sha256": "…",
//	            "mtime": "2026-11-20T09:00:00Z"}]}
//
// "ended" is set when the session closes; a session killed before that leaves it empty, and
// every later change then counts as during-or-after it.
package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"

	"github.com/summit-dev/summit/session/internal/atomicfile"
)

// File is one file as a session found it.
type File struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	SHA256  string    `json:"sha256"`
	ModTime time.Time `json:"mtime"`
}

// Inventory is the files one session started with.
type Inventory struct {
	Session string    `json:"session"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	Files   []File    `json:"files"`
}

// maxHashed bounds the bytes hashed of one file: agent files and config are capped far below
// it (a larger file is refused by its loader anyway), and a huge file must not stall a start.
const maxHashed = 4 << 20

// maxFile bounds the inventory file itself.
const maxFile = 8 << 20

// Take stats and hashes the regular files among paths (others are skipped: the loaders refuse
// them), sorted by path.
func Take(paths []string) []File {
	var out []File
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		f, err := record.OpenRegular(p)
		if err != nil {
			continue
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			continue
		}
		h := sha256.New()
		_, err = io.Copy(h, io.LimitReader(f, maxHashed))
		f.Close()
		if err != nil {
			continue
		}
		out = append(out, File{Path: p, Size: st.Size(), SHA256: hex.EncodeToString(h.Sum(nil)), ModTime: st.ModTime().UTC()})
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Path is where a workspace's inventory lives.
func Path(workspace string) string {
	return filepath.Join(workspace, ".summit", "inventory.json")
}

// Load reads an inventory. A missing file gives nil and no error (the first session).
func Load(path string) (*Inventory, error) {
	data, err := record.ReadRegular(path, maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var inv Inventory
	if err := json.Unmarshal(data, &inv); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &inv, nil
}

// Save writes inv to path atomically (a temporary file renamed over it), mode 0600.
func Save(path string, inv Inventory) error {
	data, err := json.MarshalIndent(inv, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, ".inventory-*", data)
}

// MarkEnded records when the inventory's session ended, if path still holds that session's
// inventory (a later session may have replaced it).
func MarkEnded(path, sessionID string, at time.Time) error {
	inv, err := Load(path)
	if err != nil || inv == nil || inv.Session != sessionID {
		return err
	}
	inv.Ended = at.UTC()
	return Save(path, *inv)
}

// Compare lists what changed between the last session's files and the ones found now: new,
// changed and removed files, in path order, each saying whether it changed while that session
// ran (its modification time falls between the session's start and end; with no end recorded,
// any time after the start).
func Compare(prev *Inventory, now []File) []session.AgentFileChange {
	if prev == nil {
		return nil
	}
	old := map[string]File{}
	for _, f := range prev.Files {
		old[f.Path] = f
	}
	during := func(t time.Time) string {
		if !t.Before(prev.Started) && (prev.Ended.IsZero() || !t.After(prev.Ended)) {
			return prev.Session
		}
		return ""
	}
	var out []session.AgentFileChange
	for _, f := range now {
		o, ok := old[f.Path]
		delete(old, f.Path)
		switch {
		case !ok:
			out = append(out, session.AgentFileChange{Path: f.Path, Change: session.FileNew, During: during(f.ModTime)})
		case o.SHA256 != f.SHA256 || o.Size != f.Size:
			out = append(out, session.AgentFileChange{Path: f.Path, Change: session.FileChanged, During: during(f.ModTime)})
		}
	}
	for _, f := range prev.Files {
		if _, gone := old[f.Path]; gone {
			out = append(out, session.AgentFileChange{Path: f.Path, Change: session.FileRemoved})
		}
	}
	slices.SortFunc(out, func(a, b session.AgentFileChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}
