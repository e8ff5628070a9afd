package session

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Waiting is one decision the session waits for: a pending permission request or a conflict
// whose review was asked for and is not resolved.
type Waiting struct {
	ID         string // pr-N or cf-N
	Review     bool   // a conflict review; else a permission request
	SubagentID string // the asking subagent (permission requests)
	Seq        uint64 // when it was asked: the inbox lists items oldest first
}

// WaitingItems lists every decision the whole tree waits for, oldest first: only what can
// still be answered (a conflict of a convergence that completed, interrupted, is not). The workbench's
// approvals inbox and /inbox both show this list.
func WaitingItems(s *State) []Waiting {
	var out []Waiting
	for _, p := range s.Permissions {
		if p.Decision == DecisionPending {
			out = append(out, Waiting{ID: p.ID, SubagentID: p.SubagentID, Seq: p.Seq})
		}
	}
	for _, cv := range s.Convergences {
		if cv.Status == ConvergenceDone {
			// Complete with a conflict open: interrupted (a fork closed it). Nothing can
			// answer it any more, so it is not offered.
			continue
		}
		for _, cf := range cv.Conflicts {
			if cf.ReviewRequested && cf.Resolution == nil {
				out = append(out, Waiting{ID: cf.ID, Review: true, Seq: cf.ReviewSeq})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Waiting) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// Plural is "1 tool call", "2 tool calls", "3 patches", "2 retries": n and the noun, which
// takes an s (es after s, x, ch or sh; a consonant's y becomes ies) unless n is 1. It is the one
// count formatter for user-visible text, so no screen says "1 requests".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if l := len(noun); l >= 2 && noun[l-1] == 'y' && !strings.ContainsRune("aeiou", rune(noun[l-2])) {
		return fmt.Sprintf("%d %sies", n, noun[:l-1])
	}
	for _, end := range []string{"s", "x", "ch", "sh"} {
		if strings.HasSuffix(noun, end) {
			return fmt.Sprintf("%d %ses", n, noun)
		}
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
