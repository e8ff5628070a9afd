package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// The replay offers to reattach only what can be: a session that did not end, with a subagent
// still placed on a runner, whose recording no running summit writes.
func TestReattachOffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	rec, err := record.OpenRecorderFile(path, record.RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	add := func(r *record.Recorder, sub string, d session.Data) {
		seq++
		e := session.New(sub, d)
		e.Seq, e.TS, e.SessionID = seq, time.Date(2026, 11, 22, 10, 0, int(seq), 0, time.UTC), "s-killed"
		if _, err := r.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	add(rec, "", session.SessionStarted{Schema: 1, Workspace: t.TempDir(), PermissionMode: "acceptEdits"})
	add(rec, "sa-1", session.SubagentSpawned{AgentType: "explore", AgentName: "explore", TaskDescription: "here", TimeoutS: 60})
	add(rec, "sa-2", session.SubagentSpawned{AgentType: "builder", AgentName: "builder", TaskDescription: "there", TimeoutS: 60, Runner: "gpu-1"})
	add(rec, "sa-2", session.SubagentActive{InitialState: "running"})
	add(rec, "sa-2", session.RunnerCursor{Job: "J1", Runner: "gpu-1", Seq: 3})
	if r, subs := reattachOffer(path); r != nil || subs != nil {
		t.Errorf("offered %v while a running summit writes the recording", subs)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	r, subs := reattachOffer(path)
	if r == nil || strings.Join(subs, "|") != "sa-2 on gpu-1 as job J1" {
		t.Fatalf("the killed session's offer: %v (want sa-2 on gpu-1 as job J1 only)", subs)
	}
	if r.path != path || r.state.SessionID != "s-killed" {
		t.Errorf("the offer resumes %s of session %s", r.path, r.state.SessionID)
	}
	rec, _, err = record.ReopenRecorderFile(path, record.RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	add(rec, "", session.SessionEnded{Reason: "quit"})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if r, subs := reattachOffer(path); r != nil || subs != nil {
		t.Errorf("offered %v for an ended session", subs)
	}
}
