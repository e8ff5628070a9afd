package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

// numbered is the lines l1..ln, with line k replaced where repl says.
func numbered(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r + "\n")
			continue
		}
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

// Issue 27, item 1: A changes lines 3 and 10 of one file, B changes line 3. The review
// recorded before the resolution contains A's line-10 change and says it lands with "take B
// here"; "take B's file" (--whole-file) lands B's file exactly.
func TestReviewWholeFileLandsExactly(t *testing.T) {
	for _, whole := range []bool{true, false} {
		t.Run(fmt.Sprint("whole=", whole), func(t *testing.T) {
			h := newHarness(t)
			write(t, h.ws, "list.txt", numbered(20, nil))
			x := h.start(RealClock{})
			accept(t, x, `/delegate "review A lines 3 and 10" --agent-type builder`, `/delegate "review B line 3" --agent-type builder`,
				"/wait sa-1 sa-2", "/converge sa-1 sa-2 --strategy merge", "/wait cv-1")
			resolve := "/resolve cf-1 --choose sa-2"
			if whole {
				resolve += " --whole-file"
			}
			r := accept(t, x, resolve, "/wait cv-1", "/apply cv-1")
			x.Close("quit")
			got := string(readFile(t, filepath.Join(h.ws, "list.txt")))
			want := numbered(20, map[int]string{3: "B3", 10: "A10"})
			if whole {
				want = numbered(20, map[int]string{3: "B3"})
			}
			if got != want {
				t.Errorf("after %s (%s), list.txt is\n%s\nwant\n%s", resolve, r.Output, got, want)
			}
			o := h.read(0, x, "")
			cfs := o.find(session.TypeConflictDetected, "")
			if len(cfs) != 1 {
				t.Fatalf("conflicts: %+v", cfs)
			}
			d := cfs[0].Data.(session.ConflictDetected)
			if d.Review == nil {
				t.Fatalf("the recorded conflict has no review: %+v", d)
			}
			var here *session.ChoiceOutcome
			for i, oc := range d.Review.Outcomes {
				if oc.Choice == "sa-2" && !oc.WholeFile {
					here = &d.Review.Outcomes[i]
				}
			}
			if here == nil || len(here.AlsoLands) != 1 || here.AlsoLands[0].SubagentID != "sa-1" || !strings.Contains(here.AlsoLands[0].Text, "+A10") {
				t.Errorf("take sa-2 here does not say A's line 10 lands with it: %+v", d.Review.Outcomes)
			}
			rs := o.find(session.TypeConflictResolved, "")
			if len(rs) != 1 {
				t.Fatalf("resolutions %+v", rs)
			}
			if res := rs[0].Data.(session.ConflictResolved); res.WholeFile != whole || res.Choice != "sa-2" {
				t.Errorf("recorded resolution %+v", res)
			}
		})
	}
}

// Issue 27, item 5: an apply conflict at line 41 of a 100-line file. The recorded review holds
// line 41's two versions and the region with git's diff3 markers (not the whole files), and
// choice edit settles it with the reviewer's text.
func TestApplyReviewShowsTheConflictLine(t *testing.T) {
	h := newHarness(t)
	big := filepath.Join(h.ws, "big.txt")
	write(t, h.ws, "big.txt", numbered(100, nil))
	x := h.start(RealClock{})
	accept(t, x, `/delegate "review line 41" --agent-type builder`, "/wait sa-1")
	if err := os.WriteFile(big, []byte(numbered(100, map[int]string{41: "ours 41"})), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := accept(t, x, "/apply sa-1"); !strings.Contains(r.Output, "review cf-1") {
		t.Fatalf("/apply sa-1: %+v", r)
	}
	// The markers are refused as an answer; the whole file as the reviewer wrote it lands.
	if r, _ := x.Submit(t.Context(), `/resolve cf-1 --choose edit --content "<<<<<<< workspace\n"`); !r.Rejected || !strings.Contains(r.Error, "conflict markers") {
		t.Errorf("markers accepted: %+v", r)
	}
	mine := numbered(100, map[int]string{41: "both 41"})
	accept(t, x, "/resolve cf-1 --choose edit --content "+fmt.Sprintf("%q", mine), "/apply cv-1")
	x.Close("quit")
	if got := string(readFile(t, big)); got != mine {
		t.Errorf("big.txt after the edit:\n%s", got)
	}
	o := h.read(0, x, "")
	cfs := o.find(session.TypeConflictDetected, "")
	if len(cfs) != 1 {
		t.Fatalf("conflicts: %+v", cfs)
	}
	d := cfs[0].Data.(session.ConflictDetected)
	theirs, ours := fmt.Sprint(d.Sides[0].Value), fmt.Sprint(d.Sides[1].Value)
	if d.Lines == nil || d.Lines.Start != 41 || !strings.Contains(theirs, "+theirs 41") || !strings.Contains(theirs, "-l41") ||
		!strings.Contains(ours, "+ours 41") || strings.Contains(theirs, "l1\n") {
		t.Errorf("the recorded sides do not show line 41's versions: lines %v\n%s\n%s", d.Lines, theirs, ours)
	}
	for _, want := range []string{"<<<<<<< workspace", "ours 41", "||||||| base", "theirs 41", ">>>>>>> sa-1", "   40   l40", "   42   l42"} {
		if !strings.Contains(d.Context, want) {
			t.Errorf("the recorded region lacks %q:\n%s", want, d.Context)
		}
	}
	if strings.Contains(d.Context, "l30\n") || !strings.Contains(d.EditTemplate, "<<<<<<< workspace") {
		t.Errorf("context %q / template %q", d.Context, d.EditTemplate)
	}
}
