package protocols

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed docs/*.md
var docs embed.FS

// Doc returns an embedded protocol document by file name (agent-base-protocol.md,
// filesystem-safety-protocol.md).
func Doc(name string) string {
	b, err := docs.ReadFile("docs/" + name)
	if err != nil {
		panic("protocols: missing embedded document " + name) // a build defect, not input
	}
	return string(b)
}

// PromptInput is everything a delegation prompt is assembled from. The caller (the runtime)
// resolves agents, policy and context; this package only lays the text out.
type PromptInput struct {
	AgentName      string
	AgentBody      string // the agent definition's body: its system prompt
	PermissionMode string
	Workspace      string
	Tools          []string // the effective tools, in order
	Denied         []string // tools the agent must not use (disallowed, policy, always task)
	InheritContext bool
	Playbook       []PlaybookItem
	Chain          []ChainLink // finished subagents whose output this task builds on
	Task           string
	Validation     []string // validation criteria; DefaultValidation when empty
	Prohibitions   []string // added to DefaultProhibitions
	// Consumer says who reads the result (the downstream consumer declaration); default: the
	// parent session.
	Consumer string
}

// PlaybookItem is one playbook entry passed on as context.
type PlaybookItem struct{ ID, Section, Content string }

// ChainLink is one finished subagent in the context chain. An empty DownstreamContext is shown
// as a visible placeholder, never silently dropped.
type ChainLink struct {
	SubagentID        string
	AgentName         string
	DownstreamContext string
}

// DefaultValidation is used when the task names no validation criteria.
var DefaultValidation = []string{
	"Run the project's own checks that cover what you changed (build, vet, tests), if your tools allow it, and report their output.",
	"If you cannot validate, say so and set Validation: skipped.",
}

// DefaultProhibitions apply to every subagent.
var DefaultProhibitions = []string{
	"Do not delegate: you have no task tool and must not simulate one.",
	"Do not touch files outside the workspace or outside the task's scope.",
	"Do not write file content through the shell.",
	"Do not put timestamps in your output; results must be deterministic.",
	"Do not include secrets (keys, tokens, passwords) in anything you write or report.",
}

// MissingContext is the placeholder for a chain link without Downstream Context.
const MissingContext = "Downstream Context missing in session state — verify this dependency's output before relying on it"

// CapsuleContract describes the deliverable every subagent ends with.
const CapsuleContract = "End your final message with a result capsule: a fenced ```json block holding one object with\n" +
	"`agent_name`, `summary` (required), `findings[]` (`severity`: critical|high|medium|low|info,\n" +
	"`summary`, `file_refs[]` as path:line, `evidence_ids[]`), `patch_suggestions[]` (`paths`, a minimal\n" +
	"unified `diff`), `policy_notes[]` (operations you were refused), optional `confidence` (0..1) and\n" +
	"`verification` (`status` passed|failed|flagged|skipped, `checks[]`). Then write the Task Report and\n" +
	"Downstream Context of the base protocol."

// BuildPrompt assembles the delegation prompt in the order of DESIGN §6: agent body, agent
// base protocol, filesystem safety protocol, tool restrictions, context chain, task,
// deliverables, validation criteria, prohibitions, downstream consumer declaration. The output
// depends only on its input.
func BuildPrompt(in PromptInput) string {
	var b strings.Builder
	sec := func(title string) {
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\n# %s\n\n", title)
	}

	b.WriteString(strings.TrimSpace(in.AgentBody))
	b.WriteString("\n\n")
	b.WriteString(strings.TrimSpace(Doc("agent-base-protocol.md")))
	b.WriteString("\n\n")
	b.WriteString(strings.TrimSpace(Doc("filesystem-safety-protocol.md")))

	sec("Tool restrictions")
	fmt.Fprintf(&b, "Permission mode: %s. Workspace root: %s.\n", orNone(in.PermissionMode), orNone(in.Workspace))
	fmt.Fprintf(&b, "You may call only these tools: %s.\n", orNone(strings.Join(in.Tools, ", ")))
	denied := append([]string(nil), in.Denied...)
	if !contains(denied, "task") {
		denied = append(denied, "task")
	}
	fmt.Fprintf(&b, "Denied: %s. A call to any other tool is refused and recorded as a policy note.\n", strings.Join(denied, ", "))
	if !contains(in.Tools, "write_file") && !contains(in.Tools, "replace") {
		b.WriteString("You may not write files: report what you would change as patch suggestions.\n")
	}

	sec("Context from the session")
	switch {
	case !in.InheritContext:
		b.WriteString("Context inheritance is off for this task: work from the task alone.\n")
	default:
		if len(in.Playbook) == 0 {
			b.WriteString("Playbook: (empty)\n")
		} else {
			b.WriteString("Playbook:\n")
			for _, p := range in.Playbook {
				if p.Section != "" {
					fmt.Fprintf(&b, "- [%s] %s: %s\n", p.Section, p.ID, p.Content)
				} else {
					fmt.Fprintf(&b, "- %s: %s\n", p.ID, p.Content)
				}
			}
		}
		if len(in.Chain) == 0 {
			b.WriteString("Completed subagents: none yet.\n")
		} else {
			b.WriteString("Completed subagents:\n")
			for _, l := range in.Chain {
				ctx := strings.TrimSpace(l.DownstreamContext)
				if ctx == "" {
					ctx = MissingContext
				}
				fmt.Fprintf(&b, "- %s (%s): %s\n", l.SubagentID, l.AgentName, indent(ctx, "  "))
			}
		}
	}

	sec("Task")
	b.WriteString(strings.TrimSpace(in.Task))
	b.WriteString("\n")

	sec("Deliverables")
	b.WriteString(CapsuleContract)
	b.WriteString("\n")

	sec("Validation criteria")
	val := in.Validation
	if len(val) == 0 {
		val = DefaultValidation
	}
	for _, v := range val {
		fmt.Fprintf(&b, "- %s\n", v)
	}

	sec("Prohibitions")
	for _, p := range append(append([]string(nil), DefaultProhibitions...), in.Prohibitions...) {
		fmt.Fprintf(&b, "- %s\n", p)
	}

	sec("Who reads your result")
	consumer := in.Consumer
	if consumer == "" {
		consumer = "the parent summit session: a developer reviewing your capsule, and any subagent delegated after you that inherits context"
	}
	fmt.Fprintf(&b, "Your output is consumed by %s. Write the Downstream Context for them.\n", consumer)
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }
