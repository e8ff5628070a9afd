// Package runners places subagents on remote runners through NATS JetStream (issue 29): a
// runner is `summit runner`, the same binary in a headless mode, that dials out to NATS (it
// listens on no port), registers itself, takes jobs from a work queue and runs each job's
// subagent with the same orchestrator, confinement and recording code as a local one. The
// local session (`summit run --nats URL`, the workbench `summit --nats URL`, or `runners:`
// in the user config) places a subagent with `/delegate TASK --on NAME|LABEL=VALUE|any`,
// folds the runner's events into its one recording with its own seqs, answers the
// subagent's permission requests itself and imports its changes as git.
//
// This file is the wire contract. Every name below is fixed; a change is a change of the
// protocol (Version).
//
// # Names
//
// JOB is a job id: a NUID (nats.go's nuid, [0-9A-Za-z]{22}), new for every placement (a
// --retry's second placement is a new job). NAME is a runner's name: [A-Za-z0-9_-]{1,64}
// (`--name`, default the host name with other characters replaced by '-'), unique among the
// live runners.
//
//	KV bucket     summit_runners          key NAME → Registration (JSON); bucket MaxAge is
//	                                      the lease (LeaseTTL, 6 s): a runner re-puts its key
//	                                      every LeaseTTL/4, so a dead runner's key expires
//	stream        SUMMIT_JOBS             subjects summit.jobs.*, WorkQueue retention, file
//	                                      storage: one message per job, on summit.jobs.NAME
//	                                      (placement is decided by the local session, from the
//	                                      registrations; the queue and redelivery are
//	                                      JetStream's). Each runner reads its subject with the
//	                                      durable pull consumer "runner-NAME", AckExplicit
//	stream        SUMMIT_JOB_JOB          one per job, created by the local session before the
//	                                      job is published, deleted by it once the job's end
//	                                      is folded and its result imported. Subjects:
//	                                        summit.job.JOB.ev   runner → local: the events
//	                                        summit.job.JOB.ctl  local → runner: decisions and
//	                                                            cancellation
//	object store  summit_bundles          base/JOB.bundle   the base snapshot (local → runner)
//	                                      result/JOB.bundle the change set (runner → local)
//	core subject  summit.runner.NAME.alive  liveness: the runner subscribes while connected
//	                                      and answers every request with an empty reply
//
// Streams are created with file storage and one replica by whoever needs them first (the
// local session creates SUMMIT_JOBS, the bucket and the store as well as a runner does), so a
// plain `nats-server -js` needs no setup.
//
// # Registration (KV summit_runners, key NAME)
//
//	{"name":"gpu-1","labels":{"gpu":"a100","zone":"eu"},"slots":4,"free":3,
//	 "version":"summit 0.9.0","protocol":1,"started":"2026-11-29T04:00:00Z","jobs":["JOB",…]}
//
// A runner creates its key with KV Create (a name already live is refused: "a runner named
// gpu-1 is already registered") and updates it on every job start and end and every
// LeaseTTL/4. On a clean stop it deletes its key. `/runners` and `/delegate --on`
// completion read the bucket's keys; a key that is gone is a runner that is gone.
//
// # Placement
//
// --on NAME picks that runner; --on LABEL=VALUE the registered runner with that label and the
// most free slots; --on any the one with the most free slots (ties: the name sorted first). A
// runner's free slots as the session counts them are its registration's less the session's own
// jobs placed on it that it has not started yet, and its placements picked for it whose jobs
// are not submitted yet (Client.Hold), so a burst of placements spreads before the
// registrations change. The session reuses the registrations it read for RegistrationsFresh
// (0.5 s; the queued jobs are taken off each time), so a burst of /delegate --on lines reads
// the bucket about once, not twice a line; while NATS is slow to list it (1 s, its JetStream
// API queued behind a burst's job streams) the list read less than LeaseTTL ago holds, and a
// listing cut short is an error, never an empty list. A runner with no free slot still takes
// the job: it queues in SUMMIT_JOBS until a slot frees (the consumer's MaxAckPending is the
// runner's --slots).
//
// A session sets up and cleans up at most JobAPICalls (8) jobs at once (the job's stream, its
// base bundle, the consumer that follows it, the deletes), and a runner sets up at most as many
// (the stream check, the control consumer, fetching the base bundle, tried again when NATS does
// not answer in time): nats-server 2.9 answered a burst of 300 such JetStream API calls at once
// too late for their deadlines, and in turn they take about 0.1 s each. A consumer that follows
// a job and could not be made in time is made again while the runner lives. The placements of a
// burst share one snapshot of the workspace and one bundle of it (session/live's
// runnerbase.go).
//
// # Job (a message on summit.jobs.NAME)
//
// Headers:
//
//	Summit-Job        JOB
//	Summit-Protocol   1
//	Summit-Signer     the session's public nkey (U…, nkeys user key)
//	Summit-Signature  base64url(ed25519 signature of the body by that key)
//	Nats-Msg-Id       JOB (JetStream drops a re-published duplicate)
//
// Body (JSON), Job: the session id and subagent id (for names in the runner's log only), the
// task, the agent type, permission mode, tools, timeout, the base commit and the object name
// of the base bundle, and:
//
//	agent    the effective agent definition after the session's policy (agents.Definition's
//	         JSON: name, description, body = the system prompt, model, tools, permission_mode,
//	         max_turns, temperature, …; no source path, no unknown keys). The runner runs it
//	         under the job's agent type, whatever its own files hold, so it needs no copy of
//	         the user's agent files. An ACP agent's is {kind: acp, unknown: {command, args,
//	         env, mcpServers}} from the session's trusted config or agent file, its env only
//	         the entries whose value names a variable ($VAR, ${VAR}: the runner's own); a
//	         built-in ACP agent has none (the runner's built-in of that name runs).
//	context  the context chain when --inherit-context: {playbook: [{id, section, content}],
//	         chain: [{subagent_id, agent_name, downstream_context}]}, shown in the runner's
//	         prompt as the session would show it.
//	models   "session" (model calls come back to the session, below) or "runner" (the
//	         runner's own configuration: the session is on script tapes).
//	route    with models "session": the session's routing of the agent's model
//	         (provider.JobRoute): {chain: [{provider, model, price: {input, output},
//	         reasoning_effort, thinking_budget}], providers: {NAME: {kind, model,
//	         thinking_budget, num_ctx}}}: no base URL, key, key variable or header. An ACP
//	         agent's has no chain (it picks its models itself): only providers, one per API
//	         it may speak (kinds anthropic, openai, gemini; provider.RelayRoute), which its
//	         runner relays to (Models, below).
//	env      the names (never values) of the variables the agent's env takes from the
//	         runner's environment.
//
// A job carries no secret: no environment value, no API key, no token.
//
// A runner refuses, with a Refused end event (below), a job whose signature does not verify
// or whose signer is not one of its trusted keys (`--trust KEY`, repeatable; `summit runner
// key` prints this machine's session key, kept as an nkey seed, mode 0600, in the user config
// directory as runner.nk). It acks the job message when it starts the job (the job is then
// its own) and skips one whose SUMMIT_JOB_JOB stream no longer exists (the session gave up
// on it).
//
// # Events (summit.job.JOB.ev)
//
// Each message is one event of the runner's own session of the job, as its recording line
// (session's JSON), header Summit-Kind: event; the runner's session records the delegation
// as its first subagent, and the local session folds that subagent's events into its own
// recording as the placed subagent's, with its own seqs (the runner's seq and subagent id
// are dropped). The message's stream sequence is the cursor: the local session reads with an
// ordered consumer from cursor+1 and advances the cursor after it has recorded the event, so
// after a reconnect (NATS restarted, a partition) or a consumer torn down mid-stream every
// event is folded exactly once, in order. The runner publishes each event with a JetStream
// ack and Nats-Msg-Id JOB-SEQ (runner seq), retrying until acked, so a partition delays its
// events but neither loses nor duplicates one.
//
// Permission requests: the runner's PermissionRequested is folded as a local one (a local
// request id, in the local inbox; --approve decides for `summit run`); the decision goes back
// on summit.job.JOB.ctl as {"type":"decision","request":"pr-N" (the runner's id),
// "grant":true|false,"reason":"…"} and the runner submits /approve or /deny in its session.
// Nothing on a runner is approved there: a runner's session has no --approve.
//
// The last message has header Summit-Kind: end and the body End: {outcome (success,
// failure, cancelled, timeout, refused), error, capsule, tokens, tool_calls, artifacts,
// cost_usd, base, head (commits), result (the object name of the result bundle, "" when
// nothing changed)}.
//
// # Control (summit.job.JOB.ctl)
//
//	{"type":"decision", …}               as above
//	{"type":"cancel","reason":"…"}       /cancel, the timeout, the session's end
//
// The runner reads it with an ordered consumer from the start of the job's stream, so a
// decision sent while it was cut off arrives when the link returns.
//
// # Changes
//
// The base is the workspace's snapshot (session/gitws), sent as a git bundle of that commit;
// the runner clones it into a fresh directory and runs the subagent in a worktree there, as
// summit does locally. When the subagent stops the runner commits its change set on the
// worktree's branch and puts `git bundle create result.bundle BASE..HEAD` in the store; the
// local session fetches the bundle into its private refs (refs/summit/…, gitws.KeepBundle)
// and records the change set as for a local subagent, so /diff, /apply, /undo, /converge and
// `summit blame` treat it the same.
//
// # Models
//
// By default a runner's model calls come back to the local session over core NATS, so keys
// never leave the user's machine and every call is in the local recording. The runner routes
// the agent's model with the job's route (each provider at http://summit-session.invalid/NAME/,
// a placeholder key) through runners.ModelTransport, an http.RoundTripper given to the
// provider SDKs; `summit runner --local-models` uses the runner's own configuration and
// environment instead, `--tapes DIR` plays script tapes there.
//
//	core subject  summit.job.JOB.model   runner → session, each message with reply subject
//	                                     the call's inbox (_INBOX.…); the session subscribes
//	                                     for each job it placed with models "session" while it
//	                                     follows the job, and only then
//
// A call is one request, in messages with headers Summit-Call (a NUID per call), Summit-Seq
// (0, 1, 2, … per call) and Summit-Part:
//
//	head    {"provider":"NAME","method":"POST","path":"v1/messages?beta=true","header":{…}}
//	        path is the request's path after /NAME/, with its query; the header holds no
//	        Authorization, X-Api-Key, X-Goog-Api-Key, Api-Key, Cookie or hop-by-hop header
//	body    the next ≤ 256 KiB of the request body (ModelChunk, less when the server's
//	        max_payload is smaller); at most 32 MiB in all (MaxModelRequest)
//	end     the request is complete: the session makes the call
//	cancel  the runner gave up (its context ended): the session cancels the call
//
// The session makes it with provider.Router.Forward: NAME must be a provider of its own
// configuration of kind openai, anthropic, gemini or ollama, the method POST and the path a
// model endpoint of that kind (chat/completions or responses; v1/messages[/count_tokens];
// v1beta/models/M:streamGenerateContent|generateContent|countTokens; api/chat); it adds its
// own key and the provider's configured headers, query and body fields. The response comes
// back on the inbox as messages with Summit-Call, Summit-Part and Summit-Signature:
// base64url(ed25519 signature, by the session's key, of "CALL\nSEQ\nPART\n" + body), SEQ
// counting the call's response messages from 0:
//
//	wait   sent every 5 s (ModelKeepalive) while the model has not answered
//	head   {"status":200,"header":{…}}
//	body   the next ≤ 256 KiB of the response as it streams; at most 64 MiB in all
//	end    the response is complete
//	error  text: the call could not be made (refused, no key in the session, unreachable,
//	       a lost request message) or broke off; the runner's SDK sees a transport error
//
// The runner accepts a message only when its signature verifies with the key that signed the
// job and its SEQ is the next one: a reply from anyone else, or a gap (core NATS dropped a
// message), fails the call, and the runtime retries it as a transient failure. Nothing for 30 s
// (ModelIdle) fails it too ("the session … ended or is cut off"). "No responders" (no session
// subscribes to the job's subject: it is down, e.g. killed and not yet resumed) is retried: the
// whole request is sent again, as a new call, every second (ModelRetry) for up to `summit runner
// --model-wait` (ModelWait, 60 s; 0 fails at once), so a session resumed within it (`summit
// resume` serves its jobs' calls again) takes the call; the job's cancellation ends the wait; past
// it the call fails ("the session serves no model calls for job JOB (… down for over 1m0s)") and
// the runtime's own retries apply. The session makes at most 16 calls of a
// job at once. The runner's ModelTurn events (tokens per call), ModelSwitched and its
// SubagentStop's cost (at the route's prices) are folded into the local recording; its
// ModelRouted (the placeholder route) is not: the session records its own before placing.
//
// An ACP agent (Claude Code, Codex, Gemini CLI, any acp_agents entry) makes its model calls
// itself, over its provider's HTTP API. For a job of one whose route has no chain, the runner
// (unless --local-models) opens a loopback relay for the job (ModelRelay): an HTTP server on
// 127.0.0.1, a port of its own, closed when the job ends, under a base path of 32 random hex
// digits that only the agent is told (another local process gets 404). The agent's environment
// (acp.Relay) gets, for each API of the route, ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/TOKEN,
// OPENAI_BASE_URL=…/TOKEN/v1, GOOGLE_GEMINI_BASE_URL=…/TOKEN, and ANTHROPIC_API_KEY,
// OPENAI_API_KEY, GEMINI_API_KEY set to a placeholder (RelayKey, not a secret); every other
// key, endpoint and cloud-backend variable is taken out of it (acp.RelayDropped: the runner's
// own keys, Bedrock and Vertex switches, SUMMIT_ACP_GATEWAY_URL), whatever its env entries or
// env_passthrough name. The relay takes POST requests on the APIs' model endpoints only, tells the
// API from the path (v1/messages[/count_tokens]: anthropic; v1/responses, v1/chat/completions:
// openai; v1beta/models/M:…: gemini; provider.RelayPath), drops Gemini's key parameter, and
// sends each as a call of the route's provider of that API through the job's ModelTransport:
// the same messages, signatures and limits as above (at most 16 at once: more wait on the
// runner for a slot), so the session makes it with provider.Router.Forward and its own key.
// ACP agents run in the runner's network namespace (confined by Landlock to their worktree for
// files, not for the network: they reach their model API themselves), so 127.0.0.1 reaches the
// relay. The session records each relayed call itself (session/live relaymeter.go): it passes
// the response's bytes through unchanged, as they come, and reads its usage on the way
// (provider.UsageReader: Anthropic's message_start/message_delta usage, OpenAI Responses'
// response.completed and Chat Completions' usage chunk, Gemini's last usageMetadata; SSE or
// JSON; lines over 1 MiB and JSON bodies over 4 MiB pass unread). When the body ends or is
// closed it records a ModelTurn of the subagent: turn n for its n-th call (each call is a turn,
// attempt 1: an ACP agent's turns and retries are not told apart), the tokens reported (input
// with cache reads and writes), the stop (end_turn, tool_use, max_tokens; "error" for an HTTP
// error or a body cut short) and the model the response names (else the request's). Token
// counts (count_tokens, countTokens) are not recorded. The subagent's SubagentStop carries the
// sum of those ModelTurns' tokens (not the ACP agent's own report) and their cost when every
// call that used tokens has a price: a models: route of the session's config naming the call's
// provider and its requested (or answered) model, with price. With no price the cost is absent
// (unknown, not zero); after `summit resume` the calls before the restart are counted but not
// priced, so the cost is absent. A native subagent's runner records its own ModelTurns (above),
// which the session folds: only ACP jobs are metered here. Codex reads OPENAI_BASE_URL
// for its built-in provider; a runner whose CODEX_HOME config.toml names a model provider of
// its own sends Codex's calls there instead.
//
// # Faults
//
// The local session reads a placed subagent's runner's key every second. When the key is
// gone (the lease expired: no re-put for LeaseTTL) it sends a request on
// summit.runner.NAME.alive (ProbeTimeout, 2 s), and NATS's own semantics say which case it is:
//
//   - a reply: the runner is connected (it reconnected and will renew its lease);
//   - "no responders" (twice, a second apart, so a runner reconnecting after a NATS restart is
//     not taken for dead): NATS holds no connection of the runner. A process killed with
//     kill -9 is here at once (its kernel closes the socket), so its subagents fail within
//     15 s of the kill (LeaseTTL + 1 s watch + the probes), naming the runner ("runner gpu-1
//     is gone: its lease expired and NATS holds no connection of it (killed or stopped)");
//   - a timeout: NATS still holds the runner's subscription, i.e. a connection it has not
//     found stale yet (a partition). The subagent goes on: a transcript note says "runner
//     gpu-1 is unreachable (…): waiting for it up to 3m0s", and another "runner gpu-1 is back
//     after 31s" when its key or a reply returns (its events, published with acks, then
//     arrive in order, none lost or twice). NATS drops the stale connection after its own
//     ping timeout, and the next probe then says dead. An upper bound, UnreachableMax
//     (3 minutes unreachable), fails the subagent ("unreachable for over 3m0s") whatever
//     NATS's ping settings are.
//
// With --retry a failed runner's subagent is placed again, from the same base, on another
// runner, as a new job.
// # Reattach after a restart
//
// The cursor is event-sourced: the local session records RunnerCursor {job, runner, seq}
// (session package) when it places a job (seq 0) and with every event it folds from the job's
// stream, in the same write call as that event (record.Recorder Hold/Release), so a kill
// leaves both lines or neither; a runner's permission request is recorded the same way with
// the local request. `summit resume FILE [--nats URL …]` restarts a killed session on its own
// recording (same session id, appended): each placed subagent that has not stopped is
// reattached: the session reads its job's stream again (from the start, to learn the runner
// session's subagent id) and folds only what lies after the recorded cursor, so nothing is
// folded twice or dropped; an undecided request is matched with the runner's request of the
// same tool and reason at or below the cursor and its decision goes back on the control
// subject; the lease watch, cancellation, the timeout (counted from when the subagent became
// active: the time the session was down is spent) and the change set work as before (the
// result is read into a new worktree of the recorded base). Without NATS, resume refuses and names
// each such subagent, its runner and job ("resume with --nats URL"): recording them as stopped
// would lose them for good. A delta that stream redaction holds back (it may end in the start
// of a secret) is recorded, with its cursor, by whichever event releases it. A grant for the
// whole subagent (/approve --scope subagent) made before the kill answers its later requests
// of that tool after the resume, and --retry holds: SubagentSpawned records the /delegate's
// --on and --retry (runner_on, runner_retry), so a reattached subagent whose runner dies is
// placed again from its base on another runner. `summit replay FILE [--nats URL …]` on such a
// recording asks first whether to reattach (the word reattach typed and enter, never one key;
// esc keeps the read-only replay) and then resumes exactly as `summit resume` does. A
// recording has one writer (record's flock): a recording a running summit writes is neither
// resumed nor offered for reattaching.
//
// # Clock
//
// A session with NATS runs on the wall clock even on script tapes (`summit run --nats` does not
// simulate time as a local script run does). The simulated clock runs one participant at a
// time and moves time on when every participant waits on it; a placed subagent waits on NATS,
// which the clock cannot see. Holding the clock while it waits (as an external ACP agent's run
// does) would run placed subagents one after another, and releasing it would let time jump
// past their timeouts while their jobs still run. Simulating it needs the clock to know of
// work in flight outside it (time may not pass while a job runs, other participants may), which
// it does not have yet; the wall-clock fault tests (leases, probes, the partition) are
// unaffected either way, as they run on the runner's and NATS's own clocks.
//
// # Authentication
//
// `--creds FILE` (runner and session; `runners: {nats: URL, creds: FILE}` in the user config)
// is a NATS .creds file (JWT and nkey seed), an nkey seed file, or a file of one line
// "user:password". Without credentials a runner or a session refuses a NATS URL that is not
// loopback, and refuses loopback too unless --insecure is given. Jobs are signed as above;
// events and decisions travel on subjects the account's permissions confine.
//
// # CLI
//
//	summit runner --nats URL [--name N] [--labels k=v,…] [--slots N] [--creds FILE]
//	              [--insecure] [--local-models] [--model-wait D] [--trust KEY]… [--tapes DIR]
//	summit runner key
//	summit run --nats URL [--creds FILE] [--insecure] …
//	summit --nats URL [--creds FILE] [--insecure]
//	/delegate TASK --on NAME|LABEL=VALUE|any [--retry]
//	/runners
//
// The runner prints "summit: runner NAME ready (N slots, labels …) on URL" on stderr once it
// is registered, then a line per job start and end, and "summit: runner NAME stopped" when it
// stops (SIGINT/SIGTERM: running jobs are cancelled and their ends published first).
//
// # Status
//
// Built: the names, registration and lease, placement, signed jobs, the event stream with
// its cursor, decisions over the control subject, cancellation, bundles both ways, lease
// expiry told apart by the liveness probe (kill -9: failure or --retry within 15 s; a
// partition: the subagent goes on, up to UnreachableMax), Connect's credential rules,
// `runners: {nats, creds, insecure}` in the user config (a workspace's when trusted). Tested
// on a real nats-server with runners in network namespaces (cmd/summit
// TestRunnersE2ENetns: a runner killed, one partitioned for 30 s, the server restarted).
// Models "session" (tested with an embedded NATS and a runner holding no key: cmd/summit
// TestRunnerModelsThroughSession), the agent definition and context chain in the job, ACP
// agents on runners (TestRunnerRunsACPAgent), reattaching on `summit resume` (above; cmd/summit
// TestRunnersE2EResume), an ACP agent's model calls through the session's keys (the relay;
// cmd/summit TestRunnerACPAgentModelsThroughSession: the fake ACP agent on a runner process
// with no key, an Anthropic server that refuses any other), a model call waiting out a short
// session outage (TestModelCallWaitsForSession), the workbench offering to reattach when
// `summit replay` opens a recording whose placed subagents still run (cmd/summit
// TestTerminalReplayReattach), a relayed ACP call's ModelTurn, tokens and cost (cmd/summit
// TestRunnerACPAgentModelsThroughSession, session/live TestRelayMeter, agents/provider
// TestUsageReader: every API's stream split at every byte).
package runners
