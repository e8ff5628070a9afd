package agents

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir finds ../shared/corpus/agents relative to the module root, the
// real-world files the loader is judged on. A user's clone has no
// ../shared, so tests that need it skip.
func corpusDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Skip("no working directory")
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			c := filepath.Join(dir, "..", "shared", "corpus", "agents")
			if st, err := os.Stat(c); err == nil && st.IsDir() {
				return c
			}
			t.Skip("corpus ../shared/corpus/agents not present")
		}
		if filepath.Dir(dir) == dir {
			t.Skip("module root not found")
		}
	}
}

func corpusFiles(t *testing.T, root string) []string {
	var files []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isAgentFile(p) {
			files = append(files, p)
		}
		return nil
	})
	return files
}

func TestCorpusLoads(t *testing.T) {
	root := corpusDir(t)
	files := corpusFiles(t, root)
	var clean, warned, failed, valErr int
	for _, f := range files {
		d, ps := ParseFile(f)
		rel, _ := filepath.Rel(root, f)
		switch {
		case d == nil:
			failed++
			for _, p := range ps {
				t.Errorf("%s", p)
			}
		case len(ps) == 0:
			clean++
		default:
			warned++
		}
		if d != nil {
			vs := Validate(d)
			if HasErrors(vs) {
				valErr++
			}
			if testing.Verbose() {
				for _, p := range append(ps, vs...) {
					t.Logf("%s", strings.Replace(p.String(), root+"/", "", 1))
				}
			}
		}
		_ = rel
	}
	t.Logf("corpus: %d files: %d clean, %d with warnings, %d failed; %d with validation errors", len(files), clean, warned, failed, valErr)
	if len(files) != 119 {
		t.Errorf("found %d agent files, want 119", len(files))
	}
	if failed != 0 {
		t.Errorf("%d corpus files failed to load", failed)
	}
}
