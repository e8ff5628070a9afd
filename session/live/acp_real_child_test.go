package live

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/imports"
	"github.com/summit-dev/summit/session/record"
)

// realClaudeChildTape has Claude Code 0.101.0 hand a piece of work to a subagent of its own
// with its Agent tool (in the foreground): the subagent, a child session over ACP, writes
// child.txt with its Write tool and reports; the parent then ends with a capsule.
const realClaudeChildTape = `
tapes:
  - name: claude-title
    match: {agent: summit-fast}
    steps:
      - say: '{"title": "Helper writes a file"}'
  - name: claude-parent
    match: {agent: summit-main, task: "(?s)# Task\\s+have a helper write child\\.txt"}
    steps:
      - say: "Asking a helper."
      - tool: Agent
        args: {description: "Write child file", prompt: "CHILD-TASK: write child.txt saying hi", subagent_type: "general-purpose", run_in_background: false}
      - capsule: {summary: "a helper wrote child.txt", confidence: 0.9}
  - name: claude-child
    match: {agent: summit-main, task: "CHILD-TASK: write child"}
    steps:
      - say: "Writing child.txt."
      - tool: Write
        args: {file_path: "WORKTREE/child.txt", content: "hi from the child\n"}
      - say: "child.txt is written."
`

// Claude Code's own subagent is a child in summit's tree: announced over ACP as a child
// session, its transcript and its write recorded on it, its report on the parent, and it
// stops (success) before its parent; the write is the parent's change.
func TestACPRealClaudeCodeChild(t *testing.T) {
	bin := realClaude(t)
	c := newRealCase(t)
	srv, served, home, key := startRealClaude(t, c, bin, realClaudeChildTape)

	o := c.live(nil, "/delegate have a helper write child.txt --agent-type claude-real", "/wait sa-1")
	checkSeq(t, o.events)
	tree := o.state.Tree()
	if len(tree) != 2 || tree[1].Parent != "sa-1" || tree[1].Depth != 1 {
		o.dumpSubagents(t)
		t.Fatalf("tree: %d nodes", len(tree))
	}
	child := tree[1].Subagent
	if child.AgentSessionID == "" || !strings.HasPrefix(child.AgentType, "claude-real/") || child.Outcome != session.OutcomeSuccess {
		o.dumpSubagents(t)
		t.Fatalf("child %s: type %q, agent session %q, outcome %q", child.ID, child.AgentType, child.AgentSessionID, child.Outcome)
	}
	tok := func(id string) string {
		var b strings.Builder
		for _, e := range o.transcript(id, session.TranscriptToken) {
			b.WriteString(e.Text)
		}
		return b.String()
	}
	if got := tok(child.ID); !strings.Contains(got, "Writing child.txt.") || !strings.Contains(got, "child.txt is written.") {
		t.Errorf("the child's text: %q", got)
	}
	if got := tok("sa-1"); strings.Contains(got, "Writing child.txt.") {
		t.Errorf("the child's text reached its parent: %q", got)
	}
	if res := o.transcript(child.ID, session.TranscriptToolResult); len(res) != 1 || res[0].Tool != "replace" || !strings.Contains(res[0].Result, "+hi from the child") {
		t.Errorf("the child's calls: %+v", res)
	}
	if res := o.transcript("sa-1", session.TranscriptToolResult); len(res) != 0 {
		t.Errorf("the child's call reached its parent: %+v", res)
	}
	msgs := ""
	for _, e := range o.transcript(child.ID, session.TranscriptMessage) {
		msgs += e.Text + "\n"
	}
	if !strings.Contains(msgs, "CHILD-TASK: write child.txt saying hi") {
		t.Errorf("the child's task is not in its transcript: %q", msgs)
	}
	if st := o.stop(t, "sa-1"); st.Outcome != session.OutcomeSuccess || st.Capsule == nil || st.Capsule.Summary != "a helper wrote child.txt" {
		o.dumpSubagents(t)
		t.Fatalf("the parent's stop: %+v", st)
	}
	stopSeq := map[string]uint64{}
	for _, e := range o.events {
		if e.Type == session.TypeSubagentStop {
			stopSeq[e.SubagentID] = e.Seq
		}
	}
	if stopSeq[child.ID] == 0 || stopSeq[child.ID] > stopSeq["sa-1"] {
		t.Errorf("the child stopped at %d, its parent at %d", stopSeq[child.ID], stopSeq["sa-1"])
	}
	checkRealEnd(t, c, o, []string{"child.txt added"}, "CLAUDE_CONFIG_DIR="+home, srv.Close, key, home)
	checkServed(t, served(), "tape claude-parent, turn 2", "tape claude-child, turn 2")
	// The session files this real Claude Code wrote (its main session and its subagent's)
	// import as a summit recording whose tree has the same shape: the main agent with the one
	// subagent under it, which wrote child.txt with its own tool.
	checkRealImport(t, filepath.Join(home, "projects"), 1, "child.txt")
}

// checkRealImport imports the session files a real agent wrote under dir. Every session there
// must import and replay; the one whose tool calls name mention (a child's, when children > 0;
// else the main agent's) must have the main agent as sa-1 and children subagents directly
// under it.
func checkRealImport(t *testing.T, dir string, children int, mention string) {
	t.Helper()
	units, errs := imports.Plan([]string{dir}, imports.Auto)
	if len(errs) > 0 || len(units) == 0 {
		t.Fatalf("the agent's session files under %s: %d sessions, errors %v", dir, len(units), errs)
	}
	found := false
	for _, u := range units {
		res, err := imports.Import(u, t.TempDir(), imports.Options{})
		if err != nil {
			t.Fatalf("import of the real agent's session %s: %v", u.Path, err)
		}
		st, _, err := record.LoadFile(res.Path, record.ReadOptions{})
		if err != nil {
			t.Fatalf("the recording imported from %s does not replay: %v", u.Path, err)
		}
		tree := st.Tree()
		if len(tree) == 0 {
			continue
		}
		mentions := false
		for _, sa := range tree[min(1, children):] {
			for i := range sa.Transcript.Len() {
				if it := sa.Transcript.Item(i); it.Kind == session.TranscriptToolCall && strings.Contains(fmt.Sprint(it.Args), mention) {
					mentions = true
				}
			}
		}
		if !mentions {
			continue
		}
		found = true
		under := 0
		for _, n := range tree[1:] {
			if n.Parent == "sa-1" && n.Depth == 1 {
				under++
			}
		}
		if tree[0].ID != "sa-1" || under != children || len(tree) != children+1 {
			for _, n := range tree {
				t.Logf("%s parent %q depth %d type %s", n.ID, n.Parent, n.Depth, n.AgentType)
			}
			t.Fatalf("the tree imported from %s has %d nodes, %d under sa-1; want %d children", u.Path, len(tree), under, children)
		}
	}
	if !found {
		t.Errorf("no imported session under %s has a tool call naming %s", dir, mention)
	}
}
