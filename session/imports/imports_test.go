package imports

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

const td = "testdata"

// load imports u into a temporary folder and folds the recording as a replay does.
func load(t *testing.T, u Unit) (*session.State, Result, []byte) {
	t.Helper()
	res, err := Import(u, t.TempDir(), Options{Environ: []string{}})
	if err != nil {
		t.Fatalf("import %s: %v", u.Path, err)
	}
	st, rep, err := record.LoadFile(res.Path, record.ReadOptions{})
	if err != nil {
		t.Fatalf("load %s: %v", res.Path, err)
	}
	if len(rep.Warnings) > 0 {
		t.Errorf("%s: reader warnings %v", res.Path, rep.Warnings)
	}
	b, _ := os.ReadFile(res.Path)
	return st, res, b
}

func plan(t *testing.T, path string) Unit {
	t.Helper()
	us, errs := Plan([]string{path}, Auto)
	if len(errs) > 0 || len(us) != 1 {
		t.Fatalf("plan %s: %v %v", path, us, errs)
	}
	return us[0]
}

// tree renders the subagent tree as "id type name <- parent" lines.
func tree(st *session.State) string {
	var b strings.Builder
	for _, sa := range st.Subagents {
		b.WriteString(sa.ID + " " + sa.AgentType + " " + sa.AgentName + " <- " + sa.Parent + " " + sa.Outcome + "\n")
	}
	return b.String()
}

// transcript is one subagent's transcript items as "kind text" lines.
func transcript(st *session.State, id string) string {
	sa := st.Subagent(id)
	var b strings.Builder
	for i := range sa.Transcript.Len() {
		it := sa.Transcript.Item(i)
		b.WriteString(it.Kind + " " + it.Tool + " " + sa.Transcript.Text(i) + "\n")
	}
	return b.String()
}

func TestClaudeCodeSubagentFiles(t *testing.T) {
	u := plan(t, filepath.Join(td, "claude/v2.1/-home-dev-shop/7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl"))
	if len(u.Children) != 1 || !strings.HasSuffix(u.Children[0], "subagents/agent-a4f9e21.jsonl") {
		t.Fatalf("children %v", u.Children)
	}
	st, res, _ := load(t, u)
	want := "sa-1 claude-code main <-  success\nsa-2 Explore Find the rounding code <- sa-1 success\n"
	if got := tree(st); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	if res.SessionID != "s-claude-7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b" || res.Subagents != 1 || res.Notes != 1 {
		t.Errorf("result %+v", res)
	}
	main := st.Subagent("sa-1")
	// msg_01 is written on two lines with its usage repeated: counted once, as its last line
	// says (the output grows while the message streams).
	if main.Tokens != (session.Tokens{Input: 1010 + 1020 + 5 + 5 + 5, Output: 120 + 80 + 40 + 30 + 15}) {
		t.Errorf("main tokens %+v", main.Tokens)
	}
	if main.Changes == nil || len(main.Changes.Files) != 2 || main.Changes.Added != 5 || main.Changes.Removed != 1 ||
		main.Changes.Files[0].Path != "cart/total.go" || main.Changes.Files[1].Kind != session.ChangeAdded {
		t.Errorf("changes %+v", main.Changes)
	}
	if len(st.Permissions) != 1 || st.Permissions[0].Decision != session.DecisionDenied || st.Permissions[0].Tool != "Bash" {
		t.Errorf("permissions %+v", st.Permissions)
	}
	tr := transcript(st, "sa-1")
	for _, w := range []string{"user  The cart total is off by a cent", "thinking  Rounding is probably", "tool_call Task ",
		"tool_result Edit The file /home/dev/shop/cart/total.go has been updated.\n--- a/cart/total.go",
		`message  [imported: claude-code line type "brand-new-line-type"] {`, "message  Fixed: totals"} {
		if !strings.Contains(tr, w) {
			t.Errorf("sa-1 transcript lacks %q:\n%s", w, tr)
		}
	}
	if sa := st.Subagent("sa-2"); sa.Route == nil || sa.Route.Model != "claude-haiku-4-5-20251001" || sa.ToolCalls != 1 || !sa.SpawnedAt.Equal(mustTS("2026-03-02T09:00:04Z")) {
		t.Errorf("sa-2 %+v", sa)
	}
	var notes []string
	for _, l := range st.Log {
		if l.Kind == "note" {
			notes = append(notes, l.Text)
		}
	}
	if !slices.Contains(notes, "[imported: summary] Fix the cart total rounding") || !strings.Contains(strings.Join(notes, "\n"), "1 progress lines") {
		t.Errorf("notes %q", notes)
	}
}

