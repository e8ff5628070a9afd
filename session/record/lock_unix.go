//go:build unix

package record

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockWriter takes the recording's writer lock: an exclusive flock(2) on f, held until f is
// closed (the kernel drops it when the process dies, kill -9 included). One summit writes a
// recording at a time: a second (summit resume, a replay's reattach) on a recording whose
// summit still runs is refused instead of interleaving seqs with it.
func lockWriter(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrRecordingInUse
	}
	return err
}

// Busy reports whether a running summit holds path's writer lock (it is recording it now).
func Busy(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if err == nil {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	return errors.Is(err, unix.EWOULDBLOCK)
}
