package imports

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// genClaude writes a Claude Code session of about size bytes: turns of a prompt, an
// assistant message in three content-block lines (thinking, text, a tool call, with the usage
// repeated as Claude Code writes it), a tool result with a file's text, and every tenth turn
// an Edit with its structured patch.
func genClaude(size int) []byte {
	var b bytes.Buffer
	body := strings.Repeat("func f() { return strings.Repeat(\"x\", 80) } // some source text\n", 40)
	for i := 0; b.Len() < size; i++ {
		ts := fmt.Sprintf("2026-03-02T09:%02d:%02d.%03dZ", i/3600%60, i/60%60, i%1000)
		common := fmt.Sprintf(`"parentUuid":"u-%d","isSidechain":false,"userType":"external","cwd":"/home/dev/shop","sessionId":"bench-claude","version":"2.1.59","gitBranch":"main","timestamp":%q`, i, ts)
		fmt.Fprintf(&b, `{%s,"type":"user","uuid":"u-%d-a","message":{"role":"user","content":"Please look at file %d and tell me what it does."}}`+"\n", common, i, i)
		usage := `"usage":{"input_tokens":12,"cache_creation_input_tokens":1200,"cache_read_input_tokens":30000,"output_tokens":210,"service_tier":"standard"}`
		fmt.Fprintf(&b, `{%s,"type":"assistant","uuid":"u-%d-b","requestId":"req_%d","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"thinking","thinking":"I should read the file first, then summarise what it does in a few words.","signature":"EqQBCkYIBxgCKkD"}],"stop_reason":null,%s}}`+"\n", common, i, i, i, usage)
		fmt.Fprintf(&b, `{%s,"type":"assistant","uuid":"u-%d-c","requestId":"req_%d","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"text","text":"Reading the file now."}],"stop_reason":null,%s}}`+"\n", common, i, i, i, usage)
		fmt.Fprintf(&b, `{%s,"type":"assistant","uuid":"u-%d-d","requestId":"req_%d","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"/home/dev/shop/f%d.go"}}],"stop_reason":"tool_use",%s}}`+"\n", common, i, i, i, i, i, usage)
		res, _ := stdjson.Marshal(body)
		fmt.Fprintf(&b, `{%s,"type":"user","uuid":"u-%d-e","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":%s}]},"toolUseResult":{"type":"text","file":{"filePath":"/home/dev/shop/f%d.go","content":%s,"numLines":40,"startLine":1,"totalLines":40}}}`+"\n", common, i, i, res, i, res)
		if i%10 == 0 {
			fmt.Fprintf(&b, `{%s,"type":"assistant","uuid":"u-%d-f","message":{"id":"msg_e%d","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"tool_use","id":"toolu_e%d","name":"Edit","input":{"file_path":"/home/dev/shop/f%d.go","old_string":"a","new_string":"b"}}],%s}}`+"\n", common, i, i, i, i, usage)
			fmt.Fprintf(&b, `{%s,"type":"user","uuid":"u-%d-g","message":{"role":"user","content":[{"tool_use_id":"toolu_e%d","type":"tool_result","content":"The file has been updated."}]},"toolUseResult":{"filePath":"/home/dev/shop/f%d.go","oldString":"a","newString":"b","originalFile":%s,"structuredPatch":[{"oldStart":3,"oldLines":3,"newStart":3,"newLines":3,"lines":[" x","-a","+b"," y"]}]}}`+"\n", common, i, i, i, res)
		}
	}
	return b.Bytes()
}

