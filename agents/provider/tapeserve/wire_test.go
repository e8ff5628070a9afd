package tapeserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"
)

// secret is sent as every key; no answer may hold it.
const secret = "sk-SECRET-do-not-echo"

// post sends body to path with the keys every client sends, and returns the status and the
// raw answer (headers included, so a test can look for an echoed key).
func post(t testing.TB, url, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", secret)
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("x-goog-api-key", secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var h bytes.Buffer
	res.Header.Write(&h)
	if strings.Contains(string(b)+h.String(), secret) {
		t.Errorf("%s echoed the key: %s\n%s", path, h.String(), b)
	}
	return res.StatusCode, string(b)
}

// api is one wire format, as raw requests.
type api struct {
	name, path string
	// first is the first request of a conversation with task as its user text.
	first func(task string, stream bool) (path, body string)
	// afterCall is the request after a run_shell_command call, with its result.
	afterCall func(task, result string, isErr bool) (path, body string)
	// text reads the answer's text from a non-streaming body.
	text func(body string) string
	// errMsg reads the message of an error body in the API's shape ("" when not that shape).
	errMsg func(body string) string
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func dig(body string, path ...any) any {
	var v any
	json.Unmarshal([]byte(body), &v)
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func str(v any) string { s, _ := v.(string); return s }

var apis = []api{
	{
		name: "anthropic",
		first: func(task string, stream bool) (string, string) {
			return "/v1/messages", js(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream,
				"system":   []any{map[string]any{"type": "text", "text": system}},
				"messages": []any{map[string]any{"role": "user", "content": task}}})
		},
		afterCall: func(task, result string, isErr bool) (string, string) {
			return "/v1/messages", js(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": []any{
				map[string]any{"role": "user", "content": task},
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "x1", "name": "run_shell_command", "input": map[string]any{"command": "go test ./..."}}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "x1", "content": result, "is_error": isErr}}},
			}})
		},
		text: func(body string) string { return str(dig(body, "content", 0, "text")) },
		errMsg: func(body string) string {
			if dig(body, "type") != "error" || str(dig(body, "error", "type")) == "" {
				return ""
			}
			return str(dig(body, "error", "message"))
		},
	},
	{
		name: "chat",
		first: func(task string, stream bool) (string, string) {
			return "/v1/chat/completions", js(map[string]any{"model": "gpt-5", "stream": stream, "stream_options": map[string]any{"include_usage": stream},
				"messages": []any{map[string]any{"role": "system", "content": system}, map[string]any{"role": "user", "content": task}}})
		},
		afterCall: func(task, result string, isErr bool) (string, string) {
			return "/v1/chat/completions", js(map[string]any{"model": "gpt-5", "messages": []any{
				map[string]any{"role": "user", "content": task},
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "x1", "type": "function",
					"function": map[string]any{"name": "run_shell_command", "arguments": `{"command":"go test ./..."}`}}}},
				map[string]any{"role": "tool", "tool_call_id": "x1", "content": result},
			}})
		},
		text:   func(body string) string { return str(dig(body, "choices", 0, "message", "content")) },
		errMsg: openaiErrMsg,
	},
	{
		name: "responses",
		first: func(task string, stream bool) (string, string) {
			return "/v1/responses", js(map[string]any{"model": "gpt-5-codex", "stream": stream, "instructions": system, "store": false,
				"input": []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": task}}}}})
		},
		afterCall: func(task, result string, isErr bool) (string, string) {
			return "/v1/responses", js(map[string]any{"model": "gpt-5-codex", "input": []any{
				map[string]any{"role": "user", "content": task},
				map[string]any{"type": "function_call", "call_id": "x1", "name": "run_shell_command", "arguments": `{"command":"go test ./..."}`},
				map[string]any{"type": "function_call_output", "call_id": "x1", "output": result},
			}})
		},
		text:   func(body string) string { return str(dig(body, "output", 0, "content", 0, "text")) },
		errMsg: openaiErrMsg,
	},
	{
		name: "gemini",
		first: func(task string, stream bool) (string, string) {
			method := "generateContent"
			if stream {
				method = "streamGenerateContent?alt=sse"
			}
			return "/v1beta/models/gemini-2.5-pro:" + method, js(map[string]any{
				"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": system}}},
				"contents":          []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": task}}}}})
		},
		afterCall: func(task, result string, isErr bool) (string, string) {
			key := "output"
			if isErr {
				key = "error"
			}
			// No ids, as Gemini 2.5 sends calls: the response answers the call by its name.
			return "/v1beta/models/gemini-2.5-pro:generateContent", js(map[string]any{"contents": []any{
				map[string]any{"role": "user", "parts": []any{map[string]any{"text": task}}},
				map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "go test ./..."}}}}},
				map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "run_shell_command", "response": map[string]any{key: result}}}}},
			}})
		},
		text: func(body string) string { return str(dig(body, "candidates", 0, "content", "parts", 0, "text")) },
		errMsg: func(body string) string {
			if _, ok := dig(body, "error", "code").(float64); !ok || str(dig(body, "error", "status")) == "" {
				return ""
			}
			return str(dig(body, "error", "message"))
		},
	},
}

