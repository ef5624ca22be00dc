// Command hello scores two answers with three deterministic checks on a scorewire server.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

func main() {
	address := os.Getenv("SCOREWIRE_ADDRESS")
	if address == "" {
		address = "127.0.0.1:50051"
	}
	checks := []*scorewirev1.CheckSpec{
		scorewire.MustCheck("contains", map[string]any{"needles": []string{"Paris", "France"}}), // value: share found
		scorewire.MustCheck("regex", map[string]any{"pattern": `\bcapital\b`, "flags": []string{"IGNORECASE"}}),
		scorewire.MustCheck("length", map[string]any{"max_chars": 40}),
	}
	cases := []struct{ id, answer string }{
		{"q1", "The capital of France is Paris."},
		{"q2", "Lyon is the capital of France, I think, but I am not sure."},
	}

	client, err := scorewire.Dial(address)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	for _, c := range cases {
		resp, err := client.Score(ctx, &scorewirev1.ScoreRequest{
			Sample: &scorewirev1.Sample{Id: c.id},
			Output: scorewire.Text(c.answer),
			Checks: checks,
		})
		if err != nil {
			log.Fatal(err) // a *scorewire.Error: its Code, Message and FieldViolations
		}
		fmt.Printf("%s: %s\n", c.id, verdict(resp.GetPassed()))
		for _, s := range resp.GetScores() {
			fmt.Printf("  %-9s %s %.2f\n", s.GetName(), verdict(s.GetPassed()), s.GetValue())
		}
	}
}

func verdict(passed bool) string {
	if passed {
		return "pass"
	}
	return "fail"
}
