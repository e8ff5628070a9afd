package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/summit-dev/summit/session/record"
)

const importFixtures = "../../session/imports/testdata/"

// TestImportReplayInspect imports the fixtures of every format and version, and each
// recording replays (--print) and inspects like a native one, with the source's tree.
func TestImportReplayInspect(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := summit(t, "import", importFixtures+"claude", importFixtures+"codex", importFixtures+"gemini", "-o", out)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 10 {
		t.Fatalf("want one line per recording (10):\n%s", stdout)
	}
	want := map[string]string{ // recording -> a line its tree must hold
		"s-claude-7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b": "  ✓ sa-2 Explore (Find the rounding code) · done",
		"s-claude-1a2b3c4d-0000-4000-8000-00000000abcd": "  ✓ sa-3 general-purpose (Review limiter) · done",
		"s-codex-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b":  "    ✓ sa-3 explorer (Linter) · done",
		"s-codex-5973b6c0-94b8-487b-a530-2aeb6098ae0e":  "✓ sa-1 codex (main) · done",
		"s-gemini-9b8c7d6e-1111-4222-8333-444455556666": "  ✓ sa-2 codebase_investigator (codebase_investigator-x7k2) · done",
		"s-gemini-3c2b1a09-aaaa-4bbb-8ccc-dddddddddddd": "✓ sa-1 gemini-cli (main) · done",
		"s-gemini-checkpoint-arith":                     "✓ sa-1 gemini-cli (main) · done",
		"s-claude-3c4d5e6f-1a2b-4c3d-8e9f-0a1b2c3d4e5f": "  ✓ sa-2 Explore (Find price code) · done",
		"s-codex-019c0a00-1111-7aaa-8bbb-000000000001":  "  ✓ sa-2 explorer (Scout) · done",
		"s-gemini-c0ffee00-2222-4333-8444-555566667777": "  ✓ sa-2 gemini-subagent (d00dfeed-8888-4999-aaaa-bbbbccccdddd) · done",
	}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 || !strings.HasSuffix(f[3], " events") {
			t.Errorf("line %q is not path, format, subagents, events", l)
			continue
		}
		id := strings.TrimSuffix(filepath.Base(f[0]), ".jsonl")
		row, ok := want[id]
		if !ok {
			t.Errorf("unexpected recording %s", f[0])
			continue
		}
		code, printed, errOut := summit(t, "replay", "--print", f[0])
		if code != 0 || errOut != "" || !strings.Contains(printed, "\n"+row) || !strings.Contains(printed, "ended (imported)") {
			t.Errorf("replay --print %s: exit %d %s\n%s", id, code, errOut, printed)
		}
		code, js, errOut := summit(t, "inspect", "--json", f[0])
		var m struct {
			SessionID string `json:"session_id"`
		}
		if code != 0 || errOut != "" || json.Unmarshal([]byte(js), &m) != nil || m.SessionID != id {
			t.Errorf("inspect %s: exit %d %s\n%s", id, code, errOut, js)
		}
	}
}

// TestImportErrors: one error per unreadable file, with its line; the readable ones are
// written all the same, and the exit code is 1.
func TestImportErrors(t *testing.T) {
	out := t.TempDir()
	good := importFixtures + "gemini/tmp/77aa/checkpoint-arith.json"
	code, stdout, stderr := summit(t, "import", importFixtures+"bad/malformed.jsonl", good, importFixtures+"bad/notjson.jsonl", importFixtures+"nope", "-o", out)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, w := range []string{"bad/malformed.jsonl:2: malformed JSON", "bad/notjson.jsonl: not a session file of a format summit imports (tried claude", "nope: no such file or folder"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Count(stderr, "\n") != 3 {
		t.Errorf("want three errors:\n%s", stderr)
	}
	if !strings.Contains(stdout, "s-gemini-checkpoint-arith.jsonl\tgemini") {
		t.Errorf("the good file was not written:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "s-gemini-checkpoint-arith.jsonl")); err != nil {
		t.Error(err)
	}

	code, _, stderr = summit(t, "import", importFixtures+"bad/malformed.jsonl", "--lenient", "-o", out)
	if code != 0 || stderr != "" {
		t.Errorf("--lenient: exit %d %s", code, stderr)
	}
}

func TestImportUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "import needs a PATH"},
		{[]string{"import", "x", "--format", "cursor"}, `--format "cursor" is not auto, claude, codex or gemini`},
		{[]string{"import", importFixtures + "codex", "-o", "one.jsonl"}, "-o one.jsonl names one file, but 3 sessions were found"},
	} {
		code, _, stderr := summit(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %s", c.args, code, stderr)
		}
	}
}

func TestImportJSONAndOutputFile(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "one.jsonl")
	code, stdout, stderr := summit(t, "import", "--json", "--format", "codex", importFixtures+"codex/sessions/2026/01/15", "-o", dest)
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	var res []struct {
		Path      string `json:"path"`
		Format    string `json:"format"`
		Subagents int    `json:"subagents"`
		Events    int    `json:"events"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res) != 1 || res[0].Path != dest || res[0].Subagents != 2 || res[0].Events < 40 {
		t.Fatalf("%v %+v\n%s", err, res, stdout)
	}
	if code, _, stderr := summit(t, "replay", "--print", dest); code != 0 {
		t.Errorf("replay: %s", stderr)
	}
}

// TestImportSameSessionTwice: a folder holding a torn copy of a session beside the session
// itself gives one recording, the fuller one's, whichever is read first, with a warning
// naming both; fewer events never replace more.
func TestImportSameSessionTwice(t *testing.T) {
	full := importFixtures + "claude/v2.1/-home-dev-shop/7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl"
	torn := importFixtures + "bad/torn.jsonl"
	for _, order := range [][]string{{torn, full}, {full, torn}} {
		out := t.TempDir()
		code, _, errOut := summit(t, append([]string{"import", "-o", out}, order...)...)
		rec := filepath.Join(out, "s-claude-7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl")
		st, _, err := record.LoadFile(rec, record.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Subagents) != 2 { // the main agent and its subagent: the full file's tree
			t.Errorf("order %v: the recording kept is the torn copy's (%d subagents)\n%s", order, len(st.Subagents), errOut)
		}
		if !strings.Contains(errOut, "the same session (7f3c1a2e") {
			t.Errorf("order %v: no word of the duplicate: %d\n%s", order, code, errOut)
		}
	}
}

// TestImportForcedFormatAndFIFO: a --format the file does not match is an error naming the
// file and what it looks like, and nothing is written; a named pipe is refused, not read.
func TestImportForcedFormatAndFIFO(t *testing.T) {
	out := t.TempDir()
	src := importFixtures + "claude/v2.1/-home-dev-shop/7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl"
	fifo := filepath.Join(t.TempDir(), "s.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := summit(t, "import", "--format", "codex", src, fifo, "-o", out)
	if code != 1 || stdout != "" || !strings.Contains(stderr, src+": --format codex, but it looks like a claude session (Claude Code JSONL)") ||
		!strings.Contains(stderr, fifo+": a named pipe (FIFO)") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("written: %v", ents)
	}
}
