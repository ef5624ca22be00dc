package scorewire_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// mixedCases gives passing, failing, erroring (no expected value) and skipped scores.
func mixedCases(n int) []*scorewirev1.Case {
	cases := make([]*scorewirev1.Case, n)
	for i := range cases {
		s := &scorewirev1.Sample{Id: fmt.Sprintf("c%d", i)}
		var text string
		switch k := i % 7; {
		case k <= 2:
			s.Expected = scorewire.MustValue("Paris is the capital")
			text = map[bool]string{true: "Paris is the capital", false: "Paris is a city in France"}[k == 0]
		case k <= 4:
			s.Expected = scorewire.MustValue("Rome")
			text = map[bool]string{true: "Roma", false: "Rome"}[k == 3]
		default:
			text = "no expected value here"
		}
		cases[i] = &scorewirev1.Case{Sample: s, Output: scorewire.Text(text)}
	}
	return cases
}

func mixedRequest(t *testing.T, gate *scorewirev1.Gate) *scorewirev1.RunSuiteRequest {
	t.Helper()
	roman := scorewire.MustCheck("contains", map[string]any{"needles": []string{"Rome"}})
	roman.Name = "roman"
	roman.When = scorewire.MustCheck("contains", map[string]any{"needles": []string{"Rom"}})
	return &scorewirev1.RunSuiteRequest{
		Checks: []*scorewirev1.CheckSpec{
			{Type: "exact", Name: "same"},
			{Type: "rouge_l", Name: "overlap"},
			roman,
		},
		Gate:  gate,
		Cases: mixedCases(97),
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestRunSuiteShardedSummaryIsTheUnshardedOne(t *testing.T) {
	c := dial(t)
	ctx := context.Background()
	f := func(v float64) *float64 { return &v }
	gates := []*scorewirev1.Gate{
		{MaxErrorRate: f(0.5)},                      // passes
		{MaxErrorRate: f(0.5), MinPassRate: f(0.3)}, // fails: 28 of 97 cases pass
		{MaxErrorRate: f(1), MinMeanScore: f(0.4), MaxCostUsd: f(1)},
		// thresholds past 6 significant digits: the reasons print them as the server does
		{MaxErrorRate: f(1), MinPassRate: f(0.3333333333), MinMeanScore: f(0.98765432)},
	}
	for gi, gate := range gates {
		for _, opts := range []scorewire.ShardOptions{{Shards: 1}, {Shards: 3, ChunkCases: 10}, {Shards: 4, ChunkCases: 1}} {
			req := mixedRequest(t, gate)
			run, err := c.RunSuite(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			whole, one, err := run.Collect()
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.RunSuiteSharded(ctx, mixedRequest(t, gate), opts)
			if err != nil {
				t.Fatalf("gate %d %+v: %v", gi, opts, err)
			}
			m := got.Summary
			name := fmt.Sprintf("gate %d shards %d chunk %d", gi, opts.Shards, opts.ChunkCases)
			counts := func(s *scorewirev1.RunSummary) []int64 {
				out := []int64{s.GetCases(), s.GetCasesPassed(), s.GetPassed(), s.GetFailed(), s.GetErrored(), s.GetSkipped()}
				for _, cs := range s.GetChecks() {
					out = append(out, cs.GetPassed(), cs.GetFailed(), cs.GetErrored(), cs.GetSkipped())
				}
				return out
			}
			if !slices.Equal(counts(m), counts(one)) {
				t.Errorf("%s: counts %v, want %v", name, counts(m), counts(one))
			}
			if !near(m.GetMeanScore(), one.GetMeanScore()) || !near(m.GetPassRate(), one.GetPassRate()) || !near(m.GetErrorRate(), one.GetErrorRate()) {
				t.Errorf("%s: rates %v, want %v", name, m, one)
			}
			for i, cs := range m.GetChecks() {
				if !near(cs.GetMeanValue(), one.GetChecks()[i].GetMeanValue()) {
					t.Errorf("%s: check %s mean %v, want %v", name, cs.GetName(), cs.GetMeanValue(), one.GetChecks()[i].GetMeanValue())
				}
			}
			if m.GetGatePassed() != one.GetGatePassed() || !slices.Equal(m.GetGateReasons(), one.GetGateReasons()) {
				t.Errorf("%s: gate %v %q, want %v %q", name, m.GetGatePassed(), m.GetGateReasons(), one.GetGatePassed(), one.GetGateReasons())
			}
			if !proto.Equal(m.GetGate(), one.GetGate()) {
				t.Errorf("%s: gate %v, want %v", name, m.GetGate(), one.GetGate())
			}
			byIndex := map[int32]*scorewirev1.CaseResult{}
			for _, r := range whole {
				byIndex[r.GetIndex()] = r
			}
			seen := map[int32]int{}
			for _, r := range got.Results {
				seen[r.GetIndex()]++
				if r.GetSampleId() != fmt.Sprintf("c%d", r.GetIndex()) {
					t.Errorf("%s: result %d is of %s", name, r.GetIndex(), r.GetSampleId())
				}
				if w := byIndex[r.GetIndex()]; w == nil || w.GetPassed() != r.GetPassed() {
					t.Errorf("%s: result %d differs from the whole run's", name, r.GetIndex())
				}
			}
			if len(seen) != 97 || len(got.Results) != 97 {
				t.Errorf("%s: %d results over %d indexes, want 97 once each", name, len(got.Results), len(seen))
			}
		}
	}
}

func TestRunSuiteShardedInvalidArgumentIsNotRetried(t *testing.T) {
	c := dial(t)
	req := &scorewirev1.RunSuiteRequest{
		Checks: []*scorewirev1.CheckSpec{scorewire.MustCheck("output_length", map[string]any{"maximun": 5})},
		Cases:  mixedCases(20),
	}
	got, err := c.RunSuiteSharded(context.Background(), req, scorewire.ShardOptions{Shards: 3})
	var e *scorewire.Error
	if !errors.As(err, &e) || e.Code != codes.InvalidArgument {
		t.Fatalf("err = %v, want INVALID_ARGUMENT", err)
	}
	if got.Retries != 0 {
		t.Errorf("retries = %d, want 0", got.Retries)
	}
}

func TestDialAddressesBalancesOverTheList(t *testing.T) {
	// The same server twice: the list resolves, and a sharded run over it completes.
	c, err := scorewire.DialAddresses([]string{addr, addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.RunSuiteSharded(context.Background(), mixedRequest(t, nil), scorewire.ShardOptions{Shards: 2, ChunkCases: 20})
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.GetCases() != 97 || len(got.Results) != 97 {
		t.Errorf("cases %d, results %d, want 97", got.Summary.GetCases(), len(got.Results))
	}
	if _, err := scorewire.DialAddresses(nil); err == nil {
		t.Error("DialAddresses(nil) succeeded")
	}
}

func TestRetryableSendsOnlyLostReplicasElsewhere(t *testing.T) {
	for _, tc := range []struct {
		code codes.Code
		msg  string
		want bool
	}{
		{codes.Unavailable, "connection refused", true},
		{codes.Internal, "stream terminated by RST_STREAM with error code: INTERNAL_ERROR", true},
		{codes.Internal, "server closed the stream without sending trailers", true},
		{codes.Internal, "internal error", false},
		{codes.InvalidArgument, "checks[0]", false},
	} {
		if got := scorewire.Retryable(&scorewire.Error{Code: tc.code, Message: tc.msg}); got != tc.want {
			t.Errorf("Retryable(%v %q) = %v, want %v", tc.code, tc.msg, got, tc.want)
		}
	}
}

func TestMergeSummariesRefusesDifferentChecks(t *testing.T) {
	a := &scorewirev1.RunSummary{Checks: []*scorewirev1.CheckSummary{{Name: "a"}}}
	b := &scorewirev1.RunSummary{Checks: []*scorewirev1.CheckSummary{{Name: "b"}}}
	if _, err := scorewire.MergeSummaries([]*scorewirev1.RunSummary{a, b}); err == nil {
		t.Error("merged summaries of different checks")
	}
}
