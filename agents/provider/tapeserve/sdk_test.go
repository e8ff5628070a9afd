package tapeserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"

	"github.com/summit-dev/summit/agents/provider"
)

// These tests drive the server with the official SDKs, as the agents built on them do: a
// two-turn conversation each (the tape calls a tool, the client sends its result, the tape
// answers), streaming and not, and every API must hear the same tape.

const (
	system = "You are a coding agent. Use the tools."
	prompt = "Count the TODO markers in this repo."
	result = "a.go:3: TODO\nb.go:9: TODO"
)

// grepSchema is the tool the clients declare.
var grepSchema = map[string]any{"type": "object", "properties": map[string]any{
	"pattern": map[string]any{"type": "string"}, "path": map[string]any{"type": "string"}}, "required": []any{"pattern"}}

func testTapes(t testing.TB) []*provider.Tape {
	t.Helper()
	tapes, err := provider.LoadTapes("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return tapes
}

// testServer serves the test tapes; opts.NoSleep is set unless opts.MaxSleep is.
func testServer(t testing.TB, opts Options) *httptest.Server {
	t.Helper()
	if opts.MaxSleep == 0 {
		opts.NoSleep = true
	}
	srv := httptest.NewServer(New(testTapes(t), opts))
	t.Cleanup(srv.Close)
	return srv
}

// The transcripts each client must see, in its API's words for the stop.
func want(stop1, stop2 string) [2][]string {
	return [2][]string{
		{"thinking: Search before answering.", "text: Looking for TODO markers.", `call grep {"path":".","pattern":"TODO"}`, "stop: " + stop1},
		{"text: Found 2 TODO markers.", "stop: " + stop2},
	}
}

// call renders a tool call with its arguments in a canonical form.
func callLine(name, args string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		return fmt.Sprintf("call %s (malformed %q)", name, args)
	}
	b, _ := json.Marshal(m)
	return "call " + name + " " + string(b)
}

func checkTurns(t *testing.T, got [2][]string, want [2][]string) {
	t.Helper()
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("turn %d:\n got %q\nwant %q", i+1, got[i], want[i])
		}
	}
}

func TestTapesAnthropicSDK(t *testing.T) {
	srv := testServer(t, Options{})
	client := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("sk-ant-test"), aoption.WithMaxRetries(0))
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			ctx := context.Background()
			params := anthropic.MessageNewParams{
				Model: "claude-sonnet-4-5", MaxTokens: 1024,
				System:   []anthropic.TextBlockParam{{Text: system}},
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
				Tools: []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
					Properties: grepSchema["properties"], Required: []string{"pattern"}}, "grep")},
			}
			send := func() anthropic.Message {
				t.Helper()
				if !stream {
					msg, err := client.Messages.New(ctx, params)
					if err != nil {
						t.Fatal(err)
					}
					return *msg
				}
				st := client.Messages.NewStreaming(ctx, params)
				var msg anthropic.Message
				for st.Next() {
					if err := msg.Accumulate(st.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := st.Err(); err != nil {
					t.Fatal(err)
				}
				return msg
			}
			lines := func(m anthropic.Message) (out []string, toolID string) {
				for _, b := range m.Content {
					switch b.Type {
					case "thinking":
						out = append(out, "thinking: "+b.Thinking)
						if b.Signature == "" {
							t.Error("a thinking block without a signature")
						}
					case "text":
						out = append(out, "text: "+b.Text)
					case "tool_use":
						out = append(out, callLine(b.Name, string(b.Input)))
						toolID = b.ID
					}
				}
				return append(out, "stop: "+string(m.StopReason)), toolID
			}
			first := send()
			var got [2][]string
			var id string
			got[0], id = lines(first)
			if !strings.HasPrefix(id, "toolu_") || first.Usage.InputTokens <= 0 || first.Usage.OutputTokens <= 0 || first.Model != "claude-sonnet-4-5" {
				t.Errorf("tool id %q, usage %+v, model %q", id, first.Usage, first.Model)
			}
			params.Messages = append(params.Messages, first.ToParam(),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, result, false)))
			got[1], _ = lines(send())
			checkTurns(t, got, want("tool_use", "end_turn"))
		})
	}
}

