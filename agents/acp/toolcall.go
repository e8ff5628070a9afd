package acp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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
	// ran is the command the agent ran itself and reported in the call's _meta, when it did.
	ran   *agentRun
	ended bool // its tool_result is recorded
	// announced is the call as its tool_call event recorded it.
	announced map[string]any
	// mcp is the call's MCP tool as mcp__server__tool, when it is one (see mcpTool).
	mcp string
}

// tool is the summit tool the call is shown, decided and asked as: an MCP tool's qualified
// name, else the tool of its kind.
func (tc *toolCall) tool() string {
	if tc.mcp != "" {
		return tc.mcp
	}
	return toolName(tc.kind)
}

// mcpName is an MCP tool's name as each agent shows it: Claude Code's mcp__server__tool
// (its title, and _meta.claudeCode.toolName), Codex's mcp.server.tool (codex-acp's title, kind
// execute); the server part is a server name (provider.MCPServerName's characters).
var mcpName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:mcp__([A-Za-z0-9_-]+?)__|mcp\.([A-Za-z0-9_-]+)\.)([A-Za-z0-9_.-]+)$`)
})

// mcpTool is the mcp__server__tool name of a call whose title, _meta or id names an MCP tool,
// "" for any other call: an agent reports its MCP calls with a kind (other, execute) that
// would make them, in summit's policy and its "allow for sa-N", the same tool as every other
// call of that kind. servers are the MCP servers summit gave the agent (Config.MCP).
func mcpTool(id sdk.ToolCallId, title string, meta map[string]any, servers []string) string {
	cc, _ := meta["claudeCode"].(map[string]any)
	for _, s := range []string{fmt.Sprint(cc["toolName"]), strings.TrimSpace(title)} {
		if m := mcpName().FindStringSubmatch(s); m != nil {
			return "mcp__" + m[1] + m[2] + "__" + m[3]
		}
	}
	return geminiMCPTool(string(id), servers)
}

// geminiMCPTool reads an MCP tool from Gemini CLI's toolCallId. Gemini CLI (0.61.0) sends an
// MCP call with kind other and its invocation's description as the title; only the id names
// the tool: the core's Turn.handlePendingFunctionCall makes every call id
// `${name}__${rawId}` (rawId the model's id, else `${name}_${Date.now()}_${n}` or
// `synth_…`; bundle/chunk-JDPZ4CE3.js), the ACP session's runTool sends it as the
// toolCallId (bundle/gemini-3HFX2LNT.js), and an MCP tool's name is
// generateValidName(`${server}_${tool}`): mcp_ prefixed, characters outside [A-Za-z0-9_.:-]
// replaced by _ (DiscoveredMCPTool in chunk-JDPZ4CE3.js). The server is matched against the
// servers summit gave the agent, longest first, since a server name may hold _; an id of a
// server summit does not know (one from the agent's own settings) is split as Gemini CLI
// itself splits it (parseMcpToolName: the server up to the first _). "" when the id is not
// an MCP tool's.
func geminiMCPTool(id string, servers []string) string {
	if !strings.HasPrefix(id, "mcp_") {
		return ""
	}
	known := slices.Clone(servers)
	slices.SortFunc(known, func(a, b string) int { return len(b) - len(a) })
	for _, srv := range known {
		prefix := geminiValidName(srv + "_")
		if rest, ok := strings.CutPrefix(id, prefix); ok {
			if tool := geminiCallTool(prefix, rest); tool != "" {
				return "mcp__" + srv + "__" + tool
			}
		}
	}
	rest := id[len("mcp_"):]
	srv, _, ok := strings.Cut(rest, "_")
	if !ok || srv == "" {
		return ""
	}
	if tool := geminiCallTool("mcp_"+srv+"_", rest[len(srv)+1:]); tool != "" {
		return "mcp__" + srv + "__" + tool
	}
	return ""
}

// geminiCallTool is the tool part of rest, what follows an MCP tool name's server prefix in
// a Gemini CLI call id: up to the "__" that separates the name from its raw id. A tool name
// may hold "__" itself, so the separator preferred is the one after which the raw id repeats
// the name (`${name}_${Date.now()}_${n}`, the id Gemini CLI makes when the model gives none).
func geminiCallTool(prefix, rest string) string {
	first := -1
	for i := 0; i+2 <= len(rest); i++ {
		if rest[i] != '_' || rest[i+1] != '_' || i == 0 {
			continue
		}
		if first < 0 {
			first = i
		}
		if strings.HasPrefix(rest[i+2:], prefix+rest[:i]+"_") {
			return rest[:i]
		}
	}
	if first < 0 {
		return ""
	}
	return rest[:first]
}

// geminiValidName is Gemini CLI's generateValidName for an MCP tool name (see geminiMCPTool),
// without its truncation of names over 63 characters.
func geminiValidName(s string) string {
	if !strings.HasPrefix(s, "mcp_") {
		s = "mcp_" + s
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || r == ':' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, s)
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
	meta    map[string]any
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
	tc.seeMeta(f.meta)
	if tc.mcp == "" {
		tc.mcp = mcpTool(id, tc.title, f.meta, c.mcpServers())
	}
	if isNew {
		c.toolCalls++
		c.open = append(c.open, tc)
		tc.announced = tc.args()
		c.emitLocked(session.TranscriptEvent{EventType: session.TranscriptToolCall, CallID: string(id),
			Tool: tc.tool(), Args: tc.announced})
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
		Tool: tc.tool(), Args: final, Result: text, IsError: isErr})
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
// a terminal as its command and output (summit's own terminal, or the one the agent ran and
// reported in _meta); the raw output when there is no content. At most maxResult bytes.
// c.mu is held.
func (c *client) resultText(tc *toolCall) string {
	var parts []string
	ranShown := false
	for _, ct := range tc.content {
		switch {
		case ct.Content != nil:
			parts = append(parts, blockText(ct.Content.Content))
		case ct.Diff != nil:
			parts = append(parts, diffText(ct.Diff.Path, ct.Diff.OldText, ct.Diff.NewText))
		case ct.Terminal != nil:
			switch t := c.terms[ct.Terminal.TerminalId]; {
			case t != nil:
				parts = append(parts, t.transcript())
			case tc.ran != nil && !ranShown:
				parts = append(parts, tc.ran.transcript(tc.command(), exitCodeOf(tc.output)))
				ranShown = true
			default:
				parts = append(parts, "[terminal "+ct.Terminal.TerminalId+"]")
			}
		}
	}
	if !ranShown && tc.ran != nil && (tc.ran.total > 0 || tc.ran.exited) {
		// A command with no terminal in the content (codex-acp's read, search and list
		// commands): its output still came in _meta, its exit code in rawOutput.
		parts = append(parts, tc.ran.transcript("", exitCodeOf(tc.output)))
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

// agentRun is a command the agent ran in its own sandbox rather than in a terminal summit
// created: it reports the command's output and exit in the tool call's _meta, the convention
// Zed set and ACP adapters follow (codex-acp 2.6.0 for every shell command; claude-agent-acp
// when a client declares _meta.terminal_output):
//
//	terminal_info          {terminal_id, cwd}: the call shows a terminal of that id (its content
//	                       has {type: terminal, terminalId})
//	terminal_output_delta  {terminal_id, data}: output to append, plain text (codex-acp's
//	                       default for a client that declares nothing)
//	terminal_output        {terminal_id, data}: the same, under Zed's name
//	terminal_exit          {terminal_id, exit_code, signal}: how it ended (either may be null)
//
// Only the first maxResult bytes of the output are kept; total counts them all.
type agentRun struct {
	out    []byte
	total  int64
	exited bool
	code   *int
	signal *string
}

// seeMeta gathers what a tool call's _meta says about a command the agent ran itself.
func (tc *toolCall) seeMeta(meta map[string]any) {
	info, _ := meta["terminal_info"].(map[string]any)
	exit, _ := meta["terminal_exit"].(map[string]any)
	chunk, _ := meta["terminal_output_delta"].(map[string]any)
	if chunk == nil {
		chunk, _ = meta["terminal_output"].(map[string]any)
	}
	if info == nil && exit == nil && chunk == nil {
		return
	}
	r := tc.ran
	if r == nil {
		r = &agentRun{}
		tc.ran = r
	}
	if data, ok := chunk["data"].(string); ok && data != "" {
		r.total += int64(len(data))
		if room := maxResult - len(r.out); room > 0 {
			r.out = append(r.out, data[:min(room, len(data))]...)
		}
	}
	if exit != nil {
		r.exited = true
		if n, ok := number(exit["exit_code"]); ok {
			r.code = &n
		}
		if s, ok := exit["signal"].(string); ok && s != "" {
			r.signal = &s
		}
	}
}

// transcript is the command as a tool result shows it, as summit's own terminals are shown:
// "$ " and the command (when known), the output, and how it ended when not with exit code 0.
// rawCode is the exit code the call's rawOutput gave, for a command whose _meta had none.
func (r *agentRun) transcript(command string, rawCode *int) string {
	var b strings.Builder
	if command != "" {
		b.WriteString("$ " + command + "\n")
	}
	// Room for the command line and the notes after the output, so that cutting the whole
	// result to maxResult never loses how the command ended.
	budget := max(maxResult-b.Len()-200, 0)
	out := string(r.out)
	if len(out) > budget || r.total > int64(len(out)) {
		cut := min(len(out), budget)
		for i := 0; i < utf8.UTFMax-1 && cut > 0 && cut < len(out) && !utf8.RuneStart(out[cut]); i++ {
			cut--
		}
		out = out[:cut] + fmt.Sprintf("\n[... cut: %d bytes of output, showing the first %d]", r.total, cut)
	}
	b.WriteString(strings.TrimRight(out, "\n"))
	code := r.code
	if code == nil {
		code = rawCode
	}
	switch {
	case r.signal != nil:
		b.WriteString("\n[signal " + *r.signal + "]")
	case code != nil && *code != 0:
		fmt.Fprintf(&b, "\n[exit code %d]", *code)
	}
	return b.String()
}

// command is the command line of a shell call: its raw input's command (a string, or a
// program and its arguments), else its title.
func (tc *toolCall) command() string {
	if m, ok := tc.input.(map[string]any); ok {
		switch v := m["command"].(type) {
		case string:
			return v
		case []any:
			var parts []string
			for _, x := range v {
				parts = append(parts, fmt.Sprint(x))
			}
			return strings.Join(parts, " ")
		}
	}
	return tc.title
}

// exitCodeOf is the exit code a raw output reports ({"exit_code": N}, codex-acp's rawOutput of a
// command that shows no terminal); nil when it reports none.
func exitCodeOf(output any) *int {
	m, _ := output.(map[string]any)
	if n, ok := number(m["exit_code"]); ok {
		return &n
	}
	return nil
}

// number is a whole JSON number (as encoding/json decodes it into an any) as an int.
func number(v any) (int, bool) {
	n, ok := v.(float64)
	return int(n), ok && n == float64(int(n))
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

// codexACP is the agentInfo.name of the Codex adapter whose notices codexNotice knows.
const codexACP = "@agentclientprotocol/codex-acp"

// codexNotice reports a message chunk that is one of Codex's warnings rather than the agent's
// answer. codex-acp (2.6.0, an ACP v1 client that declares no notice capability) sends the
// model's text with the id of its message (messageId "msg_…"), and a warning as a chunk of its
// own with no messageId: "Warning: " and Codex's message ("Model metadata for `gpt-5.1-codex`
// not found…"), or "Config warning: " and the summary. Both marks are needed: other agents may
// send no message ids at all, and a model's answer may begin with "Warning: ". Codex's other
// chunks without an id (a failed turn's error, a slash command's reply) stay turn text.
func codexNotice(agent *sdk.Implementation, ch *sdk.SessionUpdateAgentMessageChunk) bool {
	if agent == nil || agent.Name != codexACP || ch.MessageId != nil && *ch.MessageId != "" {
		return false
	}
	t := blockText(ch.Content)
	return strings.HasPrefix(t, "Warning: ") || strings.HasPrefix(t, "Config warning: ")
}

// codexTurnError reads the message codex-acp sends when a model request failed and Codex will
// not retry (a 400 from the provider): the provider's error body, {"error": {"message": ...}},
// as the whole text of a message chunk.
func codexTurnError(agent *sdk.Implementation, text string) (string, bool) {
	if agent == nil || agent.Name != codexACP {
		return "", false
	}
	var body struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(text)), &body) != nil || body.Error == nil || body.Error.Message == "" {
		return "", false
	}
	return strings.TrimSpace(session.Sanitize(body.Error.Message)), true
}

// mcpServers are the names of the MCP servers summit gave the agent.
func (c *client) mcpServers() []string {
	if c.r == nil {
		return nil
	}
	names := make([]string, 0, len(c.r.c.MCP))
	for n := range c.r.c.MCP {
		names = append(names, n)
	}
	return names
}