func openaiErrMsg(body string) string {
	if str(dig(body, "error", "type")) == "" {
		return ""
	}
	return str(dig(body, "error", "message"))
}

// TestTapesBranches: a tool result chooses the tape's branch over every API. An error takes
// on_error where the API flags errors (Anthropic's is_error, a Gemini response's "error");
// OpenAI's formats have no flag, so there the tape goes on as written. A "denied: " result
// (summit's runtime writes it) takes on_denied everywhere.
func TestTapesBranches(t *testing.T) {
	srv := testServer(t, Options{})
	for _, a := range apis {
		flagged := a.name == "anthropic" || a.name == "gemini"
		for _, c := range []struct {
			result string
			isErr  bool
			want   string
		}{
			{"ok\tgithub.com/x\t0.1s", false, "The tests passed."},
			{"exit status 1", true, map[bool]string{true: "The tests failed.", false: "The tests passed."}[flagged]},
			{"denied: the user said no", true, "Not allowed to run the tests."},
		} {
			path, req := a.afterCall("Run the tests.", c.result, c.isErr)
			status, body := post(t, srv.URL, path, req)
			if status != 200 || a.text(body) != c.want {
				t.Errorf("%s, result %q (error %v): %d %s, want %q", a.name, c.result, c.isErr, status, body, c.want)
			}
		}
	}
}

// TestTapesRefusals: every refusal is the API's own error shape with a status the clients
// read right, and says what is wrong; nothing panics, nothing echoes a key.
func TestTapesRefusals(t *testing.T) {
	srv := testServer(t, Options{MaxBody: 4096, NoSleep: true})
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			check := func(what string, status int, body string, wantStatus int, wantMsg ...string) {
				t.Helper()
				msg := a.errMsg(body)
				if status != wantStatus || msg == "" {
					t.Errorf("%s: %d %s, want %d in %s's error shape", what, status, body, wantStatus, a.name)
				}
				for _, w := range wantMsg {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: message %q lacks %q", what, msg, w)
					}
				}
			}
			path, body := a.first("Summarise the changelog.", false)
			status, resp := post(t, srv.URL, path, body)
			check("no tape", status, resp, 400, "no tape matches", `"Summarise the changelog."`,
				"count-todos", `task "(?i)count the todo markers"`, "testdata/tapes.yaml:4", `side-requests (agent "tape-small"`)

			for _, bad := range []string{"{", "[]", `{"model": 5}`, `"text"`, strings.Replace(body, `"Summarise the changelog."`, `{"x":1}`, 1)} {
				status, resp = post(t, srv.URL, path, bad)
				check("malformed "+bad, status, resp, 400)
			}
			status, resp = post(t, srv.URL, path, `{"pad":"`+strings.Repeat("x", 8192)+`"}`)
			check("too large", status, resp, 413, "larger than 4096 bytes")

			// The tape's first try fails as an overload; the same request again goes through.
			path, body = a.first("flaky", false)
			status, resp = post(t, srv.URL, path, body)
			wantStatus := 503
			if a.name == "anthropic" {
				wantStatus = 529
			}
			check("flaky, first try", status, resp, wantStatus, "upstream overloaded")
			if status, resp = post(t, srv.URL, path, body); status != 200 || a.text(resp) != "Recovered." {
				t.Errorf("flaky, second try: %d %s", status, resp)
			}

			// A failure after some output is an error too when nothing streams.
			path, body = a.first("Cut off, please.", false)
			status, resp = post(t, srv.URL, path, body)
			check("cut off", status, resp, wantStatus, "the tape cuts the stream here")
		})
	}
	// A turn past the tape's end.
	status, resp := post(t, srv.URL, "/v1/messages", js(map[string]any{"model": "m", "max_tokens": 10, "messages": []any{
		map[string]any{"role": "user", "content": "Count the TODO markers."},
		map[string]any{"role": "assistant", "content": "one"}, map[string]any{"role": "user", "content": "go on"},
		map[string]any{"role": "assistant", "content": "two"}, map[string]any{"role": "user", "content": "go on"},
	}}))
	if status != 400 || !strings.Contains(apis[0].errMsg(resp), "has 2 turns; the agent asked for turn 3") {
		t.Errorf("past the end: %d %s", status, resp)
	}
	status, resp = post(t, srv.URL, "/v1/responses", `{"model":"m","input":"count the todo markers","previous_response_id":"resp_1"}`)
	if status != 400 || !strings.Contains(openaiErrMsg(resp), "send the whole conversation") {
		t.Errorf("previous_response_id: %d %s", status, resp)
	}
	for _, p := range []string{"/v2/anything", "/v1beta/models/g:embedContent"} {
		if status, resp = post(t, srv.URL, p, "{}"); status != 404 || !strings.Contains(resp, "message") {
			t.Errorf("%s: %d %s", p, status, resp)
		}
	}
}

