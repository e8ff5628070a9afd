package otelexport

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/summit-dev/summit/session"
)

// JSONSpan is one line of NewJSONExporter's output: a span as the SDK would export it,
// without its resource and scope.
type JSONSpan struct {
	TraceID    string         `json:"trace_id"`
	SpanID     string         `json:"span_id"`
	ParentID   string         `json:"parent_span_id,omitempty"`
	Name       string         `json:"name"`
	Kind       string         `json:"kind"`
	Start      string         `json:"start"`
	End        string         `json:"end"`
	Attributes map[string]any `json:"attributes,omitempty"`
	Events     []JSONEvent    `json:"events,omitempty"`
	Links      []string       `json:"links,omitempty"` // span ids, in the same trace
	Status     string         `json:"status"`
	StatusDesc string         `json:"status_description,omitempty"`
}

// JSONEvent is a span event of a JSONSpan.
type JSONEvent struct {
	Name       string         `json:"name"`
	Time       string         `json:"time"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// NewJSONExporter returns an exporter that writes each span to w as one line of JSON
// (JSONSpan), in the order the spans ended, sanitised as summit writes JSON to a terminal
// (session.SanitizeJSON). Times are RFC 3339 UTC with microseconds, as in a recording.
func NewJSONExporter(w io.Writer) sdktrace.SpanExporter { return &jsonExporter{w: w} }

type jsonExporter struct {
	mu sync.Mutex
	w  io.Writer
}

func (e *jsonExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range spans {
		js := JSONSpan{TraceID: s.SpanContext().TraceID().String(), SpanID: s.SpanContext().SpanID().String(),
			Name: s.Name(), Kind: s.SpanKind().String(), Start: stamp(s.StartTime()), End: stamp(s.EndTime()),
			Attributes: attrMap(s.Attributes()), Status: s.Status().Code.String(), StatusDesc: s.Status().Description}
		if p := s.Parent(); p.SpanID().IsValid() {
			js.ParentID = p.SpanID().String()
		}
		for _, ev := range s.Events() {
			js.Events = append(js.Events, JSONEvent{Name: ev.Name, Time: stamp(ev.Time), Attributes: attrMap(ev.Attributes)})
		}
		for _, l := range s.Links() {
			js.Links = append(js.Links, l.SpanContext.SpanID().String())
		}
		b, err := json.Marshal(js)
		if err != nil {
			return err
		}
		if _, err := e.w.Write(append(session.SanitizeJSON(b), '\n')); err != nil {
			return err
		}
	}
	return nil
}

func (e *jsonExporter) Shutdown(context.Context) error { return nil }

func stamp(t time.Time) string { return t.UTC().Format(session.TimeLayout) }

func attrMap(kvs []attribute.KeyValue) map[string]any {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}
