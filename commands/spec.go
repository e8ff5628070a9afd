package commands

import (
	"slices"
	"strconv"
	"strings"
)

// Kind is what a positional argument or a flag value holds.
type Kind int

const (
	KindText    Kind = iota // free text (a task, a note)
	KindInt                 // a whole number in [Min, Max]
	KindBool                // true/false; a bare flag means true
	KindEnum                // one of Values
	KindList                // comma-separated names, deduplicated, order kept
	KindID                  // an id of one of IDKinds, or one of Values (keywords)
	KindName                // an agent name: ^[a-z][a-z0-9_-]*$; Values lists common ones
	KindCommand             // a command name, with or without the leading "/"
)

var kindNames = [...]string{"text", "int", "bool", "enum", "list", "id", "name", "command"}

func (k Kind) String() string {
	if int(k) >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one allowed (or, for KindName, common) value with its help line.
type Value struct {
	Name string
	Help string
}

// Arg is a positional argument.
type Arg struct {
	Name        string   // e.g. "task", "subagent_id"
	Key         string   // key in Command.Args
	Kind        Kind     // KindText, KindID or KindCommand
	Placeholder string   // as shown in the usage line, e.g. "<id1> <id2> [<id3> ...]"
	IDKinds     []IDKind // for KindID
	Required    bool
	// Variadic takes every remaining positional word. A variadic KindText argument joins its
	// words with single spaces (the task of /delegate); a variadic KindID argument is a list.
	Variadic bool
	Min      int    // least number of words of a variadic argument
	Noun     string // plural noun for count messages, e.g. "subagent ids"
	Help     string
}

// Flag is a --flag.
type Flag struct {
	Name        string // without the leading "--"
	Key         string // key in Command.Args
	Kind        Kind
	Placeholder string   // e.g. "<seconds>"; enums show their values instead
	Values      []Value  // KindEnum: the closed set; KindID: keywords; KindName: common names
	IDKinds     []IDKind // for KindID
	Required    bool
	// Default is the textual default, applied through the same value parser as typed input,
	// so the default shown in help is the default used. "" means none.
	Default string
	// DefaultHelp explains the default when it is not a fixed value (e.g. --permission-mode).
	DefaultHelp string
	Min, Max    int    // range of a KindInt
	Unit        string // what a KindInt counts, e.g. "whole seconds"
	Help        string
	// Runners: completion of this KindText flag offers the live runners' names
	// (LiveIDs.Runners), then "any".
	Runners bool

	def any // Default parsed once at init
}

// Spec is one slash command. The parser, help and completion all read these tables.
type Spec struct {
	Name    string // without the leading "/"
	Summary string // one line, for the overview and completion
	Usage   string // the usage line, derived from Args and Flags
	Help    string // a paragraph describing the command
	Args    []Arg
	Flags   []Flag

	build func(values) Command
}

func (s *Spec) flag(name string) *Flag {
	for i := range s.Flags {
		if s.Flags[i].Name == name {
			return &s.Flags[i]
		}
	}
	return nil
}

// argAt is the argument the k-th positional word (from 0) belongs to, or nil if none.
func (s *Spec) argAt(k int) *Arg {
	for i := range s.Args {
		if i == k || (i < k && s.Args[i].Variadic) {
			return &s.Args[i]
		}
	}
	return nil
}

func (s *Spec) flagNames() []string {
	names := make([]string, len(s.Flags))
	for i, f := range s.Flags {
		names[i] = "--" + f.Name
	}
	return names
}

// clone copies the slices so that callers of Specs and Lookup cannot change the tables.
func (s Spec) clone() Spec {
	s.Args = slices.Clone(s.Args)
	for i := range s.Args {
		s.Args[i].IDKinds = slices.Clone(s.Args[i].IDKinds)
	}
	s.Flags = slices.Clone(s.Flags)
	for i := range s.Flags {
		s.Flags[i].Values = slices.Clone(s.Flags[i].Values)
		s.Flags[i].IDKinds = slices.Clone(s.Flags[i].IDKinds)
	}
	return s
}

// Specs returns every command in overview order. The result is a copy.
func Specs() []Spec {
	out := make([]Spec, len(table))
	for i := range table {
		out[i] = table[i].clone()
	}
	return out
}

// Lookup finds a command by name, with or without the leading "/".
func Lookup(name string) (Spec, bool) {
	if s := lookup(name); s != nil {
		return s.clone(), true
	}
	return Spec{}, false
}

func lookup(name string) *Spec {
	name = strings.TrimPrefix(name, "/")
	for i := range table {
		if table[i].Name == name {
			return &table[i]
		}
	}
	return nil
}

func commandNames() []string {
	names := make([]string, len(table))
	for i := range table {
		names[i] = table[i].Name
	}
	return names
}

func init() {
	for i := range table {
		s := &table[i]
		for j := range s.Flags {
			f := &s.Flags[j]
			if f.Default == "" {
				continue
			}
			v, msg, _ := parseFlagValue(f, f.Default)
			if msg != "" {
				// A static table error, caught by any test run; never depends on input.
				panic("commands: bad default for /" + s.Name + " --" + f.Name + ": " + msg)
			}
			f.def = v
		}
		s.Usage = usageLine(s)
	}
}

func usageLine(s *Spec) string {
	parts := []string{"/" + s.Name}
	for _, a := range s.Args {
		parts = append(parts, a.Placeholder)
	}
	for i := range s.Flags {
		f := &s.Flags[i]
		u := flagUsage(f)
		if !f.Required {
			u = "[" + u + "]"
		}
		parts = append(parts, u)
	}
	return strings.Join(parts, " ")
}

// flagUsage is a flag as the usage line shows it, without the brackets of an optional flag.
func flagUsage(f *Flag) string {
	switch f.Kind {
	case KindBool:
		if f.Default == "true" {
			return "--" + f.Name + "[=true|false]"
		}
		return "--" + f.Name
	case KindEnum:
		return "--" + f.Name + " " + strings.Join(valueNames(f.Values), "|")
	case KindID:
		if len(f.Values) > 0 {
			return "--" + f.Name + " " + f.Placeholder + "|" + strings.Join(valueNames(f.Values), "|")
		}
	}
	return "--" + f.Name + " " + f.Placeholder
}

func valueNames(vs []Value) []string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return names
}

