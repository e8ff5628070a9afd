package main

// Byte-stream scanners: hostile text is put everywhere a model, a tool, an agent file, a file
// name or a recording can put text, and every output summit writes is scanned byte by byte.
//
// Hostile text carries CSI (ESC[2J, ESC[31m and ESC[777;888H, a cursor move no screen of
// summit ever writes), an OSC 52 clipboard write with the marker SFVOVEVS, a DCS with the
// marker 1337, C1 controls (U+009B, U+0085), every bidi control (U+202A–U+202E, U+2066–U+2069)
// and zero-width characters (U+200B, U+200C, U+200D, U+2060, U+FEFF). Each place gets its
// own marker word, written right before the hostile bytes, so the escaped form proves that
// the text of that place got to the output: a scanner that sees no raw byte must also see
// MARK\x1b[777;888H written out, or it would pass for the wrong reason.
//
// Plain outputs (run's stdout and stderr, replay --print, inspect, agents list, validate and
// show, error messages) must hold no raw control at all but newline and tab, no C1, no bidi
// or zero-width character, and be valid UTF-8. The workbench legitimately writes CSI, so
// its byte stream (tmux pipe-pane) is scanned for what it never writes itself: the
// ESC[777;888H move, OSC 52, the DCS with 1337, C1 controls, bidi and zero-width characters.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const (
	csiMove = "\x1b[777;888H"
	osc52   = "\x1b]52;c;SFVOVEVS\x07"
	dcs     = "\x1bP1337;q\x1b\\"
	c1s     = "\u009b31m\u0085"
	bidis   = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
	zws     = "\u200b\u200c\u200d\u2060\ufeff"
)

// hostile is text carrying every hostile kind, marked: the escaped form starts with
// mark + `\x1b[777;888H`.
func hostile(mark string) string {
	return mark + csiMove + " \x1b[2J\x1b[31m " + osc52 + " " + dcs + " " + c1s + " " + bidis + " " + zws + " " + mark + "-END"
}

// escaped is how a marked text reads once sanitised: the start that proves it got there.
func escaped(mark string) string { return mark + `\x1b[777;888H` }

// yq quotes s as a YAML double-quoted scalar with every control, C1, bidi and zero-width
// character written as an escape (YAML reads raw controls as an error).
func yq(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r >= 0x7f && r < 0xa0:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0x7f && unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// unsafeRune: the code points no output may carry raw (the test's own list, from the issue,
// independent of the sanitiser's).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0xfeff, r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e,
		r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// plainLeaks lists what in an unstyled output a terminal would act on or hide: every
// control but newline and tab, C1, bidi and zero-width characters, invalid UTF-8.
func plainLeaks(b []byte) []string {
	var out []string
	for i := 0; i < len(b) && len(out) < 3; {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, fmt.Sprintf("invalid UTF-8 byte %#x at %d: %q", b[i], i, around(b, i)))
		case unsafeRune(r):
			out = append(out, fmt.Sprintf("raw %U at %d: %q", r, i, around(b, i)))
		}
		i += n
	}
	return out
}

// termLeaks lists, in a TUI's byte stream, what the workbench never writes itself: the
// hostile cursor move, OSC 52, the marked DCS, C1 controls, bidi and zero-width characters.
func termLeaks(b []byte) []string {
	var out []string
	for _, bad := range []string{csiMove, "\x1b]52", "\x1bP1337", "SFVOVEVS\x07"} {
		if i := bytes.Index(b, []byte(bad)); i >= 0 {
			out = append(out, fmt.Sprintf("raw %q at %d: %q", bad, i, around(b, i)))
		}
	}
	for i := 0; i < len(b) && len(out) < 8; {
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x80 && r < 0xa0 || r > 0x7f && unsafeRune(r) {
			out = append(out, fmt.Sprintf("raw %U at %d: %q", r, i, around(b, i)))
		}
		i += n
	}
	return out
}

func around(b []byte, i int) string {
	return string(b[max(0, i-40):min(len(b), i+40)])
}

