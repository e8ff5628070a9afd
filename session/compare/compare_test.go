package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// ev is one event of a test recording: its subagent and payload, at ms after the start.
type ev struct {
	sub string
	ms  int
	d   session.Data
}

// write writes events as a recording (seq from 1) and returns its path.
func write(t *testing.T, name string, evs []ev) string {
	t.Helper()
	var buf []byte
	for i, e := range evs {
		var err error
		buf, err = record.AppendLine(buf, session.Event{V: 1, Seq: uint64(i + 1), TS: t0.Add(time.Duration(e.ms) * time.Millisecond),
			SessionID: "s-" + name, Type: e.d.Type(), SubagentID: e.sub, Data: e.d})
		if err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), name+".jsonl")
	if err := os.WriteFile(p, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func trace(t *testing.T, path string) *Trace {
	t.Helper()
	tr := NewTrace(path)
	if _, err := record.FoldFile(path, record.ReadOptions{}, tr.State(), tr.Fold); err != nil {
		t.Fatal(err)
	}
	return tr
}

func usd(f float64) *float64 { return &f }
func yes() *bool             { v := true; return &v }

// run is a builder's session: it reads a file (with result), maybe fails once and retries,
// writes, changes files, stops; then the changes are applied and maybe undone.
type run struct {
	readResult string
	retry      bool
	files      []session.FileChange
	cost       *float64
	apply      string // the second command line
	undo       bool
	tokensOut  int64
}

func (r run) events() []ev {
	sa := "sa-1"
	out := []ev{
		{"", 0, session.SessionStarted{Schema: 1, Workspace: "/w", PermissionMode: "acceptEdits", Provider: "script"}},
		{"", 10, session.CommandIssued{Line: "/delegate fix --agent-type builder", Command: "delegate"}},
		{sa, 20, session.SubagentSpawned{AgentType: "builder", AgentName: "builder", TaskDescription: "fix", PermissionMode: "acceptEdits"}},
		{sa, 30, session.SubagentActive{InitialState: "running"}},
		{sa, 40, session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c1", Tool: "read_file", Args: map[string]any{"path": "a.go", "limit": 10}}},
		{sa, 50, session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c1", Tool: "read_file", Result: r.readResult}},
	}
	if r.retry {
		out = append(out, ev{sa, 60, session.SubagentError{Error: "overloaded", Retryable: true, Attempt: 1, WillRetry: yes()}})
	}
	out = append(out,
		ev{sa, 70, session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: "c2", Tool: "write_file", Args: map[string]any{"path": "a.go"}}},
		ev{sa, 80, session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: "c2", Tool: "write_file", Result: "ok"}},
		ev{sa, 90, session.SubagentChanges{Base: "base-1", Files: r.files}},
		ev{sa, 100, session.SubagentStop{Outcome: "success", ToolInvocationCount: 2, DurationMS: 80, Tokens: session.Tokens{Input: 100, Output: r.tokensOut}, CostUSD: r.cost}},
		ev{"", 110, session.CommandIssued{Line: r.apply, Command: "apply"}},
	)
	var paths []string
	for _, f := range r.files {
		paths = append(paths, f.Path)
	}
	out = append(out, ev{"", 120, session.ChangesApplied{ApplyID: "apply-1", Source: sa, Files: paths}})
	if r.undo {
		out = append(out, ev{"", 130, session.ApplyUndone{ApplyID: "apply-1", Files: paths}})
	}
	return append(out, ev{"", 200, session.SessionEnded{Reason: "script_end"}})
}

func TestCompareFiguresDivergenceFiles(t *testing.T) {
	diffA := "diff --git a/a.go b/a.go\nindex 111..222 100644\n--- a/a.go\n+++ b/a.go\n@@ -1 +1,2 @@\n-x\n+y\n+z\n"
	// The same change computed against another base: only the index line differs.
	diffA2 := strings.Replace(diffA, "index 111..222", "index 333..444", 1)
	diffB := strings.Replace(diffA, "+z", "+w", 1)
	a := write(t, "a", run{readResult: "package a", retry: true, cost: usd(0.01), apply: "/apply sa-1", tokensOut: 20,
		files: []session.FileChange{
			{Path: "a.go", Kind: "modified", Added: 2, Removed: 1, Diff: diffA},
			{Path: "same.go", Kind: "modified", Added: 2, Removed: 1, Diff: diffA},
			{Path: "only-a.go", Kind: "added", Added: 5},
		}}.events())
	b := write(t, "b", run{readResult: "package b", cost: usd(0.025), apply: "/apply sa-1", tokensOut: 35, undo: true,
		files: []session.FileChange{
			{Path: "a.go", Kind: "modified", Added: 2, Removed: 1, Diff: diffB},
			{Path: "same.go", Kind: "modified", Added: 2, Removed: 1, Diff: diffA2},
			{Path: "only-b.go", Kind: "deleted", Removed: 7},
		}}.events())
	rep, err := Compare(trace(t, a), trace(t, b))
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Overall
	if o.A.Retries != 1 || o.B.Retries != 0 || o.Delta.Retries != -1 {
		t.Errorf("retries %d/%d Δ%d", o.A.Retries, o.B.Retries, o.Delta.Retries)
	}
	if o.A.TokensOut != 20 || o.B.TokensOut != 35 || o.Delta.TokensOut != 15 || o.Delta.TokensIn != 0 {
		t.Errorf("tokens %+v", o)
	}
	if o.A.CostUSD == nil || *o.A.CostUSD != 0.01 || o.Delta.CostUSD == nil || *o.Delta.CostUSD < 0.0149 || *o.Delta.CostUSD > 0.0151 {
		t.Errorf("cost A %v Δ %v", o.A.CostUSD, o.Delta.CostUSD)
	}
	if o.A.DurationMS != 200 || o.A.ToolCalls != 2 || o.Delta.ToolCalls != 0 {
		t.Errorf("duration %d tools %d", o.A.DurationMS, o.A.ToolCalls)
	}
	if len(rep.ByAgentType) != 1 || rep.ByAgentType[0].AgentType != "builder" || rep.ByAgentType[0].A.DurationMS != 80 ||
		rep.ByAgentType[0].A.Retries != 1 || *rep.ByAgentType[0].B.CostUSD != 0.025 {
		t.Errorf("by type %+v", rep.ByAgentType)
	}
	// The first divergence: the read_file result (seq 6 on both sides), though B also lacks
	// A's retry later.
	d := rep.Divergence
	if d == nil || d.Kind != "item" || d.SubagentID != "sa-1" || d.A.Seq != 6 || d.B.Seq != 6 || d.Command != 1 {
		t.Fatalf("divergence %+v", d)
	}
	if d.A.Description != "sa-1 read_file result (ok): package a" || d.B.Description != "sa-1 read_file result (ok): package b" {
		t.Errorf("descriptions %q / %q", d.A.Description, d.B.Description)
	}
	want := map[string]string{"a.go": Different, "same.go": Different, "only-a.go": OnlyA, "only-b.go": OnlyB}
	// same.go differs only because B's apply was undone: its change is the same.
	for _, f := range rep.Files {
		if want[f.Path] != f.Status {
			t.Errorf("%s: %s, want %s", f.Path, f.Status, want[f.Path])
		}
	}
	if len(rep.Files) != 4 || rep.Files[0].Path != "a.go" || rep.Files[0].A.Added != 2 || !rep.Files[0].A.Applied || rep.Files[0].B.Applied {
		t.Errorf("files %+v", rep.Files)
	}
	if f := rep.Files[3]; f.Path != "same.go" || f.A.Source != "sa-1" {
		t.Errorf("same.go row %+v", f)
	}

	// Without the undo, same.go is the same: the index line does not count.
	b2 := write(t, "b2", run{readResult: "package a", retry: true, cost: usd(0.01), apply: "/discard sa-1", tokensOut: 20,
		files: []session.FileChange{{Path: "same.go", Kind: "modified", Added: 2, Removed: 1, Diff: diffA2}}}.events())
	rep, err = Compare(trace(t, a), trace(t, b2))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		if f.Path == "same.go" && f.Status != Same {
			t.Errorf("same.go: %s", f.Status)
		}
	}
	// Here every item matches up to the stop, so the first divergence is the second command.
	if d := rep.Divergence; d == nil || d.Kind != "command" || d.Command != 1 || d.A.Seq != 12 || d.B.Seq != 12 ||
		d.A.Description != "command /apply sa-1" || d.B.Description != "command /discard sa-1" {
		t.Errorf("divergence %+v", rep.Divergence)
	}
}

