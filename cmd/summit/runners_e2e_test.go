package main

// End-to-end tests of remote runners (issue 29, items 8 and 12) on Debian's nats-server
// (installed by .ci/run) and real `summit runner` processes: the issue's "How it will be
// checked" lines on loopback, and the network-namespace test (runners each in a namespace of
// their own on a bridge, one killed, one partitioned for 30 s, the server restarted).
// Each needs nats-server (and root, for the namespaces): missing, it is skipped, or fails under
// SUMMIT_E2E=1. Every process runs under a timeout (netnstest) and is killed at cleanup.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/summit-dev/summit/cmd/summit/internal/netnstest"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// needE2E skips the test when err says a prerequisite is missing, or fails it under SUMMIT_E2E=1.
func needE2E(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("SUMMIT_E2E") == "1" {
		t.Fatal(err)
	}
	t.Skip(err)
}

func needNATSServer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("nats-server"); err != nil {
		needE2E(t, fmt.Errorf("nats-server is missing (apt-get install nats-server; .ci/run does): %v", err))
	}
}

// e2eNATS is Debian's nats-server with JetStream in a temp dir and a user/password, listening
// on host only. Its log accumulates across restarts.
type e2eNATS struct {
	t     *testing.T
	net   *netnstest.Net // nil: the root namespace without a bridge
	conf  string
	URL   string
	Creds string // "user:password", the file summit's --creds takes
	log   netnstest.Buffer
	proc  *netnstest.Proc
	ready int
}

func startNATS(t *testing.T, n *netnstest.Net, host string) *e2eNATS {
	t.Helper()
	needNATSServer(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pw := fmt.Sprintf("pw-%d-%d", os.Getpid(), time.Now().UnixNano())
	s := &e2eNATS{t: t, net: n, conf: filepath.Join(dir, "nats.conf"), URL: fmt.Sprintf("nats://%s", net.JoinHostPort(host, strconv.Itoa(port))), Creds: filepath.Join(dir, "summit.creds")}
	conf := fmt.Sprintf("listen: %q\nserver_name: summit-e2e\njetstream {\n  store_dir: %q\n}\nauthorization {\n  user: summit\n  password: %q\n}\n",
		net.JoinHostPort(host, strconv.Itoa(port)), filepath.Join(dir, "js"), pw)
	if err := os.WriteFile(s.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Creds, []byte("summit:"+pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.start()
	return s
}

func (s *e2eNATS) start() {
	s.t.Helper()
	var err error
	s.proc, err = netnstest.StartHost(s.t, context.Background(), 10*time.Minute, nil, &s.log, "nats-server", "-c", s.conf)
	if err != nil {
		s.t.Fatal(err)
	}
	s.ready++
	waitFor(s.t, 30*time.Second, "nats-server ready", func() bool { return strings.Count(s.log.String(), "Server is ready") >= s.ready })
}

// restart stops the server (SIGTERM, as systemd would) and starts it again on its store.
func (s *e2eNATS) restart(down time.Duration) {
	s.t.Helper()
	s.proc.Stop(10 * time.Second)
	time.Sleep(down)
	s.start()
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
	}
}

// e2eHome is a user's own config, cache and data dirs (the session key lives in the config).
func e2eHome(t *testing.T) []string {
	d := t.TempDir()
	return []string{"HOME=" + d, "XDG_CONFIG_HOME=" + filepath.Join(d, "config"), "XDG_CACHE_HOME=" + filepath.Join(d, "cache"), "XDG_DATA_HOME=" + filepath.Join(d, "data")}
}

// sessionKey is what `summit runner key` prints for the user whose dirs env names.
func sessionKey(t *testing.T, bin string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "runner", "key")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	key := strings.TrimSpace(string(out))
	if err != nil || !regexp.MustCompile(`^U[A-Z2-7]{55}$`).MatchString(key) {
		t.Fatalf("summit runner key: %v %q", err, out)
	}
	return key
}

type e2eRunner struct {
	name   string
	proc   *netnstest.Proc
	stderr netnstest.Buffer
}

// startRunner starts `summit runner` in ns (nil: the root namespace) and waits for its ready line.
func startRunner(t *testing.T, bin string, ns *netnstest.NS, s *e2eNATS, key, tapes, name string, slots int) *e2eRunner {
	t.Helper()
	r := &e2eRunner{name: name}
	args := append(e2eHome(t), bin, "runner", "--nats", s.URL, "--creds", s.Creds, "--name", name, "--slots", strconv.Itoa(slots), "--trust", key, "--tapes", tapes)
	var err error
	if ns == nil {
		r.proc, err = netnstest.StartHost(t, context.Background(), 10*time.Minute, nil, &r.stderr, "env", args...)
	} else {
		r.proc, err = ns.Start(context.Background(), 10*time.Minute, nil, &r.stderr, "env", args...)
	}
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "runner "+name+" ready", func() bool {
		select {
		case <-r.proc.Done():
			t.Fatalf("runner %s ended: %v\n%s", name, r.proc.Wait(), r.stderr.String())
		default:
		}
		return strings.Contains(r.stderr.String(), "runner "+name+" ready")
	})
	return r
}

// jobTapes writes one tape per job "job N" (builder): it says numbered lines, sleeps, writes
// out/job-N.txt, and ends with a capsule. Each line's text is unique, so a lost or duplicated
// event shows in the transcript.
func jobTapes(t *testing.T, jobs int, sleep time.Duration) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("tapes:\n")
	for i := 1; i <= jobs; i++ {
		fmt.Fprintf(&b, `  - name: job-%[1]d
    match: {agent: builder, task: "^job %[1]d$"}
    rate: 0
    steps:
      - say: "job %[1]d line 1."
      - sleep: %[2]s
      - say: "job %[1]d line 2."
      - tool: write_file
        args: {path: "out/job-%[1]d.txt", content: "written by job %[1]d\n"}
      - say: "job %[1]d line 3."
      - sleep: %[2]s
      - say: "job %[1]d line 4."
      - capsule: {summary: "job %[1]d wrote out/job-%[1]d.txt", confidence: 0.9}
`, i, (sleep / 2).String())
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "jobs.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type e2eRun struct {
	proc           *netnstest.Proc
	stdout, stderr netnstest.Buffer
	rec, ws        string
}

// startRun starts `summit run` on script in a fresh workspace, connected to s.
func startRun(t *testing.T, bin string, s *e2eNATS, env []string, script string, limit time.Duration) *e2eRun {
	t.Helper()
	return startRunApprove(t, bin, s, env, script, "all", limit)
}

