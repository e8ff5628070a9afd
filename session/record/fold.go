package record

import (
	"fmt"

	"github.com/summit-dev/summit/session"
)

// FoldFile reads the recording at path and folds it into st with apply, as LoadFile does (the
// same warnings, the same lenient gaps, the same errors), for callers that fold into a state
// of their own or fold each event their own way: `summit inspect` reads without transcript
// text (ReadOptions.NoText), `replay --print` keeps the text out of the state (see
// render.TextSpool). apply is session.Apply or a wrapper of it; it is called on one goroutine,
// in order, while the next events are decoded on the other cores.
func FoldFile(path string, opts ReadOptions, st *session.State, apply func(*session.State, session.Event) error) (ReadReport, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return ReadReport{}, err
	}
	defer f.Close()
	var gaps []string
	rep, err := forEachFile(f, opts, func(e session.Event) error {
		// A lenient read skips malformed lines, and their seqs with them: accept that gap
		// (and only that one) instead of refusing the rest of the file.
		if opts.Lenient && st.Started && e.Seq > st.LastSeq+1 {
			gaps = append(gaps, fmt.Sprintf("seq %d-%d missing (skipped lines)", st.LastSeq+1, e.Seq-1))
			st.SkipTo(e.Seq)
		}
		return apply(st, e)
	})
	rep.Warnings = append(rep.Warnings, gaps...)
	if err != nil {
		return rep, err
	}
	if !st.Started {
		return rep, fmt.Errorf("no events: a recording starts with SessionStarted")
	}
	return rep, nil
}