func TestClaudeCodeSidechains(t *testing.T) {
	// 1.0.x: sidechain lines in the main file, linked by their prompt; 2.0.x: agent-<id>.jsonl
	// beside it, linked by the agentId of the Task result.
	u := plan(t, filepath.Join(td, "claude/v1.0/-srv-api"))
	st, _, _ := load(t, u)
	want := "sa-1 claude-code main <-  success\nsa-2 general-purpose Review auth <- sa-1 success\nsa-3 general-purpose Review limiter <- sa-1 success\n"
	if got := tree(st); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	if tr := transcript(st, "sa-2"); !strings.Contains(tr, "message  The token expiry check") {
		t.Errorf("sa-2: %s", tr)
	}
	if tr := transcript(st, "sa-1"); strings.Contains(tr, "token expiry check uses > where >= is needed.\nmessage") {
		t.Errorf("sidechain text leaked into the main agent: %s", tr)
	}
}

func TestCodexTree(t *testing.T) {
	u := plan(t, filepath.Join(td, "codex/sessions/2026/01/15/rollout-2026-01-15T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"))
	if len(u.Children) != 2 {
		t.Fatalf("children %v", u.Children)
	}
	st, _, _ := load(t, u)
	want := "sa-1 codex main <-  success\nsa-2 worker Tester <- sa-1 success\nsa-3 explorer Linter <- sa-2 success\n"
	if got := tree(st); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	m := st.Subagent("sa-1")
	if m.Tokens != (session.Tokens{Input: 24000, Output: 900}) || m.Route == nil || m.Route.Model != "gpt-5.3-codex" {
		t.Errorf("main %+v", m)
	}
	if m.Changes == nil || len(m.Changes.Files) != 2 || m.Changes.Files[0].Path != "src/lib.rs" || m.Changes.Files[1].Kind != session.ChangeAdded {
		t.Errorf("changes %+v", m.Changes)
	}
	if len(st.Permissions) != 2 || st.Permissions[0].Decision != session.DecisionGranted || st.Permissions[1].Decision != session.DecisionDenied {
		t.Errorf("permissions %+v %+v", st.Permissions[0], st.Permissions[1])
	}
	tr := transcript(st, "sa-1")
	for _, w := range []string{"user  add() subtracts", "[imported: context Codex added] <environment_context>", "thinking  **Locating add**",
		"tool_call apply_patch", "tool_result wait", `[imported: codex event "shiny_future_event"]`} {
		if !strings.Contains(tr, w) {
			t.Errorf("sa-1 transcript lacks %q:\n%s", w, tr)
		}
	}
	// Spawned when the spawn_agent call was made.
	if !st.Subagent("sa-2").SpawnedAt.Equal(mustTS("2026-01-15T10:00:10Z")) {
		t.Errorf("sa-2 spawned at %v", st.Subagent("sa-2").SpawnedAt)
	}
	// A child's rollout given alone is not a unit of its own when its parent is in the folder.
	us, errs := Plan([]string{filepath.Join(td, "codex/sessions/2026/01")}, Auto)
	if len(us) != 1 || len(errs) != 0 {
		t.Errorf("folder plan: %v %v", us, errs)
	}
}

func TestCodexUnwrapped(t *testing.T) {
	u := plan(t, filepath.Join(td, "codex/sessions/2025/06/20"))
	st, res, _ := load(t, u)
	if res.Format != Codex || res.SessionID != "s-codex-5973b6c0-94b8-487b-a530-2aeb6098ae0e" {
		t.Errorf("result %+v", res)
	}
	tr := transcript(st, "sa-1")
	if want := "user  List the files.\nthinking  Use ls.\ntool_call shell \ntool_result shell Cargo.toml\nsrc\n\nmessage  Cargo.toml and src.\n"; tr != want {
		t.Errorf("transcript:\n%q\nwant\n%q", tr, want)
	}
}

