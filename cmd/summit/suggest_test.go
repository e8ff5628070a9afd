package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// A mistyped subcommand or flag names the nearest valid one, and is still a usage error (2).
// In-process: run() is what main calls.
func TestCLITypoSuggestions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"demoo"}, `unknown command "demoo" for "summit" (did you mean demo?)`},
		{[]string{"replya", "x.jsonl"}, "(did you mean replay?)"},
		{[]string{"--worksapce", "/tmp"}, "unknown flag: --worksapce (did you mean --workspace?)"},
		{[]string{"run", "--scirpt", "x"}, "(did you mean --script?)"},
		{[]string{"replay", "x.jsonl", "--prnt"}, "(did you mean --print?)"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with %q", c.args, code, errb.String(), c.want)
		}
	}
	// Nothing close: no suggestion, still a usage error.
	var out, errb bytes.Buffer
	if code := run([]string{"zzzzzzzz"}, &out, &errb); code != exitUsage || strings.Contains(errb.String(), "did you mean") {
		t.Errorf("a word near nothing: exit %d, %q", code, errb.String())
	}
}

// --provider's help names every provider it accepts without configuration (gemini was missing).
func TestProviderHelpComplete(t *testing.T) {
	t.Parallel()
	names := provider.Forcible()
	if !strings.Contains(strings.Join(names, " "), "gemini") {
		t.Fatalf("Forcible() = %v, without gemini", names)
	}
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"serve", "--help"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "--provider") {
				line = l
			}
		}
		for _, n := range names {
			if !strings.Contains(line, n) {
				t.Errorf("%v: --provider's help lacks %s: %q", args, n, line)
			}
		}
	}
}

// Every recording names the program that made it (SessionStarted.program_version was empty).
func TestRecordingHasProgramVersion(t *testing.T) {
	t.Parallel()
	code, _, errOut, rec := runScript(t, runWorkspace(t), "a note\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	evs, _, err := record.ReadAll(rec, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ss, ok := evs[0].Data.(session.SessionStarted)
	if !ok || ss.ProgramVersion == "" || ss.ProgramVersion != programVersion() {
		t.Errorf("SessionStarted.program_version = %q, want %q", ss.ProgramVersion, programVersion())
	}
}
