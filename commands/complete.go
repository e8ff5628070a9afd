package commands

import (
	"cmp"
	"slices"
	"strings"
)

// LiveIDs is what completion may offer beyond the grammar: the ids and names that exist in the
// session right now. The order within each slice does not matter.
type LiveIDs struct {
	Subagents    []string // sa-N
	Convergences []string // cv-N
	Conflicts    []string // cf-N (open ones, for /resolve)
	Requests     []string // pr-N (pending ones, for /approve and /deny)
	Agents       []string // names for --agent-type; empty means the four built-in types
	Tools        []string // tool names for --tools
	Runners      []string // the live runners' names, for --on
	// Labels optionally describes an id or an agent name (e.g. "sa-2" → "builder · running").
	Labels map[string]string
}

func (l LiveIDs) ids(k IDKind) []string {
	switch k {
	case IDSubagent:
		return l.Subagents
	case IDConvergence:
		return l.Convergences
	case IDConflict:
		return l.Conflicts
	case IDRequest:
		return l.Requests
	}
	return nil
}

// Candidate is one completion: replace input[Start:End] with Text.
type Candidate struct {
	Start, End  int
	Text        string
	Description string
}

// Complete returns the completions for the word at cursor (a byte offset into input):
// command names after "/", flags not yet given after "-", the values of an enum, bool, id or
// name flag, and live ids of the kind the position takes. The candidates replace the whole
// word around the cursor (up to its end, not just up to the cursor); for a "--flag=value" word
// only the value is replaced, and for --tools only the name after the last comma. The order
// is deterministic: table order for commands, flags and enum values, kind then number for
// ids, alphabetical for agent and tool names. Nothing (nil) when nothing fits, including inside
// a quoted word and on a line that is not a command.
func Complete(input string, cursor int, live LiveIDs) []Candidate {
	cursor = max(0, min(cursor, len(input)))
	head := input[:cursor]
	if len(input) > MaxLine || !IsCommand(head) {
		return nil
	}
	toks, err := scan(head, true)
	if err != nil || len(toks) == 0 {
		return nil
	}
	prev, cur := toks, Token{Start: cursor, End: cursor}
	if last := toks[len(toks)-1]; last.End == cursor {
		prev, cur = toks[:len(toks)-1], last
	}
	c := completer{live: live, start: cur.Start, end: wordEnd(input, cur, cursor)}

	if len(prev) == 0 {
		if cur.Quoted {
			return nil
		}
		return c.commands(cur.Text[1:], "/")
	}
	spec := lookup(prev[0].Text)
	if spec == nil {
		return nil
	}

	given := map[string]bool{}
	endFlags := false
	var awaiting *Flag // a value flag whose value is the next word
	var positional []string
	for _, t := range prev[1:] {
		if awaiting != nil {
			awaiting = nil
			continue
		}
		switch {
		case !endFlags && t.EndsFlags():
			endFlags = true
		case !endFlags && t.IsFlag():
			name, _, hasVal := t.flagParts()
			if f := spec.flag(name); f != nil {
				given[f.Name] = true
				if !hasVal && f.Kind != KindBool {
					awaiting = f
				}
			}
		default:
			positional = append(positional, t.Text)
		}
	}

	switch {
	case awaiting != nil:
		if cur.Quoted {
			return nil
		}
		return c.values(awaiting, cur.Text)
	case !endFlags && cur.bare >= 1 && cur.Text[0] == '-':
		if i := strings.IndexByte(cur.Text[:cur.bare], '='); i >= 2 {
			f := spec.flag(cur.Text[2:i])
			if f == nil || cur.Quoted {
				return nil
			}
			c.start = cur.Start + i + 1
			return c.values(f, cur.Text[i+1:])
		}
		return c.flags(spec, given, cur.Text)
	case cur.Quoted:
		return nil
	}
	out := c.positional(spec.argAt(len(positional)), positional, cur.Text)
	if cur.Text == "" && !endFlags {
		out = append(out, c.flags(spec, given, "")...)
	}
	return out
}

// wordEnd is where the word under the cursor ends in the whole input, so that completing in
// the middle of a word replaces all of it. An empty current word is a pure insertion.
func wordEnd(input string, cur Token, cursor int) int {
	if cur.Start == cursor {
		return cursor
	}
	toks, err := scan(input, true)
	if err != nil {
		return cursor
	}
	for _, t := range toks {
		if t.Start == cur.Start && t.End >= cursor {
			return t.End
		}
	}
	return cursor
}

