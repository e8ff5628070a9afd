package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Honest routing. An agent names a model as its author meant it: a tier (fast, default, deep),
// a concrete name (gemini-3-pro-preview, claude-sonnet-4-5, llama3), or provider/model. The
// router sends it where the user's configuration says, and never sends a model name to a
// provider that does not serve it:
//
//   - a name in models: goes where that route says (with its fallbacks);
//   - provider/model goes to that configured provider;
//   - a tier goes to the configured route of that tier, else the default provider's model for
//     it (built-in tier models per kind, or the provider's own `model:`); the built-in tier
//     models apply to kind anthropic and gemini on any endpoint (their gateways serve the same
//     names) and to kind openai only on api.openai.com (mapsTiers);
//   - a concrete name of a known family (claude-*, gpt-*/o*, gemini-*) goes to a configured
//     provider of that family; when there is none, or --provider overrides it, it maps to the
//     target provider's model of the same tier — gemini-3-pro-preview is a default-tier model,
//     so under --provider anthropic it becomes claude-sonnet-4-5 — and the resolution says so;
//   - a name of no known family (llama3, qwen3-8b) goes to the default provider as written.
//
// Parameters the target model rejects are dropped and noted: temperature on OpenAI reasoning
// models (o1, o3, o4, gpt-5) and on Anthropic models with extended thinking on.
//
// Fallbacks: a route may list fallbacks (models: {deep: {provider: g, model: gemini-3-pro-preview,
// fallbacks: [gemini-2.5-pro]}}); a Gemini 3 model falls back without any (seed 001) to the
// Gemini 2.5 model of its kind: gemini-2.5-flash for a flash model, else gemini-2.5-pro. When the model is not found or not available, the next one is used for the rest of
// the subagent's run, and the switch is reported (WithSwitchReporter) so it is recorded. When
// the service is out of capacity for the model (Overload: a 429 rate limit or quota, a 503, a
// 529 or an "overloaded" error), the agent loop first retries it as far as its retry budget and
// the server's Retry-After allow, then moves on the same way (Fallbacker).

// Tiers an agent's model may name.
const (
	TierFast    = "fast"
	TierDefault = "default"
	TierDeep    = "deep"
)

// tierModels are the built-in models of each tier for the providers whose model names summit
// knows. A route in the config wins over these.
var tierModels = map[string]map[string]string{
	"anthropic": {TierFast: "claude-haiku-4-5", TierDefault: "claude-sonnet-4-5", TierDeep: "claude-opus-4-1"},
	"openai":    {TierFast: "gpt-5-mini", TierDefault: "gpt-5", TierDeep: "o3"},
	"gemini":    {TierFast: "gemini-3-flash-preview", TierDefault: "gemini-3-pro-preview", TierDeep: "gemini-3-pro-preview"},
}

// Family says which kind of provider serves a model name, and the name's tier: claude-* is
// anthropic (haiku fast, opus deep, else default); gpt-*, chatgpt-* and the o-series are openai
// (mini and nano fast; o1, o3, o4 and *-pro deep); gemini-* is gemini (flash fast, else
// default: Gemini's pro models are its workhorses, and the seed's roster runs on them). Any
// other name, and a vendor/model name, has no family ("" ""): only the server knows it.
func Family(model string) (kind, tier string) {
	m := strings.ToLower(model)
	if strings.Contains(m, "/") {
		return "", ""
	}
	switch {
	case strings.HasPrefix(m, "claude"):
		switch {
		case strings.Contains(m, "haiku"):
			return "anthropic", TierFast
		case strings.Contains(m, "opus"):
			return "anthropic", TierDeep
		}
		return "anthropic", TierDefault
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "chatgpt-"), oSeries(m):
		switch {
		case strings.Contains(m, "-mini"), strings.Contains(m, "-nano"):
			return "openai", TierFast
		case oSeries(m), strings.HasSuffix(m, "-pro"):
			return "openai", TierDeep
		}
		return "openai", TierDefault
	case strings.HasPrefix(m, "gemini-"):
		if strings.Contains(m, "flash") {
			return "gemini", TierFast
		}
		return "gemini", TierDefault
	}
	return "", ""
}

