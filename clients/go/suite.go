package scorewire

import (
	"context"
	"errors"
	"io"
	"iter"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// SuiteRun is a RunSuite call in progress: Next returns each case's result as it
// completes (in completion order), then io.EOF, after which Summary is set.
type SuiteRun struct {
	stream  grpc.ServerStreamingClient[scorewirev1.RunSuiteResponse]
	cancel  context.CancelFunc
	batch   []*scorewirev1.CaseResult
	summary *scorewirev1.RunSummary
	err     error
}

// RunSuite starts scoring req.Cases against the request's suite. Read the results
// with Next (or Results) until io.EOF, then Summary. Close releases the call early.
func (c *Client) RunSuite(ctx context.Context, req *scorewirev1.RunSuiteRequest, opts ...grpc.CallOption) (*SuiteRun, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	stream, err := c.rpc.RunSuite(ctx, req, opts...)
	if err != nil {
		cancel()
		return nil, wrap(err)
	}
	return &SuiteRun{stream: stream, cancel: cancel}, nil
}

// Next returns the next case result; io.EOF after the last one; or an *Error.
func (r *SuiteRun) Next() (*scorewirev1.CaseResult, error) {
	for len(r.batch) == 0 {
		if r.err != nil {
			return nil, r.err
		}
		msg, err := r.stream.Recv()
		switch {
		case errors.Is(err, io.EOF) && r.summary == nil:
			r.finish(&Error{Code: codes.Internal, Message: "RunSuite ended without a summary"})
		case errors.Is(err, io.EOF):
			r.finish(io.EOF)
		case err != nil:
			r.finish(wrap(err))
		case msg.GetSummary() != nil:
			r.summary = msg.GetSummary()
		default:
			r.batch = msg.GetResults().GetResults()
		}
	}
	next := r.batch[0]
	r.batch = r.batch[1:]
	return next, nil
}

func (r *SuiteRun) finish(err error) {
	r.err = err
	r.cancel()
}

// Results iterates the remaining results; a failure is yielded once, as the last pair.
func (r *SuiteRun) Results() iter.Seq2[*scorewirev1.CaseResult, error] {
	return func(yield func(*scorewirev1.CaseResult, error) bool) {
		for {
			res, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(res, err) || err != nil {
				return
			}
		}
	}
}

// Summary is the run's summary, or nil until Next has returned io.EOF.
func (r *SuiteRun) Summary() *scorewirev1.RunSummary {
	if !errors.Is(r.err, io.EOF) {
		return nil
	}
	return r.summary
}

// Collect reads every remaining result and returns them with the summary.
func (r *SuiteRun) Collect() ([]*scorewirev1.CaseResult, *scorewirev1.RunSummary, error) {
	var out []*scorewirev1.CaseResult
	for res, err := range r.Results() {
		if err != nil {
			return out, nil, err
		}
		out = append(out, res)
	}
	return out, r.Summary(), nil
}

// Close cancels the call if it is still running; it is safe to call more than once.
func (r *SuiteRun) Close() { r.cancel() }
