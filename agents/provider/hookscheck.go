package provider

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// CheckHooksFile checks the hooks: section of one file as a session would load it: a summit
// config.yaml, or a Claude Code settings.json whole (JSON is YAML, and the keys besides hooks
// are not summit's to check). Errors name file:line (and the nearest event name); the
// returned Hooks hold the entries that run and the Warnings of those that load with no
// effect. The file's other sections are not checked here (a session checks them).
func CheckHooksFile(f string) (Hooks, error) {
	data, err := readCapped(f, MaxConfigFile, "a config file")
	if err != nil {
		return Hooks{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Hooks{}, fmt.Errorf("%s: %v", f, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := expandAliases(&doc, f); err != nil {
		return Hooks{}, err
	}
	// The other top-level keys land in Rest; the hooks: section is decoded with
	// KnownFields, so a misspelt field inside it is an error at its line.
	var c struct {
		Hooks Hooks                `yaml:"hooks"`
		Rest  map[string]yaml.Node `yaml:",inline"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, errEOF(err)) {
		return Hooks{}, fmt.Errorf("%s: %v", f, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if _, ok := c.Rest["hooks"]; ok || hookKeyLine(&doc) == 0 {
		return Hooks{}, fmt.Errorf("%s: no hooks: section (a summit config.yaml or a Claude Code settings.json with \"hooks\")", f)
	}
	var merged Hooks
	if err := mergeHooks(&merged, c.Hooks, f, &doc, false); err != nil {
		return Hooks{}, err
	}
	merged.MaxBlocks = c.Hooks.MaxBlocks
	return merged, nil
}

// hookKeyLine is the line of the top-level hooks key, 0 when there is none.
func hookKeyLine(doc *yaml.Node) int {
	if doc == nil || len(doc.Content) == 0 {
		return 0
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "hooks" {
			return top.Content[i].Line
		}
	}
	return 0
}