// TestCompareMissingSide: a subagent one side never spawned, and one side's stream ending
// early, are divergences with seq 0 on the side that has nothing there.
func TestCompareMissingSide(t *testing.T) {
	full := run{readResult: "r", apply: "/apply sa-1", files: []session.FileChange{{Path: "x", Kind: "added", Added: 1}}}.events()
	// B stops after the first tool call (a crash: no result, no stop, no end).
	b := write(t, "b", full[:5])
	a := write(t, "a", full)
	rep, err := Compare(trace(t, a), trace(t, b))
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Divergence
	if d == nil || d.Kind != "item" || d.A.Seq != 6 || d.B.Seq != 0 || d.B.Description != "no further event for sa-1" {
		t.Fatalf("divergence %+v", d)
	}
	if rep.B.Ended || !rep.A.Ended || rep.Files[0].Status != OnlyA {
		t.Errorf("report %+v", rep)
	}
	// The reverse: B has a second subagent A never spawned.
	extra := append(append([]ev{}, full[:len(full)-1]...),
		ev{"sa-2", 150, session.SubagentSpawned{AgentType: "tester", TaskDescription: "test"}},
		full[len(full)-1])
	rep, err = Compare(trace(t, a), trace(t, write(t, "c", extra)))
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.Divergence; d == nil || d.Kind != "spawn" || d.SubagentID != "sa-2" || d.A.Seq != 0 || d.B.Seq != 13 ||
		d.B.Description != `sa-2 spawned: tester "test"` || d.A.Description != "no sa-2" {
		t.Errorf("divergence %+v", rep.Divergence)
	}
	if len(rep.ByAgentType) != 2 || rep.ByAgentType[1].AgentType != "tester" || rep.ByAgentType[1].A.Subagents != 0 || rep.ByAgentType[1].Delta.Subagents != 1 {
		t.Errorf("by type %+v", rep.ByAgentType)
	}
}

// TestTextSanitisedAndNarrow: what a recording says cannot reach the terminal raw, and the
// table keeps within 80 columns whatever the paths and descriptions.
func TestTextSanitisedAndNarrow(t *testing.T) {
	evil := "\x1b]0;pwned\x07\u202etxt.go\nnext"
	long := strings.Repeat("deep/", 30) + "file.go"
	r := run{readResult: "\x1b[2J cleared", apply: "/apply sa-1", files: []session.FileChange{{Path: evil, Kind: "added", Added: 1}, {Path: long, Kind: "added", Added: 1}}}
	a := write(t, "a", r.events())
	r.readResult = "other"
	b := write(t, "b", r.events())
	rep, err := Compare(trace(t, a), trace(t, b))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Errorf("raw control in output:\n%q", out)
	}
	if !strings.Contains(out, `\x1b[2J cleared`) || !strings.Contains(out, `\n`) || !strings.Contains(out, "  …deep/deep/") || strings.Contains(out, long) {
		t.Errorf("escapes or path cut not shown:\n%s", out)
	}
	for i, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line %d: %d wide: %q", i+1, n, l)
		}
	}
}
