// Package collectortest runs the OpenTelemetry Collector's own OTLP receiver
// (go.opentelemetry.io/collector/receiver/otlpreceiver), over HTTP and gRPC on loopback ports,
// into a sink, for tests: the spans summit exports are decoded by the collector's code, not
// by summit's. No collector binary can be installed on summit's machines (no distribution is
// packaged by Debian or npm, and the module proxy does not serve one that installs), so the
// tests run the receiver in process.
package collectortest

import (
	"context"
	"net"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Collector is a running OTLP receiver.
type Collector struct {
	HTTP string // http://127.0.0.1:port, the OTLP/HTTP base URL
	GRPC string // http://127.0.0.1:port, the OTLP/gRPC endpoint (plaintext)
	sink *consumertest.TracesSink
}

// Span is one received span, flattened.
type Span struct {
	Trace, ID, Parent string
	Name, Kind        string
	Start, End        time.Time
	Attrs             map[string]any
	Events            []string
	Links             []string
	Status            string // Unset, Ok, Error
	Service           string // the resource's service.name
}

// Start starts a receiver listening on two free loopback ports; it stops when the test ends.
func Start(t testing.TB) *Collector {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	httpAddr, grpcAddr := freePort(t), freePort(t)
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	sink := new(consumertest.TracesSink)
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	return &Collector{HTTP: "http://" + httpAddr, GRPC: "http://" + grpcAddr, sink: sink}
}

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Reset forgets what was received.
func (c *Collector) Reset() { c.sink.Reset() }

// Spans returns every span received so far, in the order received.
func (c *Collector) Spans() []Span {
	var out []Span
	for _, td := range c.sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					s := ss.Spans().At(k)
					sp := Span{Trace: s.TraceID().String(), ID: s.SpanID().String(), Name: s.Name(),
						Kind: s.Kind().String(), Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime(),
						Attrs: s.Attributes().AsRaw(), Status: s.Status().Code().String(), Service: svc.AsString()}
					if p := s.ParentSpanID(); !p.IsEmpty() {
						sp.Parent = p.String()
					}
					for e := 0; e < s.Events().Len(); e++ {
						sp.Events = append(sp.Events, s.Events().At(e).Name())
					}
					for l := 0; l < s.Links().Len(); l++ {
						sp.Links = append(sp.Links, pcommon.SpanID(s.Links().At(l).SpanID()).String())
					}
					out = append(out, sp)
				}
			}
		}
	}
	return out
}

// Wait waits until at least n spans arrived or the deadline passes, and returns them.
func (c *Collector) Wait(n int, d time.Duration) []Span {
	deadline := time.Now().Add(d)
	for c.sink.SpanCount() < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return c.Spans()
}
