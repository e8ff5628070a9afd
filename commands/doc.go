// Package commands is summit's slash-command grammar: the tokenizer, the command specs as
// data, the typed commands Parse returns, errors with suggestions, help text and completion.
// It is pure: no I/O, no clock, no session state. The orchestrator runs what Parse returns;
// the UI's help screen and completion read the same tables (Specs, Lookup, HelpText,
// Overview, Complete).
//
// # Grammar
//
//	/delegate <task> --agent-type <type|agent-name> [--inherit-context[=true|false]]
//	          [--permission-mode plan|acceptEdits|bypassPermissions] [--timeout <seconds>] [--tools a,b]
//	/handoff <subagent_id> [--transfer-control] [--timeout <seconds>] [--on-failure retry|abort|escalate]
//	/converge <id1> <id2> [<id3> ...] --strategy merge|vote|consensus|first_success
//	          [--conflict-resolution manual|auto_accept_latest|prefer_higher_confidence]
//	          [--output-format json|markdown|delta_batch]
//	/resolve <conflict_id> --choose <subagent_id>|both|none [--note <text>]
//	/approve <request_id> [--scope once|subagent]
//	/deny <request_id> [--reason <text>]
//	/apply <subagent_id|convergence_id> [--dry-run] [--verify <command>] [--force]
//	/cancel <subagent_id>
//	/status [id]
//	/wait <id...>
//	/agents
//	/help [command]
//	/quit
//
// Defaults: --inherit-context true; --permission-mode unset ("" in Delegate: the agent type's
// default capped by the session ceiling, decided by the orchestrator); --timeout 300 for
// /delegate and 600 for /handoff; --on-failure escalate; --conflict-resolution manual;
// --output-format delta_batch; --scope once.
//
// Ids are sa-N (subagent), cv-N (convergence), cf-N (conflict) and pr-N (permission request),
// N a positive integer without leading zeros. /status takes sa-N or cv-N, /wait one or more of
// either, /converge two or more distinct sa-N. --agent-type takes any name matching
// ^[a-z][a-z0-9_-]*$ (builder, tester, analyzer and retriever are the built-in types; whether
// the name is in the catalogue is checked by the orchestrator). --tools takes comma-separated
// tool names (^[A-Za-z][A-Za-z0-9_.:-]*$); spaces around names are dropped, duplicates are
// dropped keeping the first, an empty name is an error. --timeout takes whole seconds from 1
// to 86400: no units, signs or fractions.
//
// # Words and quoting
//
// A line is a command when its first non-whitespace character is "/" (IsCommand). Words are
// separated by ASCII whitespace. "..." quotes with the escapes \" \\ \n \t (any other
// backslash stays literal); '...' quotes with no escapes; outside quotes a backslash makes the
// next character literal. Parts that touch make one word: --note="a b" is one word. An
// unterminated quote or a trailing backslash is an error. Lines must be valid UTF-8.
//
// Only bare (unquoted, unescaped) text makes a flag: "--foo" is a positional word. A bare "--"
// ends the flags; every word after it is positional.
//
// # Decisions
//
//   - --flag=value and --flag value both work. A value flag followed by nothing, by a flag or
//     by "--" is an error ("needs a value"); to pass a value that starts with "--", quote it.
//   - A bare bool flag (--transfer-control, --inherit-context) never takes the next word; use
//     --inherit-context=false. A bare true or false right after a bool flag is rejected with
//     that advice rather than silently becoming a task word.
//   - Positional words may come before, between or after flags. For /delegate they are all
//     task words, joined in order by single spaces: "/delegate fix bug --agent-type builder in
//     main.go" has the task "fix bug in main.go". A quoted word keeps its spacing; a task that
//     is empty or only whitespace is an error.
//   - A flag given twice, an id named twice (/converge, /wait), an unknown flag and an
//     unknown command are errors; nothing is ever half-parsed.
//   - Enum values and command names are case-sensitive; the suggestion fixes the case.
//   - A line is at most MaxLine bytes (1 MiB) and must be valid UTF-8, so what the recorder
//     writes as the CommandIssued line is exactly what was parsed.
//
// # Help and completion
//
// HelpText(name) is a command's long help (usage, description, arguments, flags with values
// and defaults), Usage(name) its usage line, Overview() the list of commands; all are built from
// the tables. (HelpText is not called Help because Help is the parsed /help command.)
// Complete(input, cursor, live) offers command names, flags not yet given, enum and bool
// values, agent and tool names, and live ids of the kind each position takes, each with the
// byte range it replaces.
//
// # Errors
//
// Every error is a *ParseError with the command name, what is wrong, the usage line, the
// nearest valid text (by unique prefix, then Damerau-Levenshtein distance) and the byte offset
// of the offending word. Error() renders
//
//	/converge: unknown flag --stratgy (did you mean --strategy?)
//	usage: /converge <id1> <id2> [<id3> ...] --strategy merge|vote|consensus|first_success [...]
//
// Column numbers inside messages count characters from 1, for people; ParseError.Column is a
// byte offset from 0, for programs. User text repeated in a message is Go-quoted and
// truncated, so no control sequence or pasted megabyte reaches the error line.
//
// # Typed values
//
// Parse returns a value type per command (Delegate, Handoff, Converge, Resolve, Approve, Deny,
// Apply, Diff, Blame, Undo, Discard, Retry, Cancel, Status, Wait, Inbox, Agents, Help, Quit) with every
// default applied. Apply names a subagent (its real changes) or a convergence; Resolve's
// Choose may be edit, with the reviewer's Content. Args is the
// JSON-friendly map recorded as the CommandIssued "args"; String is the canonical line, and
// Parse(c.String()) equals c (the fuzz tests hold this for every line that parses).
package commands