func TestGemini(t *testing.T) {
	st, _, _ := load(t, plan(t, filepath.Join(td, "gemini/tmp/5d1c3e/chats/session-2026-05-01T12-00-9b8c7d6e.jsonl")))
	want := "sa-1 gemini-cli main <-  success\nsa-2 codebase_investigator codebase_investigator-x7k2 <- sa-1 success\n"
	if got := tree(st); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	tr := transcript(st, "sa-1")
	if strings.Contains(tr, "Wrong answer") || !strings.Contains(tr, "thinking  **Checking** I will read the build log.") ||
		!strings.Contains(tr, "tool_result read_file error: missing import fmt") {
		t.Errorf("transcript (the rewound message must be gone):\n%s", tr)
	}
	if st.Subagent("sa-1").Tokens != (session.Tokens{Input: 1900, Output: 70}) || len(st.Permissions) != 1 {
		t.Errorf("tokens %+v permissions %d", st.Subagent("sa-1").Tokens, len(st.Permissions))
	}

	st, _, _ = load(t, plan(t, filepath.Join(td, "gemini/tmp/77aa/chats/session-2025-11-03T16-00-3c2b1a09.json")))
	if tr := transcript(st, "sa-1"); !strings.Contains(tr, "tool_result read_file # cli") || !strings.Contains(tr, "error  Quota exceeded") {
		t.Errorf("legacy JSON:\n%s", tr)
	}
	st, _, _ = load(t, plan(t, filepath.Join(td, "gemini/tmp/77aa/checkpoint-arith.json")))
	if tr := transcript(st, "sa-1"); tr != "user  What is 2+2?\nthinking  thinking about arithmetic\nmessage  Let me compute.\ntool_call run_shell_command \ntool_result run_shell_command 4\nmessage  4\n" {
		t.Errorf("checkpoint:\n%q", tr)
	}
}

