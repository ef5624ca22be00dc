package scorewire

import (
	"context"

	"google.golang.org/grpc"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// Stream is an open ScoreStream: Send cases (from one goroutine), Recv their scores
// (from another, or after CloseSend) in completion order, each echoing its case's
// RequestId. Recv returns io.EOF once every case is answered after CloseSend.
type Stream struct {
	stream grpc.BidiStreamingClient[scorewirev1.ScoreStreamRequest, scorewirev1.ScoreStreamResponse]
	cancel context.CancelFunc
}

// ScoreStream opens a stream with the given checks. It has no default deadline: the
// caller's context bounds it. Close (or cancelling ctx) ends it early.
func (c *Client) ScoreStream(ctx context.Context, cfg *scorewirev1.StreamConfig, opts ...grpc.CallOption) (*Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.rpc.ScoreStream(ctx, opts...)
	if err != nil {
		cancel()
		return nil, wrap(err)
	}
	first := &scorewirev1.ScoreStreamRequest{Message: &scorewirev1.ScoreStreamRequest_Config{Config: cfg}}
	if err := stream.Send(first); err != nil {
		// Nothing can precede the status here: no case has been sent.
		if rerr := stream.RecvMsg(new(scorewirev1.ScoreStreamResponse)); rerr != nil {
			err = rerr
		}
		cancel()
		return nil, wrap(err)
	}
	return &Stream{stream: stream, cancel: cancel}, nil
}

// Send sends one case. io.EOF means the server has ended the stream: keep calling Recv
// for the responses before it and the status that ended it.
func (s *Stream) Send(c *scorewirev1.StreamCase) error {
	return wrap(s.stream.Send(&scorewirev1.ScoreStreamRequest{Message: &scorewirev1.ScoreStreamRequest_Case{Case: c}}))
}

// CloseSend says no more cases will come; Recv then drains the remaining responses.
func (s *Stream) CloseSend() error { return s.stream.CloseSend() }

// Recv returns the next response, io.EOF when the stream has ended, or an *Error.
func (s *Stream) Recv() (*scorewirev1.ScoreStreamResponse, error) {
	resp, err := s.stream.Recv()
	if err != nil {
		s.cancel()
	}
	return resp, wrap(err)
}

// Close cancels the stream if it is still open; it is safe to call more than once.
func (s *Stream) Close() { s.cancel() }
