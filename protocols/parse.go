package protocols

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// ParseCapsule recovers a subagent's result capsule from its final message, in this order:
//
//  1. a fenced JSON capsule (```json … ``` or ```capsule … ```, an object with a "summary"
//     key); the last one that decodes wins, since the capsule closes the message;
//  2. the Markdown Handoff Report of seed 001: a "Task Report" section of "- Key: value" lines
//     and an optional "Downstream Context" section;
//  3. a fallback capsule whose summary is the message text, with a parse warning.
//
// It never fails: an unparseable message still yields a capsule. Report sections found next
// to a JSON capsule fill its TaskReport and DownstreamContext when it has none.
func ParseCapsule(text, agentName string) Capsule {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	report, downstream := section(text, "task report"), section(text, "downstream context")
	c, warns, ok := fencedCapsule(text)
	switch {
	case ok:
		if c.TaskReport == "" {
			c.TaskReport = report
		}
		if c.DownstreamContext == "" {
			c.DownstreamContext = downstream
		}
	case report != "":
		c = fromTaskReport(report)
		c.DownstreamContext = downstream
	default:
		c = Capsule{Summary: strings.TrimSpace(text)}
		warns = append(warns, "no fenced JSON capsule and no Task Report: the summary is the final message")
	}
	if c.AgentName == "" {
		c.AgentName = agentName
	}
	if ok {
		warns = append(warns, CheckCapsule(c)...)
	}
	c.ParseWarnings = append(c.ParseWarnings, warns...)
	return c
}

var fenceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?m)^[ \t]*```[ \t]*([A-Za-z0-9_-]*)[ \t]*$") })

// fencedCapsule finds fenced blocks tagged json or capsule (or untagged blocks that hold an
// object) and decodes the last one that is a capsule.
func fencedCapsule(text string) (Capsule, []string, bool) {
	var warns []string
	fences := fenceRE().FindAllStringSubmatchIndex(text, -1)
	var best *Capsule
	for i := 0; i+1 < len(fences); {
		open, close := fences[i], fences[i+1]
		tag := strings.ToLower(text[open[2]:open[3]])
		body := strings.TrimSpace(text[open[1]:close[0]])
		i += 2
		if tag != "json" && tag != "capsule" && !(tag == "" && strings.HasPrefix(body, "{")) {
			continue
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &probe); err != nil {
			if tag != "" {
				warns = append(warns, fmt.Sprintf("fenced %s block at line %d is not valid JSON: %v", tag, lineOf(text, open[0]), err))
			}
			continue
		}
		if _, has := probe["summary"]; !has {
			continue
		}
		var c Capsule
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			msgs := ValidateCapsuleJSON([]byte(body))
			if len(msgs) == 0 {
				msgs = []string{err.Error()}
			}
			warns = append(warns, fmt.Sprintf("capsule at line %d does not fit the contract: %s", lineOf(text, open[0]), strings.Join(msgs, "; ")))
			continue
		}
		best = &c
	}
	if best == nil {
		return Capsule{}, warns, false
	}
	return *best, warns, true
}

func lineOf(text string, off int) int { return strings.Count(text[:off], "\n") + 1 }

var headingRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*#{1,6}[ \t]+(.+?)[ \t#]*$`) })

// section returns the body of the first Markdown section whose heading is title (any level,
// case-insensitive, "Part 1 - Task Report" style prefixes allowed), up to the next heading of
// the same or a higher level.
func section(text, title string) string {
	hs := headingRE().FindAllStringSubmatchIndex(text, -1)
	for i, h := range hs {
		name := strings.ToLower(strings.TrimSpace(text[h[2]:h[3]]))
		name = strings.Trim(name, "*_ ")
		if name != title && !strings.HasSuffix(name, " "+title) && !strings.HasSuffix(name, "- "+title) {
			continue
		}
		level := strings.Count(strings.TrimSpace(text[h[0]:h[2]]), "#")
		end := len(text)
		for _, n := range hs[i+1:] {
			if strings.Count(strings.TrimSpace(text[n[0]:n[2]]), "#") <= level {
				end = n[0]
				break
			}
		}
		return strings.TrimSpace(text[h[1]:end])
	}
	return ""
}

// reportFields reads "- Key: value" lines (continuation lines join the previous value).
func reportFields(body string) (keys []string, vals map[string]string) {
	vals = map[string]string{}
	last := ""
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") {
			if k, v, ok := strings.Cut(t[2:], ":"); ok && len(k) < 40 {
				k = strings.ToLower(strings.Trim(strings.TrimSpace(k), "*_"))
				vals[k] = strings.TrimSpace(v)
				keys = append(keys, k)
				last = k
				continue
			}
		}
		if last != "" && t != "" {
			vals[last] += "\n" + t
		}
	}
	return keys, vals
}

func none(v string) bool {
	v = strings.ToLower(strings.Trim(strings.TrimSpace(v), ".[]\"'"))
	return v == "" || v == "none" || v == "n/a"
}

// fromTaskReport maps a seed-001 Task Report onto a capsule: the objective line is the
// summary, errors and scope deviations become findings, validation the verification block.
func fromTaskReport(report string) Capsule {
	_, f := reportFields(report)
	c := Capsule{TaskReport: report}
	switch s := strings.ToLower(f["status"]); {
	case strings.HasPrefix(s, "success"), strings.HasPrefix(s, "partial"), strings.HasPrefix(s, "failure"):
		c.Status = strings.Fields(s)[0]
	}
	c.Summary = f["objective achieved"]
	if c.Summary == "" {
		c.Summary = firstLine(report)
	}
	if v := f["errors"]; !none(v) {
		c.Findings = append(c.Findings, Finding{Severity: "high", Summary: "error: " + v})
	}
	if v := f["scope deviations"]; !none(v) {
		c.Findings = append(c.Findings, Finding{Severity: "medium", Summary: "scope deviation: " + v})
	}
	if v := strings.ToLower(f["validation"]); !none(v) {
		status := map[string]string{"pass": "passed", "fail": "failed", "skipped": "skipped"}[strings.Fields(v)[0]]
		if status == "" {
			status = v
		}
		c.Verification = &Verification{Status: status}
		if out := f["validation output"]; !none(out) {
			c.Verification.Output = out
		}
	}
	return c
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "-* ")); l != "" {
			return l
		}
	}
	return ""
}

// CapsuleBuffer collects a final message as it streams (token by token, in any chunking) and
// parses it once complete: the result never depends on how the text was split.
type CapsuleBuffer struct{ b strings.Builder }

// Write appends a chunk of the message.
func (p *CapsuleBuffer) Write(b []byte) (int, error) { return p.b.Write(b) }

// WriteString appends a chunk of the message.
func (p *CapsuleBuffer) WriteString(s string) (int, error) { return p.b.WriteString(s) }

// Capsule parses everything written so far.
func (p *CapsuleBuffer) Capsule(agentName string) Capsule {
	return ParseCapsule(p.b.String(), agentName)
}
