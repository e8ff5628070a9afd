package acp

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents/provider"
)

// MCP servers for an external agent: the servers of summit's mcp_servers config that the
// agent's entry names (acp_agents.<name>.mcp_servers, or an agent file's mcpServers list) go
// to the agent in session/new, which starts and calls them itself, inside its own
// confinement. Stdio servers are what every agent supports; an HTTP or SSE server goes only
// to an agent whose initialize says it takes one (mcpCapabilities.http, .sse). Variables in
// env, url and header values ($VAR, ${VAR}) and in command and args (${VAR}) are read from
// summit's environment here, as summit's own MCP client reads them; none of it is recorded.
// The agent's calls of their tools are its tool calls: recorded, and asked about through the
// subagent's policy like any tool summit cannot tell the effects of.

var bracedVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// mcpServers is the session/new list for the named servers; an error names a server the
// agent cannot take.
func mcpServers(servers map[string]provider.MCPServer, caps sdk.McpCapabilities, getenv func(string) string) ([]sdk.McpServer, error) {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names) // the agent gets them in a stable order
	braced := func(s string) string {
		return bracedVar().ReplaceAllStringFunc(s, func(v string) string { return getenv(v[2 : len(v)-1]) })
	}
	out := []sdk.McpServer{}
	for _, n := range names {
		s := servers[n]
		switch {
		case s.Command != "":
			st := &sdk.McpServerStdio{Name: n, Command: braced(s.Command), Args: []string{}, Env: []sdk.EnvVariable{}}
			for _, a := range s.Args {
				st.Args = append(st.Args, braced(a))
			}
			keys := make([]string, 0, len(s.Env))
			for k := range s.Env {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				st.Env = append(st.Env, sdk.EnvVariable{Name: k, Value: os.Expand(s.Env[k], getenv)})
			}
			out = append(out, sdk.McpServer{Stdio: st})
		case s.Type == "sse":
			if !caps.Sse {
				return nil, fmt.Errorf("MCP server %s is an SSE server, and the agent takes only stdio servers%s", n, takes(caps))
			}
			out = append(out, sdk.McpServer{Sse: &sdk.McpServerSseInline{Name: n, Type: "sse", Url: os.Expand(s.URL, getenv), Headers: headers(s.Headers, getenv)}})
		default:
			if !caps.Http {
				return nil, fmt.Errorf("MCP server %s is an HTTP server, and the agent takes only stdio servers%s", n, takes(caps))
			}
			out = append(out, sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: n, Type: "http", Url: os.Expand(s.URL, getenv), Headers: headers(s.Headers, getenv)}})
		}
	}
	return out, nil
}

// takes names the other transports an agent takes ("" when none).
func takes(caps sdk.McpCapabilities) string {
	var t []string
	if caps.Http {
		t = append(t, "HTTP")
	}
	if caps.Sse {
		t = append(t, "SSE")
	}
	if len(t) == 0 {
		return ""
	}
	return " and " + strings.Join(t, ", ")
}

func headers(h map[string]string, getenv func(string) string) []sdk.HttpHeader {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := []sdk.HttpHeader{}
	for _, k := range keys {
		out = append(out, sdk.HttpHeader{Name: k, Value: os.Expand(h[k], getenv)})
	}
	return out
}

// mcpNote says which servers the agent got, for the transcript (names and kinds only).
func mcpNote(servers []sdk.McpServer) string {
	var parts []string
	for _, s := range servers {
		switch {
		case s.Stdio != nil:
			parts = append(parts, s.Stdio.Name+" (stdio)")
		case s.Http != nil:
			parts = append(parts, s.Http.Name+" (http)")
		case s.Sse != nil:
			parts = append(parts, s.Sse.Name+" (sse)")
		}
	}
	return "the agent gets MCP servers: " + strings.Join(parts, ", ")
}

// envValue is k's value in environ ("" when unset; the last of duplicates wins, as exec does).
func envValue(environ []string, k string) string {
	v := ""
	for _, kv := range environ {
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val
		}
	}
	return v
}
