// Package fork plans a session that continues a recording from one of its events (summit fork,
// the replay's fork key): it reads the parent recording up to the fork point, folds the state
// there, and says what the new session starts from and what it must close.
//
// # What a forked recording holds
//
//	seq 1            SessionForked: the parent (path, session id, seq, sha256 of its bytes up to
//	                 that event's line), the fork's own start, the parent's start, where the
//	                 fork's workspace came from
//	seq 2..N         the parent's events 2..N, verbatim but for the envelope's session_id, with
//	                 the parent's seqs and times (a parent that is itself a fork: its own
//	                 SessionForked is replaced, and its lineage carried in Parent.Lineage)
//	seq N+1..        Closing: what was open at the fork point, closed in the fork's time:
//	                 pending permission requests denied (by "fork"), running subagents stopped
//	                 as interrupted (children before their parents), open handoffs resolved,
//	                 convergences still computing completed as interrupted (one waiting for
//	                 its review stays open: KeepsReview)
//	then             the fork's own live events
//
// So the fork replays alone, and its state at seq N is the parent's at N: `replay --print --to
// N` of both differs only in the header (session id, workspace, lineage).
//
// # The workspace
//
// A fork never runs in the parent's workspace. Its workspace is a new folder holding the files
// as they were at the fork point, as far as the recording can say: the tree of the newest
// workspace snapshot recorded at or before the fork point (a subagent's base, or the workspace
// after an /apply or /undo), written out with git from the parent's repository (see
// gitws.Restore). Edits made by hand between that snapshot and the fork point were never
// recorded and are not there. When no snapshot was recorded by then, the first one after is
// used if no /apply came between. When the git dir that held the snapshot is gone (summit demo
// removes its own when it quits, keeping the commits its recording names in a git bundle beside
// it: BundlePath), the snapshot is restored from that bundle. Otherwise, or when the snapshot's
// objects are gone (git gc, another machine), the fork starts from the parent workspace as it
// is now (in an empty folder
// when that is gone, a home or root folder, or an imported session's folder outside a
// repository), and SessionForked.Restored says so.
package fork

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// Plan is what a fork at one event of a recording starts from.
type Plan struct {
	Path   string
	Parent session.ForkParent
	// ParentStarted is the parent's own start (for a parent that is a fork, its
	// SessionForked.Started).
	ParentStarted session.SessionStarted
	// State is the parent's state at the fork point, folded without transcript text.
	State *session.State
	// Snapshot is the workspace snapshot the fork's files come from (nil: none recorded).
	Snapshot *Snapshot
	// end is the byte offset just after the fork point's line.
	end int64
	// parentFork is the parent's own SessionForked, when it is a fork.
	parentFork *session.SessionForked
}

// Snapshot is a recorded commit holding the whole workspace at one moment.
type Snapshot struct {
	Commit string
	Seq    uint64
	What   string // "the base of sa-2", "the workspace after apply-1", ...
	// After is set when the snapshot was recorded after the fork point (none was before it,
	// and no /apply came between).
	After bool
	// Private is set when the parent workspace used summit's private git dir.
	Private bool
}

