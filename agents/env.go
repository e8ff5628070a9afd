package agents

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Env looks up an environment variable; "" means unset. Callers pass
// os.Getenv; tests pass a map's lookup, so the logic stays hermetic.
type Env func(string) string

// EnvMap adapts a map to Env.
func EnvMap(m map[string]string) Env { return func(k string) string { return m[k] } }

// envPrefixes are read in order; SUMMIT_ wins over MAESTRO_ at the same level
// because it is this program's own spelling.
var envPrefixes = []string{"SUMMIT_", "MAESTRO_"}

// agentSpecificModel lists the agent-specific variables the Maestro seed
// documents: <PREFIX><KEY> overrides the model of that agent only.
var agentSpecificModel = map[string]string{
	"WRITER_MODEL": "technical-writer",
}

// lookup returns the first set spelling of suffix and its full name.
func lookup(env Env, suffix string) (string, string) {
	for _, p := range envPrefixes {
		if v := strings.TrimSpace(env(p + suffix)); v != "" {
			return v, p + suffix
		}
	}
	return "", ""
}

// agentEnvKey turns an agent name into the middle of a variable name:
// code-reviewer → CODE_REVIEWER.
func agentEnvKey(name string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// DisabledAgents reads SUMMIT_DISABLED_AGENTS / MAESTRO_DISABLED_AGENTS, a
// comma-separated list of names (both spellings are honoured together).
func DisabledAgents(env Env) map[string]bool {
	out := map[string]bool{}
	for _, p := range envPrefixes {
		for _, n := range strings.Split(env(p+"DISABLED_AGENTS"), ",") {
			if n = strings.TrimSpace(n); n != "" {
				out[n] = true
			}
		}
	}
	return out
}

// ApplyEnv returns a copy of d with environment overrides applied, with the
// precedence agent-specific > global > frontmatter:
//
//	model:        SUMMIT_AGENT_<NAME>_MODEL, {SUMMIT,MAESTRO}_WRITER_MODEL (technical-writer) > {SUMMIT,MAESTRO}_DEFAULT_MODEL
//	temperature:  SUMMIT_AGENT_<NAME>_TEMPERATURE > {SUMMIT,MAESTRO}_DEFAULT_TEMPERATURE
//	max turns:    SUMMIT_AGENT_<NAME>_MAX_TURNS > {SUMMIT,MAESTRO}_MAX_TURNS
//	timeout:      SUMMIT_AGENT_<NAME>_TIMEOUT > {SUMMIT,MAESTRO}_AGENT_TIMEOUT
//
// Timeouts are minutes (as timeout_mins) or a Go duration ("90s", rounded up
// to whole minutes). A value that does not parse is ignored with a warning.
// Every applied override is recorded in Definition.Overrides.
func ApplyEnv(d *Definition, env Env) (*Definition, []Problem) {
	if env == nil {
		return d, nil
	}
	c := d.Clone()
	ps := &problems{file: d.Source.Path}
	pick := func(field string, global string) (string, string) {
		if v := strings.TrimSpace(env("SUMMIT_AGENT_" + agentEnvKey(d.Name) + "_" + field)); v != "" {
			return v, "SUMMIT_AGENT_" + agentEnvKey(d.Name) + "_" + field
		}
		if field == "MODEL" {
			for suffix, agent := range agentSpecificModel {
				if agent == d.Name {
					if v, k := lookup(env, suffix); v != "" {
						return v, k
					}
				}
			}
		}
		return lookup(env, global)
	}
	note := func(k, v string) { c.Overrides = append(c.Overrides, k+"="+v) }

	if v, k := pick("MODEL", "DEFAULT_MODEL"); v != "" {
		c.Model = ParseModel(strings.Split(v, ",")...)
		note(k, v)
	}
	if v, k := pick("TEMPERATURE", "DEFAULT_TEMPERATURE"); v != "" {
		if t, err := strconv.ParseFloat(v, 64); err == nil && t >= 0 && t <= 2 {
			c.Temperature = &t
			note(k, v)
		} else {
			ps.warnf(0, "%s=%q is not a temperature in 0..2; ignored", k, v)
		}
	}
	if v, k := pick("MAX_TURNS", "MAX_TURNS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			c.MaxTurns = n
			note(k, v)
		} else {
			ps.warnf(0, "%s=%q is not a positive whole number; ignored", k, v)
		}
	}
	if v, k := pick("TIMEOUT", "AGENT_TIMEOUT"); v != "" {
		if n, ok := parseMinutes(v); ok {
			c.TimeoutMins = n
			note(k, v)
		} else {
			ps.warnf(0, "%s=%q is not minutes or a duration; ignored", k, v)
		}
	}
	return c, ps.list
}

func parseMinutes(v string) (int, bool) {
	if n, err := strconv.Atoi(v); err == nil {
		return n, n > 0
	}
	dur, err := time.ParseDuration(v)
	if err != nil || dur <= 0 {
		return 0, false
	}
	return int(math.Ceil(dur.Minutes())), true
}
