package scorewire_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// freshSample is a sample id no other test (or run against the same server) uses.
func freshSample(t *testing.T) string {
	t.Helper()
	return "go-labels-" + scorewire.NewRequestID()
}

func label(sample, output string) *scorewirev1.Label {
	return &scorewirev1.Label{SampleId: sample, OutputHash: scorewire.OutputHash(output), Passed: true, Labeller: "ann"}
}

func TestOutputHashIsSHA256OfExactBytes(t *testing.T) {
	sum := sha256.Sum256([]byte("Paris\n"))
	if got := scorewire.OutputHash("Paris\n"); got != hex.EncodeToString(sum[:]) {
		t.Errorf("OutputHash = %s", got)
	}
}

func TestNewRequestIDIsAFreshUUIDAcceptedByTheServer(t *testing.T) {
	a, b := scorewire.NewRequestID(), scorewire.NewRequestID()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if a == b || !uuid.MatchString(a) {
		t.Errorf("request ids %q, %q", a, b)
	}
}

func TestPutThenListReturnsTheLabelAsStored(t *testing.T) {
	c, ctx, sample := dial(t), context.Background(), freshSample(t)
	put, err := c.PutLabels(ctx, &scorewirev1.PutLabelsRequest{Labels: []*scorewirev1.Label{label(sample, "Paris")}})
	if err != nil || len(put.GetLabels()) != 1 || put.GetLabels()[0].GetCheck() != "default" {
		t.Fatalf("PutLabels = %v, %v", put, err)
	}
	page, err := c.ListLabels(ctx, &scorewirev1.ListLabelsRequest{SampleId: sample})
	if err != nil || len(page.GetLabels()) != 1 || page.GetLabels()[0].GetOutputHash() != scorewire.OutputHash("Paris") {
		t.Fatalf("ListLabels = %v, %v", page, err)
	}
}

// No RequestId: each call gets its own, so two calls store two labels; the same
// RequestId twice (a retry) stores one. The caller's request is not modified.
func TestFreshRequestIDPerCallAndSameIDStoresOnce(t *testing.T) {
	c, ctx, sample := dial(t), context.Background(), freshSample(t)
	req := &scorewirev1.PutLabelsRequest{Labels: []*scorewirev1.Label{label(sample, "Paris")}}
	for range 2 {
		if _, err := c.PutLabels(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if req.GetRequestId() != "" {
		t.Errorf("PutLabels set the caller's RequestId to %q", req.GetRequestId())
	}
	retry := &scorewirev1.PutLabelsRequest{Labels: req.GetLabels(), RequestId: scorewire.NewRequestID()}
	for range 2 {
		if _, err := c.PutLabels(ctx, retry); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.ListLabels(ctx, &scorewirev1.ListLabelsRequest{SampleId: sample, IncludeHistory: true})
	if err != nil || len(page.GetLabels()) != 3 {
		t.Fatalf("history has %d labels, want 3 (%v)", len(page.GetLabels()), err)
	}
}

func TestListLabelsPages(t *testing.T) {
	c, ctx, sample := dial(t), context.Background(), freshSample(t)
	labels := []*scorewirev1.Label{label(sample, "a"), label(sample, "b"), label(sample, "c")}
	if _, err := c.PutLabels(ctx, &scorewirev1.PutLabelsRequest{Labels: labels}); err != nil {
		t.Fatal(err)
	}
	first, err := c.ListLabels(ctx, &scorewirev1.ListLabelsRequest{SampleId: sample, PageSize: 2})
	if err != nil || len(first.GetLabels()) != 2 || first.GetNextPageToken() == "" {
		t.Fatalf("first page = %v, %v", first, err)
	}
	second, err := c.ListLabels(ctx, &scorewirev1.ListLabelsRequest{SampleId: sample, PageSize: 2, PageToken: first.GetNextPageToken()})
	if err != nil || len(second.GetLabels()) != 1 || second.GetNextPageToken() != "" {
		t.Fatalf("second page = %v, %v", second, err)
	}
}

func TestPutLabelsBadHashNamesTheField(t *testing.T) {
	c := dial(t)
	bad := &scorewirev1.Label{SampleId: freshSample(t), OutputHash: "nothex", Labeller: "ann"}
	_, err := c.PutLabels(context.Background(), &scorewirev1.PutLabelsRequest{Labels: []*scorewirev1.Label{bad}})
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) || swErr.Code != codes.InvalidArgument {
		t.Fatalf("err = %v", err)
	}
	var fields []string
	for _, v := range swErr.FieldViolations {
		fields = append(fields, v.Field)
	}
	if !slices.Contains(fields, "labels[0].output_hash") {
		t.Errorf("violations %v lack labels[0].output_hash", fields)
	}
}