// Load reads the recording at path up to the event seq and plans a fork there.
func Load(path string, seq uint64) (*Plan, error) {
	if seq == 0 {
		return nil, fmt.Errorf("--at 0: seqs start at 1")
	}
	f, err := record.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ix, err := record.BuildIndexWith(f, record.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if ix.Len() == 0 {
		return nil, fmt.Errorf("%s: no events", path)
	}
	i, ok := ix.Find(seq)
	if !ok {
		return nil, fmt.Errorf("%s holds no event #%d (its events are #%d to #%d)", path, seq, ix.Seq(0), ix.Seq(ix.Len()-1))
	}
	off, n := ix.Loc(i)
	p := &Plan{Path: path, end: off + int64(n)}
	p.Parent.Seq = seq
	if abs, err := filepath.Abs(path); err == nil {
		p.Parent.Path = abs
	} else {
		p.Parent.Path = path
	}

	// The fold at the fork point, and the content hash of the bytes it came from, in one read.
	h := sha256.New()
	st := &session.State{}
	_, err = record.ForEach(io.TeeReader(io.NewSectionReader(f, 0, p.end), h), record.ReadOptions{NoText: true}, func(e session.Event) error {
		return session.Apply(st, e)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p.Parent.SHA256 = hex.EncodeToString(h.Sum(nil))
	if st.LastSeq != seq {
		return nil, fmt.Errorf("%s: the fold stopped at #%d, not #%d", path, st.LastSeq, seq)
	}
	if st.Ended {
		return nil, fmt.Errorf("%s: #%d is the session's end; fork at an event before it (#%d or earlier)", path, seq, seq-1)
	}
	p.State = st
	p.Parent.SessionID = st.SessionID
	p.ParentStarted = st.Info
	if st.Fork != nil {
		p.parentFork = st.Fork
		p.Parent.Lineage = append([]session.ForkParent{st.Fork.Parent}, st.Fork.Parent.Lineage...)
		for i := range p.Parent.Lineage {
			p.Parent.Lineage[i].Lineage = nil
		}
	}
	p.Snapshot, err = findSnapshot(f, ix, i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// findSnapshot picks the newest workspace snapshot at or before entry at; failing that, the
// first after it when no /apply or /undo came between.
func findSnapshot(ra io.ReaderAt, ix *record.Index, at int) (*Snapshot, error) {
	of := func(e session.Event) *Snapshot {
		switch d := e.Data.(type) {
		case session.SubagentIsolated:
			return &Snapshot{Commit: d.BaseCommit, Seq: e.Seq, What: "the base of " + e.SubagentID, Private: d.Private}
		case session.ChangesApplied:
			return &Snapshot{Commit: d.PostCommit, Seq: e.Seq, What: "the workspace after " + d.ApplyID}
		}
		return nil
	}
	var undone = map[string]string{} // apply id → its pre commit, for ApplyUndone
	var best *Snapshot
	private := false
	for j := 0; j <= at; j++ {
		switch ix.Type(j) {
		case session.TypeSubagentIsolated, session.TypeChangesApplied, session.TypeApplyUndone:
		default:
			continue
		}
		e, err := ix.ReadEvent(ra, j)
		if err != nil {
			return nil, err
		}
		if d, ok := e.Data.(session.ChangesApplied); ok {
			undone[d.ApplyID] = d.PreCommit
		}
		if d, ok := e.Data.(session.ApplyUndone); ok {
			if pre := undone[d.ApplyID]; pre != "" {
				best = &Snapshot{Commit: pre, Seq: e.Seq, What: "the workspace after undoing " + d.ApplyID}
			}
			continue
		}
		if s := of(e); s != nil && s.Commit != "" {
			if d, ok := e.Data.(session.SubagentIsolated); ok {
				private = d.Private
			}
			best = s
		}
	}
	if best != nil {
		best.Private = private
		return best, nil
	}
	for j := at + 1; j < ix.Len(); j++ {
		switch ix.Type(j) {
		case session.TypeChangesApplied, session.TypeApplyUndone:
			return nil, nil // the workspace changed before the first snapshot: none fits
		case session.TypeSubagentIsolated:
			e, err := ix.ReadEvent(ra, j)
			if err != nil {
				return nil, err
			}
			if s := of(e); s != nil && s.Commit != "" {
				s.After = true
				return s, nil
			}
		}
	}
	return nil, nil
}

// Events calls fn with the parent's events 2..seq, as recorded (text included), in order.
func (p *Plan) Events(fn func(session.Event) error) error {
	f, err := record.OpenRegular(p.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	// The bytes are hashed as they are read: a parent changed since Load is caught (after
	// the fact: the caller's session then fails at its start, which it must not keep).
	h := sha256.New()
	_, err = record.ForEach(io.TeeReader(io.NewSectionReader(f, 0, p.end), h), record.ReadOptions{}, func(e session.Event) error {
		if e.Seq == 1 {
			return nil
		}
		return fn(e)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != p.Parent.SHA256 {
		return fmt.Errorf("%s changed while the fork was made from it (its first %d bytes no longer hash the same)", p.Path, p.end)
	}
	return nil
}

// Forked is the fork's first event, given its own start and where its workspace came from.
func (p *Plan) Forked(started session.SessionStarted, restored string, notes []string) session.SessionForked {
	return session.SessionForked{Parent: p.Parent, Started: started, ParentStarted: p.ParentStarted, Restored: restored, Notes: notes}
}

// Closing are the events that close what was open at the fork point, in order, each with the
// subagent it is about ("" for the session): they follow the parent's events.
func (p *Plan) Closing() []session.Event {
	return Close(p.State, fmt.Sprintf("the session was forked at #%d", p.Parent.Seq), "fork", nil)
}

// Close are the events that close what is open in st, for the reason why, decided by by: a
// fork's (Plan.Closing), and a resumed session's (`summit resume`), which keeps the subagents
// keep says run on (placed on runners: reattached) and their requests.
func Close(st *session.State, why, by string, keep func(*session.Subagent) bool) []session.Event {
	at := st.LastTS
	var out []session.Event
	add := func(sub string, d session.Data) { out = append(out, session.New(sub, d)) }
	for _, pr := range st.Permissions {
		if pr.Decision == session.DecisionPending && (keep == nil || !keep(st.Subagent(pr.SubagentID))) {
			add(pr.SubagentID, session.PermissionDenied{RequestID: pr.ID, Reason: why, By: by})
		}
	}
	// Children stop before their parents: the reverse of the tree's depth-first order.
	tree := st.Tree()
	interrupted := map[string]bool{}
	for _, n := range slices.Backward(tree) {
		sa := n.Subagent
		if sa.Terminal() || keep != nil && keep(sa) {
			continue
		}
		interrupted[sa.ID] = true
		var d time.Duration
		if !sa.ActiveAt.IsZero() && at.After(sa.ActiveAt) {
			d = at.Sub(sa.ActiveAt)
		}
		add(sa.ID, session.SubagentStop{Outcome: session.OutcomeInterrupted, ToolInvocationCount: sa.ToolCalls,
			ArtifactPaths: []string{}, DurationMS: d.Milliseconds(), Tokens: sa.Tokens, CostUSD: sa.CostUSD})
	}
	for _, h := range st.Handoffs {
		switch h.Status {
		case session.HandoffActive:
			add(h.SubagentID, session.HandoffComplete{Outcome: session.OutcomeInterrupted})
			fallthrough
		case session.HandoffDone:
			add(h.SubagentID, session.HandoffResolved{Outcome: session.OutcomeInterrupted, Artifacts: []string{}, Action: "none"})
		}
	}
	for _, cv := range st.Convergences {
		if KeepsReview(cv) {
			continue // all its members' results are recorded: the fork takes the review over
		}
		if cv.Status != session.ConvergenceDone {
			add("", session.ConvergenceComplete{ConvergenceID: cv.ID, Outcome: session.OutcomeInterrupted,
				ConflictCount: len(cv.Conflicts), ResolutionCount: resolved(cv),
				Notes: []string{why + "; /converge " + strings.Join(cv.Members, " ") + " runs it again"}})
		}
	}
	return out
}

// KeepsReview reports whether a convergence stays open in a fork at this point: one that waits
// for the review of its conflicts (ManualReviewRequired) has every member's result recorded
// and nothing running, so the fork's orchestrator rebuilds its analysis from the recorded
// change sets and /resolve settles it there. Convergences still computing are interrupted, and
// so are apply reviews (strategy "apply"), whose merge was prepared against the parent's
// workspace of that moment.
func KeepsReview(cv *session.Convergence) bool {
	return cv.Status == session.ConvergenceReview && cv.Strategy != "apply"
}

// Interrupted are the subagents Closing stops as interrupted, in spawn order.
func (p *Plan) Interrupted() []string {
	var ids []string
	for _, sa := range p.State.Subagents {
		if !sa.Terminal() {
			ids = append(ids, sa.ID)
		}
	}
	return ids
}

func resolved(cv *session.Convergence) int {
	n := 0
	for _, cf := range cv.Conflicts {
		if cf.Resolution != nil {
			n++
		}
	}
	return n
}

// BundlePath is where the commits a recording names are kept when the git dir that held them
// goes away (summit demo's, when it quits): a git bundle beside the recording, named after it
// (s-01J….jsonl → s-01J….bundle). A fork restores from it when the snapshot is gone from its
// repository.
func BundlePath(recording string) string {
	return strings.TrimSuffix(recording, ".jsonl") + ".bundle"
}

// Commits lists the commits the recording at path names, in order, each once: the subagents'
// bases and results (SubagentIsolated, SubagentChanges, ChangesRebased) and the workspace
// before and after each apply (ChangesApplied). Only those events are decoded.
func Commits(path string) ([]string, error) {
	f, err := record.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ix, err := record.BuildIndexWith(f, record.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	seen := map[string]bool{}
	add := func(cs ...string) {
		for _, c := range cs {
			if c != "" && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	for i := 0; i < ix.Len(); i++ {
		switch ix.Type(i) {
		case session.TypeSubagentIsolated, session.TypeSubagentChanges, session.TypeChangesRebased, session.TypeChangesApplied:
		default:
			continue
		}
		e, err := ix.ReadEvent(f, i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		switch d := e.Data.(type) {
		case session.SubagentIsolated:
			add(d.BaseCommit)
		case session.SubagentChanges:
			add(d.BaseCommit, d.ResultCommit)
		case session.ChangesRebased:
			add(d.BaseCommit, d.ResultCommit)
		case session.ChangesApplied:
			add(d.PreCommit, d.PostCommit)
		}
	}
	return out, nil
}
