package otelexport

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/otelexport/collectortest"
	"github.com/summit-dev/summit/session/record"
)

// TestLiveToCollector: a live export over each protocol reaches the collector's own OTLP
// receiver with every span the converter builds, the same ids, parents and times.
func TestLiveToCollector(t *testing.T) {
	col := collectortest.Start(t)
	want := convert(richSession(), Options{})
	for _, c := range []struct{ protocol, endpoint string }{
		{ProtocolHTTP, col.HTTP}, {ProtocolHTTPJSON, col.HTTP}, {ProtocolGRPC, col.GRPC},
	} {
		col.Reset()
		l, err := NewLive(context.Background(), LiveConfig{Config: Config{Endpoint: c.endpoint, Protocol: c.protocol,
			Getenv: func(string) string { return "" }}, Version: "v9"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range richSession() {
			l.Observe(e)
		}
		if err := l.Close(context.Background()); err != nil {
			t.Fatalf("%s: %v", c.protocol, err)
		}
		got := col.Spans()
		if len(got) != len(want) || l.Exported() != len(want) {
			t.Fatalf("%s: the collector has %d spans, exported %d, want %d", c.protocol, len(got), l.Exported(), len(want))
		}
		byID := map[string]collectortest.Span{}
		for _, s := range got {
			byID[s.ID] = s
		}
		for _, w := range want {
			g, ok := byID[w.ID.String()]
			parent := ""
			if w.Parent.IsValid() {
				parent = w.Parent.String()
			}
			if !ok || g.Trace != w.Trace.String() || g.Parent != parent || g.Name != w.Name ||
				!g.Start.Equal(w.Start) || !g.End.Equal(w.End) || g.Service != "summit" {
				t.Errorf("%s: %s %q got %+v", c.protocol, w.ID, w.Name, g)
			}
		}
	}
}

// TestSecretStaysRedacted: a secret a tool printed is redacted in the recording by the
// Recorder; exported with Content, the tool span holds the recording's redacted text and
// never the secret.
func TestSecretStaysRedacted(t *testing.T) {
	const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
	path := filepath.Join(t.TempDir(), "s.jsonl")
	rec, err := record.OpenRecorderFile(path, record.RecorderOptions{Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	s := newScript()
	s.at(0, "", session.SessionStarted{Schema: 1})
	s.at(ms, "sa-1", session.SubagentSpawned{AgentType: "tester", AgentName: "tester"})
	s.at(ms, "sa-1", call("c1", "run_shell_command"))
	s.at(ms, "sa-1", result("c1", "run_shell_command", "env: ANTHROPIC_KEY="+secret+"\n"))
	s.at(ms, "sa-1", session.SubagentStop{Outcome: "success"})
	s.at(ms, "", session.SessionEnded{Reason: "quit"})
	for _, e := range s.evs {
		if _, err := rec.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	evs, _, err := record.ReadAll(path, record.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recorded := evs[3].Data.(session.TranscriptEvent).Result
	if strings.Contains(recorded, secret) || !strings.Contains(recorded, record.Redacted) {
		t.Fatalf("the recorder did not redact: %q", recorded)
	}
	col := collectortest.Start(t)
	l, err := NewLive(context.Background(), LiveConfig{Config: Config{Endpoint: col.GRPC, Protocol: ProtocolGRPC},
		Options: Options{Content: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		l.Observe(e)
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sp := range col.Spans() {
		for k, v := range sp.Attrs {
			if s, _ := v.(string); strings.Contains(s, "sk-ant-api03") {
				t.Errorf("%s %s holds the secret: %q", sp.Name, k, s)
			}
		}
		if sp.Name == "execute_tool run_shell_command" {
			found = sp.Attrs["gen_ai.tool.call.result"] == recorded
		}
	}
	if !found {
		t.Errorf("the tool span does not hold the recorded result %q", recorded)
	}
}

// stuckExporter accepts nothing until released: a collector that does not keep up.
type stuckExporter struct {
	release chan struct{}
	once    sync.Once
}

func (e *stuckExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	select {
	case <-e.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *stuckExporter) Shutdown(context.Context) error {
	e.once.Do(func() { close(e.release) })
	return nil
}

// TestLiveNeverBlocks: with the exporter stuck, Observe goes on (the session is never held
// up) and drops what the queue cannot hold, counted; Close reports the drops.
func TestLiveNeverBlocks(t *testing.T) {
	exp := &stuckExporter{release: make(chan struct{})}
	l, err := NewLive(context.Background(), LiveConfig{Config: Config{Exporter: exp}, Queue: 2})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Far more spans than the queue and the SDK's batch processor hold (2,048).
		s := newScript()
		s.at(0, "", session.SessionStarted{Schema: 1})
		s.at(ms, "sa-1", session.SubagentSpawned{AgentType: "builder", AgentName: "builder"})
		for i := 0; i < 5000; i++ {
			s.at(ms, "sa-1", call("c", "read_file"))
			s.at(ms, "sa-1", result("c", "read_file", "x"))
		}
		for _, e := range s.evs {
			l.Observe(e)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Observe blocked on a stuck exporter")
	}
	if l.Dropped() == 0 {
		t.Error("nothing dropped with a stuck exporter and a queue of 2")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = l.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "spans dropped") {
		t.Errorf("Close: %v", err)
	}
}

func TestResolve(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		cfg     Config
		env     map[string]string
		want    Target
		wantErr string
	}{
		{Config{}, nil, Target{ProtocolHTTP, "http://localhost:4318/v1/traces", true}, ""},
		{Config{Protocol: ProtocolGRPC}, nil, Target{ProtocolGRPC, "http://localhost:4317", true}, ""},
		{Config{Endpoint: "https://otel.example:4318"}, nil, Target{ProtocolHTTP, "https://otel.example:4318/v1/traces", false}, ""},
		{Config{Endpoint: "https://otel.example/custom/path", Insecure: true}, nil, Target{ProtocolHTTP, "https://otel.example/custom/path", true}, ""},
		{Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/base/", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			Target{ProtocolHTTPJSON, "http://c:4318/base/v1/traces", true}, ""},
		{Config{}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://c/t", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"},
			Target{ProtocolHTTP, "https://c/t", false}, ""},
		{Config{}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
			"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4317"}, Target{ProtocolGRPC, "https://c:4317", false}, ""},
		{Config{Protocol: "http"}, nil, Target{}, `protocol "http": want one of http/protobuf, http/json, grpc`},
		{Config{Endpoint: "localhost:4318"}, nil, Target{}, `endpoint "localhost:4318" is not an OTLP URL`},
		{Config{Endpoint: "ftp://h:1"}, nil, Target{}, "such as http://localhost:4318"},
		{Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "::bad"}, Target{}, `OTEL_EXPORTER_OTLP_ENDPOINT "::bad" is not an OTLP URL`},
	} {
		env = c.env
		c.cfg.Getenv = getenv
		got, err := c.cfg.Resolve()
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%+v %v: error %v, want %q", c.cfg, c.env, err, c.wantErr)
			}
		case err != nil || got != c.want:
			t.Errorf("%+v %v: %+v %v, want %+v", c.cfg, c.env, got, err, c.want)
		}
	}
}

func TestEnvEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false},
	} {
		if got := EnvEnabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %v", c.env, got)
		}
	}
}

// TestLiveCountsLostSpans: with the collector down (a closed port) or refusing every export
// (an OTLP receiver answering 400), nothing reaches it, and the live export says every span
// was dropped, not "0 dropped".
func TestLiveCountsLostSpans(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := "http://" + ln.Addr().String()
	ln.Close()
	var refused atomic.Int32
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"code":3,"message":"refusing spans"}`)
	}))
	defer refusing.Close()
	want := len(convert(richSession(), Options{}))
	for _, c := range []struct{ name, endpoint string }{{"closed port", closedPort}, {"refusing collector", refusing.URL}} {
		t.Run(c.name, func(t *testing.T) {
			l, err := NewLive(context.Background(), LiveConfig{Config: Config{Endpoint: c.endpoint, Protocol: ProtocolHTTPJSON,
				Timeout: 500 * time.Millisecond, Getenv: func(string) string { return "" }}})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range richSession() {
				l.Observe(e)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = l.Close(ctx)
			if l.Exported() != 0 || l.Dropped() != int64(want) {
				t.Fatalf("exported %d, dropped %d, want 0 and %d", l.Exported(), l.Dropped(), want)
			}
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d of %d spans dropped", want, want)) {
				t.Errorf("Close: %v", err)
			}
		})
	}
	if refused.Load() == 0 {
		t.Error("the refusing collector was never asked")
	}
}
