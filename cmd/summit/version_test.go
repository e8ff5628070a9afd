package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// versionSymbol is the variable a release sets with -X (version.go), and testVersion what the
// tests' shared binary is linked with (builtBinary).
const (
	versionSymbol = "main.version"
	testVersion   = "v0.0.0-ldflag-test"
)

// TestReleaseVersionLdflag: the -X of .ci/release-build (the line README.md's Install shows)
// names the variable `summit version` prints, and a binary linked with it says that version.
// -X on a name that does not exist, or on a variable that is not a plain string, is silently
// ignored by the linker: only running the linked binary shows it took.
func TestReleaseVersionLdflag(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", ".ci", "release-build"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`ldflags="-s -w -X ([A-Za-z0-9_./]+)=\$version"`).FindSubmatch(b)
	if m == nil {
		t.Fatal(".ci/release-build: no ldflags=\"-s -w -X SYMBOL=$version\" line")
	}
	if string(m[1]) != versionSymbol {
		t.Fatalf(".ci/release-build sets %s; summit version prints %s", m[1], versionSymbol)
	}
	// .goreleaser.yaml builds the same binaries: the same -X, flags and CGO setting.
	var gr struct {
		Builds []struct {
			Main    string   `yaml:"main"`
			Env     []string `yaml:"env"`
			Flags   []string `yaml:"flags"`
			Ldflags []string `yaml:"ldflags"`
		} `yaml:"builds"`
	}
	if g, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml")); err != nil {
		t.Fatal(err)
	} else if err := yaml.Unmarshal(g, &gr); err != nil || len(gr.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml: %v, %d builds", err, len(gr.Builds))
	}
	if b := gr.Builds[0]; b.Main != "./cmd/summit" || strings.Join(b.Ldflags, " ") != "-s -w -X "+versionSymbol+"={{ .Tag }}" ||
		strings.Join(b.Flags, " ") != "-trimpath" || strings.Join(b.Env, " ") != "CGO_ENABLED=0" {
		t.Errorf(".goreleaser.yaml builds otherwise than .ci/release-build: %+v", b)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), `-ldflags "-s -w -X `+versionSymbol+`=`) {
		t.Errorf("README.md shows no build line with -X %s", versionSymbol)
	}
	out, err := exec.Command(buildBinary(t), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "summit " + testVersion + " (recording schema v"; !strings.HasPrefix(string(out), want) {
		t.Errorf("summit version linked with -X %s=%s: %q, want %q…", versionSymbol, testVersion, out, want)
	}
}
