// Package atomicfile writes small state files (the inventory, the hooks trust store) so that a
// reader sees the old file or the new one, never a torn one.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data and a final newline to path through a temporary file in the same folder,
// renamed over path; the folder is made 0700 when missing, the file is 0600 (CreateTemp's
// mode). pattern names the temporary file (os.CreateTemp's pattern).
func Write(path, pattern string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