// oSeries: o1, o3, o4-mini, o3-pro ...
func oSeries(m string) bool {
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9' && (len(m) == 2 || m[2] == '-')
}

// Link is one model of a chain: a provider name and the model sent to it.
type Link struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

func (l Link) String() string {
	if l.Model == "" {
		return l.Provider + " (its configured model)"
	}
	return l.Provider + "/" + l.Model
}

// Resolution is where an agent's model goes, and why.
type Resolution struct {
	Requested string // the agent's model as written ("" and inherit read as default)
	Link             // the first choice
	Kind      string // the provider's kind (script, openai, anthropic, gemini)
	Why       string // how the router got there, for a person
	Fallbacks []Link // tried in order when the model is not available
	// DropTemperature says the agent's temperature is not sent (the model rejects it); why.
	DropTemperature string
	// Prices are the config's prices of the chain's models (routes with a price: naming
	// that provider and model).
	Prices map[Link]Price
	// Params are the chain's models' reasoning settings from their routes.
	Params map[Link]Params
}

// Params are a route's reasoning settings (see Route).
type Params struct {
	ReasoningEffort string
	ThinkingBudget  *int
}

// Route resolves an agent's model without building any provider (no key is needed): what
// `summit models` prints, and what Resolve uses.
func (r *Router) Route(model string) (Resolution, error) {
	res := Resolution{Requested: model}
	if model == "" || model == "inherit" {
		model = TierDefault
	}
	if r.forced == "script" || r.forced == "" && r.c.Empty() {
		res.Link, res.Kind = Link{"script", model}, "script"
		res.Why = "script tapes (no model is configured)"
		if r.forced == "script" {
			res.Why = "--provider script: the script tapes"
		}
		return res, nil
	}
	var err error
	switch route, ok := r.c.Models[model]; {
	case r.forced != "" && ok && route.Provider == r.forced:
		res.Link, res.Why = Link{route.Provider, route.Model}, fmt.Sprintf("models.%s in the config (on the --provider %s)", model, r.forced)
		res.Fallbacks = r.fallbacks(route)
	case r.forced != "":
		res.Link, res.Why, res.Fallbacks, err = r.modelFor(r.forced, model, "--provider "+r.forced+" overrides the agent's choice")
	case ok:
		res.Link, res.Why = Link{route.Provider, route.Model}, "models."+model+" in the config"
		res.Fallbacks = r.fallbacks(route)
	default:
		res.Link, res.Why, res.Fallbacks, err = r.routeName(model)
	}
	if err != nil {
		return res, err
	}
	res.Kind = r.kindOf(res.Provider)
	if res.Kind == "gemini" && len(res.Fallbacks) == 0 && strings.HasPrefix(res.Model, "gemini-3") {
		// The same kind of model one generation back: a flash model's work (fast, cheap, often
		// on a free tier) goes to gemini-2.5-flash, not to a pro model with other limits and prices.
		fb := "gemini-2.5-pro"
		if strings.Contains(res.Model, "flash") {
			fb = "gemini-2.5-flash"
		}
		res.Fallbacks = []Link{{res.Provider, fb}}
	}
	r.price(&res)
	res.DropTemperature = r.rejectsTemperature(res.Link, res.Params[res.Link])
	return res, nil
}

// price fills res.Prices and res.Params from the routes of the chain's models.
func (r *Router) price(res *Resolution) {
	for _, l := range append([]Link{res.Link}, res.Fallbacks...) {
		for _, name := range sortedKeys(r.c.Models) {
			route := r.c.Models[name]
			if route.Provider != l.Provider || route.Model != l.Model {
				continue
			}
			if route.Price != nil {
				if res.Prices == nil {
					res.Prices = map[Link]Price{}
				}
				res.Prices[l] = *route.Price
			}
			if route.ReasoningEffort != "" || route.ThinkingBudget != nil {
				if res.Params == nil {
					res.Params = map[Link]Params{}
				}
				res.Params[l] = Params{route.ReasoningEffort, route.ThinkingBudget}
			}
		}
	}
}

