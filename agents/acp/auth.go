package acp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents/tools"
)

// Authentication. An agent that needs it says so when the session is opened (error -32000);
// summit then picks one of the methods it announced in initialize, never one that needs a
// browser or a terminal login:
//
//   - a gateway (a method with _meta.gateway, or id "gateway") when the agent's environment
//     names the endpoint for its protocol: GOOGLE_GEMINI_BASE_URL (google), ANTHROPIC_BASE_URL
//     (anthropic), OPENAI_BASE_URL (openai), or SUMMIT_ACP_GATEWAY_URL for any; it is sent as
//     _meta.gateway {baseUrl, headers: {}};
//   - an API key (a method with _meta["api-key"], or "api key" in its id, name or
//     description) when the agent's environment holds the key for its provider; the agent
//     reads the key from its environment, so no key goes over the connection;
//   - an env_var method whose required variables are all set.
//
// Then the session is opened again.

// gatewayVars are the variables that name a gateway endpoint, by the protocol the agent
// announces for it.
var gatewayVars = map[string][]string{
	"google":    {"GOOGLE_GEMINI_BASE_URL"},
	"anthropic": {"ANTHROPIC_BASE_URL"},
	"openai":    {"OPENAI_BASE_URL"},
}

// GatewayVar names a gateway endpoint for any agent.
const GatewayVar = "SUMMIT_ACP_GATEWAY_URL"

