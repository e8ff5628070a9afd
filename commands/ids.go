package commands

import (
	"strconv"
	"strings"
)

// IDKind is the prefix of a session object id: sa-3, cv-1, cf-2, pr-4.
type IDKind string

const (
	IDSubagent    IDKind = "sa"
	IDConvergence IDKind = "cv"
	IDConflict    IDKind = "cf"
	IDRequest     IDKind = "pr"
)

// idKinds lists every kind in display order (and the order completion offers them in).
var idKinds = []IDKind{IDSubagent, IDConvergence, IDConflict, IDRequest}

// Noun names the kind in messages: "subagent", "convergence", "conflict", "permission request".
func (k IDKind) Noun() string {
	switch k {
	case IDSubagent:
		return "subagent"
	case IDConvergence:
		return "convergence"
	case IDConflict:
		return "conflict"
	case IDRequest:
		return "permission request"
	}
	return string(k)
}

// example is the id shown in "expected a subagent id like sa-3".
func (k IDKind) example() string {
	if k == IDSubagent {
		return "sa-3"
	}
	return string(k) + "-1"
}

// maxIDDigits keeps N within int64 for whoever parses it further.
const maxIDDigits = 18

// ParseID splits an id of the shape <kind>-N, N a positive integer without leading zeros.
func ParseID(s string) (kind IDKind, n int64, ok bool) {
	prefix, digits, found := strings.Cut(s, "-")
	if !found {
		return "", 0, false
	}
	k := IDKind(prefix)
	switch k {
	case IDSubagent, IDConvergence, IDConflict, IDRequest:
	default:
		return "", 0, false
	}
	if digits == "" || len(digits) > maxIDDigits || digits[0] == '0' {
		return "", 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return "", 0, false
		}
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return k, v, true
}

// idOf reports whether s is a well-formed id of one of the kinds.
func idOf(s string, kinds []IDKind) bool {
	k, _, ok := ParseID(s)
	return ok && hasKind(kinds, k)
}

func hasKind(kinds []IDKind, k IDKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// expectedIDs phrases what an id slot accepts: "a subagent id like sa-3",
// "a subagent or convergence id like sa-3 or cv-1", "a subagent id like sa-3, both or none".
func expectedIDs(kinds []IDKind, keywords []Value) string {
	nouns := make([]string, len(kinds))
	examples := make([]string, len(kinds))
	for i, k := range kinds {
		nouns[i] = k.Noun()
		examples[i] = k.example()
	}
	s := "a " + orList(nouns) + " id like " + orList(examples)
	if len(keywords) > 0 {
		words := make([]string, len(keywords))
		for i, v := range keywords {
			words[i] = v.Name
		}
		s += ", " + orList(words)
	}
	return s
}

// orList joins "a", "a or b", "a, b or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// suggestID repairs the usual slips in an id (case, a missing or different separator,
// leading zeros): "SA3", "sa_3" and "sa-03" all give "sa-3". It returns "" when the repair is
// not an id of an accepted kind.
func suggestID(s string, kinds []IDKind) string {
	if len(s) > maxSuggestInput {
		return ""
	}
	t := strings.ToLower(strings.TrimSpace(s))
	if len(t) < 3 {
		return ""
	}
	k := IDKind(t[:2])
	if !hasKind(kinds, k) {
		return ""
	}
	digits := strings.TrimLeft(t[2:], "-_ ")
	digits = strings.TrimLeft(digits, "0")
	cand := string(k) + "-" + digits
	if idOf(cand, kinds) && cand != s {
		return cand
	}
	return ""
}
