package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runnerFlagsIn returns the --flags given to `summit runner` in text: on a line that runs
// summit runner (the unit's ExecStart, a README command), in SUMMIT_RUNNER_ARGS (runner.env),
// or in runner.yaml's args list (after "- runner").
func runnerFlagsIn(text string) []string {
	var out []string
	flag := regexp.MustCompile(`(?:^|[\s"'])(--[a-z][a-z0-9-]*)`)
	inArgs := false
	for _, l := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(l)
		switch {
		case trim == "- runner":
			inArgs = true
		case inArgs && !strings.HasPrefix(trim, "- ") && !strings.HasPrefix(trim, "#"):
			inArgs = false
		}
		if _, after, ok := strings.Cut(l, "summit runner"); ok {
			// What follows summit runner, up to the end of a $(…) or `…` it is in: the
			// other command's flags on the line are not the runner's.
			l, _, _ = strings.Cut(strings.ReplaceAll(after, "`", ")"), ")")
		} else if !inArgs && !strings.HasPrefix(trim, "SUMMIT_RUNNER_ARGS=") {
			continue
		}
		for _, m := range flag.FindAllStringSubmatch(l, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// TestDeployREADME: the deploy commands name files that exist, and every flag the deployment
// files and commands give `summit runner` is one `summit runner --help` lists.
func TestDeployREADME(t *testing.T) {
	root := filepath.Join("..", "..")
	code, help, errOut := summit(t, "runner", "--help")
	if code != 0 {
		t.Fatalf("summit runner --help: exit %d %s", code, errOut)
	}
	known := map[string]bool{"--help": true}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)`).FindAllStringSubmatch(help, -1) {
		known[m[1]] = true
	}
	for _, f := range []string{"--nats", "--creds", "--name", "--labels", "--slots", "--trust"} {
		if !known[f] {
			t.Fatalf("summit runner --help lacks %s (the issue's flags):\n%s", f, help)
		}
	}
	readme := filepath.Join(root, "deploy", "README.md")
	checked := 0
	for _, b := range fencedBlocks(t, readme) {
		if b.info != "sh" {
			continue
		}
		// Every file of this repository a command names (deploy/<kind>/…, .ci/…; dist/ is
		// what .ci/release-build writes; deploy/summit-runner is kubectl's, not a path).
		for _, m := range regexp.MustCompile(`(?:^|\s|=)((?:deploy/(?:kubernetes|systemd)|\.ci)/[\w.-]+)`).FindAllStringSubmatch(b.text, -1) {
			checked++
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("deploy/README.md:%d: %s does not exist", b.line, m[1])
			}
		}
		for _, f := range runnerFlagsIn(b.text) {
			if !known[f] {
				t.Errorf("deploy/README.md:%d: summit runner has no flag %s", b.line, f)
			}
		}
	}
	if checked < 5 {
		t.Errorf("deploy/README.md names %d files of the repository in its commands, want the manifest, the unit, the env file, the Dockerfile and release-build", checked)
	}
	for _, f := range []string{"deploy/kubernetes/runner.yaml", "deploy/systemd/summit-runner.service", "deploy/systemd/runner.env"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		flags := runnerFlagsIn(string(data))
		if len(flags) == 0 {
			t.Errorf("%s gives summit runner no flag", f)
		}
		for _, fl := range flags {
			if !known[fl] {
				t.Errorf("%s: summit runner has no flag %s", f, fl)
			}
		}
	}
	// The checker sees a flag that does not exist.
	if fl := runnerFlagsIn("ExecStart=/usr/local/bin/summit runner --creds x --nat y"); len(fl) != 2 || known[fl[1]] {
		t.Errorf("runnerFlagsIn: %v", fl)
	}
	if fl := runnerFlagsIn(`kubectl create configmap x --from-literal=trust="$(summit runner key)"`); len(fl) != 0 {
		t.Errorf("runnerFlagsIn takes kubectl's flags for the runner's: %v", fl)
	}
}
