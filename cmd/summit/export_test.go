package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/live"
	"github.com/summit-dev/summit/session/otelexport"
	"github.com/summit-dev/summit/session/otelexport/collectortest"
	"github.com/summit-dev/summit/session/record"
)

// demoRecording runs the demo tour headless on the embedded tapes (as TestDemoTapesHeadless
// does) and returns its recording.
func demoRecording(t *testing.T) string {
	t.Helper()
	path, err := sharedDemoRecording()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// sharedDemoRecording is the demo's headless run (--approve shell, "The Usage section
// please"), run once per test process: the tests that use it only read the recording, and a
// demo run (three subagents, a convergence, go test in a scratch worktree) is many seconds.
// It lives in TestMain's cache dir, as does its workspace.
var sharedDemoRecording = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp(testCache, "demo-")
	if err != nil {
		return "", err
	}
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	for name, body := range demoFiles {
		os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644)
	}
	sf := filepath.Join(dir, "demo.summit")
	os.WriteFile(sf, []byte(demoScript("The Usage section please")), 0o644)
	path := filepath.Join(dir, "demo.jsonl")
	var out, errOut bytes.Buffer
	if code := run([]string{"run", "--script", sf, "--workspace", ws, "--provider", "script",
		"--approve", "shell", "--record", path}, &out, &errOut); code != 0 {
		return "", fmt.Errorf("demo run: exit %d\n%s", code, errOut.String())
	}
	return path, nil
})

