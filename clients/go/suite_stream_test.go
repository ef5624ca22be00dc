package scorewire_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

const (
	runSuiteMethod       = "/scorewire.v1.ScoringService/RunSuite"
	runSuiteStreamMethod = "/scorewire.v1.ScoringService/RunSuiteStream"
)

// methods records the method of every streaming call a client makes (RunSuite and
// RunSuiteStream both are), in call order.
type methods struct {
	mu   sync.Mutex
	seen []string
}

func (m *methods) option() scorewire.Option {
	return scorewire.WithDialOptions(grpc.WithChainStreamInterceptor(
		func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			m.mu.Lock()
			m.seen = append(m.seen, method)
			m.mu.Unlock()
			return streamer(ctx, desc, cc, method, opts...)
		}))
}

// take returns the methods seen since the last take.
func (m *methods) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := m.seen
	m.seen = nil
	return seen
}

// rawRunSuite sends req as one RunSuite with the generated stub, whatever its size:
// what the wrapper's answers are compared with.
func rawRunSuite(t *testing.T, c *scorewire.Client, req *scorewirev1.RunSuiteRequest) ([]*scorewirev1.CaseResult, *scorewirev1.RunSummary, error) {
	t.Helper()
	stream, err := c.Raw().RunSuite(context.Background(), req)
	if err != nil {
		return nil, nil, err
	}
	var results []*scorewirev1.CaseResult
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return results, nil, errors.New("RunSuite ended without a summary")
		}
		if err != nil {
			return nil, nil, err
		}
		if msg.GetSummary() != nil {
			return results, msg.GetSummary(), nil
		}
		results = append(results, msg.GetResults().GetResults()...)
	}
}

