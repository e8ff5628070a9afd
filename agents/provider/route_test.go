package provider

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFamily(t *testing.T) {
	for _, c := range []struct{ model, kind, tier string }{
		{"claude-haiku-4-5", "anthropic", TierFast}, {"claude-sonnet-4-5", "anthropic", TierDefault}, {"claude-opus-4-1", "anthropic", TierDeep},
		{"gpt-5-mini", "openai", TierFast}, {"gpt-5", "openai", TierDefault}, {"gpt-4o", "openai", TierDefault}, {"o3", "openai", TierDeep},
		{"o4-mini", "openai", TierFast}, {"gpt-5-pro", "openai", TierDeep},
		{"gemini-3-pro-preview", "gemini", TierDefault}, {"gemini-3-flash-preview", "gemini", TierFast}, {"gemini-2.5-pro", "gemini", TierDefault},
		{"llama3", "", ""}, {"qwen3-8b", "", ""}, {"openai/gpt-5", "", ""}, {"omni", "", ""},
	} {
		if k, tier := Family(c.model); k != c.kind || tier != c.tier {
			t.Errorf("Family(%q) = %q %q, want %q %q", c.model, k, tier, c.kind, c.tier)
		}
	}
}

// A model name is never sent to a provider that does not serve it: under --provider, or with
// no provider of its family configured, it maps to the target's model of the same tier, and
// the resolution says why.
func TestRouteHonest(t *testing.T) {
	claude := Config{Providers: map[string]ProviderConfig{"claude": {Kind: "anthropic", ThinkingBudget: 2048}}, DefaultProvider: "claude"}
	withGemini := Config{Providers: map[string]ProviderConfig{"claude": {Kind: "anthropic"}, "g": {Kind: "gemini"}}, DefaultProvider: "claude",
		Models: map[string]Route{"deep": {Provider: "claude", Model: "claude-opus-4-1", Fallbacks: []string{"claude-sonnet-4-5", "g/gemini-2.5-pro"}}}}
	local := Config{Providers: map[string]ProviderConfig{"local": {Kind: "openai", BaseURL: "http://localhost:8080/v1", Model: "qwen3-8b"}}, DefaultProvider: "local"}
	// Gateways: an Anthropic or Gemini proxy serves the official names; an OpenAI-compatible
	// server does not.
	gateways := Config{Providers: map[string]ProviderConfig{
		"gw":   {Kind: "anthropic", BaseURL: "https://llm-gateway.corp.example/anthropic"},
		"ggw":  {Kind: "gemini", BaseURL: "https://llm-gateway.corp.example/gemini"},
		"oaic": {Kind: "openai", BaseURL: "https://llm-gateway.corp.example/openai/v1"},
	}, DefaultProvider: "gw"}
	for _, c := range []struct {
		name   string
		c      Config
		force  string
		model  string
		want   Link
		why    string
		fall   []Link
		notemp bool
		err    string
	}{
		{name: "forced anthropic, gemini pro", c: Config{}, force: "anthropic", model: "gemini-3-pro-preview",
			want: Link{"anthropic", "claude-sonnet-4-5"}, why: "gemini-3-pro-preview is a gemini model, which anthropic does not serve (--provider anthropic overrides the agent's choice); as a default-tier model it maps to claude-sonnet-4-5"},
		{name: "forced anthropic, gemini flash", c: Config{}, force: "anthropic", model: "gemini-3-flash-preview", want: Link{"anthropic", "claude-haiku-4-5"}},
		{name: "forced anthropic, deep", c: Config{}, force: "anthropic", model: "deep", want: Link{"anthropic", "claude-opus-4-1"}},
		{name: "forced anthropic, its own name", c: Config{}, force: "anthropic", model: "claude-opus-4-1", want: Link{"anthropic", "claude-opus-4-1"}},
		{name: "forced ollama, no model for the tier", c: Config{}, force: "ollama", model: "gemini-3-pro-preview",
			err: "provider ollama has no model for the default tier: set models.default"},
		{name: "forced ollama, a local name", c: Config{}, force: "ollama", model: "llama3", want: Link{"ollama", "llama3"}},
		{name: "forced openai, o3 drops temperature", c: Config{}, force: "openai", model: "deep", want: Link{"openai", "o3"}, notemp: true},
		{name: "forced openai, gpt-4o keeps it", c: Config{}, force: "openai", model: "gpt-4o", want: Link{"openai", "gpt-4o"}},
		{name: "anthropic only, gemini name", c: claude, model: "gemini-3-pro-preview", want: Link{"claude", "claude-sonnet-4-5"},
			why: "no provider of its family is configured", notemp: true},
		{name: "gemini configured serves its own", c: withGemini, model: "gemini-3-pro-preview", want: Link{"g", "gemini-3-pro-preview"},
			fall: []Link{{"g", "gemini-2.5-pro"}}},
		{name: "gemini 3 flash falls back to 2.5 flash", c: withGemini, model: "gemini-3-flash", want: Link{"g", "gemini-3-flash"},
			fall: []Link{{"g", "gemini-2.5-flash"}}},
		{name: "gemini 3 flash preview falls back to 2.5 flash", c: withGemini, model: "gemini-3-flash-preview", want: Link{"g", "gemini-3-flash-preview"},
			fall: []Link{{"g", "gemini-2.5-flash"}}},
		{name: "gemini 3 pro falls back to 2.5 pro", c: withGemini, model: "gemini-3-pro", want: Link{"g", "gemini-3-pro"},
			fall: []Link{{"g", "gemini-2.5-pro"}}},
		{name: "route with fallbacks", c: withGemini, model: "deep", want: Link{"claude", "claude-opus-4-1"},
			fall: []Link{{"claude", "claude-sonnet-4-5"}, {"g", "gemini-2.5-pro"}}},
		{name: "local server, foreign name", c: local, model: "gpt-5", want: Link{"local", "qwen3-8b"}, why: "maps to qwen3-8b (providers.local.model)"},
		{name: "local server, alias", c: local, model: "fast", want: Link{"local", "qwen3-8b"}},
		{name: "local server, its own name", c: local, model: "mistral-small", want: Link{"local", "mistral-small"}},
		{name: "anthropic gateway, fast tier", c: gateways, model: "fast", want: Link{"gw", "claude-haiku-4-5"},
			why: "default_provider: the fast tier of gw is claude-haiku-4-5 (summit's fast-tier model for anthropic; gw's base_url is a gateway of kind anthropic, which serves the official names)"},
		{name: "anthropic gateway, forced, a gemini name", c: gateways, force: "gw", model: "gemini-3-pro-preview", want: Link{"gw", "claude-sonnet-4-5"}},
		{name: "gemini gateway, deep tier", c: gateways, force: "ggw", model: "deep", want: Link{"ggw", "gemini-3-pro-preview"},
			why: "gateway of kind gemini", fall: []Link{{"ggw", "gemini-2.5-pro"}}},
		{name: "openai-compatible gateway needs a model", c: gateways, force: "oaic", model: "default",
			err: "provider oaic has no model for the default tier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewRouter(c.c, NewScript(ScriptConfig{}), func(string) string { return "k" })
			if c.force != "" {
				r.forced = c.force
			}
			res, err := r.Route(c.model)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Route(%q) = %+v, %v; want error %q", c.model, res, err, c.err)
				}
				return
			}
			if err != nil || res.Link != c.want || !strings.Contains(res.Why, c.why) || (res.DropTemperature != "") != c.notemp {
				t.Fatalf("Route(%q) = %+v, %v; want %v (why %q, drop temperature %v)", c.model, res, err, c.want, c.why, c.notemp)
			}
			if len(res.Fallbacks) != len(c.fall) {
				t.Fatalf("fallbacks %v, want %v", res.Fallbacks, c.fall)
			}
			for i := range c.fall {
				if res.Fallbacks[i] != c.fall[i] {
					t.Errorf("fallback %d = %v, want %v", i, res.Fallbacks[i], c.fall[i])
				}
			}
		})
	}
}

