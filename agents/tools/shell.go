package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/summit-dev/summit/session"
)

// capWriter keeps the first max bytes and counts the rest, so a flood of output never sits in
// memory.
type capWriter struct {
	mu    sync.Mutex
	buf   []byte
	max   int
	total int
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total += len(p)
	if room := w.max - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (s *Sandbox) shellEnv() []string {
	var env []string
	for _, kv := range s.o.Environ {
		k, _, _ := strings.Cut(kv, "=")
		if !session.IsSecretEnvName(k) {
			env = append(env, kv)
		}
	}
	return env
}

func shellTool(ctx context.Context, s *Sandbox, a args) Result {
	command := a.str("command")
	if strings.TrimSpace(command) == "" {
		return errResult("run_shell_command: command is empty")
	}
	timeout := s.o.ShellTimeout
	if n, ok := a.num("timeout_s"); ok {
		if n <= 0 {
			return errResult("run_shell_command: timeout_s must be positive")
		}
		timeout = min(time.Duration(n)*time.Second, timeout, 600*time.Second)
	}
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = s.root
	cmd.Env = s.shellEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &capWriter{max: s.o.MaxResult}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return errResult("run_shell_command: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var err error
	why := ""
	select {
	case err = <-done:
	case <-ctx.Done():
		why = "cancelled"
	case <-timer.C:
		why = fmt.Sprintf("timed out after %s", timeout)
	}
	if why != "" {
		// The whole process group: bash and every child it started.
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(2 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			err = <-done
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // children that ignored SIGTERM
	}
	out.mu.Lock()
	text := capText(string(out.buf), out.total, s.o.MaxResult)
	out.mu.Unlock()
	switch {
	case why != "":
		return Result{Output: text + "\n[" + why + "; the process group was killed]", IsError: true}
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return Result{Output: text + fmt.Sprintf("\n[exit code %d]", ee.ExitCode()), IsError: true}
		}
		return Result{Output: text + "\n[" + err.Error() + "]", IsError: true}
	}
	return Result{Output: text}
}

func webFetch(ctx context.Context, s *Sandbox, a args) Result {
	u := a.str("url")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return errResult("web_fetch: %q is not an http or https URL", u)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return errResult("web_fetch: %v", err)
	}
	resp, err := s.o.HTTPClient.Do(req)
	if err != nil {
		return errResult("web_fetch: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.o.MaxResult)+1))
	if err != nil {
		return errResult("web_fetch: %v", err)
	}
	if resp.StatusCode/100 != 2 {
		return errResult("web_fetch: %s answered %s", u, resp.Status)
	}
	return Result{Output: string(body)}
}
