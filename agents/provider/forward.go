package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// A runner's model calls through the session (session/runners, Models "session"): the session
// sends the runner a JobRoute, its routing of the subagent's model with no endpoint, key or
// extra header in it; the runner routes with it (RunnerConfig) through an HTTP transport that
// carries each request back to the session, which makes it for real with Forward, adding its
// own key and the provider's configured extras. Keys never leave the session's machine.

// SessionKeyEnv is the key variable of a runner's session-served providers: the runner's
// router reads it as a placeholder so that the SDKs build their requests; the transport drops
// the header it lands in, and the session adds its own key.
const SessionKeyEnv = "SUMMIT_MODELS_THROUGH_SESSION"

// JobRoute is a subagent's model routing as a runner needs it: the chain of models (the first
// choice, then its fallbacks) with their prices and reasoning settings, and each provider's
// kind and settings. It holds no URL, key, key variable or header.
type JobRoute struct {
	Chain     []JobLink              `json:"chain"`
	Providers map[string]JobProvider `json:"providers"`
}

// JobLink is one model of a JobRoute's chain.
type JobLink struct {
	Provider        string    `json:"provider"`
	Model           string    `json:"model,omitempty"`
	Price           *JobPrice `json:"price,omitempty"` // US dollars per million tokens
	ReasoningEffort string    `json:"reasoning_effort,omitempty"`
	ThinkingBudget  *int      `json:"thinking_budget,omitempty"`
}

// JobPrice is a Price on the wire.
type JobPrice struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// JobProvider is what a runner knows of a provider of a JobRoute.
type JobProvider struct {
	Kind           string `json:"kind"`
	Model          string `json:"model,omitempty"`
	ThinkingBudget int    `json:"thinking_budget,omitempty"`
	NumCtx         int    `json:"num_ctx,omitempty"`
}

// forwardKinds are the kinds whose calls a session makes for a runner.
var forwardKinds = map[string]*regexp.Regexp{
	"openai":    regexp.MustCompile(`^(chat/completions|responses)$`),
	"anthropic": regexp.MustCompile(`^v1/messages(/count_tokens)?$`),
	"gemini":    regexp.MustCompile(`^v1(alpha|beta)?\d*/models/[A-Za-z0-9._-]+:(streamGenerateContent|generateContent|countTokens)$`),
	"ollama":    regexp.MustCompile(`^api/chat$`),
}

// JobRoute is res as a runner needs it; an error when a model of the chain is not served over
// HTTP by this session (script tapes: the runner then needs its own --tapes).
func (r *Router) JobRoute(res Resolution) (JobRoute, error) {
	jr := JobRoute{Providers: map[string]JobProvider{}}
	for _, l := range append([]Link{res.Link}, res.Fallbacks...) {
		pc := r.config(l.Provider)
		if _, ok := forwardKinds[pc.Kind]; !ok || l.Provider == "script" {
			return JobRoute{}, fmt.Errorf("model %s: kind %q is not served to runners", l, pc.Kind)
		}
		jl := JobLink{Provider: l.Provider, Model: l.Model}
		if p, ok := res.Prices[l]; ok {
			jl.Price = &JobPrice{p.Input, p.Output}
		}
		if p, ok := res.Params[l]; ok {
			jl.ReasoningEffort, jl.ThinkingBudget = p.ReasoningEffort, p.ThinkingBudget
		}
		jr.Chain = append(jr.Chain, jl)
		jr.Providers[l.Provider] = JobProvider{Kind: pc.Kind, Model: pc.Model, ThinkingBudget: pc.ThinkingBudget, NumCtx: pc.NumCtx}
	}
	return jr, nil
}

// SessionBase is the base URL of provider name on a runner whose models come from the session:
// the transport reads the provider from the path's first segment.
func SessionBase(name string) string { return "http://summit-session.invalid/" + name + "/" }

// JobModel is the model name a runner's agent definition takes for a JobRoute's RunnerConfig.
const JobModel = "job"

