package scorewire_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// A checkllm suite (seed 001): 2 tests x 2 prompts x 2 providers, sent as it is.
const checkllmSuite = `
description: capitals
prompts: ["Answer: {{query}}", "Be brief. {{query}}"]
providers: ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku"]
tests:
  - description: France
    vars: {query: "What is the capital of France?"}
    assert: [{type: contains, value: "Paris"}]
  - description: Italy
    vars: {query: "What is the capital of Italy?"}
    assert: [{type: contains, value: "Rome"}, {type: max_tokens, value: 50}]
`

var checkllmProviders = []string{"openai:gpt-4o-mini", "anthropic:claude-3-5-haiku"}

// checkllmCases records every combination; prompt 1 of the anthropic provider answers
// wrongly, so that cell of the matrix fails.
func checkllmCases() []*scorewirev1.Case {
	var cases []*scorewirev1.Case
	for _, test := range []string{"France", "1"} {
		for _, prompt := range []string{"0", "1"} {
			for _, provider := range checkllmProviders {
				text := "Paris and Rome"
				if prompt == "1" && strings.HasPrefix(provider, "anthropic") {
					text = "no idea"
				}
				cases = append(cases, scorewire.CheckllmCase(test, prompt, provider, text))
			}
		}
	}
	return cases
}

func TestRunSuiteCheckllmSuiteEndToEnd(t *testing.T) {
	c := dial(t)
	run, err := c.RunSuite(context.Background(), &scorewirev1.RunSuiteRequest{
		SuiteYaml: checkllmSuite,
		Cases:     checkllmCases(),
	})
	if err != nil {
		t.Fatalf("RunSuite: %v", err)
	}
	results, summary, err := run.Collect()
	if err != nil {
		t.Fatalf("RunSuite results: %v", err)
	}
	if len(results) != 8 {
		t.Fatalf("got %d results, want 8", len(results))
	}
	for _, r := range results {
		combo := r.GetCombination()
		wantPass := !(combo.GetPrompt() == 1 && strings.HasPrefix(combo.GetProvider(), "anthropic"))
		if r.GetPassed() != wantPass {
			t.Errorf("%v passed = %v, want %v", combo, r.GetPassed(), wantPass)
		}
		wantChecks := 1
		if combo.GetTest() == 1 {
			wantChecks = 2 // Italy's own assertions
		}
		if len(r.GetScores()) != wantChecks {
			t.Errorf("%v has %d scores, want %d", combo, len(r.GetScores()), wantChecks)
		}
	}
	if summary.GetCases() != 8 || summary.GetCasesPassed() != 6 || summary.GetGatePassed() {
		t.Errorf("summary = %v", summary)
	}
	matrix := scorewire.Matrix(summary)
	for prompt := int32(0); prompt < 2; prompt++ {
		for _, provider := range checkllmProviders {
			cell := matrix[prompt][provider]
			want := 1.0
			if prompt == 1 && strings.HasPrefix(provider, "anthropic") {
				want = 0.0
			}
			if cell == nil || cell.GetCases() != 2 || cell.GetPassRate() != want {
				t.Errorf("matrix[%d][%s] = %v, want 2 cases at pass rate %v", prompt, provider, cell, want)
			}
		}
	}
}

func TestRunSuiteCheckllmMissingCombinationIsInvalidArgument(t *testing.T) {
	c := dial(t)
	cases := checkllmCases()
	run, err := c.RunSuite(context.Background(), &scorewirev1.RunSuiteRequest{
		SuiteYaml: checkllmSuite,
		Cases:     cases[:len(cases)-1],
	})
	if err == nil {
		defer run.Close()
		_, _, err = run.Collect()
	}
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) || swErr.Code != codes.InvalidArgument {
		t.Fatalf("err = %v, want InvalidArgument", err)
	}
	if len(swErr.FieldViolations) != 1 || swErr.FieldViolations[0].Field != "cases" ||
		!strings.Contains(swErr.FieldViolations[0].Description, "prompts[1] × anthropic:claude-3-5-haiku") {
		t.Errorf("violations = %v, want the missing combination named", swErr.FieldViolations)
	}
}

func TestValidateSuiteCheckllmProblemsHaveTheirPaths(t *testing.T) {
	c := dial(t)
	resp, err := c.ValidateSuite(context.Background(), &scorewirev1.ValidateSuiteRequest{
		SuiteYaml: strings.Replace(checkllmSuite, "max_tokens", "max_tokenz", 1),
		Format:    scorewirev1.SuiteFormat_SUITE_FORMAT_CHECKLLM,
	})
	if err != nil {
		t.Fatalf("ValidateSuite: %v", err)
	}
	if resp.GetValid() || len(resp.GetProblems()) != 1 ||
		resp.GetProblems()[0].GetField() != "suite_yaml.tests[1].assert[1].type" {
		t.Errorf("problems = %v", resp.GetProblems())
	}
}
