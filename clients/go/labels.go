package scorewire

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"google.golang.org/grpc"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// OutputHash is a Label's OutputHash for an output: the SHA-256 of its exact UTF-8
// bytes (no trimming or normalization), as 64 lowercase hex digits.
func OutputHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// NewRequestID is a fresh PutLabels request id (a random UUID, version 4).
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// PutLabels stores labels, all or none, and returns them as stored. A request with no
// RequestId gets a fresh one for this call (req is not modified), which gRPC's own
// retry of PutLabels on UNAVAILABLE reuses, so a retry stores the labels at most once;
// set RequestId yourself to retry the call yourself.
func (c *Client) PutLabels(ctx context.Context, req *scorewirev1.PutLabelsRequest, opts ...grpc.CallOption) (*scorewirev1.PutLabelsResponse, error) {
	if req.GetRequestId() == "" {
		req = &scorewirev1.PutLabelsRequest{Labels: req.GetLabels(), RequestId: NewRequestID()}
	}
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.labels.PutLabels(ctx, req, opts...)
	return resp, wrap(err)
}

// ListLabels returns one page of the labels matching every filter set in req, oldest
// stored first; pass the response's NextPageToken as PageToken for the next page.
func (c *Client) ListLabels(ctx context.Context, req *scorewirev1.ListLabelsRequest, opts ...grpc.CallOption) (*scorewirev1.ListLabelsResponse, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.labels.ListLabels(ctx, req, opts...)
	return resp, wrap(err)
}

// RawLabels returns the generated LabelService stub.
func (c *Client) RawLabels() scorewirev1.LabelServiceClient { return c.labels }