// startRunApprove is startRun with --approve approve.
func startRunApprove(t *testing.T, bin string, s *e2eNATS, env []string, script, approve string, limit time.Duration) *e2eRun {
	t.Helper()
	r := &e2eRun{ws: t.TempDir(), rec: filepath.Join(t.TempDir(), "run.jsonl")}
	if err := os.WriteFile(filepath.Join(r.ws, "README.md"), []byte("# e2e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(t.TempDir(), "run.summit")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(env), bin, "run", "--script", sp, "--workspace", r.ws, "--nats", s.URL, "--creds", s.Creds,
		"--approve", approve, "--record", r.rec, "--max-parallel", "64")
	var err error
	r.proc, err = netnstest.StartHost(t, context.Background(), limit, &r.stdout, &r.stderr, "env", args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// events reads the recording and checks what every recording of a run must hold: seqs from 1,
// strictly increasing with no gap.
func events(t *testing.T, path string) []session.Event {
	t.Helper()
	evs, rep, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatalf("%s: %v (%+v)", path, err, rep)
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: seqs must go 1, 2, 3… with no gap", i+1, e.Seq)
		}
	}
	return evs
}

// subagentRecord is what the recording says of one subagent.
type subagentRecord struct {
	task, runner string
	spawned      int
	stops        []session.SubagentStop
	stopAt       time.Time
	errors       []string
	notes        []string // its transcript's message lines
	text         strings.Builder
}

func bySubagent(evs []session.Event) map[string]*subagentRecord {
	out := map[string]*subagentRecord{}
	get := func(id string) *subagentRecord {
		if out[id] == nil {
			out[id] = &subagentRecord{}
		}
		return out[id]
	}
	for _, e := range evs {
		if e.SubagentID == "" {
			continue
		}
		s := get(e.SubagentID)
		switch d := e.Data.(type) {
		case session.SubagentSpawned:
			s.spawned++
			s.task, s.runner = d.TaskDescription, d.Runner
		case session.SubagentStop:
			s.stops = append(s.stops, d)
			s.stopAt = e.TS
		case session.SubagentError:
			s.errors = append(s.errors, d.Error)
		case session.TranscriptEvent:
			if d.EventType == session.TranscriptToken {
				s.text.WriteString(d.Text)
			}
			if d.EventType == session.TranscriptMessage {
				s.notes = append(s.notes, d.Text)
			}
		}
	}
	return out
}

// checkJobText: a finished job's transcript holds each of its tape's lines exactly once, in
// order (an event folded twice or lost changes it).
func checkJobText(t *testing.T, id string, s *subagentRecord) {
	t.Helper()
	n := strings.TrimPrefix(s.task, "job ")
	text := s.text.String()
	last := -1
	for i := 1; i <= 4; i++ {
		line := fmt.Sprintf("job %s line %d.", n, i)
		if c := strings.Count(text, line); c != 1 {
			t.Errorf("%s (%s): %q appears %d times in its transcript, want once:\n%s", id, s.task, line, c, text)
			return
		}
		at := strings.Index(text, line)
		if at < last {
			t.Errorf("%s: %q out of order", id, line)
		}
		last = at
	}
}

// e2eSetup is what every runner test starts from: the binary, a nats-server on host (on n's
// bridge, or loopback when n is nil), the session user's dirs and key, and tapes for jobs
// jobs that each take about sleep.
func e2eSetup(t *testing.T, n *netnstest.Net, host string, jobs int, sleep time.Duration) (bin string, s *e2eNATS, home []string, key, tapes string) {
	t.Helper()
	needNATSServer(t)
	bin = buildBinary(t)
	s = startNATS(t, n, host)
	home = e2eHome(t)
	return bin, s, home, sessionKey(t, bin, home), jobTapes(t, jobs, sleep)
}

// TestRunnersE2ELoopback is the first check: nats-server -js on loopback, two runners,
// summit run with six /delegate … --on any and a /converge: all end, the recording names each
// runner, and /apply lands the merge.
func TestRunnersE2ELoopback(t *testing.T) {
	t.Parallel()
	bin, s, home, key, tapes := e2eSetup(t, nil, "127.0.0.1", 6, 2*time.Second)
	startRunner(t, bin, nil, s, key, tapes, "loop-1", 3)
	startRunner(t, bin, nil, s, key, tapes, "loop-2", 3)
	var script strings.Builder
	var ids []string
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&script, "/delegate \"job %d\" --agent-type builder --on any\n", i)
		ids = append(ids, fmt.Sprintf("sa-%d", i))
	}
	fmt.Fprintf(&script, "/converge %s --strategy merge\n/apply cv-1\n", strings.Join(ids, " "))
	run := startRun(t, bin, s, home, script.String(), 4*time.Minute)
	if err := run.proc.Wait(); err != nil {
		t.Fatalf("summit run: %v\n%s", err, run.stderr.String())
	}
	subs := bySubagent(events(t, run.rec))
	used := map[string]bool{}
	for _, id := range ids {
		sa := subs[id]
		if sa == nil || sa.spawned != 1 || len(sa.stops) != 1 || sa.stops[0].Outcome != session.OutcomeSuccess {
			t.Errorf("%s: %+v", id, sa)
			continue
		}
		used[sa.runner] = true
		checkJobText(t, id, sa)
	}
	if !used["loop-1"] || !used["loop-2"] || len(used) != 2 {
		t.Errorf("the recording names runners %v, want loop-1 and loop-2", used)
	}
	for i := 1; i <= 6; i++ {
		b, err := os.ReadFile(filepath.Join(run.ws, "out", fmt.Sprintf("job-%d.txt", i)))
		if want := fmt.Sprintf("written by job %d\n", i); err != nil || string(b) != want {
			t.Errorf("after /apply cv-1, out/job-%d.txt is %q (%v), want %q", i, b, err, want)
		}
	}
}

// TestRunnersE2EKill is the second check: kill -9 of a runner mid-run fails its
// subagent naming the runner within 15 s, the run exits, and the recording's seqs are strictly
// increasing with no gap.
func TestRunnersE2EKill(t *testing.T) {
	t.Parallel()
	// A job of 20 s outlives the kill (2 s after its start) and its detection (≤ 15 s); the
	// other runner's job is the run's length.
	bin, s, home, key, tapes := e2eSetup(t, nil, "127.0.0.1", 2, 20*time.Second)
	victim := startRunner(t, bin, nil, s, key, tapes, "kill-1", 2)
	startRunner(t, bin, nil, s, key, tapes, "kill-2", 2)
	run := startRun(t, bin, s, home, "/delegate \"job 1\" --agent-type builder --on kill-1\n/delegate \"job 2\" --agent-type builder --on kill-2\n/wait sa-1 sa-2\n", 4*time.Minute)
	// Killed once its subagent runs (the runner's "job … started" line) and has streamed.
	waitFor(t, 90*time.Second, "job 1 running on kill-1", func() bool { return strings.Contains(victim.stderr.String(), ") started") })
	time.Sleep(2 * time.Second)
	if err := victim.proc.Kill9(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case <-run.proc.Done():
	case <-time.After(3 * time.Minute):
		t.Fatalf("summit run did not exit after the kill:\n%s", run.stderr.String())
	}
	evs := events(t, run.rec)
	subs := bySubagent(evs)
	sa := subs["sa-1"]
	if sa == nil || len(sa.stops) != 1 || sa.stops[0].Outcome != session.OutcomeFailure {
		t.Fatalf("sa-1 on the killed runner: %+v", sa)
	}
	if !slices.ContainsFunc(sa.errors, func(e string) bool { return strings.Contains(e, "kill-1") }) {
		t.Errorf("sa-1's failure does not name the runner kill-1: %q", sa.errors)
	}
	if d := sa.stopAt.Sub(killed); d > 15*time.Second {
		t.Errorf("sa-1 failed %v after the kill, want within 15 s", d.Round(time.Millisecond))
	}
	if sa := subs["sa-2"]; sa == nil || len(sa.stops) != 1 || sa.stops[0].Outcome != session.OutcomeSuccess || sa.runner != "kill-2" {
		t.Errorf("sa-2 on the live runner: %+v", sa)
	} else {
		checkJobText(t, "sa-2", sa)
	}
}

// runnersNetnsBroken is why TestRunnersE2ENetns skips (SUMMIT_E2E_KNOWN_BROKEN=1 runs it);
// "" when it runs.
const runnersNetnsBroken = ""