// TestTapesMidStreamFailure: a tape that fails after its first words ends each stream with
// the API's own mid-stream error, which the SDKs report after the text they got.
func TestTapesMidStreamFailure(t *testing.T) {
	srv := testServer(t, Options{})
	ctx := context.Background()
	const cut = "the tape cuts the stream here"

	ac := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	as := ac.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "m", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Cut off."))}})
	var text string
	for as.Next() {
		if ev := as.Current(); ev.Type == "content_block_delta" {
			text += ev.Delta.Text
		}
	}
	if text != "Partial" || as.Err() == nil || !strings.Contains(as.Err().Error(), "overloaded_error") || !strings.Contains(as.Err().Error(), cut) {
		t.Errorf("anthropic: text %q, err %v", text, as.Err())
	}

	oc := openai.NewClient(ooption.WithBaseURL(srv.URL+"/v1"), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
	cs := oc.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Cut off.")}})
	text = ""
	for cs.Next() {
		for _, c := range cs.Current().Choices {
			text += c.Delta.Content
		}
	}
	if text != "Partial" || cs.Err() == nil || !strings.Contains(cs.Err().Error(), cut) {
		t.Errorf("chat: text %q, err %v", text, cs.Err())
	}

	rs := oc.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "m",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Cut off.")}})
	text = ""
	var failed responses.Response
	for rs.Next() {
		switch ev := rs.Current(); ev.Type {
		case "response.output_text.delta":
			text += ev.Delta
		case "response.failed":
			failed = ev.Response
		}
	}
	if text != "Partial" || rs.Err() != nil || failed.Status != "failed" || failed.Error.Message != cut || failed.Error.Code != "server_error" {
		t.Errorf("responses: text %q, err %v, failed %+v", text, rs.Err(), failed)
	}

	gc, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL + "/", RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)}}})
	if err != nil {
		t.Fatal(err)
	}
	text, err = "", nil
	for r, e := range gc.Models.GenerateContentStream(ctx, "gemini-2.5-pro", genai.Text("Cut off."), nil) {
		if e != nil {
			err = e
			break
		}
		text += r.Text()
	}
	var ae genai.APIError
	if text != "Partial" || !errors.As(err, &ae) || ae.Code != 503 || ae.Status != "UNAVAILABLE" || ae.Message != cut {
		t.Errorf("gemini: text %q, err %#v", text, err)
	}
}