// Usage returns the usage line of a command (name with or without "/"), or "" if unknown.
func Usage(name string) string {
	if s := lookup(name); s != nil {
		return s.Usage
	}
	return ""
}

// HelpText returns the long help of a command (name with or without "/"): usage, summary,
// description, arguments and flags with their values and defaults. (It is not called Help
// because Help is the type of the parsed /help command.)
func HelpText(name string) (string, bool) {
	s := lookup(name)
	if s == nil {
		return "", false
	}
	var b strings.Builder
	b.WriteString(s.Usage)
	b.WriteString("\n\n")
	b.WriteString(strings.ToUpper(s.Summary[:1]) + s.Summary[1:] + ".\n")
	if s.Help != "" {
		b.WriteString("\n")
		b.WriteString(s.Help)
		b.WriteString("\n")
	}
	if len(s.Args) > 0 {
		b.WriteString("\nArguments:\n")
		for _, a := range s.Args {
			b.WriteString("  " + a.Placeholder + "\n      " + a.Help + "\n")
		}
	}
	if len(s.Flags) > 0 {
		b.WriteString("\nFlags:\n")
		for i := range s.Flags {
			f := &s.Flags[i]
			b.WriteString("  " + flagUsage(f) + "\n      " + f.Help + flagNotes(f) + "\n")
			for _, v := range f.Values {
				b.WriteString("        " + padRight(v.Name, 26) + v.Help + "\n")
			}
		}
	}
	return b.String(), true
}

