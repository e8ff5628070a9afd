package otelexport

import (
	"context"
	"crypto/sha256"
	"encoding/binary"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TraceID is the trace id of the session sessionID: the first 16 bytes of
// sha256("summit-trace\x00" + sessionID). Every export of the same session, from its
// recording or live, lands in the same trace.
func TraceID(sessionID string) trace.TraceID {
	sum := sha256.Sum256([]byte("summit-trace\x00" + sessionID))
	var id trace.TraceID
	copy(id[:], sum[:16])
	if !id.IsValid() { // all zero: invalid in OTLP; 2^-128, but the id must be valid
		id[15] = 1
	}
	return id
}

// SpanID is the span id of the span of the given kind that the event seq of session sessionID
// opens: the first 8 bytes of sha256(sessionID, 0, seq as 8 big-endian bytes, kind). The
// kind keeps apart two spans one event opens (none does today; a future one might).
func SpanID(sessionID string, seq uint64, kind string) trace.SpanID {
	h := sha256.New()
	h.Write([]byte(sessionID))
	var b [9]byte
	binary.BigEndian.PutUint64(b[1:], seq)
	h.Write(b[:])
	h.Write([]byte(kind))
	var id trace.SpanID
	copy(id[:], h.Sum(nil)[:8])
	if !id.IsValid() {
		id[7] = 1
	}
	return id
}

// idsKey carries the ids the next span must have in the context given to Tracer.Start.
type idsKey struct{}

type spanIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, spanIDs{t, s})
}

// idGenerator hands the SDK the ids the converter derived, which travel in the context of
// Tracer.Start. The SDK asks for a trace id and a span id for a root span (NewIDs) and for a
// span id alone for a child (NewSpanID). Only this package starts spans on the provider it
// is installed in, always with ids in the context; a context without them is a bug, and gets
// zero (invalid) ids, which a collector rejects, rather than random ones that would make two
// exports of a recording differ unnoticed.
type idGenerator struct{}

var _ sdktrace.IDGenerator = idGenerator{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	ids, _ := ctx.Value(idsKey{}).(spanIDs)
	return ids.trace, ids.span
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	ids, _ := ctx.Value(idsKey{}).(spanIDs)
	return ids.span
}
