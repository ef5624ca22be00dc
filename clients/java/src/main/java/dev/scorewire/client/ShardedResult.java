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
 * @param summary the chunks' summaries merged ({@link Summaries#merge}): a single chunk's
 *     is the server's summary unchanged (its gate verdict, generation cost, matrix and
 *     {@code run_id}); several chunks' are added up, generation fields and matrix cells
 *     included, the gate judged again on the merged totals and {@code run_id} left empty
 *     (each chunk was recorded as a run of its own)
 * @param retries chunk attempts that failed and were sent again
 */
public record ShardedResult(List<CaseResult> results, RunSummary summary, int retries) {
  /** Copies {@code results}. */
  public ShardedResult {
    results = List.copyOf(results);
  }
}
