// Package serve exposes summit's agents as Summit Agent ABI services over HTTP (seed 002):
// `summit serve` runs it. Every invocation is a run: a session of its own, with one
// delegation, the same runtime, policy, isolation and recording as /delegate, recorded to its
// own file that replays like any session.
//
// # Endpoints
//
//	POST /rpc                  JSON-RPC 2.0: agent.invoke, agent.status, agent.schema, agent.cancel
//	POST /agents/{agentId}/rpc the same, params.agentId defaulting to the path's
//	GET  /runs/{runId}/events  the run's recorded events as they happen (text/event-stream);
//	                           ?after=SEQ resumes after the event of that seq
//	GET  /healthz              "ok"
//
// Every request needs `Authorization: Bearer <token>` when the server has a token
// (SUMMIT_SERVE_TOKEN; `summit serve` refuses to start without one unless --no-token is given
// on a loopback address, and its banner then says that is unsafe). The token is compared in
// constant time and is never logged or recorded.
//
// # What a request must be
//
// A server on loopback is still reachable from every web page the user opens, so before any
// handler, and before the token check, every request is checked (Options):
//
//   - its Host names the served address: the listening IP literal (any IP literal on a
//     wildcard address; any loopback one on loopback), "localhost" on loopback, or a name in
//     AllowHosts (`--allow-host`), whose port must be the served one. A DNS-rebinding page
//     sends its own name: 403, code -32003;
//   - an Origin, when there is one, has such a host too: a cross-site page is 403, -32003
//     ("null" included). No Origin is fine: curl and summit's remote client send none;
//   - a POST is `Content-Type: application/json` (parameters such as charset allowed), else
//     415, code -32600: a page's "simple" text/plain or form POST needs no CORS preflight;
//   - a body arrives within BodyTimeout of the headers, else 408 and the connection closes
//     (`--read-body-timeout`; the headers' own limit and the idle limit are http.Server's,
//     `--read-header-timeout` and `--idle-timeout`);
//   - LimitListener bounds the connections at once, in all and per client IP: one over the
//     per-client limit (`--max-conns-per-client`) is closed as soon as it is accepted.
//
// # Methods
//
//	agent.schema {agentId}                       → the agent's manifest (apiVersion summit.io/v1,
//	                                               kind Agent, metadata, spec.interface)
//	agent.invoke {agentId, inputs, runId?,       → an InvokeResult: status completed | failed |
//	              context?{traceId, budget{usd,    cancelled, output (the result capsule, checked
//	              tokens}}, wait?}                 against outputSchema), metrics{tokens,
//	                                               latency_ms, cost_usd}, provenance{model,
//	                                               timestamp}, verification, runId, recording;
//	                                               with wait: false at once, status running
//	agent.status {runId}                         → the same, status running while it runs
//	agent.cancel {runId}                         → the run's status after the cancellation
//
// inputs are checked against the manifest's inputSchema (draft 2020-12, or draft-07 where its
// $schema says so); a violation is error -32602 whose message names each violation (up to 20,
// "; "-separated) by the JSON pointer of the failing value after "inputs", with data.path the
// first of those (inputs/items/1/id). The delegation's task is inputs.task, else
// inputs.query, else the inputs as JSON. A budget stops the run once its model usage passes
// it (tokens counted as input plus output), checked after each model turn; the result is then
// failed with the reason. A usd budget holds only for models with a price in the config: for
// another, the run goes on and its recording says the budget could not be held.
//
// # Errors
//
//	-32700 parse error (not JSON)             -32600 invalid request (jsonrpc not "2.0", a batch,
//	-32601 method not found                          no method, a body over the limit: HTTP 413)
//	-32602 invalid params (unknown agent or    -32603 internal error
//	       run, schema violation, a used runId)
//	-32001 unauthorized (HTTP 401)            -32002 too many runs (HTTP 429, Retry-After)
//	-32003 forbidden: a foreign Host or       -32600 also: not application/json (HTTP 415),
//	       Origin (HTTP 403)                          a body that came too slowly (HTTP 408)
//
// # Events
//
// /runs/{runId}/events sends each line of the run's recording as `event: summit` with the line
// as data, from the first, as it is recorded (the recording is redacted: no secret reaches the
// stream), then `event: end` with the final InvokeResult as data.
package serve
