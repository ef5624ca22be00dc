package scorewire_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// One Score inside a caller's span: the client's span is its child, and the call
// carries that trace to the server. With SCOREWIRE_TRACE_IDS set (by
// tests/clients/test_go_trace.py), the trace id and the client span's id are written
// there, for the test that reads the server's spans from an OTLP receiver.
func TestScoreCarriesTheCallersTrace(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	c, err := scorewire.Dial(addr, scorewire.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	ctx, caller := tp.Tracer("caller").Start(context.Background(), "caller")
	resp, err := c.Score(ctx, &scorewirev1.ScoreRequest{
		Output:  &scorewirev1.Output{Text: "traced answer"},
		Compact: []string{"contains:traced"},
	})
	caller.End()
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetPassed() {
		t.Fatalf("score did not pass: %v", resp)
	}
	var client sdktrace.ReadOnlySpan
	for _, s := range recorder.Ended() {
		if s.SpanKind() == trace.SpanKindClient {
			client = s
		}
	}
	if client == nil {
		t.Fatal("the client made no span for the call")
	}
	if client.Name() != "scorewire.v1.ScoringService/Score" {
		t.Errorf("client span name %q", client.Name())
	}
	if client.SpanContext().TraceID() != caller.SpanContext().TraceID() {
		t.Errorf("client span in trace %s, caller in %s",
			client.SpanContext().TraceID(), caller.SpanContext().TraceID())
	}
	if client.Parent().SpanID() != caller.SpanContext().SpanID() {
		t.Errorf("client span's parent %s, want the caller %s",
			client.Parent().SpanID(), caller.SpanContext().SpanID())
	}
	if out := os.Getenv("SCOREWIRE_TRACE_IDS"); out != "" {
		ids := fmt.Sprintf("%s %s\n", client.SpanContext().TraceID(), client.SpanContext().SpanID())
		if err := os.WriteFile(out, []byte(ids), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
