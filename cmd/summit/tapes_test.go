package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents/provider"
)

const tapesServeFile = `tapes:
  - name: greet
    match: {task: "(?i)hello"}
    steps:
      - say: "Hello from a tape."
`

// lockedBuffer is a buffer the command writes from its goroutines while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingRE = regexp.MustCompile(`serving (\d+) tapes? on (http://127\.0\.0\.1:\d+) `)

func writeTapeFile(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "greet.yaml")
	if err := os.WriteFile(file, []byte(tapesServeFile), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// askTape sends one Messages request and returns the status and body.
func askTape(t *testing.T, base, task string) (int, string) {
	t.Helper()
	res, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(
		`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"`+task+`"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestTapesServe: the command serves the tapes on the address it prints, says how to point
// each agent at it, logs each request, and stops when its context ends.
func TestTapesServe(t *testing.T) {
	file := writeTapeFile(t)
	var stdout, stderr lockedBuffer
	cmd := newTapes(&stdout, &stderr)
	cmd.SetArgs([]string{"serve", "--addr", "127.0.0.1:0", "--tapes", file, "--no-sleep"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := servingRE.FindStringSubmatch(stdout.String()); m != nil {
			if m[1] != "1" {
				t.Fatalf("serving %s tapes", m[1])
			}
			base = m[2]
		}
		select {
		case err := <-done:
			t.Fatalf("the command ended: %v\n%s%s", err, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner:\n%s%s", stdout.String(), stderr.String())
		}
	}
	out := stdout.String()
	for _, want := range []string{
		"ANTHROPIC_BASE_URL=" + base + " ",
		"GOOGLE_GEMINI_BASE_URL=" + base + " GEMINI_API_KEY=",
		"OPENAI_BASE_URL=" + base + "/v1 ",
		`base_url = "` + base + `/v1"`,
		`wire_api = "responses"`,
		"greet: any model, task /(?i)hello/ (" + file + ":2)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the banner lacks %q:\n%s", want, out)
		}
	}
	if status, body := askTape(t, base, "Hello there"); status != 200 || !strings.Contains(body, "Hello from a tape.") {
		t.Errorf("%d %s", status, body)
	}
	if status, body := askTape(t, base, "Goodbye"); status != 400 || !strings.Contains(body, "no tape matches") || !strings.Contains(body, "greet") {
		t.Errorf("%d %s", status, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stopped with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
	log := stderr.String()
	if !strings.Contains(log, `anthropic model "claude-sonnet-4-5": tape greet, turn 1, attempt 1`) ||
		!strings.Contains(log, "400 tapeserve: no tape matches") || !strings.Contains(log, "tapes serve stopped") {
		t.Errorf("stderr:\n%s", log)
	}
	if _, err := net.Dial("tcp", strings.TrimPrefix(base, "http://")); err == nil {
		t.Error("still listening after the stop")
	}
}

// TestTapesServeRefusals: a missing --tapes is a usage error; unreadable tapes and an address
// in use fail the run, naming what is wrong.
func TestTapesServeRefusals(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("tapes:\n  - name: x\n    steps: [{sey: hi}]\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"serve"}, exitUsage, "needs --tapes DIR"},
		{[]string{"serve", "--tapes", filepath.Join(t.TempDir(), "none")}, exitBad, "no such file"},
		{[]string{"serve", "--tapes", bad}, exitBad, "bad.yaml:3"},
		{[]string{"serve", "--tapes", writeTapeFile(t), "--addr", busy.Addr().String()}, exitBad, "address already in use"},
		{[]string{"serve", "--tapes", writeTapeFile(t), "--max-sleep", "-1s"}, exitUsage, "negative"},
	} {
		var stdout, stderr lockedBuffer
		cmd := newTapes(&stdout, &stderr)
		cmd.SetArgs(c.args)
		err := cmd.Execute()
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v (%#v), want exit %d with %q", c.args, err, err, c.code, c.msg)
		}
	}
}

// TestTapesServeHelper is the server process of TestTapesServeSignals.
func TestTapesServeHelper(t *testing.T) {
	args := os.Getenv("SUMMIT_TAPES_SERVE_ARGS")
	if args == "" {
		t.Skip("run by TestTapesServeSignals")
	}
	cmd := newTapes(os.Stdout, os.Stderr)
	cmd.SetArgs(strings.Split(args, "\n"))
	// Returning (rather than os.Exit) lets TestMain clean up; a failure is the exit status.
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
}

// TestTapesServeSignals: SIGINT and SIGTERM stop the server cleanly (exit 0), in its own
// process as a user's Ctrl-C or a supervisor's stop would.
func TestTapesServeSignals(t *testing.T) {
	file := writeTapeFile(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			p := exec.Command(os.Args[0], "-test.run=^TestTapesServeHelper$")
			p.Env = append(os.Environ(), "SUMMIT_TAPES_SERVE_ARGS="+strings.Join([]string{"serve", "--addr", "127.0.0.1:0", "--tapes", file}, "\n"))
			stdout, err := p.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr lockedBuffer
			p.Stderr = &stderr
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			defer p.Process.Kill()
			found := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
						found <- m[2]
					}
				}
				io.Copy(io.Discard, stdout)
			}()
			var base string
			select {
			case base = <-found:
			case <-time.After(20 * time.Second):
				t.Fatalf("no banner; stderr:\n%s", stderr.String())
			}
			if status, body := askTape(t, base, "hello"); status != 200 || !strings.Contains(body, "Hello from a tape.") {
				t.Fatalf("%d %s", status, body)
			}
			if err := p.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- p.Wait() }()
			select {
			case err := <-waited:
				if err != nil || !strings.Contains(stderr.String(), "tapes serve stopped") {
					t.Errorf("exit %v; stderr:\n%s", err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s did not stop the server; stderr:\n%s", sig, stderr.String())
			}
		})
	}
}

// TestTapesHelpHasTheGrammar: summit tapes --help prints the whole grammar and a complete
// example that parses exactly as printed.
func TestTapesHelpHasTheGrammar(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"tapes", "--help"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("tapes --help: exit %d: %s", code, stderr.String())
	}
	help := stdout.String()
	for _, k := range []string{"tapes:", "name:", "match:", "agent:", "task:", "rate:", "steps:", "say:", "think:",
		"ask:", "text:", "tool:", "args:", "raw_args:", "sleep:", "fail:", "transient:", "times:", "capsule:",
		"end_turn:", "on_denied:", "on_error:", "on_exit:", "answers:", "otherwise:", "{{answer}}",
		"summit tapes check", "agents/provider/tapes/default.yaml"} {
		if !strings.Contains(help, k) {
			t.Errorf("tapes --help does not name %s", k)
		}
	}
	// The example: the indented block after "A complete tape file", as printed.
	i := strings.Index(help, "A complete tape file")
	if i < 0 {
		t.Fatalf("tapes --help has no example:\n%s", help)
	}
	rest := help[i:]
	rest = rest[strings.Index(rest, "\n\n")+2:]
	var block []string
	for _, l := range strings.Split(rest, "\n") {
		if l != "" && !strings.HasPrefix(l, "    ") {
			break
		}
		block = append(block, strings.TrimPrefix(l, "    "))
	}
	example := strings.TrimSpace(strings.Join(block, "\n")) + "\n"
	tapes, err := provider.ParseTapes([]byte(example), "example.yaml")
	if err != nil || len(tapes) < 3 {
		t.Fatalf("the example in tapes --help does not parse (%d tapes): %v\n%s", len(tapes), err, example)
	}
	// And summit tapes check agrees, on the example written to a file.
	file := filepath.Join(t.TempDir(), "review.yaml")
	os.WriteFile(file, []byte(example), 0o644)
	stdout.Reset()
	if code := run([]string{"tapes", "check", file}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "3 tapes in 1 file, no mistakes") {
		t.Errorf("tapes check of the example: exit %d, %s%s", code, stdout.String(), stderr.String())
	}
}

// TestTapesCheck: summit tapes check lists every mistake of every path at file:line with the
// nearest key, exits 1 on any mistake, 0 with a summary, 2 on usage; bad input (a missing
// file, a FIFO, a binary file, a file over the cap, an empty directory) gets a precise error and
// never hangs.
func TestTapesCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "tapes:\n  - name: any\n    steps: [{say: hi}]\n  - name: tester\n    match: {agent: tester}\n    steps: [{say: hi}]\n")
	typo := write("typo.yaml", "tapes:\n  - name: a\n    match: {agent: tester}\n    steps:\n      - sya: hi\n      - tool: glob\n        on_denid: [{say: no}]\n")
	typo2 := write("typo2.yml", "tapes:\n  - name: b\n    rate: -3\n    stpes: [{say: hi}]\n")
	bin := write("bin.yaml", "tapes:\n\x00\x01\x02ELF")
	big := write("big.yaml", "tapes: []\n"+strings.Repeat("#", provider.MaxTapeFile))
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	tapesDir := filepath.Join("..", "..", "agents", "provider", "tapes")

	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"misspelt keys in two files", []string{"tapes", "check", typo, good, typo2}, exitBad,
			[]string{good + ": 2 tapes in 1 file, no mistakes\n"},
			[]string{
				typo + `:5: unknown key "sya": did you mean say?`,
				typo + `:7: unknown key "on_denid": did you mean on_denied?`,
				typo2 + ":3: rate is words per second, a number ≥ 0\n" + typo2 + `:4: unknown key "stpes": did you mean steps?`,
				good + ":4: tape tester is never chosen: tape any (" + good + ":2) comes first and matches every agent and task it does (warning)",
				"summit: tapes check: 4 mistakes, in 2 of the 3 paths\n"}},
		{"the shipped tapes", []string{"tapes", "check", tapesDir}, exitOK,
			[]string{tapesDir + ": 10 tapes in 1 file, no mistakes\n"}, nil},
		{"a misspelt command", []string{"tapes", "chek", typo}, exitUsage, nil,
			[]string{`summit: tapes: unknown command "chek" (did you mean check?); the commands are check and serve`}},
		{"no command", []string{"tapes"}, exitUsage, nil, []string{"summit: tapes needs a command: check or serve"}},
		{"no path", []string{"tapes", "check"}, exitUsage, nil,
			[]string{"summit: tapes check needs a tape file or a directory of them\nusage: summit tapes check FILE|DIR..."}},
		{"a missing file", []string{"tapes", "check", filepath.Join(dir, "none.yaml")}, exitBad, nil,
			[]string{filepath.Join(dir, "none.yaml") + ": no such file or directory\n", "summit: tapes check: 1 mistake\n"}},
		{"a FIFO", []string{"tapes", "check", fifo}, exitBad, nil,
			[]string{fifo + " is a named pipe (FIFO), not a regular file: a tape file is a YAML text file\n"}},
		{"a binary file", []string{"tapes", "check", bin}, exitBad, nil,
			[]string{bin + ":2: a NUL byte: this is not a text file (a tape file is UTF-8 YAML)\n"}},
		{"over the cap", []string{"tapes", "check", big}, exitBad, nil,
			[]string{big + " is larger than 16 MiB, the cap on a tape file\n"}},
		{"a directory without tapes", []string{"tapes", "check", empty}, exitBad, nil,
			[]string{empty + ": no tape files (*.yaml, *.yml) under it\n"}},
	} {
		var stdout, stderr lockedBuffer
		done := make(chan int, 1)
		go func() { done <- run(c.args, &stdout, &stderr) }()
		var code int
		select {
		case code = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: tapes check hung", c.name)
		}
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", c.name, code, c.code, stdout.String(), stderr.String())
		}
		for _, w := range c.stdout {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%s: stdout lacks %q:\n%s", c.name, w, stdout.String())
			}
		}
		for _, w := range c.stderr {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, w, stderr.String())
			}
		}
	}
}
