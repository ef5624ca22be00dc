// Command more makes the calls beyond a first Score: compact checks, a suite run, an
// error that names its field, and human labels.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sort"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

func main() {
	address := os.Getenv("SCOREWIRE_ADDRESS")
	if address == "" {
		address = "127.0.0.1:50051"
	}
	ctx := context.Background()
	c, err := scorewire.Dial(address) // dns:///, round-robin, keepalive, 30 s deadline
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Compact checks ("type:argument") beside a full one; regex is Python re syntax.
	resp, err := c.Score(ctx, &scorewirev1.ScoreRequest{
		Output:  scorewire.Text("Paris"),
		Compact: []string{"contains:Paris", "length:1..500"},
		Checks: []*scorewirev1.CheckSpec{
			scorewire.MustCheck("regex", map[string]any{"pattern": `\bparis\b`, "flags": []string{"IGNORECASE"}}),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	names := []string{}
	for _, s := range resp.GetScores() {
		names = append(names, s.GetName())
	}
	fmt.Println("score:", resp.GetPassed(), names)

	// A suite run yields each case's result once, as it completes; then the summary.
	cases := []*scorewirev1.Case{
		{Sample: &scorewirev1.Sample{Id: "a"}, Output: scorewire.Text("Paris")},
		{Sample: &scorewirev1.Sample{Id: "b"}, Output: scorewire.Text("Lyon")},
	}
	run, err := c.RunSuite(ctx, &scorewirev1.RunSuiteRequest{Compact: []string{"contains:Paris"}, Cases: cases})
	if err != nil {
		log.Fatal(err)
	}
	results, summary, err := run.Collect()
	if err != nil {
		log.Fatal(err)
	}
	sort.Slice(results, func(i, j int) bool { return results[i].GetIndex() < results[j].GetIndex() })
	for _, r := range results {
		fmt.Println("case", r.GetIndex(), r.GetPassed())
	}
	fmt.Println("pass rate:", summary.GetPassRate(), "gate passed:", summary.GetGatePassed())

	// Bad input is refused naming the field: a *scorewire.Error with FieldViolations.
	_, err = c.Score(ctx, &scorewirev1.ScoreRequest{
		Output: scorewire.Text("x"),
		Checks: []*scorewirev1.CheckSpec{scorewire.MustCheck("output_length", map[string]any{"maximun": 5})},
	})
	var swErr *scorewire.Error
	if errors.As(err, &swErr) {
		for _, v := range swErr.FieldViolations {
			fmt.Println(swErr.Code, v.Field)
		}
	}

	// Human labels, which the `human` check reads: stored (a fresh request id per
	// call), then listed back.
	_, err = c.PutLabels(ctx, &scorewirev1.PutLabelsRequest{Labels: []*scorewirev1.Label{{
		SampleId: "q1", OutputHash: scorewire.OutputHash("Paris"), Passed: true, Labeller: "ann",
	}}})
	if err != nil {
		log.Fatal(err)
	}
	page, err := c.ListLabels(ctx, &scorewirev1.ListLabelsRequest{
		SampleId: "q1", OutputHash: scorewire.OutputHash("Paris"), Labeller: "ann",
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range page.GetLabels() {
		fmt.Println("label:", l.GetLabeller(), l.GetPassed())
	}
}
