package provider

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// billionLaughs is an alias bomb: each anchor uses the one before ten times, so the last
// expands to 10^levels scalars from a few hundred bytes.
func billionLaughs(key string, levels int) string {
	var b strings.Builder
	b.WriteString(key + "0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat("*a"+itoa(i-1)+", ", 10), ", ")
		b.WriteString(key + itoa(i) + ": &a" + itoa(i) + " [" + refs + "]\n")
	}
	return b.String()
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestTapeAliases: anchors, aliases and merge keys work in tapes, as in any YAML: a reused
// step, reused tool arguments, a reused list of branch steps, a step built by merging.
func TestTapeAliases(t *testing.T) {
	const src = `tapes:
  - name: a
    steps:
      - &hello
        say: "hello"
      - *hello
      - tool: run_shell_command
        args: &ls {command: "ls", timeout_s: 5}
        on_denied: &giveup
          - say: "giving up"
          - capsule: {summary: "stopped"}
      - tool: run_shell_command
        args: {<<: *ls, command: "ls -l"}
        on_error: *giveup
`
	tapes, err := ParseTapes([]byte(src), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := tapes[0].Steps
	if len(s) != 4 || s[0].Say != "hello" || s[1].Say != "hello" {
		t.Fatalf("aliased step: %+v", s)
	}
	if s[2].Args != `{"command":"ls","timeout_s":5}` || s[3].Args != `{"command":"ls -l","timeout_s":5}` {
		t.Errorf("aliased and merged args: %s, %s", s[2].Args, s[3].Args)
	}
	if len(s[3].OnError) != 2 || s[3].OnError[0].Say != "giving up" || s[3].OnError[1].Capsule == "" || len(s[2].OnDenied) != 2 {
		t.Errorf("aliased branch: %+v / %+v", s[2].OnDenied, s[3].OnError)
	}
}

// TestTapeAliasBombs: an alias bomb, an alias cycle and a bad merge are refused at file:line,
// at once (the bomb is not expanded first).
func TestTapeAliasBombs(t *testing.T) {
	bomb := billionLaughs("l", 9) + "tapes:\n  - name: a\n    steps: [{say: hi}]\n"
	cases := []struct{ name, src, want string }{
		{"billion laughs", bomb, "b.yaml:5: alias *a3: YAML aliases expand this document past 100000 nodes; refused as an alias bomb"},
		{"cycle", "tapes: &t\n  - name: a\n    steps: [{say: hi}, *t]\n", "b.yaml:3: alias *t is inside the node its anchor marks (a cycle)"},
		{"merge of a string", "x: &s hello\ntapes:\n  - name: a\n    steps:\n      - {<<: *s, say: hi}\n", "b.yaml:5: a merge key (<<) takes a mapping or a list of mappings, found a string"},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := ParseTapes([]byte(c.src), "b.yaml")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v\nwant %s", c.name, err, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
}

// endlessFile is a file that says it is small and regular, and never ends.
type endlessFile struct{ read int64 }

func (f *endlessFile) Stat() (fs.FileInfo, error) {
	return fstest.MapFS{"t.yaml": {Data: []byte("x")}}.Stat("t.yaml")
}
func (f *endlessFile) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	f.read += int64(len(p))
	return len(p), nil
}
func (f *endlessFile) Close() error { return nil }

type endlessFS struct {
	fstest.MapFS
	f *endlessFile
}

func (e endlessFS) Open(name string) (fs.File, error) {
	if name == "t.yaml" {
		return e.f, nil
	}
	return e.MapFS.Open(name)
}

// TestTapeFileCap: a tape file over MaxTapeFile is refused, naming it and the cap, and is not
// read past the cap, whether it is named alone, found in a directory, or grows after its size
// was checked.
func TestTapeFileCap(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	data := []byte("tapes:\n  - name: a\n    steps: [{say: hi}]\n")
	data = append(data, strings.Repeat("#", MaxTapeFile-len(data)+1)...)
	if err := os.WriteFile(big, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{big, dir} {
		_, err := LoadTapes(p)
		if want := big + " is larger than 16 MiB, the cap on a tape file"; err == nil || err.Error() != want {
			t.Errorf("LoadTapes(%s): %v, want %q", p, err, want)
		}
	}
	// At the cap exactly, it loads.
	if err := os.WriteFile(big, data[:MaxTapeFile], 0o600); err != nil {
		t.Fatal(err)
	}
	if tapes, err := LoadTapes(dir); err != nil || len(tapes) != 1 {
		t.Errorf("a tape file of exactly the cap: %v", err)
	}
	f := &endlessFile{}
	_, err := LoadTapesFS(endlessFS{fstest.MapFS{"t.yaml": {Data: []byte("x")}}, f}, "fs")
	if err == nil || err.Error() != filepath.Join("fs", "t.yaml")+" is larger than 16 MiB, the cap on a tape file" {
		t.Errorf("endless tape file: %v", err)
	}
	if f.read > MaxTapeFile+64<<10 {
		t.Errorf("read %d bytes of an endless tape file", f.read)
	}
}
