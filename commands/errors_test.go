package commands

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string // the first line of Error()
		sugg string
		col  int
	}{
		// not a command, unknown command
		{"note", `hello there`, `not a command: commands start with /`, "", -1},
		{"empty", ``, `not a command: commands start with /`, "", -1},
		{"slash only", `/`, `missing command name after /; /help lists the commands`, "", 0},
		{"slash space", `  / delegate`, `missing command name after /; /help lists the commands`, "", 2},
		{"command typo", `/delegte fix --agent-type builder`, `unknown command /delegte (did you mean /delegate?)`, "/delegate", 0},
		{"command transposed", `/hnadoff sa-1`, `unknown command /hnadoff (did you mean /handoff?)`, "/handoff", 0},
		{"command prefix", `/conv sa-1`, `unknown command /conv (did you mean /converge?)`, "/converge", 0},
		{"command case", `/Quit`, `unknown command /Quit (did you mean /quit?)`, "/quit", 0},
		{"command far", `/xyzzy`, `unknown command /xyzzy; /help lists the commands`, "", 0},
		{"command quoted junk", "/\x1b[2J", `unknown command "/\x1b[2J"; /help lists the commands`, "", 0},

		// unknown flags
		{"flag typo", `/converge sa-1 sa-2 --stratgy merge`, `/converge: unknown flag --stratgy (did you mean --strategy?)`, "--strategy", 20},
		{"flag prefix", `/converge sa-1 sa-2 --strat merge`, `/converge: unknown flag --strat (did you mean --strategy?)`, "--strategy", 20},
		{"flag typo with value", `/delegate x --agent-tpye=builder`, `/delegate: unknown flag --agent-tpye (did you mean --agent-type?)`, "--agent-type", 12},
		{"flag far", `/delegate x --agent-type builder --frobnicate`, `/delegate: unknown flag --frobnicate`, "", 33},
		{"flag of another command", `/handoff sa-1 --strategy merge`, `/handoff: unknown flag --strategy`, "", 14},
		{"no flags", `/quit --now`, `/quit: unknown flag --now: /quit takes no flags`, "", 6},
		{"help flag", `/converge --help`, `/converge: unknown flag --help; /help converge explains the flags`, "", 10},
		{"quoted eq is part of the name", `/resolve cf-1 --note"=x" --choose sa-1`, `/resolve: unknown flag --note=x (did you mean --note?)`, "--note", 14},

		// enums and bools
		{"enum typo", `/converge sa-1 sa-2 --strategy mrege`,
			`/converge: --strategy takes merge, vote, consensus or first_success: got "mrege" (did you mean merge?)`, "merge", 31},
		{"enum typo eq", `/converge sa-1 sa-2 --strategy=frist_success`,
			`/converge: --strategy takes merge, vote, consensus or first_success: got "frist_success" (did you mean first_success?)`, "first_success", 31},
		{"enum case", `/delegate x --agent-type builder --permission-mode acceptedits`,
			`/delegate: --permission-mode takes plan, acceptEdits or bypassPermissions: got "acceptedits" (did you mean acceptEdits?)`, "acceptEdits", 51},
		{"enum far", `/handoff sa-1 --on-failure explode`,
			`/handoff: --on-failure takes retry, abort or escalate: got "explode"`, "", 27},
		{"enum resolution", `/converge sa-1 sa-2 --strategy vote --conflict-resolution latest`,
			`/converge: --conflict-resolution takes manual, auto_accept_latest or prefer_higher_confidence: got "latest"`, "", 58},
		{"enum format", `/converge sa-1 sa-2 --strategy vote --output-format markdwon`,
			`/converge: --output-format takes json, markdown or delta_batch: got "markdwon" (did you mean markdown?)`, "markdown", 52},
		{"enum scope", `/approve pr-1 --scope forever`, `/approve: --scope takes once or subagent: got "forever"`, "", 22},
		{"bool value", `/delegate x --agent-type builder --inherit-context=flase`,
			`/delegate: --inherit-context takes true or false: got "flase" (did you mean false?)`, "false", 51},
		{"bool empty", `/handoff sa-1 --transfer-control=`, `/handoff: --transfer-control takes true or false: got ""`, "", 33},
		{"bool separate word", `/delegate x --agent-type builder --inherit-context false`,
			`/delegate: --inherit-context takes its value after =, not as a separate word (did you mean --inherit-context=false?)`,
			"--inherit-context=false", 51},
		{"choose", `/resolve cf-1 --choose bth`, `/resolve: --choose takes a subagent or convergence id like sa-3 or cv-1, both, none or edit: got "bth" (did you mean both?)`, "both", 23},
		{"choose id shape", `/resolve cf-1 --choose SA-2`, `/resolve: --choose takes a subagent or convergence id like sa-3 or cv-1, both, none or edit: got "SA-2" (did you mean sa-2?)`, "sa-2", 23},
		{"agent name", `/delegate x --agent-type Builder`,
			`/delegate: --agent-type takes an agent name like builder (lowercase letters, digits, - and _): got "Builder" (did you mean builder?)`, "builder", 25},
		{"agent name bad", `/delegate x --agent-type 9lives`,
			`/delegate: --agent-type takes an agent name like builder (lowercase letters, digits, - and _): got "9lives"`, "", 25},

		// numbers
		{"timeout unit", `/delegate x --agent-type builder --timeout 5m`, `/delegate: --timeout takes whole seconds, 1 to 86400: got "5m"`, "", 43},
		{"timeout zero", `/delegate x --agent-type builder --timeout 0`, `/delegate: --timeout takes whole seconds, 1 to 86400: got "0"`, "", 43},
		{"timeout negative", `/handoff sa-1 --timeout -5`, `/handoff: --timeout takes whole seconds, 1 to 86400: got "-5"`, "", 24},
		{"timeout too big", `/handoff sa-1 --timeout=86401`, `/handoff: --timeout takes whole seconds, 1 to 86400: got "86401"`, "", 24},
		{"timeout huge", `/handoff sa-1 --timeout=99999999999999999999999`, `/handoff: --timeout takes whole seconds, 1 to 86400: got "99999999999999999999999"`, "", 24},
		{"timeout fraction", `/handoff sa-1 --timeout 1.5`, `/handoff: --timeout takes whole seconds, 1 to 86400: got "1.5"`, "", 24},
		{"timeout plus", `/handoff sa-1 --timeout +5`, `/handoff: --timeout takes whole seconds, 1 to 86400: got "+5"`, "", 24},

		// lists
		{"tools empty", `/delegate x --agent-type builder --tools ""`,
			`/delegate: --tools takes comma-separated tool names like read_file,glob: got an empty name in ""`, "", 41},
		{"tools empty element", `/delegate x --agent-type builder --tools a,,b`,
			`/delegate: --tools takes comma-separated tool names like read_file,glob: got an empty name in "a,,b"`, "", 41},
		{"tools trailing comma", `/delegate x --agent-type builder --tools=a,`,
			`/delegate: --tools takes comma-separated tool names like read_file,glob: got an empty name in "a,"`, "", 41},
		{"tools bad name", `/delegate x --agent-type builder --tools "a,b c"`,
			`/delegate: --tools takes comma-separated tool names like read_file,glob: "b c" is not a tool name`, "", 41},

		// values missing
		{"value at end", `/delegate x --agent-type`, `/delegate: --agent-type needs a value: <type|agent-name>`, "", 24},
		{"value before flag", `/converge sa-1 sa-2 --strategy --output-format json`,
			`/converge: --strategy needs a value: merge|vote|consensus|first_success`, "", 30},
		{"value before --", `/resolve cf-1 --choose sa-1 --note -- x`, `/resolve: --note needs a value: <text>`, "", 34},

		// duplicates
		{"duplicate flag", `/converge sa-1 sa-2 --strategy merge --strategy=vote`, `/converge: --strategy given twice`, "", 37},
		{"duplicate bool", `/handoff sa-1 --transfer-control --transfer-control`, `/handoff: --transfer-control given twice`, "", 33},
		{"duplicate id", `/converge sa-1 sa-1 --strategy merge`, `/converge: sa-1 is named twice`, "", 15},
		{"duplicate wait id", `/wait cv-1 sa-2 cv-1`, `/wait: cv-1 is named twice`, "", 16},

		// required flags and positionals
		{"missing required flag", `/delegate fix it`, `/delegate: missing required flag --agent-type`, "", -1},
		{"missing strategy", `/converge sa-1 sa-2`, `/converge: missing required flag --strategy`, "", -1},
		{"missing choose", `/resolve cf-1`, `/resolve: missing required flag --choose`, "", -1},
		{"missing task", `/delegate --agent-type builder`, `/delegate: missing <task>`, "", -1},
		{"empty task", `/delegate "" --agent-type builder`, `/delegate: empty task`, "", 10},
		{"blank task", `/delegate "  " '' --agent-type builder`, `/delegate: empty task`, "", 10},
		{"missing id", `/handoff`, `/handoff: missing <subagent_id>`, "", -1},
		{"missing id with flags", `/handoff --transfer-control`, `/handoff: missing <subagent_id>`, "", -1},
		{"converge one id", `/converge sa-1 --strategy merge`, `/converge: needs at least 2 subagent ids, got 1`, "", -1},
		{"converge no id", `/converge --strategy merge`, `/converge: missing <id1> <id2> [<id3> ...]`, "", -1},
		{"wait no id", `/wait`, `/wait: missing <id...>`, "", -1},
		{"missing conflict id", `/resolve --choose sa-1`, `/resolve: missing <conflict_id>`, "", -1},
		{"missing request id", `/approve`, `/approve: missing <request_id>`, "", -1},
		{"missing id", `/apply`, `/apply: missing <subagent_id|convergence_id>`, "", -1},
		{"missing cancel id", `/cancel`, `/cancel: missing <subagent_id>`, "", -1},
		{"extra positional", `/handoff sa-1 sa-2`, `/handoff: unexpected argument "sa-2"`, "", 14},
		{"extra after flags", `/apply cv-1 --  cv-2`, `/apply: unexpected argument "cv-2"`, "", 16},
		{"extra status", `/status sa-1 sa-2`, `/status: unexpected argument "sa-2"`, "", 13},
		{"no arguments", `/agents all`, `/agents: unexpected argument "all": /agents takes no arguments`, "", 8},
		{"help topic", `/help delegte`, `/help: no command named "delegte" (did you mean delegate?)`, "delegate", 6},
		{"quoted flag is positional", `/quit "--now"`, `/quit: unexpected argument "--now": /quit takes no arguments`, "", 6},
		{"quoted -- is positional", `/cancel sa-1 '--'`, `/cancel: unexpected argument "--"`, "", 13},

		// id shapes
		{"id no dash", `/handoff sa3`, `/handoff: expected a subagent id like sa-3, got "sa3" (did you mean sa-3?)`, "sa-3", 9},
		{"id leading zero", `/cancel sa-03`, `/cancel: expected a subagent id like sa-3, got "sa-03" (did you mean sa-3?)`, "sa-3", 8},
		{"id zero", `/cancel sa-0`, `/cancel: expected a subagent id like sa-3, got "sa-0"`, "", 8},
		{"id wrong kind", `/handoff cv-1`, `/handoff: expected a subagent id like sa-3, got "cv-1"`, "", 9},
		{"id conflict", `/resolve sa-1 --choose sa-2`, `/resolve: expected a conflict id like cf-1, got "sa-1"`, "", 9},
		{"id request", `/approve 1`, `/approve: expected a permission request id like pr-1, got "1"`, "", 9},
		{"id request deny", `/deny PR-2`, `/deny: expected a permission request id like pr-1, got "PR-2" (did you mean pr-2?)`, "pr-2", 6},
		{"id convergence", `/apply cv_2`, `/apply: expected a subagent or convergence id like sa-3 or cv-1, got "cv_2" (did you mean cv-2?)`, "cv-2", 7},
		{"id status", `/status cf-1`, `/status: expected a subagent or convergence id like sa-3 or cv-1, got "cf-1"`, "", 8},
		{"id wait", `/wait sa-1 pr-1`, `/wait: expected a subagent or convergence id like sa-3 or cv-1, got "pr-1"`, "", 11},
		{"id converge", `/converge sa-1 cv-1 --strategy merge`, `/converge: expected a subagent id like sa-3, got "cv-1"`, "", 15},
		{"id too long", `/cancel sa-1234567890123456789`, `/cancel: expected a subagent id like sa-3, got "sa-1234567890123456789"`, "", 8},

		// tokenizer
		{"unterminated double", `/delegate "fix it --agent-type builder`,
			`/delegate: unterminated double quote opened at column 11`, "", 10},
		{"unterminated single", `/resolve cf-1 --choose sa-1 --note 'it`,
			`/resolve: unterminated single quote opened at column 36`, "", 35},
		{"unterminated escaped quote", `/delegate "abc\" --agent-type x`, `/delegate: unterminated double quote opened at column 11`, "", 10},
		{"unterminated unknown command", `/foo "x`, `unterminated double quote opened at column 6`, "", 5},
		{"unterminated column counts characters", `/delegate é "x`, `/delegate: unterminated double quote opened at column 13`, "", 13},
		{"trailing backslash", `/delegate fix \`, `/delegate: trailing backslash at column 15 escapes nothing`, "", 14},
		{"invalid utf8", "/delegate fix \xff --agent-type builder", `/delegate: invalid UTF-8 at column 15`, "", 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.line)
			if err == nil {
				t.Fatalf("Parse(%q) = %#v, want an error", tt.line, c)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T, want *ParseError", tt.line, err)
			}
			first, usage, _ := strings.Cut(err.Error(), "\n")
			if first != tt.want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.line, first, tt.want)
			}
			if pe.Suggestion != tt.sugg {
				t.Errorf("Parse(%q) suggestion %q, want %q", tt.line, pe.Suggestion, tt.sugg)
			}
			if pe.Column != tt.col {
				t.Errorf("Parse(%q) column %d, want %d", tt.line, pe.Column, tt.col)
			}
			// A known command always carries its usage, and only then.
			if pe.Command != "" {
				if want := "usage: " + Usage(pe.Command); usage != want || pe.Usage != Usage(pe.Command) {
					t.Errorf("Parse(%q) usage line %q, want %q", tt.line, usage, want)
				}
			} else if usage != "" || pe.Usage != "" {
				t.Errorf("Parse(%q): usage %q without a command", tt.line, usage)
			}
		})
	}
}

func TestErrorRendering(t *testing.T) {
	_, err := Parse(`/converge sa-1 sa-2 --stratgy merge`)
	want := "/converge: unknown flag --stratgy (did you mean --strategy?)\n" +
		"usage: /converge <id1> <id2> [<id3> ...] --strategy merge|vote|consensus|first_success" +
		" [--conflict-resolution manual|auto_accept_latest|prefer_higher_confidence]" +
		" [--output-format json|markdown|delta_batch]"
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
	_, err = Parse(`/converge sa-1 sa-2 --strategy mrege`)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Command != "converge" || pe.Suggestion != "merge" ||
		pe.Msg != `--strategy takes merge, vote, consensus or first_success: got "mrege"` {
		t.Errorf("enum error = %#v", pe)
	}
	_, err = Parse(`/delegte fix`)
	if err == nil || err.Error() != "unknown command /delegte (did you mean /delegate?)" {
		t.Errorf("unknown command error = %v", err)
	}
}

// Huge or hostile input is rejected (or accepted) without an echo of the whole input.
func TestErrorsStaySmall(t *testing.T) {
	huge := strings.Repeat("x", 1<<18)
	for _, line := range []string{
		"/" + huge,
		"/handoff " + huge,
		"/handoff sa-1 --" + huge,
		"/handoff sa-1 --timeout " + huge,
		"/delegate x --agent-type " + huge,
		"/delegate x --agent-type b --tools " + huge + " " + huge,
		`/delegate "` + huge,
		"/delegate x\x00\x1b[31m --agent-type b --bad\x1b[0m",
	} {
		_, err := Parse(line)
		if err == nil {
			t.Errorf("Parse(%.40q...) accepted", line)
			continue
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		if len(first) > 300 {
			t.Errorf("Parse(%.40q...) error is %d bytes long", line, len(first))
		}
		if strings.ContainsRune(first, 0x1b) || strings.ContainsRune(first, 0) {
			t.Errorf("error carries control characters: %q", first)
		}
	}
}

func TestLineTooLong(t *testing.T) {
	line := "/quit" + strings.Repeat(" ", MaxLine)
	_, err := Parse(line)
	want := "line too long: 1048581 bytes, at most 1048576"
	if err == nil || err.Error() != want {
		t.Errorf("Parse(long line) = %v, want %s", err, want)
	}
	if _, err := Parse("/quit" + strings.Repeat(" ", MaxLine-5)); err != nil {
		t.Errorf("a line of exactly MaxLine bytes: %v", err)
	}
	if got := Complete(line, 2, testLive); got != nil {
		t.Errorf("Complete(long line) = %v", got)
	}
}
