package runtime

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
)

// TestLoopContinuesAfterPauseTurn: Anthropic ends a long turn with stop_reason pause_turn,
// which is not the answer. The loop sends the assistant content back as it is, as the last
// message (no new user message, no trailing white space, which the API refuses there), and the
// model's continuation is the answer; the answer's text starts with the paused text.
func TestLoopContinuesAfterPauseTurn(t *testing.T) {
	streams := recordedStreams(t)
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, body, _ := rec.request(r)
		msgs, _ := body["messages"].([]any)
		switch n {
		case 1:
			writeSSE(w, streams["anthropic_pause_turn.sse"])
		case 2:
			last, _ := msgs[len(msgs)-1].(map[string]any)
			content, _ := last["content"].([]any)
			if len(msgs) != 2 || last["role"] != "assistant" || len(content) != 1 {
				writeJSON(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"unexpected continuation"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)
				return
			}
			if text, _ := content[0].(map[string]any)["text"].(string); text != "I have read the first half of the module." {
				writeJSON(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"final assistant content cannot end with trailing whitespace"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)
				return
			}
			writeSSE(w, streams["anthropic_final.sse"])
		default:
			writeJSON(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"one request too many"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)
		}
	}))
	defer srv.Close()
	prov, _ := provider.NewAnthropic(provider.AnthropicConfig{BaseURL: srv.URL, Getenv: func(string) string { return "sk-ant-test" }})
	res := runLoop(t, prov, rec, nil, agents.ModePlan, t.TempDir())
	if res.Outcome != session.OutcomeSuccess || res.Capsule == nil || res.Capsule.Summary != "created marker" {
		t.Fatalf("outcome %s (%v), capsule %+v, errors %+v", res.Outcome, res.Err, res.Capsule, rec.errors())
	}
	if len(rec.bodies) != 2 {
		t.Fatalf("%d requests", len(rec.bodies))
	}
	var stops []string
	for _, e := range rec.events {
		if mt, ok := e.(session.ModelTurn); ok {
			stops = append(stops, mt.Stop)
		}
	}
	if len(stops) != 2 || stops[0] != "pause_turn" || stops[1] != "end_turn" {
		t.Errorf("model turns stopped %q", stops)
	}
}