// collect runs req through the wrapper: its results, summary, and error.
func collect(c *scorewire.Client, ctx context.Context, req *scorewirev1.RunSuiteRequest) ([]*scorewirev1.CaseResult, *scorewirev1.RunSummary, error) {
	run, err := c.RunSuite(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	defer run.Close()
	return run.Collect()
}

func TestRunSuiteOverOneChunkStreamsAndAnswersAsOneRequest(t *testing.T) {
	m := &methods{}
	c := dial(t, m.option())
	const n = 1200 // two full chunks and a part
	req := &scorewirev1.RunSuiteRequest{Compact: compact, Cases: suiteCases(t, n)}
	before := proto.Clone(req)
	results, sum, err := collect(c, context.Background(), req)
	if err != nil {
		t.Fatalf("RunSuite: %v", err)
	}
	if got := m.take(); !slices.Equal(got, []string{runSuiteStreamMethod}) {
		t.Fatalf("%d cases went as %v, want one RunSuiteStream", n, got)
	}
	if !proto.Equal(req, before) {
		t.Error("the streamed call changed the caller's request")
	}
	wholeResults, whole, err := rawRunSuite(t, c, req)
	if err != nil {
		t.Fatalf("one RunSuite of the same cases: %v", err)
	}
	seen := make([]int, n)
	for _, r := range results {
		i := int(r.GetIndex())
		if i < 0 || i >= n {
			t.Fatalf("result index %d out of range", i)
		}
		seen[i]++
		if r.GetSampleId() != fmt.Sprintf("s%d", i) || r.GetPassed() != (i%3 != 0) || len(r.GetScores()) != len(compact) {
			t.Errorf("result %d: %v", i, r)
		}
	}
	for i, k := range seen {
		if k != 1 {
			t.Errorf("case %d arrived %d times", i, k)
		}
	}
	if len(wholeResults) != n {
		t.Errorf("one RunSuite gave %d results", len(wholeResults))
	}
	// No timings in a summary: the streamed one is the one request's, field for field.
	if sum.GetCases() != n || !proto.Equal(sum, whole) {
		t.Errorf("streamed summary\n%v\nwant one RunSuite's\n%v", sum, whole)
	}
}

func TestRunSuiteUpToOneChunkIsOneRunSuite(t *testing.T) {
	m := &methods{}
	c := dial(t, m.option())
	for _, tc := range []struct {
		n      int
		method string
	}{
		{scorewire.StreamChunkCases, runSuiteMethod},
		{scorewire.StreamChunkCases + 1, runSuiteStreamMethod},
		{3, runSuiteMethod},
	} {
		results, sum, err := collect(c, context.Background(), &scorewirev1.RunSuiteRequest{Compact: compact, Cases: suiteCases(t, tc.n)})
		if err != nil {
			t.Fatalf("%d cases: %v", tc.n, err)
		}
		if got := m.take(); !slices.Equal(got, []string{tc.method}) {
			t.Errorf("%d cases went as %v, want %s", tc.n, got, tc.method)
		}
		if len(results) != tc.n || sum.GetCases() != int64(tc.n) {
			t.Errorf("%d cases: %d results, summary of %d", tc.n, len(results), sum.GetCases())
		}
	}
}

// badRequestFields returns the code and the BadRequest field paths of a raw gRPC error.
func badRequestFields(err error) (codes.Code, []string) {
	st := status.Convert(err)
	var fields []string
	for _, d := range st.Details() {
		if bad, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range bad.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	return st.Code(), fields
}

func TestRunSuiteBadCaseInALateChunkNamesItsIndex(t *testing.T) {
	m := &methods{}
	c := dial(t, m.option())
	req := &scorewirev1.RunSuiteRequest{Compact: compact, Cases: suiteCases(t, 1200)}
	req.Cases[1100].Sample.ExpectedJson = "{not json"
	_, _, err := collect(c, context.Background(), req)
	if got := m.take(); !slices.Equal(got, []string{runSuiteStreamMethod}) {
		t.Fatalf("went as %v, want RunSuiteStream", got)
	}
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) || swErr.Code != codes.InvalidArgument || status.Code(err) != codes.InvalidArgument {
		t.Fatalf("err = %v (%T), want a *scorewire.Error with InvalidArgument", err, err)
	}
	var fields []string
	for _, v := range swErr.FieldViolations {
		fields = append(fields, v.Field)
	}
	if !slices.Contains(fields, "cases[1100].sample.expected_json") {
		t.Errorf("field violations %v do not name cases[1100].sample.expected_json", fields)
	}
	// One RunSuite of the same cases refuses them alike.
	_, _, rawErr := rawRunSuite(t, c, req)
	if code, want := badRequestFields(rawErr); code != swErr.Code || !slices.Equal(fields, want) {
		t.Errorf("streamed: %v %v; one RunSuite: %v %v", swErr.Code, fields, code, want)
	}
}

func TestRunSuiteStreamedBadChecksHaveFieldViolations(t *testing.T) {
	// The server refuses the config while the client is still sending chunks.
	c := dial(t)
	_, _, err := collect(c, context.Background(), &scorewirev1.RunSuiteRequest{Checks: badChecks, Cases: suiteCases(t, 4*scorewire.StreamChunkCases)})
	assertBadRequest(t, err)
}

func TestRunSuiteOverTheCaseLimitIsResourceExhaustedAsOneRunSuite(t *testing.T) {
	// The server's default SCOREWIRE_MAX_CASES_PER_REQUEST is 100,000.
	const n = 100_001
	cases := make([]*scorewirev1.Case, n)
	for i := range cases {
		cases[i] = &scorewirev1.Case{Output: scorewire.Text("x")}
	}
	c := dial(t)
	req := &scorewirev1.RunSuiteRequest{Compact: compact, Cases: cases}
	_, _, err := collect(c, context.Background(), req)
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) || swErr.Code != codes.ResourceExhausted {
		t.Fatalf("err = %v, want a *scorewire.Error with ResourceExhausted", err)
	}
	// The same refusal as one RunSuite's, but for the path: the server names the
	// streamed call's declared count, config.case_count, where RunSuite's names cases.
	_, _, rawErr := rawRunSuite(t, c, req)
	var fields []string
	for _, v := range swErr.FieldViolations {
		fields = append(fields, v.Field)
	}
	code, rawFields := badRequestFields(rawErr)
	if code != swErr.Code || status.Convert(rawErr).Message() != swErr.Message {
		t.Errorf("streamed: %v %q; one RunSuite: %v %q", swErr.Code, swErr.Message, code, status.Convert(rawErr).Message())
	}
	if !slices.Equal(fields, []string{"config.case_count"}) || !slices.Equal(rawFields, []string{"cases"}) {
		t.Errorf("streamed names %v, one RunSuite %v", fields, rawFields)
	}
}

func TestRunSuiteStreamedCancelIsCanceled(t *testing.T) {
	m := &methods{}
	c := dial(t, m.option())
	req := &scorewirev1.RunSuiteRequest{Compact: compact, Cases: suiteCases(t, deadlineCases)}
	for _, delay := range []time.Duration{0, time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		var err error
		if delay == 0 {
			// Cancelled once every chunk is sent, before a result is read.
			var run *scorewire.SuiteRun
			if run, err = c.RunSuite(ctx, req); err == nil {
				cancel()
				_, _, err = run.Collect()
			}
		} else {
			// Cancelled while the chunks are being sent, or just after.
			time.AfterFunc(delay, cancel)
			_, _, err = collect(c, ctx, req)
		}
		cancel()
		var swErr *scorewire.Error
		if !errors.As(err, &swErr) || swErr.Code != codes.Canceled {
			t.Errorf("cancel after %v: err = %v, want a *scorewire.Error with Canceled", delay, err)
		}
	}
	if got := m.take(); !slices.Equal(got, []string{runSuiteStreamMethod, runSuiteStreamMethod}) {
		t.Errorf("went as %v, want RunSuiteStream twice", got)
	}
	// The connection goes on.
	if results, _, err := collect(c, context.Background(), &scorewirev1.RunSuiteRequest{Compact: compact, Cases: suiteCases(t, 2*scorewire.StreamChunkCases)}); err != nil || len(results) != 2*scorewire.StreamChunkCases {
		t.Errorf("after the cancelled calls: %d results, %v", len(results), err)
	}
}

