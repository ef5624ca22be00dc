package scorewire_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// The README's "More calls"; compiled (not run) by go test. examples/hello is the
// README's first program, run by TestHelloExamplePrintsTheExpectedOutput.
func Example() {
	ctx := context.Background()
	cases := []*scorewirev1.Case{{Sample: &scorewirev1.Sample{Id: "a"}, Output: scorewire.Text("Paris")}}

	c, err := scorewire.Dial("localhost:50051") // dns:///, round-robin, keepalive, 30 s deadline
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Score(ctx, &scorewirev1.ScoreRequest{
		Output:  scorewire.Text("Paris"),
		Compact: []string{"length:1..100"},
		Checks: []*scorewirev1.CheckSpec{
			scorewire.MustCheck("contains", map[string]any{"needles": []string{"Paris"}}),
			// Python re syntax; flags by name or as re's bits (2)
			scorewire.MustCheck("regex", map[string]any{"pattern": `\bparis\b`, "flags": []string{"IGNORECASE"}}),
		},
	})
	var swErr *scorewire.Error
	if errors.As(err, &swErr) {
		log.Fatal(swErr.Code, swErr.FieldViolations) // codes.InvalidArgument, [{checks[0].type …}]
	}
	fmt.Println(resp.GetPassed())
	run, err := c.RunSuite(ctx, &scorewirev1.RunSuiteRequest{Compact: []string{"contains:Paris"}, Cases: cases})
	if err != nil {
		log.Fatal(err)
	}
	for result, err := range run.Results() { // each case exactly once, as it completes
		fmt.Println(result.GetIndex(), result.GetPassed(), err)
	}
	fmt.Println(run.Summary().GetPassRate())

	// Human labels: the request id is fresh per call unless you set RequestId.
	_, err = c.PutLabels(ctx, &scorewirev1.PutLabelsRequest{Labels: []*scorewirev1.Label{{
		SampleId: "a", OutputHash: scorewire.OutputHash("Paris"), Passed: true, Labeller: "ann",
	}}})
	if err != nil {
		log.Fatal(err)
	}
	page, err := c.ListLabels(ctx, &scorewirev1.ListLabelsRequest{SampleId: "a"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(page.GetLabels()), page.GetNextPageToken())
}
