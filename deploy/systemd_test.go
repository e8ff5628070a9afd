package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
)

const unitPath = "systemd/summit-runner.service"

// unitOptions parses a unit file: section → option → values (an option may repeat).
func unitOptions(data []byte) (map[string]map[string][]string, error) {
	opts, err := unit.DeserializeOptions(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out := map[string]map[string][]string{}
	for _, o := range opts {
		if out[o.Section] == nil {
			out[o.Section] = map[string][]string{}
		}
		out[o.Section][o.Name] = append(out[o.Section][o.Name], o.Value)
	}
	return out, nil
}

// checkUnit returns what the unit lacks of the hardening deploy/README.md promises, and what
// it sets that would break the runner's own confinement of its subagents (see the unit's
// header comment).
func checkUnit(data []byte) []string {
	u, err := unitOptions(data)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	s := u["Service"]
	one := func(name string) string {
		if v := s[name]; len(v) > 0 {
			return v[len(v)-1]
		}
		return ""
	}
	for name, want := range map[string]string{
		"DynamicUser":             "yes",
		"NoNewPrivileges":         "yes",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"Restart":                 "on-failure",
		"RestrictSUIDSGID":        "yes",
		"SystemCallArchitectures": "native",
		"EnvironmentFile":         "/etc/summit/runner.env",
		"RestrictNamespaces":      "user mnt pid ipc net",
		"CapabilityBoundingSet":   "CAP_SYS_ADMIN CAP_NET_ADMIN",
	} {
		if got := one(name); got != want {
			bad = append(bad, fmt.Sprintf("Service.%s is %q, want %q", name, got, want))
		}
	}
	// Each of these lays a mount over part of /proc, and then the kernel refuses the subagent's
	// own /proc in its user namespace; an empty bounding set forbids the ambient capabilities
	// the confinement's second stage keeps in its namespace.
	for _, name := range []string{"ProtectKernelTunables", "ProtectKernelLogs", "ProtectProc", "ProcSubset", "PrivateUsers"} {
		if v := one(name); v != "" && v != "no" && v != "default" && v != "all" {
			bad = append(bad, fmt.Sprintf("Service.%s=%s breaks the subagents' confinement", name, v))
		}
	}
	filter := strings.Fields(strings.Join(s["SystemCallFilter"], " "))
	for _, call := range []string{"@system-service", "@mount", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "seccomp"} {
		if !slices.Contains(filter, call) {
			bad = append(bad, fmt.Sprintf("SystemCallFilter lacks %s (the runner's confinement uses it)", call))
		}
	}
	exec := strings.Fields(one("ExecStart"))
	if len(exec) < 2 || filepath.Base(exec[0]) != "summit" || exec[1] != "runner" {
		bad = append(bad, fmt.Sprintf("ExecStart %q does not run summit runner", one("ExecStart")))
	}
	if !slices.Contains(exec, "$SUMMIT_RUNNER_ARGS") {
		bad = append(bad, "ExecStart does not pass $SUMMIT_RUNNER_ARGS (unbraced, so systemd splits it into words)")
	}
	// The credentials file reaches the runner only through systemd's credentials directory.
	if cred := one("LoadCredential"); !strings.HasPrefix(cred, "nats.creds:") || !strings.Contains(one("ExecStart"), "--creds %d/nats.creds") {
		bad = append(bad, "the NATS credentials do not come from LoadCredential=nats.creds:… as --creds %d/nats.creds")
	}
	for _, sock := range []string{"ListenStream", "ListenDatagram"} {
		if len(u["Socket"][sock]) > 0 || len(s[sock]) > 0 {
			bad = append(bad, "the runner listens on nothing")
		}
	}
	if !slices.Contains(u["Install"]["WantedBy"], "multi-user.target") {
		bad = append(bad, "Install.WantedBy is not multi-user.target")
	}
	return bad
}

func TestSystemdUnit(t *testing.T) {
	data, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	if bad := checkUnit(data); len(bad) > 0 {
		t.Errorf("%s:\n  %s", unitPath, strings.Join(bad, "\n  "))
	}
	for _, c := range []struct{ old, new, want string }{
		{"NoNewPrivileges=yes", "NoNewPrivileges=no", "NoNewPrivileges"},
		{"ProtectClock=yes", "ProtectKernelTunables=yes", "ProtectKernelTunables=yes breaks"},
		{" seccomp\n", "\n", "lacks seccomp"},
		{"--creds %d/nats.creds", "--creds /etc/summit/runner.creds", "LoadCredential"},
	} {
		if bad := strings.Join(checkUnit(bytes.Replace(data, []byte(c.old), []byte(c.new), 1)), "\n"); !strings.Contains(bad, c.want) {
			t.Errorf("replacing %q by %q is not refused with %q: %s", c.old, c.new, c.want, bad)
		}
	}
}

// verifyUnit runs systemd-analyze verify on the unit as installed, with its ExecStart binary
// (/usr/local/bin/summit, absent here) pointed at one that exists; any line it prints is a
// problem (it exits 0 on a value it ignores, such as ProtectSystem=strit).
func verifyUnit(t *testing.T, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "summit-runner.service")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.ReplaceAll(data, []byte("/usr/local/bin/summit"), []byte(self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", p).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestSystemdAnalyzeVerify: systemd's own parser accepts every line of the unit. .ci/run
// installs systemd-analyze where it is missing; under SUMMIT_E2E its absence fails.
func TestSystemdAnalyzeVerify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		if os.Getenv("SUMMIT_E2E") == "1" {
			t.Fatal("systemd-analyze is missing (apt-get install systemd; .ci/run does)")
		}
		t.Skip("systemd-analyze is missing; TestSystemdUnit still parses the unit")
	}
	data, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	if out := verifyUnit(t, data); out != "" {
		t.Errorf("systemd-analyze verify %s:\n%s", unitPath, out)
	}
	// It can fail: a misspelt value is reported.
	if out := verifyUnit(t, bytes.Replace(data, []byte("ProtectSystem=strict"), []byte("ProtectSystem=strit"), 1)); !strings.Contains(out, "strit") {
		t.Errorf("systemd-analyze verify does not report ProtectSystem=strit: %q", out)
	}
}
