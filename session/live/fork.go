package live

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/fork"
)

// ForkStart makes a session a fork of a recording (session/fork): Start records SessionForked
// instead of SessionStarted, then the parent's events up to the fork point, then what closes
// what was open there. Options.Workspace is the fork's own restored workspace.
type ForkStart struct {
	Plan *fork.Plan
	// Restored and Notes are SessionForked's: where the workspace came from, what was not
	// carried over.
	Restored string
	Notes    []string
	// Foreign is set when the parent's recorded commits do not fit the fork's repository (the
	// parent workspace was a folder inside a repository: its commits hold the whole
	// repository): the parent's subagents' changes are then refused by /apply and /converge.
	Foreign bool
}

// foreignChanges says why subagent id's recorded changes cannot land in this fork ("" when
// they can).
func (x *Orchestrator) foreignChanges(id string) string {
	if x.o.Fork == nil || !x.o.Fork.Foreign {
		return ""
	}
	x.mu.Lock()
	inherited := x.inherited[id]
	x.mu.Unlock()
	if !inherited {
		return ""
	}
	return fmt.Sprintf("%s's changes were recorded in the parent session, whose workspace was a folder inside a repository: they do not fit this fork's workspace; /retry %s makes them again here", id, id)
}

// startFork records the fork's beginning (x.mu is not held; nothing else runs yet).
//
// The parent's events keep their seqs and times (each is folded exactly as the parent folded
// it) but take this session's id. Their text is recorded again, in this file, so the fork
// replays without its parent. Stream redaction does not apply: the parent's deltas were
// redacted when it recorded them, and the recorder redacts every line again anyway.
func (x *Orchestrator) startFork(started session.SessionStarted) error {
	f := x.o.Fork
	if _, err := x.emit("", f.Plan.Forked(started, f.Restored, f.Notes)); err != nil {
		return err
	}
	err := f.Plan.Events(func(e session.Event) error {
		_, err := x.emitRecorded(e)
		return err
	})
	if err != nil {
		return err
	}
	// What was open is closed at the fork point's time: an interrupted subagent ran until then.
	at := f.Plan.State.LastTS
	for _, e := range f.Plan.Closing() {
		if _, err := x.emitAt(e.SubagentID, e.Data, at); err != nil {
			return err
		}
	}
	if err := x.reopenReviews(); err != nil {
		return err
	}
	// Every subagent the parent had has stopped now. They take part as stopped subagents: a
	// /converge or /retry of theirs works as of one of this session's own.
	x.mu.Lock()
	defer x.mu.Unlock()
	x.inherited = map[string]bool{}
	for _, cv := range x.state.Convergences {
		x.inherited[cv.ID] = true
	}
	for _, sa := range x.state.Subagents {
		x.inherited[sa.ID] = true
		n, _ := strconv.Atoi(strings.TrimPrefix(sa.ID, "sa-")) // 0 for an id of another shape (a hand-made recording)
		s := &sub{id: sa.ID, n: n, ctx: x.ctx, stopCtx: func() {}, slot: x.clock.NewEvent(), stopped: x.clock.NewEvent(),
			arrived: x.clock.NewEvent(), clock: x.clock, outcome: sa.Outcome}
		s.slot.Fire()
		s.stopped.Fire()
		x.subs[sa.ID] = s
	}
	x.nextPR = len(x.state.Permissions)
	return nil
}

// emitRecorded records and folds one of a fork's parent events as it was, with this session's
// id: the serialising path of emit, without its clock and stream redaction.
func (x *Orchestrator) emitRecorded(e session.Event) (session.Event, error) {
	x.emitMu.Lock()
	defer x.emitMu.Unlock()
	x.mu.Lock()
	if e.Seq != x.state.LastSeq+1 {
		x.mu.Unlock()
		return e, fmt.Errorf("fork: the parent's event #%d does not follow #%d", e.Seq, x.state.LastSeq)
	}
	ev, err := x.appendLocked(e.SubagentID, e.Data, e.TS)
	x.mu.Unlock()
	if err == nil && x.o.OnEvent != nil {
		x.o.OnEvent(ev)
	}
	return ev, err
}

// emitAt records and folds one event at ts (a fork's closing events).
func (x *Orchestrator) emitAt(subagentID string, d session.Data, ts time.Time) (session.Event, error) {
	x.emitMu.Lock()
	defer x.emitMu.Unlock()
	x.mu.Lock()
	ev, err := x.appendLocked(subagentID, d, ts)
	x.mu.Unlock()
	if err == nil && x.o.OnEvent != nil {
		x.o.OnEvent(ev)
	}
	return ev, err
}

var numberedID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(base|apply)-(\d+)$`) })

// usedIDs are the highest base-N and apply-N the state holds: a fork's own git snapshots and
// applies are numbered after its parent's, which its state already has.
func usedIDs(st *session.State) (bases, applies int) {
	for _, sa := range st.Subagents {
		if sa.Isolation != nil {
			if m := numberedID().FindStringSubmatch(sa.Isolation.Base); m != nil {
				n, _ := strconv.Atoi(m[2])
				bases = max(bases, n)
			}
		}
	}
	for _, a := range st.Applies {
		if m := numberedID().FindStringSubmatch(a.ApplyID); m != nil {
			n, _ := strconv.Atoi(m[2])
			applies = max(applies, n)
		}
	}
	return bases, applies
}

// retry is /retry: the task of a stopped subagent delegated again, as its /delegate asked (or
// with --agent-type's agent).
func (x *Orchestrator) retry(line string, c commands.Retry) (Reply, error) {
	x.mu.Lock()
	sa := x.subCopyLocked(c.SubagentID)
	var d commands.Delegate
	if sa != nil {
		d = commands.Delegate{Task: sa.Task, AgentType: sa.AgentType, InheritContext: sa.InheritContext,
			PermissionMode: sa.PermissionMode, Timeout: sa.TimeoutS}
		if sa.AgentType == "" {
			d.AgentType = sa.AgentName
		}
		if len(sa.Tools) > 0 {
			d.Tools = append([]string(nil), sa.Tools...)
		}
	}
	ids := x.subIDs()
	x.mu.Unlock()
	switch {
	case sa == nil:
		return x.rejectf(line, c, "unknown subagent %s%s", c.SubagentID, didYouMean(c.SubagentID, ids))
	case sa.Parent != "":
		return x.rejectf(line, c, "%s is %s's own subagent, which its agent started; /retry %s instead", sa.ID, sa.Parent, rootOf(x, sa))
	case !sa.Terminal():
		return x.rejectf(line, c, "%s is still %s; /cancel it first, or /wait %s", sa.ID, sa.Status, sa.ID)
	}
	if c.AgentType != "" {
		d.AgentType = c.AgentType
		// Another agent brings its own tools and mode: only the task carries over.
		d.Tools, d.PermissionMode = nil, ""
	}
	if d.Timeout <= 0 {
		d.Timeout = commands.DefaultDelegateTimeout
	}
	return x.delegateAs(line, c, d)
}

// rootOf is the delegated subagent a child runs under.
func rootOf(x *Orchestrator, sa *session.Subagent) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	for sa.Parent != "" {
		p := x.state.Subagent(sa.Parent)
		if p == nil {
			break
		}
		sa = p
	}
	return sa.ID
}
