package scorewire

import (
	"context"
	"errors"
	"io"
	"iter"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// StreamChunkCases is the most cases RunSuite sends in one message: a batch of more
// cases goes as a RunSuiteStream, StreamChunkCases cases a message, so the server
// checks and scores the first chunks while later ones are still on the way.
const StreamChunkCases = 500

// SuiteRun is a RunSuite call in progress: Next returns each case's result as it
// completes (in completion order), then io.EOF, after which Summary is set.
type SuiteRun struct {
	recv    func() (suiteEvent, error)
	cancel  context.CancelFunc
	batch   []*scorewirev1.CaseResult
	summary *scorewirev1.RunSummary
	err     error
}

// suiteEvent is a RunSuiteResponse or a RunSuiteStreamResponse: the same fields.
type suiteEvent interface {
	GetResults() *scorewirev1.CaseResultBatch
	GetSummary() *scorewirev1.RunSummary
}

// events reads a RunSuite or RunSuiteStream call's responses as suiteEvents.
func events[T suiteEvent](stream interface{ Recv() (T, error) }) func() (suiteEvent, error) {
	return func() (suiteEvent, error) {
		msg, err := stream.Recv()
		return msg, err
	}
}

// RunSuite starts scoring req.Cases against the request's suite. Read the results
// with Next (or Results) until io.EOF, then Summary. Close releases the call early.
//
// Up to StreamChunkCases cases go as one RunSuite; more go as a RunSuiteStream: the
// request without its cases, then the cases StreamChunkCases a message, each sent as
// the transport takes it (flow control), before RunSuite returns. Either way the
// results, the summary and the errors (field paths count from req.Cases[0]) are
// RunSuite's.
func (c *Client) RunSuite(ctx context.Context, req *scorewirev1.RunSuiteRequest, opts ...grpc.CallOption) (*SuiteRun, error) {
	if len(req.GetCases()) > StreamChunkCases {
		return c.runSuiteStream(ctx, req, opts)
	}
	ctx, cancel := c.withDefaultDeadline(ctx)
	stream, err := c.rpc.RunSuite(ctx, req, opts...)
	if err != nil {
		cancel()
		return nil, wrap(err)
	}
	return &SuiteRun{recv: events(stream), cancel: cancel}, nil
}

// runSuiteStream sends req as a RunSuiteStream. A Send that fails with io.EOF means
// the server has ended the call (a refusal, or the deadline): its status is what Next
// returns, as for a RunSuite refused.
func (c *Client) runSuiteStream(ctx context.Context, req *scorewirev1.RunSuiteRequest, opts []grpc.CallOption) (*SuiteRun, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	stream, err := c.rpc.RunSuiteStream(ctx, opts...)
	if err != nil {
		cancel()
		return nil, wrap(err)
	}
	if err := sendChunks(stream, req); err != nil && !errors.Is(err, io.EOF) {
		cancel()
		return nil, wrap(err)
	}
	return &SuiteRun{recv: events(stream), cancel: cancel}, nil
}

// sendChunks sends the config (req without its cases, and how many follow), the
// chunks, then half-closes. The chunks share req's cases; nothing is copied.
func sendChunks(stream grpc.BidiStreamingClient[scorewirev1.RunSuiteStreamRequest, scorewirev1.RunSuiteStreamResponse], req *scorewirev1.RunSuiteRequest) error {
	cases := req.GetCases()
	config := &scorewirev1.RunSuiteStreamConfig{Request: withoutCases(req), CaseCount: uint32(len(cases))}
	if err := stream.Send(&scorewirev1.RunSuiteStreamRequest{Message: &scorewirev1.RunSuiteStreamRequest_Config{Config: config}}); err != nil {
		return err
	}
	for start := 0; start < len(cases); start += StreamChunkCases {
		chunk := &scorewirev1.CaseChunk{Cases: cases[start:min(start+StreamChunkCases, len(cases))]}
		if err := stream.Send(&scorewirev1.RunSuiteStreamRequest{Message: &scorewirev1.RunSuiteStreamRequest_Cases{Cases: chunk}}); err != nil {
			return err
		}
	}
	return stream.CloseSend()
}

// withoutCases copies every field of req but its cases (a clone would copy them all).
func withoutCases(req *scorewirev1.RunSuiteRequest) *scorewirev1.RunSuiteRequest {
	shell := &scorewirev1.RunSuiteRequest{}
	src, dst := req.ProtoReflect(), shell.ProtoReflect()
	cases := src.Descriptor().Fields().ByName("cases")
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd != cases {
			dst.Set(fd, v)
		}
		return true
	})
	return proto.Clone(shell).(*scorewirev1.RunSuiteRequest) // not sharing req's messages
}

// Next returns the next case result; io.EOF after the last one; or an *Error.
func (r *SuiteRun) Next() (*scorewirev1.CaseResult, error) {
	for len(r.batch) == 0 {
		if r.err != nil {
			return nil, r.err
		}
		msg, err := r.recv()
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
