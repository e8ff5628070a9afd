package mcp

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// proc is a stdio server's process. summit owns its pipes and its Wait (rather than the
// go-sdk's CommandTransport) so that the exit status and the whole stderr are known once the
// process has exited, and so that stopping it can end its whole process group: a server run
// through npx or a shell leaves grandchildren that outlive a plain kill of the leader.
type proc struct {
	cmd    *exec.Cmd
	stdin  *os.File // ours: the write end of the server's stdin
	stdout *os.File // ours: the read end of the server's stdout
	stderr *tail
	exited chan struct{} // closed after Wait; state is set then
	state  *os.ProcessState
	once   sync.Once
}

// startProc starts cmd in a process group of its own with pipes for stdin and stdout. tmp,
// when not "", is the server's own temp dir: it is removed once the process has exited (or
// could not start).
func startProc(cmd *exec.Cmd, tmp string) (*proc, error) {
	rmTmp := func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		rmTmp()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		rmTmp()
		return nil, err
	}
	p := &proc{cmd: cmd, stdin: inW, stdout: outR, stderr: &tail{}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	// A grandchild holding stderr open must not keep Wait (and so the exit status) forever.
	cmd.WaitDelay = 2 * time.Second
	setGroup(cmd)
	err = cmd.Start()
	// The child has its ends now (or failed); ours would keep its stdin from reaching EOF and
	// our reads from seeing it exit.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		rmTmp()
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		rmTmp()
		close(p.exited)
	}()
	return p, nil
}

// pid is the process's id (and its group's).
func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop closes stdin (a stdio server's signal to exit), waits a little when polite, then kills
// the process group: first with SIGTERM, then SIGKILL. It returns once the leader has been
// reaped (or 5 s passed).
func (p *proc) stop(polite bool) {
	p.once.Do(func() {
		p.stdin.Close()
		if polite && !p.waitExit(2*time.Second) {
			signalGroup(p.pid(), false)
			p.waitExit(time.Second)
		}
		// Whatever the leader left behind goes too.
		signalGroup(p.pid(), true)
		p.waitExit(5 * time.Second)
		p.stdout.Close()
	})
}

func (p *proc) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// note is " (exit status 3); its stderr ends:\n…" once the process exited (it waits a moment
// for that: a server that hung up is usually exiting), or the stderr alone.
func (p *proc) note() string {
	var b strings.Builder
	if p.waitExit(time.Second) && p.state != nil {
		b.WriteString(" (" + p.state.String() + ")")
	}
	if t := p.stderr.last(); t != "" {
		b.WriteString("; its stderr ends:\n" + t)
	} else {
		b.WriteString("; it wrote nothing on stderr")
	}
	return b.String()
}

var _ io.Writer = (*tail)(nil)
