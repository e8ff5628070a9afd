package tapeserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/summit-dev/summit/agents/provider"
)

// The Gemini API (https://ai.google.dev/api/generate-content). Google's SDKs send camelCase
// field names; its REST examples use snake_case, which the API takes too: both are read.

type gemRequest struct {
	Contents           []gemContent `json:"contents"`
	SystemInstruction  *gemContent  `json:"systemInstruction"`
	SystemInstruction_ *gemContent  `json:"system_instruction"`
	Tools              []struct {
		FunctionDeclarations  []gemFunc `json:"functionDeclarations"`
		FunctionDeclarations_ []gemFunc `json:"function_declarations"`
	} `json:"tools"`
	GenerationConfig  *gemGenConfig `json:"generationConfig"`
	GenerationConfig_ *gemGenConfig `json:"generation_config"`
	// countTokens may wrap a whole request.
	GenerateContentRequest *gemRequest `json:"generateContentRequest"`
}

// gemGenConfig is the part of generationConfig that asks for JSON output: Gemini CLI's side
// checks (next speaker, loop detection, routing) set responseMimeType application/json and a
// responseJsonSchema.
type gemGenConfig struct {
	ResponseMimeType    string         `json:"responseMimeType"`
	ResponseMimeType_   string         `json:"response_mime_type"`
	ResponseJSONSchema  map[string]any `json:"responseJsonSchema"`
	ResponseJSONSchema_ map[string]any `json:"response_json_schema"`
	ResponseSchema      map[string]any `json:"responseSchema"`
	ResponseSchema_     map[string]any `json:"response_schema"`
}

// schema is the JSON schema the request asks its answer to follow, or nil.
func (g *gemGenConfig) schema() map[string]any {
	if g == nil || (g.ResponseMimeType+g.ResponseMimeType_) != "application/json" {
		return nil
	}
	for _, sc := range []map[string]any{g.ResponseJSONSchema, g.ResponseJSONSchema_, g.ResponseSchema, g.ResponseSchema_} {
		if sc != nil {
			return sc
		}
	}
	return nil
}

type gemContent struct {
	Role  string    `json:"role"`
	Parts []gemPart `json:"parts"`
}

type gemPart struct {
	Text              string   `json:"text"`
	Thought           bool     `json:"thought"`
	FunctionCall      *gemCall `json:"functionCall"`
	FunctionCall_     *gemCall `json:"function_call"`
	FunctionResponse  *gemResp `json:"functionResponse"`
	FunctionResponse_ *gemResp `json:"function_response"`
}

type gemCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gemResp struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type gemFunc struct {
	Name                  string         `json:"name"`
	Description           string         `json:"description"`
	Parameters            map[string]any `json:"parameters"`
	ParametersJSONSchema  map[string]any `json:"parametersJsonSchema"`
	ParametersJSONSchema_ map[string]any `json:"parameters_json_schema"`
}

