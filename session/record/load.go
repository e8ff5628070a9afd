package record

import (
	"fmt"

	"github.com/summit-dev/summit/session"
)

// LoadFile reads a recording and folds it: the state a replay shows at its end. Reader
// warnings (torn last line, unknown types, lenient skips) come back in the report; a line the
// fold rejects is an error naming its line and seq, and nothing after it is applied.
func LoadFile(path string, opts ReadOptions) (*session.State, ReadReport, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, ReadReport{}, err
	}
	defer f.Close()
	st := &session.State{}
	var gaps []string
	rep, err := ForEach(f, opts, func(e session.Event) error {
		// A lenient read skips malformed lines, and their seqs with them: accept that gap
		// (and only that one) instead of refusing the rest of the file.
		if opts.Lenient && st.Started && e.Seq > st.LastSeq+1 {
			gaps = append(gaps, fmt.Sprintf("seq %d-%d missing (skipped lines)", st.LastSeq+1, e.Seq-1))
			st.SkipTo(e.Seq)
		}
		return session.Apply(st, e)
	})
	rep.Warnings = append(rep.Warnings, gaps...)
	if err != nil {
		return nil, rep, err
	}
	if !st.Started {
		return nil, rep, fmt.Errorf("no events: a recording starts with SessionStarted")
	}
	return st, rep, nil
}
