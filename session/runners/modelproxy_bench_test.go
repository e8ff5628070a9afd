package runners

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/summit-dev/summit/session/runners/natstest"
)

// BenchmarkModelCall: one streamed model response (256 KiB of SSE) from an httptest server,
// fetched directly (the reference) and through NATS and the session (ModelTransport,
// ServeModels), in the same run.
func BenchmarkModelCall(b *testing.B) {
	sse := bytes.Repeat([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"word \"}}]}\n\n"), 256<<10/52)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	}))
	defer srv.Close()
	reqBody := bytes.Repeat([]byte("x"), 64<<10) // a conversation so far
	call := func(b *testing.B, cl *http.Client, url string) {
		for b.Loop() {
			res, err := cl.Post(url, "application/json", bytes.NewReader(reqBody))
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if n != int64(len(sse)) {
				b.Fatalf("%d bytes", n)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { call(b, srv.Client(), srv.URL+"/v1/chat/completions") })
	b.Run("through-session", func(b *testing.B) {
		url := natstest.Start(b)
		key, _ := nkeys.CreateUser()
		dialB := func() *nats.Conn {
			nc, err := Connect(ConnOptions{URL: url, Insecure: true})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(nc.Close)
			return nc
		}
		c, err := NewClient(context.Background(), dialB(), key)
		if err != nil {
			b.Fatal(err)
		}
		stop, err := c.ServeModels("BENCH", func(ctx context.Context, mc ModelCall) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(ctx, mc.Method, srv.URL+"/v1/"+mc.Path, bytes.NewReader(mc.Body))
			return srv.Client().Do(req)
		})
		if err != nil {
			b.Fatal(err)
		}
		defer stop()
		pk, _ := key.PublicKey()
		cl := &http.Client{Transport: &ModelTransport{NC: dialB(), Job: "BENCH", Signer: pk}}
		call(b, cl, "http://summit-session.invalid/p/chat/completions")
	})
}
