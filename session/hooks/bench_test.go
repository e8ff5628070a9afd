package hooks

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
)

// BenchmarkRun is one hook run (bash -c true, a payload on stdin); BenchmarkBashReference is
// the bare exec of the same command, what the run costs at least.
func BenchmarkRun(b *testing.B) {
	r := New(Options{Environ: os.Environ()})
	dir := b.TempDir()
	payload := []byte(`{"hook_event_name":"SubagentStop"}` + "\n")
	for b.Loop() {
		if res := r.Run(context.Background(), provider.Hook{Command: "true"}, dir, payload, true); res.Outcome != session.HookOK {
			b.Fatal(res)
		}
	}
}

func BenchmarkBashReference(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		cmd := exec.Command("bash", "-c", "true")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