// hostileFixture is a workspace with hostile agent files, hostile tapes and a script that
// reaches every command with output.
type hostileFixture struct {
	ws, tapes, script, config string
}

func newHostileFixture(t *testing.T) hostileFixture {
	t.Helper()
	f := hostileFixture{ws: t.TempDir(), tapes: t.TempDir(), config: t.TempDir()}
	write := func(path, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.ws, "main.go"), "package main\n\nfunc main() {}\n")
	// The input history is a file in the workspace: a cloned repository can bring one.
	write(filepath.Join(f.ws, ".summit", "history"), "/status\n"+hostile("HISTORY")+"\n")
	claude := filepath.Join(f.ws, ".claude", "agents")
	// The agent the tapes play: a hostile description, a hostile tool name in its tools
	// and a hostile body (it is the delegation prompt agents show prints).
	write(filepath.Join(claude, "hostile-agent.md"), "---\nname: hostile-agent\ndescription: "+yq(hostile("AGENTDESC"))+
		"\ntools: [read_file, write_file, run_shell_command, "+yq(hostile("TOOLDECL"))+"]\nmax_turns: 50\n---\n"+hostile("AGENTBODY")+"\n")
	// An agent whose name is hostile (an error, but it is listed and validated).
	write(filepath.Join(claude, "evil.md"), "---\nname: "+yq(hostile("AGENTNAME"))+"\ndescription: plain\ntools: [read_file]\n---\nbody\n")
	// A hostile agent file name in a later layer, shadowing an agent of the same name: both
	// paths are printed, and its name does not match the file's.
	write(filepath.Join(claude, "shadowed.md"), "---\nname: shadowed\ndescription: plain\ntools: [read_file]\n---\nbody\n")
	write(filepath.Join(f.ws, ".summit", "agents", hostile("FNAME")+".md"), "---\nname: shadowed\ndescription: plain\ntools: [read_file]\n---\nbody\n")

	shell := "printf '%s\\n' '" + hostile("SHELLOUT") + "'"
	write(filepath.Join(f.tapes, "hostile.yaml"), `tapes:
  - name: failing
    match: {agent: hostile-agent, task: "(?i)fail"}
    steps:
      - say: `+yq(hostile("FAILSAY"))+`
      - fail: `+yq(hostile("FATAL"))+`
  - name: hostile
    match: {agent: hostile-agent}
    steps:
      - say: `+yq(hostile("SAY"))+`
      - think: `+yq(hostile("THINK"))+`
      - fail: `+yq(hostile("RETRY"))+`
        transient: true
        times: 1
      - tool: "\e[2J"
        args: {x: `+yq(hostile("ARG"))+`}
      - tool: "x\e]52;c;SFVOVEVS\a"
        args: {}
      - tool: `+yq(hostile("TOOLNAME"))+`
        args: {}
      - tool: write_file
        args: {path: "MBIDI\u202etxt.exe\u202c", content: "bidi name\n"}
      - tool: write_file
        args: {path: `+yq(hostile("FILE"))+`, content: `+yq(hostile("CONTENT")+"\n")+`}
      - tool: read_file
        args: {path: `+yq(hostile("MISSING"))+`}
      - tool: run_shell_command
        args: {command: `+yq(shell)+`}
      - say: `+yq(hostile("SAYTWO"))+`
      - capsule:
          summary: `+yq(hostile("CAP"))+`
          confidence: 0.5
          findings: [{severity: `+yq(hostile("SEV"))+`, summary: `+yq(hostile("FIND"))+`, file_refs: [`+yq(hostile("REF"))+`]}]
          downstream_context: `+yq(hostile("DOWN"))+`
`)
	f.script = filepath.Join(t.TempDir(), "hostile.summit")
	write(f.script, strings.Join([]string{
		`/delegate "` + hostile("TASK") + `" --agent-type hostile-agent`,
		`/delegate "fail now" --agent-type hostile-agent`,
		`/wait sa-1 sa-2`,
		`/diff sa-1`,
		`/apply sa-1`,
		`/status sa-1`,
		`/agents`,
		`/help ` + hostile("HELPARG"),
		`/fr` + hostile("CMDNAME"),
		`/delegate "x" --agent-type "` + hostile("TYPEARG") + `"`,
		hostile("NOTE"),
	}, "\n")+"\n")
	return f
}