// TestRunnersE2ENetns is issue 29's network test: nats-server on a bridge, three runners each in
// a network namespace of its own, 30 subagents placed --on any; one runner is killed with
// kill -9, another partitioned for 30 s, and the server restarted. Every subagent ends; the
// killed runner's fail naming it within 15 s; the others succeed with every event once; the
// changes land with /apply.
func TestRunnersE2ENetns(t *testing.T) {
	t.Parallel()
	if runnersNetnsBroken != "" && os.Getenv("SUMMIT_E2E_KNOWN_BROKEN") != "1" {
		t.Skip(runnersNetnsBroken)
	}
	needE2E(t, netnstest.Require())
	n := netnstest.New(t)
	const jobs = 30
	// 6 s jobs: the partition's length (30 s, the issue's) does not depend on theirs; jobs in
	// flight when it starts finish on the runner and their events wait for the heal.
	bin, s, home, key, tapes := e2eSetup(t, n, n.HostIP(), jobs, 6*time.Second)
	names := []string{"ns-kill", "ns-part", "ns-steady"}
	rs := map[string]*e2eRunner{}
	nss := map[string]*netnstest.NS{}
	for _, name := range names {
		nss[name] = n.Add()
		rs[name] = startRunner(t, bin, nss[name], s, key, tapes, name, 4)
	}
	var script strings.Builder
	var ids []string
	for i := 1; i <= jobs; i++ {
		fmt.Fprintf(&script, "/delegate \"job %d\" --agent-type builder --on any\n", i)
		ids = append(ids, fmt.Sprintf("sa-%d", i))
	}
	fmt.Fprintf(&script, "/wait %s\n", strings.Join(ids, " "))
	// Each one that succeeded lands its file; those of the killed runner are refused.
	for _, id := range ids {
		fmt.Fprintf(&script, "/apply %s\n", id)
	}
	run := startRun(t, bin, s, home, script.String(), 8*time.Minute)
	started := func(r string) bool { return strings.Contains(rs[r].stderr.String(), ") started") }
	waitFor(t, 2*time.Minute, "every runner started a job", func() bool { return started("ns-kill") && started("ns-part") && started("ns-steady") })

	if err := rs["ns-kill"].proc.Kill9(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := nss["ns-part"].Partition(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Second)
	if err := nss["ns-part"].Heal(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	s.restart(2 * time.Second)

	select {
	case <-run.proc.Done():
	case <-time.After(7 * time.Minute):
		t.Fatalf("summit run did not end:\n%s", run.stderr.String())
	}
	subs := bySubagent(events(t, run.rec))
	count := map[string]int{}
	var slowest time.Duration // from the kill to the last failure of ns-kill's subagents
	noted := 0                // ns-part's subagents whose transcript says it went unreachable and came back
	for _, id := range ids {
		sa := subs[id]
		if sa == nil || sa.spawned != 1 || len(sa.stops) != 1 {
			t.Errorf("%s did not end exactly once: %+v", id, sa)
			continue
		}
		count[sa.runner]++
		has := func(s string) bool {
			return slices.ContainsFunc(sa.notes, func(n string) bool { return strings.Contains(n, s) })
		}
		if sa.runner == "ns-part" && has("runner ns-part is unreachable") && has("runner ns-part is back") {
			noted++
		}
		switch sa.runner {
		case "ns-kill":
			if sa.stops[0].Outcome != session.OutcomeFailure || !slices.ContainsFunc(sa.errors, func(e string) bool { return strings.Contains(e, "ns-kill") }) {
				t.Errorf("%s on the killed runner: outcome %s, errors %q; want a failure naming ns-kill", id, sa.stops[0].Outcome, sa.errors)
			}
			slowest = max(slowest, sa.stopAt.Sub(killed))
			if d := sa.stopAt.Sub(killed); d > 15*time.Second {
				t.Errorf("%s failed %v after the kill, want within 15 s", id, d.Round(time.Millisecond))
			}
		default:
			if sa.stops[0].Outcome != session.OutcomeSuccess {
				t.Errorf("%s on %s: outcome %s (%q), want success through the partition and the restart", id, sa.runner, sa.stops[0].Outcome, sa.errors)
				continue
			}
			checkJobText(t, id, sa)
			n := strings.TrimPrefix(sa.task, "job ")
			if b, err := os.ReadFile(filepath.Join(run.ws, "out", "job-"+n+".txt")); err != nil || string(b) != "written by job "+n+"\n" {
				t.Errorf("after /apply %s, out/job-%s.txt is %q (%v)", id, n, b, err)
			}
		}
	}
	if count["ns-kill"] == 0 || count["ns-part"] == 0 || count["ns-steady"] == 0 {
		t.Errorf("placements per runner %v: every runner should have had jobs", count)
	}
	if noted == 0 {
		t.Error("no subagent of ns-part noted it unreachable and back during its 30 s partition")
	}
	t.Logf("placements %v; ns-kill's subagents failed within %v of the kill; %d of ns-part's noted it unreachable and back; nats-server restarted at the end of the partition",
		count, slowest.Round(time.Millisecond), noted)
}

// TestE2ENATSBroker checks the tests' broker on its own: Debian's nats-server on a bridge asks
// for credentials and has JetStream (its INFO says so), a namespace reaches it, and after a
// restart it serves on the same address again.
func TestE2ENATSBroker(t *testing.T) {
	t.Parallel()
	needE2E(t, netnstest.Require())
	n := netnstest.New(t)
	s := startNATS(t, n, n.HostIP())
	addr := strings.TrimPrefix(s.URL, "nats://")
	info := func() string {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 4096)
		k, _ := c.Read(b)
		return string(b[:k])
	}
	if got := info(); !strings.HasPrefix(got, "INFO ") || !strings.Contains(got, `"auth_required":true`) || !strings.Contains(got, `"jetstream":true`) {
		t.Errorf("nats-server's INFO: %q", got)
	}
	ns := n.Add()
	var out netnstest.Buffer
	p, err := ns.Start(context.Background(), 20*time.Second, &out, &out, "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/%s; head -c 4 <&3", strings.Replace(addr, ":", "/", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil || out.String() != "INFO" {
		t.Errorf("from a namespace: %v %q", err, out.String())
	}
	s.restart(time.Second)
	if got := info(); !strings.HasPrefix(got, "INFO ") {
		t.Errorf("after the restart, INFO: %q", got)
	}
}
