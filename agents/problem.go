package agents

import (
	"fmt"
	"sort"
)

// Level says whether a Problem stops a definition from being used.
type Level string

const (
	// LevelError: the file is not loaded (load problems) or the definition
	// breaks a rule that policy would otherwise have to guess around
	// (validation problems). `summit agents validate` exits 1.
	LevelError Level = "error"
	// LevelWarning: the definition is usable as read; the author should fix it.
	LevelWarning Level = "warning"
)

// Problem is one finding about one file, printed as `file:line: level: message`.
// Line is 1-based; 0 means the problem concerns the file as a whole.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Level   Level  `json:"level"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Level, p.Message)
	}
	return fmt.Sprintf("%s: %s: %s", p.File, p.Level, p.Message)
}

// Error lets a Problem travel as an error where one is expected.
func (p Problem) Error() string { return p.String() }

// HasErrors reports whether any problem is an error.
func HasErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Level == LevelError {
			return true
		}
	}
	return false
}

// SortProblems orders problems by file, line, then message, so output is
// deterministic whatever order directories were walked in.
func SortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Message < b.Message
	})
}

// problems accumulates findings for one file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) errorf(line int, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Level: LevelError, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) warnf(line int, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Level: LevelWarning, Message: fmt.Sprintf(format, args...)})
}