// routeName routes a name that has no route of its own in the config.
func (r *Router) routeName(model string) (Link, string, []Link, error) {
	if prov, m, ok := strings.Cut(model, "/"); ok {
		if _, known := r.c.Providers[prov]; known {
			return Link{prov, m}, "provider/model names a configured provider", nil, nil
		}
	}
	if isAlias(model) {
		if route, ok := r.c.Models[TierDefault]; ok && model != TierDefault {
			return Link{route.Provider, route.Model}, fmt.Sprintf("no models.%s in the config: the default route", model), r.fallbacks(route), nil
		}
		if r.c.DefaultProvider == "" {
			return Link{}, "", nil, r.noRoute(model)
		}
		return r.modelFor(r.c.DefaultProvider, model, "default_provider")
	}
	if fam, _ := Family(model); fam != "" {
		// A configured provider of the model's own family serves it as written.
		if r.c.DefaultProvider != "" && r.serves(r.c.DefaultProvider, fam) {
			return Link{r.c.DefaultProvider, model}, "default_provider " + r.c.DefaultProvider + " serves it", nil, nil
		}
		for _, name := range sortedKeys(r.c.Providers) {
			if r.serves(name, fam) {
				return Link{name, model}, fmt.Sprintf("a %s model: provider %s serves it", fam, name), nil, nil
			}
		}
	}
	if r.c.DefaultProvider == "" {
		return Link{}, "", nil, r.noRoute(model)
	}
	return r.modelFor(r.c.DefaultProvider, model, "no provider of its family is configured")
}

func (r *Router) noRoute(model string) error {
	return fmt.Errorf("model %q has no route: add it under models: in .summit/config.yaml or set default_provider (configured routes: %s)", model, strings.Join(sortedKeys(r.c.Models), ", "))
}

// modelFor is the model provider target runs for the agent's model name: the name itself when
// target serves it, else the target's model of the name's tier. because says why target.
func (r *Router) modelFor(target, model, because string) (Link, string, []Link, error) {
	tier, lead := model, because+": the "+model+" tier of "+target+" is "
	if !isAlias(model) {
		fam, t := Family(model)
		if fam == "" || r.serves(target, fam) {
			return Link{target, model}, because, nil, nil
		}
		tier = t
		lead = fmt.Sprintf("%s is a %s model, which %s does not serve (%s); as a %s-tier model it maps to ", model, fam, target, because, tier)
	}
	if route, ok := r.c.Models[tier]; ok && route.Provider == target {
		return Link{target, route.Model}, lead + route.Model + " (models." + tier + " in the config)", r.fallbacks(route), nil
	}
	kind := r.kindOf(target)
	pc := r.config(target)
	if m := tierModels[kind][tier]; m != "" && r.mapsTiers(target) {
		src := " (summit's " + tier + "-tier model for " + kind + ")"
		if !r.officialEndpoint(target) {
			src = " (summit's " + tier + "-tier model for " + kind + "; " + target + "'s base_url is a gateway of kind " + kind + ", which serves the official names)"
		}
		return Link{target, m}, lead + m + src, nil, nil
	}
	if pc.Model != "" {
		return Link{target, pc.Model}, lead + pc.Model + " (providers." + target + ".model)", nil, nil
	}
	if route, ok := r.c.Models[TierDefault]; ok && route.Provider == target {
		return Link{target, route.Model}, lead + route.Model + " (no models." + tier + ": models.default in the config)", r.fallbacks(route), nil
	}
	if kind == "script" {
		return Link{target, model}, because, nil, nil
	}
	return Link{}, "", nil, fmt.Errorf("%s: provider %s has no model for the %s tier: set models.%s: {provider: %s, model: …} or providers.%s.model in .summit/config.yaml", because, target, tier, tier, target, target)
}

// serves reports whether provider name runs models of family fam under their own names: its
// kind is fam, and for the openai kind only OpenAI's own endpoint (a local or hosted
// compatible server names its models its own way).
func (r *Router) serves(name, fam string) bool {
	return r.kindOf(name) == fam && (fam != "openai" || r.officialEndpoint(name))
}

