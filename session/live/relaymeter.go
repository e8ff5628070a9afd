package live

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
)

// relayMeter records the model calls an ACP agent on a runner makes through this session (the
// runner's loopback relay, session/runners' Models): each call's response passes through
// provider.UsageReader unchanged, and when its body ends or is closed the call is recorded as
// a ModelTurn of the subagent: turn n for its n-th call (an ACP agent's calls are not told
// apart as turns and retries here: each is a turn, attempt 1), the tokens its response
// reported, how it stopped ("error" for an HTTP error or a body cut short), the model the
// response named (else the request's). Its cost is priced by the session's config: the models:
// route naming the call's provider and its requested (or answered) model with a price. The
// subagent's SubagentStop then carries their tokens' sum and, when every call was priced, their
// cost. A native subagent's runner records its own ModelTurns (runner.go folds them): only ACP
// jobs are metered here, so no call counts twice.
type relayMeter struct {
	x  *Orchestrator
	id string // the subagent

	mu    sync.Mutex // also orders the turns' emits
	calls int        // ModelTurns recorded (a resumed session's recorded ones included)
	used  session.Tokens
	usd   float64
	// unpriced: a call had no price in the config, or (a resumed session) calls were recorded
	// before this meter whose cost it does not know.
	unpriced bool
}

// relayMeterOf is s's meter, made on its first job (a --retry's job goes on counting) from
// what the recording already holds of it (a resumed session's reattached job).
func (x *Orchestrator) relayMeterOf(s *sub) *relayMeter {
	if s.relay != nil {
		return s.relay
	}
	m := &relayMeter{x: x, id: s.id}
	x.mu.Lock()
	if sa := x.state.Subagent(s.id); sa != nil {
		m.calls, m.used, m.unpriced = sa.ModelCalls, sa.Tokens, sa.ModelCalls > 0
	}
	x.mu.Unlock()
	s.relay = m
	return m
}

// meter wraps res's body when c is a model turn: the call is recorded when it ends.
func (m *relayMeter) meter(kind string, c callInfo, res *http.Response) {
	if res == nil || res.Body == nil || !provider.Metered(kind, c.path) {
		return
	}
	status := res.StatusCode
	res.Body = provider.UsageReader(kind, c.path, res.Body, func(u provider.CallUsage) {
		m.record(c, status, u)
	})
}

// callInfo is what a relayed call's request says: its provider, path and model.
type callInfo struct {
	provider, path, model string
}

// requestModel is the model a request asks for: the body's "model" (Anthropic, OpenAI), or
// the path's models/M: (Gemini).
func requestModel(path string, body []byte) string {
	if _, after, ok := strings.Cut(path, "models/"); ok {
		m, _, _ := strings.Cut(after, ":")
		return m
	}
	var r struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &r)
	return r.Model
}

func (m *relayMeter) record(c callInfo, status int, u provider.CallUsage) {
	x := m.x
	stop := u.Stop
	if status >= 400 || !u.Complete || stop == "" && !u.Reported {
		stop = "error"
	}
	model := u.Model
	if model == "" {
		model = c.model
	}
	tokens := session.Tokens{Input: u.Usage.Input, Output: u.Usage.Output}
	m.mu.Lock()
	defer m.mu.Unlock()
	price, ok := x.o.Models.PriceOf(provider.Link{Provider: c.provider, Model: c.model})
	if !ok && u.Model != "" {
		price, ok = x.o.Models.PriceOf(provider.Link{Provider: c.provider, Model: u.Model})
	}
	if _, err := x.emit(m.id, session.ModelTurn{Turn: m.calls + 1, Attempt: 1, Tokens: tokens, Stop: stop, Model: model}); err != nil {
		return // the subagent stopped before the call's end: the stop has its totals
	}
	m.calls++
	m.used.Input += tokens.Input
	m.used.Output += tokens.Output
	if ok {
		m.usd += price.Cost(u.Usage)
	} else if tokens != (session.Tokens{}) {
		m.unpriced = true // a call that used nothing costs nothing, priced or not
	}
	if x.o.OnUsage != nil {
		x.o.OnUsage(m.id, m.used, m.usd, !m.unpriced)
	}
}

// totals are what the subagent's stop records: the recorded calls' tokens, and their cost
// when every one was priced (nil: unknown). ok is false when no call was recorded (the
// runner's own report stands).
func (m *relayMeter) totals() (t session.Tokens, cost *float64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == 0 {
		return t, nil, false
	}
	if !m.unpriced {
		usd := m.usd
		cost = &usd
	}
	return m.used, cost, true
}