func TestRunSuiteShardedChunksOverOneStreamChunk(t *testing.T) {
	// Chunks of 750 cases: each shard is a RunSuiteStream.
	m := &methods{}
	c := dial(t, m.option())
	req := mixedRequest(t, nil)
	req.Cases = mixedCases(1500)
	got, err := c.RunSuiteSharded(context.Background(), req, scorewire.ShardOptions{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if seen := m.take(); !slices.Equal(seen, []string{runSuiteStreamMethod, runSuiteStreamMethod}) {
		t.Errorf("shards went as %v, want two RunSuiteStreams", seen)
	}
	_, whole, err := rawRunSuite(t, c, req)
	if err != nil {
		t.Fatal(err)
	}
	s := got.Summary
	if s.GetCases() != 1500 || s.GetCasesPassed() != whole.GetCasesPassed() || s.GetPassed() != whole.GetPassed() ||
		s.GetFailed() != whole.GetFailed() || s.GetErrored() != whole.GetErrored() || s.GetSkipped() != whole.GetSkipped() {
		t.Errorf("sharded summary %v, want the counts of %v", s, whole)
	}
	seen := map[int32]int{}
	for _, r := range got.Results {
		seen[r.GetIndex()]++
	}
	if len(seen) != 1500 || len(got.Results) != 1500 {
		t.Errorf("%d results over %d indexes, want 1500 once each", len(got.Results), len(seen))
	}
}

// flakyStream is a ScoringService whose RunSuiteStream refuses its first call with
// UNAVAILABLE, as a lost replica behind a proxy does, then answers a summary counting
// the cases it read; it records every message of the call it answers.
type flakyStream struct {
	scorewirev1.UnimplementedScoringServiceServer
	mu       sync.Mutex
	calls    int
	messages []*scorewirev1.RunSuiteStreamRequest
}

func (f *flakyStream) RunSuiteStream(stream grpc.BidiStreamingServer[scorewirev1.RunSuiteStreamRequest, scorewirev1.RunSuiteStreamResponse]) error {
	f.mu.Lock()
	f.calls++
	first := f.calls == 1
	f.mu.Unlock()
	if first {
		return status.Error(codes.Unavailable, "replica lost")
	}
	var got []*scorewirev1.RunSuiteStreamRequest
	var cases int64
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		got = append(got, msg)
		cases += int64(len(msg.GetCases().GetCases()))
	}
	f.mu.Lock()
	f.messages = got
	f.mu.Unlock()
	return stream.Send(&scorewirev1.RunSuiteStreamResponse{Event: &scorewirev1.RunSuiteStreamResponse_Summary{Summary: &scorewirev1.RunSummary{Cases: cases}}})
}

func TestRunSuiteStreamIsRetriedOnUnavailableAndSendsConfigThenChunks(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &flakyStream{}
	srv := grpc.NewServer()
	scorewirev1.RegisterScoringServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	c, err := scorewire.Dial(lis.Addr().String()) // the fake, not the real server

	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const n = 2*scorewire.StreamChunkCases + 1
	req := &scorewirev1.RunSuiteRequest{Compact: compact, SuiteName: "s", Cases: suiteCases(t, n)}
	_, sum, err := collect(c, context.Background(), req)
	if err != nil {
		t.Fatalf("RunSuite over a RunSuiteStream refused once with UNAVAILABLE: %v", err)
	}
	fake.mu.Lock()
	calls, msgs := fake.calls, fake.messages
	fake.mu.Unlock()
	if calls != 2 || sum.GetCases() != n {
		t.Errorf("%d calls, summary of %d cases; want 2 calls (one retry), %d cases", calls, sum.GetCases(), n)
	}
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want a config and 3 chunks", len(msgs))
	}
	config := msgs[0].GetConfig()
	want := proto.Clone(req).(*scorewirev1.RunSuiteRequest)
	want.Cases = nil
	if config == nil || config.GetCaseCount() != n || !proto.Equal(config.GetRequest(), want) {
		t.Errorf("first message %v, want the request without its cases and case_count %d", msgs[0], n)
	}
	var sizes []int
	var sent []*scorewirev1.Case
	for _, msg := range msgs[1:] {
		sizes = append(sizes, len(msg.GetCases().GetCases()))
		sent = append(sent, msg.GetCases().GetCases()...)
	}
	if !slices.Equal(sizes, []int{500, 500, 1}) {
		t.Errorf("chunk sizes %v, want [500 500 1]", sizes)
	}
	for i := range sent {
		if !proto.Equal(sent[i], req.Cases[i]) {
			t.Fatalf("case %d sent as %v, want %v", i, sent[i], req.Cases[i])
		}
	}
}