// mapsTiers: summit's built-in tier models (tierModels) are names provider name serves: it
// talks to its kind's own service, or it is of kind anthropic or gemini on any endpoint, since
// their gateways and proxies serve the official model names. An OpenAI-compatible server
// (kind openai with a base_url) names its models its own way, so there a tier needs a route
// or the provider's model:.
func (r *Router) mapsTiers(name string) bool {
	kind := r.kindOf(name)
	if tierModels[kind] == nil {
		return false
	}
	return kind == "anthropic" || kind == "gemini" || r.officialEndpoint(name)
}

// officialEndpoint: the provider talks to its kind's own service (no base_url, or the
// service's), so the built-in tier model names mean something there.
func (r *Router) officialEndpoint(name string) bool {
	pc := r.config(name)
	if pc.BaseURL == "" {
		return true
	}
	u, err := url.Parse(pc.BaseURL)
	if err != nil {
		return false
	}
	switch pc.Kind {
	case "openai":
		return u.Hostname() == "api.openai.com"
	case "anthropic":
		return u.Hostname() == "api.anthropic.com"
	case "gemini":
		return u.Hostname() == "generativelanguage.googleapis.com"
	}
	return false
}

func (r *Router) config(name string) ProviderConfig {
	if pc, ok := r.c.Providers[name]; ok {
		return pc
	}
	return builtins[name]
}

func (r *Router) kindOf(name string) string {
	if name == "script" {
		return "script"
	}
	return r.config(name).Kind
}

// fallbacks of a route: each is a model on the route's provider, or provider/model.
func (r *Router) fallbacks(route Route) []Link {
	var out []Link
	for _, f := range route.Fallbacks {
		if prov, m, ok := strings.Cut(f, "/"); ok {
			if _, known := r.c.Providers[prov]; known {
				out = append(out, Link{prov, m})
				continue
			}
		}
		out = append(out, Link{route.Provider, f})
	}
	return out
}

// rejectsTemperature says why the model of l takes no temperature, or "".
func (r *Router) rejectsTemperature(l Link, params Params) string {
	pc := r.config(l.Provider)
	m := strings.ToLower(l.Model)
	if m == "" {
		m = strings.ToLower(pc.Model)
	}
	switch pc.Kind {
	case "openai":
		if fam, _ := Family(m); fam == "openai" && (oSeries(m) || strings.HasPrefix(m, "gpt-5")) {
			return l.Model + " is a reasoning model, which rejects temperature"
		}
	case "anthropic":
		budget := pc.ThinkingBudget
		if params.ThinkingBudget != nil {
			budget = *params.ThinkingBudget
		}
		if budget > 0 {
			return "extended thinking is on for " + l.Provider + ", which requires the default temperature"
		}
	}
	return ""
}

// Resolve maps a definition's model to a provider and a concrete model. A model provider it
// returns carries its Resolution (see Routed) and, when the route has fallbacks, moves to the
// next model when one is not available. The script provider is returned as it is.
func (r *Router) Resolve(model string) (Provider, string, error) {
	return r.ResolveModel(model, nil)
}

// RouteModel is Route for an agent whose file lists fallback models of its own: each is routed
// like the model itself and follows the route's own fallbacks, once.
func (r *Router) RouteModel(model string, fallbacks []string) (Resolution, error) {
	res, err := r.Route(model)
	if err != nil || res.Kind == "script" {
		return res, err
	}
	seen := map[Link]bool{res.Link: true}
	for _, l := range res.Fallbacks {
		seen[l] = true
	}
	for _, f := range fallbacks {
		fr, err := r.Route(f)
		if err != nil || seen[fr.Link] {
			continue // a fallback with no route is no fallback
		}
		seen[fr.Link] = true
		res.Fallbacks = append(res.Fallbacks, fr.Link)
	}
	r.price(&res)
	return res, nil
}

