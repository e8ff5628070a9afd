package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session/live"
	"github.com/summit-dev/summit/session/record"
)

// The replay's reattach (issue 29 item 8): `summit replay FILE` on the recording of a session
// that did not end while subagents still ran on remote runners asks whether to reattach them
// (ui/reattach.go: the user types "reattach" and enter; esc keeps the read-only replay). The
// answer yes ends the replay and runs the same resume as `summit resume FILE` (resumeOn, the
// workbench, live.ResumeStart): one implementation. NATS comes from replay's --nats, --creds
// and --insecure, else from runners: in the user config, as for resume.

// natsOnly are the NATS flags a replay takes for its reattach.
type natsOnly struct {
	url, creds string
	insecure   bool
}

func (n *natsOnly) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&n.url, "nats", "", "reattach: the NATS server of the runners a killed session's subagents still run on (default: runners: in the user config)")
	fl.StringVar(&n.creds, "creds", "", "reattach: NATS credentials (a .creds file, an nkey seed file, or a file of one line user:password)")
	fl.BoolVar(&n.insecure, "insecure", false, "reattach: allow NATS without credentials (loopback only)")
}

// endedTail reports whether path's last line is a SessionEnded (an ended session has nothing
// to reattach; its recording is not folded again for the question).
func endedTail(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	const tail = 4096
	off := max(0, fi.Size()-tail)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return false
	}
	b = bytes.TrimRight(b, "\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return bytes.Contains(b, []byte(`"type":"SessionEnded"`))
}

// reattachOffer is the fold of path when its session did not end and subagents of it still
// run on runners, with them named ("sa-2 on gpu-1 as job J"); nil when there is nothing to
// reattach (or the recording cannot be resumed: the replay shows why not, if anything; or a
// running summit is recording it: its session is live there, record.Busy).
func reattachOffer(path string) (*resumeFlags, []string) {
	if endedTail(path) || record.Busy(path) { // ended, or its summit is still running it
		return nil, nil
	}
	r, err := loadResume(path)
	if err != nil {
		return nil, nil
	}
	subs := live.Reattachable(r.state)
	if len(subs) == 0 {
		return nil, nil
	}
	return r, subs
}

// reattachWorkbench is the live workbench resumed on r's recording, as `summit resume FILE`
// opens it, after the replay's question was answered yes.
func reattachWorkbench(r *resumeFlags, n natsOnly, stderr io.Writer) error {
	f := &sessionFlags{workspace: ".", mode: "acceptEdits", parallel: 8, nats: n.url, natsCreds: n.creds, natsInsecure: n.insecure}
	f.resumeOn(r, false)
	return workbench(f, stderr, fmt.Sprintf("Reattached: resumed on %s.", r.path), nil)
}
