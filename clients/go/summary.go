package scorewire

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// MergeSummaries returns one RunSummary for the summaries of the shards of one batch
// (same checks in the same order, same gate).
//
// One part is returned as it is (a copy): it is the server's own summary, its gate
// judged by the server with the server's rule (a checkllm suite's default gate
// included), its generation spending, matrix and run_id kept.
//
// Several parts: counts, value sums and costs are added (generation_cost_usd,
// generation_calls and generation_cached too; unpriced and generation_unpriced when any
// part's is); every rate is recomputed from the merged totals, never a mean of means:
// pass_rate = cases_passed / cases, mean_score = value_sum / applied and
// error_rate = errored / applied, where applied = passed + failed + errored (skipped
// scores are not applied); mean_value per check likewise. The matrix cells merge by
// (prompt, provider), in the order they first appear over the parts in order, their
// cases, cases_passed, cases_errored and generation_cost_usd added and pass_rate =
// cases_passed / cases. run_id is empty: each chunk was recorded as a run of its own.
// The gate is judged again on the merged totals with GateReasons.
func MergeSummaries(parts []*scorewirev1.RunSummary) (*scorewirev1.RunSummary, error) {
	if len(parts) == 0 {
		return nil, errors.New("scorewire: no summaries to merge")
	}
	first := parts[0]
	if len(parts) == 1 {
		return proto.Clone(first).(*scorewirev1.RunSummary), nil
	}
	out := &scorewirev1.RunSummary{Gate: proto.Clone(first.GetGate()).(*scorewirev1.Gate)}
	for _, c := range first.GetChecks() {
		out.Checks = append(out.Checks, &scorewirev1.CheckSummary{Name: c.GetName(), Type: c.GetType()})
	}
	cells := map[matrixKey]*scorewirev1.MatrixCell{}
	for _, p := range parts {
		if err := sameChecks(first, p); err != nil {
			return nil, err
		}
		addSummary(out, p)
		for _, m := range p.GetMatrix() {
			key := matrixKey{m.GetPrompt(), m.GetProvider()}
			cell := cells[key]
			if cell == nil {
				cell = &scorewirev1.MatrixCell{Prompt: m.GetPrompt(), Provider: m.GetProvider()}
				cells[key] = cell
				out.Matrix = append(out.Matrix, cell)
			}
			cell.Cases += m.GetCases()
			cell.CasesPassed += m.GetCasesPassed()
			cell.CasesErrored += m.GetCasesErrored()
			cell.GenerationCostUsd += m.GetGenerationCostUsd()
		}
	}
	for _, cell := range out.Matrix {
		cell.PassRate = ratio(float64(cell.CasesPassed), cell.Cases)
	}
	applied := out.Passed + out.Failed + out.Errored
	out.PassRate = ratio(float64(out.CasesPassed), out.Cases)
	out.MeanScore = ratio(out.ValueSum, applied)
	out.ErrorRate = ratio(float64(out.Errored), applied)
	for _, c := range out.Checks {
		c.MeanValue = ratio(c.ValueSum, c.Passed+c.Failed+c.Errored)
	}
	out.GateReasons = GateReasons(out.GetGate(), out)
	out.GatePassed = len(out.GateReasons) == 0
	return out, nil
}

// GateReasons says why s fails gate, one sentence per unmet threshold (none: it
// passes). It is the server's rule, sentence for sentence, and the one place of this
// client where a gate is judged: a run with no cases meets no min_* threshold;
// max_error_rate always applies (0 unless set).
func GateReasons(gate *scorewirev1.Gate, s *scorewirev1.RunSummary) []string {
	var reasons []string
	empty := s.GetCases() == 0
	if gate.MinPassRate != nil && (empty || s.GetPassRate() < gate.GetMinPassRate()) {
		reasons = append(reasons, fmt.Sprintf("pass rate %.4g is below min_pass_rate %.6g", s.GetPassRate(), gate.GetMinPassRate()))
	}
	if gate.MinMeanScore != nil && (empty || s.GetMeanScore() < gate.GetMinMeanScore()) {
		reasons = append(reasons, fmt.Sprintf("mean score %.4g is below min_mean_score %.6g", s.GetMeanScore(), gate.GetMinMeanScore()))
	}
	if s.GetErrorRate() > gate.GetMaxErrorRate() {
		reasons = append(reasons, fmt.Sprintf("error rate %.4g is above max_error_rate %.6g", s.GetErrorRate(), gate.GetMaxErrorRate()))
	}
	if gate.MaxCostUsd != nil && s.GetCostUsd() > gate.GetMaxCostUsd() {
		reasons = append(reasons, fmt.Sprintf("cost $%.4f is above max_cost $%.6g", s.GetCostUsd(), gate.GetMaxCostUsd()))
	}
	return reasons
}

// matrixKey is a matrix cell's identity: one prompt x provider.
type matrixKey struct {
	prompt   int32
	provider string
}

func sameChecks(a, b *scorewirev1.RunSummary) error {
	if len(a.GetChecks()) == len(b.GetChecks()) {
		same := true
		for i, c := range a.GetChecks() {
			d := b.GetChecks()[i]
			same = same && c.GetName() == d.GetName() && c.GetType() == d.GetType()
		}
		if same {
			return nil
		}
	}
	return errors.New("scorewire: the summaries are of different checks: not shards of one run")
}

func addSummary(out, p *scorewirev1.RunSummary) {
	out.Cases += p.GetCases()
	out.CasesPassed += p.GetCasesPassed()
	out.Passed += p.GetPassed()
	out.Failed += p.GetFailed()
	out.Errored += p.GetErrored()
	out.Skipped += p.GetSkipped()
	out.ValueSum += p.GetValueSum()
	out.CostUsd += p.GetCostUsd()
	out.Unpriced = out.Unpriced || p.GetUnpriced()
	out.GenerationCostUsd += p.GetGenerationCostUsd()
	out.GenerationCalls += p.GetGenerationCalls()
	out.GenerationCached += p.GetGenerationCached()
	out.GenerationUnpriced = out.GenerationUnpriced || p.GetGenerationUnpriced()
	for i, c := range p.GetChecks() {
		t := out.Checks[i]
		t.Passed += c.GetPassed()
		t.Failed += c.GetFailed()
		t.Errored += c.GetErrored()
		t.Skipped += c.GetSkipped()
		t.Cached += c.GetCached()
		t.ValueSum += c.GetValueSum()
		t.CostUsd += c.GetCostUsd()
	}
}

func ratio(num float64, den int64) float64 {
	if den == 0 {
		return 0
	}
	return num / float64(den)
}