func TestDeterministic(t *testing.T) {
	u := plan(t, filepath.Join(td, "codex/sessions/2026/01/15/rollout-2026-01-15T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"))
	dir := t.TempDir()
	a, err := Import(u, dir, Options{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(a.Path)
	b, err := Import(u, dir, Options{Environ: []string{}})
	if err != nil || b.Path != a.Path {
		t.Fatalf("%v %s %s", err, a.Path, b.Path)
	}
	second, _ := os.ReadFile(b.Path)
	if !bytes.Equal(first, second) {
		t.Error("importing again wrote a different recording")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

func TestDetect(t *testing.T) {
	for path, want := range map[string]Format{
		"claude/v2.1/-home-dev-shop/7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl":                            Claude,
		"claude/v1.0/-srv-api/agent-5e6f7a8b.jsonl":                                                        Claude,
		"codex/sessions/2025/06/20/rollout-2025-06-20T08-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl": Codex,
		"gemini/tmp/5d1c3e/chats/session-2026-05-01T12-00-9b8c7d6e.jsonl":                                  Gemini,
		"gemini/tmp/77aa/chats/session-2025-11-03T16-00-3c2b1a09.json":                                     Gemini,
		"gemini/tmp/77aa/checkpoint-arith.json":                                                            Gemini,
	} {
		if got, err := Detect(filepath.Join(td, path)); got != want || err != nil {
			t.Errorf("%s: %s %v, want %s", path, got, err, want)
		}
	}
	for _, p := range []string{"bad/unknown.jsonl", "bad/notjson.jsonl"} {
		_, err := Detect(filepath.Join(td, p))
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "tried claude") || !strings.Contains(err.Error(), "codex") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	imp := func(p string, opts Options) (Result, error) {
		opts.Environ = []string{}
		return Import(Unit{Format: Claude, Path: filepath.Join(td, p)}, dir, opts)
	}
	_, err := imp("bad/malformed.jsonl", Options{})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "bad/malformed.jsonl:2: malformed JSON") {
		t.Errorf("malformed: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Errorf("a failed import left %v", m)
	}
	res, err := imp("bad/malformed.jsonl", Options{Lenient: true})
	if err != nil {
		t.Fatalf("lenient: %v", err)
	}
	if b, _ := os.ReadFile(res.Path); !bytes.Contains(b, []byte("malformed.jsonl:2")) {
		t.Error("lenient import keeps no note of the skipped line")
	}
	res, err = imp("bad/torn.jsonl", Options{})
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "torn.jsonl:2: the last line is cut short") {
		t.Errorf("torn: %v %v", err, res.Warnings)
	}
	_, err = Import(Unit{Format: Gemini, Path: filepath.Join(td, "bad/legacy-broken.json")}, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "legacy-broken.json:5:") {
		t.Errorf("broken JSON: %v", err)
	}
	// A line over the cap is an error naming it; nothing reads it whole into a decoder.
	big := filepath.Join(dir, "big.jsonl")
	f, _ := os.Create(big)
	f.WriteString(`{"type":"user","uuid":"a","sessionId":"s","message":{"role":"user","content":"x"}}` + "\n")
	f.WriteString(`{"type":"user","message":{"role":"user","content":"`)
	f.Write(bytes.Repeat([]byte("y"), MaxLineBytes))
	f.WriteString("\"}}\n")
	f.Close()
	_, err = Import(Unit{Format: Claude, Path: big}, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "big.jsonl:2: a line of") {
		t.Errorf("huge line: %v", err)
	}
}

// TestPrefixes imports every prefix of a session (a file cut anywhere, as a crash or a copy
// in progress leaves it): each either imports into a recording that replays, or fails with a
// line error. None panics or writes a recording that does not fold.
func TestPrefixes(t *testing.T) {
	for _, p := range []string{
		"claude/v2.1/-home-dev-shop/7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl",
		"codex/sessions/2026/01/15/rollout-2026-01-15T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
		"gemini/tmp/5d1c3e/chats/session-2026-05-01T12-00-9b8c7d6e.jsonl",
		"gemini/tmp/77aa/chats/session-2025-11-03T16-00-3c2b1a09.json",
	} {
		data, err := os.ReadFile(filepath.Join(td, p))
		if err != nil {
			t.Fatal(err)
		}
		f, _ := Detect(filepath.Join(td, p))
		dir := t.TempDir()
		src := filepath.Join(dir, filepath.Base(p))
		for n := 0; n <= len(data); n += 53 {
			os.WriteFile(src, data[:n], 0o600)
			res, err := Import(Unit{Format: f, Path: src}, filepath.Join(dir, "out"), Options{Environ: []string{}})
			if err != nil {
				if !errors.As(err, new(*LineError)) {
					t.Errorf("%s[:%d]: %v is not a line error", p, n, err)
				}
				continue
			}
			if _, _, err := record.LoadFile(res.Path, record.ReadOptions{}); err != nil {
				t.Errorf("%s[:%d]: the recording does not replay: %v", p, n, err)
			}
		}
	}
}

func TestSecretsRedacted(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "s.jsonl")
	key := "sk-ant-api03-" + strings.Repeat("A1b2C3d4", 12)
	os.WriteFile(src, []byte(`{"type":"user","uuid":"a","sessionId":"sec","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"my key is `+key+`"}}`+"\n"), 0o600)
	res, err := Import(Unit{Format: Claude, Path: src}, dir, Options{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(res.Path); bytes.Contains(b, []byte(key)) || !bytes.Contains(b, []byte("my key is")) {
		t.Errorf("the key reached the recording:\n%s", b)
	}
}

func mustTS(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestGeminiDocumentStreamed: a whole-JSON Gemini CLI session is read key by key, so its
// metadata may follow the messages (the summary here), every message is mapped in order, the
// lines are counted, and a message that is JSON but not a message fails the file at its line.
func TestGeminiDocumentStreamed(t *testing.T) {
	dir := t.TempDir()
	msg := func(i int, content string) string {
		return fmt.Sprintf("    {\n      \"id\": \"m%d\",\n      \"timestamp\": \"2025-11-03T16:00:%02d.000Z\",\n      \"type\": \"user\",\n      \"content\": %s\n    }", i, i, content)
	}
	doc := func(content string) string {
		return "{\n  \"sessionId\": \"doc-1\",\n  \"startTime\": \"2025-11-03T16:00:00.000Z\",\n  \"messages\": [\n" +
			msg(1, `"first question"`) + ",\n" + msg(2, content) + ",\n" + msg(3, `"third question"`) +
			"\n  ],\n  \"summary\": \"a summary after the messages\"\n}\n"
	}
	path := filepath.Join(dir, "session-2025-11-03T16-00-doc1.json")
	if err := os.WriteFile(path, []byte(doc(`"second question"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, res, raw := load(t, Unit{Format: Gemini, Path: path})
	if res.SourceID != "doc-1" || res.Lines != strings.Count(doc(`"second question"`), "\n")+1 {
		t.Errorf("source id %q, %d lines", res.SourceID, res.Lines)
	}
	if !bytes.Contains(raw, []byte("a summary after the messages")) {
		t.Error("the summary after the messages is lost")
	}
	a, b, c := bytes.Index(raw, []byte(`"first question"`)), bytes.Index(raw, []byte(`"second question"`)), bytes.Index(raw, []byte(`"third question"`))
	if a < 0 || b < a || c < b {
		t.Errorf("the messages, in order: at %d, %d, %d", a, b, c)
	}
	if err := os.WriteFile(path, []byte(doc(`{"text": 5}`)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Import(Unit{Format: Gemini, Path: path}, dir, Options{Environ: []string{}})
	var le *LineError
	// The second message starts on line 11.
	if !errors.As(err, &le) || le.Line != 11 {
		t.Errorf("a message of the wrong shape: %v", err)
	}
}

// TestUnknownKindsBounded: a source with a new line type on every line keeps every line as a
// note, but the closing note counts at most maxUnknownKinds kinds one by one and the rest
// together, so what the import holds (and the note) does not grow with the file.
func TestUnknownKindsBounded(t *testing.T) {
	const kinds = maxUnknownKinds + 44
	var b strings.Builder
	b.WriteString(`{"timestamp":"2026-01-15T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-0000-7e5f-8a9b-0c1d2e3f4a5b","cwd":"/work/calc","cli_version":"0.98.0","model_provider":"openai"}}` + "\n")
	for i := range kinds {
		fmt.Fprintf(&b, `{"timestamp":"2026-01-15T10:00:01.000Z","type":"future_%d","payload":{}}`+"\n", i)
	}
	path := filepath.Join(t.TempDir(), "rollout-2026-01-15T10-00-00-0199a1b2-0000-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, res, rec := load(t, Unit{Format: Codex, Path: path})
	if res.Notes != kinds {
		t.Errorf("%d lines kept as notes, want %d", res.Notes, kinds)
	}
	if n := strings.Count(string(rec), `(kept as notes)`); n != maxUnknownKinds+1 {
		t.Errorf("the closing note counts %d kinds, want %d", n, maxUnknownKinds+1)
	}
	if !strings.Contains(string(rec), "44 unknown lines of other types (kept as notes)") {
		t.Error("the kinds past the limit are not counted together")
	}
	i := strings.Index(string(rec), "[imported: summary]")
	if i < 0 || !strings.Contains(string(rec[i:]), `future_0`) || strings.Contains(string(rec[i:]), `future_299`) {
		t.Error("the closing note does not name the first kinds, or names one past the limit")
	}
	if !strings.Contains(string(rec[:max(i, 0)]), `future_299`) {
		t.Error("the last line is not kept as a note")
	}
}

// TestParseTSMatchesTimeParse: the fast path reads every time exactly as time.Parse with
// RFC3339Nano does, and every time it does not take (or that is not valid) is left to it.
func TestParseTSMatchesTimeParse(t *testing.T) {
	slow := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}
		}
		return v.UTC()
	}
	cases := []string{
		"2026-05-01T12:00:00.000Z", "2026-05-01T12:00:00Z", "2026-05-01T12:00:00.1Z",
		"2026-05-01T12:00:00.123456789Z", "2026-05-01T12:00:00.1234567891Z", "2026-05-01T12:00:00.Z",
		"2026-02-29T12:00:00Z", "2024-02-29T12:00:00Z", "2026-04-31T00:00:00Z", "2026-12-31T23:59:59.999Z",
		"2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-05-00T00:00:00Z", "2026-05-01T24:00:00Z",
		"2026-05-01T12:60:00Z", "2026-05-01T12:00:60Z", "2026-05-01T12:00:00+02:00", "2026-05-01 12:00:00Z",
		"2026-05-01T12:00:00.12a4Z", "0000-01-01T00:00:00Z", "2026-5-01T12:00:00Z", "2026-05-01T12:00:00z",
		"+026-05-01T12:00:00Z", "2026-05-01T12:00:00.-1Z", "", "Z", "2026-05-01T12:00:00.000000Z",
	}
	for y := 1999; y <= 2030; y += 7 {
		for mo := 1; mo <= 12; mo++ {
			for d := 1; d <= 31; d += 3 {
				cases = append(cases, fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mo, d, (d*7)%24, (mo*13)%60, (y+d)%60, (y*d)%1000))
			}
		}
	}
	for _, s := range cases {
		if got, want := parseTS(s), slow(s); !got.Equal(want) || got.Location() != want.Location() || got.IsZero() != want.IsZero() {
			t.Errorf("parseTS(%q) = %v, time.Parse reads %v", s, got, want)
		}
	}
	if _, ok := parseUTC("2026-05-01T12:00:00.5Z"); !ok {
		t.Error("the usual form did not take the fast path")
	}
}

// TestGeminiAcrossBlocks: a chat of several read blocks, whose lines are spooled a block at
// a time and read back by offset. A record replacing a message three blocks back, a rewind
// dropping messages of earlier blocks (each kept as a note, read back from the spool), a torn
// last line and a bad line in lenient mode all land where a chat read line by line puts them.
func TestGeminiAcrossBlocks(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"sessionId":"blocks-1","projectHash":"p","startTime":"2026-05-01T12:00:00.000Z","kind":"main"}` + "\n")
	pad := strings.Repeat("z", 1500)
	msg := func(i int, text string) {
		fmt.Fprintf(&b, `{"id":"m%d","timestamp":"2026-05-01T12:%02d:%02d.000Z","type":"gemini","content":%q,"toolCalls":[{"id":"c%d","name":"read_file","args":{"absolute_path":"/p/f%d"},"status":"success","result":[{"functionResponse":{"id":"c%d","name":"read_file","response":{"output":%q}}}]}]}`+"\n",
			i, i/60%60, i%60, text, i, i, i, pad)
	}
	var want []string // the messages' texts, in the order the recording must hold them
	i := 0
	for ; b.Len() < 2*readBlock; i++ {
		msg(i, fmt.Sprintf("message %d", i))
		want = append(want, fmt.Sprintf("message %d", i))
	}
	mid := i
	for ; b.Len() < 4*readBlock; i++ {
		msg(i, fmt.Sprintf("message %d", i))
		want = append(want, fmt.Sprintf("message %d", i))
	}
	msg(5, "message 5, rewritten four blocks on") // replaces message 5 in place
	want[5] = "message 5, rewritten four blocks on"
	fmt.Fprintf(&b, `{"$rewindTo":"m%d"}`+"\n", mid) // drops mid.. (two blocks of them)
	dropped := len(want) - mid
	want = want[:mid]
	b.WriteString("{not json\n")
	for j := 0; j < 3; j, i = j+1, i+1 {
		msg(i, fmt.Sprintf("after the rewind %d", j))
		want = append(want, fmt.Sprintf("after the rewind %d", j))
	}
	b.WriteString(`{"id":"m5","timestamp":"2026-05-01T13:00:00.000Z","type":"gemini","content":"torn`) // killed mid-write
	path := filepath.Join(t.TempDir(), "session-2026-05-01T12-00-blocks1.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Import(Unit{Format: Gemini, Path: path}, t.TempDir(), Options{Environ: []string{}, Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := record.LoadFile(res.Path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa := st.Subagent("sa-1")
	var got []string
	results := 0
	for k := range sa.Transcript.Len() {
		switch it := sa.Transcript.Item(k); it.Kind {
		case session.TranscriptMessage:
			got = append(got, sa.Transcript.Text(k))
		case session.TranscriptToolResult:
			if sa.Transcript.Text(k) != pad {
				t.Fatalf("tool result %d is not the chat's", k)
			}
			results++
		}
	}
	if !slices.Equal(got, want) || results != len(want) {
		t.Fatalf("%d messages, %d results; want %d (first difference: %v)", len(got), results, len(want), firstDiff(got, want))
	}
	rec, _ := os.ReadFile(res.Path)
	if n := strings.Count(string(rec), "a gemini message the user rewound past: message "); n != dropped {
		t.Errorf("%d rewound notes, want %d", n, dropped)
	}
	if sum := "not replayed one by one: 2 malformed lines (skipped with --lenient); 1 message records that update an earlier one"; !strings.Contains(string(rec), sum) {
		t.Errorf("the summary does not say %q", sum)
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("#%d %q vs %q", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}
