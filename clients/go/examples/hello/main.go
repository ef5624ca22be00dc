// Command hello scores an answer with three deterministic checks on a scorewire server.
package main

import (
	"cmp"
	"context"
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
	resp, err := client.Score(context.Background(), &scorewirev1.ScoreRequest{
		Output: scorewire.Text("Lyon is the capital of France."),
		Checks: []*scorewirev1.CheckSpec{
			scorewire.MustCheck("contains", map[string]any{"needles": []string{"Paris", "France"}}), // value: share found
			scorewire.MustCheck("regex", map[string]any{"pattern": `\bcapital\b`, "flags": []string{"IGNORECASE"}}),
			scorewire.MustCheck("length", map[string]any{"max_chars": 40}),
		},
	})
	if err != nil {
		log.Fatal(err) // a *scorewire.Error: its Code, Message and FieldViolations
	}
	verdict := map[bool]string{true: "pass", false: "fail"}
	for _, s := range resp.GetScores() {
		fmt.Printf("%-9s %s %.2f\n", s.GetName(), verdict[s.GetPassed()], s.GetValue())
	}
	fmt.Printf("passed: %t\n", resp.GetPassed())
}
