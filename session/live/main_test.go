package live

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// testBinDir holds the helper binaries the tests build (the fake ACP agent, the test MCP
// server): each is built at most once per test process, on first use, and removed when the
// tests end. A build links a binary, seconds of a shared machine; tests only run them.
var testBinDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "summit-live-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testBinDir = dir
	// The parallel tests mostly wait on git and the processes they start: by default Go runs
	// only GOMAXPROCS of them at once, 2 on a 2-core machine. An explicit -parallel is kept.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildOnce returns a function that builds pkg into testBinDir/name on its first call and
// returns that build's path or error on every call.
func buildOnce(name, pkg string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		bin := filepath.Join(testBinDir, name)
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v\n%s", err, out)
		}
		return bin, nil
	})
}

var (
	fakeAgentBin = buildOnce("fakeagent", "github.com/summit-dev/summit/agents/acp/testdata/fakeagent")
	mcpServer    = buildOnce("mcpserver", "github.com/summit-dev/summit/agents/mcp/testdata/server")
)
