package live

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
)

// Scripts read as people type. A person who types /converge and then /resolve cf-1 sees the
// convergence compute and answers once the review is there; a script's next line comes at
// once. So in a headless run (RunScript) a command that names a convergence still computing
// first waits for it to reach its review or its end:
//
//   - /apply cv-N and /diff cv-N wait for cv-N (/status does not: it reports the state as it
//     is, pending included);
//   - /resolve cf-N waits for the convergence that holds cf-N while it computes, and, while
//     cf-N does not exist yet, for each convergence still computing (one of them may detect it).
//
// Each wait is bounded by the convergence's timeout: the longest timeout of its members (a
// convergence computes once its members have stopped, and each stops by its own timeout). The
// command then runs as typed, and is rejected the same way a person's would be if the state
// still does not allow it. The workbench does not wait: a person sees the convergence's state
// (pending, ⚠, ✓) and the rejection says what it waits for (stillComputing, notDone).

// awaitNamed waits, in a headless run, for the convergences line names that are still
// computing. It reports each wait on progress.
func (x *Orchestrator) awaitNamed(ctx context.Context, line string, progress func(string)) {
	if !commands.IsCommand(line) {
		return
	}
	cmd, err := commands.Parse(line)
	if err != nil {
		return
	}
	var id string
	switch c := cmd.(type) {
	case commands.Apply:
		id = c.ConvergenceID
	case commands.Diff:
		id = c.ID
	case commands.Resolve:
		x.awaitConflict(ctx, c.ConflictID, progress)
		return
	default:
		return
	}
	if strings.HasPrefix(id, "cv-") {
		x.awaitConv(ctx, id, progress)
	}
}

// awaitConflict waits until conflict id exists and its convergence is not computing, or no
// convergence computes any more.
func (x *Orchestrator) awaitConflict(ctx context.Context, id string, progress func(string)) {
	for ctx.Err() == nil {
		x.mu.Lock()
		next := ""
		if cf := x.state.Conflict(id); cf != nil {
			if cv := x.convs[cf.ConvergenceID]; cv != nil && !cv.settled.Fired() {
				next = cv.id
			}
		} else {
			next = x.firstComputingLocked()
		}
		x.mu.Unlock()
		if next == "" || !x.awaitConv(ctx, next, progress) {
			return
		}
	}
}

// firstComputingLocked is the oldest convergence still computing ("" when none). x.mu is held.
func (x *Orchestrator) firstComputingLocked() string {
	for _, cv := range x.state.Convergences {
		if c := x.convs[cv.ID]; c != nil && !c.settled.Fired() {
			return cv.ID
		}
	}
	return ""
}

// awaitConv waits for convergence id to settle (review or end), bounded by its timeout. It
// reports whether it waited and the convergence settled.
func (x *Orchestrator) awaitConv(ctx context.Context, id string, progress func(string)) bool {
	x.mu.Lock()
	cv := x.convs[id]
	bound := 0
	if st := x.state.Convergence(id); st != nil {
		for _, m := range st.Members {
			if sa := x.state.Subagent(m); sa != nil {
				bound = max(bound, sa.TimeoutS)
			}
		}
	}
	x.mu.Unlock()
	if cv == nil || cv.settled.Fired() {
		return false
	}
	if bound <= 0 {
		bound = commands.DefaultDelegateTimeout
	}
	progress(fmt.Sprintf("  waiting for %s, still computing (at most %ds)", id, bound))
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	either := x.clock.NewEvent()
	AfterFunc(x.clock, inner, time.Duration(bound)*time.Second, either.Fire)
	x.clock.Go(func() {
		if cv.settled.Wait(inner) == nil {
			either.Fire()
		}
	})
	if either.Wait(ctx) != nil {
		return false
	}
	return cv.settled.Fired()
}

// stillComputing is a rejection's hint when a convergence is still computing ("" when none):
// its conflicts are not known yet.
func (x *Orchestrator) stillComputing() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var ids []string
	for _, cv := range x.state.Convergences {
		if cv.Status == session.ConvergenceRunning {
			ids = append(ids, cv.ID)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf(" yet: %s still computing; /wait %s", strings.Join(ids, ", "), strings.Join(ids, " "))
}

// notDone is why /apply cannot land a convergence that has not completed: the members it
// waits for, or its own computing.
func (x *Orchestrator) notDone(cv *session.Convergence) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var running []string
	for _, m := range cv.Members {
		if sa := x.state.Subagent(m); sa != nil && !sa.Stopped {
			running = append(running, m)
		}
	}
	if len(running) > 0 {
		return fmt.Sprintf("%s is still waiting for its members (%s %s); /wait %s", cv.ID, strings.Join(running, ", "),
			map[bool]string{true: "runs", false: "run"}[len(running) == 1], cv.ID)
	}
	if slices.ContainsFunc(cv.Conflicts, func(cf *session.Conflict) bool { return cf.Resolution == nil }) {
		return fmt.Sprintf("%s is waiting for review; /resolve its conflicts first", cv.ID)
	}
	return fmt.Sprintf("%s is still computing its result (its members have stopped); /wait %s", cv.ID, cv.ID)
}