func or[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func (s *server) gemini(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	switch method {
	case "generateContent", "streamGenerateContent", "countTokens":
	default:
		gemError(w, http.StatusNotFound, fmt.Sprintf("tapeserve has no method %q; it answers generateContent, streamGenerateContent and countTokens", method))
		return
	}
	var in gemRequest
	if status, msg := s.readBody(w, r, &in); status != 0 {
		gemError(w, status, msg)
		return
	}
	if method == "countTokens" && in.GenerateContentRequest != nil {
		in = *in.GenerateContentRequest
	}
	model = strings.TrimPrefix(model, "models/")
	if model == "" {
		gemError(w, http.StatusBadRequest, "the path names no model: /v1beta/models/{model}:"+method)
		return
	}
	if method != "countTokens" && len(in.Contents) == 0 {
		gemError(w, http.StatusBadRequest, "* GenerateContentRequest.contents: contents is not specified")
		return
	}
	var sys []string
	if si := or(in.SystemInstruction, in.SystemInstruction_); si != nil {
		for _, p := range si.Parts {
			sys = append(sys, p.Text)
		}
	}
	var v convo
	// Calls that came without an id get one by position; a functionResponse without an id
	// answers the first call of the latest model turn with its name not answered yet.
	var open []provider.ToolCall
	for i, ct := range in.Contents {
		switch ct.Role {
		case "model":
			a := v.assistant()
			if len(a.ToolCalls) == 0 {
				open = nil
			}
			for j, p := range ct.Parts {
				fc := or(p.FunctionCall, p.FunctionCall_)
				switch {
				case fc != nil:
					id := fc.ID
					if id == "" {
						id = fmt.Sprintf("gemini-call-%d-%d", i, j)
					}
					v.toolCall(id, fc.Name, argsText(fc.Args))
					open = append(open, provider.ToolCall{ID: id, Name: fc.Name})
				case p.Thought:
					v.thinking(p.Text, "")
				default:
					v.text(p.Text)
				}
			}
		case "user", "":
			var text []string
			flush := func() {
				if len(text) > 0 {
					v.user(strings.Join(text, "\n"))
					text = nil
				}
			}
			for _, p := range ct.Parts {
				fr := or(p.FunctionResponse, p.FunctionResponse_)
				if fr == nil {
					if p.Text != "" {
						text = append(text, p.Text)
					}
					continue
				}
				flush()
				id := fr.ID
				if id == "" {
					for k, oc := range open {
						if oc.Name == fr.Name {
							id = oc.ID
							open = append(open[:k:k], open[k+1:]...)
							break
						}
					}
				}
				out, isErr := gemResult(fr.Response)
				v.result(id, fr.Name, out, isErr)
			}
			flush()
		default:
			gemError(w, http.StatusBadRequest, fmt.Sprintf("* GenerateContentRequest.contents[%d].role: %q is not user or model", i, ct.Role))
			return
		}
	}
	var tools []provider.ToolSpec
	for _, t := range in.Tools {
		for _, f := range append(t.FunctionDeclarations, t.FunctionDeclarations_...) {
			params := f.ParametersJSONSchema
			if params == nil {
				params = f.ParametersJSONSchema_
			}
			if params == nil {
				params = f.Parameters
			}
			tools = append(tools, provider.ToolSpec{Name: f.Name, Description: f.Description, Parameters: params})
		}
	}
	c := &call{api: "gemini", model: model, stream: method == "streamGenerateContent"}
	s.finish(c, sys, v.msgs, tools)
	if method == "countTokens" {
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": c.input})
		return
	}
	gs := &gemStream{w: w, c: c}
	if schema := or(in.GenerationConfig, in.GenerationConfig_).schema(); schema != nil && !s.namesModel(c.model) {
		s.sideCheck(w, c, gs, schema)
		return
	}
	var wr writer = nopWriter{}
	if c.stream {
		wr = gs
	}
	o, err := s.play(r.Context(), c, wr)
	if rf, ok := err.(*refusal); ok {
		s.log("gemini model %q: %d %s", c.model, rf.status, rf.msg)
		gemError(w, rf.status, rf.msg)
		return
	}
	if c.stream || err != nil {
		return
	}
	var parts []any
	for _, b := range o.blocks {
		parts = append(parts, gs.part(b, b.text))
	}
	writeJSON(w, http.StatusOK, gs.chunk(parts, o, true))
}

// gemResult reads a functionResponse's response: its "output" (or "error", then it is an
// error), else the whole object as JSON.
func gemResult(raw json.RawMessage) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return string(raw), false
	}
	text := func(v json.RawMessage) string {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return string(v)
	}
	if e, ok := obj["error"]; ok {
		return text(e), true
	}
	if o, ok := obj["output"]; ok {
		t := text(o)
		return t, deniedText(t)
	}
	return string(raw), false
}

// gemError writes Google's error shape.
func gemError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": grpcStatus(status)}})
}

// gemStream writes streamGenerateContent's events. Each part goes out in a chunk of its own,
// one chunk behind, so the last one carries the finishReason and the usage, as Google's do
// (Gemini CLI drops a chunk whose only part is empty text).
type gemStream struct {
	w       http.ResponseWriter
	c       *call
	e       *sse
	pending map[string]any
}

func (s *gemStream) part(b *block, text string) map[string]any {
	switch b.kind {
	case thinkingBlock:
		return map[string]any{"text": text, "thought": true}
	case toolBlock:
		return map[string]any{"functionCall": map[string]any{"id": s.c.id("call_", b.id), "name": b.name, "args": toolInput(b.args)}}
	}
	return map[string]any{"text": text}
}

func (s *gemStream) chunk(parts []any, o *out, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	ch := map[string]any{"candidates": []any{cand}, "modelVersion": s.c.model, "responseId": s.c.id("", s.c.req.Turn)}
	if last {
		finish := "STOP" // a turn with function calls ends with STOP too
		if o.stop == provider.StopMaxTokens {
			finish = "MAX_TOKENS"
		}
		cand["finishReason"] = finish
		ch["usageMetadata"] = map[string]any{"promptTokenCount": o.usage.Input, "candidatesTokenCount": o.usage.Output,
			"totalTokenCount": o.usage.Input + o.usage.Output}
	}
	return ch
}

