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

// summaryWithSpending is a summary as the server sends one for a checkllm run: one
// check, generation spending, a matrix and a run id.
func summaryWithSpending(cases, passed int64, genCost float64, calls, cached int64, genUnpriced bool, runID string, matrix ...*scorewirev1.MatrixCell) *scorewirev1.RunSummary {
	return &scorewirev1.RunSummary{
		Cases: cases, CasesPassed: passed, Passed: passed, Failed: cases - passed,
		PassRate: ratioOf(passed, cases), MeanScore: ratioOf(passed, cases), ValueSum: float64(passed),
		Checks: []*scorewirev1.CheckSummary{{
			Name: "contains", Type: "contains", Passed: passed, Failed: cases - passed,
			ValueSum: float64(passed), MeanValue: ratioOf(passed, cases),
		}},
		Gate:               &scorewirev1.Gate{MaxErrorRate: proto.Float64(0)},
		GenerationCostUsd:  genCost,
		GenerationCalls:    calls,
		GenerationCached:   cached,
		GenerationUnpriced: genUnpriced,
		Matrix:             matrix,
		RunId:              runID,
	}
}

func ratioOf(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func cell(prompt int32, provider string, cases, passed, errored int64, cost float64) *scorewirev1.MatrixCell {
	return &scorewirev1.MatrixCell{
		Prompt: prompt, Provider: provider, Cases: cases, CasesPassed: passed, CasesErrored: errored,
		PassRate: ratioOf(passed, cases), GenerationCostUsd: cost,
	}
}

// One part is the server's summary: returned whole, a copy, its gate not judged again
// (the client's rule passes this gate; the server's checkllm default failed it).
func TestMergeSummariesOfOnePartIsThatPart(t *testing.T) {
	part := summaryWithSpending(4, 3, 0.375, 6, 2, true, "run-1",
		cell(0, "openai:gpt-4o-mini", 2, 2, 0, 0.25), cell(1, "openai:gpt-4o-mini", 2, 1, 1, 0.125))
	part.GatePassed = false
	part.GateReasons = []string{"1 test failed (checkllm's default gate: every test passes)"}
	want := proto.Clone(part)
	got, err := scorewire.MergeSummaries([]*scorewirev1.RunSummary{part})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Errorf("merged one part:\n got %v\nwant %v", got, want)
	}
	if got == part || len(got.GetMatrix()) > 0 && got.GetMatrix()[0] == part.GetMatrix()[0] {
		t.Error("the merged summary shares the part's messages instead of copying them")
	}
}

