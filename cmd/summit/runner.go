package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/session/runners"
)

// connectRunners is the session's side of --nats: the connection, and the key its jobs are
// signed with (session/runners).
func connectRunners(f *sessionFlags) (*runners.Client, error) {
	nc, err := runners.Connect(runners.ConnOptions{URL: f.nats, Creds: f.natsCreds, Insecure: f.natsInsecure, Name: "summit session"})
	if err != nil {
		if f.natsFrom != "" {
			return nil, badFile(fmt.Errorf("%s: runners: %v", f.natsFrom, err))
		}
		return nil, usageErr("--nats: %v", err)
	}
	kf, err := runners.KeyFile()
	if err != nil {
		nc.Close()
		return nil, badFile(err)
	}
	key, err := runners.LoadKey(kf)
	if err != nil {
		nc.Close()
		return nil, badFile(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := runners.NewClient(ctx, nc, key)
	if err != nil {
		nc.Close()
		return nil, badFile(err)
	}
	return c, nil
}

func newRunner(stdout, stderr io.Writer) *cobra.Command {
	f := &sessionFlags{}
	var name, labels string
	var slots int
	var trusted []string
	var localModels bool
	var modelWait time.Duration
	c := &cobra.Command{
		Use:   "runner --nats URL [--name N] [--labels k=v,…] [--slots N] [--creds FILE] [--insecure] [--local-models] [--model-wait D] [--trust KEY]…",
		Short: "Run subagents placed on this machine by sessions (/delegate --on), through NATS JetStream",
		Long: `Runner is summit in a headless mode for another machine: it dials out to NATS (it listens
on no port), registers its name, labels and free slots (with a lease that expires when it
dies), and runs the jobs sessions place on it with /delegate TASK --on NAME|LABEL=VALUE|any,
each in its own copy of the session's base, with the same orchestrator and confinement as a
local subagent. Events, permission requests and the change set go back to the session.

It runs only jobs signed by a session it trusts: --trust KEY (repeatable) takes the key that
'summit runner key' prints on the session's machine. --creds gives NATS credentials;
without them only a loopback NATS with --insecure is accepted.

Model calls go back to the session that placed the job, which makes them with its own keys
and records them: the runner needs no key. --local-models uses this machine's own model
configuration and environment instead; --tapes DIR plays script tapes. An ACP agent (Claude
Code, Codex, Gemini CLI) is pointed at a loopback relay of its job that does the same. While
the session is down (killed, about to be resumed) a model call waits for it up to
--model-wait (60s; 0 fails at once).`,
		Example: "  summit runner --nats nats://127.0.0.1:4222 --insecure --name ci-1 --labels gpu=a100 --slots 4 --trust $(summit runner key)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.nats == "" {
				return usageErr("runner needs --nats URL\nusage: %s", cmd.UseLine())
			}
			if name == "" {
				h, _ := os.Hostname()
				name = regexp.MustCompile(`[^A-Za-z0-9_-]`).ReplaceAllString(h, "-")
			}
			if err := runners.ValidName(name); err != nil {
				return usageErr("--name: %v", err)
			}
			lab := map[string]string{}
			for _, kv := range strings.Split(labels, ",") {
				if kv == "" {
					continue
				}
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usageErr("--labels %q: want k=v,… such as gpu=a100,zone=eu", labels)
				}
				lab[k] = v
			}
			if slots < 1 {
				return usageErr("--slots must be at least 1, got %d", slots)
			}
			if modelWait < 0 {
				return usageErr("--model-wait must be 0 or more, got %s", modelWait)
			}
			if len(trusted) == 0 {
				return usageErr("give --trust KEY: the key 'summit runner key' prints on the machine of each session whose jobs this runner may run")
			}
			nc, err := runners.Connect(runners.ConnOptions{URL: f.nats, Creds: f.natsCreds, Insecure: f.natsInsecure, Name: "summit runner " + name})
			if err != nil {
				return usageErr("--nats: %v", err)
			}
			defer nc.Close()
			log := &syncWriter{w: stderr}
			inner := *f
			inner.nats = "" // a job's session places nothing further
			wait := modelWait
			if wait == 0 {
				wait = -1 // fail at once
			}
			r := &runners.Runner{Name: name, Labels: lab, Slots: slots, Version: "summit " + version, Trusted: trusted, ModelWait: wait,
				Log: func(l string) { fmt.Fprintln(log, "summit: "+session.Sanitize(l)) },
				Exec: func(ctx context.Context, j runners.Job, dir string, jio runners.JobIO) runners.End {
					// Jobs run at once (--slots) and runJob sets the job's workspace and
					// recording on its flags: each job gets its own copy.
					jf := inner
					if localModels || f.tapes != "" {
						jio.Models = nil // this machine's own models (--local-models) or tapes
					}
					return runJob(ctx, &jf, j, dir, jio, log)
				}}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			if err := r.Run(ctx, nc); err != nil {
				return badFile(err)
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&name, "name", "", "the runner's name (default: the host name)")
	fl.StringVar(&labels, "labels", "", "labels sessions may place by (--on k=v): k=v,…")
	fl.IntVar(&slots, "slots", 2, "jobs at once")
	fl.StringArrayVar(&trusted, "trust", nil, "the public key of a session whose jobs this runner runs (summit runner key prints it); repeatable")
	fl.BoolVar(&localModels, "local-models", false, "make model calls with this machine's own configuration and environment (default: through the session that placed the job, with its keys)")
	fl.DurationVar(&modelWait, "model-wait", runners.ModelWait, "how long a model call waits for its session while none serves it (down, about to be resumed); 0 fails at once")
	f.register(c)
	key := &cobra.Command{
		Use:   "key",
		Short: "Print this machine's session key (for a runner's --trust), creating it on first use",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			kf, err := runners.KeyFile()
			if err != nil {
				return badFile(err)
			}
			kp, err := runners.LoadKey(kf)
			if err != nil {
				return badFile(err)
			}
			pub, err := kp.PublicKey()
			if err != nil {
				return badFile(err)
			}
			fmt.Fprintln(stdout, pub)
			return nil
		},
	}
	c.AddCommand(key)
	return c
}

