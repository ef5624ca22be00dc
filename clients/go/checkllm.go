package scorewire

import (
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// CheckllmCase is a recorded output of one combination of a checkllm suite, for
// RunSuiteRequest.Cases: test is the test's index ("0") or its description, prompt the
// prompt's index or template ("" when the suite has one), provider as written in the
// suite's `providers` ("" when it has one).
func CheckllmCase(test, prompt, provider, output string) *scorewirev1.Case {
	return &scorewirev1.Case{
		Test:     test,
		Prompt:   prompt,
		Provider: provider,
		Output:   Text(output),
	}
}

// Matrix returns a checkllm run's summary cells by prompt index and provider (the
// prompt x provider matrix: pass rate and counts per cell); nil for other suites.
func Matrix(summary *scorewirev1.RunSummary) map[int32]map[string]*scorewirev1.MatrixCell {
	if len(summary.GetMatrix()) == 0 {
		return nil
	}
	out := map[int32]map[string]*scorewirev1.MatrixCell{}
	for _, cell := range summary.GetMatrix() {
		row := out[cell.GetPrompt()]
		if row == nil {
			row = map[string]*scorewirev1.MatrixCell{}
			out[cell.GetPrompt()] = row
		}
		row[cell.GetProvider()] = cell
	}
	return out
}