// TestExportDemoToCollector exports the demo's recording to the OpenTelemetry Collector's own
// OTLP receiver, over HTTP and over gRPC, and checks the span tree against the recording: one
// span per subagent under the session (or its handoff), one per tool call under its subagent,
// one per model call under its subagent (the script tapes number their tool calls
// call-<turn>-<n>, so the recording itself says which model call asked for which tool, and
// how many there were), tokens as SubagentStop recorded them, the permission wait inside its
// tool call, and the same ids from both exports.
func TestExportDemoToCollector(t *testing.T) {
	t.Parallel()
	path := demoRecording(t)
	evs, _, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	col := collectortest.Start(t)
	var runs [][]collectortest.Span
	for _, c := range []struct{ protocol, endpoint string }{{"http/protobuf", col.HTTP}, {"grpc", col.GRPC}} {
		col.Reset()
		code, out, errOut := summit(t, "export", "otel", path, "--endpoint", c.endpoint, "--protocol", c.protocol, "-v")
		if code != 0 || out != "" || !strings.Contains(errOut, "exported ") {
			t.Fatalf("%s: exit %d %q %s", c.protocol, code, out, errOut)
		}
		runs = append(runs, col.Spans())
	}
	spans := runs[0]
	if len(runs[1]) != len(spans) {
		t.Fatalf("http sent %d spans, grpc %d", len(spans), len(runs[1]))
	}
	for i := range spans { // the same trace: ids, parents, times
		a, b := spans[i], runs[1][i]
		if a.ID != b.ID || a.Parent != b.Parent || a.Trace != b.Trace || !a.Start.Equal(b.Start) || !a.End.Equal(b.End) {
			t.Errorf("span %d differs between exports: %+v %+v", i, a, b)
		}
	}
	sid := evs[0].SessionID
	byID := map[string]collectortest.Span{}
	var root collectortest.Span
	for _, s := range spans {
		if s.Trace != otelexport.TraceID(sid).String() {
			t.Errorf("%s in trace %s", s.Name, s.Trace)
		}
		byID[s.ID] = s
		if s.Parent == "" {
			if root.ID != "" {
				t.Errorf("two roots: %s and %s", root.Name, s.Name)
			}
			root = s
		}
	}
	if root.Name != "summit session" || !root.Start.Equal(evs[0].TS) || !root.End.Equal(evs[len(evs)-1].TS) {
		t.Fatalf("root %+v", root)
	}
	// What the recording says.
	agentSpan := map[string]collectortest.Span{} // subagent id → span
	calls := map[string]map[string]collectortest.Span{}
	for _, s := range spans {
		if s.Attrs["gen_ai.operation.name"] == "invoke_agent" {
			agentSpan[s.Attrs["gen_ai.agent.id"].(string)] = s
		}
	}
	var subagents, toolCalls, models int
	handoffOf := map[string]string{}
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "handoff ") {
			handoffOf[s.Attrs["summit.subagent.id"].(string)] = s.ID
		}
	}
	turns := map[string]int{} // the last turn a subagent's tool call ids name
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.SubagentSpawned:
			subagents++
			s, ok := agentSpan[e.SubagentID]
			if !ok || s.Name != "invoke_agent "+d.AgentName || s.Parent != root.ID || !s.Start.Equal(e.TS) {
				t.Errorf("%s: span %+v", e.SubagentID, s)
			}
		case session.SubagentStop:
			s := agentSpan[e.SubagentID]
			if s.Attrs["gen_ai.usage.input_tokens"] != d.Tokens.Input || s.Attrs["gen_ai.usage.output_tokens"] != d.Tokens.Output ||
				s.Attrs["summit.outcome"] != d.Outcome || !s.End.Equal(e.TS) {
				t.Errorf("%s: tokens %v/%v outcome %v, recorded %+v", e.SubagentID, s.Attrs["gen_ai.usage.input_tokens"],
					s.Attrs["gen_ai.usage.output_tokens"], s.Attrs["summit.outcome"], d)
			}
		case session.TranscriptEvent:
			if d.EventType != session.TranscriptToolCall {
				continue
			}
			toolCalls++
			if calls[e.SubagentID] == nil {
				calls[e.SubagentID] = map[string]collectortest.Span{}
			}
			var tool collectortest.Span
			for _, s := range spans {
				if s.Attrs["gen_ai.tool.call.id"] == d.CallID && s.Parent == agentSpan[e.SubagentID].ID {
					tool = s
				}
			}
			turn, _ := strconv.Atoi(strings.Split(d.CallID, "-")[1])
			turns[e.SubagentID] = max(turns[e.SubagentID], turn)
			if tool.Name != "execute_tool "+d.Tool || !tool.Start.Equal(e.TS) || tool.Attrs["summit.turn"] != int64(turn) {
				t.Errorf("%s %s: tool span %+v", e.SubagentID, d.CallID, tool)
				continue
			}
			// The model call it came from is linked, and is that turn's.
			if len(tool.Links) != 1 || byID[tool.Links[0]].Attrs["summit.turn"] != int64(turn) {
				t.Errorf("%s %s: linked to %v", e.SubagentID, d.CallID, tool.Links)
			}
		case session.PermissionRequested:
			var perm collectortest.Span
			for _, s := range spans {
				if s.Attrs["summit.permission.request_id"] == d.RequestID {
					perm = s
				}
			}
			if p := byID[perm.Parent]; p.Name != "execute_tool "+d.Tool || perm.Attrs["summit.permission.decision"] != "granted" {
				t.Errorf("%s: permission %+v under %q", d.RequestID, perm, p.Name)
			}
		}
	}
	// Model calls: each subagent's tool-calling turns, then the turn with its final answer.
	// Each ends at its ModelTurn and carries that call's tokens: the calls of a subagent sum
	// to its SubagentStop's.
	turnAt := map[string]map[int64]session.Event{} // subagent → turn → its ModelTurn
	stopTokens := map[string]session.Tokens{}
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.ModelTurn:
			if turnAt[e.SubagentID] == nil {
				turnAt[e.SubagentID] = map[int64]session.Event{}
			}
			turnAt[e.SubagentID][int64(d.Turn)] = e
		case session.SubagentStop:
			stopTokens[e.SubagentID] = d.Tokens
		}
	}
	sums := map[string]session.Tokens{}
	for _, s := range spans {
		if s.Attrs["gen_ai.operation.name"] != "chat" {
			continue
		}
		models++
		sa := s.Attrs["summit.subagent.id"].(string)
		if s.Parent != agentSpan[sa].ID || s.Attrs["gen_ai.provider.name"] != "script" || s.Attrs["gen_ai.system"] != "script" || s.Kind != "Client" {
			t.Errorf("model call %+v", s)
		}
		mt, ok := turnAt[sa][s.Attrs["summit.turn"].(int64)]
		if !ok {
			t.Errorf("%s: a model call of turn %v without its ModelTurn", sa, s.Attrs["summit.turn"])
			continue
		}
		d := mt.Data.(session.ModelTurn)
		in, out := s.Attrs["gen_ai.usage.input_tokens"], s.Attrs["gen_ai.usage.output_tokens"]
		if in != d.Tokens.Input || out != d.Tokens.Output || !s.End.Equal(mt.TS) {
			t.Errorf("%s turn %d: tokens %v/%v ending %v, recorded %+v at %v", sa, d.Turn, in, out, s.End, d.Tokens, mt.TS)
		}
		sum := sums[sa]
		sum.Input, sum.Output = sum.Input+d.Tokens.Input, sum.Output+d.Tokens.Output
		sums[sa] = sum
	}
	for sa, want := range stopTokens {
		if sums[sa] != want {
			t.Errorf("%s: its model calls' tokens sum to %+v, its stop says %+v", sa, sums[sa], want)
		}
	}
	wantModels := 0
	for _, n := range turns {
		wantModels += n + 1
	}
	if subagents != 5 || toolCalls != 9 || models != wantModels || wantModels != 14 {
		t.Errorf("%d subagents, %d tool calls, %d model calls (the recording's tapes: %d)", subagents, toolCalls, models, wantModels)
	}
	// The handoff of sa-5 hangs under it; the convergence and its conflict under the session.
	if h := byID[handoffOf["sa-5"]]; h.Parent != agentSpan["sa-5"].ID || h.Attrs["summit.handoff.mode"] != "transfer_control" {
		t.Errorf("handoff %+v", h)
	}
	var cv, cf collectortest.Span
	for _, s := range spans {
		switch s.Name {
		case "converge cv-1":
			cv = s
		case "conflict cf-1":
			cf = s
		}
	}
	if cv.Parent != root.ID || cf.Parent != cv.ID || cf.Attrs["summit.conflict.choice"] != "sa-3" || len(cv.Links) != 2 {
		t.Errorf("convergence %+v conflict %+v", cv, cf)
	}
	// Every span: subagents, model calls and tool calls, the permission, handoff, convergence,
	// conflict and the root.
	if len(spans) != subagents+models+toolCalls+5 {
		t.Errorf("%d spans", len(spans))
	}
}

