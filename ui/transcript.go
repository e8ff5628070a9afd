package ui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/protocols"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/render"
)

// tview is the scroll state of one node's transcript.
//
// Invariant: a frame renders only the visible rows. Following the tail walks items backwards
// from the last one; a scrolled view walks forwards from its anchor (item, line). Each
// item's wrapped lines are cached by (width, text length, toggles), so a settled item is
// wrapped once and the streaming item is rewrapped alone: a frame costs the same for a
// transcript of a thousand lines or a million.
type tview struct {
	follow     bool
	item, line int // anchor when not following: first visible item and its first line
	cache      map[int]wrapped
	height     int
}

type wrapped struct {
	key   string
	lines []string
	done  wrapDone // a message's finished lines (wrapGrow)
}

func (m *Model) view(id string) *tview {
	v := m.views[id]
	if v == nil {
		v = &tview{follow: true, cache: map[int]wrapped{}}
		m.views[id] = v
	}
	return v
}

// block is a source of lines for a transcript: either a transcript item or a generated
// block (the capsule, the session log, a convergence).
type source interface {
	count() int
	lines(i, width int) []string
}

// itemSource draws a subagent's transcript, then its capsule.
type itemSource struct {
	m  *Model
	sa *session.Subagent
	v  *tview
}

func (s itemSource) count() int {
	n := s.sa.Transcript.Len()
	if s.sa.Capsule != nil || s.sa.Stopped {
		n++
	}
	if s.sa.Changes != nil {
		n++
	}
	return n
}

func (s itemSource) lines(i, width int) []string {
	t := s.sa.Transcript
	if s.sa.Changes != nil && i == s.count()-1 {
		key := fmt.Sprintf("changes/%d/%v/%p", width, s.m.expanded, s.sa.Changes)
		if c, ok := s.v.cache[i]; ok && c.key == key {
			return c.lines
		}
		ls := s.m.changesLines(s.sa, width)
		s.v.cache[i] = wrapped{key: key, lines: ls}
		return ls
	}
	if i >= t.Len() {
		// A stopped subagent's capsule and totals no longer change: build them once per width.
		key := fmt.Sprintf("cap/%d/%p/%s/%p", width, s.sa.Capsule, s.sa.Outcome, s.sa.Verify) // a VerifyRan replaces Verify
		if c, ok := s.v.cache[i]; ok && c.key == key {
			return c.lines
		}
		ls := s.m.capsuleLines(s.sa, width)
		s.v.cache[i] = wrapped{key: key, lines: ls}
		return ls
	}
	it := t.Item(i)
	// A message is settled once something follows it or its subagent stopped: it is drawn as
	// Markdown (glamour, cached per text and width); while it streams it is wrapped as plain
	// text, its finished lines kept (wrapGrow), so a token costs no Markdown render.
	settled := it.Kind == session.TranscriptToken && (i < t.Len()-1 || s.sa.Stopped)
	if it.Kind != session.TranscriptToken || s.sa.Capsule == nil {
		// Lines already wrapped for a text of this length: the text need not be read (a
		// replay's lives in the recording).
		key := fmt.Sprintf("%d/%d/%v/%v/%v", width, t.TextLen(i), s.m.thinking, s.m.expanded, settled)
		if c, ok := s.v.cache[i]; ok && c.key == key {
			return c.lines
		}
	}
	text := t.Text(i)
	if it.Kind == session.TranscriptToken && s.sa.Capsule != nil && s.lastText(i) {
		// The final message's fenced capsule is drawn below as Markdown: not twice.
		if k := strings.LastIndex(text, "```json"); k >= 0 {
			text = strings.TrimRight(text[:k], " \n")
		}
	}
	key := fmt.Sprintf("%d/%d/%v/%v/%v", width, len(text), s.m.thinking, s.m.expanded, settled)
	if c, ok := s.v.cache[i]; ok && c.key == key {
		return c.lines
	}
	var ls []string
	var done wrapDone
	switch {
	case settled && strings.TrimSpace(text) == "":
		ls = nil
	case settled:
		ls = s.m.md.render("", text, width)
	case it.Kind == session.TranscriptToken:
		// A streaming message grows at its end: its finished lines are not wrapped again.
		ls, done = wrapGrow(s.v.cache[i].done, text, width)
	default:
		ls = s.m.itemLines(t, i, it, text, width)
	}
	if len(ls) == 1 && ls[0] == "" && it.Kind == session.TranscriptToken {
		ls = nil // the message was only its capsule
	}
	s.v.cache[i] = wrapped{key: key, lines: ls, done: done}
	return ls
}