// Several parts add the generation spending and the matrix cells by (prompt, provider),
// in the order they first appear; the run id is no one run's.
func TestMergeSummariesAddsGenerationSpendingAndMatrixCells(t *testing.T) {
	a := summaryWithSpending(3, 2, 0.25, 3, 1, false, "run-a",
		cell(0, "p1", 2, 1, 0, 0.125), cell(1, "p1", 1, 1, 0, 0.125))
	b := summaryWithSpending(5, 2, 0.5, 2, 2, true, "run-b",
		cell(1, "p2", 1, 0, 1, 0.25), cell(0, "p1", 3, 1, 1, 0.25), cell(2, "p3", 0, 0, 0, 0), cell(0, "p2", 1, 1, 0, 0))
	c := summaryWithSpending(0, 0, 0, 0, 0, false, "run-c")
	got, err := scorewire.MergeSummaries([]*scorewirev1.RunSummary{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetGenerationCostUsd() != 0.75 || got.GetGenerationCalls() != 5 || got.GetGenerationCached() != 3 || !got.GetGenerationUnpriced() {
		t.Errorf("generation: cost %v calls %d cached %d unpriced %v, want 0.75 5 3 true",
			got.GetGenerationCostUsd(), got.GetGenerationCalls(), got.GetGenerationCached(), got.GetGenerationUnpriced())
	}
	wantCells := []*scorewirev1.MatrixCell{
		cell(0, "p1", 5, 2, 1, 0.375), // pass rate 0.4
		cell(1, "p1", 1, 1, 0, 0.125),
		cell(1, "p2", 1, 0, 1, 0.25),
		cell(2, "p3", 0, 0, 0, 0), // no cases: pass rate 0
		cell(0, "p2", 1, 1, 0, 0),
	}
	if len(got.GetMatrix()) != len(wantCells) {
		t.Fatalf("matrix %v, want %v", got.GetMatrix(), wantCells)
	}
	for i, w := range wantCells {
		if !proto.Equal(got.GetMatrix()[i], w) {
			t.Errorf("matrix[%d] = %v, want %v", i, got.GetMatrix()[i], w)
		}
	}
	if got.GetRunId() != "" {
		t.Errorf("run id %q, want none: each chunk is a run of its own", got.GetRunId())
	}
	if got.GetCases() != 8 || got.GetCasesPassed() != 4 || got.GetPassRate() != 0.5 || !got.GetGatePassed() {
		t.Errorf("totals %v", got)
	}
	if a.GetMatrix()[0].GetCases() != 2 || a.GetGenerationCostUsd() != 0.25 {
		t.Errorf("merging changed a part: %v", a)
	}
}

// A recorded request that fits one chunk is one RunSuite: the sharded run reports the
// run the server recorded, its summary that of a plain recorded RunSuite but for the id.
func TestRunSuiteShardedOfOneChunkKeepsTheRecordedRunID(t *testing.T) {
	c, ctx := dial(t), context.Background()
	request := func() *scorewirev1.RunSuiteRequest {
		return &scorewirev1.RunSuiteRequest{
			Compact: compact, Cases: suiteCases(t, 5), Record: proto.Bool(true),
			RunName: "go-sharded-" + scorewire.NewRequestID(),
		}
	}
	run, err := c.RunSuite(ctx, request())
	if err != nil {
		t.Fatal(err)
	}
	_, plain, err := run.Collect()
	if err != nil || plain.GetRunId() == "" {
		t.Fatalf("RunSuite = %v, %v: want a run id", plain, err)
	}
	got, err := c.RunSuiteSharded(ctx, request(), scorewire.ShardOptions{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	sharded := got.Summary
	if sharded.GetRunId() == "" || sharded.GetRunId() == plain.GetRunId() {
		t.Fatalf("sharded run id %q (plain run %q): want a run id of its own", sharded.GetRunId(), plain.GetRunId())
	}
	recorded, err := c.GetRun(ctx, sharded.GetRunId())
	if err != nil || recorded.GetResults() != 5 {
		t.Errorf("GetRun(%s) = %v, %v: want the recorded run of 5 results", sharded.GetRunId(), recorded, err)
	}
	a, b := proto.Clone(plain).(*scorewirev1.RunSummary), proto.Clone(sharded).(*scorewirev1.RunSummary)
	a.RunId, b.RunId = "", ""
	if !proto.Equal(a, b) {
		t.Errorf("sharded summary\n %v\nwant the plain run's\n %v", b, a)
	}
	for _, id := range []string{plain.GetRunId(), sharded.GetRunId()} {
		if err := c.DeleteRun(ctx, id); err != nil {
			t.Error(err)
		}
	}
}

// A checkllm suite's batch in one chunk keeps the server's matrix and gate.
func TestRunSuiteShardedOfOneChunkKeepsTheCheckllmMatrix(t *testing.T) {
	c, ctx := dial(t), context.Background()
	request := func() *scorewirev1.RunSuiteRequest {
		return &scorewirev1.RunSuiteRequest{SuiteYaml: checkllmSuite, Cases: checkllmCases()}
	}
	run, err := c.RunSuite(ctx, request())
	if err != nil {
		t.Fatal(err)
	}
	_, plain, err := run.Collect()
	if err != nil || len(plain.GetMatrix()) != 4 {
		t.Fatalf("RunSuite = %v, %v: want 4 matrix cells", plain, err)
	}
	got, err := c.RunSuiteSharded(ctx, request(), scorewire.ShardOptions{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got.Summary, plain) {
		t.Errorf("sharded summary\n %v\nwant the plain run's\n %v", got.Summary, plain)
	}
}

// A checkllm batch is one chunk, its whole budget included, whatever the options: the
// server scores one only with every combination present. Plain cases still split.
func TestSplitChunksKeepsACheckllmBatchWhole(t *testing.T) {
	checkllm := &scorewirev1.RunSuiteRequest{
		SuiteYaml: checkllmSuite, Format: scorewirev1.SuiteFormat_SUITE_FORMAT_CHECKLLM,
		Cases: mixedCases(10), BudgetUsd: proto.Float64(0.5),
	}
	onePrompt := &scorewirev1.RunSuiteRequest{SuiteYaml: checkllmSuite, Cases: mixedCases(10)}
	onePrompt.Cases[6].Prompt = "1"
	for name, req := range map[string]*scorewirev1.RunSuiteRequest{
		"format CHECKLLM":           checkllm,
		"one case names a prompt":   onePrompt,
		"recorded checkllm outputs": {SuiteYaml: checkllmSuite, Cases: checkllmCases()},
	} {
		for _, opts := range []scorewire.ShardOptions{{Shards: 3}, {Shards: 2, ChunkCases: 1}} {
			reqs, offsets, err := scorewire.SplitChunks(req, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != 1 || offsets[0] != 0 || !proto.Equal(reqs[0], req) {
				t.Errorf("%s %+v: %d chunks at %v, want the request whole as one", name, opts, len(reqs), offsets)
			}
		}
	}
	plain := &scorewirev1.RunSuiteRequest{Compact: compact, Cases: mixedCases(10), BudgetUsd: proto.Float64(0.5)}
	reqs, offsets, err := scorewire.SplitChunks(plain, scorewire.ShardOptions{Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(offsets, []int32{0, 4, 8}) {
		t.Errorf("plain cases: chunks at %v, want 0 4 8", offsets)
	}
	if len(reqs) == 3 && !near(reqs[2].GetBudgetUsd(), 0.1) {
		t.Errorf("plain cases: the last chunk's budget is %v, want 0.1", reqs[2].GetBudgetUsd())
	}
}

// A complete checkllm batch of recorded outputs, sharded, is one RunSuite: it succeeds,
// with the plain run's summary, matrix and gate included, and each case once.
func TestRunSuiteShardedRunsARecordedCheckllmBatchWhole(t *testing.T) {
	c, ctx := dial(t), context.Background()
	run, err := c.RunSuite(ctx, &scorewirev1.RunSuiteRequest{SuiteYaml: checkllmSuite, Cases: checkllmCases()})
	if err != nil {
		t.Fatal(err)
	}
	_, plain, err := run.Collect()
	if err != nil || len(plain.GetMatrix()) != 4 {
		t.Fatalf("RunSuite = %v, %v: want 4 matrix cells", plain, err)
	}
	for _, shards := range []int{2, 3} {
		chunks := 0
		got, err := c.RunSuiteSharded(ctx, &scorewirev1.RunSuiteRequest{SuiteYaml: checkllmSuite, Cases: checkllmCases()},
			scorewire.ShardOptions{Shards: shards, OnChunk: func([]*scorewirev1.CaseResult) { chunks++ }})
		if err != nil {
			t.Fatalf("shards %d: %v", shards, err)
		}
		if !proto.Equal(got.Summary, plain) {
			t.Errorf("shards %d: summary\n %v\nwant the plain run's\n %v", shards, got.Summary, plain)
		}
		seen := map[int32]bool{}
		for _, r := range got.Results {
			seen[r.GetIndex()] = true
		}
		if chunks != 1 || len(got.Results) != 8 || len(seen) != 8 {
			t.Errorf("shards %d: %d chunks, %d results over %d indexes, want 1 chunk of 8", shards, chunks, len(got.Results), len(seen))
		}
	}
}

// chunkedCases gives 9 cases whose contains:Paris passes in the first three, fails in
// the next three and passes once in the last three, so each chunk of 3 has its own
// counts (3, 0 and 1 passed).
func chunkedCases() []*scorewirev1.Case {
	texts := []string{
		"Paris", "in Paris", "Paris, France",
		"Rome", "Berlin", "Madrid",
		"Lyon", "Paris again", "Nice",
	}
	cases := make([]*scorewirev1.Case, len(texts))
	for i, text := range texts {
		cases[i] = &scorewirev1.Case{Sample: &scorewirev1.Sample{Id: fmt.Sprintf("s%d", i)}, Output: scorewire.Text(text)}
	}
	return cases
}

// A recorded batch sharded 3 ways names its 3 runs, in the order of the chunks' cases,
// and each reads back with its own chunk's cases.
func TestRunSuiteShardedRecordedKeepsEveryChunksRunID(t *testing.T) {
	c, ctx := dial(t), context.Background()
	req := &scorewirev1.RunSuiteRequest{
		Compact: []string{"contains:Paris"}, Cases: chunkedCases(),
		Record: proto.Bool(true), RunName: "go-sharded-" + scorewire.NewRequestID(),
	}
	got, err := c.RunSuiteSharded(ctx, req, scorewire.ShardOptions{Shards: 3, ChunkCases: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, id := range got.RunIDs {
			if err := c.DeleteRun(ctx, id); err != nil {
				t.Errorf("DeleteRun(%s): %v", id, err)
			}
		}
	})
	if got.Summary.GetRunId() != "" {
		t.Errorf("merged run_id = %q, want empty", got.Summary.GetRunId())
	}
	if len(got.RunIDs) != 3 || len(slices.Compact(slices.Sorted(slices.Values(got.RunIDs)))) != 3 || slices.Contains(got.RunIDs, "") {
		t.Fatalf("RunIDs = %q, want 3 distinct ids", got.RunIDs)
	}
	for i, id := range got.RunIDs {
		run, err := c.GetRun(ctx, id)
		if err != nil {
			t.Fatalf("GetRun(%s): %v", id, err)
		}
		// Chunk i holds cases 3i..3i+2: 3, 0 and 1 of them pass.
		if run.GetResults() != 3 || run.GetSummary().GetCases() != 3 || run.GetSummary().GetCasesPassed() != []int64{3, 0, 1}[i] {
			t.Errorf("run %d (%s): %d results, summary %v; want 3 cases, %d passed", i, id, run.GetResults(), run.GetSummary(), []int64{3, 0, 1}[i])
		}
		page, err := c.ListRunResults(ctx, &scorewirev1.ListRunResultsRequest{RunId: id})
		if err != nil {
			t.Fatalf("ListRunResults(%s): %v", id, err)
		}
		var ids []string
		for _, r := range page.GetResults() {
			ids = append(ids, r.GetCase().GetSample().GetId())
		}
		slices.Sort(ids)
		if want := []string{fmt.Sprintf("s%d", 3*i), fmt.Sprintf("s%d", 3*i+1), fmt.Sprintf("s%d", 3*i+2)}; !slices.Equal(ids, want) {
			t.Errorf("run %d (%s) holds %v, want %v", i, id, ids, want)
		}
	}
}

// Without record there are no run ids; a recorded batch sent as one chunk has exactly
// its summary's.
func TestRunSuiteShardedRunIDsUnrecordedAndOneChunk(t *testing.T) {
	c, ctx := dial(t), context.Background()
	plain := &scorewirev1.RunSuiteRequest{Compact: []string{"contains:Paris"}, Cases: chunkedCases()}
	got, err := c.RunSuiteSharded(ctx, plain, scorewire.ShardOptions{Shards: 3, ChunkCases: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got.RunIDs == nil || len(got.RunIDs) != 0 {
		t.Errorf("unrecorded RunIDs = %#v, want an empty slice", got.RunIDs)
	}
	one := proto.Clone(plain).(*scorewirev1.RunSuiteRequest)
	one.Record = proto.Bool(true)
	got, err = c.RunSuiteSharded(ctx, one, scorewire.ShardOptions{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	if id := got.Summary.GetRunId(); id != "" {
		t.Cleanup(func() {
			if err := c.DeleteRun(ctx, id); err != nil {
				t.Errorf("DeleteRun(%s): %v", id, err)
			}
		})
	}
	if got.Summary.GetRunId() == "" || !slices.Equal(got.RunIDs, []string{got.Summary.GetRunId()}) {
		t.Errorf("one chunk: RunIDs = %q, summary run_id %q", got.RunIDs, got.Summary.GetRunId())
	}
}