// TestExportStdout: --stdout prints the spans as JSON lines; the recording's text is in them
// only with --content.
func TestExportStdout(t *testing.T) {
	path := filepath.Join(rec, "valid.jsonl")
	code, out, errOut := summit(t, "export", "otel", path, "--stdout")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var last otelexport.JSONSpan
	for _, l := range lines {
		last = otelexport.JSONSpan{}
		if err := json.Unmarshal([]byte(l), &last); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
	}
	if last.Name != "summit session" || last.ParentID != "" || len(lines) < 3 {
		t.Errorf("%d lines, last %+v", len(lines), last)
	}
	if strings.Contains(out, "gen_ai.tool.call.result") || strings.Contains(out, "summit.task") {
		t.Error("text of the recording exported without --content")
	}
	code, withText, _ := summit(t, "export", "otel", path, "--stdout", "--content")
	if code != 0 || !strings.Contains(withText, "summit.task") {
		t.Errorf("--content: exit %d, no task", code)
	}
	code2, again, _ := summit(t, "export", "otel", path, "--stdout")
	if code2 != 0 || again != out {
		t.Error("two exports of one recording differ")
	}
}

// TestExportErrors: a bad URL or protocol is a usage error naming a valid value; a collector
// that is not there, a bad line (file:line) and a missing file fail with exit 1; a recording
// that cannot be read whole sends nothing.
func TestExportErrors(t *testing.T) {
	col := collectortest.Start(t)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	good, _ := os.ReadFile(filepath.Join(rec, "valid.jsonl"))
	lines := strings.SplitAfter(string(good), "\n")
	os.WriteFile(bad, []byte(lines[0]+lines[1]+"{\"v\":1,\"seq\":3,\"ts\":\"nope\"}\n"+strings.Join(lines[2:], "")), 0o644)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	l.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"export", "otel", rec + "valid.jsonl", "--endpoint", "localhost:4318"}, 2, `endpoint "localhost:4318" is not an OTLP URL: want http:// or https://, a host and a port, such as http://localhost:4318`},
		{[]string{"export", "otel", rec + "valid.jsonl", "--protocol", "http"}, 2, `protocol "http": want one of http/protobuf, http/json, grpc`},
		{[]string{"export", "otel", rec + "valid.jsonl", "--endpoint", closed}, 1, "connection refused"},
		{[]string{"export", "otel", rec + "valid.jsonl", "--endpoint", closed, "--protocol", "grpc", "--timeout", "1s"}, 1, "exporting to " + closed},
		{[]string{"export", "otel", bad, "--endpoint", col.HTTP}, 1, bad + ": line 3:"},
		{[]string{"export", "otel", "nope.jsonl"}, 1, "nope.jsonl: no such file"},
		{[]string{"export", "otel"}, 2, "usage: summit export otel FILE"},
		{[]string{"export"}, 2, "usage: summit export otel FILE"},
	} {
		start := time.Now()
		code, _, errOut := summit(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, errOut, c.code, c.want)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%v: took %s", c.args, d)
		}
	}
	if n := len(col.Spans()); n != 0 {
		t.Errorf("a bad recording sent %d spans", n)
	}
}

