package scorewire_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// Only compact checks (seed 002) are used, so these tests pin the client, not a check
// family's details: `contains:Paris` passes when the text holds "Paris".
var compact = []string{"contains:Paris", "length:1..100"}

const nCases = 1000

func dial(t *testing.T, opts ...scorewire.Option) *scorewire.Client {
	t.Helper()
	c, err := scorewire.Dial(addr, opts...)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func mustValue(t *testing.T, v any) *structpb.Value {
	t.Helper()
	val, err := scorewire.Value(v)
	if err != nil {
		t.Fatalf("Value(%v): %v", v, err)
	}
	return val
}

// suiteCases builds n cases; every third output (index divisible by 3) lacks "Paris".
func suiteCases(t *testing.T, n int) []*scorewirev1.Case {
	t.Helper()
	cases := make([]*scorewirev1.Case, n)
	for i := range cases {
		text := fmt.Sprintf("answer %d: Paris", i)
		if i%3 == 0 {
			text = "no idea"
		}
		cases[i] = &scorewirev1.Case{
			Sample: &scorewirev1.Sample{
				Id:    fmt.Sprintf("s%d", i),
				Input: mustValue(t, map[string]any{"question": "capital?", "n": i}),
			},
			Output: scorewire.Text(text),
		}
	}
	return cases
}

func TestNormalizeTarget(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"localhost:50051", "dns:///localhost:50051"}, // plain host:port goes through DNS
		{"dns:///svc:1", "dns:///svc:1"},              // a scheme is kept
		{"unix:/tmp/s.sock", "unix:/tmp/s.sock"},
		{"ipv4:127.0.0.1:1", "ipv4:127.0.0.1:1"},
	} {
		if got := scorewire.NormalizeTarget(tc.in); got != tc.want {
			t.Errorf("normalizeTarget(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestScoreHappyPath(t *testing.T) {
	c := dial(t)
	length, err := scorewire.Check("output_length", map[string]any{"minimum": 1, "maximum": 200})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Score(context.Background(), &scorewirev1.ScoreRequest{
		Sample: &scorewirev1.Sample{
			Id:       "q1",
			Input:    mustValue(t, map[string]any{"question": "Capital of France?"}),
			Expected: mustValue(t, "Paris"),
		},
		Output:  scorewire.Text("The capital of France is Paris."),
		Checks:  []*scorewirev1.CheckSpec{length},
		Compact: []string{"contains:Paris"},
	})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	// Structured checks first, then compact ones, each named.
	var names []string
	for _, s := range resp.GetScores() {
		names = append(names, s.GetName())
		if !s.GetPassed() || s.GetValue() != 1 || s.GetError() != nil {
			t.Errorf("score %q did not pass cleanly: %v", s.GetName(), s)
		}
	}
	if want := []string{"output_length", "contains:Paris"}; !slices.Equal(names, want) {
		t.Errorf("score names = %v, want %v", names, want)
	}
	if !resp.GetPassed() {
		t.Error("response not passed")
	}
}

func TestRunSuite1000CasesEachResultOnceAndSummaryMatches(t *testing.T) {
	c := dial(t)
	run, err := c.RunSuite(context.Background(), &scorewirev1.RunSuiteRequest{
		Compact: compact,
		Cases:   suiteCases(t, nCases),
	})
	if err != nil {
		t.Fatalf("RunSuite: %v", err)
	}
	defer run.Close()
	seen := make([]int, nCases)
	var casesPassed, scoresPassed int64
	for res, err := range run.Results() {
		if err != nil {
			t.Fatalf("RunSuite results: %v", err)
		}
		i := int(res.GetIndex())
		if i < 0 || i >= nCases {
			t.Fatalf("result index %d out of range", i)
		}
		seen[i]++
		if res.GetSampleId() != fmt.Sprintf("s%d", i) {
			t.Errorf("result %d has sample id %q", i, res.GetSampleId())
		}
		if len(res.GetScores()) != len(compact) {
			t.Errorf("result %d has %d scores", i, len(res.GetScores()))
		}
		if res.GetPassed() {
			casesPassed++
		}
		for _, s := range res.GetScores() {
			if s.GetPassed() {
				scoresPassed++
			}
		}
	}
	// Each index exactly once: none lost, none doubled.
	for i, n := range seen {
		if n != 1 {
			t.Errorf("case %d arrived %d times", i, n)
		}
	}
	sum := run.Summary()
	if sum == nil {
		t.Fatal("no summary after the last result")
	}
	wantPassed := int64(nCases - (nCases+2)/3) // indexes not divisible by 3
	if casesPassed != wantPassed {
		t.Errorf("cases passed = %d, want %d", casesPassed, wantPassed)
	}
	total := int64(nCases * len(compact))
	checks := []struct {
		name      string
		got, want int64
	}{
		{"cases", sum.GetCases(), nCases},
		{"cases_passed", sum.GetCasesPassed(), casesPassed},
		{"passed", sum.GetPassed(), scoresPassed},
		{"failed", sum.GetFailed(), total - scoresPassed},
		{"errored", sum.GetErrored(), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("summary.%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if got, want := sum.GetPassRate(), float64(casesPassed)/nCases; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("summary.pass_rate = %v, want %v", got, want)
	}
	var names []string
	for _, cs := range sum.GetChecks() {
		names = append(names, cs.GetName())
	}
	if !slices.Equal(names, compact) {
		t.Errorf("summary checks = %v, want %v", names, compact)
	}
}

func TestRunSuiteSummaryIsNilBeforeTheEnd(t *testing.T) {
	// The summary comes last: reading it early must not look like an empty run.
	c := dial(t)
	run, err := c.RunSuite(context.Background(), &scorewirev1.RunSuiteRequest{Compact: compact, Cases: suiteCases(t, 3)})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if run.Summary() != nil {
		t.Error("summary before any result was read")
	}
	results, sum, err := run.Collect()
	if err != nil || len(results) != 3 || sum.GetCases() != 3 {
		t.Errorf("Collect = %d results, %v, %v", len(results), sum, err)
	}
}

var badChecks = func() []*scorewirev1.CheckSpec {
	unknown, _ := scorewire.Check("no_such_check", nil)
	typo, _ := scorewire.Check("output_length", map[string]any{"minimum": 1, "maximun": 5})
	return []*scorewirev1.CheckSpec{unknown, typo}
}()

func assertBadRequest(t *testing.T, err error) {
	t.Helper()
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) {
		t.Fatalf("error %v (%T) is not a *scorewire.Error", err, err)
	}
	if swErr.Code != codes.InvalidArgument {
		t.Fatalf("code = %v, want InvalidArgument (%v)", swErr.Code, err)
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("status.Code(err) = %v: the error must keep its gRPC status", status.Code(err))
	}
	var fields []string
	for _, v := range swErr.FieldViolations {
		fields = append(fields, v.Field)
		if v.Description == "" {
			t.Errorf("violation %q has no description", v.Field)
		}
	}
	// Every problem is listed with its path, not just the first.
	for _, want := range []string{"checks[0].type", "checks[1].params.maximun"} {
		if !slices.Contains(fields, want) {
			t.Errorf("field violations %v lack %q", fields, want)
		}
	}
}

func TestScoreInvalidArgumentHasFieldViolations(t *testing.T) {
	c := dial(t)
	_, err := c.Score(context.Background(), &scorewirev1.ScoreRequest{Output: scorewire.Text("x"), Checks: badChecks})
	assertBadRequest(t, err)
}

func TestRunSuiteInvalidArgumentHasFieldViolations(t *testing.T) {
	c := dial(t)
	run, err := c.RunSuite(context.Background(), &scorewirev1.RunSuiteRequest{Checks: badChecks, Cases: suiteCases(t, 5)})
	if err == nil {
		defer run.Close()
		_, _, err = run.Collect()
	}
	assertBadRequest(t, err)
}

func TestScoreStreamWithoutChecksIsInvalidArgument(t *testing.T) {
	c := dial(t)
	s, err := c.ScoreStream(context.Background(), &scorewirev1.StreamConfig{})
	if err == nil {
		defer s.Close()
		_ = s.Send(&scorewirev1.StreamCase{RequestId: "a", Output: scorewire.Text("x")})
		_ = s.CloseSend()
		_, err = s.Recv()
	}
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) || swErr.Code != codes.InvalidArgument || len(swErr.FieldViolations) == 0 {
		t.Errorf("err = %v, want InvalidArgument with field violations", err)
	}
}

// deadlineCases is enough work that a 1 ms deadline expires: sending it alone takes longer.
const deadlineCases = 20 * nCases

func assertDeadlineExceeded(t *testing.T, err error) {
	t.Helper()
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) || swErr.Code != codes.DeadlineExceeded {
		t.Fatalf("err = %v, want a *scorewire.Error with DeadlineExceeded", err)
	}
	if len(swErr.FieldViolations) != 0 {
		t.Errorf("deadline error has field violations %v", swErr.FieldViolations)
	}
}

func TestRunSuiteDeadlineExpires(t *testing.T) {
	c := dial(t)
	// One RunSuite, then a RunSuiteStream: the deadline ends either alike.
	for _, n := range []int{scorewire.StreamChunkCases, deadlineCases} {
		req := &scorewirev1.RunSuiteRequest{Compact: compact, Cases: suiteCases(t, n)}
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		run, err := c.RunSuite(ctx, req)
		if err == nil {
			_, _, err = run.Collect()
			run.Close()
		}
		cancel()
		assertDeadlineExceeded(t, err)
	}
}

func TestClientDefaultDeadlineApplies(t *testing.T) {
	// The client-wide default is the deadline of a call whose context has none.
	c := dial(t, scorewire.WithTimeout(time.Millisecond))
	req := &scorewirev1.RunSuiteRequest{Compact: compact, Cases: suiteCases(t, deadlineCases)}
	run, err := c.RunSuite(context.Background(), req)
	if err == nil {
		defer run.Close()
		_, _, err = run.Collect()
	}
	assertDeadlineExceeded(t, err)
}

func TestScoreStreamEchoesEachRequestIDOnce(t *testing.T) {
	c := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := c.ScoreStream(ctx, &scorewirev1.StreamConfig{Compact: []string{"contains:Paris"}})
	if err != nil {
		t.Fatalf("ScoreStream: %v", err)
	}
	defer s.Close()
	const n = 50
	sendErr := make(chan error, 1)
	go func() {
		for i := range n {
			text := "x"
			if i%2 == 1 {
				text = "Paris"
			}
			if err := s.Send(&scorewirev1.StreamCase{RequestId: fmt.Sprintf("r%d", i), Output: scorewire.Text(text)}); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- s.CloseSend()
	}()
	var ids []string
	for {
		resp, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		ids = append(ids, resp.GetRequestId())
		var i int
		if _, err := fmt.Sscanf(resp.GetRequestId(), "r%d", &i); err != nil || resp.GetPassed() != (i%2 == 1) {
			t.Errorf("response %q passed=%v", resp.GetRequestId(), resp.GetPassed())
		}
	}
	if err := <-sendErr; err != nil {
		t.Fatalf("Send: %v", err)
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("r%d", i)
	}
	sort.Strings(ids)
	sort.Strings(want)
	if !slices.Equal(ids, want) {
		t.Errorf("request ids = %s, want each of r0..r%d once", strings.Join(ids, ","), n-1)
	}
}

func TestScoreWithJSONTextFields(t *testing.T) {
	// The JSON-text forms score like Values, and an integer past 2^53 stays exact.
	c := dial(t)
	exact, err := scorewire.Check("exact", map[string]any{"path": "n"})
	if err != nil {
		t.Fatal(err)
	}
	expected, err := scorewire.JSON(map[string]any{"n": uint64(1)<<53 + 1})
	if err != nil {
		t.Fatal(err)
	}
	score := func(text string) bool {
		resp, err := c.Score(context.Background(), &scorewirev1.ScoreRequest{
			Sample: &scorewirev1.Sample{ExpectedJson: expected},
			Output: scorewire.Text(text),
			Checks: []*scorewirev1.CheckSpec{exact},
		})
		if err != nil {
			t.Fatalf("Score: %v", err)
		}
		return resp.GetPassed()
	}
	if !score("9007199254740993") {
		t.Error("2^53+1 as JSON text did not equal the output 9007199254740993")
	}
	if score("9007199254740992") {
		t.Error("2^53+1 as JSON text equalled 2^53: the digit was lost")
	}
}
