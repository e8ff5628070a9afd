package commands

import (
	"strings"
	"testing"
)

// /apply's preview and verification flags parse, print back the same, and are recorded.
func TestApplyFlags(t *testing.T) {
	c, err := Parse(`/apply cv-1 --verify "go test ./..." --force`)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := c.(Apply)
	if !ok || a.ConvergenceID != "cv-1" || a.Verify != "go test ./..." || !a.Force || a.DryRun {
		t.Fatalf("parsed %#v", c)
	}
	if got := a.String(); got != `/apply cv-1 --verify "go test ./..." --force` {
		t.Errorf("String() = %s", got)
	}
	if args := a.Args(); args["verify"] != "go test ./..." || args["force"] != true || args["dry_run"] != false {
		t.Errorf("Args() = %v", args)
	}
	c, err = Parse("/apply sa-2 --dry-run")
	if a, ok := c.(Apply); err != nil || !ok || a.SubagentID != "sa-2" || a.ConvergenceID != "" || !a.DryRun {
		t.Fatalf("parsed %#v %v", c, err)
	}
	if _, err := Parse("/apply cv-1 --verify"); err == nil || !strings.Contains(err.Error(), "--verify") {
		t.Errorf("--verify without a command: %v", err)
	}
	if _, err := Parse("/apply cv-1 --dryrun"); err == nil || !strings.Contains(err.Error(), "--dry-run") {
		t.Errorf("a typo of --dry-run: %v", err)
	}
}
