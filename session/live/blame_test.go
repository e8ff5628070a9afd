package live

import (
	"strings"
	"testing"
)

// TestBlameCommand: /blame in a session reads its own recording: after /apply cv-1 (its
// members proposed patches) the lines of sa-2, the side cf-1 was settled for, name sa-2, cv-1
// and cf-1; paths outside the workspace or into .summit/ are refused.
func TestBlameCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.run(`/delegate variant a --agent-type builder
/delegate variant b --agent-type builder
/converge sa-1 sa-2 --strategy merge
/resolve cf-1 --choose sa-2
/apply cv-1
/blame main.go
/blame ../outside.txt
/blame .summit/sessions
`)
	var line string
	for _, l := range strings.Split(o.progress, "\n") {
		if strings.Contains(l, `println("hello, " + user())`) {
			line = l
		}
	}
	if !strings.Contains(line, "sa-2 · cv-1 · cf-1 │") {
		t.Errorf("the changed line %q does not name sa-2, cv-1 and cf-1:\n%s", line, o.progress)
	}
	for _, w := range []string{"main.go · ", "unchanged", "through: cv-1 merge · cf-1 resolved by manual: sa-2 (#", "landed: cv-1's DeltaBatch at #"} {
		if !strings.Contains(o.progress, w) {
			t.Errorf("/blame lacks %q:\n%s", w, o.progress)
		}
	}
	rej := o.rejections()
	if len(rej) != 2 || !strings.Contains(rej[0].Error, "is not a path inside the workspace") || !strings.Contains(rej[1].Error, "summit's own directory") {
		t.Errorf("rejections %+v", rej)
	}
}
