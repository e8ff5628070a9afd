package main

import (
	"fmt"
	"os"
	"time"
)

// startupTrace, when SUMMIT_STARTUP_TRACE names a file, is where the workbench appends a
// "<unix ns> <mark>" line at each step of its start: main (the package initialisers are
// done), wired (config, agents, tapes read and the session started), program (Bubble Tea
// starts), frame (the first frame is written to the terminal). testdata/perf/startup.sh
// reads them to say where the first frame's time goes. Unset, each mark is one comparison.
var startupTrace = os.Getenv("SUMMIT_STARTUP_TRACE")

func startupMark(mark string) {
	if startupTrace == "" {
		return
	}
	now := time.Now().UnixNano()
	f, err := os.OpenFile(startupTrace, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d %s\n", now, mark)
	f.Close()
}
