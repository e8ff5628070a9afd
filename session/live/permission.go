package live

import (
	"fmt"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// request is a permission request waiting for a decision.
type request struct {
	id      string
	s       *sub
	tool    string
	ev      *Event // fired when decided
	settled bool   // guarded by Orchestrator.mu: the first decision wins
	granted bool
	reason  string
}

// approve records a PermissionRequested for a call that needs approval and waits for the
// decision: --approve in headless runs, else /approve or /deny. A subagent-scoped grant
// answers later calls of the same tool without asking. If the subagent stops first the
// request is denied, so none stays pending after its subagent.
func (x *Orchestrator) approve(s *sub, tool string, args map[string]any, reason string) (bool, string, error) {
	r, err := x.ask(s, tool, args, reason, func(d session.Data) error {
		_, err := x.emit(s.id, d)
		return err
	})
	if r == nil || err != nil {
		return err == nil, "", err
	}
	return x.await(s, r)
}

// ask records the request by record (a runner's request goes with its cursor: runner.go); nil
// when a subagent-scoped grant answers it at once.
func (x *Orchestrator) ask(s *sub, tool string, args map[string]any, reason string, record func(session.Data) error) (*request, error) {
	x.mu.Lock()
	if x.grants[s.id][tool] {
		x.mu.Unlock()
		return nil, nil
	}
	x.nextPR++
	r := &request{id: fmt.Sprintf("pr-%d", x.nextPR), s: s, tool: tool, ev: x.clock.NewEvent()}
	x.requests[r.id] = r
	x.mu.Unlock()
	return r, record(session.PermissionRequested{RequestID: r.id, Tool: tool, Args: args, Reason: reason})
}

// await waits for the decision of a recorded request.
func (x *Orchestrator) await(s *sub, r *request) (bool, string, error) {
	tool := r.tool
	if p := x.o.Approve; p != "" {
		grant := p == ApproveAll || p == ApproveShell && tool == "run_shell_command"
		x.mu.Lock()
		r.settled, r.granted = true, grant
		x.mu.Unlock()
		if grant {
			_, err := x.emit(s.id, session.PermissionGranted{RequestID: r.id, Scope: commands.ScopeOnce, By: "--approve " + p})
			return true, "", err
		}
		why := "headless run: --approve " + p + " does not allow " + tool
		_, err := x.emit(s.id, session.PermissionDenied{RequestID: r.id, Reason: why, By: "--approve " + p})
		return false, why, err
	}
	err := r.ev.Wait(s.ctx)
	x.mu.Lock()
	if err != nil && !r.settled {
		r.settled = true
		x.mu.Unlock()
		_, _ = x.emit(s.id, session.PermissionDenied{RequestID: r.id, Reason: "the subagent stopped before a decision", By: "summit"})
		return false, "stopped", err
	}
	granted, why := r.granted, r.reason
	x.mu.Unlock()
	if err != nil {
		return false, "stopped", err
	}
	return granted, why, nil
}

// decide is /approve and /deny.
func (x *Orchestrator) decide(line string, c commands.Command, id string, grant bool, scope, reason string) (Reply, error) {
	x.mu.Lock()
	r := x.requests[id]
	var ids []string
	for _, p := range x.state.Permissions {
		if p.Decision == session.DecisionPending {
			ids = append(ids, p.ID)
		}
	}
	settled := r != nil && r.settled
	x.mu.Unlock()
	switch {
	case r == nil:
		return x.rejectf(line, c, "unknown permission request %s%s", id, didYouMean(id, ids))
	case settled:
		return x.rejectf(line, c, "%s is already decided", id)
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	if reason == "" {
		reason = "denied by the user"
	}
	x.mu.Lock()
	if r.settled { // the subagent stopped between the check and now
		x.mu.Unlock()
		return Reply{Output: id + " was settled meanwhile: its subagent stopped"}, nil
	}
	r.settled, r.granted, r.reason = true, grant, reason
	if grant && scope == commands.ScopeSubagent {
		if x.grants[r.s.id] == nil {
			x.grants[r.s.id] = map[string]bool{}
		}
		x.grants[r.s.id][r.tool] = true
	}
	x.mu.Unlock()
	var err error
	if grant {
		_, err = x.emit(r.s.id, session.PermissionGranted{RequestID: id, Scope: scope, By: "user"})
	} else {
		_, err = x.emit(r.s.id, session.PermissionDenied{RequestID: id, Reason: reason, By: "user"})
	}
	r.ev.Fire()
	if grant {
		return Reply{Output: fmt.Sprintf("%s: %s allowed (%s)", id, r.tool, scope)}, err
	}
	return Reply{Output: fmt.Sprintf("%s: %s denied", id, r.tool)}, err
}
