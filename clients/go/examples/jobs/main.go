// Command jobs scores a batch as an evaluation job: create it, wait for its end, read
// its aggregations.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

func main() {
	client, err := scorewire.Dial(cmp.Or(os.Getenv("SCOREWIRE_ADDRESS"), "127.0.0.1:50051"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	var cases []*scorewirev1.Case
	for i, text := range []string{"Paris is the capital of France.", "Lyon, I think.", "It is Paris.", "Paris."} {
		cases = append(cases, &scorewirev1.Case{
			Sample: &scorewirev1.Sample{Id: fmt.Sprintf("q%d", i+1)}, Output: scorewire.Text(text),
		})
	}

	// Stored once created: the program could exit now and read the job later by its id.
	job, err := client.CreateJob(ctx, &scorewirev1.JobConfig{
		Compact: []string{"contains:Paris", "length:1..40"},
		Name:    "capitals",
		Labels:  map[string]string{"team": "geo"},
	}, cases)
	if err != nil {
		log.Fatal(err) // a *scorewire.Error: its Code, Message and FieldViolations
	}
	fmt.Println("created:", job.GetState(), job.GetCasesTotal(), "cases")

	// WaitJob watches the job (WatchJob yields each change of its progress) to its end.
	done, err := client.WaitJob(ctx, job.GetJobId())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ended: %s %d/%d\n", done.GetState(), done.GetCasesDone(), done.GetCasesTotal())
	run, err := client.GetRun(ctx, done.GetRunId()) // the job's recorded run
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("run:", run.GetName(), run.GetResults(), "results")
	for _, a := range done.GetAggregations() {
		fmt.Printf("%s: average %.2f, median %.2f, p95 %.2f\n", a.GetName(), a.GetAverage(), a.GetMedian(), a.GetP95())
	}

	// A job that has ended cannot be cancelled: refused naming the field.
	_, err = client.CancelJob(ctx, job.GetJobId())
	var swErr *scorewire.Error
	if errors.As(err, &swErr) {
		for _, v := range swErr.FieldViolations {
			fmt.Println("cancel:", swErr.Code, v.Field)
		}
	}
}