// wrapDone is the part of a message before its last line break, wrapped: the lines that
// stay as they are while the message streams on.
type wrapDone struct {
	width int
	text  string // the message up to (not including) that line break
	lines []string
}

// wrapGrow is wrap(text, width) for a message that grew from the one done was made from:
// only the lines after done's are wrapped.
func wrapGrow(done wrapDone, text string, width int) ([]string, wrapDone) {
	text = strings.TrimRight(text, "\n")
	p := strings.LastIndexByte(text, '\n')
	if p < 0 {
		return wrap(text, width), wrapDone{}
	}
	n := len(done.text)
	if done.lines == nil || done.width != width || n > p || text[:n] != done.text || (n < p && text[n] != '\n') {
		done = wrapDone{width: width, lines: wrapSplit(text[:p], width)}
	} else if n < p {
		done.lines = append(done.lines[:len(done.lines):len(done.lines)], wrapSplit(text[n+1:p], width)...)
	}
	done.text = text[:p]
	out := make([]string, 0, len(done.lines)+2)
	out = append(out, done.lines...)
	return append(out, wrapSplit(text[p+1:], width)...), done
}

// lastText reports whether item i is the last assistant text of the transcript. Only a
// stopped subagent's is looked for, from the end, where it is.
func (s itemSource) lastText(i int) bool {
	t := s.sa.Transcript
	for j := t.Len() - 1; j >= i; j-- {
		if t.Item(j).Kind == session.TranscriptToken {
			return j == i
		}
	}
	return false
}

// wrap sanitises text (terminal controls shown escaped) and wraps it to width; wide runes
// and long words are broken safely. Trailing line breaks are dropped.
func wrap(text string, width int) []string {
	return wrapSplit(strings.TrimRight(text, "\n"), width)
}

// wrapSplit is wrap without dropping trailing line breaks: every line of text, wrapped.
func wrapSplit(text string, width int) []string {
	text = strings.ReplaceAll(session.Sanitize(text), "\t", "    ")
	if width < 4 {
		width = 4
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if w, ok := plainWidth(l); ok && w <= width {
			out = append(out, l) // what ansi.Wrap gives for a plain line that fits, without segmenting it
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(l, width, ""), "\n")...)
	}
	return out
}

func (m *Model) styled(ls []string, st func(...string) string) []string {
	for i, l := range ls {
		ls[i] = st(l)
	}
	return ls
}

func (m *Model) itemLines(t *session.Transcript, i int, it session.Item, text string, width int) []string {
	switch it.Kind {
	case session.TranscriptStart:
		return m.styled(wrap("» "+text, width), m.sty.dim.Render)
	case session.TranscriptThinking:
		if !m.thinking {
			return m.styled([]string{fmt.Sprintf("· thinking (%s; t shows it)", session.Plural(len(text), "char"))}, m.sty.dim.Render)
		}
		return m.styled(wrap("· "+text, width), m.sty.dim.Render)
	case session.TranscriptToolCall:
		args := compactArgs(it.Args)
		result, isErr := "", false
		for j := i + 1; j < t.Len(); j++ {
			r := t.Item(j)
			if r.Kind == session.TranscriptToolResult && r.CallID == it.CallID {
				result, isErr = t.Text(j), r.IsError
				break
			}
		}
		if !m.expanded {
			sum := "running…"
			switch {
			case isErr:
				sum = "error: " + firstLine(result)
			case result != "":
				sum = session.Plural(strings.Count(strings.TrimRight(result, "\n"), "\n")+1, "line")
			}
			line := ansi.Truncate(session.Sanitize("▸ "+it.Tool+" "+args+" → "+sum), width, "…")
			if isErr {
				return []string{m.sty.bad.Render(line)}
			}
			return []string{m.sty.tool.Render(line)}
		}
		out := m.styled(wrap("▾ "+it.Tool+" "+prettyArgs(it.Args), width), m.sty.tool.Render)
		if result != "" {
			st := m.sty.dim.Render
			if isErr {
				st = m.sty.bad.Render
			}
			out = append(out, m.styled(wrap(indent(result, "  "), width), st)...)
		}
		return out
	case session.TranscriptToolResult:
		return nil // shown with its call
	case session.TranscriptPolicyDenied:
		return m.styled(wrap("✗ denied "+it.Tool+": "+text, width), m.sty.bad.Render)
	case session.TranscriptError:
		return m.styled(wrap("✗ "+text, width), m.sty.bad.Render)
	case session.ItemUser:
		return m.styled(wrap("you: "+text, width), m.sty.user.Render)
	}
	return wrap(text, width)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pre)
}