// RunnerConfig is the configuration a runner routes a JobRoute with: the chain as the route
// JobModel (and a route per link for its price and settings), each provider at SessionBase
// with the placeholder key SessionKeyEnv.
func (j JobRoute) RunnerConfig() (Config, error) {
	if len(j.Chain) == 0 {
		return Config{}, fmt.Errorf("the job's model route is empty")
	}
	c := Config{Providers: map[string]ProviderConfig{}, Models: map[string]Route{}, DefaultProvider: j.Chain[0].Provider}
	for name, p := range j.Providers {
		if _, ok := forwardKinds[p.Kind]; !ok || name == "script" || !nameOK.MatchString(name) {
			return Config{}, fmt.Errorf("the job's model route names provider %q of kind %q", name, p.Kind)
		}
		c.Providers[name] = ProviderConfig{Kind: p.Kind, Model: p.Model, ThinkingBudget: p.ThinkingBudget, NumCtx: p.NumCtx,
			BaseURL: SessionBase(name), KeyEnv: SessionKeyEnv}
	}
	first := Route{Provider: j.Chain[0].Provider, Model: j.Chain[0].Model}
	for i, l := range j.Chain {
		if _, ok := c.Providers[l.Provider]; !ok {
			return Config{}, fmt.Errorf("the job's model route uses provider %q it does not describe", l.Provider)
		}
		rt := Route{Provider: l.Provider, Model: l.Model, ReasoningEffort: l.ReasoningEffort, ThinkingBudget: l.ThinkingBudget}
		if l.Price != nil {
			rt.Price = &Price{Input: l.Price.Input, Output: l.Price.Output}
		}
		c.Models[fmt.Sprintf("%s-%d", JobModel, i)] = rt
		if i > 0 {
			m := l.Model
			if m == "" {
				m = j.Providers[l.Provider].Model
			}
			first.Fallbacks = append(first.Fallbacks, l.Provider+"/"+m)
		}
	}
	c.Models[JobModel] = first
	return c, nil
}

var nameOK = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Via sends every request of the router's providers through rt (a runner's transport to the
// session). Call it before the first Resolve.
func (r *Router) Via(rt http.RoundTripper) *Router {
	r.via = rt
	return r
}