// runBin runs the binary in dir with the fixture's config dir and returns its exit code and
// raw output.
func runBin(t *testing.T, bin, dir, config string, args ...string) (int, []byte, []byte) {
	t.Helper()
	return runBinEnv(t, bin, dir, []string{"XDG_CONFIG_HOME=" + config}, args...)
}

func runBinEnv(t *testing.T, bin, dir string, env []string, args ...string) (int, []byte, []byte) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return code, o.Bytes(), e.Bytes()
}

// scanPlain fails for every raw hostile byte in out, and for every want (an escaped form)
// missing from it.
func scanPlain(t *testing.T, what string, out []byte, wants ...string) {
	t.Helper()
	for _, l := range plainLeaks(out) {
		t.Errorf("%s leaks: %s", what, l)
	}
	for _, w := range wants {
		if !bytes.Contains(out, []byte(w)) {
			t.Errorf("%s lacks %q (the hostile text did not get there, or not escaped)", what, w)
		}
	}
}

// scanJSON is scanPlain for JSON: no raw hostile byte, and the document decodes to text
// that holds each want raw (the data is kept whole, only its spelling is safe).
func scanJSON(t *testing.T, what string, out []byte, wants ...string) {
	t.Helper()
	for _, l := range plainLeaks(out) {
		t.Errorf("%s leaks: %s", what, l)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Errorf("%s is not JSON: %v\n%s", what, err, out)
		return
	}
	// Re-encode without escapes but the JSON ones, then look for the raw text in the strings.
	var all []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			all = append(all, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				all = append(all, k)
				walk(e)
			}
		}
	}
	walk(v)
	joined := strings.Join(all, "\n")
	for _, w := range wants {
		if !strings.Contains(joined, w) {
			t.Errorf("%s: the decoded JSON lacks %q", what, w)
		}
	}
}

