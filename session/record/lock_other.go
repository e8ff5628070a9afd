//go:build !unix

package record

import "os"

// lockWriter takes no lock where flock(2) is missing: the recording's single writer is then
// the user's to keep (lock_unix.go).
func lockWriter(*os.File) error { return nil }

// Busy is always false where flock(2) is missing.
func Busy(string) bool { return false }
