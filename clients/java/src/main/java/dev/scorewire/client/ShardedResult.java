package dev.scorewire.client;

import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.RunSummary;
import java.util.List;

/**
 * A batch run as chunks ({@link ScorewireClient#runSuiteSharded}): every case's result
 * once, and the merged summary.
 *
 * @param results one result per case, chunk by chunk in completion order; {@code index} is
 *     the case's position in the request's cases
 * @param summary the chunks' summaries merged ({@link Summaries#merge}), its gate judged
 *     again on the merged totals
 * @param retries chunk attempts that failed and were sent again
 */
public record ShardedResult(List<CaseResult> results, RunSummary summary, int retries) {
  /** Copies {@code results}. */
  public ShardedResult {
    results = List.copyOf(results);
  }
}
