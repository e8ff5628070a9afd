package session

import (
	"fmt"
	"os"
)

// LoadFile reads a recording and folds it: the state a replay shows at its end. Reader
// warnings (torn last line, unknown types, lenient skips) come back in the report; a line the
// fold rejects is an error naming its line and seq, and nothing after it is applied.
func LoadFile(path string, opts ReadOptions) (*State, ReadReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, ReadReport{}, err
	}
	defer f.Close()
	st := &State{}
	line := 0
	rep, err := ForEach(f, opts, func(e Event) error {
		line++
		if err := Apply(st, e); err != nil {
			return fmt.Errorf("event %d: %w", line, err)
		}
		return nil
	})
	if err != nil {
		return nil, rep, err
	}
	if !st.Started {
		return nil, rep, fmt.Errorf("no events: a recording starts with SessionStarted")
	}
	return st, rep, nil
}
