package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// pathArgRE is an argument that names a file or directory: it has a slash or a file extension.
var pathArgRE = regexp.MustCompile(`/|\.[A-Za-z][A-Za-z0-9]{0,7}$`)

// examplePaths returns the paths that summit command lines in text name: the arguments of each
// "summit ..." command (in an Example, or an indented line of a Long text) that name a file or
// directory relative to where the command runs. Placeholders (FILE, DIR), flags, URLs, host:port
// addresses and absolute or home paths (the user's machine, not the repository) are left out.
func examplePaths(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		i := strings.Index(line, "summit ")
		if i < 0 || strings.TrimSpace(line) == "" || line[0] != ' ' && line[0] != '\t' {
			continue // prose, not a command line
		}
		if i > 0 && !strings.ContainsAny(line[i-1:i], " \t|") {
			continue // "…summit " inside another word or path
		}
		args := strings.Fields(line[i:])
		for _, a := range args[1:] {
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
				a = v
			}
			a = strings.Trim(a, `"'`)
			switch {
			case a == "" || a == "-" || strings.HasPrefix(a, "-"):
				continue
			case a == "|" || a == "&&" || a == ";" || a == ">" || strings.HasPrefix(a, "#"):
				goto next // the summit command ends (a comment ends the line)
			case strings.Contains(a, "://"), strings.HasPrefix(a, "/"), strings.HasPrefix(a, "~"),
				strings.Contains(a, "$"), regexp.MustCompile(`^[\d.]+:\d+$|^localhost:\d+$`).MatchString(a),
				a == strings.ToUpper(a): // placeholders: FILE, DIR, FILE|DIR...
				continue
			}
			if pathArgRE.MatchString(a) {
				out = append(out, a)
			}
		}
	next:
	}
	return out
}

func TestExamplePathsExtract(t *testing.T) {
	text := "  summit run --script demo.summit --tapes testdata/tapes --approve shell # then see cart.go\n" +
		"  summit replay .summit/sessions/$ID.jsonl\n" +
		"  echo '/delegate \"map the repo\"' | summit run --script - --record=out/x.jsonl\n" +
		"  SUMMIT_SERVE_TOKEN=x summit serve --addr 0.0.0.0:8787 --tls-cert /etc/cert.pem --endpoint http://localhost:4318\n" +
		"  summit tapes check DIR|FILE... ~/tapes $HOME/t.yaml\n" +
		"prose that mentions summit run --script prose.summit is not a command line\n" +
		"  curl -s localhost:8787/rpc -d '{\"a\": 1}'\n" +
		"  summit replay a.jsonl | head -5 more/x.txt\n"
	got := examplePaths(text)
	want := []string{"demo.summit", "testdata/tapes", "out/x.jsonl", "a.jsonl"}
	if !slices.Equal(got, want) {
		t.Errorf("examplePaths = %q, want %q", got, want)
	}
}

// TestHelpExamplePathsExist: every path that an example in any --help names exists in the
// repository, so a newcomer in a fresh clone can run the examples as printed.
func TestHelpExamplePathsExist(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, p := range examplePaths(c.Example + "\n" + c.Long) {
			checked++
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				t.Errorf("%s --help names %s, which is not in the repository", c.CommandPath(), p)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
	if checked < 5 {
		t.Errorf("only %d example paths found: the extraction is broken", checked)
	}
}
