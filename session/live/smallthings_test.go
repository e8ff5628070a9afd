package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// An /apply whose merge leaves the workspace as it is (the user already made the same edit)
// is refused in words: no ChangesApplied, no empty file list, no undo step.
func TestEmptyApplyRefused(t *testing.T) {
	h := newHarness(t)
	x := h.start(RealClock{})
	defer x.Close("script_end")
	accept(t, x, "/delegate iso replace --agent-type builder", "/wait sa-1")
	// The user makes sa-1's edit by hand: the workspace already has it.
	ours := readFile(t, filepath.Join(h.ws, "main.go"))
	theirs := readFile(t, filepath.Join(x.subs["sa-1"].wt.Path, "main.go"))
	if err := os.WriteFile(filepath.Join(h.ws, "main.go"), theirs, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := x.Submit(context.Background(), "/apply sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Rejected || !strings.Contains(r.Error, "nothing applied: sa-1 would change no file") || strings.Contains(r.Error, "usage:") {
		t.Fatalf("an apply that changes nothing: %+v", r)
	}
	var applies int
	x.View(func(st *session.State) { applies = len(st.Applies) })
	if applies != 0 {
		t.Errorf("%d applies recorded for an apply that changed nothing", applies)
	}
	if r, _ := x.Submit(context.Background(), "/undo"); !r.Rejected || !strings.Contains(r.Error, "nothing to undo") {
		t.Errorf("an empty apply became an undo step: %+v", r)
	}
	// The refused apply used no number: once the edit is taken back by hand, the apply that
	// lands is apply-1.
	if err := os.WriteFile(filepath.Join(h.ws, "main.go"), ours, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = x.Submit(context.Background(), "/apply sa-1")
	if err != nil || r.Rejected || !strings.HasPrefix(r.Output, "apply-1: sa-1 applied") {
		t.Fatalf("the apply after a refused one: %+v, %v", r, err)
	}
}

// A semantic refusal (a well-formed line the session cannot do) carries no usage line; a
// syntax error keeps it.
func TestUsageOnlyForSyntaxErrors(t *testing.T) {
	h := newHarness(t)
	x := h.start(RealClock{})
	for _, line := range []string{"/cancel sa-9", "/undo", "/diff cv-8", "/apply sa-3"} {
		r, err := x.Submit(context.Background(), line)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Rejected || strings.Contains(r.Error, "usage:") {
			t.Errorf("%s: a semantic refusal shows a usage line: %+v", line, r)
		}
	}
	r, _ := x.Submit(context.Background(), "/cancel")
	if !r.Rejected || !strings.Contains(r.Error, "\nusage: /cancel") {
		t.Errorf("a syntax error lost its usage line: %+v", r)
	}
	x.Close("script_end")
	evs, _, err := record.ReadAll(h.rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rej []session.CommandRejected
	for _, e := range evs {
		if d, ok := e.Data.(session.CommandRejected); ok {
			rej = append(rej, d)
		}
	}
	if len(rej) != 5 || rej[0].Usage != "" || rej[4].Usage == "" {
		t.Errorf("recorded usages: %+v", rej)
	}
}
