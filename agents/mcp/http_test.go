package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
)

type lookupArgs struct {
	Topic string `json:"topic"`
}

// A streamable HTTP server, in-process: headers (with ${VAR} from the environment) go on
// every request; tools list and call as over stdio.
func TestStreamableHTTP(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "v1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "lookup", Description: "Look a topic up."},
		func(_ context.Context, _ *sdk.CallToolRequest, a lookupArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "docs on " + a.Topic}}}, nil, nil
		})
	var unauthorised atomic.Int32
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			unauthorised.Add(1)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	env := map[string]string{"DOCS_TOKEN": "s3cret", "DOCS_URL": ts.URL}
	m := newManager(t, map[string]provider.MCPServer{
		"docs":  {URL: "${DOCS_URL}/mcp", Headers: map[string]string{"Authorization": "Bearer ${DOCS_TOKEN}"}},
		"nokey": {URL: ts.URL + "/mcp"},
	}, Options{Getenv: func(k string) string { return env[k] }})
	p, toolset, err := grant(t, m, def([]string{"mcp__docs__*"}, nil), agents.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Tools, " ") != "mcp__docs__lookup" {
		t.Fatalf("tools %v", p.Tools)
	}
	r := toolset.Call(context.Background(), "mcp__docs__lookup", `{"topic":"MCP"}`)
	if r.Output != "docs on MCP" || r.IsError {
		t.Errorf("call %+v", r)
	}
	if unauthorised.Load() != 0 {
		t.Errorf("%d requests without the header", unauthorised.Load())
	}
	// A server that refuses us is a clear error naming it.
	if _, err := m.Tools(context.Background(), "nokey"); err == nil || !strings.Contains(err.Error(), "MCP server nokey: could not connect to it") {
		t.Errorf("refused: %v", err)
	}
	// After Close the server's session is gone: a new call fails.
	m.Close()
	if r := toolset.Call(context.Background(), "mcp__docs__lookup", `{"topic":"MCP"}`); !r.IsError || !strings.Contains(r.Output, "stopped") {
		t.Errorf("after Close: %+v", r)
	}
}