// flagNotes is the parenthesis after a flag's help: required, range, default.
func flagNotes(f *Flag) string {
	var notes []string
	if f.Required {
		notes = append(notes, "required")
	}
	if f.Kind == KindInt {
		notes = append(notes, strconv.Itoa(f.Min)+" to "+strconv.Itoa(f.Max))
	}
	switch {
	case f.Default != "":
		notes = append(notes, "default "+f.Default)
	case f.DefaultHelp != "":
		notes = append(notes, "default: "+f.DefaultHelp)
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s + " "
	}
	return s + strings.Repeat(" ", n-len(s))
}

// Overview lists every command with its summary, for /help without a topic.
func Overview() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for i := range table {
		b.WriteString("  " + padRight("/"+table[i].Name, 11) + table[i].Summary + "\n")
	}
	b.WriteString("\nType /help <command> for its flags. A line that does not start with / is a note,\n" +
		"or a message to the subagent while a --transfer-control handoff is active.\n")
	return b.String()
}

// Timeouts of /delegate and /handoff, in seconds.
const (
	DefaultDelegateTimeout = 300
	DefaultHandoffTimeout  = 600
	MaxTimeout             = 86400
)

// The built-in delegate agent types. --agent-type also accepts any agent name from the
// catalogue; whether the name exists is checked where the catalogue is known.
const (
	AgentBuilder   = "builder"
	AgentTester    = "tester"
	AgentAnalyzer  = "analyzer"
	AgentRetriever = "retriever"
)

// Enum values. The fields of the command types are plain strings holding these.
const (
	PermissionPlan        = "plan"
	PermissionAcceptEdits = "acceptEdits"
	PermissionBypass      = "bypassPermissions"

	OnFailureRetry    = "retry"
	OnFailureAbort    = "abort"
	OnFailureEscalate = "escalate"

	StrategyMerge        = "merge"
	StrategyVote         = "vote"
	StrategyConsensus    = "consensus"
	StrategyFirstSuccess = "first_success"

	ResolutionManual                 = "manual"
	ResolutionAutoAcceptLatest       = "auto_accept_latest"
	ResolutionPreferHigherConfidence = "prefer_higher_confidence"

	FormatJSON       = "json"
	FormatMarkdown   = "markdown"
	FormatDeltaBatch = "delta_batch"

	ChooseBoth = "both"
	ChooseNone = "none"
	ChooseEdit = "edit" // the reviewer's own text for the region, given with --content

	ScopeOnce     = "once"
	ScopeSubagent = "subagent"
)

func timeoutFlag(def int, help string) Flag {
	return Flag{
		Name: "timeout", Key: "timeout", Kind: KindInt, Placeholder: "<seconds>",
		Default: strconv.Itoa(def), Min: 1, Max: MaxTimeout, Unit: "whole seconds", Help: help,
	}
}

var (
	subagentOnly   = []IDKind{IDSubagent}
	subagentOrConv = []IDKind{IDSubagent, IDConvergence}
)

