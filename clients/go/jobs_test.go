package scorewire_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// waitFor bounds every watch: a job that never ends fails the test instead of hanging it.
const waitFor = time.Minute

// longCases is a job still open when it is cancelled right after it is created: seconds
// of scoring, against one round trip for the cancel.
const longCases = 50_000

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

// jobCases builds n cases; every fourth output (index divisible by 4) lacks "Paris".
func jobCases(n int) []*scorewirev1.Case {
	cases := make([]*scorewirev1.Case, n)
	for i := range cases {
		text := fmt.Sprintf("Paris %d", i)
		if i%4 == 0 {
			text = "Lyon"
		}
		cases[i] = &scorewirev1.Case{Sample: &scorewirev1.Sample{Id: fmt.Sprintf("s%d", i)}, Output: scorewire.Text(text)}
	}
	return cases
}

func uniqueName(prefix string) string { return prefix + "-" + scorewire.NewRequestID()[:12] }

func swError(t *testing.T, err error) *scorewire.Error {
	t.Helper()
	var se *scorewire.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *scorewire.Error", err)
	}
	return se
}

func fields(e *scorewire.Error) []string {
	var out []string
	for _, v := range e.FieldViolations {
		out = append(out, v.Field)
	}
	return out
}

// No server: 1201 small cases are 500 + 500 + 201 a message; cases of 1.5 MiB go two a
// message (within 4 MiB), one of 5 MiB alone; the order is kept.
func TestJobMessagesAreBoundedByCasesAndBytes(t *testing.T) {
	count := func(ms []*scorewirev1.CreateJobRequest) []int {
		var n []int
		for _, m := range ms {
			n = append(n, len(m.GetCases().GetCases()))
		}
		return n
	}
	if got := count(scorewire.JobMessages(jobCases(1201))); !slices.Equal(got, []int{500, 500, 201}) {
		t.Errorf("1201 small cases went as %v", got)
	}
	const mib = 1 << 20
	var big []*scorewirev1.Case
	for _, s := range []string{strings.Repeat("a", 3*mib/2), strings.Repeat("a", 3*mib/2), strings.Repeat("a", 3*mib/2), strings.Repeat("b", 5*mib), "c"} {
		big = append(big, &scorewirev1.Case{Output: scorewire.Text(s)})
	}
	ms := scorewire.JobMessages(big)
	if got := count(ms); !slices.Equal(got, []int{2, 1, 1, 1}) {
		t.Errorf("large cases went as %v", got)
	}
	var order string
	for _, m := range ms {
		for _, c := range m.GetCases().GetCases() {
			order += c.GetOutput().GetText()[:1]
		}
	}
	if order != "aaabc" {
		t.Errorf("order %q", order)
	}
}

// 600 cases (two messages) from plain cases: progress only grows, the job ends
// SUCCEEDED with per-check aggregations, and its recorded run holds every case.
func TestAJobIsWatchedToSuccessWithAggregationsAndItsRun(t *testing.T) {
	c, ctx := dial(t), context.Background()
	name := uniqueName("go-job")
	paris := scorewire.MustCheck("contains", map[string]any{"needles": []string{"Paris"}})
	paris.Name = "has_paris"
	job, err := c.CreateJob(ctx, &scorewirev1.JobConfig{
		Checks:  []*scorewirev1.CheckSpec{paris},
		Compact: []string{"length:1..20"},
		Name:    name,
		Labels:  map[string]string{"team": "qa"},
	}, jobCases(600))
	if err != nil {
		t.Fatal(err)
	}
	if job.GetState() != scorewirev1.JobState_JOB_STATE_QUEUED || job.GetCasesTotal() != 600 || job.GetName() != name {
		t.Fatalf("created %v", job)
	}
	var seen []*scorewirev1.Job
	for j, err := range c.WatchJob(waitCtx(t), job.GetJobId()) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, j)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].GetCasesDone() < seen[i-1].GetCasesDone() || seen[i].GetState() < seen[i-1].GetState() {
			t.Errorf("progress went back: %v then %v", seen[i-1], seen[i])
		}
	}
	end := seen[len(seen)-1]
	if end.GetState() != scorewirev1.JobState_JOB_STATE_SUCCEEDED || end.GetCasesDone() != 600 || end.GetRunId() == "" {
		t.Fatalf("the job ended %v", end)
	}
	aggs := end.GetAggregations()
	if len(aggs) != 2 || aggs[0].GetName() != "has_paris" || aggs[1].GetName() != "length:1..20" {
		t.Fatalf("aggregations %v", aggs)
	}
	if a := aggs[0]; a.GetCount() != 600 || a.GetAverage() != 0.75 || a.GetMedian() != 1 {
		t.Errorf("has_paris aggregated %v", a)
	}
	run, err := c.GetRun(ctx, end.GetRunId())
	if err != nil || run.GetName() != name || run.GetLabels()["team"] != "qa" || run.GetResults() != 600 {
		t.Fatalf("GetRun = %v, %v", run, err)
	}
	waited, err := c.WaitJob(waitCtx(t), job.GetJobId()) // a job that has ended: at once
	if err != nil || waited.GetState() != end.GetState() || len(waited.GetAggregations()) != 2 {
		t.Fatalf("WaitJob = %v, %v", waited, err)
	}
	got, err := c.GetJob(ctx, job.GetJobId())
	if err != nil || got.GetRunId() != end.GetRunId() || got.GetAggregations()[0].GetAverage() != 0.75 {
		t.Fatalf("GetJob = %v, %v", got, err)
	}
}

