package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session/blame"
	"github.com/summit-dev/summit/session/record"
)

// TestBlameDemo: after the demo's tour run headless, summit blame of cart.go names, for every
// line that differs from the sample's, a subagent whose recorded change adds exactly that
// line, through cv-1 and cf-1's resolution, with the apply's seq; the sample's own lines are
// unchanged. README.md's new lines are sa-5's (its own /apply). The default recording is the
// newest in the workspace's .summit/sessions.
func TestBlameDemo(t *testing.T) {
	t.Parallel()
	ws, rec := demoParent(t, false)
	st, _, err := record.LoadFile(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	adds := func(id, file string) []string { // the lines a subagent's recorded change adds to file
		var out []string
		for _, f := range st.Subagent(id).Changes.Files {
			if f.Path != file {
				continue
			}
			for _, l := range strings.Split(f.Diff, "\n") {
				if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
					out = append(out, l[1:])
				}
			}
		}
		return out
	}
	code, out, errOut := summit(t, "blame", filepath.Join(ws, "cart.go"), "--recording", rec, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep blame.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	final, _ := os.ReadFile(filepath.Join(ws, "cart.go"))
	orig := strings.Split(demoFiles["cart.go"], "\n")
	if got := strings.Join(linesOf(rep), "\n"); got != strings.TrimSuffix(string(final), "\n") {
		t.Fatalf("the report's lines are not the file's:\n%s", got)
	}
	changed, bySub := 0, map[string]int{}
	for _, l := range rep.Lines {
		if slices.Contains(orig, l.Text) {
			if l.Origin != nil && !slices.Contains(adds(l.Origin.SubagentID, "cart.go"), l.Text) {
				t.Errorf("line %d %q is the sample's, yet blamed on %+v", l.N, l.Text, l.Origin)
			}
			continue
		}
		changed++
		o := l.Origin
		if o == nil || o.SubagentID == "" {
			t.Errorf("line %d %q: no subagent named: %+v", l.N, l.Text, o)
			continue
		}
		if !slices.Contains(adds(o.SubagentID, "cart.go"), l.Text) {
			t.Errorf("line %d %q is blamed on %s, whose change does not add it", l.N, l.Text, o.SubagentID)
		}
		if o.ConvergenceID != "cv-1" || o.ApplyID == "" || o.ApplySeq == 0 || o.ChangesSeq == 0 || o.AgentType != "builder" {
			t.Errorf("line %d: origin %+v", l.N, o)
		}
		bySub[o.SubagentID]++
	}
	if changed == 0 || bySub["sa-3"] == 0 {
		t.Fatalf("%d changed lines, by subagent %v (cf-1 was settled for sa-3)", changed, bySub)
	}
	// cf-1's lines say how it was settled.
	found := false
	for _, l := range rep.Lines {
		if o := l.Origin; o != nil && o.ConflictID == "cf-1" {
			found = true
			if o.Method != "manual" || o.Choice != "sa-3" || o.ResolvedSeq == 0 {
				t.Errorf("cf-1's resolution: %+v", o)
			}
		}
	}
	if !found {
		t.Error("no line names cf-1")
	}

	// The text form, from the default recording: the newest in .summit/sessions.
	sessions := filepath.Join(ws, ".summit", "sessions")
	os.MkdirAll(sessions, 0o700)
	b, _ := os.ReadFile(rec)
	os.WriteFile(filepath.Join(sessions, "s-demo.jsonl"), b, 0o600)
	code, text, errOut := summit(t, "blame", "README.md", "--workspace", ws)
	if code != 0 {
		t.Fatalf("blame README.md: exit %d %s", code, errOut)
	}
	for _, l := range adds("sa-5", "README.md") {
		if l == "" {
			continue
		}
		if line := lineWith(text, l); !strings.Contains(line, "sa-5") {
			t.Errorf("README.md line %q: %q\n%s", l, line, text)
		}
	}
	if line := lineWith(text, "# shop"); !strings.Contains(line, "unchanged") {
		t.Errorf("the sample's first line: %q", line)
	}
	code, cartText, _ := summit(t, "blame", "cart.go", "--workspace", ws)
	t.Log(cartText)
	if code != 0 || !strings.Contains(cartText, "through: cv-1 merge · cf-1 resolved by manual: sa-3 (#") {
		t.Errorf("blame cart.go: exit %d\n%s", code, cartText)
	}
	if !strings.Contains(text, "origins:") || !strings.Contains(text, "landed: apply-") {
		t.Errorf("no origins:\n%s", text)
	}

	// Bad input: a precise error and exit code.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"blame", "nope.go", "--recording", rec}, 1, "nope.go: no such file"},
		{[]string{"blame", "cart.go", "--workspace", t.TempDir()}, 2, "no recording in"},
		{[]string{"blame", "/etc/passwd", "--recording", rec}, 2, "outside the recording's workspace"},
		{[]string{"blame"}, 2, "accepts 1 arg"},
	} {
		code, _, errOut := summit(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

func linesOf(rep blame.Report) []string {
	out := make([]string, len(rep.Lines))
	for i, l := range rep.Lines {
		out[i] = l.Text
	}
	return out
}
