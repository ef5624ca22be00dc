package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.CheckSummary;
import dev.scorewire.v1.Gate;
import dev.scorewire.v1.MatrixCell;
import dev.scorewire.v1.RunSummary;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Summaries#merge} on hand-built summaries: what the live server's suites leave at
 * 0 or empty (generation costs and calls, the checkllm matrix, a verdict the client's gate
 * rule would not reach).
 */
class SummariesTest {
  private static MatrixCell cell(int prompt, String provider, long cases, long passed, long errored, double cost) {
    return MatrixCell.newBuilder()
        .setPrompt(prompt)
        .setProvider(provider)
        .setCases(cases)
        .setCasesPassed(passed)
        .setCasesErrored(errored)
        .setPassRate(cases == 0 ? 0 : (double) passed / cases)
        .setGenerationCostUsd(cost)
        .build();
  }

  @Test
  void oneSummaryIsTheServersUnchangedNotJudgedAgain() {
    // A gate verdict the client's rule would not give (a baseline regression, judged by
    // the server only; every count here passes the thresholds that are set), generation
    // fields, a matrix and the recorded run's id: all kept as the server sent them.
    RunSummary server =
        RunSummary.newBuilder()
            .setCases(2).setCasesPassed(2).setPassed(2).setPassRate(1).setMeanScore(1).setValueSum(2)
            .setGate(Gate.newBuilder().setMinPassRate(1).setBaseline("run-0"))
            .setGatePassed(false)
            .addGateReasons("check c regressed from the baseline")
            .addChecks(CheckSummary.newBuilder().setName("c").setType("contains").setPassed(2).setValueSum(2).setMeanValue(1))
            .setGenerationCostUsd(0.125).setGenerationCalls(3).setGenerationCached(1).setGenerationUnpriced(true)
            .addMatrix(cell(0, "openai:gpt-4o-mini", 1, 1, 0, 0.1))
            .addMatrix(cell(1, "echo", 1, 1, 0, 0.025))
            .setRunId("run-1")
            .build();
    assertEquals(List.of(), Summaries.gateReasons(server.getGate(), server), "the client's rule would pass it");
    RunSummary m = Summaries.merge(List.of(server));
    assertEquals(server, m);
    assertSame(server, m);
    assertFalse(m.getGatePassed());
    assertEquals("run-1", m.getRunId());
  }

  @Test
  void severalSummariesAddGenerationFieldsAndMergeTheMatrixByPromptAndProvider() {
    RunSummary a =
        RunSummary.newBuilder()
            .setCases(3).setCasesPassed(2).setPassed(2).setFailed(1).setValueSum(2)
            .setGate(Gate.newBuilder().setMinPassRate(0.5))
            .setGenerationCostUsd(0.25).setGenerationCalls(3).setGenerationCached(0)
            .addMatrix(cell(0, "openai:gpt-4o-mini", 2, 2, 0, 0.2))
            .addMatrix(cell(0, "echo", 1, 0, 0, 0.05))
            .setRunId("run-a")
            .build();
    RunSummary b =
        RunSummary.newBuilder()
            .setCases(4).setCasesPassed(1).setPassed(1).setFailed(2).setErrored(1).setValueSum(1)
            .setGate(Gate.newBuilder().setMinPassRate(0.5))
            .setGenerationCostUsd(0.5).setGenerationCalls(2).setGenerationCached(2).setGenerationUnpriced(true)
            // A cell of a's (same prompt and provider), one new, and one of a's provider
            // under another prompt: cells are keyed by both.
            .addMatrix(cell(1, "openai:gpt-4o-mini", 1, 0, 1, 0.125))
            .addMatrix(cell(0, "echo", 2, 1, 0, 0))
            .addMatrix(cell(2, "anthropic:claude-3-5-haiku", 1, 0, 0, 0.375))
            .setRunId("run-b")
            .build();
    RunSummary m = Summaries.merge(List.of(a, b));
    assertEquals(0.75, m.getGenerationCostUsd());
    assertEquals(5, m.getGenerationCalls());
    assertEquals(2, m.getGenerationCached());
    assertTrue(m.getGenerationUnpriced());
    assertEquals(
        List.of(
            cell(0, "openai:gpt-4o-mini", 2, 2, 0, 0.2),
            cell(0, "echo", 3, 1, 0, 0.05),
            cell(1, "openai:gpt-4o-mini", 1, 0, 1, 0.125),
            cell(2, "anthropic:claude-3-5-haiku", 1, 0, 0, 0.375)),
        m.getMatrixList());
    assertEquals(1.0 / 3, m.getMatrix(1).getPassRate());
    assertEquals("", m.getRunId(), "each chunk was recorded as a run of its own");
    // The rest as before: counts added, rates and the gate recomputed on the totals.
    assertEquals(7, m.getCases());
    assertEquals(3.0 / 7, m.getPassRate());
    assertEquals(List.of("pass rate 0.4286 is below min_pass_rate 0.5", "error rate 0.1429 is above max_error_rate 0"), m.getGateReasonsList());
    assertFalse(m.getGatePassed());
    // Neither part with generation fields: none in the merge either.
    RunSummary plain = RunSummary.newBuilder().setCases(1).setCasesPassed(1).setPassed(1).build();
    RunSummary p = Summaries.merge(List.of(plain, plain));
    assertEquals(0, p.getGenerationCostUsd());
    assertEquals(0, p.getGenerationCalls());
    assertFalse(p.getGenerationUnpriced());
    assertEquals(List.of(), p.getMatrixList());
  }

  @Test
  void aMatrixCellWithNoCasesHasPassRateZero() {
    RunSummary a = RunSummary.newBuilder().addMatrix(cell(0, "echo", 0, 0, 0, 0)).build();
    RunSummary m = Summaries.merge(List.of(a, a));
    assertEquals(List.of(cell(0, "echo", 0, 0, 0, 0)), m.getMatrixList());
    assertEquals(0, m.getMatrix(0).getPassRate());
  }
}
