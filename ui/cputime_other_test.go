//go:build !linux

package ui

import "time"

var wall0 = time.Now()

// threadCPU and procCPU fall back to wall time where the CPU clocks are not read.
func threadCPU() time.Duration { return time.Since(wall0) }

func procCPU() time.Duration { return time.Since(wall0) }
