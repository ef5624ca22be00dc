package scorewire_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// A recorded run reads back through the RunService: listed by its name, its failing
// cases filtered, compared with a later run that regressed, then deleted.
func TestRecordedRunsReadBackCompareAndDelete(t *testing.T) {
	c, ctx := dial(t), context.Background()
	name := "go-runs-" + scorewire.NewRequestID()
	record := func(cases []*scorewirev1.Case, baseline string) *scorewirev1.RunSummary {
		req := &scorewirev1.RunSuiteRequest{Compact: compact, Cases: cases, Record: proto.Bool(true), RunName: name}
		if baseline != "" {
			req.Gate = &scorewirev1.Gate{Baseline: proto.String(baseline)}
		}
		run, err := c.RunSuite(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		_, sum, err := run.Collect()
		if err != nil || sum.GetRunId() == "" {
			t.Fatalf("RunSuite = %v, %v", sum, err)
		}
		return sum
	}
	base := record(suiteCases(t, 3), "")
	worse := suiteCases(t, 3)
	worse[1].Output = scorewire.Text("Berlin") // s1 passed contains:Paris, fails now
	now := record(worse, base.GetRunId())
	if now.GetGatePassed() {
		t.Errorf("the gate passed against a baseline it regressed from: %v", now.GetGateReasons())
	}
	page, err := c.ListRuns(ctx, &scorewirev1.ListRunsRequest{Name: name})
	if err != nil || len(page.GetRuns()) != 2 || page.GetRuns()[0].GetRunId() != now.GetRunId() {
		t.Fatalf("ListRuns = %v, %v", page, err)
	}
	run, err := c.GetRun(ctx, base.GetRunId())
	if err != nil || run.GetStatus() != scorewirev1.RunStatus_RUN_STATUS_COMPLETE || run.GetResults() != 3 {
		t.Fatalf("GetRun = %v, %v", run, err)
	}
	failed, err := c.ListRunResults(ctx, &scorewirev1.ListRunResultsRequest{
		RunId: now.GetRunId(), Check: "contains:Paris", Outcome: scorewirev1.Outcome_OUTCOME_FAILED,
	})
	if err != nil || len(failed.GetResults()) != 2 { // s0 ("no idea") and s1
		t.Fatalf("ListRunResults = %v, %v", failed, err)
	}
	cmp, err := c.CompareRuns(ctx, base.GetRunId(), now.GetRunId())
	if err != nil || len(cmp.GetRegressed()) != 1 || cmp.GetRegressed()[0].GetSampleId() != "s1" {
		t.Fatalf("CompareRuns = %v, %v", cmp, err)
	}
	if err := c.DeleteRun(ctx, now.GetRunId()); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetRun(ctx, now.GetRunId())
	var se *scorewire.Error
	if !errors.As(err, &se) || se.Code != codes.NotFound {
		t.Errorf("GetRun of a deleted run = %v", err)
	}
}

// A run sent in parts: OpenRun, two RunSuite calls naming it at their first indexes,
// CloseRun with the caller's summary; one run holds both parts. Closing it again is
// FailedPrecondition naming the run.
func TestARunSentInPartsIsOneRun(t *testing.T) {
	c, ctx := dial(t), context.Background()
	runID, err := c.OpenRun(ctx, &scorewirev1.OpenRunRequest{RunName: "go-parts", Record: proto.Bool(true)})
	if err != nil || runID == "" {
		t.Fatalf("OpenRun = %q, %v", runID, err)
	}
	var summaries []*scorewirev1.RunSummary
	for first, text := range []string{"Paris", "Rome"} {
		run, err := c.RunSuite(ctx, &scorewirev1.RunSuiteRequest{
			Compact: []string{"contains:Paris"},
			Cases:   []*scorewirev1.Case{{Sample: &scorewirev1.Sample{Id: text}, Output: scorewire.Text(text)}},
			Part:    &scorewirev1.RunPart{RunId: runID, FirstIndex: int32(first)},
		})
		if err != nil {
			t.Fatal(err)
		}
		_, sum, err := run.Collect()
		if err != nil {
			t.Fatal(err)
		}
		summaries = append(summaries, sum)
	}
	merged, err := scorewire.MergeSummaries(summaries)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CloseRun(ctx, &scorewirev1.CloseRunRequest{RunId: runID, Summary: merged}); err != nil {
		t.Fatal(err)
	}
	run, err := c.GetRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if run.GetStatus() != scorewirev1.RunStatus_RUN_STATUS_COMPLETE || run.GetResults() != 2 || run.GetSummary().GetCasesPassed() != 1 {
		t.Errorf("the run in parts = %v", run)
	}
	err = c.CloseRun(ctx, &scorewirev1.CloseRunRequest{RunId: runID, Summary: merged})
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) || swErr.Code != codes.FailedPrecondition || !strings.Contains(swErr.Message, runID) {
		t.Errorf("a second CloseRun = %v, want FailedPrecondition naming the run", err)
	}
	if err := c.DeleteRun(ctx, runID); err != nil {
		t.Fatal(err)
	}
}
