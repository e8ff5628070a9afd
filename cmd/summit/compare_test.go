package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/compare"
	"github.com/summit-dev/summit/session/record"
)

// demoRun runs the tour's commands headless on the demo tapes, with the shell allowed or not
// and the given reply to the builder, and returns its recording.
func demoRun(t *testing.T, approve, reply string) string {
	t.Helper()
	if approve == "shell" && reply == "The Usage section please" {
		return demoRecording(t) // the same run, shared (the recording is only read)
	}
	ws := t.TempDir()
	for name, body := range demoFiles {
		os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644)
	}
	sf := filepath.Join(t.TempDir(), "demo.summit")
	os.WriteFile(sf, []byte(demoScript(reply)), 0o644)
	rec := filepath.Join(t.TempDir(), approve+".jsonl")
	want := 0
	if approve == "none" {
		want = 1 // the tester, refused the shell, fails
	}
	if code, _, errOut := summit(t, "run", "--script", sf, "--workspace", ws, "--provider", "script",
		"--approve", approve, "--record", rec); code != want {
		t.Fatalf("demo run (%s): exit %d, want %d\n%s", approve, code, want, errOut)
	}
	return rec
}

// inspectJSON is inspect A B --json, decoded.
func inspectJSON(t *testing.T, a, b string) compare.Report {
	t.Helper()
	code, out, errOut := summit(t, "inspect", a, b, "--json")
	if code != 0 {
		t.Fatalf("inspect A B: exit %d: %s", code, errOut)
	}
	var rep compare.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep
}

// firstSeq is the seq of the first event of a recording that matches.
func firstSeq(t *testing.T, path string, match func(session.Event) bool) uint64 {
	t.Helper()
	evs, _, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if match(e) {
			return e.Seq
		}
	}
	t.Fatalf("%s: no matching event", path)
	return 0
}