// Forward makes a runner's model call for it: method and path (relative to the provider's
// base URL, with its query) on provider name of this session's configuration, with this
// session's key and the provider's extras. Only the model endpoints of the forwarded kinds are
// reachable; h must carry no credentials (the caller drops them).
func (r *Router) Forward(ctx context.Context, name, method, path string, h http.Header, body []byte) (*http.Response, error) {
	pc := r.config(name)
	allowed, ok := forwardKinds[pc.Kind]
	if !ok || name == "script" {
		return nil, fmt.Errorf("provider %q is not configured for model calls in this session", name)
	}
	p, _, _ := strings.Cut(path, "?")
	if method != http.MethodPost || !allowed.MatchString(p) {
		return nil, fmt.Errorf("%s %s is not a model call of a %s provider", method, p, pc.Kind)
	}
	var base, key, keyHeader string
	bearer := false
	switch pc.Kind {
	case "openai":
		base, keyHeader, bearer = pc.BaseURL, "Authorization", true
		if pc.KeyEnv != "" {
			if key = r.getenv(pc.KeyEnv); key == "" {
				return nil, fmt.Errorf("%s: no API key in the session: set the environment variable %s", name, pc.KeyEnv)
			}
		}
	case "anthropic":
		base, keyHeader = pc.BaseURL, "X-Api-Key"
		if base == "" {
			base = "https://api.anthropic.com"
		}
		if key = r.getenv(pc.KeyEnv); key == "" {
			return nil, fmt.Errorf("%s: no API key in the session: set the environment variable %s", name, pc.KeyEnv)
		}
	case "gemini":
		base, keyHeader = pc.BaseURL, "X-Goog-Api-Key"
		if base == "" {
			base = defaultGeminiBaseURL
		} else if m := apiVersionSuffix().FindStringSubmatchIndex(base); m != nil {
			base = base[:m[0]]
		}
		g := &geminiProvider{c: GeminiConfig{Name: name, KeyEnv: pc.KeyEnv, Getenv: r.getenv}}
		k, err := g.apiKey()
		if err != nil {
			return nil, fmt.Errorf("%w (in the session)", err)
		}
		key = k
	case "ollama":
		base, keyHeader, bearer = ollamaRoot(pc.BaseURL), "Authorization", true
		if pc.KeyEnv != "" {
			if key = r.getenv(pc.KeyEnv); key == "" {
				return nil, fmt.Errorf("%s: no API key in the session: set the environment variable %s", name, pc.KeyEnv)
			}
		}
	}
	if base == "" {
		return nil, fmt.Errorf("%s: no base_url in the session's configuration", name)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+"/"+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	req.Header = h.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if key == "" && bearer {
		key = "none" // as the provider sends it: local servers ignore it
	}
	if bearer {
		req.Header.Set(keyHeader, "Bearer "+key)
	} else {
		req.Header.Set(keyHeader, key)
	}
	cl := clientFor(pc, r.getenv, nil)
	if cl == nil {
		cl = http.DefaultClient
	}
	res, err := cl.Do(req)
	var ue *url.Error
	if errors.As(err, &ue) {
		// Its URL may carry a configured query value: name the host only.
		return nil, fmt.Errorf("%s: %s %s: %w", name, ue.Op, req.URL.Host, ue.Err)
	}
	return res, err
}

// An ACP agent placed on a runner calls its models itself, over its own provider's HTTP API.
// Its route (RelayRoute) has no chain: only, for each API an ACP agent speaks (RelayKinds),
// the provider of this session's configuration that takes those calls. On the runner a loopback
// relay (session/runners' ModelRelay) takes the agent's requests and tells the API from the
// path (RelayPath); each goes to the session like a native subagent's, and Forward makes it.

// RelayKinds are the provider kinds an ACP agent's requests are relayed to: Claude Code's,
// Codex's and Gemini CLI's APIs.
var RelayKinds = []string{"anthropic", "openai", "gemini"}

// RelayRoute is the route of an ACP agent's model calls through this session: for each of
// RelayKinds the provider that serves it: the forced --provider when of that kind, else the
// configured provider named after the kind, else the first configured one of that kind by
// name, else the built-in provider of that name (its key variable from the environment).
// An error when the session is on script tapes: it makes no HTTP calls.
func (r *Router) RelayRoute() (JobRoute, error) {
	if r.Describe() == "script" {
		return JobRoute{}, fmt.Errorf("the session is on script tapes: it makes no model calls over HTTP")
	}
	jr := JobRoute{Providers: map[string]JobProvider{}}
	for _, kind := range RelayKinds {
		name := ""
		switch {
		case r.forced != "" && r.config(r.forced).Kind == kind:
			name = r.forced
		case r.c.Providers[kind].Kind == kind:
			name = kind
		default:
			for _, n := range sortedKeys(r.c.Providers) {
				if r.c.Providers[n].Kind == kind {
					name = n
					break
				}
			}
			if name == "" && builtins[kind].Kind == kind {
				name = kind // the built-in provider of that name (its key from the environment)
			}
		}
		if name != "" && nameOK.MatchString(name) {
			pc := r.config(name)
			jr.Providers[name] = JobProvider{Kind: kind, Model: pc.Model}
		}
	}
	return jr, nil
}

// RelayPath is the kind of API a request path on the relay (after its root) belongs to, and
// the path Forward takes for it: v1/messages[/count_tokens] is Anthropic's, v1/responses and
// v1/chat/completions OpenAI's (its base URL ends in /v1), v1beta/models/M:… Gemini's.
func RelayPath(path string) (kind, rest string, ok bool) {
	path = strings.TrimPrefix(path, "/")
	for _, kind := range RelayKinds {
		p := path
		if kind == "openai" {
			var cut bool
			if p, cut = strings.CutPrefix(path, "v1/"); !cut {
				continue
			}
		}
		if forwardKinds[kind].MatchString(p) {
			return kind, p, true
		}
	}
	return "", "", false
}