// genCodex writes a Codex rollout of about size bytes: per turn a turn context, a user
// message (and its event copy), reasoning, a shell call with its output and end event, a
// token count and the answer.
func genCodex(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"timestamp":"2026-01-15T10:00:00.000Z","type":"session_meta","payload":{"id":"bench-codex","timestamp":"2026-01-15T10:00:00.000Z","cwd":"/work/calc","originator":"codex_cli_rs","cli_version":"0.98.0","source":"cli","model_provider":"openai"}}` + "\n")
	out, _ := stdjson.Marshal(strings.Repeat("src/lib.rs:12: pub fn add(a: i32, b: i32) -> i32 { a + b } // matched line\n", 40))
	for i := 0; b.Len() < size; i++ {
		ts := fmt.Sprintf("2026-01-15T10:%02d:%02d.%03dZ", i/60%60, i%60, i%1000)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"turn_context","payload":{"cwd":"/work/calc","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write"},"model":"gpt-5.3-codex","summary":"auto"}}`+"\n", ts)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Find every caller of add number %d."}]}}`+"\n", ts, i)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"event_msg","payload":{"type":"user_message","message":"Find every caller of add number %d.","images":[]}}`+"\n", ts, i)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Searching** I will grep for add."}],"content":null,"encrypted_content":"gAAAAABo0123456789abcdefghijklmnopqrstuvwxyz"}}`+"\n", ts)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"rg -n add src\",\"workdir\":\"/work/calc\"}","call_id":"call_%d"}}`+"\n", ts, i)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"event_msg","payload":{"type":"exec_command_end","call_id":"call_%d","stdout":%s,"stderr":"","aggregated_output":%s,"exit_code":0,"duration":{"secs":0,"nanos":1000}}}`+"\n", ts, i, out, out)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"function_call_output","call_id":"call_%d","output":%s}}`+"\n", ts, i, out)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":0}}}}`+"\n", ts, i*1000, i*50)
		fmt.Fprintf(&b, `{"timestamp":%q,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"add has 3 callers in src/lib.rs."}]}}`+"\n", ts)
	}
	return b.Bytes()
}

