package dev.scorewire.client;

import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.RunSummary;
import java.util.List;

/**
 * A whole RunSuite, collected ({@link ScorewireAsyncClient#runSuite}): every case's result
 * and the run's summary.
 *
 * @param results one result per case, in the order the server finished them; {@code index}
 *     is the case's position in the request's cases
 * @param summary the summary the server sent last (with {@code record}, its {@code run_id})
 */
public record SuiteResult(List<CaseResult> results, RunSummary summary) {
  /** Copies {@code results}. */
  public SuiteResult {
    results = List.copyOf(results);
  }
}