func compactArgs(a map[string]any) string {
	if len(a) == 0 {
		return ""
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		s := jsonText(a[k], "")
		if str, ok := a[k].(string); ok {
			s = str
		}
		parts = append(parts, k+"="+strings.ReplaceAll(s, "\n", "⏎"))
	}
	return strings.Join(parts, " ")
}

func prettyArgs(a map[string]any) string {
	if len(a) == 0 {
		return ""
	}
	return "\n  " + strings.ReplaceAll(jsonText(a, "  "), "\n", "\n  ")
}

// jsonText is v as JSON the way it was written (no \u003e).
func jsonText(v any, indent string) string { return render.JSONText(v, indent) }

// capsuleLines renders the final capsule as Markdown (md.go), cached per subagent and width
// (it never runs on the frame path of a streaming item).
func (m *Model) capsuleLines(sa *session.Subagent, width int) []string {
	head := fmt.Sprintf("■ %s · %s · %s tok · %s", sa.Outcome, render.FormatDuration(sa.Elapsed(m.st.LastTS)),
		render.FormatTokens(sa), session.Plural(sa.ToolCalls, "tool call"))
	out := []string{m.sty.bold.Render(ansi.Truncate(head, width, "…"))}
	if v := sa.Verify; v != nil { // summit's measurement, above the agent's own words
		paint := m.sty.ok.Render
		if !v.Passed() {
			paint = m.sty.bad.Render
		}
		out = append(out, m.styled(wrap(v.Measured(), width), paint)...)
	}
	if sa.Capsule == nil {
		return out
	}
	return append(out, m.md.render(sa.ID, capsuleMarkdown(sa.Capsule), width)...)
}

// changesLines is the transcript's last section for an isolated subagent: what it really
// changed, a line per file, and with the tool calls expanded (enter) each file's coloured diff.
func (m *Model) changesLines(sa *session.Subagent, width int) []string {
	ch := sa.Changes
	if ch.Error != "" {
		return m.styled(wrap("■ changes could not be read: "+ch.Error, width), m.sty.bad.Render)
	}
	head := "■ changes · " + render.ChangeStat(ch)
	if !m.expanded && len(ch.Files) > 0 {
		head += " · enter shows the diffs"
	}
	out := []string{m.sty.bold.Render(ansi.Truncate(head, width, "…"))}
	for _, f := range ch.Files {
		out = append(out, m.styled(wrap("  "+render.FileChangeLine(f), width), m.sty.tool.Render)...)
		if !m.expanded || f.Diff == "" {
			continue
		}
		out = append(out, m.diffBlock(f.Diff, width)...)
	}
	for _, o := range ch.Outside {
		out = append(out, m.sty.warn.Render(ansi.Truncate("  outside the workspace, not applied: "+session.Sanitize(o), width, "…")))
	}
	return out
}