func TestTapesOpenAIChatSDK(t *testing.T) {
	srv := testServer(t, Options{})
	client := openai.NewClient(ooption.WithBaseURL(srv.URL+"/v1"), ooption.WithAPIKey("sk-test"), ooption.WithMaxRetries(0))
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			ctx := context.Background()
			params := openai.ChatCompletionNewParams{
				Model:    "gpt-5",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(prompt)},
				Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
					Name: "grep", Parameters: shared.FunctionParameters(grepSchema)})},
			}
			params.StreamOptions.IncludeUsage = openai.Bool(true)
			send := func() (openai.ChatCompletionMessage, string, string, openai.CompletionUsage) {
				t.Helper()
				var reasoning struct {
					ReasoningContent string `json:"reasoning_content"`
				}
				if !stream {
					c, err := client.Chat.Completions.New(ctx, params)
					if err != nil {
						t.Fatal(err)
					}
					json.Unmarshal([]byte(c.Choices[0].Message.RawJSON()), &reasoning)
					return c.Choices[0].Message, c.Choices[0].FinishReason, reasoning.ReasoningContent, c.Usage
				}
				st := client.Chat.Completions.NewStreaming(ctx, params)
				var acc openai.ChatCompletionAccumulator
				var thinking strings.Builder
				for st.Next() {
					ch := st.Current()
					acc.AddChunk(ch)
					for _, c := range ch.Choices {
						reasoning.ReasoningContent = ""
						json.Unmarshal([]byte(c.Delta.RawJSON()), &reasoning)
						thinking.WriteString(reasoning.ReasoningContent)
					}
				}
				if err := st.Err(); err != nil {
					t.Fatal(err)
				}
				return acc.Choices[0].Message, acc.Choices[0].FinishReason, thinking.String(), acc.Usage
			}
			lines := func(m openai.ChatCompletionMessage, finish, thinking string) (out []string) {
				if thinking != "" {
					out = append(out, "thinking: "+thinking)
				}
				if m.Content != "" {
					out = append(out, "text: "+m.Content)
				}
				for _, c := range m.ToolCalls {
					out = append(out, callLine(c.Function.Name, c.Function.Arguments))
				}
				return append(out, "stop: "+finish)
			}
			msg, finish, thinking, usage := send()
			var got [2][]string
			got[0] = lines(msg, finish, thinking)
			if len(msg.ToolCalls) != 1 || !strings.HasPrefix(msg.ToolCalls[0].ID, "call_") || usage.PromptTokens <= 0 || usage.TotalTokens != usage.PromptTokens+usage.CompletionTokens {
				t.Fatalf("calls %+v, usage %+v", msg.ToolCalls, usage)
			}
			params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage(result, msg.ToolCalls[0].ID))
			msg, finish, thinking, _ = send()
			got[1] = lines(msg, finish, thinking)
			checkTurns(t, got, want("tool_calls", "stop"))
		})
	}
}

func TestTapesOpenAIResponsesSDK(t *testing.T) {
	srv := testServer(t, Options{})
	client := openai.NewClient(ooption.WithBaseURL(srv.URL+"/v1"), ooption.WithAPIKey("sk-test"), ooption.WithMaxRetries(0))
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			ctx := context.Background()
			input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(prompt, responses.EasyInputMessageRoleUser)}
			params := func() responses.ResponseNewParams {
				return responses.ResponseNewParams{
					Model: "gpt-5-codex", Instructions: openai.String(system), Store: openai.Bool(false),
					Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
					Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "grep", Parameters: grepSchema}}},
				}
			}
			send := func() (resp responses.Response, streamed []string) {
				t.Helper()
				if !stream {
					r, err := client.Responses.New(ctx, params())
					if err != nil {
						t.Fatal(err)
					}
					return *r, nil
				}
				st := client.Responses.NewStreaming(ctx, params())
				var text, thinking, args strings.Builder
				seq := int64(0)
				for st.Next() {
					ev := st.Current()
					if ev.SequenceNumber != seq {
						t.Errorf("%s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
					}
					seq++
					switch ev.Type {
					case "response.output_text.delta":
						text.WriteString(ev.Delta)
					case "response.reasoning_summary_text.delta":
						thinking.WriteString(ev.Delta)
					case "response.function_call_arguments.delta":
						args.WriteString(ev.Delta)
					case "response.output_item.done":
						switch ev.Item.Type {
						case "reasoning":
							streamed = append(streamed, "thinking: "+thinking.String())
						case "message":
							streamed = append(streamed, "text: "+text.String())
						case "function_call":
							streamed = append(streamed, callLine(ev.Item.Name, args.String()))
						}
					case "response.completed":
						resp = ev.Response
					}
				}
				if err := st.Err(); err != nil {
					t.Fatal(err)
				}
				return resp, streamed
			}
			lines := func(r responses.Response, streamed []string) (out []string) {
				for _, item := range r.Output {
					switch item.Type {
					case "reasoning":
						for _, s := range item.AsReasoning().Summary {
							out = append(out, "thinking: "+s.Text)
						}
					case "message":
						for _, c := range item.AsMessage().Content {
							out = append(out, "text: "+c.Text)
						}
					case "function_call":
						fc := item.AsFunctionCall()
						out = append(out, callLine(fc.Name, fc.Arguments))
					}
				}
				if stream && !reflect.DeepEqual(streamed, out) {
					t.Errorf("the deltas say %q, response.completed %q", streamed, out)
				}
				return append(out, "stop: "+string(r.Status))
			}
			resp, streamed := send()
			var got [2][]string
			got[0] = lines(resp, streamed)
			if resp.Usage.InputTokens <= 0 || resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens || !strings.HasPrefix(resp.ID, "resp_") {
				t.Errorf("id %q usage %+v", resp.ID, resp.Usage)
			}
			// The next request holds the whole conversation, as Codex sends it (store: false).
			var callID string
			for _, item := range resp.Output {
				switch item.Type {
				case "reasoning":
					p := item.AsReasoning().ToParam()
					input = append(input, responses.ResponseInputItemUnionParam{OfReasoning: &p})
				case "message":
					p := item.AsMessage().ToParam()
					input = append(input, responses.ResponseInputItemUnionParam{OfOutputMessage: &p})
				case "function_call":
					p := item.AsFunctionCall().ToParam()
					callID = p.CallID
					input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCall: &p})
				}
			}
			out := responses.ResponseInputItemParamOfFunctionCallOutput(result)
			out.OfFunctionCallOutput.CallID = openai.String(callID)
			input = append(input, out)
			got[1] = lines(send())
			checkTurns(t, got, want("completed", "completed"))
		})
	}
}

