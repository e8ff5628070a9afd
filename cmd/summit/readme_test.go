package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// example is one fenced block of README.md: its info string, the line its first content line
// is on, and its text.
type example struct {
	info string
	line int
	text string
}

// fencedBlocks are the ``` blocks of a Markdown file, in order.
func fencedBlocks(t *testing.T, path string) []example {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	var cur *example
	var body strings.Builder
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &example{info: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: n + 1}
			body.Reset()
		case cur != nil && strings.TrimSpace(l) == "```":
			cur.text = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(l + "\n")
		}
	}
	if cur != nil {
		t.Fatalf("%s: the block opened at line %d is never closed", path, cur.line-1)
	}
	return out
}

// TestREADMEExamples runs every ```summit block of README.md exactly as written with summit
// run, on a fresh copy of the demo's sample workspace and the embedded tapes, and expects exit
// 0: the README's examples cannot drift from what summit does (README, Development).
func TestREADMEExamples(t *testing.T) {
	forkEnv(t)
	blocks := fencedBlocks(t, filepath.Join("..", "..", "README.md"))
	ran := 0
	for _, b := range blocks {
		if b.info != "summit" {
			continue
		}
		ran++
		ws := t.TempDir()
		for name, body := range demoFiles {
			if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		script := filepath.Join(t.TempDir(), "example.summit")
		os.WriteFile(script, []byte(b.text), 0o644)
		code, _, errOut := summit(t, "run", "--script", script, "--workspace", ws, "--approve", "all")
		if code != 0 {
			t.Errorf("README.md:%d: the example exits %d under summit run:\n%s\n--- stderr\n%s", b.line, code, b.text, errOut)
		}
	}
	// The Convergence and the Isolation sections' examples at least.
	if ran < 2 {
		t.Errorf("%d summit examples in README.md, want the Convergence and Isolation ones at least", ran)
	}
}
