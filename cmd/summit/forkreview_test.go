package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/fork"
	"github.com/summit-dev/summit/session/record"
)

// seqOf is the seq of the first event of type typ in the recording at path (0: none).
func seqOf(t *testing.T, path string, typ session.Type) uint64 {
	t.Helper()
	var at uint64
	record.ForEach(mustOpen(t, path), record.ReadOptions{NoText: true}, func(e session.Event) error {
		if e.Type == typ && at == 0 {
			at = e.Seq
		}
		return nil
	})
	if at == 0 {
		t.Fatalf("%s holds no %s", path, typ)
	}
	return at
}

// TestForkAtPendingReview: forked at the demo's ManualReviewRequired, the review of cf-1 is
// still open in the fork (all its members had stopped): /resolve cf-1 --choose sa-2 settles it
// there, /apply cv-1 lands sa-2's change in the fork's workspace, and the run exits 0. Forked
// while cv-1 still computed (its conflict detected, the review not yet asked for everywhere),
// cv-1 is interrupted, its conflict is offered nowhere (the inbox holds only what can be
// answered), and /resolve says why it cannot settle it.
func TestForkAtPendingReview(t *testing.T) {
	t.Parallel()
	ws, rec := demoParent(t, false)
	review := seqOf(t, rec, session.TypeManualReviewRequired)
	if p, err := fork.Load(rec, review); err != nil || forkHint(p, review) != fmt.Sprintf("Forked at #%d: the review of cf-1 is open (ctrl+o), /resolve settles it.", review) {
		t.Errorf("the fork's first notice: %v", err)
	}
	code, errOut, out, into := forkRun(t, ws, rec, review, "/resolve cf-1 --choose sa-2\n/apply cv-1\n")
	if code != 0 {
		t.Fatalf("fork at #%d (ManualReviewRequired): exit %d\n%s", review, code, errOut)
	}
	st, _, err := record.LoadFile(out, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cv := st.Convergence("cv-1")
	cf := st.Conflict("cf-1")
	if cv == nil || cv.Status != session.ConvergenceDone || cv.Outcome == session.OutcomeInterrupted || !cv.Applied {
		t.Fatalf("cv-1 in the fork: %+v", cv)
	}
	if cf == nil || cf.Resolution == nil || cf.Resolution.Choice != "sa-2" || cf.Resolution.Method != "manual" {
		t.Fatalf("cf-1 in the fork: %+v", cf)
	}
	cart, _ := os.ReadFile(filepath.Join(into, "cart.go"))
	if !strings.Contains(string(cart), "t += l.Price * float64(l.Qty)") || strings.Contains(string(cart), "cents :=") {
		t.Errorf("the fork's cart.go is not sa-2's:\n%s", cart)
	}
	if items := session.WaitingItems(st); len(items) != 0 {
		t.Errorf("the fork still waits for %+v", items)
	}

	// Forked between the conflict's review request and ManualReviewRequired: cv-1 was still
	// computing there.
	computing := seqOf(t, rec, session.TypeConflictReviewRequest)
	if computing >= review {
		t.Fatalf("ConflictReviewRequest #%d is not before ManualReviewRequired #%d", computing, review)
	}
	code, errOut, out, _ = forkRun(t, ws, rec, computing, "/inbox\n/resolve cf-1 --choose sa-2\n")
	if code != 1 || !strings.Contains(errOut, "cv-1 ended interrupted before it was settled; /converge sa-2 sa-3 runs it again") {
		t.Errorf("fork at #%d: exit %d\n%s", computing, code, errOut)
	}
	if !strings.Contains(errOut, "inbox: nothing waits for you") {
		t.Errorf("/inbox offers what cannot be answered:\n%s", errOut)
	}
	st, _, err = record.LoadFile(out, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cv := st.Convergence("cv-1"); cv == nil || cv.Outcome != session.OutcomeInterrupted {
		t.Errorf("cv-1 forked while computing: %+v", cv)
	}
	if items := session.WaitingItems(st); len(items) != 0 {
		t.Errorf("the inbox offers %+v, which nothing can answer", items)
	}
}
