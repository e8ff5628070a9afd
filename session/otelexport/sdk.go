package otelexport

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP protocols (the values of OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolHTTP     = "http/protobuf"
	ProtocolHTTPJSON = "http/json"
	ProtocolGRPC     = "grpc"
)

// Protocols lists the protocols, the default first.
var Protocols = []string{ProtocolHTTP, ProtocolHTTPJSON, ProtocolGRPC}

// DefaultTimeout bounds one export, its retries included.
const DefaultTimeout = 10 * time.Second

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/summit-dev/summit/session/otelexport"

// Config says where spans go and how.
type Config struct {
	// Endpoint is the collector's URL (http:// or https://). "" takes
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is), else OTEL_EXPORTER_OTLP_ENDPOINT (a
	// base URL: HTTP adds /v1/traces), else http://localhost:4318 (HTTP) or
	// http://localhost:4317 (gRPC). Over HTTP a URL with no path gets /v1/traces; gRPC
	// ignores the path. http:// is plaintext, https:// TLS.
	Endpoint string
	// Protocol is one of Protocols; "" takes OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
	// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.
	Protocol string
	// Insecure sends plaintext whatever the URL's scheme.
	Insecure bool
	// Timeout bounds each export, retries included; 0 is DefaultTimeout.
	Timeout time.Duration
	// Getenv reads the environment (nil: os.Getenv). Headers (OTEL_EXPORTER_OTLP_HEADERS,
	// OTEL_EXPORTER_OTLP_TRACES_HEADERS), certificates and compression are read by the
	// OTLP exporters themselves, from the process environment, as every OTel SDK does.
	Getenv func(string) string
	// Exporter, when set, receives the spans instead of an OTLP exporter (tests, --stdout).
	Exporter sdktrace.SpanExporter
}

// Target is where a Config sends spans, resolved.
type Target struct {
	Protocol string
	URL      string // the endpoint URL, the path HTTP posts to included
	Insecure bool
}

// Resolve applies the environment and the defaults to c and checks them.
func (c Config) Resolve() (Target, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	t := Target{Protocol: c.Protocol, Insecure: c.Insecure}
	if t.Protocol == "" {
		t.Protocol = firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if t.Protocol == "" {
		t.Protocol = ProtocolHTTP
	}
	switch t.Protocol {
	case ProtocolHTTP, ProtocolHTTPJSON, ProtocolGRPC:
	default:
		return t, fmt.Errorf("protocol %q: want one of %s", t.Protocol, strings.Join(Protocols, ", "))
	}
	grpc := t.Protocol == ProtocolGRPC
	raw, from, base := c.Endpoint, "endpoint", false
	if raw == "" {
		if raw = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); raw != "" {
			from = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
		} else if raw = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); raw != "" {
			from, base = "OTEL_EXPORTER_OTLP_ENDPOINT", true
		} else if grpc {
			raw = "http://localhost:4317"
		} else {
			raw = "http://localhost:4318"
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		example := "http://localhost:4318"
		if grpc {
			example = "http://localhost:4317"
		}
		return t, fmt.Errorf("%s %q is not an OTLP URL: want http:// or https://, a host and a port, such as %s", from, raw, example)
	}
	if !grpc {
		switch {
		case base:
			u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		case u.Path == "" || u.Path == "/":
			u.Path = "/v1/traces"
		}
	} else {
		u.Path = ""
	}
	t.URL = u.String()
	t.Insecure = t.Insecure || u.Scheme == "http"
	return t, nil
}

func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// NewExporter returns the OTLP exporter the target names. Making one connects to nothing:
// the first export does.
func NewExporter(ctx context.Context, t Target, timeout time.Duration) (sdktrace.SpanExporter, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// Retries (of what the collector says is transient) stop within the timeout, so an
	// export never waits longer than it.
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	if t.Protocol == ProtocolGRPC {
		retry := otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 250 * time.Millisecond,
			MaxInterval: 2 * time.Second, MaxElapsedTime: timeout}
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(u.Host), otlptracegrpc.WithTimeout(timeout),
			otlptracegrpc.WithRetry(retry)}
		if t.Insecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	retry := otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 250 * time.Millisecond,
		MaxInterval: 2 * time.Second, MaxElapsedTime: timeout}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithURLPath(u.Path),
		otlptracehttp.WithTimeout(timeout), otlptracehttp.WithRetry(retry)}
	if t.Insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	if t.Protocol == ProtocolHTTPJSON {
		opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	return otlptracehttp.New(ctx, opts...)
}