// fakeModel answers as a provider whose models are in have; others are a 404, as the APIs say
// it (at the request, or as the stream's first error).
type fakeModel struct {
	name    string
	have    map[string]bool
	late    bool // report a missing model as the stream's first error
	streams []string
	signed  []int // thinking blocks in each request's history
}

func (f *fakeModel) Name() string { return f.name }
func (f *fakeModel) Stream(_ context.Context, req Request) (Stream, error) {
	f.streams = append(f.streams, req.Model)
	n := 0
	for _, m := range req.Messages {
		n += len(m.Thinking)
	}
	f.signed = append(f.signed, n)
	if !f.have[req.Model] {
		err := &Error{Provider: f.name, Status: 404, Msg: "model " + req.Model + " not found"}
		if f.late {
			return &sliceStream{err: err}, nil
		}
		return nil, err
	}
	return &sliceStream{ds: []Delta{{Kind: DeltaText, Text: "hi from " + req.Model}, {Kind: DeltaStop, StopReason: StopEnd}}}, nil
}

type sliceStream struct {
	ds  []Delta
	err error
}

func (s *sliceStream) Next() (Delta, error) {
	if s.err != nil {
		return Delta{}, s.err
	}
	if len(s.ds) == 0 {
		return Delta{}, io.EOF
	}
	d := s.ds[0]
	s.ds = s.ds[1:]
	return d, nil
}
func (s *sliceStream) Close() error { return nil }

