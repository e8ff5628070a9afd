package acp

import (
	"fmt"
	"reflect"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/session"
)

// maxResult bounds the text of one tool result recorded from an agent's tool call.
const maxResult = 64 << 10

// toolCall is what the agent has said about one of its tool calls so far: updates replace
// the fields they carry.
type toolCall struct {
	id      sdk.ToolCallId
	title   string
	kind    sdk.ToolKind
	status  sdk.ToolCallStatus
	content []sdk.ToolCallContent
	locs    []sdk.ToolCallLocation
	input   any
	output  any
	ended   bool // its tool_result is recorded
	// announced is the call as its tool_call event recorded it.
	announced map[string]any
}

// fields are the parts of a tool_call, tool_call_update or permission request's tool call
// that are present (nil: not sent).
type fields struct {
	title   *string
	kind    *sdk.ToolKind
	status  *sdk.ToolCallStatus
	content []sdk.ToolCallContent
	locs    []sdk.ToolCallLocation
	input   any
	output  any
}

// toolName is the summit tool an ACP tool kind stands for, so the policy, the permission
// requests and the transcript speak of the same tools as for native subagents; kinds with no
// summit tool keep their ACP name (think, switch_mode, other).
func toolName(k sdk.ToolKind) string {
	switch k {
	case sdk.ToolKindRead:
		return agents.ToolReadFile
	case sdk.ToolKindSearch:
		return agents.ToolSearch
	case sdk.ToolKindEdit:
		return agents.ToolReplace
	case sdk.ToolKindDelete, sdk.ToolKindMove:
		return agents.ToolWriteFile
	case sdk.ToolKindExecute:
		return agents.ToolShell
	case sdk.ToolKindFetch:
		return agents.ToolWebFetch
	case "":
		return string(sdk.ToolKindOther)
	}
	return string(k)
}

// seeLocked merges what the agent said about call id: the first word about a call records its
// tool_call event; a completed or failed status records its tool_result. c.mu is held.
func (c *client) seeLocked(id sdk.ToolCallId, f fields) *toolCall {
	tc := c.calls[id]
	isNew := tc == nil
	if isNew {
		tc = &toolCall{id: id}
		c.calls[id] = tc
	}
	if f.title != nil {
		tc.title = *f.title
	}
	if f.kind != nil && *f.kind != "" {
		tc.kind = *f.kind
	}
	if f.status != nil && *f.status != "" {
		tc.status = *f.status
	}
	if f.content != nil {
		tc.content = f.content
	}
	if f.locs != nil {
		tc.locs = f.locs
	}
	if f.input != nil {
		tc.input = f.input
	}
	if f.output != nil {
		tc.output = f.output
	}
	if isNew {
		c.toolCalls++
		c.open = append(c.open, tc)
		tc.announced = tc.args()
		c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: string(id),
			Tool: toolName(tc.kind), Args: tc.announced})
	}
	if !tc.ended && (tc.status == sdk.ToolCallStatusCompleted || tc.status == sdk.ToolCallStatusFailed) {
		c.endLocked(tc, c.resultText(tc), tc.status == sdk.ToolCallStatusFailed)
	}
	return tc
}

// endLocked records the call's tool_result. c.mu is held.
func (c *client) endLocked(tc *toolCall, text string, isErr bool) {
	tc.ended = true
	for i, o := range c.open {
		if o == tc {
			c.open = append(c.open[:i], c.open[i+1:]...)
			break
		}
	}
	// An agent may announce a call before its input is known (Claude Code: "Preparing file…",
	// no input) and say the rest in updates: the result then carries the call as it ran, so the
	// recording has the real title and input.
	var final map[string]any
	if a := tc.args(); !reflect.DeepEqual(a, tc.announced) {
		final = a
	}
	c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptToolResult, CallID: string(tc.id),
		Tool: toolName(tc.kind), Args: final, Result: text, IsError: isErr})
}

// args is the tool call as recorded: its title, kind, locations (path or path:line) and raw
// input.
func (tc *toolCall) args() map[string]any {
	a := map[string]any{"title": tc.title}
	if tc.kind != "" {
		a["kind"] = string(tc.kind)
	}
	if len(tc.locs) > 0 {
		var locs []any
		for _, l := range tc.locs {
			if l.Line != nil {
				locs = append(locs, fmt.Sprintf("%s:%d", l.Path, *l.Line))
			} else {
				locs = append(locs, l.Path)
			}
		}
		a["locations"] = locs
	}
	if tc.input != nil {
		a["input"] = tc.input
	}
	return a
}

// resultText is the call's content as text: text blocks as they are, diffs as unified hunks,
// a terminal as its command and output; the raw output when there is no content. At most
// maxResult bytes. c.mu is held.
func (c *client) resultText(tc *toolCall) string {
	var parts []string
	for _, ct := range tc.content {
		switch {
		case ct.Content != nil:
			parts = append(parts, blockText(ct.Content.Content))
		case ct.Diff != nil:
			parts = append(parts, diffText(ct.Diff.Path, ct.Diff.OldText, ct.Diff.NewText))
		case ct.Terminal != nil:
			if t := c.terms[ct.Terminal.TerminalId]; t != nil {
				parts = append(parts, t.transcript())
			} else {
				parts = append(parts, "[terminal "+ct.Terminal.TerminalId+"]")
			}
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" && tc.output != nil {
		text = compact(tc.output, maxResult)
	}
	if len(text) > maxResult {
		cut := maxResult
		for cut > 0 && cut > maxResult-4 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[... cut: %d bytes total]", len(text))
	}
	return text
}

// diffText shows an edit as one unified hunk: the lines between the common head and tail,
// old then new (a new file: every line added). Linear in the file's size.
func diffText(path string, oldText *string, newText string) string {
	var b strings.Builder
	if oldText == nil {
		fmt.Fprintf(&b, "--- /dev/null\n+++ %s\n", path)
		for _, l := range splitLines(newText) {
			b.WriteString("+" + l + "\n")
		}
		return strings.TrimRight(b.String(), "\n")
	}
	o, n := splitLines(*oldText), splitLines(newText)
	head := 0
	for head < len(o) && head < len(n) && o[head] == n[head] {
		head++
	}
	tailN := 0
	for tailN < len(o)-head && tailN < len(n)-head && o[len(o)-1-tailN] == n[len(n)-1-tailN] {
		tailN++
	}
	fmt.Fprintf(&b, "--- %s\n+++ %s\n@@ -%d,%d +%d,%d @@\n", path, path, head+1, len(o)-head-tailN, head+1, len(n)-head-tailN)
	for _, l := range o[head : len(o)-tailN] {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range n[head : len(n)-tailN] {
		b.WriteString("+" + l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
