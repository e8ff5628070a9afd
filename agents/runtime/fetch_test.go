package runtime

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents"
	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/agents/tools"
	"github.com/summit-dev/summit/session"
)

// In plan mode a web_fetch of a host the config does not name asks first; a host it names is
// fetched without asking; a redirect from an approved host to another one is refused. In
// acceptEdits nothing asks.
func TestWebFetchAsksInPlan(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "http://localhost:"+r.Host[strings.LastIndex(r.Host, ":")+1:]+"/page", http.StatusFound)
			return
		}
		w.Write([]byte("the page"))
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	run := func(mode agents.PermissionMode, url string, approve bool) (asked []string, results []session.TranscriptEvent) {
		t.Helper()
		tapes, err := provider.ParseTapes([]byte(fmt.Sprintf(`tapes:
  - name: fetch
    match: {agent: retriever}
    steps:
      - tool: web_fetch
        args: {url: %q}
      - capsule: {summary: "fetched"}
`, url)), "fetch.yaml")
		if err != nil {
			t.Fatal(err)
		}
		// 127.0.0.1 is in web_allow_hosts: it passes the private-address guard and plan mode
		// fetches it without asking. localhost is not.
		sb, _ := tools.New(t.TempDir(), tools.Options{AllowHosts: []string{"127.0.0.1"}})
		res := Run(context.Background(), Config{
			Agent: &agents.Definition{Name: "retriever"}, AgentType: "retriever", Sandbox: sb, Task: "fetch", Clock: realClock{},
			Provider: provider.NewScript(provider.ScriptConfig{Tapes: tapes}),
			Policy:   agents.Policy{Mode: mode, Tools: []string{"web_fetch"}},
			Emit: func(d session.Data) error {
				if te, ok := d.(session.TranscriptEvent); ok && te.EventType == session.TranscriptToolResult {
					results = append(results, te)
				}
				return nil
			},
			Approve: func(_ context.Context, tool string, _ map[string]any, reason string) (bool, string, error) {
				asked = append(asked, tool+": "+reason)
				return approve, "not that host", nil
			},
		})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		return asked, results
	}
	// A named host: no question, fetched.
	asked, res := run(agents.ModePlan, srv.URL+"/page", false)
	if len(asked) != 0 || len(res) != 1 || res[0].IsError || res[0].Result != "the page" {
		t.Errorf("allowed host: asked %q, results %+v", asked, res)
	}
	// Another host: asked, and denied.
	asked, res = run(agents.ModePlan, "http://localhost:"+port+"/page", false)
	if len(asked) != 1 || !strings.Contains(asked[0], "web_fetch of localhost asks in plan") || len(res) != 1 || !res[0].IsError || strings.Contains(res[0].Result, "the page") {
		t.Errorf("other host, denied: asked %q, results %+v", asked, res)
	}
	// Another host, approved: the guard still refuses a loopback address that is not named.
	asked, res = run(agents.ModePlan, "http://localhost:"+port+"/page", true)
	if len(asked) != 1 || len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Result, "public addresses only") {
		t.Errorf("other host, approved: asked %q, results %+v", asked, res)
	}
	// An allowed host redirecting to another host: refused, not followed without asking.
	asked, res = run(agents.ModePlan, srv.URL+"/hop", true)
	if len(asked) != 0 || len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Result, "redirected to localhost, which was not approved") {
		t.Errorf("redirect: asked %q, results %+v", asked, res)
	}
	// acceptEdits does not ask (the address guard still applies).
	asked, res = run(agents.ModeAcceptEdits, srv.URL+"/page", false)
	if len(asked) != 0 || len(res) != 1 || res[0].IsError {
		t.Errorf("acceptEdits: asked %q, results %+v", asked, res)
	}
}
