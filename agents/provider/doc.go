// Package provider puts every model backend behind one streaming interface (DESIGN §8).
//
// A Provider turns a Request (system prompt, conversation, tool specs) into a Stream of Deltas:
// text, thinking, tool calls, usage and a final stop reason. Backends:
//
//   - script: replays YAML tapes (script.go; the grammar is under Script tapes below). The
//     default when no model is configured, so the workbench runs offline and tests are
//     deterministic.
//   - openai: the OpenAI-compatible Chat Completions streaming API (OpenAI, Ollama, vLLM,
//     llama.cpp server, LM Studio, OpenRouter) through github.com/openai/openai-go/v3.
//   - anthropic: the Messages API with streaming, tool use, thinking and prompt caching through
//     github.com/anthropics/anthropic-sdk-go.
//   - gemini: the Gemini API with streaming, function calling and thinking (thought signatures
//     sent back) through google.golang.org/genai.
//   - ollama: Ollama's native /api/chat (NDJSON), which, unlike its /v1 endpoint, takes the
//     context size (num_ctx) per request.
//
// Routing (route.go) maps an agent's model to a provider honestly (never a foreign model name),
// with fallback chains, per-route reasoning settings and prices; a provider's headers, query
// parameters, body fields and key header (extras.go) apply to every request it makes.
//
// Providers never retry on their own (SDK retries are switched off): the runtime retries
// transient failures at most twice with backoff, so every attempt is a recorded SubagentError.
// An error that a retry may cure (timeout, 429, 5xx, overloaded, a connection reset, a stream
// cut mid-message) is returned as or wraps an *Error with Transient set; see IsTransient. A
// request the server refused (400, 401, 403, 404, a prompt over the context length) is not
// transient: the same request would be refused again. Error.RetryAfter carries the wait the
// server asked for (Retry-After, retry-after-ms, the rate-limit reset headers), which the
// runtime honours within the subagent's remaining time. A model that stays out of capacity
// after that (Overload: a 429 past its Retry-After budget, a 503, a 529, an overloaded error)
// moves to the next model of its fallback chain (Fallbacker), recorded as a ModelRouted with
// from and the reason (a model not found: ModelSwitched). OpenAI's 429 insufficient_quota is
// billing, not capacity: Overload says "" and IsTransient false, so it fails at once. Summit's tier models (fast, default, deep) map on kind anthropic and gemini at
// any endpoint, since their gateways serve the official names, and on kind openai only at
// api.openai.com. Anthropic's stop_reason pause_turn is StopPause: the runtime sends the
// assistant content back and the model continues its turn.
//
// Errors show the server's own message whatever shape its body has: OpenAI's
// {"error":{"message","type","code"}}, Anthropic's {"type":"error","error":{...}}, vLLM's older
// {"object":"error","message",...}, OpenRouter's numeric code and metadata.raw, and
// {"error":"text"} (LM Studio, Ollama), also when it arrives with HTTP 200 instead of a stream
// or as an error chunk in the middle of one.
//
// API keys are read from environment variables named in configuration, only when a request is
// made, and never appear in a Request, a Delta or an error message.
//
// # Script tapes
//
// A script tape stands in for a model: it plays scripted turns to a subagent (text, thinking,
// tool calls that the runtime runs for real, a final capsule) and reacts as a model would to what
// happens: a call that was denied or failed, a shell command's exit code, the user's reply.
// summit tapes --help prints this section; go doc ./agents/provider prints it too.
//
// Tapes play when no model is configured (in ~/.config/summit/config.yaml or the workspace's
// .summit/config.yaml), or with --provider script. Without --tapes, summit first takes API keys
// from the environment or a local Ollama, and plays the embedded demo tapes
// (agents/provider/tapes/default.yaml, a good file to copy) only when it finds neither; the
// workbench's header then says "demo tapes, no model". With --tapes DIR it plays your tapes
// instead, whatever the environment holds, and the header says "your tapes, no model":
//
//	summit --tapes DIR                        the workbench
//	summit run --script FILE --tapes DIR      headless; time is simulated, sleeps cost nothing
//	summit serve --tapes DIR                  the agents as Summit Agent ABI services
//	summit tapes serve --tapes DIR            a model endpoint for Claude Code, Codex, Gemini CLI
//	summit tapes check DIR|FILE...            every mistake at file:line; nothing runs
//
// DIR is one tape file, or a directory: every *.yaml and *.yml file under it, in lexical path
// order. summit tapes check reads files and directories alike, checks all of them and lists
// every mistake, with the nearest key for a misspelt one; the others stop at the first file
// with a mistake.
//
// A tape file is a YAML mapping with one key, tapes, a list of tapes. Every key:
//
//	tapes:
//	  - name: find-todos                          # required; names the tape in messages
//	    match: {agent: analyzer, task: "(?i)todo"} # agent: the agent's type or name; task: an RE2
//	                                               # regexp the task must contain; both optional
//	    rate: 20                                   # words per second for say, think and ask; 0 or
//	                                               # absent: each text at once
//	    steps:                                     # required, at least one; each step has exactly
//	                                               # one of say, think, ask, text, tool, sleep,
//	                                               # fail, capsule, end_turn
//	      - say: "Scanning for TODO markers."      # assistant text, streamed word by word
//	      - think: "Cheapest signal first."        # thinking text
//	      - tool: search_file_content              # a tool call; the runtime runs it for real
//	        args: {pattern: "TODO", path: "."}     # its arguments (a mapping; absent: {})
//	      - tool: replace
//	        raw_args: '{"path": '                  # or the exact argument text, here malformed
//	                                               # on purpose (not with args)
//	      - tool: run_shell_command
//	        args: {command: "go test ./..."}
//	        on_denied: [STEPS]                     # taken when the call was denied (policy or user)
//	        on_exit: {127: [STEPS]}                # a shell command that ended with this code (1-255)
//	        on_error: [STEPS]                      # taken when the call failed for any other reason
//	      - sleep: 2s                              # a Go duration: 500ms, 2s, 1m30s
//	      - fail: "upstream overloaded"            # a provider error
//	        transient: true                        # retried like a 429 or 5xx (default false)
//	        times: 1                               # fail only the first N attempts (0, default: always)
//	      - ask: "Which package?"                  # say, then wait for the user's reply
//	        answers:                               # the first answer whose match finds the reply
//	          - match: "^api$|server"              # RE2, case-insensitive, on the trimmed reply
//	            steps: [STEPS]
//	        otherwise: [STEPS]                     # no answer matched (absent: the tape goes on)
//	      - text: "a final message, not a capsule" # text sent at once, whatever the rate
//	      - capsule: {summary: "...", confidence: 0.8, findings: [...]}
//	                                               # the subagent's result, streamed as a fenced
//	                                               # JSON block as a model writes it
//	      - end_turn: true                         # end the turn here (end_turn); the steps after
//	                                               # it are the next turn, if the conversation
//	                                               # goes on (a SubagentStop hook blocked the stop)
//
// [STEPS] stands for a non-empty list of steps, written like the tape's own: branch steps may have
// branches of their own.
//
// Choosing a tape: the first tape, in the order read, whose match.agent is the subagent's agent
// name or type (absent: any) and whose match.task finds the task (absent: any). A subagent that no
// tape matches fails, naming its agent, type and task. In summit tapes serve, the request's model
// name is the agent and the user text before the first reply is the task.
//
// Turns: a run of consecutive tool steps ends a model turn (stop reason tool_use); the runtime
// runs the calls and asks for the next turn, which continues after them. An ask step ends a turn
// that waits for the user; an end_turn step ends one with end_turn, as the last turn ends. A tape
// asked for more turns than it has fails the subagent, naming the tape.
//
// Branches: a tool step's on_denied is taken when that call's result is a denial (IsError and
// the text starts with DeniedPrefix: a policy denial, or a user's /deny with or without a
// message); its on_exit branch for a run_shell_command whose result ends with the exit code it
// names ("[exit code N]"), before on_error; its on_error when the result IsError for any other
// reason (a failed command, bad arguments). An ask step's branch is chosen by the user's reply. A
// branch taken replaces the rest of the tape after the turn that ended with the step; when several
// tool steps of one turn have a branch that applies, the first one wins. Without a branch that
// applies, the tape goes on as written. Branch steps are cut into turns the same way.
//
// Inside an ask's branch, {{answer}} stands for the reply, as plain text (trimmed, control
// characters removed), in say, think, ask, text and capsule strings and in the strings of tool
// arguments (JSON-escaped there); in a nested ask's own branches it stands for that ask's reply.
// Elsewhere {{answer}} is left as written.
//
// Anchors (&name), aliases (*name) and merge keys (<<: *name) work as in any YAML, so a block of
// steps can be written once and reused. A tape file is UTF-8 text of at most MaxTapeFile (16 MiB);
// a bigger one is refused without being read past the cap, and one whose aliases expand past
// agents.MaxAliasNodes (100,000) nodes is refused as an alias bomb, at the alias's file:line.
//
// The provider keeps no state between turns: each turn walks the tape from the start over the
// conversation so far, taking the branch that each earlier turn's tool results or reply chose, so
// the same conversation always plays the same steps. A headless run (summit run) simulates time,
// so sleeps and rates cost nothing; the workbench and summit serve wait on the wall clock, and
// summit tapes serve caps each wait with --max-sleep.
//
// A complete tape file (it parses as printed: save it as review.yaml, then summit tapes check
// review.yaml):
//
//	tapes:
//	  # A tester whose shell may be denied, missing go, or find failing tests.
//	  - name: tester-runs-tests
//	    match: {agent: tester, task: "(?i)run the tests"}
//	    rate: 20
//	    steps:
//	      - say: "Running the tests needs the shell."
//	      - tool: run_shell_command
//	        args: {command: "go test ./..."}
//	        on_denied:
//	          - say: "The shell was denied, so I could not run anything."
//	          - capsule: {summary: "could not run the tests: the shell was denied", confidence: 0.3,
//	                      verification: {status: skipped}}
//	        on_exit:
//	          127:
//	            - say: "go is not on PATH here, so I could not run the tests."
//	            - capsule: {summary: "could not verify: go is not on PATH", confidence: 0.3,
//	                        verification: {status: skipped}}
//	        on_error:
//	          - say: "go test failed; the failing test is in the output above."
//	          - capsule: {summary: "go test ./... fails", confidence: 0.9, verification: {status: failed}}
//	      - say: "go test ./... passed."
//	      - capsule: {summary: "go test ./... passes", confidence: 0.9, verification: {status: passed}}
//
//	  # A builder that asks before it writes, and uses the reply.
//	  - name: builder-readme
//	    match: {agent: builder, task: "(?i)readme"}
//	    rate: 20
//	    steps:
//	      - think: "The README lacks one section; the user knows which."
//	      - ask: "Should I add a Usage or a Testing section to README.md?"
//	        answers:
//	          - match: "usage"
//	            steps:
//	              - tool: replace
//	                args: {path: README.md, old_string: "# shop", new_string: "# shop\n\n## Usage\n"}
//	                on_error: &cannot-edit
//	                  - fail: "could not edit README.md"
//	              - capsule: {summary: "README.md has a Usage section", confidence: 0.8}
//	        otherwise:
//	          - say: "Neither, then: I will note what you said."
//	          - tool: replace
//	            args: {path: README.md, old_string: "# shop", new_string: "# shop\n\n{{answer}}"}
//	            on_error: *cannot-edit
//	          - capsule: {summary: "README.md notes: {{answer}}", confidence: 0.6}
//
//	  # Any explorer: one overloaded attempt first, then a map of the workspace in two turns.
//	  - name: explore-any
//	    match: {agent: explore}
//	    rate: 40
//	    steps:
//	      - fail: "upstream overloaded"
//	        transient: true
//	        times: 1
//	      - say: "Mapping the workspace."
//	      - tool: glob
//	        args: {pattern: "**/*.go"}
//	      - tool: read_file
//	        raw_args: '{"path": "README.md"}'
//	      - sleep: 500ms
//	      - text: "Go files listed; README.md read."
//	      - end_turn: true
//	      - say: "Going on, as the stop hook asked."
//	      - capsule:
//	          summary: "Mapped the Go files of the workspace."
//	          confidence: 0.8
//	          findings:
//	            - {severity: info, summary: "README.md describes the package", file_refs: ["README.md"]}
package provider

import (
	_ "embed"
	"strings"
)

// docSource is this file: summit tapes --help prints its Script tapes section (TapeGuide), so
// the help and go doc say the same thing.
//
//go:embed doc.go
var docSource string

// TapeGuide is the Script tapes section of the package doc as plain text: the comment markers
// taken off, code lines indented by four spaces, the heading left out.
func TapeGuide() string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(docSource) {
		if !strings.HasPrefix(line, "//") {
			break // the package clause: the doc is over
		}
		line = strings.TrimPrefix(strings.TrimPrefix(line, "//"), " ")
		if strings.HasPrefix(line, "# ") {
			if in {
				break
			}
			in = line == "# Script tapes\n"
			continue
		}
		if !in {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "\t"); ok {
			line = "    " + rest
		}
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String()) + "\n"
}