// keyVars are the variables that hold an API key, by the provider an api-key method names.
var keyVars = map[string][]string{
	"google":    {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
	"gemini":    {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
	"anthropic": {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"},
	"openai":    {"OPENAI_API_KEY", "CODEX_API_KEY"},
}

var apiKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)api[-_ ]?key`) })

type authChoice struct {
	id   string
	meta map[string]any
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && v != "" {
			m[k] = v
		}
	}
	return m
}

// gatewayMeta is the client capability auth._meta that makes agents offer a gateway method,
// when env names an endpoint; nil otherwise.
func gatewayMeta(env []string) map[string]any {
	m := envMap(env)
	for _, k := range append([]string{GatewayVar}, "GOOGLE_GEMINI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL") {
		if m[k] != "" {
			return map[string]any{"gateway": true}
		}
	}
	return nil
}

// chooseAuth picks a method as described above; how says which and why, or, when none fits,
// what was offered and what to set.
func chooseAuth(methods []sdk.AuthMethod, env []string) (authChoice, string, bool) {
	m := envMap(env)
	var offered []string
	var gateway, apiKey, envVar *authChoice
	var gatewayHow, apiKeyHow, envVarHow string
	for _, am := range methods {
		switch {
		case am.Terminal != nil:
			offered = append(offered, am.Terminal.Id+" (a terminal login)")
		case am.EnvVar != nil:
			e := am.EnvVar
			offered = append(offered, e.Id)
			ok, names := true, []string{}
			for _, v := range e.Vars {
				names = append(names, v.Name)
				if !v.Optional && m[v.Name] == "" {
					ok = false
				}
			}
			if ok && envVar == nil {
				envVar, envVarHow = &authChoice{id: e.Id}, fmt.Sprintf("method %s with %s from the environment", e.Id, strings.Join(names, ", "))
			}
		case am.Agent != nil:
			a := am.Agent
			desc := a.Name
			if a.Description != nil {
				desc += " " + *a.Description
			}
			offered = append(offered, fmt.Sprintf("%s (%s)", a.Id, strings.TrimSpace(desc)))
			if g, ok := a.Meta["gateway"]; ok || a.Id == "gateway" {
				proto := ""
				if gm, ok := g.(map[string]any); ok {
					proto, _ = gm["protocol"].(string)
				}
				url := m[GatewayVar]
				for _, k := range gatewayVars[proto] {
					if url == "" {
						url = m[k]
					}
				}
				if url != "" && gateway == nil {
					gateway = &authChoice{id: a.Id, meta: map[string]any{"gateway": map[string]any{"baseUrl": url, "headers": map[string]string{}}}}
					gatewayHow = fmt.Sprintf("method %s: the gateway %s", a.Id, url)
				}
				continue
			}
			k, isKey := a.Meta["api-key"]
			if !isKey && !apiKeyRE().MatchString(a.Id+" "+desc) {
				continue // a login of some kind: it needs a browser
			}
			provider := ""
			if km, ok := k.(map[string]any); ok {
				provider, _ = km["provider"].(string)
			}
			vars := keyVars[provider]
			if vars == nil {
				for name := range m {
					if strings.HasSuffix(name, "_API_KEY") {
						vars = append(vars, name)
					}
				}
			}
			for _, v := range vars {
				if m[v] != "" && apiKey == nil {
					apiKey, apiKeyHow = &authChoice{id: a.Id}, fmt.Sprintf("method %s: the key in %s", a.Id, v)
				}
			}
		}
	}
	switch {
	case gateway != nil:
		return *gateway, gatewayHow, true
	case apiKey != nil:
		return *apiKey, apiKeyHow, true
	case envVar != nil:
		return *envVar, envVarHow, true
	}
	return authChoice{}, fmt.Sprintf("it offers %s; give it an API key or a gateway URL in its env (acp_agents.<name>.env)",
		strings.Join(offered, ", ")), false
}

func isAuthRequired(err error) bool {
	var re *sdk.RequestError
	return errors.As(err, &re) && re.Code == -32000
}

// askingModes are the agents' most restrictive modes that still work: the ones where the agent
// asks its client before every change and every command (Claude Code's and Gemini CLI's
// default, Codex's read-only), most specific first. An agent runs in one of them whatever the
// subagent's permission mode: summit's policy, not the agent's, decides each request (plan
// refuses changes and commands, acceptEdits allows edits and asks for commands). A mode that
// lets the agent decide for itself (Claude Code's acceptEdits runs the commands it takes for
// file edits, its plan and auto modes let its classifier approve writes, Gemini CLI's autoEdit)
// would keep those decisions from summit.
var askingModes = []string{"default", "read-only"}

// setMode puts the agent in its asking mode (askingModes), or the mode Agent.ConfinedModes
// names for a confined run. Summit's policy answers its permission requests either way.
func (r *Run) setMode(ctx context.Context, modes sdk.SessionModeState) {
	want := askingModes
	if m, ok := r.c.Agent.ConfinedModes[r.c.Mode]; ok && r.c.Sandbox.ConfinesWrites() && tools.ConfinementAvailable() {
		want = []string{m} // its sandboxed modes cannot run inside summit's confinement (spawn)
	}
	for _, want := range want {
		for _, m := range modes.AvailableModes {
			if string(m.Id) != want {
				continue
			}
			if modes.CurrentModeId != m.Id {
				_, err := call(r, ctx, func(ctx context.Context) (sdk.SetSessionModeResponse, error) {
					return r.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: r.sid, ModeId: m.Id})
				})
				if err != nil {
					r.cl.note(fmt.Sprintf("could not set the agent's mode to %s (%s): %v", m.Id, r.c.Mode, err))
					return
				}
			}
			r.cl.setMode(string(m.Id))
			r.cl.note(fmt.Sprintf("the agent runs in its %s mode; summit's %s decides what it may do", m.Id, r.c.Mode))
			return
		}
	}
	var ids []string
	for _, m := range modes.AvailableModes {
		ids = append(ids, string(m.Id))
	}
	if len(ids) > 0 {
		r.cl.note(fmt.Sprintf("the agent has no mode in which it asks for everything (its modes: %s; current %s): summit's %s answers its permission requests",
			strings.Join(ids, ", "), modes.CurrentModeId, r.c.Mode))
	}
}

// restrictive reports whether an agent mode keeps every change and command asked for: the
// asking modes and plan (entered from one, Claude Code's plan asks as the mode before it did).
func restrictive(mode string) bool { return mode == "plan" || slices.Contains(askingModes, mode) }

// restoreMode puts the agent back in mode after it left it on its own (a current_mode_update
// summit did not ask for): summit, not the agent, decides what it may do.
func (r *Run) restoreMode(mode string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := call(r, ctx, func(ctx context.Context) (sdk.SetSessionModeResponse, error) {
		return r.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: r.sid, ModeId: sdk.SessionModeId(mode)})
	})
	r.mu.Lock()
	over := r.closed || r.killed // nothing is recorded after the run
	r.mu.Unlock()
	if err != nil && !over {
		r.cl.note(fmt.Sprintf("could not set the agent's mode back to %s: %v", mode, err))
	}
}

// sessionMeta is session/new's _meta. Claude Code's adapter takes Claude Agent SDK options
// there: its settings are read from the user's own settings only. A worktree's
// .claude/settings.json and settings.local.json come with the repository, and their
// permission rules (allow Bash(*) or Write, a defaultMode, hooks) would let the agent approve
// for itself what summit decides. Other agents ignore the key.
func sessionMeta() map[string]any {
	return map[string]any{"claudeCode": map[string]any{"options": map[string]any{"settingSources": []string{"user"}}}}
}