// runJob is one job's session on the runner: the job's /delegate in the restored base, its
// events published as they are recorded, decisions and cancellation from the session.
func runJob(ctx context.Context, f *sessionFlags, j runners.Job, dir string, jio runners.JobIO, stderr io.Writer) runners.End {
	f.workspace, f.interactive, f.approve, f.record, f.noRecord = dir, true, "", "", false
	f.runnerJob = true
	f.job, f.jobModels = &j, jio.Models
	var mu sync.Mutex
	var sub, outcome, head string
	var calls int
	var artifacts []string
	var cost *float64
	onEvent := func(e session.Event) {
		if line, err := record.AppendLine(nil, e); err == nil {
			jio.Event(line)
		}
		mu.Lock()
		defer mu.Unlock()
		if e.SubagentID == "" || sub != "" && e.SubagentID != sub {
			return
		}
		switch d := e.Data.(type) {
		case session.SubagentSpawned:
			if sub == "" && d.ParentSubagentID == "" {
				sub = e.SubagentID
			}
		case session.SubagentChanges:
			if len(d.Files) > 0 && d.Error == "" {
				head = d.ResultCommit
			}
		case session.SubagentStop:
			outcome, calls, artifacts, cost = d.Outcome, d.ToolInvocationCount, d.ArtifactPaths, d.CostUSD
		}
	}
	stopRelay, err := f.startJobRelay() // runner_models.go: an ACP agent's models through the session
	if err != nil {
		return runners.End{Outcome: session.OutcomeFailure, Error: "the job's model relay: " + err.Error()}
	}
	defer stopRelay()
	w, err := f.wire(j.ID, stderr, onEvent)
	if err != nil {
		return runners.End{Outcome: session.OutcomeFailure, Error: "the job's session: " + err.Error()}
	}
	d := commands.Delegate{Task: j.Task, AgentType: j.AgentType, InheritContext: j.InheritContext,
		PermissionMode: j.PermissionMode, Timeout: max(1, j.TimeoutS), Tools: j.Tools}
	reply, err := w.x.Submit(ctx, d.String())
	end := runners.End{}
	switch {
	case err != nil:
		end = runners.End{Outcome: session.OutcomeFailure, Error: "the delegation: " + err.Error()}
	case reply.Rejected:
		end = runners.End{Outcome: session.OutcomeFailure, Error: "the delegation was refused: " + reply.Error}
	default:
		mu.Lock()
		id := sub
		mu.Unlock()
		done := make(chan struct{})
		go func() { // decisions and cancellation from the session
			for {
				select {
				case <-done:
					return
				case c := <-jio.Control:
					line := ""
					switch c.Type {
					case "decision":
						if c.Grant {
							line = commands.Approve{RequestID: c.Request, Scope: commands.ScopeOnce}.String()
						} else {
							line = commands.Deny{RequestID: c.Request, Reason: orDefault(c.Reason, "denied by the session")}.String()
						}
					case "cancel":
						line = commands.Cancel{SubagentID: id}.String()
					}
					if line != "" {
						_, _ = w.x.Submit(context.Background(), line)
					}
				case <-ctx.Done():
					_, _ = w.x.Submit(context.Background(), commands.Cancel{SubagentID: id}.String())
					<-done
					return
				}
			}
		}()
		_ = w.x.WaitAll(context.Background())
		close(done)
		mu.Lock()
		end = runners.End{Outcome: outcome, Head: head, ToolCalls: calls, Artifacts: artifacts, SubagentID: id, CostUSD: cost}
		mu.Unlock()
	}
	_ = w.x.Close("script_end")
	w.closed()
	return end
}
