//go:build unix

package gitws

import "syscall"

// settle flushes dirty pages, so one benchmark iteration does not pay for the writeback of the
// files the previous one wrote and removed.
func settle() { syscall.Sync() }
