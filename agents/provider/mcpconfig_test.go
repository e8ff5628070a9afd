package provider

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mcp_servers: both files merge by name (the workspace's entry wins whole), and each entry
// is checked, with the file:line of its name in the error.
func TestMCPServersConfig(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	writeConfig(t, user, "mcp_servers:\n  everything: {command: node, args: [x.js, stdio], env: {K: V}}\n  docs: {url: \"http://old/mcp\"}\n")
	writeConfig(t, filepath.Join(ws, ".summit"), "providers:\n  docs: {kind: openai}\nmcp_servers:\n  docs:\n    url: \"http://127.0.0.1:9000/mcp\"\n    headers: {Authorization: \"Bearer ${DOCS_TOKEN}\"}\n    allow: [search]\n    timeout_s: 30\n")
	c, err := LoadConfig(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]MCPServer{
		"everything": {Command: "node", Args: []string{"x.js", "stdio"}, Env: map[string]string{"K": "V"}},
		"docs":       {URL: "http://127.0.0.1:9000/mcp", Headers: map[string]string{"Authorization": "Bearer ${DOCS_TOKEN}"}, Allow: []string{"search"}, TimeoutS: 30},
	}
	if !reflect.DeepEqual(c.MCPServers, want) {
		t.Errorf("servers %+v", c.MCPServers)
	}
	for _, tc := range []struct{ text, want string }{
		{"mcp_servers:\n  a: {command: x, url: http://y}\n", ":2: mcp_servers.a: give exactly one of command"},
		{"mcp_servers:\n  a: {}\n", ":2: mcp_servers.a: give exactly one of command"},
		{"providers: {}\nmcp_servers:\n  ok: {command: x}\n  \"bad name\": {command: x}\n", `:4: mcp_servers.bad name: the name "bad name" may hold only letters, digits, _ and -`},
		{"mcp_servers:\n  a: {type: sse, command: x}\n", ":2: mcp_servers.a: type sse does not go with command"},
		{"mcp_servers:\n  a: {type: stdio, url: http://x}\n", ":2: mcp_servers.a: type stdio does not go with url"},
		{"mcp_servers:\n  a: {type: websocket, url: http://x}\n", `type "websocket": want stdio, http or sse`},
		{"mcp_servers:\n  a: {url: http://x, env: {K: V}}\n", "args and env are for a command"},
		{"mcp_servers:\n  a: {command: x, headers: {K: V}}\n", "headers are for an HTTP server"},
		{"mcp_servers:\n  a: {command: x, timeout_s: -1}\n", "timeout_s -1"},
		{"mcp_servers:\n  a: {command: x, alow: [y]}\n", "field alow not found"},
	} {
		dir := t.TempDir()
		writeConfig(t, filepath.Join(dir, ".summit"), tc.text)
		_, err := LoadConfig(dir, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "config.yaml") {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}