// A long job cancelled right after it is created ends CANCELLED short of its cases;
// cancelling it again is FailedPrecondition naming job_id.
func TestALongJobIsCancelled(t *testing.T) {
	c, ctx := dial(t), context.Background()
	cases := make([]*scorewirev1.Case, longCases)
	for i := range cases {
		cases[i] = &scorewirev1.Case{Output: scorewire.Text("Paris")}
	}
	job, err := c.CreateJob(ctx, &scorewirev1.JobConfig{Compact: []string{"contains:Paris"}}, cases)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := c.CancelJob(ctx, job.GetJobId())
	if err != nil || cancelled.GetState() != scorewirev1.JobState_JOB_STATE_CANCELLED {
		t.Fatalf("CancelJob = %v, %v", cancelled, err)
	}
	end, err := c.WaitJob(waitCtx(t), job.GetJobId())
	if err != nil || end.GetState() != scorewirev1.JobState_JOB_STATE_CANCELLED || end.GetCasesDone() >= longCases {
		t.Fatalf("WaitJob = %v, %v", end, err)
	}
	_, err = c.CancelJob(ctx, job.GetJobId())
	if se := swError(t, err); se.Code != codes.FailedPrecondition || !slices.Equal(fields(se), []string{"job_id"}) {
		t.Errorf("a second CancelJob = %v", err)
	}
}

// Page size 1: three jobs can only be found over three pages or more, newest first;
// the state filter keeps to its state.
func TestJobsAreListedNewestFirstPageByPage(t *testing.T) {
	c, ctx := dial(t), context.Background()
	var ids []string
	for range 3 {
		job, err := c.CreateJob(ctx, &scorewirev1.JobConfig{Compact: []string{"contains:Paris"}}, jobCases(2))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, job.GetJobId())
	}
	var found []string
	for job, err := range c.ListJobs(ctx, &scorewirev1.ListJobsRequest{PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids, job.GetJobId()) {
			found = append(found, job.GetJobId())
		}
		if len(found) == len(ids) {
			break
		}
	}
	slices.Reverse(ids)
	if !slices.Equal(found, ids) {
		t.Fatalf("listed %v, want %v", found, ids)
	}
	for _, id := range ids {
		if _, err := c.WaitJob(waitCtx(t), id); err != nil {
			t.Fatal(err)
		}
	}
	succeeded := map[string]bool{}
	for job, err := range c.ListJobs(ctx, &scorewirev1.ListJobsRequest{State: scorewirev1.JobState_JOB_STATE_SUCCEEDED, PageSize: 1000}) {
		if err != nil {
			t.Fatal(err)
		}
		if job.GetState() != scorewirev1.JobState_JOB_STATE_SUCCEEDED {
			t.Errorf("the succeeded filter listed %v", job)
		}
		succeeded[job.GetJobId()] = true
	}
	for _, id := range ids {
		if !succeeded[id] {
			t.Errorf("job %s is not listed as succeeded", id)
		}
	}
	var listErr error
	for _, err := range c.ListJobs(ctx, &scorewirev1.ListJobsRequest{PageSize: 5000}) {
		listErr = err
	}
	if se := swError(t, listErr); se.Code != codes.InvalidArgument || !slices.Equal(fields(se), []string{"page_size"}) {
		t.Errorf("a page of 5000 = %v", listErr)
	}
}

// A refused job names its field, whether the server refuses at the config or at a check;
// nothing is stored. 50,000 cases: the server refuses while they are still being sent,
// so a Send meets io.EOF, and the refusal is what CreateJob returns.
func TestARefusedJobNamesTheField(t *testing.T) {
	c, ctx := dial(t), context.Background()
	for _, tc := range []struct {
		cfg   *scorewirev1.JobConfig
		code  codes.Code
		field string
	}{
		{&scorewirev1.JobConfig{Compact: []string{"contains:Paris"}, WebhookUrl: "http://127.0.0.1:1/hook"}, codes.FailedPrecondition, "config.webhook_url"},
		{&scorewirev1.JobConfig{Checks: []*scorewirev1.CheckSpec{scorewire.MustCheck("contains", map[string]any{"needlez": []string{"Paris"}})}}, codes.InvalidArgument, "checks[0].params.needlez"},
	} {
		tc.cfg.Name = uniqueName("go-refused")
		_, err := c.CreateJob(ctx, tc.cfg, jobCases(longCases))
		if se := swError(t, err); se.Code != tc.code || !slices.Contains(fields(se), tc.field) {
			t.Errorf("CreateJob(%v) = %v, want %v naming %s", tc.cfg, err, tc.code, tc.field)
		}
		for job, err := range c.ListJobs(ctx, &scorewirev1.ListJobsRequest{PageSize: 1000}) {
			if err != nil {
				t.Fatal(err)
			}
			if job.GetName() == tc.cfg.GetName() {
				t.Errorf("the refused job was stored: %v", job)
			}
		}
	}
}

// Get, cancel, watch and wait of a job that does not exist are NotFound.
func TestAnUnknownJobIsNotFound(t *testing.T) {
	c, ctx := dial(t), context.Background()
	_, getErr := c.GetJob(ctx, "job_missing")
	_, cancelErr := c.CancelJob(ctx, "job_missing")
	_, waitErr := c.WaitJob(waitCtx(t), "job_missing")
	for _, err := range []error{getErr, cancelErr, waitErr} {
		if se := swError(t, err); se.Code != codes.NotFound {
			t.Errorf("err = %v, want NotFound", err)
		}
	}
}
