package protocols

import (
	"reflect"
	"strings"
	"testing"
)

const fencedMsg = "Done. Here is the capsule.\n\n```json\n" + `{"summary":"3 TODO markers in 2 files","confidence":0.8,
 "findings":[{"severity":"low","summary":"TODO in main.go","file_refs":["main.go:3"],"evidence_ids":["E1"]}],
 "patch_suggestions":[{"paths":["main.go"],"diff":"--- a/main.go\n+++ b/main.go\n"}]}` + "\n```\n"

const reportMsg = `I finished the change.

### Task Report
- Status: partial
- Objective Achieved: Added the retry helper; one caller left unconverted.
- Files Created: none
- Files Modified: /w/retry.go (new Retry func)
- Errors: none
- Validation: pass
- Validation Output: ok  ./...
- Scope Deviations: caller in cmd/x.go not converted

### Downstream Context
- Key Interfaces Introduced: func Retry(ctx, n, f) error in retry.go
- Warnings: none
`

func TestParseCapsule(t *testing.T) {
	c := ParseCapsule(fencedMsg, "analyzer")
	if c.Summary != "3 TODO markers in 2 files" || c.AgentName != "analyzer" || c.Confidence == nil || *c.Confidence != 0.8 ||
		len(c.Findings) != 1 || c.Findings[0].EvidenceIDs[0] != "E1" || len(c.PatchSuggestions) != 1 || len(c.ParseWarnings) != 0 {
		t.Errorf("fenced: %+v", c)
	}

	c = ParseCapsule(reportMsg, "builder")
	if c.Status != "partial" || c.Summary != "Added the retry helper; one caller left unconverted." {
		t.Errorf("report summary/status: %+v", c)
	}
	if len(c.Findings) != 1 || !strings.Contains(c.Findings[0].Summary, "cmd/x.go") {
		t.Errorf("report findings: %+v", c.Findings)
	}
	if c.Verification == nil || c.Verification.Status != "passed" || c.Verification.Output != "ok  ./..." {
		t.Errorf("report verification: %+v", c.Verification)
	}
	if !strings.HasPrefix(c.DownstreamContext, "- Key Interfaces Introduced: func Retry") || strings.Contains(c.TaskReport, "Downstream") {
		t.Errorf("sections: report=%q downstream=%q", c.TaskReport, c.DownstreamContext)
	}

	c = ParseCapsule("just some words\nand more", "x")
	if c.Summary != "just some words\nand more" || len(c.ParseWarnings) != 1 {
		t.Errorf("fallback: %+v", c)
	}

	// A broken JSON capsule falls through to the report, with a warning naming its line.
	c = ParseCapsule("```json\n{\"summary\": oops}\n```\n"+reportMsg, "x")
	if c.Status != "partial" || len(c.ParseWarnings) != 1 || !strings.Contains(c.ParseWarnings[0], "line 1") {
		t.Errorf("broken json: %+v", c)
	}
	// The last capsule wins; a JSON block without summary is not a capsule.
	c = ParseCapsule("```json\n{\"summary\":\"first\"}\n```\n```json\n{\"other\":1}\n```\n```capsule\n{\"summary\":\"last\"}\n```", "x")
	if c.Summary != "last" {
		t.Errorf("last capsule: %+v", c)
	}
	// A capsule of the wrong shape is reported, not trusted.
	c = ParseCapsule("```json\n{\"summary\":\"s\",\"findings\":\"not a list\"}\n```", "x")
	if c.Summary == "s" || len(c.ParseWarnings) < 2 {
		t.Errorf("wrong shape: %+v", c)
	}
}

// TestParseChunked: the same message fed whole, line by line and in 2-byte chunks gives one
// capsule.
func TestParseChunked(t *testing.T) {
	for _, msg := range []string{fencedMsg, reportMsg, "plain text", "```json\n{\"summary\":\"é✓\"}\n```"} {
		want := ParseCapsule(msg, "a")
		feeds := map[string][]string{"lines": strings.SplitAfter(msg, "\n")}
		var two []string
		for i := 0; i < len(msg); i += 2 {
			two = append(two, msg[i:min(i+2, len(msg))])
		}
		feeds["2-byte"] = two
		for name, chunks := range feeds {
			var b CapsuleBuffer
			for _, ch := range chunks {
				b.Write([]byte(ch))
			}
			if got := b.Capsule("a"); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %+v, want %+v", name, got, want)
			}
		}
	}
}

func FuzzParseCapsule(f *testing.F) {
	for _, s := range []string{fencedMsg, reportMsg, "```", "### Task Report\n- Validation:", "```json\n{\"summary\":1}\n```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseCapsule(s, "a")
		if c.AgentName == "" && !strings.Contains(s, "agent_name") {
			t.Fatalf("no agent name on %q", s)
		}
	})
}

func TestCheckCapsule(t *testing.T) {
	conf := 1.5
	c := Capsule{Summary: "ran at 2026-11-22T10:00:00Z", Confidence: &conf,
		Findings: []Finding{{Severity: "urgent", Summary: "no evidence"}, {Severity: "low", Summary: "ok", FileRefs: []string{"a.go:1"}}}}
	got := strings.Join(CheckCapsule(c), "\n")
	for _, want := range []string{"capsule /confidence", "capsule /findings/0/severity", "finding 1 (\"no evidence\") cites no evidence id or file",
		"summary contains a timestamp (2026-11-22T10:00"} {
		if !strings.Contains(got, want) {
			t.Errorf("CheckCapsule lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "finding 2") {
		t.Errorf("finding 2 has a file ref and must pass:\n%s", got)
	}
	if w := CheckCapsule(Capsule{Summary: "fine", Findings: []Finding{{Severity: "info", Summary: "x", EvidenceIDs: []string{"E1"}}}}); len(w) != 0 {
		t.Errorf("a good capsule got warnings: %v", w)
	}
	// Through the parser: a wrongly typed field is reported with its pointer.
	p := ParseCapsule("```json\n{\"summary\":\"s\",\"confidence\":\"high\"}\n```", "a")
	if !strings.Contains(strings.Join(p.ParseWarnings, "\n"), "/confidence") {
		t.Errorf("parser warnings %v", p.ParseWarnings)
	}
}