// ResolveModel is Resolve for an agent's model and its own fallbacks (see RouteModel).
func (r *Router) ResolveModel(model string, fallbacks []string) (Provider, string, error) {
	res, err := r.RouteModel(model, fallbacks)
	if err != nil {
		return nil, "", err
	}
	p, err := r.provider(res.Provider)
	if err != nil {
		return nil, "", err
	}
	if res.Kind == "script" {
		return p, res.Model, nil // the tapes: nothing to explain, nothing to fall back to
	}
	rp := &routed{res: res, links: []Link{res.Link}, provs: []Provider{p}, router: r}
	rp.links = append(rp.links, res.Fallbacks...)
	return rp, res.Model, nil
}

// Routed is a provider that knows its resolution, and what its run has cost.
type Routed interface {
	Provider
	Resolution() Resolution
	Cost() (usd float64, known bool)
}

// routed is the provider Resolve returns: the first link's provider, moving along the chain
// when a model is not available. The move sticks for the rest of the run.
type routed struct {
	res    Resolution
	router *Router
	links  []Link
	provs  []Provider // built as needed; provs[i] serves links[i]
	cur    int

	mu    sync.Mutex
	usage map[Link]Usage // what each model of the chain used, turn by turn
	// switchedAt is how many messages the conversation had when the chain last moved: the
	// thinking in them was signed by another model, which the new one would reject.
	switchedAt int
}

// Cost is what the run has cost so far, in US dollars, and whether every model that ran has
// a price (false: the cost is unknown, or only partly known).
func (p *routed) Cost() (usd float64, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	known = len(p.usage) > 0
	for l, u := range p.usage {
		price, ok := p.res.Prices[l]
		if !ok {
			known = false
			continue
		}
		usd += price.Cost(u)
	}
	return usd, known
}

func (p *routed) addUsage(l Link, u Usage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.usage == nil {
		p.usage = map[Link]Usage{}
	}
	t := p.usage[l]
	t.Input += u.Input
	t.Output += u.Output
	p.usage[l] = t
}

func (p *routed) Name() string              { return p.links[p.cur].Provider }
func (p *routed) Resolution() Resolution    { return p.res }
func (p *routed) Unwrap() Provider          { return p.provs[p.cur] }
func (p *routed) current() (Provider, Link) { return p.provs[p.cur], p.links[p.cur] }

// nextUsable is the index of the next link after the current one whose provider can be built
// (building it once), or -1 at the end of the chain.
func (p *routed) nextUsable() int {
	for i := p.cur + 1; i < len(p.links); i++ {
		for len(p.provs) <= i {
			prov, err := p.router.provider(p.links[len(p.provs)].Provider)
			if err != nil {
				prov = nil // a provider that cannot be built is no fallback
			}
			p.provs = append(p.provs, prov)
		}
		if p.provs[i] != nil {
			return i
		}
	}
	return -1
}

// next moves to the next link after a failure of the current one; false at the end.
func (p *routed) next(ctx context.Context, cause error) bool {
	i := p.nextUsable()
	if i < 0 {
		return false
	}
	from := p.links[p.cur]
	p.cur = i
	p.switchedAt = -1 // set by Stream, which knows the conversation
	if rep, ok := ctx.Value(switchKey{}).(func(from, to Link, cause error)); ok {
		rep(from, p.links[p.cur], cause)
	}
	return true
}

// Fallbacker is a provider with a chain of models (what Resolve returns for a route with
// fallbacks). The agent loop calls it when a model stays out of capacity after its retries.
type Fallbacker interface {
	// NextFallback is the model Fallback would move to; false at the end of the chain.
	NextFallback() (Link, bool)
	// Fallback moves the rest of the run to the next model of the chain, reporting the switch
	// with cause (WithSwitchReporter); false at the end of the chain.
	Fallback(ctx context.Context, cause error) (Link, bool)
}

func (p *routed) NextFallback() (Link, bool) {
	if i := p.nextUsable(); i >= 0 {
		return p.links[i], true
	}
	return Link{}, false
}

func (p *routed) Fallback(ctx context.Context, cause error) (Link, bool) {
	if !p.next(ctx, cause) {
		return Link{}, false
	}
	return p.links[p.cur], true
}