func capsuleMarkdown(c *protocols.Capsule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", session.Sanitize(c.Summary))
	if c.Confidence != nil {
		fmt.Fprintf(&b, "confidence %.2f\n\n", *c.Confidence)
	}
	if c.Verification != nil { // the agent's word, never summit's measurement (VerifyRan)
		fmt.Fprintf(&b, "verification %s (the agent's own check)\n\n", session.Claimed(c.Verification))
	}
	for _, f := range c.Findings {
		fmt.Fprintf(&b, "- **%s** %s", orDash(session.Sanitize(f.Severity)), session.Sanitize(f.Summary))
		if len(f.FileRefs) > 0 {
			fmt.Fprintf(&b, " (`%s`)", session.Sanitize(strings.Join(f.FileRefs, "`, `")))
		}
		b.WriteString("\n")
	}
	for _, p := range c.PatchSuggestions {
		fmt.Fprintf(&b, "\n```diff\n%s\n```\n", strings.TrimRight(session.Sanitize(p.Diff), "\n"))
	}
	for _, n := range c.PolicyNotes {
		fmt.Fprintf(&b, "\n> %s\n", session.Sanitize(n))
	}
	if c.DownstreamContext != "" {
		fmt.Fprintf(&b, "\n%s\n", session.Sanitize(c.DownstreamContext))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// textSource is a generated block of lines (the session log, a convergence).
type textSource []string

func (t textSource) count() int                  { return len(t) }
func (t textSource) lines(i, width int) []string { return wrap(t[i], width) }

// logSource is the session's own transcript, formatted an item at a time so a frame costs
// the visible items only, however long the log.
type logSource struct{ m *Model }

func (l logSource) count() int { return len(l.m.st.Log) }

func (l logSource) lines(i, width int) []string { return wrap(l.m.logText(l.m.st.Log[i]), width) }

func (m *Model) logText(l session.LogItem) string {
	if l.Kind == "mirror" {
		// A monitored subagent's item, shown as it is in its own transcript.
		if sa := m.st.Subagent(l.SubagentID); sa != nil && l.Ref < sa.Transcript.Len() {
			it := sa.Transcript.Item(l.Ref)
			body := sa.Transcript.Text(l.Ref)
			if it.Kind == session.TranscriptToolCall {
				body = "▸ " + it.Tool + " " + compactArgs(it.Args)
			}
			return l.SubagentID + " ⇄ " + firstLine(body)
		}
	}
	text := l.Kind + ": " + l.Text
	if l.SubagentID != "" && l.Kind != "command" {
		text = l.SubagentID + " " + text
	}
	if l.Detail != "" {
		text += " — " + l.Detail
	}
	return text
}

// source returns what the selected node shows.
func (m *Model) source(id string) source {
	switch {
	case id == "":
		if len(m.st.Log) == 0 && m.o.Replay != nil {
			return textSource(m.replayEmpty())
		}
		if len(m.st.Log) == 0 {
			return textSource{"No events yet. Type /help, or /delegate \"a task\" --agent-type explore."}
		}
		return logSource{m}
	case m.st.Subagent(id) != nil:
		return itemSource{m: m, sa: m.st.Subagent(id), v: m.view(id)}
	case m.st.Convergence(id) != nil:
		return m.convergenceSource(m.st.Convergence(id))
	case m.st.Conflict(id) != nil:
		return m.conflictSource(m.st.Conflict(id))
	case isGroup(id):
		return m.groupSource(id)
	}
	return textSource{"(nothing selected)"}
}

// blockKind says how a generated block is drawn.
type blockKind int

const (
	blockPlain blockKind = iota
	blockMarkdown
	blockDiff
	blockHead
)

// blocksSource is a generated view (a convergence, a conflict): text blocks drawn plain, as
// Markdown (glamour, cached per text and width) or as a coloured diff.
type blocksSource struct {
	m     *Model
	texts []string
	kinds []blockKind
}

func (b *blocksSource) add(k blockKind, texts ...string) {
	for _, t := range texts {
		b.texts, b.kinds = append(b.texts, t), append(b.kinds, k)
	}
}

func (b *blocksSource) count() int { return len(b.texts) }

func (b *blocksSource) lines(i, width int) []string {
	switch b.kinds[i] {
	case blockMarkdown:
		return b.m.md.render("", b.texts[i], width)
	case blockDiff:
		return b.m.diffBlock(b.texts[i], width)
	case blockHead:
		return b.m.styled(wrap(b.texts[i], width), b.m.sty.bold.Render)
	}
	return wrap(b.texts[i], width)
}

// convergenceSource draws a convergence: its status and conflicts, its result (Markdown
// output drawn as Markdown), its DeltaBatch's operations and patches as coloured diffs.
func (m *Model) convergenceSource(cv *session.Convergence) source {
	out := &blocksSource{m: m}
	out.add(blockHead, fmt.Sprintf("%s · %s of %s · %s", cv.ID, cv.Strategy, strings.Join(cv.Members, ", "), render.ConvergenceStatus(m.st, cv)))
	out.add(blockPlain, fmt.Sprintf("resolution %s · output %s", cv.ConflictResolution, cv.OutputFormat))
	for _, cf := range cv.Conflicts {
		s := "waits for review (ctrl+o)"
		if r := cf.Resolution; r != nil {
			s = "resolved by " + r.Method + ": " + r.Choice
		}
		out.add(blockPlain, fmt.Sprintf("  %s %s · %s", cf.ID, conflictWhere(cf), s))
	}
	if cv.Result != "" {
		out.add(blockPlain, "")
		if cv.ResultFormat == commands.FormatMarkdown || cv.ResultFormat == "" && cv.OutputFormat == commands.FormatMarkdown {
			out.add(blockMarkdown, cv.Result)
		} else {
			out.add(blockPlain, cv.Result)
		}
	}
	if b := cv.Batch; b != nil {
		out.add(blockPlain, "", "DeltaBatch: "+b.Reasoning)
		for _, op := range b.Operations {
			out.add(blockPlain, fmt.Sprintf("  %s %s [%s] %s", op.Type, op.BulletID, op.Section, op.Content))
		}
		for _, p := range b.Patches {
			out.add(blockDiff, p.Diff)
		}
		if cv.Applied {
			out.add(blockPlain, "applied to "+strings.Join(cv.AppliedFiles, ", "))
		} else if cv.Status == session.ConvergenceDone {
			out.add(blockPlain, "/apply "+cv.ID+" writes it to the workspace")
		}
	}
	for _, n := range cv.Notes {
		out.add(blockPlain, "note: "+n)
	}
	return out
}

// conflictSource draws a conflict: each side with why it stands apart and its change as a
// coloured diff (a vote's or consensus's member: its result and whole change set), never a
// side's raw JSON.
func (m *Model) conflictSource(cf *session.Conflict) source {
	out := &blocksSource{m: m}
	out.add(blockHead, fmt.Sprintf("%s · %s", cf.ID, conflictWhere(cf)))
	if cf.ReviewReason != "" {
		out.add(blockPlain, "why a person decides: "+cf.ReviewReason)
	}
	for _, sd := range cf.Sides {
		out.add(blockPlain, "")
		out.add(blockHead, sideHeader(sd))
		out.add(blockDiff, sideText(sd))
	}
	if cf.Context != "" {
		out.add(blockHead, "current file:")
		out.add(blockPlain, cf.Context)
	}
	if r := cf.Resolution; r != nil {
		out.add(blockPlain, "resolved by "+r.Method+": "+r.Choice+" "+r.Note)
	} else {
		out.add(blockPlain, "ctrl+o opens the review (or enter on its row in the tree)")
	}
	return out
}

func sideHeader(sd session.ConflictSide) string {
	s := sd.SubagentID
	if sd.Confidence != nil {
		s += fmt.Sprintf(" · confidence %.2f", *sd.Confidence)
	} else {
		s += " · no confidence"
	}
	return s
}

func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsonText(v, "  ")
}

// renderTranscript draws the selected node's transcript in w×h.
func (m *Model) renderTranscript(w, h int) []string {
	src := m.source(m.sel)
	v := m.view(m.sel)
	v.height = h
	n := src.count()
	var out []string
	if v.follow || n == 0 {
		// Walk backwards from the tail until the pane is full.
		var rev [][]string
		got := 0
		for i := n - 1; i >= 0 && got < h; i-- {
			ls := src.lines(i, w)
			rev = append(rev, ls)
			got += len(ls)
		}
		for i := len(rev) - 1; i >= 0; i-- {
			out = append(out, rev[i]...)
		}
		if len(out) > h {
			out = out[len(out)-h:]
		}
	} else {
		v.item = min(v.item, max(0, n-1))
		for i := v.item; i < n && len(out) < h; i++ {
			ls := src.lines(i, w)
			if i == v.item {
				ls = ls[min(v.line, len(ls)):]
			}
			out = append(out, ls...)
		}
		if len(out) > h {
			out = out[:h]
		}
	}
	for i, l := range out {
		if m.search != "" {
			l = m.highlight(l, m.search)
		}
		out[i] = l + strings.Repeat(" ", max(0, w-textWidth(l)))
	}
	return out
}

// highlight marks every match of q in a rendered line (case-insensitive where lower-casing
// keeps byte offsets, else exact). A line with a match loses its other styling.
func (m *Model) highlight(l, q string) string {
	plain := ansi.Strip(l)
	hay, needle := strings.ToLower(plain), strings.ToLower(q)
	if len(hay) != len(plain) || len(needle) != len(q) {
		hay, needle = plain, q
	}
	if !strings.Contains(hay, needle) {
		return l
	}
	var b strings.Builder
	for {
		i := strings.Index(hay, needle)
		if i < 0 {
			b.WriteString(plain)
			return b.String()
		}
		b.WriteString(plain[:i])
		b.WriteString(m.sty.match.Render(plain[i : i+len(needle)]))
		plain, hay = plain[i+len(needle):], hay[i+len(needle):]
	}
}

// scroll moves the view by d lines (negative = up). Scrolling up leaves follow mode;
// scrolling down to the end resumes it.
func (v *tview) scroll(src source, width, d int) {
	n := src.count()
	if n == 0 {
		return
	}
	if v.follow {
		// Anchor at the current top of the tail view.
		need := v.height
		i := n - 1
		for ; i > 0; i-- {
			need -= len(src.lines(i, width))
			if need <= 0 {
				break
			}
		}
		v.item, v.line = i, max(0, -need)
		v.follow = false
	}
	for d < 0 {
		if v.line > 0 {
			v.line--
		} else if v.item > 0 {
			v.item--
			v.line = max(0, len(src.lines(v.item, width))-1)
		} else {
			break
		}
		d++
	}
	for d > 0 {
		if v.line+1 < len(src.lines(v.item, width)) {
			v.line++
		} else if v.item+1 < n {
			v.item, v.line = v.item+1, 0
		} else {
			break
		}
		d--
	}
	// At the end: follow again.
	rest := len(src.lines(v.item, width)) - v.line
	for i := v.item + 1; i < n && rest <= v.height; i++ {
		rest += len(src.lines(i, width))
	}
	if rest <= v.height {
		v.follow = true
	}
}

func (v *tview) page(m *Model, up bool) {
	d := max(1, v.height-2)
	if up {
		d = -d
	}
	v.scroll(m.source(m.sel), m.transcriptWidth(), d)
}

func (m *Model) transcriptKey(k tea.KeyPressMsg) tea.Cmd {
	v := m.view(m.sel)
	src := m.source(m.sel)
	w := m.transcriptWidth()
	switch k.String() {
	case "tab":
		m.cycleFocus()
	case "esc":
		m.focus = focusTree
		if m.search != "" {
			m.search = "" // the highlight goes with the search
			m.setNotice("", false)
		}
	case "up", "k":
		v.scroll(src, w, -1)
	case "down", "j":
		v.scroll(src, w, 1)
	case "pgup":
		v.page(m, true)
	case "pgdown", "space":
		v.page(m, false)
	case "G", "end":
		v.follow = true
	case "g", "home":
		v.follow, v.item, v.line = false, 0, 0
	case "enter":
		m.expanded = !m.expanded
	case "t":
		m.thinking = !m.thinking
	case "ctrl+f":
		m.searching, m.search = true, ""
		m.setNotice("search: ", false)
	case "n", "N":
		if m.search != "" {
			m.findMatch(map[string]int{"n": 1, "N": -1}[k.String()])
		}
	case "?":
		m.help, m.helpTop = true, 0
	}
	return nil
}

// searchKey edits the search query; enter finds it (the nearest match at or above the
// view's last line: following the tail, the latest) and leaves the typing, so n and N step.
func (m *Model) searchKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.searching, m.search = false, ""
		m.setNotice("", false)
	case "backspace":
		if r := []rune(m.search); len(r) > 0 {
			m.search = string(r[:len(r)-1])
		}
		m.setNotice("search: "+session.Sanitize(m.search), false)
	case "enter":
		m.searching = false
		m.findMatch(0)
	default:
		if k.Text != "" {
			m.search += k.Text
			m.setNotice("search: "+session.Sanitize(m.search), false)
		}
	}
	return nil
}

