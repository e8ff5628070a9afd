package record

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestIndexParallel: BuildIndexFile, which indexes a large file in two halves at once, gives
// the index one sequential pass gives, on plain files and on files whose second half needs
// the sequential fallback (blank, fallback-decoded, unknown-type and torn lines).
func TestIndexParallel(t *testing.T) {
	defer func(n int64) { parallelMin = n }(parallelMin)
	parallelMin = 1 << 10
	plain := genRecording(4000, false, 1)
	mixed := genRecording(4000, true, 3)
	torn := append(append([]byte(nil), plain...), plain[:50]...)
	for name, file := range map[string][]byte{"plain": plain, "mixed": mixed, "torn": torn, "mixed+plain": append(append([]byte(nil), mixed...), plain...)} {
		path := filepath.Join(t.TempDir(), "r.jsonl")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []ReadOptions{{}, {Lenient: true}} {
			want, werr := BuildIndexWith(bytes.NewReader(file), opts)
			got, gerr := BuildIndexFile(path, opts)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%s %+v: errors %v / %v", name, opts, werr, gerr)
			}
			if werr != nil {
				continue
			}
			if got.Len() != want.Len() || got.Size != want.Size || !reflect.DeepEqual(got.Report, want.Report) {
				t.Fatalf("%s %+v: %d entries size %d %+v, want %d size %d %+v", name, opts, got.Len(), got.Size, got.Report, want.Len(), want.Size, want.Report)
			}
			for i := 0; i < want.Len(); i++ {
				if g, w := got.Entry(i), want.Entry(i); g != w {
					t.Fatalf("%s %+v: entry %d: %+v, want %+v", name, opts, i, g, w)
				}
			}
		}
	}
}
