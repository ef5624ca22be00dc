package scorewire

import (
	"context"
	"errors"
	"io"
	"iter"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// Evaluation jobs: a batch the server scores after its caller has gone. CreateJob
// returns the job (QUEUED) once the server has stored it and every case; WatchJob
// yields it at each change of state or progress until it ends (SUCCEEDED, FAILED or
// CANCELLED); WaitJob returns that last one, which for a job that succeeded carries the
// summary, the per-check Aggregations and the RunId of its recorded run. A job that
// ends FAILED or CANCELLED is an answer (its State and Error), not an error. With bearer
// tokens on, a job is its tenant's: another tenant's is codes.NotFound.

const (
	// JobChunkCases is the most cases CreateJob sends in one message, as RunSuite's
	// StreamChunkCases.
	JobChunkCases = StreamChunkCases
	// JobChunkBytes is the most bytes of cases CreateJob sends in one message (a larger
	// case goes alone). The server bounds the whole stream by its message limit and
	// refuses more naming `cases`; bounding each message keeps a batch of large cases
	// within the connection's message limit until the server has said so.
	JobChunkBytes = 4 << 20
)

// JobEnded reports whether a job in state s has ended: WatchJob's last state.
func JobEnded(s scorewirev1.JobState) bool {
	switch s {
	case scorewirev1.JobState_JOB_STATE_SUCCEEDED, scorewirev1.JobState_JOB_STATE_FAILED, scorewirev1.JobState_JOB_STATE_CANCELLED:
		return true
	}
	return false
}

// CreateJob creates a job scoring cases with cfg's plan (Checks, Compact, or SuiteYaml
// whose own cases are not scored), Name, Labels and WebhookUrl; cfg.CaseCount is set to
// len(cases) on a copy, so cfg is not modified. The cases go JobChunkCases and at most
// JobChunkBytes a message, each sent as the transport takes it. It returns the job,
// QUEUED, once the server has stored it.
//
// Refusals are *Error: InvalidArgument naming the check or case (`cases[12].output`),
// ResourceExhausted past the server's case limit or its open jobs per tenant, and
// FailedPrecondition naming `config.webhook_url` when the server has no secret to sign
// webhooks with. Nothing is stored then.
func (c *Client) CreateJob(ctx context.Context, cfg *scorewirev1.JobConfig, cases []*scorewirev1.Case, opts ...grpc.CallOption) (*scorewirev1.Job, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	stream, err := c.jobs.CreateJob(ctx, opts...)
	if err != nil {
		return nil, wrap(err)
	}
	config := proto.Clone(cfg).(*scorewirev1.JobConfig)
	config.CaseCount = int64(len(cases))
	messages := append([]*scorewirev1.CreateJobRequest{{Message: &scorewirev1.CreateJobRequest_Config{Config: config}}}, jobMessages(cases)...)
	for _, m := range messages {
		// io.EOF: the server has ended the call (a refusal); its status comes below.
		if err := stream.Send(m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, wrap(err)
		}
	}
	resp, err := stream.CloseAndRecv()
	return resp.GetJob(), wrap(err)
}

// jobMessages cuts cases into CreateJob messages of at most JobChunkCases cases and
// JobChunkBytes bytes (a larger case alone), in order; they share the cases.
func jobMessages(cases []*scorewirev1.Case) []*scorewirev1.CreateJobRequest {
	var out []*scorewirev1.CreateJobRequest
	start, size := 0, 0
	flush := func(end int) {
		out = append(out, &scorewirev1.CreateJobRequest{Message: &scorewirev1.CreateJobRequest_Cases{
			Cases: &scorewirev1.JobCases{Cases: cases[start:end:end]},
		}})
		start, size = end, 0
	}
	for i, c := range cases {
		n := proto.Size(c)
		if i > start && (i-start == JobChunkCases || size+n > JobChunkBytes) {
			flush(i)
		}
		size += n
	}
	if start < len(cases) {
		flush(len(cases))
	}
	return out
}

// GetJob returns a job: its state and progress, and once it succeeded its summary and
// aggregations. An unknown job, or another tenant's, is codes.NotFound.
func (c *Client) GetJob(ctx context.Context, jobID string, opts ...grpc.CallOption) (*scorewirev1.Job, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.jobs.GetJob(ctx, &scorewirev1.GetJobRequest{JobId: jobID}, opts...)
	return resp.GetJob(), wrap(err)
}

// CancelJob cancels a queued or running job and returns it, CANCELLED; its run ends
// incomplete with what was recorded. A job that has ended is codes.FailedPrecondition
// naming `job_id`.
func (c *Client) CancelJob(ctx context.Context, jobID string, opts ...grpc.CallOption) (*scorewirev1.Job, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.jobs.CancelJob(ctx, &scorewirev1.CancelJobRequest{JobId: jobID}, opts...)
	return resp.GetJob(), wrap(err)
}

// ListJobs iterates the caller's jobs, newest first, filtered by req.State, without
// summaries or aggregations (GetJob has them). It fetches a page of req.PageSize jobs
// (1 to 1000; 0: the server's 100) from req.PageToken on, each call with the default
// deadline, as the loop reaches it; a failure is yielded once, as the last pair. req
// is not modified.
func (c *Client) ListJobs(ctx context.Context, req *scorewirev1.ListJobsRequest, opts ...grpc.CallOption) iter.Seq2[*scorewirev1.Job, error] {
	return func(yield func(*scorewirev1.Job, error) bool) {
		page := proto.Clone(req).(*scorewirev1.ListJobsRequest)
		for {
			resp, err := c.listJobsPage(ctx, page, opts)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, job := range resp.GetJobs() {
				if !yield(job, nil) {
					return
				}
			}
			if resp.GetNextPageToken() == "" {
				return
			}
			page.PageToken = resp.GetNextPageToken()
		}
	}
}

func (c *Client) listJobsPage(ctx context.Context, req *scorewirev1.ListJobsRequest, opts []grpc.CallOption) (*scorewirev1.ListJobsResponse, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.jobs.ListJobs(ctx, req, opts...)
	return resp, wrap(err)
}

// WatchJob iterates a job as it is now, then at each change of its state or progress;
// the loop ends after the job has ended (JobEnded), or with a failure yielded once, as
// the last pair. It has no default deadline (a job may run for hours): ctx bounds it.
// Breaking out of the loop ends the call.
func (c *Client) WatchJob(ctx context.Context, jobID string, opts ...grpc.CallOption) iter.Seq2[*scorewirev1.Job, error] {
	return func(yield func(*scorewirev1.Job, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := c.jobs.WatchJob(ctx, &scorewirev1.WatchJobRequest{JobId: jobID}, opts...)
		if err != nil {
			yield(nil, wrap(err))
			return
		}
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, wrap(err))
				return
			}
			if !yield(resp.GetJob(), nil) {
				return
			}
		}
	}
}

// WaitJob watches a job to its end and returns it: for a job that succeeded with its
// Summary, Aggregations and RunId; a FAILED job (with its Error) or a CANCELLED one is
// returned too, with a nil error. ctx bounds it; there is no default deadline.
func (c *Client) WaitJob(ctx context.Context, jobID string, opts ...grpc.CallOption) (*scorewirev1.Job, error) {
	var last *scorewirev1.Job
	for job, err := range c.WatchJob(ctx, jobID, opts...) {
		if err != nil {
			return nil, err
		}
		last = job
	}
	if last == nil || !JobEnded(last.GetState()) {
		return nil, &Error{Code: codes.Internal, Message: "WatchJob ended before the job did"}
	}
	return last, nil
}

// RawJobs returns the generated JobService stub.
func (c *Client) RawJobs() scorewirev1.JobServiceClient { return c.jobs }
