package record

import (
	"github.com/summit-dev/summit/session"
)

// LoadFile reads a recording and folds it: the state a replay shows at its end. Reader
// warnings (torn last line, unknown types, lenient skips) come back in the report; a line the
// fold rejects is an error naming its line and seq, and nothing after it is applied.
func LoadFile(path string, opts ReadOptions) (*session.State, ReadReport, error) {
	st := &session.State{}
	rep, err := FoldFile(path, opts, st, session.Apply)
	if err != nil {
		return nil, rep, err
	}
	return st, rep, nil
}
