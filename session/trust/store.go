package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/summit-dev/summit/session/internal/atomicfile"
	"github.com/summit-dev/summit/session/record"
)

// maxStore bounds the store read (a bigger file is treated as damaged).
const maxStore = 4 << 20

// StorePath is the trust store: $XDG_DATA_HOME/summit/trust/workspaces.json, else
// ~/.local/share/summit/trust/workspaces.json (a relative XDG_DATA_HOME is ignored, as the
// XDG spec says).
func StorePath(getenv func(string) string) (string, error) {
	base := getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("no data directory for the workspace trust store: %w", err)
			}
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "summit", "trust", "workspaces.json"), nil
}

// Entry is one trusted workspace.
type Entry struct {
	Digest  string    `json:"digest"`
	At      time.Time `json:"at"`
	Covered []string  `json:"covered,omitempty"` // what was listed when the user trusted it
}

type storeFile struct {
	Version    int              `json:"version"`
	Workspaces map[string]Entry `json:"workspaces"`
}

func load(path string) (storeFile, error) {
	sf := storeFile{Version: 1, Workspaces: map[string]Entry{}}
	f, err := record.OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return sf, nil
	}
	if err != nil {
		return sf, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStore+1))
	if err != nil {
		return sf, err
	}
	if len(data) > maxStore {
		return sf, fmt.Errorf("%s is larger than %d bytes", path, maxStore)
	}
	var got storeFile
	if err := json.Unmarshal(data, &got); err != nil {
		return sf, fmt.Errorf("%s: %v", path, err)
	}
	if got.Workspaces != nil {
		sf.Workspaces = got.Workspaces
	}
	return sf, nil
}

func save(path string, sf storeFile) error {
	data, err := json.MarshalIndent(sf, "", "  ")
	if err != nil {
		return err
	}
	// The directory is summit's own: 0700 even when something made it wider.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, ".workspaces-*", data)
}

// Lookup is the store's entry for a workspace (its resolved path), if any.
func Lookup(path, workspace string) (Entry, bool, error) {
	sf, err := load(path)
	if err != nil {
		return Entry{}, false, err
	}
	e, ok := sf.Workspaces[workspace]
	return e, ok, nil
}

// Record remembers that the user trusts the workspace as a describes it, replacing an
// earlier entry.
func Record(path string, a Assessment, now time.Time) error {
	sf, err := load(path)
	if err != nil {
		// A damaged store is replaced: the trust it held is only asked for again.
		sf = storeFile{Version: 1, Workspaces: map[string]Entry{}}
	}
	sf.Workspaces[a.Workspace] = Entry{Digest: a.Digest, At: now.UTC().Truncate(time.Second), Covered: a.Items}
	return save(path, sf)
}

// Revoke forgets the workspace's trust; it reports whether there was any.
func Revoke(path, workspace string) (bool, error) {
	sf, err := load(path)
	if err != nil {
		return false, err
	}
	if _, ok := sf.Workspaces[workspace]; !ok {
		return false, nil
	}
	delete(sf.Workspaces, workspace)
	return true, save(path, sf)
}

// Trusted is one entry of List.
type Trusted struct {
	Workspace string
	Entry
}

// List is every trusted workspace, by path.
func List(path string) ([]Trusted, error) {
	sf, err := load(path)
	if err != nil {
		return nil, err
	}
	out := make([]Trusted, 0, len(sf.Workspaces))
	for ws, e := range sf.Workspaces {
		out = append(out, Trusted{ws, e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Workspace < out[j].Workspace })
	return out, nil
}
