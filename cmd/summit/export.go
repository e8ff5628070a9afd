package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/otelexport"
	"github.com/summit-dev/summit/session/record"
)

func newExport(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "export",
		Short: "Export a session recording to another format (otel: OpenTelemetry traces)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("export needs a format\nusage: summit export otel FILE [--endpoint URL]")
		},
	}
	c.AddCommand(newExportOTel(stdout, stderr))
	return c
}

func newExportOTel(stdout, stderr io.Writer) *cobra.Command {
	var (
		cfg              otelexport.Config
		content, toJSON  bool
		lenient, verbose bool
	)
	c := &cobra.Command{
		Use:   "otel FILE",
		Short: "Send a recording to an OpenTelemetry collector as one trace (OTLP over HTTP or gRPC)",
		Long: `Export otel turns a session recording into one OpenTelemetry trace and sends it over OTLP.

The session is the root span; each subagent, model call, tool call, permission wait, handoff,
convergence and conflict is a span under it, with the times of the recording. Span and trace
ids derive from the session id and the events' seqs, so exporting a recording twice gives
the same trace. Attributes follow the GenAI semantic conventions (gen_ai.*) plus summit.*.
What the model and the tools said is left out unless --content is given; it is exported as
recorded, that is redacted.

The endpoint, protocol and headers default to the OTEL_EXPORTER_OTLP_* variables, else
http://localhost:4318 over http/protobuf.`,
		Example: "  summit export otel testdata/recordings/valid.jsonl --endpoint http://localhost:4318\n" +
			"  summit export otel testdata/recordings/valid.jsonl --protocol grpc --endpoint http://localhost:4317\n" +
			"  summit export otel testdata/recordings/valid.jsonl --stdout",
		Args: exactlyOneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfg.Timeout <= 0 {
				return usageErr("--timeout must be positive, got %s", cfg.Timeout)
			}
			target, exp := "stdout", otelexport.NewJSONExporter(stdout)
			if !toJSON {
				t, err := cfg.Resolve()
				if err != nil {
					return usageErr("%v\nusage: %s", err, cmd.UseLine())
				}
				target = t.URL + " (" + t.Protocol + ")"
				if exp, err = otelexport.NewExporter(context.Background(), t, cfg.Timeout); err != nil {
					return badFile(fmt.Errorf("the OTLP exporter for %s: %w", target, err))
				}
			}
			return exportOTel(args[0], exp, cfg.Timeout, otelexport.Options{Content: content}, lenient, target, stderr, verbose)
		},
	}
	fl := c.Flags()
	fl.StringVar(&cfg.Endpoint, "endpoint", "", "the collector's OTLP URL (default $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, $OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318)")
	fl.StringVar(&cfg.Protocol, "protocol", "", "http/protobuf, http/json or grpc (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fl.BoolVar(&cfg.Insecure, "insecure", false, "send plaintext even to an https:// endpoint")
	fl.DurationVar(&cfg.Timeout, "timeout", otelexport.DefaultTimeout, "give up an export after this long, retries included")
	fl.BoolVar(&content, "content", false, "include the task, tool arguments and results and notes, redacted as recorded")
	fl.BoolVar(&toJSON, "stdout", false, "print the spans as JSON lines instead of sending them")
	fl.BoolVar(&lenient, "lenient", false, "skip and count malformed lines instead of failing")
	fl.BoolVarP(&verbose, "verbose", "v", false, "say how many spans went where")
	return c
}

// exportOTel folds the recording (so a recording the fold refuses is refused here too, with
// its line) and feeds each event to the converter, whose spans the pipeline exports to exp.
func exportOTel(path string, exp sdktrace.SpanExporter, timeout time.Duration, opts otelexport.Options, lenient bool, target string, stderr io.Writer, verbose bool) error {
	ctx := context.Background()
	pipe, err := otelexport.NewPipeline(ctx, exp, version)
	if err != nil {
		return badFile(fmt.Errorf("the OTLP exporter: %w", err))
	}
	defer boundReaderHeap()()
	// A recording that cannot be read whole, or that the fold refuses, sends nothing: it is
	// read once to check it (without text, which is fast), then again to export it.
	if err := load(path, record.ReadOptions{Lenient: lenient, NoText: true}, &session.State{}, session.Apply, io.Discard); err != nil {
		_ = pipe.Close(ctx)
		return err
	}
	conv := otelexport.NewConverter(opts)
	// Without --content no text leaves the recording: the reader does not even decode it.
	ropts := record.ReadOptions{Lenient: lenient, NoText: !opts.Content}
	loadErr := load(path, ropts, &session.State{}, func(st *session.State, e session.Event) error {
		if err := session.Apply(st, e); err != nil {
			return err
		}
		for _, s := range conv.Observe(e) {
			pipe.Emit(s)
		}
		return nil
	}, stderr)
	if loadErr != nil { // the file changed since the check
		_ = pipe.Close(ctx)
		return loadErr
	}
	for _, s := range conv.Finish() {
		pipe.Emit(s)
	}
	// Close waits for the last export, bounded by the exporter's own timeout.
	cctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	if err := pipe.Close(cctx); err != nil {
		return &exitError{exitBad, fmt.Errorf("exporting to %s: %s", target, exportReason(err))}
	}
	if verbose {
		fmt.Fprintf(stderr, "summit: exported %s of trace %s to %s\n", session.Plural(pipe.Exported(), "span"), conv.TraceID(), session.Sanitize(target))
	}
	return nil
}

// exportReason says why an export failed in words a person can act on: a refused connection
// (nothing listens there) first.
func exportReason(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"):
		return "nothing listens there (connection refused): is the collector running? " + msg
	case strings.Contains(msg, "deadline exceeded"), strings.Contains(msg, "Client.Timeout"):
		return "the collector did not answer in time (--timeout): " + msg
	}
	return msg
}
