package compare

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/record/recordgen"
)

// benchPair writes two generated recordings of 32 MB (different seeds: they diverge early).
func benchPair(b *testing.B) (string, string) {
	b.Helper()
	dir := b.TempDir()
	var paths [2]string
	for i := range paths {
		paths[i] = filepath.Join(dir, []string{"a.jsonl", "b.jsonl"}[i])
		f, err := os.Create(paths[i])
		if err != nil {
			b.Fatal(err)
		}
		if err := recordgen.Generate(f, 32<<20, uint64(i+1)); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	return paths[0], paths[1]
}

// BenchmarkCompare is inspect A B's work on two 32 MB recordings: both folded with their
// fingerprints, then compared (the divergence's two lines read back through an index).
// BenchmarkInspectBoth is the reference: the same two files folded as inspect folds one
// (ReadOptions.NoText, no fingerprints).
func BenchmarkCompare(b *testing.B) {
	pa, pb := benchPair(b)
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for range b.N {
		ta, tb := NewTrace(pa), NewTrace(pb)
		for _, t := range []*Trace{ta, tb} {
			if _, err := record.FoldFile(t.Path, record.ReadOptions{}, t.State(), t.Fold); err != nil {
				b.Fatal(err)
			}
		}
		rep, err := Compare(ta, tb)
		if err != nil || rep.Divergence == nil {
			b.Fatal(err, rep.Divergence)
		}
	}
}

func BenchmarkInspectBoth(b *testing.B) {
	pa, pb := benchPair(b)
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for range b.N {
		for _, p := range []string{pa, pb} {
			st := &session.State{}
			if _, err := record.FoldFile(p, record.ReadOptions{NoText: true}, st, session.Apply); err != nil {
				b.Fatal(err)
			}
		}
	}
}