// TestLiveExportMatchesRecording runs the demo tour as a live session with a Live export on
// its OnEvent (as --otel-endpoint will), then exports the recording that session wrote: the
// collector receives the same trace twice, span for span (ids, parents, names, times,
// attributes).
func TestLiveExportMatchesRecording(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for name, body := range demoFiles {
		os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644)
	}
	path := filepath.Join(t.TempDir(), "live.jsonl")
	col := collectortest.Start(t)
	// The live export goes through the session flag, as `summit run --otel-endpoint` does.
	f := &sessionFlags{workspace: ws, mode: "acceptEdits", provider: "script", record: path, approve: "shell", parallel: 8,
		otelEndpoint: col.HTTP}
	script := demoScript("testing")
	var errb bytes.Buffer
	w, err := f.wire(script, &errb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.otel == nil {
		t.Fatal("--otel-endpoint made no live export")
	}
	if code, err := live.RunScript(context.Background(), w.x, strings.NewReader(script), io.Discard); code != 0 || err != nil {
		t.Fatalf("run: %d %v", code, err)
	}
	w.closed()
	if w.otel.Dropped() != 0 || strings.Contains(errb.String(), "OpenTelemetry") {
		t.Fatalf("live export: %d dropped; %s", w.otel.Dropped(), errb.String())
	}
	liveSpans := col.Spans()
	col.Reset()
	if code, _, errOut := summit(t, "export", "otel", path, "--endpoint", col.HTTP); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	fileSpans := col.Spans()
	if len(liveSpans) < 30 || len(liveSpans) != len(fileSpans) {
		t.Fatalf("live %d spans, file %d", len(liveSpans), len(fileSpans))
	}
	sort := func(s []collectortest.Span) {
		slices.SortFunc(s, func(a, b collectortest.Span) int { return strings.Compare(a.ID, b.ID) })
	}
	sort(liveSpans)
	sort(fileSpans)
	for i := range liveSpans {
		if !reflect.DeepEqual(liveSpans[i], fileSpans[i]) {
			t.Errorf("live %+v\nfile %+v", liveSpans[i], fileSpans[i])
		}
	}
}