// hit is a line of the transcript that matches the search: its item and wrapped line.
type hit struct{ item, line int }

func (a hit) before(b hit) bool { return a.item < b.item || a.item == b.item && a.line < b.line }

// searchHits lists the lines of the selected transcript, as drawn at the pane's width, that
// hold the query (case-insensitive), in order. It reads the whole transcript: it runs on a
// key (enter, n, N), never on a frame.
func (m *Model) searchHits() []hit {
	src := m.source(m.sel)
	w := m.transcriptWidth()
	q := strings.ToLower(m.search)
	pre, _ := src.(itemSource)
	var out []hit
	for i, n := 0, src.count(); i < n; i++ {
		if pre.sa != nil && !pre.mayContain(i, q) {
			continue
		}
		for li, l := range src.lines(i, w) {
			if strings.Contains(strings.ToLower(ansi.Strip(l)), q) {
				out = append(out, hit{i, li})
			}
		}
	}
	return out
}

// mayContain reports whether item i's drawn lines may hold q (lower-cased): false only for
// a settled message whose text, with Markdown's emphasis and code marks taken out and its
// lines joined, does not hold it. A search then never renders the Markdown of every
// message of a long transcript, only of those that may match.
func (s itemSource) mayContain(i int, q string) bool {
	t := s.sa.Transcript
	if i >= t.Len() || t.Item(i).Kind != session.TranscriptToken || (i == t.Len()-1 && !s.sa.Stopped) {
		return true
	}
	norm := func(x string) string {
		x = strings.NewReplacer("*", "", "_", "", "`", "", "\n", " ", "\t", " ").Replace(strings.ToLower(x))
		return strings.Join(strings.Fields(x), " ")
	}
	return strings.Contains(norm(t.Text(i)), norm(q))
}