// Overload says how err shows the service out of capacity for the model right now, for a
// person ("overloaded (HTTP 529)", "rate limited (HTTP 429)"), or "" when it does not: an
// HTTP 429 (a rate limit or a quota: Gemini's RESOURCE_EXHAUSTED, OpenAI's rate_limit_exceeded,
// Anthropic's rate_limit_error; not OpenAI's insufficient_quota, which is billing), 503 (Gemini's UNAVAILABLE "The model is overloaded") or 529
// (Anthropic's overloaded_error), or an error event inside a stream that says the same
// (overloaded_error, UNAVAILABLE, RESOURCE_EXHAUSTED). Another model may have the capacity
// this one lacks, so a route's fallbacks take over after the retries (agents/runtime).
func Overload(err error) string {
	var pe *Error
	if err == nil || !errors.As(err, &pe) {
		return ""
	}
	msg := strings.ToLower(pe.Msg)
	switch {
	case pe.Status == 529:
		return "overloaded (HTTP 529)"
	case pe.Status == 503:
		if strings.Contains(msg, "overloaded") {
			return "overloaded (HTTP 503)"
		}
		return "unavailable (HTTP 503)"
	case pe.Status == http.StatusTooManyRequests:
		if !pe.Transient {
			// OpenAI's insufficient_quota (and any 429 a retry cannot cure): the account has
			// no credit, which another model of the same account does not fix. It fails now,
			// for the user to fix, instead of being spent down the chain as if it were load.
			return ""
		}
		if strings.Contains(msg, "resource_exhausted") || strings.Contains(msg, "quota") {
			return "out of quota (HTTP 429)"
		}
		return "rate limited (HTTP 429)"
	case pe.Status != 0 && pe.Status != http.StatusOK:
		return ""
	}
	for _, c := range []struct{ in, why string }{
		{"overloaded", "overloaded"}, {"resource_exhausted", "out of quota"}, {"unavailable:", "unavailable"},
		{"rate_limit", "rate limited"},
	} {
		if strings.Contains(msg, c.in) {
			return c.why
		}
	}
	return ""
}

func (p *routed) Stream(ctx context.Context, req Request) (Stream, error) {
	for {
		prov, link := p.current()
		req.Model = link.Model
		params := p.res.Params[link]
		req.ReasoningEffort, req.ThinkingBudget = params.ReasoningEffort, params.ThinkingBudget
		if p.switchedAt < 0 {
			p.switchedAt = len(req.Messages)
		}
		if p.cur > 0 {
			req.Messages = withoutThinking(req.Messages, p.switchedAt)
		}
		st, err := prov.Stream(ctx, req)
		if err == nil {
			// A model that is not there may also say so as the stream's first error.
			first, ferr := st.Next()
			if ferr == nil || !modelMissing(ferr) {
				return &metered{peeked: peeked{Stream: st, d: first, err: ferr}, p: p, link: link}, nil
			}
			st.Close()
			err = ferr
		}
		if !modelMissing(err) || !p.next(ctx, err) {
			return nil, err
		}
	}
}

// withoutThinking drops the thinking of the first n messages: a model's thinking blocks carry
// its signatures (Anthropic's, Gemini's), which another model rejects ("corrupted thought
// signature"); the text and tool calls stay.
func withoutThinking(msgs []Message, n int) []Message {
	n = min(n, len(msgs))
	out := make([]Message, len(msgs))
	copy(out, msgs)
	for i := range n {
		out[i].Thinking = nil
	}
	return out
}

// peeked gives back the delta Stream read to look at the first answer.
type peeked struct {
	Stream
	d    Delta
	err  error
	done bool
}

func (s *peeked) Next() (Delta, error) {
	if !s.done {
		s.done = true
		return s.d, s.err
	}
	return s.Stream.Next()
}

// metered counts a turn's usage for its model: the last usage delta of a turn is its total,
// added when the stream closes (a failed attempt's usage counts too).
type metered struct {
	peeked
	p      *routed
	link   Link
	last   Usage
	closed bool
}

func (s *metered) Next() (Delta, error) {
	d, err := s.peeked.Next()
	if err == nil && d.Kind == DeltaUsage {
		s.last = d.Usage
	}
	return d, err
}