// TestInspectCompareDemoRuns compares two runs of the demo tour that differ only in whether
// the shell was allowed and in the reply to the builder: the tester's shell request is where
// they part (granted in A, denied in B), and README.md is the file they end with differently.
func TestInspectCompareDemoRuns(t *testing.T) {
	t.Parallel()
	a := demoRun(t, "shell", "The Usage section please")
	b := demoRun(t, "none", "testing")
	rep := inspectJSON(t, a, b)

	// Each side's figures are the fold's, and the deltas are B minus A.
	stA, _, err := record.LoadFile(a, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stB, _, err := record.LoadFile(b, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Overall
	if o.A.Subagents != len(stA.Subagents) || o.B.Subagents != len(stB.Subagents) || o.A.Subagents != 5 {
		t.Errorf("subagents %d/%d, want %d/%d", o.A.Subagents, o.B.Subagents, len(stA.Subagents), len(stB.Subagents))
	}
	if o.A.ToolCalls != stA.Counters.ToolCalls || o.B.ToolCalls != stB.Counters.ToolCalls || o.Delta.ToolCalls != o.B.ToolCalls-o.A.ToolCalls {
		t.Errorf("tool calls %d/%d Δ%d, fold says %d/%d", o.A.ToolCalls, o.B.ToolCalls, o.Delta.ToolCalls, stA.Counters.ToolCalls, stB.Counters.ToolCalls)
	}
	// A's tester ran the tests; B's was refused the shell and did not.
	if o.A.PermissionRequests != 1 || o.B.PermissionRequests != 1 || o.A.PermissionsGranted != 1 || o.B.PermissionsDenied != 1 ||
		o.Delta.PermissionsGranted != -1 || o.Delta.PermissionsDenied != 1 {
		t.Errorf("permissions A %+v B %+v Δ %+v", o.A, o.B, o.Delta)
	}
	if o.A.Conflicts != 1 || o.B.Conflicts != 1 || o.Delta.Conflicts != 0 || o.A.ConflictsResolved != 1 {
		t.Errorf("conflicts A %d B %d Δ %d", o.A.Conflicts, o.B.Conflicts, o.Delta.Conflicts)
	}
	// B's tester could not test: a failure (issue 28).
	if o.A.Outcomes["success"] != 5 || o.B.Outcomes["success"] != 4 || o.B.Outcomes["failure"] != 1 || o.Delta.Outcomes["success"] != -1 {
		t.Errorf("outcomes A %v B %v Δ %v", o.A.Outcomes, o.B.Outcomes, o.Delta.Outcomes)
	}
	if o.A.CostUSD != nil || o.Delta.CostUSD != nil {
		t.Errorf("the demo tapes have no prices: the cost is unknown, got %v", o.A.CostUSD)
	}
	wantDur := stB.EndedAt.Sub(stB.StartedAt).Milliseconds() - stA.EndedAt.Sub(stA.StartedAt).Milliseconds()
	if o.Delta.DurationMS != wantDur {
		t.Errorf("duration delta %d, want %d", o.Delta.DurationMS, wantDur)
	}
	var tester *compare.Row
	types := []string{}
	for i, r := range rep.ByAgentType {
		types = append(types, r.AgentType)
		if r.AgentType == "tester" {
			tester = &rep.ByAgentType[i]
		}
	}
	if tester == nil {
		t.Fatalf("no tester row in %v", types)
	}
	if tester.A.PermissionsGranted != 1 || tester.B.PermissionsDenied != 1 || tester.A.Subagents != 1 {
		t.Errorf("tester row %+v", tester)
	}
	var sumA int
	for _, r := range rep.ByAgentType {
		sumA += r.A.Subagents
		if r.Delta.ToolCalls != r.B.ToolCalls-r.A.ToolCalls || r.Delta.TokensOut != r.B.TokensOut-r.A.TokensOut {
			t.Errorf("%s: delta is not B−A: %+v", r.AgentType, r)
		}
	}
	if sumA != o.A.Subagents {
		t.Errorf("agent types hold %d subagents, overall %d", sumA, o.A.Subagents)
	}

	// The first divergence is the tester's shell request decided: granted in A, denied in B.
	d := rep.Divergence
	if d == nil {
		t.Fatal("no divergence found")
	}
	decided := func(e session.Event) bool {
		return e.Type == session.TypePermissionGranted || e.Type == session.TypePermissionDenied
	}
	wantA, wantB := firstSeq(t, a, decided), firstSeq(t, b, decided)
	if d.Kind != "item" || d.SubagentID != "sa-4" || d.A.Seq != wantA || d.B.Seq != wantB {
		t.Errorf("divergence %+v, want item in sa-4 at seq %d / %d", d, wantA, wantB)
	}
	if !strings.Contains(d.A.Description, "granted") || !strings.Contains(d.B.Description, "denied") {
		t.Errorf("descriptions %q / %q", d.A.Description, d.B.Description)
	}
	issuedBefore := 0
	evs, _, _ := record.ReadAll(a, record.ReadOptions{})
	for _, e := range evs {
		if e.Type == session.TypeCommandIssued && e.Seq < wantA {
			issuedBefore++
		}
	}
	if d.Command != issuedBefore {
		t.Errorf("divergence after %d commands, want %d", d.Command, issuedBefore)
	}

	// Files: the merged fix of cart.go is the same on both sides; README.md differs (the
	// builder wrote the section it was asked for).
	byPath := map[string]compare.FileRow{}
	for _, f := range rep.Files {
		byPath[f.Path] = f
	}
	cart, readme := byPath["cart.go"], byPath["README.md"]
	if cart.Status != compare.Same || cart.A == nil || !cart.A.Applied || cart.A.Added == 0 || *cart.A != *cart.B {
		t.Errorf("cart.go: %+v A %+v B %+v", cart, cart.A, cart.B)
	}
	if readme.Status != compare.Different || readme.A == nil || readme.B == nil || !readme.A.Applied || readme.A.Added == 0 || readme.B.Added == 0 {
		t.Errorf("README.md: %+v A %+v B %+v", readme, readme.A, readme.B)
	}

	// The text: the same figures, aligned within 80 columns.
	code, out, errOut := summit(t, "inspect", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for i, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d wide: %q", i+1, w, l)
		}
	}
	for _, want := range []string{
		"tool calls", "permission requests", "tester",
		"  A seq " + itoa(wantA) + " ", "  B seq " + itoa(wantB) + " ",
		"README.md", "different", "cart.go",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if line := lineWith(out, "  granted"); !strings.HasSuffix(strings.TrimSpace(line), "-1") {
		t.Errorf("granted row: %q", line)
	}
	if line := lineWith(out, "README.md"); !strings.Contains(line, "different") || strings.Count(line, "✓") != 2 {
		t.Errorf("README.md row: %q", line)
	}
	t.Log("\n" + out)
}

// TestInspectCompareSelf: a recording compared with itself has no divergence, zero deltas and
// every file the same.
func TestInspectCompareSelf(t *testing.T) {
	rep := inspectJSON(t, rec+"valid.jsonl", rec+"valid.jsonl")
	if rep.Divergence != nil {
		t.Errorf("divergence %+v", rep.Divergence)
	}
	d := rep.Overall.Delta
	if d.DurationMS != 0 || d.ToolCalls != 0 || d.Subagents != 0 || rep.Overall.A.Subagents != 3 {
		t.Errorf("overall %+v", rep.Overall)
	}
	for _, f := range rep.Files {
		if f.Status != compare.Same {
			t.Errorf("%s: %s", f.Path, f.Status)
		}
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestReplayBesideUsage: --beside's usage errors come before any terminal is needed.
func TestReplayBesideUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", rec + "valid.jsonl", "--beside", rec + "valid.jsonl", "--sync", "tim"}, `--sync is seq, time or off, got "tim"`},
		{[]string{"replay", rec + "valid.jsonl", "--beside", rec + "valid.jsonl", "--print"}, "--beside is for the interactive replay"},
		{[]string{"replay", rec + "valid.jsonl", "--beside", rec + "valid.jsonl"}, "needs a terminal"},
	} {
		if code, _, errOut := summit(t, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want 2 with %q", c.args, code, errOut, c.want)
		}
	}
}
