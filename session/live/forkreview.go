package live

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/converge"
	"github.com/summit-dev/summit/session/fork"
)

// reopenReviews takes over, in a fork, every convergence that waited for review at the fork
// point (fork.KeepsReview): its members had all stopped and their results are recorded, so
// the analysis is rebuilt from the recording (the pure engine over the same change sets gives
// the same conflicts, which is checked) and /resolve settles it here as it would have there.
// One whose analysis cannot be rebuilt the same is completed as interrupted, with the reason,
// so nothing waits that cannot be answered. Nothing else runs yet (startFork).
func (x *Orchestrator) reopenReviews() error {
	x.mu.Lock()
	var open []*session.Convergence
	for _, cv := range x.state.Convergences {
		if fork.KeepsReview(cv) {
			open = append(open, cv)
		}
	}
	at := x.state.LastTS
	x.mu.Unlock()
	for _, cv := range open {
		a, err := x.reanalyse(cv)
		if err != nil {
			resolved := 0
			for _, cf := range cv.Conflicts {
				if cf.Resolution != nil {
					resolved++
				}
			}
			done := session.ConvergenceComplete{ConvergenceID: cv.ID, Outcome: session.OutcomeInterrupted,
				ConflictCount: len(cv.Conflicts), ResolutionCount: resolved,
				Notes: []string{fmt.Sprintf("its review could not be taken over by the fork (%v); /converge %s runs it again", err, strings.Join(cv.Members, " "))}}
			if _, err := x.emitAt("", done, at); err != nil {
				return err
			}
			continue
		}
		c := &conv{id: cv.ID, settled: x.clock.NewEvent(), analysis: a,
			cmd: commands.Converge{SubagentIDs: slices.Clone(cv.Members), Strategy: cv.Strategy,
				ConflictResolution: cv.ConflictResolution, OutputFormat: cv.OutputFormat}}
		c.settled.Fire() // waiting for review is settled (/wait returns)
		x.mu.Lock()
		x.convs[cv.ID] = c
		x.mu.Unlock()
	}
	return nil
}

// reanalyse runs the convergence engine again on what the recording holds of cv's members, as
// runConv did, and checks it finds the conflicts cv recorded.
func (x *Orchestrator) reanalyse(cv *session.Convergence) (*converge.Analysis, error) {
	if len(cv.Conflicts) == 0 {
		return nil, fmt.Errorf("%s records no conflict", cv.ID)
	}
	first, err := strconv.Atoi(strings.TrimPrefix(cv.Conflicts[0].ID, "cf-"))
	if err != nil {
		return nil, fmt.Errorf("conflict id %s", cv.Conflicts[0].ID)
	}
	x.mu.Lock()
	in := converge.Input{ID: cv.ID, Strategy: cv.Strategy, Resolution: cv.ConflictResolution, Format: cv.OutputFormat,
		FirstConflict: first, Playbook: slices.Clone(x.state.Playbook), Read: x.readFile}
	for _, id := range cv.Members {
		sa := x.state.Subagent(id)
		if sa == nil || !sa.Stopped {
			x.mu.Unlock()
			return nil, fmt.Errorf("member %s has no recorded result", id)
		}
		m := converge.Member{ID: id, Outcome: sa.Outcome, Capsule: sa.Capsule, Finished: sa.StopSeq, Error: sa.LastError}
		switch ch := sa.Changes; {
		case sa.Rebased != nil && sa.Rebased.ConvergenceID == cv.ID:
			m.Changes, m.Rebased = &sa.Rebased.SubagentChanges, true
		case ch != nil && (len(ch.Files) > 0 || ch.Error != ""):
			m.Changes = ch
		}
		in.Members = append(in.Members, m)
	}
	x.mu.Unlock()
	a, err := converge.Analyze(in)
	if err != nil {
		return nil, err
	}
	if len(a.Conflicts) != len(cv.Conflicts) {
		return nil, fmt.Errorf("the engine finds %d conflicts where %d were recorded", len(a.Conflicts), len(cv.Conflicts))
	}
	for i, d := range a.Conflicts {
		if r := cv.Conflicts[i]; d.ConflictID != r.ID || d.Kind != r.Kind || d.File != r.File {
			return nil, fmt.Errorf("the engine finds %s %s %s where %s %s %s was recorded", d.ConflictID, d.Kind, d.File, r.ID, r.Kind, r.File)
		}
	}
	return a, nil
}

// whyNoReview says why a recorded conflict has no review here (": ..." or "").
func (x *Orchestrator) whyNoReview(cf *session.Conflict) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	cv := x.state.Convergence(cf.ConvergenceID)
	if cv == nil || cv.Status != session.ConvergenceDone {
		return ""
	}
	return fmt.Sprintf(": %s ended %s before it was settled; /converge %s runs it again", cv.ID, cv.Outcome, strings.Join(cv.Members, " "))
}