// When a model is not found, the next of the chain answers, the switch is reported once, and
// the run stays on it; an error a retry may cure does not switch.
func TestFallbackChain(t *testing.T) {
	for _, late := range []bool{false, true} {
		fakes := map[string]*fakeModel{
			"g": {name: "g", have: map[string]bool{"gemini-2.5-pro": true}, late: late},
		}
		factories["fake"] = func(name string, _ ProviderConfig, _ func(string) string) (Provider, error) { return fakes[name], nil }
		r := NewRouter(Config{Providers: map[string]ProviderConfig{"g": {Kind: "fake"}}, DefaultProvider: "g",
			Models: map[string]Route{"default": {Provider: "g", Model: "gemini-3-pro-preview", Fallbacks: []string{"gemini-2.5-pro"}}}}, nil, nil)
		p, model, err := r.Resolve("default")
		if err != nil || model != "gemini-3-pro-preview" {
			t.Fatal(model, err)
		}
		var switches []string
		ctx := WithSwitchReporter(context.Background(), func(from, to Link, cause error) {
			switches = append(switches, from.String()+" -> "+to.String()+": "+cause.Error())
		})
		history := []Message{{Role: RoleUser, Text: "go"}, {Role: RoleAssistant, Text: "ok", Thinking: []Thinking{{Text: "hm", Signature: "sig-of-gemini-3"}}}}
		for turn := range 2 {
			st, err := p.Stream(ctx, Request{Model: model, Messages: history})
			if err != nil {
				t.Fatalf("late %v turn %d: %v", late, turn, err)
			}
			d, err := st.Next()
			if err != nil || d.Text != "hi from gemini-2.5-pro" {
				t.Fatalf("late %v turn %d: %+v %v", late, turn, d, err)
			}
		}
		if len(switches) != 1 || !strings.Contains(switches[0], "g/gemini-3-pro-preview -> g/gemini-2.5-pro: g: HTTP 404: model gemini-3-pro-preview not found") {
			t.Errorf("late %v: switches %q", late, switches)
		}
		if got := strings.Join(fakes["g"].streams, ","); got != "gemini-3-pro-preview,gemini-2.5-pro,gemini-2.5-pro" {
			t.Errorf("late %v: requests %s", late, got)
		}
		// The fallback never sees the first model's signed thinking.
		if got := fakes["g"].signed; len(got) != 3 || got[0] != 1 || got[1] != 0 || got[2] != 0 || len(history[1].Thinking) != 1 {
			t.Errorf("late %v: thinking blocks sent %v", late, got)
		}
		if rp, ok := p.(Routed); !ok || rp.Resolution().Why == "" {
			t.Errorf("the provider does not carry its resolution")
		}
	}
	// A transient failure is not a missing model.
	if modelMissing(&Error{Status: 429, Msg: "rate limited"}) || modelMissing(errors.New("connection reset")) ||
		!modelMissing(&Error{Status: 400, Msg: "The model `x` does not exist or you do not have access to it."}) {
		t.Error("IsModelUnavailable misclassifies")
	}
	delete(factories, "fake")
}

// summit models says, per provider, whether the tiers map and why.
func TestInfoTiers(t *testing.T) {
	r := NewRouter(Config{Providers: map[string]ProviderConfig{
		"a":    {Kind: "anthropic"},
		"gw":   {Kind: "anthropic", BaseURL: "https://llm-gateway.corp.example/anthropic"},
		"ggw":  {Kind: "gemini", BaseURL: "http://127.0.0.1:4000"},
		"oaic": {Kind: "openai", BaseURL: "http://localhost:8080/v1"},
		"o":    {Kind: "ollama"},
	}}, nil, nil)
	for name, want := range map[string]string{
		"a":    "tiers mapped (fast, default, deep: claude-haiku-4-5, claude-sonnet-4-5, claude-opus-4-1)",
		"gw":   "tiers mapped (same names as the official endpoint: claude-haiku-4-5, claude-sonnet-4-5, claude-opus-4-1)",
		"ggw":  "tiers mapped (same names as the official endpoint: gemini-3-flash-preview, gemini-3-pro-preview, gemini-3-pro-preview)",
		"oaic": "tiers not mapped (a compatible server names its models its own way: set models: or model:)",
		"o":    "",
	} {
		if got := r.Info(name).Tiers; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
