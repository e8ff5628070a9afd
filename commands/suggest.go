package commands

import "strings"

// maxSuggestInput bounds the work spent on a suggestion: distance is O(len(a)·len(b)) and no
// valid name is anywhere near this long.
const maxSuggestInput = 64

// nearest returns the candidate the user most likely meant by input, or "" when none is close.
// Comparison ignores ASCII case. In order:
//
//  1. a candidate equal to input ignoring case (e.g. "AcceptEdits");
//  2. the only candidate that input is a prefix of (e.g. "--strat" → "--strategy");
//  3. the candidate at the smallest optimal-string-alignment distance (Damerau-Levenshtein
//     with adjacent transpositions counted once, so "mrege" is 1 from "merge"), if that
//     distance is within limit(len(input)) and smaller than the candidate itself; ties go to
//     the earlier candidate, so table order decides.
func nearest(input string, candidates []string) string {
	if input == "" || len(input) > maxSuggestInput {
		return ""
	}
	in := strings.ToLower(input)
	for _, c := range candidates {
		if strings.ToLower(c) == in {
			return c
		}
	}
	prefixed := ""
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), in) {
			if prefixed != "" {
				prefixed = ""
				break
			}
			prefixed = c
		}
	}
	// A unique prefix match is only trusted when the prefix says something (two characters).
	if prefixed != "" && len(in) >= 2 {
		return prefixed
	}
	best, bestD := "", limit(len([]rune(in)))+1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := distance(in, lc)
		if d < bestD && d < len([]rune(lc)) {
			best, bestD = c, d
		}
	}
	return best
}

// limit is the largest edit distance still taken for a typo of a word of n characters.
func limit(n int) int {
	switch {
	case n <= 4:
		return 1
	case n <= 8:
		return 2
	default:
		return 3
	}
}

// distance is the optimal string alignment distance between a and b, over runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows suffice: the transposition looks two rows back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Nearest returns the candidate closest to input (exact, unique prefix, then edit distance
// within a limit that grows with the word), or "" when none is close. It is the one suggestion
// rule, shared by the command grammar and the CLI's "did you mean" messages.
func Nearest(input string, candidates []string) string { return nearest(input, candidates) }
