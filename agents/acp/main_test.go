package acp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// testBinDir holds the fake agent (testdata/fakeagent), built at most once per test process
// on first use and removed when the tests end.
var testBinDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "summit-acp-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testBinDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var fakeAgentBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(testBinDir, "fakeagent")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/summit-dev/summit/agents/acp/testdata/fakeagent").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	return bin, nil
})
