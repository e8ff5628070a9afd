package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/render"
)

// readerModes are the command lines of the recording readers: FILE goes after the first word.
var readerModes = [][]string{
	{"inspect"}, {"inspect", "--json"}, {"inspect", "--lenient"}, {"inspect", "--json", "--lenient"},
	{"replay", "--print"}, {"replay", "--print", "--lenient"},
}

// readerTranscript runs every reader mode on path and writes what each printed (exit code,
// stdout, stderr with the path replaced by FILE).
func readerTranscript(t *testing.T, path string) string {
	var b strings.Builder
	for _, mode := range readerModes {
		args := append([]string{mode[0], path}, mode[1:]...)
		code, out, errOut := summit(t, args...)
		label := strings.Join(append([]string{mode[0], "FILE"}, mode[1:]...), " ")
		fmt.Fprintf(&b, "=== summit %s\nexit %d\n--- stdout\n%s\n--- stderr\n%s\n", label, code, out, strings.ReplaceAll(errOut, path, "FILE"))
	}
	return b.String()
}

// TestReadersMatchGolden: inspect (text and --json, strict and --lenient) and replay --print
// print, on every recording under testdata/recordings, exactly what they printed before they
// streamed: the golden files in testdata/readers were written by the build of git d0298b9
// (exit code, stdout, stderr). -update rewrites them from this build.
func TestReadersMatchGolden(t *testing.T) {
	files, err := filepath.Glob(rec + "*.jsonl")
	if err != nil || len(files) < 5 {
		t.Fatalf("recordings: %v %v", files, err)
	}
	for _, f := range files {
		got := readerTranscript(t, f)
		golden := filepath.Join("testdata", "readers", strings.TrimSuffix(filepath.Base(f), ".jsonl")+".golden")
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test ./cmd/summit -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s: the readers print otherwise than %s:\n%s", f, golden, got)
		}
	}
}

// TestReadersMatchFullFold: on recordings of real runs (the scripts of the run tests, on the
// test tapes, and the demo's), inspect's counting fold without text gives the metrics of a full
// fold (LoadFile), and replay --print's spooled fold prints what Print prints for the full fold.
func TestReadersMatchFullFold(t *testing.T) {
	t.Parallel()
	ws := runWorkspace(t)
	var recs []string
	for _, script := range []string{
		"/delegate \"change the greeting\" --agent-type builder\n/delegate escape test --agent-type analyzer\n/wait sa-1\n/apply sa-1\n",
		"/delegate run the shell --agent-type builder\n/delegate x --agent-type analyzer\n/wait sa-1\n",
		"/delegate the service is down --agent-type retriever\n",
	} {
		_, _, _, r := runScript(t, ws, script, "--approve", "shell")
		recs = append(recs, r)
	}
	// The demo's session (summit demo, headless): convergence, conflicts, handoffs, an apply.
	demoRec := demoRecording(t)
	recs = append(recs, demoRec, rec+"valid.jsonl", rec+"unknown-type.jsonl", rec+"torn.jsonl")
	for _, r := range recs {
		full, _, err := record.LoadFile(r, record.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		st := &session.State{}
		st.SetCountOnly() // as inspect folds
		if _, err := record.FoldFile(r, record.ReadOptions{NoText: true}, st, session.Apply); err != nil {
			t.Fatal(err)
		}
		if a, b := render.ComputeMetrics(full), render.ComputeMetrics(st); !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			t.Errorf("%s: metrics\n%s\nwant\n%s", r, jb, ja)
		}
		code, out, errOut := summit(t, "replay", r, "--print")
		if want := render.Render(full); code != 0 || out != want {
			t.Errorf("%s: replay --print (exit %d, %s) differs from Print of the full fold:\n%s\n---\n%s", r, code, errOut, out, want)
		}
	}
}
