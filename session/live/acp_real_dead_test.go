package live

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/session"
)

// Codex pointed at a model endpoint where nothing listens (a wrong or dead base URL): it
// retries, says so, and gives up; summit shows its errors in the transcript as they come and
// fails the subagent soon after the agent's last one, naming the cause, instead of waiting
// out the subagent's timeout in silence.
func TestACPRealCodexDeadEndpoint(t *testing.T) {
	// Mostly waiting (Codex's reconnect loop, then summit's quiet limit): it runs beside the
	// package's other parallel tests rather than adding its 100 s to the serial ones.
	t.Parallel()
	bin := realNPMAgent(t, realCodexPkg, realCodexVersion, realCodexBin, realCodexBroken == "")
	c := newRealCase(t)
	c.ceiling = agents.ModeBypass
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close() // closed: every connection is refused

	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	// Codex's own retry budget, as a user has it (no request_max_retries/stream_max_retries).
	write(t, codexHome, "config.toml", `model = "gpt-5.1-codex"
model_provider = "dead"
check_for_update_on_startup = false

[model_providers.dead]
name = "dead"
base_url = "http://`+dead+`/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[analytics]
enabled = false
`)
	c.config(map[string]any{"codex-real": map[string]any{"command": bin, "env": map[string]string{
		"OPENAI_API_KEY": "test-key-not-secret-e2e", "CODEX_HOME": codexHome, "HOME": home,
	}}})

	os.Remove(c.rec)
	x := c.start(RealClock{})
	start := time.Now()
	accept(t, x, "/delegate write greeting.txt saying hello --agent-type codex-real --permission-mode bypassPermissions --timeout 300")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := x.WaitAll(ctx); err != nil {
		t.Fatalf("the subagent did not stop: %v", err)
	}
	took := time.Since(start)
	if err := x.Close("script_end"); err != nil {
		t.Fatal(err)
	}
	o := c.read(0, x, "")
	t.Logf("the run took %v", took)
	st := o.stop(t, "sa-1")
	// Its retries are in the transcript as they came; the run fails naming the error, within
	// a minute of the last of them (not at the 300 s timeout).
	var lastErr, failed time.Time
	for _, e := range o.events {
		if e.SubagentID != "sa-1" {
			continue
		}
		switch d := e.Data.(type) {
		case session.TranscriptEvent:
			if d.EventType == session.TranscriptError && strings.HasPrefix(d.Text, "the agent reports an error: Reconnecting") {
				lastErr = e.TS
			}
		case session.SubagentError:
			if strings.Contains(d.Error, "made no progress") && strings.Contains(d.Error, "Reconnecting") {
				failed = e.TS
			}
		}
	}
	if st.Outcome != session.OutcomeFailure || lastErr.IsZero() || failed.IsZero() || failed.Sub(lastErr) > 60*time.Second || took > 200*time.Second {
		o.dumpSubagents(t)
		t.Fatalf("outcome %s; last agent error at %v, failed at %v (took %v)", st.Outcome, lastErr, failed, took)
	}
}