// TestScanHeadless: the hostile session run headless, then its recording replayed and
// inspected, the hostile agent files listed, validated and shown, and error messages that
// quote hostile names: nothing raw reaches any of them, and the escaped text does.
func TestScanHeadless(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	f := newHostileFixture(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")

	code, out, errOut := runBin(t, bin, f.ws, f.config, "run", "--script", f.script, "--tapes", f.tapes,
		"--approve", "all", "--workspace", f.ws, "--record", rec)
	if code != 1 { // the failing subagent and the rejected lines
		t.Errorf("run: exit %d\n%s", code, errOut)
	}
	printed := []string{"TASK", "SAY", "THINK", "RETRY", "FATAL", "FAILSAY", "TOOLNAME", "FILE", "CONTENT", "MISSING", "SHELLOUT",
		"SAYTWO", "CAP", "SEV", "FIND", "REF", "NOTE", "CMDNAME"}
	var wantOut []string
	for _, m := range printed {
		wantOut = append(wantOut, escaped(m))
	}
	wantOut = append(wantOut, `MBIDI\u202etxt.exe\u202c`, `\x1b]52;c;SFVOVEVS\x07`, `\x1bP1337;q\x1b\`, `\u009b31m\u0085`,
		`\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`, `\u200b\u200c\u200d\u2060\ufeff`, `ARG\u001b[777;888H`)
	scanPlain(t, "run stdout", out, wantOut...)
	scanPlain(t, "run stderr", errOut,
		`→ \x1b[2J`, `→ x\x1b]52;c;SFVOVEVS\x07`, "→ "+escaped("TOOLNAME"), // tool names, as called
		escaped("RETRY"), escaped("FATAL"), escaped("TASK"), escaped("NOTE"), escaped("HELPARG"), escaped("CMDNAME"),
		escaped("TYPEARG"), escaped("AGENTDESC"), escaped("FILE"), `MBIDI\u202etxt.exe\u202c`)

	// The recording, replayed and inspected.
	code, pr, errOut := runBin(t, bin, f.ws, f.config, "replay", rec, "--print")
	if code != 0 {
		t.Fatalf("replay --print: exit %d\n%s", code, errOut)
	}
	if !bytes.Equal(pr, out) {
		t.Error("replay --print differs from run's stdout")
	}
	scanPlain(t, "replay --print", pr, wantOut...)
	scanPlain(t, "replay --print stderr", errOut)
	code, ins, errOut := runBin(t, bin, f.ws, f.config, "inspect", rec)
	if code != 0 {
		t.Fatalf("inspect: exit %d\n%s", code, errOut)
	}
	scanPlain(t, "inspect", ins, "hostile-agent")
	_, ins, _ = runBin(t, bin, f.ws, f.config, "inspect", rec, "--json")
	scanJSON(t, "inspect --json", ins, "hostile-agent")

	// The agent files.
	code, out, errOut = runBin(t, bin, f.ws, f.config, "agents", "list", "--workspace", f.ws)
	scanPlain(t, "agents list", out, escaped("AGENTNAME"), escaped("AGENTDESC"), escaped("TOOLDECL"))
	scanPlain(t, "agents list stderr", errOut, escaped("FNAME")) // the shadowed file's path
	_, out, errOut = runBin(t, bin, f.ws, f.config, "agents", "list", "--workspace", f.ws, "--json")
	scanJSON(t, "agents list --json", out, hostile("AGENTNAME"), hostile("AGENTDESC"), hostile("TOOLDECL"), hostile("AGENTBODY"))
	scanPlain(t, "agents list --json stderr", errOut)
	code, out, errOut = runBin(t, bin, f.ws, f.config, "agents", "validate", "--workspace", f.ws)
	if code != 1 {
		t.Errorf("agents validate: exit %d", code)
	}
	scanPlain(t, "agents validate", out, escaped("AGENTNAME"), escaped("FNAME"), escaped("TOOLDECL"))
	scanPlain(t, "agents validate stderr", errOut)
	_, out, errOut = runBin(t, bin, f.ws, f.config, "agents", "validate", "--workspace", f.ws, "--json")
	scanJSON(t, "agents validate --json", out, hostile("FNAME"))
	scanPlain(t, "agents validate --json stderr", errOut)
	_, out, errOut = runBin(t, bin, f.ws, f.config, "agents", "show", "hostile-agent", "--workspace", f.ws, "--task", hostile("SHOWTASK"))
	scanPlain(t, "agents show", out, escaped("AGENTDESC"), escaped("AGENTBODY"), escaped("SHOWTASK"))
	scanPlain(t, "agents show stderr", errOut)

	// A workspace and a recording whose names are hostile (a clone's directory can be called
	// anything): the header, /status and the "recorded" line name them.
	hws := filepath.Join(t.TempDir(), hostile("WSDIR"))
	os.MkdirAll(hws, 0o755)
	hrec := filepath.Join(t.TempDir(), hostile("RECNAME")+".jsonl")
	script := filepath.Join(t.TempDir(), "status.summit")
	os.WriteFile(script, []byte("/status\n"), 0o644)
	code, out, errOut = runBin(t, bin, hws, f.config, "run", "--script", script, "--tapes", f.tapes, "--workspace", hws, "--record", hrec)
	if code != 0 {
		t.Errorf("run in a hostile workspace: exit %d\n%s", code, errOut)
	}
	scanPlain(t, "run stdout (hostile workspace)", out, escaped("WSDIR"))
	scanPlain(t, "run stderr (hostile workspace)", errOut, escaped("RECNAME"))
	_, out, errOut = runBin(t, bin, hws, f.config, "replay", hrec, "--print")
	scanPlain(t, "replay --print (hostile workspace)", out, escaped("WSDIR"))
	scanPlain(t, "replay --print stderr (hostile workspace)", errOut)

	// gc and a session's start list the leftovers in the cache dir, named as found there.
	cache := t.TempDir()
	os.MkdirAll(filepath.Join(cache, "summit", "worktrees", hostile("GCNAME"), "sa-1"), 0o755)
	env := []string{"XDG_CONFIG_HOME=" + f.config, "XDG_CACHE_HOME=" + cache}
	_, out, errOut = runBinEnv(t, bin, f.ws, env, "gc", "--dry-run")
	scanPlain(t, "gc --dry-run", out, escaped("GCNAME"))
	scanPlain(t, "gc --dry-run stderr", errOut)
	_, out, errOut = runBinEnv(t, bin, f.ws, env, "gc", "--dry-run", "--json")
	scanJSON(t, "gc --dry-run --json", out, hostile("GCNAME"))
	scanPlain(t, "gc --dry-run --json stderr", errOut)

	// Error messages that quote what was typed or found: cobra's, and summit's own.
	for i, args := range [][]string{
		{"replay", filepath.Join(f.ws, hostile("NOFILE")), "--print"},
		{"inspect", filepath.Join(f.ws, hostile("NOFILE"))},
		{"agents", "validate", filepath.Join(f.ws, hostile("NOFILE"))},
		{"agents", "show", hostile("NOFILE"), "--workspace", f.ws},
		{"run", "--script", filepath.Join(f.ws, hostile("NOFILE"))},
		{"run", "--script", f.script, "--workspace", filepath.Join(f.ws, hostile("NOFILE"))},
		{"run", "--script", f.script, "--workspace", f.ws, "--tapes", filepath.Join(f.ws, hostile("NOFILE"))},
		{"run", "--script", f.script, "--workspace", f.ws, "--approve", hostile("NOFILE")},
		{"run", "--script", f.script, "--workspace", f.ws, "--permission-mode", hostile("NOFILE")},
		{"run", "--script", f.script, "--workspace", f.ws, "--provider", hostile("NOFILE")},
		{"--" + hostile("NOFILE")},
		{hostile("NOFILE")},
		{"agents", hostile("NOFILE")},
	} {
		code, out, errOut := runBin(t, bin, f.ws, f.config, args...)
		if code == 0 {
			t.Errorf("%q: exit 0", args)
		}
		what := fmt.Sprintf("error case %d (%.40q)", i, strings.Join(args, " "))
		scanPlain(t, what+" stdout", out)
		scanPlain(t, what+" stderr", errOut, "NOFILE")
	}
}

// craftRecording rewrites a recording so that what the fold takes as it is (agent type and
// name, modes, provider, tools, the end reason) is hostile, and appends an event of a hostile
// unknown type: a recording is a file anyone can hand over. (A hostile id is refused by the
// fold: see TestScanCraftedRecording.)
func craftRecording(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	js := func(s string) string {
		q, _ := json.Marshal(s)
		return string(q[1 : len(q)-1])
	}
	id := regexp.MustCompile(`"session_id":"([^"]+)"`).FindSubmatch(b)
	if id == nil {
		t.Fatalf("no session id in %s", src)
	}
	s := string(b)
	for _, r := range [][2]string{
		{`"hostile-agent"`, `"` + js(hostile("AGENTTYPE")) + `"`},
		{`"provider":"script"`, `"provider":"` + js(hostile("PROVIDER")) + `"`},
		{`"reason":"script_end"`, `"reason":"` + js(hostile("ENDREASON")) + `"`},
		{`"read_file"`, `"` + js(hostile("TOOLLIST")) + `"`},
	} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	// The unknown event goes just before the SessionEnded, which moves one seq on.
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	last := lines[len(lines)-1]
	seq := len(lines)
	if !strings.Contains(last, `"type":"SessionEnded"`) || !strings.Contains(last, `"seq":`+strconv.Itoa(seq)+`,`) {
		t.Fatalf("the recording does not end with SessionEnded at seq %d: %s", seq, last)
	}
	lines[len(lines)-1] = `{"v":1,"seq":` + strconv.Itoa(seq) + `,"ts":"2030-01-01T00:00:00Z","session_id":"` + string(id[1]) + `","type":"` + js(hostile("EVTYPE")) + `","data":{}}` + "\n" +
		strings.Replace(last, `"seq":`+strconv.Itoa(seq)+`,`, `"seq":`+strconv.Itoa(seq+1)+`,`, 1) + "\n"
	s = strings.Join(lines, "")
	if err := os.WriteFile(dst, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestScanCraftedRecording: a recording whose ids, names and types are hostile is replayed
// and inspected; nothing raw reaches the output.
func TestScanCraftedRecording(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	f := newHostileFixture(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	runBin(t, bin, f.ws, f.config, "run", "--script", f.script, "--tapes", f.tapes, "--approve", "all", "--workspace", f.ws, "--record", rec)
	crafted := filepath.Join(t.TempDir(), "crafted.jsonl")
	craftRecording(t, rec, crafted)
	code, out, errOut := runBin(t, bin, f.ws, f.config, "replay", crafted, "--print")
	if code != 0 {
		t.Fatalf("replay --print: exit %d\n%s", code, errOut)
	}
	ids := []string{escaped("AGENTTYPE"), escaped("PROVIDER"), escaped("ENDREASON"), escaped("TOOLLIST")}
	scanPlain(t, "replay --print (crafted)", out, append(ids, escaped("SAY"))...)
	scanPlain(t, "replay --print (crafted) stderr", errOut, "EVTYPE")
	code, out, errOut = runBin(t, bin, f.ws, f.config, "inspect", crafted)
	if code != 0 {
		t.Fatalf("inspect: exit %d\n%s", code, errOut)
	}
	scanPlain(t, "inspect (crafted)", out, escaped("AGENTTYPE"), escaped("ENDREASON"))
	scanPlain(t, "inspect (crafted) stderr", errOut, "EVTYPE")
	_, out, errOut = runBin(t, bin, f.ws, f.config, "inspect", crafted, "--json")
	scanJSON(t, "inspect --json (crafted)", out, hostile("AGENTTYPE"))
	scanPlain(t, "inspect --json (crafted) stderr", errOut)

	// A hostile id would forge lines where ids are printed bare: the fold refuses the file,
	// and the error quotes the id escaped.
	rb, _ := os.ReadFile(rec)
	forged := filepath.Join(t.TempDir(), "forged.jsonl")
	os.WriteFile(forged, []byte(strings.ReplaceAll(string(rb), `"sa-1"`, `"sa-1\n`+strings.Trim(strconvQuote(hostile("SAID")), `"`)+`"`)), 0o644)
	for _, args := range [][]string{{"replay", forged, "--print"}, {"inspect", forged}} {
		code, out, errOut := runBin(t, bin, f.ws, f.config, args...)
		if code != 1 || !strings.Contains(string(errOut), "holds a control or invisible character") {
			t.Errorf("%s of a recording with a hostile id: exit %d\n%s", args[0], code, errOut)
		}
		scanPlain(t, args[0]+" (hostile id)", out)
		scanPlain(t, args[0]+" (hostile id) stderr", errOut, "SAID")
	}

	// Malformed lines holding raw hostile bytes, skipped with --lenient: the warnings quote them.
	b, _ := os.ReadFile(crafted)
	lines := strings.SplitAfter(string(b), "\n")
	bad := `{"v":1,"seq":"` + hostile("BADLINE") + `"}` + "\n" + hostile("GARBAGE") + "\n"
	damaged := filepath.Join(t.TempDir(), "damaged.jsonl")
	os.WriteFile(damaged, []byte(strings.Join(lines[:3], "")+bad+strings.Join(lines[3:], "")), 0o644)
	for _, args := range [][]string{{"replay", damaged, "--print", "--lenient"}, {"inspect", damaged, "--lenient"}, {"replay", damaged, "--print"}} {
		code, out, errOut := runBin(t, bin, f.ws, f.config, args...)
		what := strings.Join(append([]string{args[0]}, args[2:]...), " ") + " (damaged)"
		if code != 0 && args[len(args)-1] == "--lenient" {
			t.Errorf("%s: exit %d\n%s", what, code, errOut)
		}
		scanPlain(t, what, out)
		scanPlain(t, what+" stderr", errOut, "line 4")
	}
}

// pipeTerm starts a tmux session like newTerm, with the pane's raw output appended to a file
// from its first byte (the pane starts on a shell that waits for the pipe to be set).
func pipeTerm(t *testing.T, w, h int, command string) (*tmuxTerm, string) {
	t.Helper()
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw")
	gate := filepath.Join(dir, "gate")
	tm := newTerm(t, w, h, "while [ ! -e "+gate+" ]; do sleep 0.05; done; "+command)
	tm.tmux("pipe-pane", "-o", "-t", tm.name, "cat >> "+raw)
	os.WriteFile(gate, nil, 0o644)
	return tm, raw
}

// scanTerm fails for every hostile raw byte the pane's stream holds.
func scanTerm(t *testing.T, what, raw string) []byte {
	t.Helper()
	b, err := os.ReadFile(raw)
	if err != nil || len(b) == 0 {
		t.Fatalf("%s: no raw output captured (%v)", what, err)
	}
	for _, l := range termLeaks(b) {
		t.Errorf("%s leaks: %s", what, l)
	}
	t.Logf("%s: %d bytes scanned", what, len(b))
	return b
}

// TestScanTerminal drives the hostile session in the workbench under tmux, shows every pane
// the hostile text reaches (tree, transcript with thinking and expanded tool calls, the
// permission prompt, /diff, /agents, /status, notices), then replays the crafted recording
// in the terminal; the raw bytes the program wrote are scanned, and the screen shows the
// escaped forms.
func TestScanTerminal(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	f := newHostileFixture(t)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	tm, raw := pipeTerm(t, 160, 50, "cd "+f.ws+" && XDG_CONFIG_HOME="+f.config+" "+bin+" --tapes "+f.tapes+" --record "+rec+"; sleep 60")
	scanned := false
	defer func() { // the bytes are scanned even when a step fails: a leak is often why
		if !scanned {
			scanTerm(t, "workbench (up to the failed step)", raw)
		}
	}()
	var seen strings.Builder
	look := func(what string, d time.Duration) string {
		t.Helper()
		s := tm.waitFor(what, d)
		seen.WriteString(s)
		return s
	}
	snap := func() { seen.WriteString(tm.screen()) }
	look(`type /help`, 10*time.Second)
	// The workspace's history, recalled into the input.
	tm.keys("Up")
	look(regexp.QuoteMeta(`\ufeff HISTORY-END`), 5*time.Second) // the input shows the line's end
	tm.keys("C-u")
	// Completion lists the agent names on the notice line (the grammar leaves the hostile
	// name out: it is not a name /delegate takes).
	tm.keys("/delegate x --agent-type ", "Tab")
	time.Sleep(300 * time.Millisecond)
	snap()
	tm.keys("C-u")
	tm.keys(`/delegate "work" --agent-type hostile-agent`, "Enter")
	look(`sa-1 hostile-agent`, 10*time.Second)
	// The shell call waits in the inbox: its prompt shows the hostile command.
	// The inbox may open on its own before a capture shows the notice (a loaded machine):
	// ctrl+o opens it only when it is not open yet.
	if s := look(`⚠ pr-1|permission pr-1`, 20*time.Second); !strings.Contains(s, "permission pr-1") {
		tm.keys("C-o")
	}
	look(`permission pr-1`, 5*time.Second)
	look(`↑↓ or 1-\d select`, 5*time.Second)
	look(regexp.QuoteMeta(escaped("SHELLOUT")), 5*time.Second)
	tm.keys("1", "Enter")
	look(`✓ sa-1 hostile-agent`, 20*time.Second)
	tm.keys(`/delegate "fail now" --agent-type hostile-agent`, "Enter")
	look(`sa-2 hostile-agent`, 10*time.Second)
	time.Sleep(2 * time.Second)
	// until presses key until the screen shows what (at most n times).
	until := func(what, key string, n int) {
		t.Helper()
		for i := 0; ; i++ {
			for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				sc := tm.screen()
				seen.WriteString(sc)
				if strings.Contains(sc, what) {
					return
				}
			}
			if i == n {
				t.Errorf("%q never showed, %d times %s", what, n, key)
				return
			}
			tm.keys(key)
		}
	}
	// sa-1's transcript: its tail (capsule, changes), then from the top with thinking shown
	// and the tool calls expanded, page by page.
	tm.keys("Escape")
	look(`┏━ tree`, 5*time.Second)
	tm.keys("Down", "Enter")
	look(`sa-1 hostile-agent · done`, 5*time.Second)
	look(regexp.QuoteMeta(escaped("SEV")), 5*time.Second)
	tm.keys("t", "g")
	look(regexp.QuoteMeta(escaped("THINK")), 5*time.Second)
	tm.keys("Enter")
	until(escaped("SHELLOUT"), "PageDown", 12)
	tm.keys("G")
	// The tail: the changes and their diff, then the capsule above them (how far above depends
	// on how long the expanded diff renders).
	look(`changes · 2 files`, 5*time.Second)
	until(escaped("CAP"), "PageUp", 6)
	// sa-2, failed with a hostile error.
	tm.keys("Escape", "Down", "Enter")
	look(regexp.QuoteMeta(escaped("FATAL")), 5*time.Second)
	tm.keys("Escape", "Escape")
	// Panels and notices: the changes, the status, the catalogue, an /apply.
	for _, c := range []struct{ line, want string }{
		{"/diff sa-1", regexp.QuoteMeta(escaped("CONTENT"))},
		{"/status sa-1", regexp.QuoteMeta(escaped("CAP"))},
		{"/agents", regexp.QuoteMeta(escaped("AGENTDESC"))},
		{"/apply sa-1", `apply-1: sa-1 applied`},
		{"/status", `/status · (↑↓ scroll · )?esc closes`},
	} {
		tm.keys("/")
		look(`› /`, 5*time.Second)
		tm.keys("C-u", c.line, "Enter")
		look(c.want, 10*time.Second)
		tm.keys("PageDown")
		time.Sleep(300 * time.Millisecond)
		snap()
		tm.keys("Escape")
		time.Sleep(200 * time.Millisecond)
	}
	tm.keys("/")
	tm.keys("C-u", "/quit", "Enter")
	waitEnded(t, rec)
	time.Sleep(300 * time.Millisecond)
	scanned = true
	scanTerm(t, "workbench", raw)
	screens := seen.String()
	for _, m := range []string{"SAY", "THINK", "FILE", "SHELLOUT", "CAP", "SEV", "FIND", "RETRY", "FATAL", "MISSING", "AGENTDESC"} {
		if !strings.Contains(screens, escaped(m)) {
			t.Errorf("no screen showed %q", escaped(m))
		}
	}
	for _, w := range []string{`\x1b[2J`, `x\x1b]52;c;SFVOVEVS\x07`, `MBIDI\u202etxt.exe\u202c`} {
		if !strings.Contains(screens, w) {
			t.Errorf("no screen showed %q", w)
		}
	}
	if t.Failed() {
		t.Logf("screens:\n%s", screens)
	}

	// The crafted recording, replayed in the terminal.
	crafted := filepath.Join(t.TempDir(), "crafted.jsonl")
	craftRecording(t, rec, crafted)
	rp, rraw := pipeTerm(t, 160, 50, bin+" replay "+crafted+"; sleep 60")
	var rs strings.Builder
	rs.WriteString(rp.waitFor(`paused`, 10*time.Second))
	rp.keys("$")
	time.Sleep(500 * time.Millisecond)
	rs.WriteString(rp.screen())
	rp.keys("Down")
	time.Sleep(300 * time.Millisecond)
	rp.keys("Enter")
	time.Sleep(300 * time.Millisecond)
	rs.WriteString(rp.screen())
	rp.keys("C-c")
	time.Sleep(500 * time.Millisecond)
	scanTerm(t, "replay of a crafted recording", rraw)
	for _, m := range []string{"AGENTTYPE"} {
		if !strings.Contains(rs.String(), escaped(m)) {
			t.Errorf("the replay's screen lacks %q:\n%s", escaped(m), rs.String())
		}
	}
}

// strconvQuote is the JSON spelling of s, quotes included.
func strconvQuote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