// TestTapesDeterministicAndConcurrent: the same request gets the same bytes, whether it comes
// alone or with others at once, on every API, streaming or not.
func TestTapesDeterministicAndConcurrent(t *testing.T) {
	srv := testServer(t, Options{})
	type req struct{ path, body string }
	var reqs []req
	for _, a := range apis {
		for _, stream := range []bool{true, false} {
			p, b := a.first(prompt, stream)
			reqs = append(reqs, req{p, b})
		}
		p, b := a.afterCall("Run the tests.", "exit status 1", true)
		reqs = append(reqs, req{p, b})
	}
	want := make([]string, len(reqs))
	for i, r := range reqs {
		status, body := post(t, srv.URL, r.path, r.body)
		if status != 200 {
			t.Fatalf("%s: %d %s", r.path, status, body)
		}
		want[i] = body
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(reqs))
	for n := 0; n < 8; n++ {
		for i, r := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if status, body := post(t, srv.URL, r.path, r.body); status != 200 || body != want[i] {
					errs <- fmt.Sprintf("%s: %d, and the body differs:\n%s\nfirst:\n%s", r.path, status, body, want[i])
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestTapesSleeps: a tape's waits run on the wall clock, capped by MaxSleep; NoSleep drops
// them.
func TestTapesSleeps(t *testing.T) {
	for _, c := range []struct {
		opts     Options
		min, max time.Duration
	}{
		{Options{MaxSleep: 50 * time.Millisecond}, 50 * time.Millisecond, 5 * time.Second},
		{Options{NoSleep: true}, 0, 5 * time.Second},
	} {
		srv := testServer(t, c.opts)
		path, body := apis[0].first("Take your time.", true)
		start := time.Now()
		status, resp := post(t, srv.URL, path, body)
		took := time.Since(start)
		if status != 200 || !strings.Contains(resp, `"Done"`) || !strings.Contains(resp, `" waiting."`) || took < c.min || took > c.max {
			t.Errorf("%+v: %d in %s: %s", c.opts, status, took, resp)
		}
	}
}

// TestTapesSmallEndpoints: the calls agents make besides a turn (models, token counts) answer
// in the shapes the SDKs read.
func TestTapesSmallEndpoints(t *testing.T) {
	srv := testServer(t, Options{})
	ctx := context.Background()
	ac := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	page, err := ac.Models.List(ctx, anthropic.ModelListParams{})
	if err != nil || len(page.Data) != 2 || page.Data[0].ID != "tape-small" || page.Data[1].ID != "tapes" {
		t.Errorf("anthropic models: %+v %v", page, err)
	}
	count, err := ac.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "m",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(strings.Repeat("word ", 100)))}})
	if err != nil || count.InputTokens != 125 {
		t.Errorf("count_tokens: %+v %v", count, err)
	}
	oc := openai.NewClient(ooption.WithBaseURL(srv.URL+"/v1"), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
	models, err := oc.Models.List(ctx)
	if err != nil || len(models.Data) != 2 || models.Data[0].ID != "tape-small" {
		t.Errorf("openai models: %+v %v", models, err)
	}
	gc, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := gc.Models.CountTokens(ctx, "gemini-2.5-pro", genai.Text(strings.Repeat("word ", 100)), nil)
	if err != nil || tokens.TotalTokens != 125 {
		t.Errorf("gemini countTokens: %+v %v", tokens, err)
	}
	// A side request on a model name of its own gets its own tape, on every API.
	for _, a := range apis {
		path, body := a.first("Generate a title for this conversation.", false)
		body = strings.NewReplacer(`"claude-sonnet-4-5"`, `"tape-small"`, `"gpt-5"`, `"tape-small"`, `"gpt-5-codex"`, `"tape-small"`).Replace(body)
		path = strings.Replace(path, "gemini-2.5-pro", "tape-small", 1)
		if status, resp := post(t, srv.URL, path, body); status != 200 || a.text(resp) != "ok" {
			t.Errorf("%s side request: %d %s", a.name, status, resp)
		}
	}
}

// Claude Code puts its environment section in the conversation as a message of role system:
// it joins the system prompt, is neither the task nor a turn, and the tape plays on.
func TestTapesAnthropicSystemMessage(t *testing.T) {
	srv := testServer(t, Options{})
	first := js(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": []any{
		map[string]any{"role": "user", "content": "Run the tests."},
		map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": "Working directory: /w"}}},
	}})
	status, body := post(t, srv.URL, "/v1/messages", first)
	if status != 200 || !strings.Contains(body, `"name":"run_shell_command"`) {
		t.Fatalf("first turn: %d %s", status, body)
	}
	status, body = post(t, srv.URL, "/v1/messages", js(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": []any{
		map[string]any{"role": "user", "content": "Run the tests."},
		map[string]any{"role": "system", "content": "Working directory: /w"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "run_shell_command", "input": map[string]any{"command": "go test ./..."}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}}},
	}}))
	if status != 200 || !strings.Contains(body, "The tests passed.") {
		t.Errorf("second turn: %d %s", status, body)
	}
	if status, body = post(t, srv.URL, "/v1/messages", strings.Replace(first, `"role":"system"`, `"role":"tool"`, 1)); status != 400 || !strings.Contains(body, `unexpected value \"tool\" (user, assistant or system)`) {
		t.Errorf("an unknown role: %d %s", status, body)
	}
}