// top is the first line the view shows (the tail's, when following); bottom its last.
func (v *tview) top(src source, width int) hit {
	if !v.follow {
		return hit{v.item, v.line}
	}
	need := v.height
	i := src.count() - 1
	for ; i > 0; i-- {
		need -= len(src.lines(i, width))
		if need <= 0 {
			break
		}
	}
	return hit{max(0, i), max(0, -need)}
}

func (v *tview) bottom(src source, width int) hit {
	t := v.top(src, width)
	rest := v.height - 1
	for i := t.item; i < src.count(); i++ {
		n := len(src.lines(i, width))
		if i == t.item {
			n -= t.line
		}
		if rest < n {
			if i == t.item {
				return hit{i, t.line + rest}
			}
			return hit{i, rest}
		}
		rest -= n
	}
	return hit{src.count(), 0}
}

// findMatch moves the view to a match of the search and says which of how many it is:
// dir 0 is the first find (the last match at or above the view's last line, else the
// first), 1 the next match below the view's top (n), -1 the previous one above it (N).
// Past the last or first match it wraps around, and says so.
func (m *Model) findMatch(dir int) {
	if m.search == "" {
		return
	}
	q := session.Sanitize(m.search)
	hits := m.searchHits()
	if len(hits) == 0 {
		m.setNotice("search: "+q+" — not found", true)
		return
	}
	src := m.source(m.sel)
	v := m.view(m.sel)
	w := m.transcriptWidth()
	at, wrapped := -1, ""
	switch dir {
	case 0:
		b := v.bottom(src, w)
		for i, h := range hits {
			if !b.before(h) {
				at = i
			}
		}
		if at < 0 {
			at = 0
		}
	case 1:
		t := v.top(src, w)
		for i, h := range hits {
			if t.before(h) {
				at = i
				break
			}
		}
		if at < 0 {
			at, wrapped = 0, " · wrapped to the top"
		}
	default:
		t := v.top(src, w)
		for i, h := range hits {
			if h.before(t) {
				at = i
			}
		}
		if at < 0 {
			at, wrapped = len(hits)-1, " · wrapped to the bottom"
		}
	}
	h := hits[at]
	v.follow, v.item, v.line = false, h.item, h.line
	m.setNotice(fmt.Sprintf("search: %s — %d of %d%s · n next · N previous · esc clears", q, at+1, len(hits), wrapped), false)
}