func (s *metered) Close() error {
	if !s.closed {
		s.closed = true
		s.p.addUsage(s.link, s.last)
	}
	return s.peeked.Close()
}

type switchKey struct{}

// WithSwitchReporter returns a context under which a routed provider reports each move to a
// fallback model: from, to, and the error that caused it.
func WithSwitchReporter(ctx context.Context, fn func(from, to Link, cause error)) context.Context {
	return context.WithValue(ctx, switchKey{}, fn)
}

// modelMissing reports whether err says the model does not exist or is not available to this
// key (ErrModelUnavailable, HTTP 404, or a server's model-not-found message), as opposed to a
// failure a retry may cure.
func modelMissing(err error) bool {
	if err == nil || errors.Is(err, io.EOF) {
		return false
	}
	if IsModelUnavailable(err) {
		return true
	}
	var pe *Error
	if errors.As(err, &pe) && pe.Status == 404 {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"model_not_found", "model not found", "no such model", "unknown model",
		"is not found for api version", "model is not available", "does not exist or you do not have access"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// ProviderInfo describes a provider the routing may use, for `summit models` and `summit
// doctor`: its kind, endpoint and the variable its key is read from ("" when it needs none).
type ProviderInfo struct {
	Name, Kind, BaseURL, KeyEnv string
	// Tiers says how the tiers (fast, default, deep) map on this provider when no route
	// names them, for a person; "" for kinds summit has no tier models for.
	Tiers string
}

// Info describes provider name as configured (or built in).
func (r *Router) Info(name string) ProviderInfo {
	pc := r.config(name)
	info := ProviderInfo{Name: name, Kind: pc.Kind, BaseURL: pc.BaseURL, KeyEnv: pc.KeyEnv}
	if name == "script" {
		info.Kind = "script"
	}
	if tm := tierModels[info.Kind]; tm != nil {
		names := tm[TierFast] + ", " + tm[TierDefault] + ", " + tm[TierDeep]
		switch {
		case r.officialEndpoint(name):
			info.Tiers = "tiers mapped (fast, default, deep: " + names + ")"
		case r.mapsTiers(name):
			info.Tiers = "tiers mapped (same names as the official endpoint: " + names + ")"
		default:
			info.Tiers = "tiers not mapped (a compatible server names its models its own way: set models: or model:)"
		}
	}
	if info.KeyEnv == "" {
		switch pc.Kind {
		case "anthropic":
			info.KeyEnv = "ANTHROPIC_API_KEY"
		case "gemini":
			info.KeyEnv = "GEMINI_API_KEY"
		}
	}
	return info
}

// envKinds are the kinds FromEnvironment looks for, in the order the default tier prefers
// them: the seeds' roster is Gemini's.
var envKinds = []struct{ name, kind string }{{"gemini", "gemini"}, {"anthropic", "anthropic"}, {"openai", "openai"}}

// FromEnvironment is the configuration summit uses when none is written but API keys are set:
// the built-in provider of each kind whose key variable holds a key (GEMINI_API_KEY or
// GOOGLE_API_KEY, ANTHROPIC_API_KEY, OPENAI_API_KEY), and the first of gemini, anthropic,
// openai as the default provider. So with GEMINI_API_KEY alone the built-in agents' Gemini 3
// models run as written, and with ANTHROPIC_API_KEY too, a claude-* name goes to Anthropic.
// used names each provider and its variable; empty when no key is set.
func FromEnvironment(getenv func(string) string) (c Config, used []string) {
	for _, k := range envKinds {
		pc := builtins[k.name]
		vars := []string{pc.KeyEnv}
		if k.kind == "gemini" {
			vars = append(vars, "GOOGLE_API_KEY")
		}
		for _, v := range vars {
			if getenv(v) == "" {
				continue
			}
			if c.Providers == nil {
				c.Providers = map[string]ProviderConfig{}
				c.DefaultProvider = k.name
			}
			c.Providers[k.name] = pc
			used = append(used, k.name+" ("+v+")")
			break
		}
	}
	return c, used
}
