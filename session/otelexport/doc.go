// Package otelexport turns a summit session's events into OpenTelemetry traces: a recording
// read from disk (`summit export otel FILE`) or a live session (Live, fed by
// live.Options.OnEvent). One job: events in, spans out, through the official Go SDK and its
// OTLP exporters (HTTP protobuf or JSON, gRPC).
//
// # How spans are made
//
// The Converter is a fold like session.Apply: events in seq order in, spans out, with no
// clock, file or randomness. A span is built whole when the event that ends it arrives (a
// SubagentStop, a tool_result, …) and handed out then; Finish ends what is still open. The
// Pipeline then makes each one a real SDK span, started and ended at once: its times go in
// through trace.WithTimestamp, its ids through the context of Tracer.Start, where the
// provider's IDGenerator (idGenerator) reads them, and its parent as a SpanContext in that
// context. So the SDK's own span, batch processor and OTLP exporters carry spans whose ids
// and times are exactly the derived ones; the alternative, building sdktrace.ReadOnlySpan
// values with the tracetest package and calling an exporter directly, would bypass the SDK's
// batching and limits and lean on a package meant for tests.
//
// # Identity
//
// The trace id is the first 16 bytes of sha256("summit-trace\x00" + session id); a span's id
// is the first 8 bytes of sha256(session id, 0x00, seq of the event that opens it as 8
// big-endian bytes, kind), kind being session, subagent, chat, tool, permission, handoff,
// convergence or conflict. Exporting a recording twice, or exporting it after a live export
// of the same session, gives the same trace: a backend that deduplicates by id keeps one.
//
// # Span model
//
//	summit session                       root: SessionStarted … SessionEnded
//	├─ invoke_agent {agent_name}         SubagentSpawned … SubagentStop
//	│  ├─ chat {model}                   one model call (see below)
//	│  ├─ execute_tool {tool}            tool_call … tool_result (by call_id), linked to the chat
//	│  │  └─ permission {tool}           PermissionRequested … Granted/Denied
//	│  ├─ handoff {sa-N}                 HandoffInitiated … HandoffResolved
//	│  │  └─ invoke_agent …              the subagent its on_failure retry started
//	│  └─ invoke_agent …                 an external agent's child (parent_subagent_id)
//	└─ converge {cv-N}                   ConvergenceInitiated … ConvergenceComplete, linked to its members
//	   └─ conflict {cf-N}                ConflictDetected … ConflictResolved
//
// A permission wait hangs under the open tool call of the same tool that it holds up, else
// under its subagent (a bypassPermissions request before the run). Tool calls are children of
// their subagent, beside the model calls, as the GenAI conventions draw an agent's steps;
// each is linked to the model call that asked for it. Times are the events' ts. A span still
// open when the recording ends (a crash, a kill) ends at the last event's ts with
// summit.unfinished=true and status Error; SessionEnded ends everything with the session.
//
// # Model calls
//
// A subagent summit runs itself records a ModelTurn where each model call (attempt) ends,
// after its streamed text and before the tool calls it asked for, with the tokens the provider
// reported for it and how it stopped. Its chat span starts at the subagent's previous event
// (when the model was asked: its activation, the last tool result, a user message) and ends
// at the ModelTurn, with gen_ai.usage.input_tokens and gen_ai.usage.output_tokens of that call,
// gen_ai.response.finish_reasons, gen_ai.response.model when known, and status Error for a
// failed attempt (stop "error", summit.failed_attempt). The calls of a subagent sum to its
// SubagentStop tokens, which its invoke_agent span carries.
//
// Recordings without ModelTurn (an external ACP agent's stream, recordings made before it
// existed, imported sessions) are read by inference per subagent: a model call opens at the
// first output after a boundary (activation, a tool result, a "waiting for a user message"
// message), starting at the subagent's previous event, and ends at its first tool call, or at
// its last delta when it asked for none. A tool call straight after a tool result, with no
// output between, is the next call of the same reply when it comes within TurnGap (50 ms) of
// that result, and a reply of tool calls only (a new model call) when later. A SubagentError
// whose context names a provider turn ("provider X, turn N") fails the model call it ends, or
// is a failed call of its own when nothing streamed. Such calls carry no token attributes
// (the recording has none per call) rather than a guess.
//
// # Attributes
//
//	all spans        summit.seq (the opening event's seq)
//	session          summit.session.id, gen_ai.conversation.id, summit.provider,
//	                 summit.permission_mode, summit.workspace, summit.end_reason;
//	                 a fork's (SessionForked) summit.fork.parent_session_id,
//	                 summit.fork.parent_seq, summit.fork.parent_trace_id;
//	                 events changes_applied, apply_undone, command_rejected
//	invoke_agent     gen_ai.operation.name=invoke_agent, gen_ai.agent.name, gen_ai.agent.id
//	                 (sa-N), summit.subagent.id, summit.agent_type, summit.permission_mode,
//	                 summit.parent_subagent_id, summit.queued, summit.outcome,
//	                 gen_ai.usage.input_tokens, gen_ai.usage.output_tokens,
//	                 summit.tool_invocation_count, summit.cost_usd, gen_ai.provider.name and
//	                 gen_ai.system, gen_ai.request.model; events active, error, timeout,
//	                 cancelled, model_switched; status Ok (success), Error (failure, timeout)
//	chat             gen_ai.operation.name=chat, gen_ai.provider.name and gen_ai.system (the
//	                 subagent's ModelRouted/ModelSwitched provider, or "script" on script
//	                 tapes), gen_ai.request.model, summit.turn, summit.subagent.id; kind Client
//	execute_tool     gen_ai.operation.name=execute_tool, gen_ai.tool.name, gen_ai.tool.call.id,
//	                 gen_ai.tool.type=function, summit.turn, summit.tool.is_error (status
//	                 Error), summit.tool.denied with an event policy_denied
//	permission       summit.permission.request_id, .tool, .reason, .decision (granted,
//	                 denied), .scope, .by
//	handoff          summit.handoff.mode, .on_failure, .action, .retry_subagent_id,
//	                 summit.timeout_s, summit.outcome; event complete
//	converge         summit.convergence.id, .subagent_ids, .strategy, .conflict_resolution,
//	                 .output_format, .conflict_count, .resolution_count, summit.outcome
//	conflict         summit.conflict.id, .kind, .file, .sides, .method, .choice; event
//	                 review_requested
//
// # Content and secrets
//
// Nothing is added that the recording does not hold, and nothing the recording holds is
// changed: the recorder redacted secrets before they reached the disk (and a live session's
// events are the recorded ones), so the spans carry the same redacted text. By default no
// text of the conversation is exported. Options.Content (--content) adds it, as recorded: the
// task (summit.task), tool arguments and results (gen_ai.tool.call.arguments, JSON, and
// gen_ai.tool.call.result), permission arguments and the user's notes (event user_note).
// Errors are exported always (status descriptions and error events).
//
// # Live export
//
// Live.Observe folds each event on the session's goroutine (map operations, no I/O) and puts
// the spans it ended on a bounded queue (DefaultQueue); one goroutine hands them to the SDK's
// batch processor, which exports in batches. When the collector is slow or down the queue
// fills and further spans are dropped and counted (Live.Dropped), never waited for. Spans the
// exporter could not deliver (the collector down, unreachable, or refusing them) count as
// dropped too, and after Close every span the collector did not accept does: with the
// collector down, all of them. Close ends what is open, flushes, and reports export errors
// and drops ("12 of 12 spans dropped: the collector refused them or could not be reached").
//
// # Configuration
//
// Config.Resolve: the endpoint is Config.Endpoint, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// (used as is), else OTEL_EXPORTER_OTLP_ENDPOINT (a base URL, /v1/traces appended for HTTP),
// else http://localhost:4318 (HTTP) or :4317 (gRPC); an HTTP URL without a path gets
// /v1/traces. The protocol is Config.Protocol, else OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf. http:// is plaintext, https:// TLS.
// Headers, certificates and compression come from the OTEL_EXPORTER_OTLP_* variables, read by
// the SDK's exporters. The resource is service.name=summit (OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override it) and service.version. Every span is sampled: a
// sampler from the environment would cut the tree.
//
// NewJSONExporter writes spans as JSON lines (JSONSpan) for inspection (--stdout).
package otelexport
