package agents

import (
	"strings"
	"testing"
)

func TestEnvPrecedence(t *testing.T) {
	tw := builtinMap(t)["technical-writer"]
	coder := builtinMap(t)["coder"]
	env := EnvMap(map[string]string{
		"MAESTRO_DEFAULT_MODEL":        "gemini-2.5-pro",
		"MAESTRO_WRITER_MODEL":         "gemini-3-flash-preview",
		"SUMMIT_DEFAULT_TEMPERATURE":   "0.5",
		"MAESTRO_DEFAULT_TEMPERATURE":  "0.9",
		"MAESTRO_MAX_TURNS":            "30",
		"SUMMIT_AGENT_CODER_MAX_TURNS": "40",
		"SUMMIT_AGENT_TIMEOUT":         "90s",
		"MAESTRO_AGENT_TIMEOUT":        "bogus",
	})
	w, ps := ApplyEnv(tw, env)
	if w.Model.Name != "gemini-3-flash-preview" || *w.Temperature != 0.5 || w.MaxTurns != 30 || w.TimeoutMins != 2 {
		t.Errorf("technical-writer: %+v %v", w, ps)
	}
	c, _ := ApplyEnv(coder, env)
	if c.Model.Name != "gemini-2.5-pro" || c.MaxTurns != 40 {
		t.Errorf("coder: model %s turns %d", c.Model.Name, c.MaxTurns)
	}
	if coder.MaxTurns != 25 {
		t.Errorf("ApplyEnv changed the original")
	}
	if len(c.Overrides) != 4 {
		t.Errorf("overrides %v", c.Overrides)
	}
	_, ps = ApplyEnv(coder, EnvMap(map[string]string{"SUMMIT_MAX_TURNS": "many"}))
	if len(ps) != 1 || ps[0].Level != LevelWarning {
		t.Errorf("bad value: %v", ps)
	}
}

func TestCatalogueLayers(t *testing.T) {
	c := Load(Options{
		Workspace: "testdata/layered/builtin-shadow",
		Env:       EnvMap(map[string]string{"MAESTRO_DISABLED_AGENTS": "debugger, refactor", "SUMMIT_DISABLED_AGENTS": "bash"}),
	})
	d, ok := c.Get("explore")
	if !ok || !strings.Contains(d.Body, "summit body") || d.Source.Layer != "summit" {
		t.Fatalf("explore: %+v", d)
	}
	sh := c.Shadows()
	if len(sh) != 2 || !strings.HasPrefix(sh[0].Loser, "builtin:") || !strings.Contains(sh[1].Loser, ".claude") {
		t.Errorf("shadows %v", sh)
	}
	for _, n := range []string{"debugger", "refactor", "bash"} {
		if _, ok := c.Get(n); ok {
			t.Errorf("%s not disabled", n)
		}
	}
	if len(c.List()) != 20-3 {
		t.Errorf("%d agents", len(c.List()))
	}
	ps := c.Problems()
	if len(ps) != 1 || ps[0].Level != LevelError || !strings.HasSuffix(ps[0].File, "broken.md") || ps[0].Line != 3 {
		t.Errorf("problems %v", ps)
	}
	bad := Load(Options{NoBuiltins: true, Dirs: []string{"testdata/does-not-exist"}})
	if len(bad.List()) != 0 || !HasErrors(bad.Problems()) {
		t.Errorf("missing --agents dir: %v", bad.Problems())
	}
}

// TestCorpusCatalogue loads the whole corpus as one --agents layer: one
// bad file never stops the rest.
func TestCorpusCatalogue(t *testing.T) {
	root := corpusDir(t)
	c := LoadPaths(nil, root)
	if c.Files() != 119 || HasErrors(c.Problems()) {
		t.Errorf("files %d problems %v", c.Files(), c.Problems())
	}
	if len(c.List()) < 90 {
		t.Errorf("only %d distinct agents", len(c.List()))
	}
}