func TestTapesGeminiSDK(t *testing.T) {
	srv := testServer(t, Options{})
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "test-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL + "/", RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(system, genai.RoleUser),
		Tools:             []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "grep", ParametersJsonSchema: grepSchema}}}},
	}
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			contents := []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)}
			send := func() (parts []*genai.Part, finish genai.FinishReason, usage *genai.GenerateContentResponseUsageMetadata) {
				t.Helper()
				if !stream {
					r, err := client.Models.GenerateContent(ctx, "gemini-2.5-pro", contents, cfg)
					if err != nil {
						t.Fatal(err)
					}
					return r.Candidates[0].Content.Parts, r.Candidates[0].FinishReason, r.UsageMetadata
				}
				for r, err := range client.Models.GenerateContentStream(ctx, "gemini-2.5-pro", contents, cfg) {
					if err != nil {
						t.Fatal(err)
					}
					c := r.Candidates[0]
					parts = append(parts, c.Content.Parts...)
					if c.FinishReason != "" {
						if finish != "" {
							t.Error("two chunks with a finishReason")
						}
						finish, usage = c.FinishReason, r.UsageMetadata
					}
				}
				return parts, finish, usage
			}
			lines := func(parts []*genai.Part, finish genai.FinishReason) (out []string) {
				var text, thought strings.Builder
				for _, p := range parts {
					switch {
					case p.FunctionCall != nil:
						b, _ := json.Marshal(p.FunctionCall.Args)
						out = append(out, callLine(p.FunctionCall.Name, string(b)))
					case p.Thought:
						thought.WriteString(p.Text)
					default:
						text.WriteString(p.Text)
					}
				}
				// Parts of one kind stream in pieces; joined, they read as one block.
				var head []string
				if thought.Len() > 0 {
					head = append(head, "thinking: "+thought.String())
				}
				if text.Len() > 0 {
					head = append(head, "text: "+text.String())
				}
				return append(append(head, out...), "stop: "+string(finish))
			}
			parts, finish, usage := send()
			var got [2][]string
			got[0] = lines(parts, finish)
			if usage == nil || usage.PromptTokenCount <= 0 || usage.TotalTokenCount != usage.PromptTokenCount+usage.CandidatesTokenCount {
				t.Errorf("usage %+v", usage)
			}
			var call *genai.FunctionCall
			for _, p := range parts {
				if p.FunctionCall != nil {
					call = p.FunctionCall
				}
			}
			if call == nil || !strings.HasPrefix(call.ID, "call_") {
				t.Fatalf("no function call with an id in %+v", parts)
			}
			contents = append(contents, &genai.Content{Role: genai.RoleModel, Parts: parts},
				&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
					ID: call.ID, Name: call.Name, Response: map[string]any{"output": result}}}}})
			parts, finish, _ = send()
			got[1] = lines(parts, finish)
			checkTurns(t, got, want("STOP", "STOP"))
		})
	}
}