// table is the grammar. Order is the overview order.
var table = []Spec{
	{
		Name:    "delegate",
		Summary: "start a subagent on a task",
		Help: "Spawns a subagent of the given agent type and gives it the task. The session goes on\n" +
			"at once; watch the subagent in the tree, /wait for it, /handoff to it or /converge it\n" +
			"with others. The task is one quoted word or the bare words of the line (before or after\n" +
			"the flags), joined by single spaces.",
		Args: []Arg{{
			Name: "task", Key: "task", Kind: KindText, Placeholder: "<task>", Required: true,
			Variadic: true, Min: 1, Noun: "words",
			Help: "what the subagent should do, in plain words",
		}},
		Flags: []Flag{
			{
				Name: "agent-type", Key: "agent_type", Kind: KindName, Placeholder: "<type|agent-name>",
				Required: true,
				Help:     "the built-in type or any agent name from the catalogue (/agents lists them)",
				Values: []Value{
					{AgentBuilder, "writes code and edits files (default mode acceptEdits)"},
					{AgentTester, "runs tests and checks changes (default mode plan)"},
					{AgentAnalyzer, "reads and analyses code (default mode plan)"},
					{AgentRetriever, "gathers documentation and context (default mode plan)"},
				},
			},
			{
				Name: "inherit-context", Key: "inherit_context", Kind: KindBool, Default: "true",
				Help: "give the subagent the playbook and the downstream context of finished subagents",
			},
			{
				Name: "permission-mode", Key: "permission_mode", Kind: KindEnum,
				DefaultHelp: "the agent type's default, capped by the session ceiling",
				Help:        "what the subagent may do without asking; never above the session ceiling",
				Values: []Value{
					{PermissionPlan, "read only; shell commands ask each time"},
					{PermissionAcceptEdits, "may edit files in the workspace; shell commands ask"},
					{PermissionBypass, "may also run shell commands; needs your approval"},
				},
			},
			timeoutFlag(DefaultDelegateTimeout, "stop the subagent after this long"),
			{
				Name: "tools", Key: "tools", Kind: KindList, Placeholder: "a,b",
				DefaultHelp: "the agent's own tools",
				Help:        "restrict the subagent to these tools (comma-separated, e.g. read_file,glob)",
			},
			{
				Name: "inputs", Key: "inputs", Kind: KindText, Placeholder: "<json>",
				DefaultHelp: "the task alone",
				Help:        "a remote agent's structured inputs, a JSON object checked against its inputSchema (the task goes in its task or query field)",
			},
			{
				Name: "on", Key: "on", Kind: KindText, Placeholder: "<runner|label=value|any>",
				DefaultHelp: "here", Runners: true,
				Help: "run the subagent on a remote runner (summit runner, --nats): its name, a label=value, or any",
			},
			{
				Name: "retry", Key: "retry", Kind: KindBool, DefaultHelp: "no retry",
				Help: "with --on: when the runner dies, place the subagent again on another runner from its base",
			},
		},
		build: buildDelegate,
	},
	{
		Name:    "handoff",
		Summary: "hand control to a subagent and wait for it",
		Help: "Follows one subagent until it stops. In monitor mode (the default) you watch while it\n" +
			"works; with --transfer-control the session suspends and the lines you type go to the\n" +
			"subagent until it finishes.",
		Args: []Arg{{
			Name: "subagent_id", Key: "subagent_id", Kind: KindID, Placeholder: "<subagent_id>",
			IDKinds: subagentOnly, Required: true, Help: "the subagent to hand off to (sa-N)",
		}},
		Flags: []Flag{
			{
				Name: "transfer-control", Key: "transfer_control", Kind: KindBool, Default: "false",
				Help: "suspend the session and send what you type to the subagent",
			},
			timeoutFlag(DefaultHandoffTimeout, "how long to wait for the subagent"),
			{
				Name: "on-failure", Key: "on_failure", Kind: KindEnum, Default: OnFailureEscalate,
				Help: "what to do if the subagent fails",
				Values: []Value{
					{OnFailureRetry, "run the task again"},
					{OnFailureAbort, "stop and report the failure"},
					{OnFailureEscalate, "stop and ask you what to do"},
				},
			},
		},
		build: buildHandoff,
	},
	{
		Name:    "converge",
		Summary: "combine the results of several subagents",
		Help: "Waits for the named subagents, combines their results by the strategy and reports\n" +
			"conflicts. With manual resolution nothing is output until every conflict is resolved\n" +
			"(in the review prompt, or with /resolve).",
		Args: []Arg{{
			Name: "subagent_ids", Key: "subagent_ids", Kind: KindID, Placeholder: "<id1> <id2> [<id3> ...]",
			IDKinds: subagentOnly, Required: true, Variadic: true, Min: 2, Noun: "subagent ids",
			Help: "two or more subagents (sa-N); running ones are waited for",
		}},
		Flags: []Flag{
			{
				Name: "strategy", Key: "strategy", Kind: KindEnum, Required: true,
				Help: "how to combine the results",
				Values: []Value{
					{StrategyMerge, "union of findings and patches; overlapping hunks conflict"},
					{StrategyVote, "the most common result; needs 3 or more; a tie conflicts"},
					{StrategyConsensus, "all must agree (confidence within 0.1)"},
					{StrategyFirstSuccess, "the first to succeed; the rest are ignored"},
				},
			},
			{
				Name: "conflict-resolution", Key: "conflict_resolution", Kind: KindEnum, Default: ResolutionManual,
				Help: "how conflicts are settled",
				Values: []Value{
					{ResolutionManual, "you decide in the review prompt or with /resolve"},
					{ResolutionAutoAcceptLatest, "the latest to finish wins; the others are logged"},
					{ResolutionPreferHigherConfidence, "the higher confidence wins; else manual"},
				},
			},
			{
				Name: "output-format", Key: "output_format", Kind: KindEnum, Default: FormatDeltaBatch,
				Help: "the form of the combined result",
				Values: []Value{
					{FormatJSON, "one JSON document"},
					{FormatMarkdown, "a readable report"},
					{FormatDeltaBatch, "file patches and playbook deltas, for /apply"},
				},
			},
		},
		build: buildConverge,
	},
	{
		Name:    "resolve",
		Summary: "settle a conflict of a convergence",
		Help: "Chooses one side of a conflict, both sides, or neither, or (--choose edit --content TEXT)\n" +
			"your own text for the conflicted lines. The choice settles this region only; with --whole-file\n" +
			"it takes the side's whole version of the file instead. The choice is recorded with your note.",
		Args: []Arg{{
			Name: "conflict_id", Key: "conflict_id", Kind: KindID, Placeholder: "<conflict_id>",
			IDKinds: []IDKind{IDConflict}, Required: true, Help: "the conflict to settle (cf-N)",
		}},
		Flags: []Flag{
			{
				Name: "choose", Key: "choose", Kind: KindID, Placeholder: "<subagent_id>",
				IDKinds: subagentOrConv, Required: true,
				Help: "the side that wins (a subagent, or the convergence whose /apply is reviewed), or both, none, or edit",
				Values: []Value{
					{ChooseBoth, "keep both sides"},
					{ChooseNone, "drop both sides"},
					{ChooseEdit, "your own text for the lines (--content)"},
				},
			},
			{
				Name: "note", Key: "note", Kind: KindText, Placeholder: "<text>",
				Help: "why, recorded with the resolution",
			},
			{
				Name: "content", Key: "content", Kind: KindText, Placeholder: "<text>",
				Help: "with --choose edit: the text the conflicted lines become (\n for a new line)",
			},
			{
				Name: "whole-file", Key: "whole_file", Kind: KindBool, Default: "false",
				Help: "with --choose <subagent_id>: take that side's whole version of the conflict's file, dropping every other side's hunks in it (not only this region)",
			},
		},
		build: buildResolve,
	},
	{
		Name:    "approve",
		Summary: "allow a subagent's permission request",
		Help:    "Grants a pending permission request, for this one call or for the rest of that subagent's run.",
		Args: []Arg{{
			Name: "request_id", Key: "request_id", Kind: KindID, Placeholder: "<request_id>",
			IDKinds: []IDKind{IDRequest}, Required: true, Help: "the request to grant (pr-N)",
		}},
		Flags: []Flag{{
			Name: "scope", Key: "scope", Kind: KindEnum, Default: ScopeOnce,
			Help: "how long the approval holds",
			Values: []Value{
				{ScopeOnce, "this call only"},
				{ScopeSubagent, "every such call of this subagent"},
			},
		}},
		build: buildApprove,
	},
	{
		Name:    "deny",
		Summary: "refuse a subagent's permission request",
		Help:    "Refuses a pending permission request; the subagent is told and goes on without it.",
		Args: []Arg{{
			Name: "request_id", Key: "request_id", Kind: KindID, Placeholder: "<request_id>",
			IDKinds: []IDKind{IDRequest}, Required: true, Help: "the request to refuse (pr-N)",
		}},
		Flags: []Flag{{
			Name: "reason", Key: "reason", Kind: KindText, Placeholder: "<text>",
			Help: "why, recorded and told to the subagent",
		}},
		build: buildDeny,
	},
	{
		Name:    "apply",
		Summary: "land a subagent's real changes or a convergence's result in the workspace",
		Help: "/apply sa-N lands what an isolated subagent really changed with a three-way merge\n" +
			"against the workspace as it is now; /apply cv-N lands a convergence's DeltaBatch. All\n" +
			"files or none. Needs acceptEdits or higher. /undo takes the last one back.\n" +
			"--dry-run shows what would land; --verify CMD (or the config's verify:) checks the merged\n" +
			"result in a scratch worktree first and refuses a failure unless --force.",
		Args: []Arg{{
			Name: "id", Key: "id", Kind: KindID, Placeholder: "<subagent_id|convergence_id>",
			IDKinds: subagentOrConv, Required: true, Help: "the subagent (sa-N) or convergence (cv-N) to apply",
		}},
		// Preview and verification (issue 27): the merged result is built and checked in a
		// scratch worktree before anything touches the workspace.
		Flags: []Flag{
			{
				Name: "dry-run", Key: "dry_run", Kind: KindBool, Default: "false",
				Help: "show the files that would change, with their diffs, and change nothing",
			},
			{
				Name: "verify", Key: "verify", Kind: KindText, Placeholder: "<command>",
				DefaultHelp: "the config's verify: command, if any",
				Help:        "run this shell command on the merged result in a scratch worktree first; a failure refuses the apply",
			},
			{
				Name: "force", Key: "force", Kind: KindBool, Default: "false",
				Help: "apply even though the verify command failed (recorded)",
			},
		},
		build: buildApply,
	},
	{
		Name:    "diff",
		Summary: "show the real changes of a subagent or a convergence",
		Help:    "Shows the unified diff of what an isolated subagent really changed (or a convergence's\nresult), for every file or one PATH.",
		Args: []Arg{{
			Name: "id", Key: "id", Kind: KindID, Placeholder: "<subagent_id|convergence_id>",
			IDKinds: subagentOrConv, Required: true, Help: "the subagent (sa-N) or convergence (cv-N)",
		}, {
			Name: "path", Key: "path", Kind: KindText, Placeholder: "[PATH]", Help: "one file of the change",
		}},
		build: func(v values) Command { return Diff{ID: v.str("id"), Path: v.str("path")} },
	},
	{
		Name:    "undo",
		Summary: "take back the last /apply",
		Help:    "Restores every file of the last /apply to its state before it, byte for byte. Refuses,\nnaming the file, when one was edited since.",
		build:   func(values) Command { return Undo{} },
	},
	{
		Name:    "discard",
		Summary: "drop a subagent's worktree",
		Help:    "Removes an isolated subagent's worktree. Its recorded changes stay (for /diff and replay).",
		Args: []Arg{{
			Name: "subagent_id", Key: "subagent_id", Kind: KindID, Placeholder: "<subagent_id>",
			IDKinds: subagentOnly, Required: true, Help: "the subagent whose worktree goes (sa-N)",
		}},
		build: func(v values) Command { return Discard{SubagentID: v.str("subagent_id")} },
	},
	{
		Name:    "blame",
		Summary: "which subagent wrote each line of a file summit landed",
		Help: "For each line of PATH as summit last left it: the subagent that wrote it, the convergence\n" +
			"and conflict resolution it went through, the /apply that landed it, the subagent's model,\n" +
			"tokens and cost, and the seqs of those events; \"unchanged\" for lines summit did not land.\n" +
			"Read from the session's recording alone (summit blame FILE does the same for any recording).",
		Args: []Arg{{
			Name: "path", Key: "path", Kind: KindText, Placeholder: "<path>", Required: true, Variadic: true,
			Help: "a file of the workspace",
		}},
		build: func(v values) Command { return Blame{Path: v.str("path")} },
	},
	{
		Name:    "retry",
		Summary: "delegate a stopped subagent's task again",
		Help: "Delegates the task of a subagent that stopped (failed, timed out, cancelled, or interrupted\n" +
			"by a fork) again, as its /delegate asked: the same agent, task, mode, tools and timeout.\n" +
			"--agent-type runs it with another agent instead. The new subagent gets a new id.",
		Args: []Arg{{
			Name: "subagent_id", Key: "subagent_id", Kind: KindID, Placeholder: "<subagent_id>",
			IDKinds: subagentOnly, Required: true, Help: "the stopped subagent whose task runs again (sa-N)",
		}},
		Flags: []Flag{{
			Name: "agent-type", Key: "agent_type", Kind: KindName, Placeholder: "<type|agent-name>",
			Help: "run the task with this agent instead (/agents lists them)",
		}},
		build: func(v values) Command { return Retry{SubagentID: v.str("subagent_id"), AgentType: v.str("agent_type")} },
	},
	{
		Name:    "cancel",
		Summary: "stop a running subagent",
		Help:    "Cancels a subagent; what it had done so far is kept in its stop event.",
		Args: []Arg{{
			Name: "subagent_id", Key: "subagent_id", Kind: KindID, Placeholder: "<subagent_id>",
			IDKinds: subagentOnly, Required: true, Help: "the subagent to stop (sa-N)",
		}},
		build: buildCancel,
	},
	{
		Name:    "status",
		Summary: "show the session, a subagent or a convergence",
		Args: []Arg{{
			Name: "id", Key: "id", Kind: KindID, Placeholder: "[id]",
			IDKinds: subagentOrConv, Help: "a subagent (sa-N) or convergence (cv-N); none for the whole session",
		}},
		build: buildStatus,
	},
	{
		Name:    "wait",
		Summary: "wait for subagents and convergences",
		Help: "Returns when each subagent has stopped and each convergence is complete or waits for\n" +
			"review. Useful in scripts.",
		Args: []Arg{{
			Name: "ids", Key: "ids", Kind: KindID, Placeholder: "<id...>",
			IDKinds: subagentOrConv, Required: true, Variadic: true, Min: 1, Noun: "ids",
			Help: "subagents (sa-N) and convergences (cv-N)",
		}},
		build: buildWait,
	},
	{
		Name:    "inbox",
		Summary: "the approvals inbox: every waiting permission request and review",
		Help: "Lists the permission requests and conflict reviews of the whole tree that wait for\n" +
			"you, oldest first. In the workbench it opens the inbox (also ctrl+o), where each is\n" +
			"answered in place.",
		build: func(values) Command { return Inbox{} },
	},
	{
		Name:    "trust",
		Summary: "trust this workspace's own config, agent files and hook scripts",
		Help: "Enables what an untrusted workspace's .summit/config.yaml and agent files would do (its\n" +
			"MCP servers, ACP agents, providers, remotes, hooks, web_allow_hosts), as the trust inbox\n" +
			"item lists them, and remembers it until one of those files changes. In effect from the\n" +
			"next session. Headless runs take --trust-workspace, or summit trust DIR.",
		build: func(values) Command { return Trust{} },
	},
	{
		Name:    "runners",
		Summary: "list the remote runners (summit runner) and what runs on them",
		build:   func(values) Command { return Runners{} },
	},
	{
		Name:    "agents",
		Summary: "list the agent catalogue",
		build:   func(values) Command { return Agents{} },
	},
	{
		Name:    "help",
		Summary: "show the commands, or one command's flags",
		Args: []Arg{{
			Name: "topic", Key: "topic", Kind: KindCommand, Placeholder: "[command]",
			Help: "a command name, with or without the /",
		}},
		build: func(v values) Command { return Help{Topic: v.str("topic")} },
	},
	{
		Name:    "quit",
		Summary: "end the session",
		build:   func(values) Command { return Quit{} },
	},
}