func (s *gemStream) send(ch map[string]any) error {
	if s.pending != nil {
		if err := s.e.event("", s.pending); err != nil {
			return err
		}
	}
	s.pending = ch
	return nil
}

func (s *gemStream) begin(*out) error {
	s.e = startSSE(s.w, "\r\n")
	return nil
}

func (s *gemStream) open(o *out, i int) error {
	if b := o.blocks[i]; b.kind == toolBlock {
		return s.send(s.chunk([]any{s.part(b, "")}, o, false))
	}
	return nil
}

func (s *gemStream) delta(o *out, i int, frag string) error {
	return s.send(s.chunk([]any{s.part(o.blocks[i], frag)}, o, false))
}

func (s *gemStream) close(*out, int) error { return nil }

func (s *gemStream) end(o *out) error {
	last := s.pending
	s.pending = nil
	if last == nil {
		last = s.chunk([]any{}, o, true)
	} else {
		fin := s.chunk(nil, o, true)
		last["usageMetadata"] = fin["usageMetadata"]
		last["candidates"].([]any)[0].(map[string]any)["finishReason"] = fin["candidates"].([]any)[0].(map[string]any)["finishReason"]
	}
	return s.e.event("", last)
}

func (s *gemStream) fail(o *out, pe *provider.Error) error {
	if err := s.send(nil); err != nil {
		return err
	}
	status := http.StatusBadRequest
	if pe.Transient {
		status = http.StatusServiceUnavailable
	}
	return s.e.event("", map[string]any{"error": map[string]any{"code": status, "message": pe.Msg, "status": grpcStatus(status)}})
}

func (s *server) geminiListModels(w http.ResponseWriter, r *http.Request) {
	var models []any
	for _, id := range s.models() {
		models = append(models, gemModel(id))
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

func (s *server) geminiGetModel(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, gemModel(strings.TrimPrefix(r.PathValue("id"), "models/")))
}

func gemModel(id string) map[string]any {
	return map[string]any{
		"name":                       "models/" + id,
		"displayName":                id,
		"version":                    "tapes",
		"supportedGenerationMethods": []string{"generateContent", "streamGenerateContent", "countTokens"},
		"inputTokenLimit":            1 << 20,
		"outputTokenLimit":           65536,
	}
}

// namesModel reports whether a tape's match.agent is model itself.
func (s *server) namesModel(model string) bool {
	return slices.ContainsFunc(s.tapes, func(t *provider.Tape) bool { return t.Agent == model })
}

// sideCheck answers a request for JSON that follows schema (Gemini CLI's next-speaker, loop
// detection and routing checks, which carry the main conversation and so would match its tape
// and run past its end) with schemaDefault's value, when no tape names the request's model.
// Without an answer Gemini CLI retries such a check for about two minutes before it gives up.
func (s *server) sideCheck(w http.ResponseWriter, c *call, gs *gemStream, schema map[string]any) {
	b, _ := marshal(schemaDefault(schema, 0))
	text := string(b)
	s.log("gemini model %q: side check (a JSON schema answer) given the default %s; no tape names this model", c.model, text)
	o := &out{blocks: []*block{{kind: textBlock, text: text}}, stop: provider.StopEnd, usage: provider.Usage{Input: c.input, Output: 1}}
	if !c.stream {
		writeJSON(w, http.StatusOK, gs.chunk([]any{gs.part(o.blocks[0], text)}, o, true))
		return
	}
	if gs.begin(o) == nil && gs.delta(o, 0, text) == nil {
		gs.end(o)
	}
}

// schemaDefault is the least committal value of a JSON schema (Gemini's Type names are upper
// case): an enum's first value (next_speaker "user", the routers' flash model), the minimum
// or 0 for a number (a loop detector's confidence), false, "", [] and an object with every
// property. Gemini CLI reads these as "nothing to do": the user speaks next, no loop.
func schemaDefault(schema map[string]any, depth int) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	if types, ok := schema["type"].([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch strings.ToLower(typ) {
	case "string":
		return ""
	case "number", "integer":
		if m, ok := schema["minimum"].(float64); ok {
			return m
		}
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	case "null":
		return nil
	}
	obj := map[string]any{}
	if props, ok := schema["properties"].(map[string]any); ok && depth < 8 {
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				obj[name] = schemaDefault(ps, depth+1)
			}
		}
	}
	return obj
}