type completer struct {
	live       LiveIDs
	start, end int
}

func (c *completer) add(out []Candidate, text, desc, prefix string) []Candidate {
	if !hasPrefixFold(text, prefix) {
		return out
	}
	for _, o := range out {
		if o.Text == text {
			return out
		}
	}
	return append(out, Candidate{Start: c.start, End: c.end, Text: text, Description: desc})
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// commands offers command names; lead is "/" for the command word and "" for /help's topic.
func (c *completer) commands(prefix, lead string) []Candidate {
	var out []Candidate
	for i := range table {
		out = c.add(out, lead+table[i].Name, table[i].Summary, lead+prefix)
	}
	return out
}

func (c *completer) flags(spec *Spec, given map[string]bool, prefix string) []Candidate {
	var out []Candidate
	for i := range spec.Flags {
		f := &spec.Flags[i]
		if given[f.Name] {
			continue
		}
		desc := f.Help
		if f.Required {
			desc += " (required)"
		}
		out = c.add(out, "--"+f.Name, desc, prefix)
	}
	return out
}

func (c *completer) positional(a *Arg, already []string, prefix string) []Candidate {
	if a == nil {
		return nil
	}
	switch a.Kind {
	case KindID:
		return c.ids(nil, a.IDKinds, already, prefix)
	case KindCommand:
		return c.commands(strings.TrimPrefix(prefix, "/"), "")
	}
	return nil
}

func (c *completer) values(f *Flag, prefix string) []Candidate {
	var out []Candidate
	switch f.Kind {
	case KindEnum:
		for _, v := range f.Values {
			out = c.add(out, v.Name, v.Help, prefix)
		}
	case KindBool:
		out = c.add(out, "true", "", prefix)
		out = c.add(out, "false", "", prefix)
	case KindID:
		out = c.ids(out, f.IDKinds, nil, prefix)
		for _, v := range f.Values {
			out = c.add(out, v.Name, v.Help, prefix)
		}
	case KindName:
		names := sortedNames(c.live.Agents, func(s string) bool {
			return len(s) <= maxAgentName && agentNameRE().MatchString(s)
		})
		if len(names) == 0 {
			names = valueNames(f.Values)
		}
		for _, n := range names {
			out = c.add(out, n, c.describe(n, f.Values), prefix)
		}
	case KindText:
		if !f.Runners {
			break
		}
		for _, n := range sortedNames(c.live.Runners, func(s string) bool { return runnerNameRE().MatchString(s) }) {
			out = c.add(out, n, cmp.Or(c.live.Labels[n], "runner"), prefix)
		}
		out = c.add(out, "any", "the runner with the most free slots", prefix)
	case KindList:
		// Complete the name after the last comma; the names before it are kept as typed.
		i := strings.LastIndexByte(prefix, ',')
		listed := strings.Split(prefix[:max(i, 0)], ",")
		c.start += i + 1
		names := sortedNames(c.live.Tools, func(s string) bool {
			return len(s) <= maxToolName && toolNameRE().MatchString(s)
		})
		for _, n := range names {
			if !slices.Contains(listed, n) {
				out = c.add(out, n, c.live.Labels[n], prefix[i+1:])
			}
		}
	}
	return out
}

// ids offers the live ids of the kinds, kind by kind in the given order and by number within a
// kind, skipping malformed ones (they would not parse) and those already named.
func (c *completer) ids(out []Candidate, kinds []IDKind, already []string, prefix string) []Candidate {
	for _, k := range kinds {
		type num struct {
			id string
			n  int64
		}
		var ids []num
		for _, id := range c.live.ids(k) {
			if kk, n, ok := ParseID(id); ok && kk == k && !slices.Contains(already, id) {
				ids = append(ids, num{id, n})
			}
		}
		slices.SortFunc(ids, func(a, b num) int { return cmp.Compare(a.n, b.n) })
		for _, x := range ids {
			desc := c.live.Labels[x.id]
			if desc == "" {
				desc = k.Noun()
			}
			out = c.add(out, x.id, desc, prefix)
		}
	}
	return out
}

func (c *completer) describe(name string, common []Value) string {
	if d := c.live.Labels[name]; d != "" {
		return d
	}
	for _, v := range common {
		if v.Name == name {
			return v.Help
		}
	}
	return ""
}

func sortedNames(names []string, ok func(string) bool) []string {
	var out []string
	for _, n := range names {
		if ok(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
