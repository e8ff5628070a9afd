//go:build !unix

package gitws

import (
	"os"
)

// lockSession creates a session's lock file. Without flock, liveness is judged by the pid the
// record holds (see sessionLive).
func lockSession(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

func unlockSession(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// sessionLive reports whether the process that wrote the record still exists (on Windows,
// FindProcess fails for a process that has exited). A reused pid reads as live: safe, not clean.
func sessionLive(_ string, rec record) bool {
	if rec.Kept || rec.PID <= 0 {
		return false
	}
	p, err := os.FindProcess(rec.PID)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
