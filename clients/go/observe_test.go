package scorewire_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

func newID(t *testing.T) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return t.Name() + "-" + hex.EncodeToString(b)
}

func observation(id, text string) *scorewirev1.Observation {
	return &scorewirev1.Observation{
		ObservationId: id,
		Sample:        &scorewirev1.Sample{Input: scorewire.MustValue("capital of France?")},
		Output:        scorewire.Text(text),
		Metadata:      &scorewirev1.ObservationMetadata{Route: "/go-test"},
	}
}

// scoredIDs returns the sample ids the rule `clients` (tests/clients/observe_rules.yaml)
// has scored so far, with each one's pass.
func scoredIDs(t *testing.T, c *scorewire.Client) map[string]bool {
	ctx := context.Background()
	runs, err := c.ListRuns(ctx, &scorewirev1.ListRunsRequest{Labels: map[string]string{"observe_rule": "clients"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, run := range runs.GetRuns() {
		token := ""
		for {
			page, err := c.ListRunResults(ctx, &scorewirev1.ListRunResultsRequest{RunId: run.GetRunId(), PageSize: 1000, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.GetResults() {
				seen[r.GetResult().GetSampleId()] = r.GetResult().GetPassed()
			}
			if token = page.GetNextPageToken(); token == "" {
				break
			}
		}
	}
	return seen
}

// Observations taken by Observe reach the server in a batch and are scored by its rule.
func TestObserverObservationsArriveAndAreScored(t *testing.T) {
	c, err := scorewire.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.NewObserver(scorewire.ObserverOptions{FlushInterval: 50 * time.Millisecond})
	defer o.Close(context.Background())

	// One observation inside an OpenTelemetry span takes the span's trace context.
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	spanCtx, span := tp.Tracer("caller").Start(context.Background(), "handler")
	traced := observation(newID(t), "Paris, in a span")
	if !o.Observe(spanCtx, traced) {
		t.Fatal("Observe refused an observation with room in the buffer")
	}
	span.End()
	if got, want := traced.GetTrace().GetTraceId(), span.SpanContext().TraceID().String(); got != want {
		t.Errorf("trace id %q, want the span's %q", got, want)
	}
	ids := []string{traced.GetObservationId()}
	for _, text := range []string{"Paris", "Lyon"} {
		obs := observation(newID(t), text)
		o.Observe(context.Background(), obs)
		ids = append(ids, obs.GetObservationId())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s := o.Stats(); s.Queued != 3 || s.Buffered != 0 {
		t.Fatalf("after Flush: %+v, want 3 queued, none buffered", s)
	}
	want := map[string]bool{ids[0]: true, ids[1]: true, ids[2]: false}
	for {
		seen := scoredIDs(t, c)
		found := 0
		for id, pass := range want {
			if got, ok := seen[id]; ok {
				found++
				if got != pass {
					t.Errorf("%s passed %t, want %t", id, got, pass)
				}
			}
		}
		if found == len(want) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("scored %d of %d observations within 20 s", found, len(want))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// unreachable is an address nothing listens on (a port just closed).
func unreachable(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	_ = l.Close()
	return a
}

// With the server unreachable, Observe stays fast and the buffer's overflow is dropped
// and counted; Close's deadline then drops what is left.
func TestObserverDropsWhenTheBufferIsFullAndNeverBlocks(t *testing.T) {
	c, err := scorewire.Dial(unreachable(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.NewObserver(scorewire.ObserverOptions{BufferSize: 10, BatchSize: 5, FlushInterval: 10 * time.Millisecond,
		MaxAttempts: 1000, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	var slowest time.Duration
	taken := 0
	for i := range 200 {
		start := time.Now()
		if o.Observe(context.Background(), observation(newID(t), "Paris")) {
			taken++
		}
		slowest = max(slowest, time.Since(start))
		if i%50 == 0 {
			time.Sleep(20 * time.Millisecond) // let the sender try, and fail
		}
	}
	// Far above a busy machine's scheduling hiccups (the client tests of three languages
	// run at once), far below what a call waiting on the sender's retries would take
	// (1,000 attempts, 10 ms or more apart).
	if slowest > 250*time.Millisecond {
		t.Errorf("the slowest Observe took %v", slowest)
	}
	s := o.Stats()
	if taken != 10 || s.Dropped[scorewire.DropBufferFull] != 190 || s.Accepted != 10 {
		t.Fatalf("taken %d, stats %+v: want 10 taken, 190 dropped as buffer_full", taken, s)
	}
	if s.Retries == 0 {
		t.Errorf("no retry against an unreachable server: %+v", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := o.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want the deadline's error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v past a 200 ms deadline", d)
	}
	s = o.Stats()
	if s.Dropped[scorewire.DropClosed] != 10 || s.Buffered != 0 {
		t.Errorf("after Close: %+v, want the 10 buffered dropped as closed", s)
	}
	if o.Observe(context.Background(), observation(newID(t), "Paris")) {
		t.Error("Observe took an observation after Close")
	}
}

// A bounded number of attempts, then the batch is dropped as retries_exhausted.
func TestObserverGivesUpAfterMaxAttempts(t *testing.T) {
	c, err := scorewire.Dial(unreachable(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.NewObserver(scorewire.ObserverOptions{MaxAttempts: 3, InitialBackoff: time.Millisecond})
	o.Observe(context.Background(), observation(newID(t), "Paris"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s := o.Stats(); s.Dropped[scorewire.DropRetriesExhausted] != 1 || s.Retries != 2 {
		t.Errorf("%+v: want 1 dropped as retries_exhausted after 2 retries", s)
	}
	_ = o.Close(ctx)
}

// An observation the server refuses (INVALID_ARGUMENT) is dropped at once, not retried,
// and the rest of its batch sent again; a bad trace id is dropped before it is sent.
func TestObserverDropsWhatTheServerRefuses(t *testing.T) {
	c, err := scorewire.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.NewObserver(scorewire.ObserverOptions{})
	bad := observation(newID(t), "Paris")
	bad.Metadata.Route = strings.Repeat("r", 1000) // over the server's 256 characters
	o.Observe(context.Background(), bad)
	badTrace := observation(newID(t), "Paris")
	badTrace.Trace = &scorewirev1.TraceContext{TraceId: "not-hex"}
	if o.Observe(context.Background(), badTrace) {
		t.Error("Observe took a malformed trace id")
	}
	if !o.Observe(nil, observation(newID(t), "Paris")) { //nolint:staticcheck // a nil ctx must not panic
		t.Error("Observe refused an observation with a nil context")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := o.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s := o.Stats()
	// The good observation shared the bad one's batch, which the server refused whole
	// naming the bad one: the good one was sent again alone.
	if s.Dropped[scorewire.DropRejected] != 1 || s.Dropped[scorewire.DropInvalid] != 1 || s.Queued != 1 || s.Retries != 0 {
		t.Errorf("%+v: want one rejected, one invalid, one queued, no retry", s)
	}
}

// Close sends what is buffered even though no batch filled and no interval passed.
func TestObserverCloseFlushes(t *testing.T) {
	c, err := scorewire.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.NewObserver(scorewire.ObserverOptions{FlushInterval: time.Hour, BatchSize: 1000})
	for range 5 {
		o.Observe(context.Background(), observation(newID(t), "Paris"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := o.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := o.Stats(); s.Queued != 5 || s.Buffered != 0 {
		t.Errorf("after Close: %+v, want 5 queued", s)
	}
}

// BenchmarkObserverObserve is the caller's cost of one Observe (building the
// observation included) while the sender sends to the test server:
// go test -run '^$' -bench Observe.
func BenchmarkObserverObserve(b *testing.B) {
	c, err := scorewire.Dial(addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	o := c.NewObserver(scorewire.ObserverOptions{BufferSize: 1 << 20})
	defer o.Close(context.Background())
	input := scorewire.MustValue("capital of France?")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		o.Observe(context.Background(), &scorewirev1.Observation{
			Sample:   &scorewirev1.Sample{Input: input},
			Output:   scorewire.Text("Paris " + strconv.Itoa(i)),
			Metadata: &scorewirev1.ObservationMetadata{Route: "/bench"},
		})
	}
	b.StopTimer()
	s := o.Stats()
	b.ReportMetric(float64(s.Dropped[scorewire.DropBufferFull]), "buffer_full")
}
