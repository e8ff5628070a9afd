package live

import (
	"context"

	"github.com/summit-dev/summit/commands"
)

// conv is a convergence the orchestrator runs.
type conv struct {
	id      string
	settled *Event // fired when complete or waiting for review
}

func (x *Orchestrator) convergeCmd(ctx context.Context, line string, cmd commands.Command) (Reply, error) {
	return x.rejectf(line, cmd, "convergence is not available in this build yet")
}