// genGemini writes a Gemini CLI chat (JSONL) of about size bytes: per turn a user message, the
// model's answer with its thoughts, tokens and a read_file call whose result is a file's text,
// and the lastUpdated update the CLI appends.
func genGemini(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"sessionId":"bench-gemini","projectHash":"5d1c3e","startTime":"2026-05-01T12:00:00.000Z","lastUpdated":"2026-05-01T12:00:00.000Z","kind":"main"}` + "\n")
	out, _ := stdjson.Marshal(strings.Repeat("func f() { return strings.Repeat(\"x\", 80) } // some source text\n", 40))
	for i := 0; b.Len() < size; i++ {
		ts := fmt.Sprintf("2026-05-01T12:%02d:%02d.%03dZ", i/60%60, i%60, i%1000)
		fmt.Fprintf(&b, `{"id":"u%d","timestamp":%q,"type":"user","content":[{"text":"What does file %d do?"}]}`+"\n", i, ts, i)
		fmt.Fprintf(&b, `{"$set":{"lastUpdated":%q}}`+"\n", ts)
		fmt.Fprintf(&b, `{"id":"g%d","timestamp":%q,"type":"gemini","content":"Reading it now.","thoughts":[{"subject":"Reading","description":"I will read the file first.","timestamp":%q}],"tokens":{"input":900,"output":40,"cached":0,"thoughts":20,"tool":0,"total":960},"model":"gemini-2.5-pro","toolCalls":[{"id":"read_file-%d","name":"read_file","args":{"absolute_path":"/p/f%d.go"},"status":"success","timestamp":%q,"result":[{"functionResponse":{"id":"read_file-%d","name":"read_file","response":{"output":%s}}}]}]}`+"\n", i, ts, ts, i, i, ts, i, out)
	}
	return b.Bytes()
}

func benchImport(b *testing.B, name string, data []byte, f Format) {
	dir := b.TempDir()
	src := filepath.Join(dir, name)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	b.SetBytes(int64(len(data)))
	defer TuneGC()() // as summit import runs
	b.ResetTimer()
	for b.Loop() {
		if _, err := Import(Unit{Format: f, Path: src}, out, Options{Environ: []string{}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportClaude imports a generated ~40 MB Claude Code session (MB/s of source).
func BenchmarkImportClaude(b *testing.B) {
	benchImport(b, "bench.jsonl", genClaude(40<<20), Claude)
}

// BenchmarkImportCodex imports a generated ~40 MB Codex rollout.
func BenchmarkImportCodex(b *testing.B) {
	benchImport(b, "rollout-bench.jsonl", genCodex(40<<20), Codex)
}

// BenchmarkImportGemini imports a generated ~40 MB Gemini CLI chat.
func BenchmarkImportGemini(b *testing.B) {
	benchImport(b, "session-2026-05-01T12-00-benchgem.jsonl", genGemini(40<<20), Gemini)
}

// BenchmarkReferenceStdJSON is the reference: encoding/json decoding each line of the same
// Claude Code file into a map, which does none of the import's work but the reading.
func BenchmarkReferenceStdJSON(b *testing.B) {
	data := genClaude(40 << 20)
	b.SetBytes(int64(len(data)))
	defer TuneGC()() // as summit import runs
	b.ResetTimer()
	for b.Loop() {
		for l := range bytes.Lines(data) {
			var m map[string]any
			if err := stdjson.Unmarshal(l, &m); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// fixtureRepeat builds about size bytes from a fixture file of this package (a real-shaped
// session written for the tests) by repeating its lines with the ids varied per repetition
// (uuids, message, request and tool-call ids), so each repetition is new work for the
// importer; keep lines matching head once, first. The same way testdata/perf/import.sh builds
// its input.
func fixtureRepeat(b *testing.B, path string, size int, head func(string) bool) []byte {
	return fixtureRepeatIDs(b, path, size, head, fixtureIDs)
}

// fixtureIDs are the ids of the Claude Code and Codex fixtures that fixtureRepeat varies.
var fixtureIDs = regexp.MustCompile(`(toolu_|msg_|call_|req_|"uuid":"|"parentUuid":"|"messageId":"|"leafUuid":")([0-9A-Za-z-]+)`)

func fixtureRepeatIDs(b *testing.B, path string, size int, head func(string) bool, ids *regexp.Regexp) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	var body []string
	for l := range strings.Lines(string(raw)) {
		switch {
		case strings.TrimSpace(l) == "":
		case head(l):
			out.WriteString(l)
		default:
			body = append(body, l)
		}
	}
	for i := 0; out.Len() < size; i++ {
		tag := fmt.Sprintf("r%07d", i)
		for _, l := range body {
			out.WriteString(ids.ReplaceAllString(l, "${1}"+tag+"${2}"))
		}
	}
	return out.Bytes()
}

// BenchmarkImportClaudeFixture imports ~40 MB built from the Claude Code 2.1 fixture.
func BenchmarkImportClaudeFixture(b *testing.B) {
	data := fixtureRepeat(b, filepath.Join(td, "claude/v2.1/-home-dev-shop/7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl"), 40<<20,
		func(l string) bool {
			return strings.Contains(l, `"type":"summary"`) || strings.Contains(l, `"custom-title"`)
		})
	benchImport(b, "fixture.jsonl", data, Claude)
}

// BenchmarkImportCodexFixture imports ~40 MB built from the Codex fixture (its session meta
// once).
func BenchmarkImportCodexFixture(b *testing.B) {
	data := fixtureRepeat(b, filepath.Join(td, "codex/sessions/2026/01/15/rollout-2026-01-15T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"), 40<<20,
		func(l string) bool { return strings.Contains(l, `"type":"session_meta"`) })
	benchImport(b, "rollout-fixture.jsonl", data, Codex)
}

// BenchmarkImportGeminiFixture imports ~40 MB built from the Gemini CLI JSONL fixture (its
// metadata line once; message ids and rewinds varied, as testdata/perf/import.sh does).
func BenchmarkImportGeminiFixture(b *testing.B) {
	first := true
	data := fixtureRepeatIDs(b, filepath.Join(td, "gemini/tmp/5d1c3e/chats/session-2026-05-01T12-00-9b8c7d6e.jsonl"), 40<<20,
		func(string) bool {
			h := first
			first = false
			return h
		}, regexp.MustCompile(`("id":"|"\$rewindTo":")([0-9A-Za-z_-]+)`))
	benchImport(b, "session-2026-05-01T12-00-fixture.jsonl", data, Gemini)
}
