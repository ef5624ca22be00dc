// Command go_suite times RunSuite through the Go client on the peers' dataset.
//
// It reads the records bench/peer_dataset.py makes (a JSON array of {id, input,
// expected, output}, decoded into plain Go values before the clock starts), builds the
// request from those values and reads every result and the summary. -json sends
// expected/input as JSON text (expected_json, input_json) instead of Values built
// with the client's Value helper. Prints one JSON line: {"checks": N, "seconds": S}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

type record struct {
	ID       string `json:"id"`
	Input    any    `json:"input"`
	Expected any    `json:"expected"`
	Output   string `json:"output"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "server address")
	data := flag.String("records", "", "records JSON file")
	checksFile := flag.String("checks", "", "checks JSON file ([{type, params}])")
	asJSON := flag.Bool("json", false, "send input/expected as JSON text")
	flag.Parse()
	var records []record
	var checks []struct {
		Type   string         `json:"type"`
		Params map[string]any `json:"params"`
	}
	must(readJSON(*data, &records))
	must(readJSON(*checksFile, &checks))
	client, err := scorewire.Dial(*addr, scorewire.WithTimeout(5*time.Minute))
	must(err)
	defer client.Close()

	start := time.Now()
	req := &scorewirev1.RunSuiteRequest{}
	for _, c := range checks {
		req.Checks = append(req.Checks, scorewire.MustCheck(c.Type, c.Params))
	}
	for _, r := range records {
		s := &scorewirev1.Sample{Id: r.ID}
		if *asJSON {
			in, err := json.Marshal(r.Input)
			must(err)
			exp, err := json.Marshal(r.Expected)
			must(err)
			s.InputJson, s.ExpectedJson = string(in), string(exp)
		} else {
			s.Input, err = scorewire.Value(r.Input)
			must(err)
			s.Expected, err = scorewire.Value(r.Expected)
			must(err)
		}
		req.Cases = append(req.Cases, &scorewirev1.Case{Sample: s, Output: scorewire.Text(r.Output)})
	}
	run, err := client.RunSuite(context.Background(), req)
	must(err)
	scores := 0
	for {
		res, err := run.Next()
		if err == io.EOF {
			break
		}
		must(err)
		scores += len(res.GetScores())
	}
	if int(run.Summary().GetCases()) != len(records) {
		must(fmt.Errorf("summary counts %d cases, sent %d", run.Summary().GetCases(), len(records)))
	}
	fmt.Printf("{\"checks\": %d, \"seconds\": %f}\n", scores, time.Since(start).Seconds())
}

func readJSON(path string, into any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "go_suite:", err)
		os.Exit(1)
	}
}
