package live

import (
	"strings"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// inbox answers /inbox with every decision the tree waits for, oldest first, and the
// command that settles each (the workbench opens its inbox instead).
func (x *Orchestrator) inbox(line string, c commands.Inbox) (Reply, error) {
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	items := session.WaitingItems(x.state)
	if len(items) == 0 {
		return Reply{Output: "inbox: nothing waits for you"}, nil
	}
	var b strings.Builder
	b.WriteString("inbox: " + session.Plural(len(items), "item") + " waiting, oldest first\n")
	for _, w := range items {
		hint := "/approve " + w.ID + " [--scope subagent] · /deny " + w.ID + " [--reason <text>]"
		if w.Review {
			hint = "/resolve " + w.ID + " --choose <side>"
		}
		b.WriteString("  " + render.WaitingText(x.state, w) + "\n    " + hint + "\n")
	}
	return Reply{Output: b.String()}, nil
}
