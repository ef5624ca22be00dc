package scorewire

import (
	"context"

	"google.golang.org/grpc"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// Recorded runs: a RunSuite or ScoreStream with Record set is kept by the server, and
// these calls read it back. RunSummary.RunId (or the "scorewire-run-id" header) names
// it. With bearer tokens on, a token sees only its own runs unless it is an admin.

// ListRuns returns one page of recorded runs, newest first, filtered by the request's
// name, labels, start times and status; pass NextPageToken as PageToken for the next.
func (c *Client) ListRuns(ctx context.Context, req *scorewirev1.ListRunsRequest, opts ...grpc.CallOption) (*scorewirev1.ListRunsResponse, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.runs.ListRuns(ctx, req, opts...)
	return resp, wrap(err)
}

// GetRun returns a run's metadata and summary; an unknown id is codes.NotFound.
func (c *Client) GetRun(ctx context.Context, runID string, opts ...grpc.CallOption) (*scorewirev1.Run, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.runs.GetRun(ctx, &scorewirev1.GetRunRequest{RunId: runID}, opts...)
	return resp.GetRun(), wrap(err)
}

// ListRunResults returns one page of a run's case results, filtered by check and outcome.
func (c *Client) ListRunResults(ctx context.Context, req *scorewirev1.ListRunResultsRequest, opts ...grpc.CallOption) (*scorewirev1.ListRunResultsResponse, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.runs.ListRunResults(ctx, req, opts...)
	return resp, wrap(err)
}

// CompareRuns compares runID with baseRunID: per-check deltas and the changed cases.
func (c *Client) CompareRuns(ctx context.Context, baseRunID, runID string, opts ...grpc.CallOption) (*scorewirev1.CompareRunsResponse, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.runs.CompareRuns(ctx, &scorewirev1.CompareRunsRequest{BaseRunId: baseRunID, RunId: runID}, opts...)
	return resp, wrap(err)
}

// DeleteRun deletes a finished run and its results.
func (c *Client) DeleteRun(ctx context.Context, runID string, opts ...grpc.CallOption) error {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	_, err := c.runs.DeleteRun(ctx, &scorewirev1.DeleteRunRequest{RunId: runID}, opts...)
	return wrap(err)
}

// RawRuns returns the generated RunService stub.
func (c *Client) RawRuns() scorewirev1.RunServiceClient { return c.runs }

// A run sent in parts is one run however many RunSuite calls carry it: OpenRun opens it,
// each call names it in RunSuiteRequest.Part (the run id, and the run's index of the
// call's first case), and CloseRun ends it with the summary the caller judged over every
// part (or Interrupted). The server records the parts' results into the run and counts
// the run once, when it is closed.

// OpenRun opens a run to be sent in parts and returns its id: empty when the server
// does not record it (Record false, or its default off).
func (c *Client) OpenRun(ctx context.Context, req *scorewirev1.OpenRunRequest, opts ...grpc.CallOption) (string, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.runs.OpenRun(ctx, req, opts...)
	return resp.GetRunId(), wrap(err)
}

// CloseRun ends a run opened with OpenRun: complete with req.Summary, or incomplete
// with req.Interrupted. A run that has already ended (closed, or lapsed into incomplete
// once its caller stopped sending parts) is codes.FailedPrecondition naming the run.
func (c *Client) CloseRun(ctx context.Context, req *scorewirev1.CloseRunRequest, opts ...grpc.CallOption) error {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	_, err := c.runs.CloseRun(ctx, req, opts...)
	return wrap(err)
}