// exporterFor is cfg's exporter: its own, or an OTLP one for its target.
func exporterFor(ctx context.Context, cfg Config) (sdktrace.SpanExporter, error) {
	if cfg.Exporter != nil {
		return cfg.Exporter, nil
	}
	t, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	return NewExporter(ctx, t, cfg.Timeout)
}

// Pipeline makes the converter's spans real SDK spans and exports them in batches. Each span
// is started and ended at once, when the converter hands it over, with the times and ids it
// carries: the times through trace.WithTimestamp, the ids through the context, which
// idGenerator reads. The batch processor blocks rather than drop when its queue is full, so
// Emit slows down to the exporter's pace and no span is lost; Live puts a queue that drops
// in front of it, so a session never waits.
type Pipeline struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	exp    *countingExporter
}

// NewPipeline returns a pipeline exporting to exp, with the resource service.name=summit
// (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it) and version.
func NewPipeline(ctx context.Context, exp sdktrace.SpanExporter, version string) (*Pipeline, error) {
	attrs := []attribute.KeyValue{semconv.ServiceName("summit")}
	if version != "" {
		attrs = append(attrs, semconv.ServiceVersion(version))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil { // a partial resource comes with an error worth no more than a note
		return nil, err
	}
	// Export errors come back from Close (and Live.Close); the SDK's default handler would
	// also print them to stderr, over the workbench's screen. summit has no other OTel user.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	ce := &countingExporter{SpanExporter: exp}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(idGenerator{}),
		// A recording is exported whole: a sampler from the environment would cut the tree.
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithResource(res),
		sdktrace.WithBatcher(ce, sdktrace.WithBlocking()),
	)
	return &Pipeline{tp: tp, tracer: tp.Tracer(ScopeName), exp: ce}, nil
}

// Emit makes s a span and queues it for export.
func (p *Pipeline) Emit(s Span) {
	ctx := context.Background()
	if s.Parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: s.Trace, SpanID: s.Parent, TraceFlags: trace.FlagsSampled}))
	}
	ctx = withIDs(ctx, s.Trace, s.ID)
	opts := []trace.SpanStartOption{trace.WithTimestamp(s.Start), trace.WithSpanKind(s.Kind),
		trace.WithAttributes(s.Attrs...)}
	for _, l := range s.Links {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: s.Trace, SpanID: l, TraceFlags: trace.FlagsSampled})}))
	}
	_, sp := p.tracer.Start(ctx, s.Name, opts...)
	for _, ev := range s.Events {
		sp.AddEvent(ev.Name, trace.WithTimestamp(ev.Time), trace.WithAttributes(ev.Attrs...))
	}
	sp.SetStatus(s.Status, s.Desc)
	sp.End(trace.WithTimestamp(s.End))
}

// Close exports what is queued and shuts the pipeline down. It returns the first export
// error, if any export failed.
func (p *Pipeline) Close(ctx context.Context) error {
	err := p.tp.ForceFlush(ctx)
	if serr := p.tp.Shutdown(ctx); err == nil {
		err = serr
	}
	if first := p.exp.firstErr(); first != nil {
		return first
	}
	return err
}

// Exported is the number of spans the exporter accepted.
func (p *Pipeline) Exported() int { return p.exp.count() }

// Failed is the number of spans whose export failed (the SDK does not try them again).
func (p *Pipeline) Failed() int {
	p.exp.mu.Lock()
	defer p.exp.mu.Unlock()
	return p.exp.failed
}

// countingExporter counts what its exporter accepted and keeps its first error: the batch
// processor reports export errors only to the global error handler.
type countingExporter struct {
	sdktrace.SpanExporter
	mu     sync.Mutex
	n      int
	failed int
	err    error
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.failed += len(spans)
		if e.err == nil {
			e.err = err
		}
		return err
	}
	e.n += len(spans)
	return nil
}

func (e *countingExporter) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func (e *countingExporter) firstErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// EnvEnabled reports whether the environment asks for trace export: an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) and OTEL_SDK_DISABLED
// is not true. A live session exports when this holds or an endpoint is given.
func EnvEnabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	return firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}
