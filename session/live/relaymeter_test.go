package live

import (
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
)

// relayed is a response as Forward returns it, its body read to the end and closed as the
// relay does.
func relayed(t *testing.T, m *relayMeter, kind, path, reqBody string, status int, body string) {
	t.Helper()
	res := &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body))}
	m.meter(kind, callInfo{provider: kind, path: path, model: requestModel(path, []byte(reqBody))}, res)
	got, err := io.ReadAll(res.Body)
	if err != nil || string(got) != body {
		t.Fatalf("the body changed: %q, %v", got, err)
	}
	res.Body.Close()
}

// An ACP agent's relayed calls become ModelTurns of its subagent numbered on from what the
// recording holds; the totals price them at the config's routes, and are unknown when one is
// not priced.
func TestRelayMeter(t *testing.T) {
	h := newHarness(t)
	cfg := provider.Config{Providers: map[string]provider.ProviderConfig{
		"anthropic": {Kind: "anthropic", KeyEnv: "K"}, "gemini": {Kind: "gemini", KeyEnv: "K"}},
		Models: map[string]provider.Route{"s": {Provider: "anthropic", Model: "claude-sonnet-4-5", Price: &provider.Price{Input: 3, Output: 15}}}}
	h.tweak = func(o *Options) { o.Models = provider.NewRouter(cfg, nil, func(string) string { return "k" }) }
	x := h.start(NewSimClock(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)))
	if _, err := x.emit("sa-1", session.SubagentSpawned{AgentType: "claude", AgentName: "claude", TaskDescription: "t", TimeoutS: 60}); err != nil {
		t.Fatal(err)
	}
	// A turn already recorded (a resumed session's): the meter counts on from it.
	if _, err := x.emit("sa-1", session.ModelTurn{Turn: 1, Attempt: 1, Tokens: session.Tokens{Input: 0, Output: 0}}); err != nil {
		t.Fatal(err)
	}
	s := &sub{id: "sa-1"}
	m := x.relayMeterOf(s)
	if x.relayMeterOf(s) != m {
		t.Fatal("a second job of the subagent gets a new meter")
	}
	if m.calls != 1 || !m.unpriced {
		t.Fatalf("a resumed meter: %d calls, unpriced %v; want 1, true (the recorded calls' cost is not known)", m.calls, m.unpriced)
	}
	m.unpriced = false // here the recorded turn used nothing: price the rest

	sse := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5-20250929\",\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":90,\"output_tokens\":1}}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":20}}\n\n"
	relayed(t, m, "anthropic", "v1/messages", `{"model":"claude-sonnet-4-5","stream":true}`, 200, sse)
	relayed(t, m, "anthropic", "v1/messages/count_tokens", `{"model":"claude-sonnet-4-5"}`, 200, `{"input_tokens":5}`)
	relayed(t, m, "anthropic", "v1/messages", `{"model":"claude-sonnet-4-5"}`, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	tokens, cost, ok := m.totals()
	if want := (100*3 + 20*15) / 1e6; !ok || tokens != (session.Tokens{Input: 100, Output: 20}) || cost == nil || math.Abs(*cost-want) > 1e-12 {
		t.Fatalf("totals %+v %v %v, want 100/20 $%g", tokens, cost, ok, want)
	}
	// A Gemini call with no price in the config: the tokens count, the cost is unknown.
	relayed(t, m, "gemini", "v1beta/models/gemini-2.5-flash:streamGenerateContent", "{}", 200,
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":4,\"candidatesTokenCount\":2}}\n\n")
	if tokens, cost, _ := m.totals(); tokens != (session.Tokens{Input: 104, Output: 22}) || cost != nil {
		t.Fatalf("totals %+v %v, want 104/22, no cost", tokens, cost)
	}

	if err := x.Close("done"); err != nil {
		t.Fatal(err)
	}
	var turns []session.ModelTurn
	for _, e := range h.read(0, x, "").events {
		if d, ok := e.Data.(session.ModelTurn); ok && e.SubagentID == "sa-1" {
			turns = append(turns, d)
		}
	}
	want := []session.ModelTurn{
		{Turn: 1, Attempt: 1},
		{Turn: 2, Attempt: 1, Tokens: session.Tokens{Input: 100, Output: 20}, Stop: provider.StopEnd, Model: "claude-sonnet-4-5-20250929"},
		{Turn: 3, Attempt: 1, Stop: "error", Model: "claude-sonnet-4-5"},
		{Turn: 4, Attempt: 1, Tokens: session.Tokens{Input: 4, Output: 2}, Stop: provider.StopEnd, Model: "gemini-2.5-flash"},
	}
	if len(turns) != len(want) {
		t.Fatalf("ModelTurns %+v, want %+v", turns, want)
	}
	for i := range want {
		if turns[i] != want[i] {
			t.Fatalf("ModelTurn %d: %+v, want %+v", i+1, turns[i], want[i])
		}
	}
}
